//! The suite against in-process fakes: a conforming driver passes every
//! check, and each kind of breakage fails the check that names it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use devicerail_host_protocol::{DeviceInfo, Platform, Viewport};

use super::*;
use crate::actions::{self, Points, TapArgs, parse_arguments};
use crate::driver::{DeviceCapabilities, DoctorCheck, DriverObservation};

/// How a fake breaks the contract.
#[derive(Default)]
struct Breakage {
    /// `greet` declares `name` an integer but parses a string.
    schema_mismatch: bool,
    /// `greet` accepts any arguments.
    loose: bool,
    /// `tap` blocks until `release` is set, ignoring its context.
    blocks: bool,
    /// `greet` panics.
    panics: bool,
    /// Observing a disconnected device answers `device_unavailable`.
    wrong_code: bool,
}

struct Fake {
    breakage: Breakage,
    connected: Mutex<bool>,
    release: AtomicBool,
}

const W: u32 = 40;
const H: u32 = 30;

impl Fake {
    fn new(breakage: Breakage) -> Self {
        Self {
            breakage,
            connected: Mutex::new(false),
            release: AtomicBool::new(false),
        }
    }

    fn info(connected: bool) -> DeviceInfo {
        DeviceInfo {
            id: DeviceId::new("fake-1"),
            name: "fake".into(),
            platform: Platform::Other {
                value: "fake".into(),
            },
            os_version: None,
            connected,
        }
    }

    fn known(device: &DeviceId) -> DriverResult<()> {
        if device.as_str() == "fake-1" {
            Ok(())
        } else {
            Err(DriverError::device_not_found(device))
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GreetArgs {
    #[allow(dead_code)]
    name: String,
}

impl Driver for Fake {
    fn list_devices(&self, _ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        Ok(vec![Self::info(*self.connected.lock().expect("lock"))])
    }

    fn connect(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        Self::known(device)?;
        *self.connected.lock().expect("lock") = true;
        Ok(Self::info(true))
    }

    fn disconnect(&self, _ctx: &CallContext, device: &DeviceId) -> DriverResult<()> {
        Self::known(device)?;
        *self.connected.lock().expect("lock") = false;
        Ok(())
    }

    fn capabilities(
        &self,
        _ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        Self::known(device)?;
        let name_type = if self.breakage.schema_mismatch {
            json!({ "type": "integer" })
        } else {
            json!({ "type": "string", "minLength": 1, "maxLength": 64 })
        };
        Ok(DeviceCapabilities {
            actions: vec![
                actions::tap("Tap a point.", Points::within(W, H)),
                actions::definition(
                    "greet",
                    "Greets.",
                    json!({
                        "type": "object",
                        "properties": { "name": name_type },
                        "required": ["name"],
                        "additionalProperties": false
                    }),
                ),
            ],
            ui_tree: false,
        })
    }

    fn observe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        ctx.check()?;
        Self::known(device)?;
        if !*self.connected.lock().expect("lock") {
            return Err(if self.breakage.wrong_code {
                DriverError::device_unavailable(device, "asleep")
            } else {
                DriverError::not_connected(device)
            });
        }
        let mut obs = DriverObservation::new(Viewport {
            width: W,
            height: H,
            scale_factor: 1.0,
        });
        if request.screenshot {
            let img = image::RgbImage::new(W, H);
            let mut png = std::io::Cursor::new(Vec::new());
            img.write_to(&mut png, image::ImageFormat::Png)
                .map_err(|e| DriverError::failure(e.to_string()))?;
            obs.png = Some(png.into_inner());
        }
        Ok(obs)
    }

    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        if self.breakage.blocks && call.name == "tap" {
            while !self.release.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        ctx.check()?;
        Self::known(device)?;
        match call.name.as_str() {
            "tap" => {
                let a: TapArgs = parse_arguments(call)?;
                if a.x >= W || a.y >= H {
                    return Err(DriverError::invalid_arguments("tap", "outside"));
                }
                Ok(ActionOutput::new(json!({ "accepted": true })))
            }
            "greet" => {
                assert!(!self.breakage.panics, "greet is broken");
                if !self.breakage.loose {
                    let _: GreetArgs = parse_arguments(call)?;
                }
                Ok(ActionOutput::new(json!({ "greeting": "hi" })))
            }
            other => Err(DriverError::unknown_action(other)),
        }
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        vec![DoctorCheck::ok("fake", "ready")]
    }
}

fn run(breakage: Breakage) -> (Report, Arc<Fake>) {
    let fake = Arc::new(Fake::new(breakage));
    let report = Suite::shared(fake.clone()).run();
    (report, fake)
}

fn detail<'r>(report: &'r Report, check: &Check) -> &'r str {
    report
        .checks
        .iter()
        .find(|c| c.name == check.name)
        .map(|c| c.detail.as_str())
        .unwrap_or_else(|| panic!("{} did not run:\n{}", check.name, report.text()))
}

#[test]
fn a_conforming_driver_passes_every_check() {
    let (report, _) = run(Breakage::default());
    assert!(report.failures().is_empty(), "{}", report.text());
    // Without a library or stdout watching: everything but those.
    let ran: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    let expected: Vec<&str> = CHECKS
        .iter()
        .filter(|c| c.area != Area::Manifest && c.area != Area::Output)
        .filter(|c| **c != SEMANTIC_RESULTS && **c != TREE)
        .map(|c| c.name)
        .collect();
    assert_eq!(ran, expected, "the report follows CHECKS");
    report.assert_passed();
}

#[test]
fn arguments_that_violate_the_schema_fail_naming_the_action() {
    let (report, _) = run(Breakage {
        schema_mismatch: true,
        ..Breakage::default()
    });
    assert!(report.failed(ACCEPTS.name), "{}", report.text());
    let found = detail(&report, &ACCEPTS);
    assert!(
        found.starts_with("greet: {\"name\":0} was refused"),
        "{found}"
    );
    let failure = report.failures()[0];
    assert_eq!(failure.fix, ACCEPTS.fix);

    let (report, _) = run(Breakage {
        loose: true,
        ..Breakage::default()
    });
    assert!(report.failed(REFUSES.name), "{}", report.text());
    let found = detail(&report, &REFUSES);
    assert!(found.contains("greet with a non-object"), "{found}");
    assert!(found.contains("greet with an unknown member"), "{found}");
}

#[test]
fn a_blocking_call_that_ignores_cancellation_fails_naming_it() {
    let (report, fake) = run(Breakage {
        blocks: true,
        ..Breakage::default()
    });
    fake.release.store(true, Ordering::Release);
    assert!(report.failed(STOPS_CANCELLED.name), "{}", report.text());
    let found = detail(&report, &STOPS_CANCELLED);
    assert!(found.starts_with("tap: still running 2."), "{found}");
    // Reported once: later checks leave the action alone and say so.
    assert_eq!(report.failures().len(), 1, "{}", report.text());
    assert_eq!(
        detail(&report, &ACCEPTS),
        "skipped tap: an earlier call is still running"
    );
    let text = report.text();
    assert!(text.contains("fix:   never block"), "{text}");
}

#[test]
fn panics_and_wrong_codes_fail_their_checks() {
    let (report, _) = run(Breakage {
        panics: true,
        wrong_code: true,
        ..Breakage::default()
    });
    assert!(report.failed(TYPED.name), "{}", report.text());
    assert!(detail(&report, &TYPED).contains("execute greet panicked"));
    assert!(report.failed(NOT_CONNECTED.name), "{}", report.text());
    assert!(detail(&report, &NOT_CONNECTED).contains("device_unavailable"));
}

#[test]
fn the_module_documents_every_check() {
    let docs: String = include_str!("mod.rs")
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let docs = docs.split_whitespace().collect::<Vec<_>>().join(" ");
    for check in CHECKS {
        assert!(
            docs.contains(&format!("`{}`", check.name)),
            "the module docs do not describe {:?}",
            check.name
        );
        assert!(!check.fix.is_empty(), "{} has no fix", check.name);
    }
    let mut names = HashSet::new();
    assert!(CHECKS.iter().all(|c| names.insert(c.name)), "unique names");
}

#[test]
fn stdout_is_watched() {
    let capture = stdout::Capture::start().expect("capture");
    rustix::io::write(std::io::stdout(), b"stray line\n").expect("write");
    let bytes = capture.finish().expect("finish");
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("stray line"), "{text}");
    assert!(stdout::describe(&bytes).contains("bytes were written to stdout"));
}
