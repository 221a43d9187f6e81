//! `devicerail bench DEVICE`: every way the device's driver can take a
//! screenshot, read the UI tree and tap, timed on that device along the
//! production path (a host in this process, the plugin in its worker, the
//! protocol through the official client), p50 and p95 of N samples each;
//! the faster of each choice marked, and with `--save` written to the
//! configuration file as the device's own settings for the driver to use.
//!
//! Each variant runs on a host of its own over a private temporary data
//! directory (removed afterwards), never on the user's Sessions. It taps
//! only with `--tap X,Y` (a point that is safe to tap on that screen).

mod plan;
mod save;

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use devicerail_host_config::{CommandLine, Config, ConfigFile, PluginTable, paths};
use devicerail_host_core::in_process::InProcessHost;
use devicerail_host_core::serve;
use devicerail_host_link::methods::{
    DeviceConnect, DeviceDisconnect, DeviceExecute, DeviceObserve, DeviceSelect, SessionEnd,
    SessionStart,
};
use devicerail_host_link::{self as link, DeviceRailClient, Intro, LinkError, Reach};
use serde_json::{Value, json};

use super::CommandError;
use super::plugins::inspect_dir;
use crate::args::BenchArgs;
use crate::logging;
use plan::{Op, Row, Stats, Variant};

/// Features a connection without UI snapshots leaves out (semantic
/// Actions need snapshots).
const NO_TREE: [&str; 2] = ["observation.uiSnapshot.v1", "device.semanticActions.v1"];
/// How long one call may take (a dump on a slow phone takes seconds).
const CALL_TIMEOUT_MS: u64 = 120_000;

/// Runs `bench`.
pub(crate) fn run(a: BenchArgs, mut line: CommandLine) -> ExitCode {
    let BenchArgs {
        dirs,
        device,
        samples,
        tap,
        save,
        json,
    } = a;
    dirs.apply(&mut line);
    let config = match logging::configure("bench", &line, "warn") {
        Ok(c) => c,
        Err(code) => return code,
    };
    match bench(&config, &device, usize::from(samples), tap, save, json) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("devicerail bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The plugin id of the installed plugin that lists `device`.
fn plugin_of(config: &Config, device: &str) -> Result<String, CommandError> {
    let files = inspect_dir(&config.plugins_dir.value, |o| o.with_devices(), config)?;
    let mut known = Vec::new();
    for f in &files {
        let Some(m) = &f.manifest else { continue };
        for d in &f.devices {
            if d.id.as_str() == device {
                return Ok(m.id.to_string());
            }
            known.push(d.id.to_string());
        }
    }
    Err(CommandError::Refused(if known.is_empty() {
        format!(
            "no installed plugin lists device {device:?}, and none lists any device (`devicerail doctor` says why)"
        )
    } else {
        format!(
            "no installed plugin lists device {device:?}; devices now: {}",
            known.join(", ")
        )
    }))
}

fn bench(
    config: &Config,
    device: &str,
    samples: usize,
    tap: Option<(u32, u32)>,
    save: bool,
    json_out: bool,
) -> Result<ExitCode, CommandError> {
    if let Ok(socket) = paths::socket_path(None)
        && link::listening(&socket)
    {
        eprintln!(
            "devicerail bench: a shared host serves on {}; its calls to the same device compete with these",
            socket.display()
        );
    }
    let plugin = plugin_of(config, device)?;
    let scratch = tempfile::Builder::new()
        .prefix("devicerail-bench-")
        .tempdir()
        .map_err(|e| CommandError::Refused(format!("no temporary directory: {e}")))?;
    let rt = serve::runtime().map_err(|e| CommandError::Refused(format!("no runtime: {e}")))?;
    let bench = Bench {
        config,
        plugin: &plugin,
        device,
        samples,
        scratch: scratch.path(),
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut number = 0;
    let mut measure_all = |variants: Vec<Variant>, rows: &mut Vec<Row>| {
        for v in variants {
            number += 1;
            if !json_out {
                eprintln!("devicerail bench: {} ({})...", v.what, v.method);
            }
            rows.push(rt.block_on(bench.row(&v, number)));
        }
    };
    measure_all(plan::screenshots(&plugin), &mut rows);
    let mut chosen = plan::choose(&mut rows);
    let shot = chosen
        .iter()
        .find(|(c, _)| *c == plan::Choice::ScreenshotMode)
        .map(|(_, v)| *v);
    measure_all(plan::rest(&plugin, shot, tap), &mut rows);
    chosen = plan::choose(&mut rows);
    rt.shutdown_timeout(Duration::from_millis(500));
    let snippet = plan::snippet(&plugin, device, &chosen, &rows);
    let saved = match (&snippet, save) {
        (Some(text), true) => Some(
            save::append(config.file.path.as_deref(), &plugin, device, text)
                .map_err(|e| CommandError::Refused(e.to_string()))?,
        ),
        _ => None,
    };
    if json_out {
        let doc = json!({
            "device": device,
            "plugin": plugin,
            "samples": samples,
            "rows": rows,
            "chosen": chosen.iter().map(|(c, v)| (c.key().to_owned(), json!(v))).collect::<serde_json::Map<_, _>>(),
            "saved": saved,
        });
        println!("{doc:#}");
    } else {
        print_table(device, &plugin, samples, &rows);
        match (&snippet, &saved) {
            (_, Some(path)) => println!("saved for the driver to use: {}", path.display()),
            (Some(text), None) => println!(
                "\n`--save` adds this to {} for the driver to use:{text}",
                config
                    .file
                    .path
                    .as_deref()
                    .map_or("the configuration file".into(), |p| p.display().to_string())
            ),
            (None, None) => {}
        }
    }
    Ok(if rows.iter().all(|r| r.error.is_some()) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_table(device: &str, plugin: &str, samples: usize, rows: &[Row]) {
    println!(
        "devicerail bench {device} (plugin {plugin}, {samples} samples each after one warm-up, through a host in this process)\n"
    );
    let width = rows
        .iter()
        .map(|r| r.what.len() + r.method.len() + 3)
        .max()
        .unwrap_or(0)
        .max(12);
    println!("{:width$}  {:>9}  {:>9}", "", "p50 ms", "p95 ms");
    for r in rows {
        let label = format!("{} ({})", r.what, r.method);
        match (r.stats, &r.error) {
            (Some(s), _) => println!(
                "{label:width$}  {:>9.1}  {:>9.1}{}",
                s.p50_ms,
                s.p95_ms,
                if r.chosen { "  * faster" } else { "" }
            ),
            (None, e) => println!(
                "{label:width$}  failed: {}",
                e.as_deref().unwrap_or("no samples")
            ),
        }
    }
}

/// Why a variant gave no samples.
#[derive(Debug, thiserror::Error)]
enum VariantError {
    /// The configuration file's table of the plugin is refused.
    #[error("the plugin's settings are refused: {0}")]
    Settings(devicerail_host_config::FileError),
    /// Its host did not start.
    #[error("the host did not start: {0}")]
    Start(#[from] devicerail_host_core::serve::ServeError),
    /// A call failed.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// The driver used another method than the variant's.
    #[error("the driver fell back to {got} (the {want} method failed on this device)")]
    FellBack { want: &'static str, got: String },
}

/// What every variant shares.
struct Bench<'a> {
    config: &'a Config,
    plugin: &'a str,
    device: &'a str,
    samples: usize,
    scratch: &'a Path,
}

impl Bench<'_> {
    /// `v` measured on a host of its own (the `number`th).
    async fn row(&self, v: &Variant, number: usize) -> Row {
        let (stats, error) = match self.measure(v, number).await {
            Ok(samples) => (Stats::of(samples), None),
            Err(e) => (None, Some(e.to_string())),
        };
        Row {
            what: v.what,
            method: v.method.clone(),
            stats,
            error,
            choice: v.choice,
            chosen: false,
        }
    }

    /// The configuration of `v`'s host: the user's, over a scratch data
    /// directory, with `v`'s policy and plugin settings.
    fn config_of(&self, v: &Variant, number: usize) -> Result<Config, VariantError> {
        let mut c = self.config.clone();
        c.data_dir.value = self.scratch.join(format!("host-{number}"));
        c.screenshot_policy.value = v.policy;
        c.after_action_tree.value = false;
        let mut file = match c.parsed.take() {
            Some(f) => f,
            None => ConfigFile::parse(Path::new("devicerail-bench.toml"), "")
                .map_err(VariantError::Settings)?,
        };
        let table = file
            .plugins
            .entry(self.plugin.to_owned())
            .or_insert_with(|| PluginTable {
                line: 0,
                isolation: None,
                env: Vec::new(),
                settings: Ok(serde_json::Map::new()),
            });
        match &mut table.settings {
            Ok(s) => {
                // This device's own entry (an earlier `--save`) would win
                // over the variant's setting: it is left out here.
                if let Some(Value::Array(entries)) = s.get_mut("devices") {
                    entries
                        .retain(|e| e.get("serial").and_then(Value::as_str) != Some(self.device));
                }
                s.extend(v.settings.clone());
            }
            Err(e) => return Err(VariantError::Settings(e.clone())),
        }
        c.parsed = Some(file);
        Ok(c)
    }

    /// `v`'s samples, or why there are none.
    async fn measure(&self, v: &Variant, number: usize) -> Result<Vec<Duration>, VariantError> {
        let config = self.config_of(v, number)?;
        let host = Reach::Local(InProcessHost::start(&config)?);
        let intro = Intro::new("bench");
        let client = if v.ui_tree {
            host.client(&intro, "devicerail-bench").await
        } else {
            host.client_without(&intro, "devicerail-bench", &NO_TREE)
                .await
        };
        let out = match client {
            Ok(client) => {
                let r = self.samples_on(&client, v).await;
                client.close().await.ok();
                r
            }
            Err(e) => Err(e.into()),
        };
        host.shutdown().await;
        out
    }

    async fn samples_on(
        &self,
        client: &DeviceRailClient,
        v: &Variant,
    ) -> Result<Vec<Duration>, VariantError> {
        link::call::<DeviceSelect>(
            client,
            json!({ "deviceId": self.device }),
            Some(CALL_TIMEOUT_MS),
        )
        .await?;
        link::call0::<DeviceConnect>(client, Some(CALL_TIMEOUT_MS)).await?;
        link::call0::<SessionStart>(client, Some(CALL_TIMEOUT_MS)).await?;
        let mut out = Vec::with_capacity(self.samples);
        // One warm-up (probes, first choices), then the samples.
        for i in 0..=self.samples {
            let t = Instant::now();
            match v.op {
                Op::Observe => {
                    let obs = link::call0::<DeviceObserve>(client, Some(CALL_TIMEOUT_MS)).await?;
                    if let Some(want) = v.expect_source {
                        let got = obs["metadata"]["screenshotSource"].as_str();
                        if got != Some(want) {
                            return Err(VariantError::FellBack {
                                want,
                                got: got.unwrap_or("another method").to_owned(),
                            });
                        }
                    }
                }
                Op::Tap(x, y) => {
                    link::call::<DeviceExecute>(
                        client,
                        json!({ "id": uuid::Uuid::new_v4().to_string(), "name": "tap", "arguments": { "x": x, "y": y } }),
                        Some(CALL_TIMEOUT_MS),
                    )
                    .await?;
                }
            }
            if i > 0 {
                out.push(t.elapsed());
            }
        }
        link::call::<SessionEnd>(
            client,
            json!({ "outcome": "completed", "reason": "devicerail bench" }),
            Some(CALL_TIMEOUT_MS),
        )
        .await
        .ok();
        link::call0::<DeviceDisconnect>(client, Some(CALL_TIMEOUT_MS))
            .await
            .ok();
        Ok(out)
    }
}
