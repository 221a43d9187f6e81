//! # devicerail-host-test-plugin-hostile
//!
//! A driver that misbehaves on purpose, so the host's tests can show one
//! bad plugin never stalls, starves or takes down the host. It serves one
//! device, `hostile-1` (a 64×64 grey screen), and these Actions:
//!
//! * `hang` — never returns and ignores cancellation and deadlines (the
//!   thread is stuck until the process exits);
//! * `big {bytes}` — succeeds with an output of `bytes` characters;
//! * `echo {text}` — succeeds with its text, for a healthy call;
//! * `abort` — `std::process::abort()`;
//! * `segv` — raises SIGSEGV;
//! * `exit {code}` — `std::process::exit(code)`;
//! * `stackOverflow` — recurses until the stack overflows;
//! * `forgeNextObserve {case, skip}` — the `observe` after the next `skip`
//!   ones (the host observes after every Action: pass 1 to forge the next
//!   `device.observe`) writes forged replies straight onto the worker's
//!   channel (see [`forge`]) before answering;
//! * `env {name}` — the value of an environment variable of the process
//!   the driver runs in (`null` when unset).
//!
//! The last four kill whatever process the driver runs in: the host's
//! worker for this plugin (isolation `process`), or the host itself
//! (isolation `inline`).
//!
//! With `DEVICERAIL_HOSTILE_OBSERVE=hang`, `observe` never returns either.
//! The setting `init_fails_while = "PATH"` makes the driver refuse to
//! start while that file exists, so a worker killed meanwhile stays down
//! (its restarts fail) until the file is removed.
//! The setting `screen = "WxH"` makes the screen that size, with a
//! screenshot as large as a busy phone screen's (for transport benches).
//! Never install or ship it.

use std::io::Cursor;
use std::sync::Mutex;

pub mod forge;

use devicerail_host_plugin_api::protocol::{
    ActionCall, ActionDefinition, DeviceId, DeviceInfo, Platform, Viewport,
};
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, DeviceCapabilities, Driver, DriverError, DriverObservation,
    DriverResult, ObserveRequest, PluginConfig, PluginInitError, UiTree,
};
use serde_json::{Value, json};

/// The one device.
pub const DEVICE: &str = "hostile-1";
/// Environment variable: `hang` makes every `observe` hang.
pub const OBSERVE_ENV: &str = "DEVICERAIL_HOSTILE_OBSERVE";

const SIDE: u32 = 64;

/// The hostile driver.
pub struct Hostile {
    observe_hangs: bool,
    /// What an `observe` forges, after how many more pass.
    forge_next: Mutex<Option<(forge::Case, u64)>>,
    /// Screen size and its PNG, made once.
    screen: Option<(u32, u32, Vec<u8>)>,
}

fn hang_forever() -> ! {
    loop {
        std::thread::park();
    }
}

/// Recursion the optimizer cannot turn into a loop: every frame keeps a
/// buffer alive across the call and reads it after.
#[inline(never)]
fn recurse(depth: u64) -> u64 {
    // Never true, but the compiler cannot know it.
    if std::hint::black_box(depth) == u64::MAX {
        return 0;
    }
    let buf = std::hint::black_box([depth; 256]);
    let below = recurse(std::hint::black_box(depth + 1));
    std::hint::black_box(buf[(depth % 256) as usize]).wrapping_add(below)
}

fn raise_segv() -> ! {
    // SAFETY: deliberately none: the default action of SIGSEGV (Rust's
    // runtime handles it to report stack overflows) and then SIGSEGV
    // itself kill the process.
    unsafe {
        libc::signal(libc::SIGSEGV, libc::SIG_DFL);
        libc::raise(libc::SIGSEGV);
    }
    std::process::abort()
}

fn info(connected: bool) -> DeviceInfo {
    DeviceInfo {
        id: DeviceId::new(DEVICE),
        name: "Hostile test device".into(),
        platform: Platform::Mock,
        os_version: None,
        connected,
    }
}

/// A `width`×`height` RGB screenshot: bands of flat colour and bands of
/// noise, compressing about as well as a busy phone screen.
fn busy_png(width: u32, height: u32) -> DriverResult<Vec<u8>> {
    let mut state: u32 = 0x9e37_79b9;
    let img = image::RgbImage::from_fn(width, height, |x, y| {
        if (y / 64) % 3 == 0 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let [a, b, c, _] = state.to_le_bytes();
            image::Rgb([a, b, c])
        } else {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 200])
        }
    });
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| DriverError::failure(format!("PNG encoding failed: {e}")))?;
    Ok(out.into_inner())
}

fn png() -> DriverResult<Vec<u8>> {
    let img = image::GrayImage::from_pixel(SIDE, SIDE, image::Luma([128]));
    let mut out = Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .map_err(|e| DriverError::failure(format!("PNG encoding failed: {e}")))?;
    Ok(out.into_inner())
}

/// The screen's UI tree: one grey text.
fn tree() -> DriverResult<UiTree> {
    let bad = |e: serde_json::Error| DriverError::failure(format!("tree: {e}"));
    Ok(UiTree {
        context: serde_json::from_value(
            json!({ "contextKind": "native", "contextId": "hostile", "documentEpoch": "1" }),
        )
        .map_err(bad)?,
        root_stable_node_ids: vec!["screen".into()],
        nodes: vec![
            serde_json::from_value(
                json!({ "stableNodeId": "screen", "role": "text", "text": "grey" }),
            )
            .map_err(bad)?,
        ],
    })
}

fn action(name: &str, description: &str, schema: Value) -> ActionDefinition {
    ActionDefinition {
        name: name.into(),
        description: description.into(),
        input_schema: schema,
        protection: None,
    }
}

impl Driver for Hostile {
    fn list_devices(&self, _ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        Ok(vec![info(false)])
    }

    fn connect(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        if device.as_str() != DEVICE {
            return Err(DriverError::device_not_found(device));
        }
        Ok(info(true))
    }

    fn disconnect(&self, _ctx: &CallContext, _device: &DeviceId) -> DriverResult<()> {
        Ok(())
    }

    fn capabilities(
        &self,
        _ctx: &CallContext,
        _device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        Ok(DeviceCapabilities {
            actions: vec![
                action(
                    "hang",
                    "Never return, ignoring cancellation.",
                    json!({ "type": "object" }),
                ),
                action(
                    "big",
                    "Return an output of `bytes` characters.",
                    json!({ "type": "object", "properties": { "bytes": { "type": "integer" } } }),
                ),
                action(
                    "echo",
                    "Return the text.",
                    json!({ "type": "object", "properties": { "text": { "type": "string" } } }),
                ),
                action("abort", "Abort the process.", json!({ "type": "object" })),
                action("segv", "Raise SIGSEGV.", json!({ "type": "object" })),
                action(
                    "exit",
                    "Exit the process with `code`.",
                    json!({ "type": "object", "properties": { "code": { "type": "integer" } } }),
                ),
                action(
                    "stackOverflow",
                    "Recurse until the stack overflows.",
                    json!({ "type": "object" }),
                ),
                action(
                    "forgeNextObserve",
                    "Make the next observe write forged replies on the worker's channel.",
                    json!({ "type": "object", "properties": { "case": { "type": "string" }, "skip": { "type": "integer", "minimum": 0 } }, "required": ["case"] }),
                ),
                action(
                    "env",
                    "The value of an environment variable of the driver's process.",
                    json!({ "type": "object", "properties": { "name": { "type": "string" } }, "required": ["name"] }),
                ),
            ],
            ui_tree: true,
        })
    }

    fn observe(
        &self,
        _ctx: &CallContext,
        _device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        if self.observe_hangs {
            hang_forever();
        }
        let forged = {
            let mut next = self.forge_next.lock().unwrap_or_else(|p| p.into_inner());
            match next.as_mut() {
                Some((_, skip)) if *skip > 0 => {
                    *skip -= 1;
                    None
                }
                _ => next.take().map(|(case, _)| case),
            }
        };
        if let Some(case) = forged {
            forge::forge(case, &png()?)
                .map_err(|e| DriverError::failure(format!("forging failed: {e}")))?;
        }
        if let Some((width, height, bytes)) = &self.screen {
            let mut obs = DriverObservation::new(Viewport {
                width: *width,
                height: *height,
                scale_factor: 1.0,
            });
            if request.screenshot {
                obs.png = Some(bytes.clone());
            }
            return Ok(obs);
        }
        let mut obs = DriverObservation::new(Viewport {
            width: SIDE,
            height: SIDE,
            scale_factor: 1.0,
        });
        if request.screenshot {
            obs.png = Some(png()?);
        }
        if request.ui_tree {
            obs.ui_tree = Some(tree()?);
        }
        Ok(obs)
    }

    fn execute(
        &self,
        _ctx: &CallContext,
        _device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        match call.name.as_str() {
            "hang" => hang_forever(),
            "big" => {
                let bytes = call.arguments["bytes"].as_u64().unwrap_or(0);
                let bytes = usize::try_from(bytes).unwrap_or(usize::MAX).min(64 << 20);
                Ok(ActionOutput::new(json!({ "data": "x".repeat(bytes) })))
            }
            "echo" => Ok(ActionOutput::new(
                json!({ "text": call.arguments["text"].clone() }),
            )),
            "abort" => std::process::abort(),
            "segv" => raise_segv(),
            "exit" => {
                let code = call.arguments["code"].as_i64().unwrap_or(3);
                std::process::exit(i32::try_from(code).unwrap_or(3))
            }
            "stackOverflow" => Ok(ActionOutput::new(json!({ "never": recurse(0) }))),
            "forgeNextObserve" => {
                let name = call.arguments["case"].as_str().unwrap_or("");
                let case = forge::Case::named(name)
                    .ok_or_else(|| DriverError::failure(format!("no forge case {name:?}")))?;
                let skip = call.arguments["skip"].as_u64().unwrap_or(0);
                *self.forge_next.lock().unwrap_or_else(|p| p.into_inner()) = Some((case, skip));
                Ok(ActionOutput::new(json!({ "armed": name })))
            }
            "env" => {
                let name = call.arguments["name"].as_str().unwrap_or("");
                Ok(ActionOutput::new(
                    json!({ "value": std::env::var(name).ok() }),
                ))
            }
            other => Err(DriverError::unknown_action(other)),
        }
    }
}

fn construct(config: &PluginConfig) -> Result<Hostile, PluginInitError> {
    if let Some(path) = config
        .settings
        .get("init_fails_while")
        .and_then(Value::as_str)
        && std::path::Path::new(path).exists()
    {
        return Err(PluginInitError::other(format!(
            "refusing to start while {path} exists"
        )));
    }
    let screen = match config.settings.get("screen").and_then(Value::as_str) {
        None => None,
        Some(text) => {
            let size = text
                .split_once('x')
                .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
                .filter(|(w, h)| (1..=8192).contains(w) && (1..=8192).contains(h));
            let Some((w, h)) = size else {
                return Err(PluginInitError::other(format!(
                    "screen must be WIDTHxHEIGHT, not {text:?}"
                )));
            };
            let bytes = busy_png(w, h).map_err(|e| PluginInitError::other(e.message))?;
            Some((w, h, bytes))
        }
    };
    Ok(Hostile {
        observe_hangs: std::env::var(OBSERVE_ENV).is_ok_and(|v| v == "hang"),
        forge_next: Mutex::new(None),
        screen,
    })
}

devicerail_host_plugin_api::export_plugin! {
    id: "test-hostile",
    description: "Test-only plugin that misbehaves on purpose; never install it",
    driver: construct,
}
