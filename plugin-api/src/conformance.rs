//! The conformance kit: one suite every driver plugin's tests run against
//! its real, loaded `cdylib` (or any [`Driver`]).
//!
//! ```ignore
//! let plugin = devicerail_host_plugin_api::loader::load(&library, &settings)?;
//! conformance::Suite::new(&plugin).device("mock-1").run().assert_passed();
//! ```
//!
//! Building and loading this workspace's plugins for tests is the job of
//! the workspace's `devicerail-host-testing` crate, not of this kit.

use std::collections::HashSet;

use devicerail_host_protocol::{
    ActionCall, ActionDefinition, Bounded, BoundedVec, CallId, DeviceId, ErrorCode, ObservationId,
    SEMANTIC_ACTIONS, UiSnapshot,
};
use serde_json::{Value, json};

use crate::context::CallContext;
use crate::driver::{Driver, DriverError, ObserveRequest};

/// One check's outcome.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// What was checked.
    pub name: String,
    /// Whether the driver passed.
    pub passed: bool,
    /// `ok`, or what was wrong.
    pub detail: String,
}

/// All outcomes of one run.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Every check, in the order they ran.
    pub checks: Vec<CheckResult>,
}

/// What a failed check found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Failure(pub String);

impl From<String> for Failure {
    fn from(detail: String) -> Self {
        Self(detail)
    }
}

impl From<&str> for Failure {
    fn from(detail: &str) -> Self {
        Self(detail.to_owned())
    }
}

impl From<DriverError> for Failure {
    fn from(e: DriverError) -> Self {
        Self(e.to_string())
    }
}

/// The outcome of one check.
type Outcome = Result<(), Failure>;

impl Report {
    /// How many checks passed.
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    /// The failed checks.
    pub fn failures(&self) -> Vec<&CheckResult> {
        self.checks.iter().filter(|c| !c.passed).collect()
    }

    /// Prints `conformance: N/M checks passed` and panics listing failures.
    pub fn assert_passed(&self) {
        println!(
            "conformance: {}/{} checks passed",
            self.passed(),
            self.checks.len()
        );
        let failures = self.failures();
        assert!(
            failures.is_empty(),
            "conformance failures:\n{}",
            failures
                .iter()
                .map(|c| format!("- {}: {}", c.name, c.detail))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// The names of secret-bearing Actions, which must be protected.
fn looks_secret(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    ["secret", "password", "credential", "passcode"]
        .iter()
        .any(|w| lower.contains(w))
}

/// The suite, configured for one driver.
pub struct Suite<'d> {
    driver: &'d dyn Driver,
    device: Option<DeviceId>,
    report: Report,
}

impl<'d> Suite<'d> {
    /// The suite for `driver`.
    pub fn new(driver: &'d dyn Driver) -> Self {
        Self {
            driver,
            device: None,
            report: Report::default(),
        }
    }

    /// The device to exercise (default: the first listed).
    #[must_use]
    pub fn device(mut self, id: &str) -> Self {
        self.device = Some(DeviceId::new(id));
        self
    }

    fn record(&mut self, name: &str, outcome: Outcome) -> bool {
        let passed = outcome.is_ok();
        self.report.checks.push(CheckResult {
            name: name.to_owned(),
            passed,
            detail: outcome.err().map_or_else(|| "ok".into(), |f| f.0),
        });
        passed
    }

    fn expect_code(result: Result<impl std::fmt::Debug, DriverError>, code: ErrorCode) -> Outcome {
        match result {
            Err(e) if e.code == code => Ok(()),
            Err(e) => Err(format!("expected {code}, got {}: {}", e.code, e.message).into()),
            Ok(v) => Err(format!("expected {code}, got success {v:?}").into()),
        }
    }

    /// Runs every check and returns the report.
    pub fn run(mut self) -> Report {
        let ctx = CallContext::unbounded();
        let devices = match self.driver.list_devices(&ctx) {
            Ok(d) => d,
            Err(e) => {
                self.record("devices are listed", Err(e.into()));
                return self.report;
            }
        };
        let ids: HashSet<_> = devices.iter().map(|d| d.id.clone()).collect();
        self.record(
            "devices are listed with unique ids",
            if devices.is_empty() {
                Err("no devices".into())
            } else if ids.len() != devices.len() {
                Err("duplicate device ids".into())
            } else {
                Ok(())
            },
        );
        let Some(device) = self
            .device
            .clone()
            .or_else(|| devices.first().map(|d| d.id.clone()))
        else {
            return self.report;
        };
        self.record(
            "the device under test is listed",
            if ids.contains(&device) {
                Ok(())
            } else {
                Err(format!("{device} is not listed").into())
            },
        );
        self.record(
            "relisting is stable",
            match self.driver.list_devices(&ctx) {
                Ok(again)
                    if again.iter().map(|d| &d.id).collect::<HashSet<_>>()
                        == ids.iter().collect() =>
                {
                    Ok(())
                }
                Ok(_) => Err("the second listing differs".into()),
                Err(e) => Err(e.into()),
            },
        );
        let connected = match self.driver.connect(&ctx, &device) {
            Ok(info) if info.id == device && info.connected => Ok(()),
            Ok(info) => Err(format!("connect returned {info:?}").into()),
            Err(e) => Err(e.into()),
        };
        if !self.record("connect returns the connected device", connected) {
            return self.report;
        }
        match self.driver.capabilities(&ctx, &device) {
            Ok(caps) => {
                self.check_actions(&caps.actions, caps.ui_tree);
                self.check_observe(&ctx, &device, caps.ui_tree);
                self.check_errors(&device, &caps.actions);
            }
            Err(e) => {
                self.record("capabilities are listed", Err(e.into()));
            }
        }
        let doctor = self.driver.doctor();
        self.record(
            "doctor reports at least one check",
            if doctor.is_empty() {
                Err("no checks".into())
            } else {
                Ok(())
            },
        );
        self.record(
            "disconnect succeeds",
            self.driver.disconnect(&ctx, &device).map_err(Failure::from),
        );
        self.record(
            "disconnect is idempotent",
            self.driver.disconnect(&ctx, &device).map_err(Failure::from),
        );
        self.record(
            "observing a disconnected device fails",
            match self
                .driver
                .observe(&ctx, &device, &ObserveRequest::default())
            {
                Ok(_) => Err("observe succeeded after disconnect".into()),
                Err(_) => Ok(()),
            },
        );
        self.record(
            "an unknown device is refused",
            match self
                .driver
                .connect(&ctx, &DeviceId::new("conformance-no-such-device"))
            {
                Ok(_) => Err("connect succeeded".into()),
                Err(e)
                    if e.code == ErrorCode::DeviceNotFound
                        || e.code == ErrorCode::DeviceUnavailable =>
                {
                    Ok(())
                }
                Err(e) => Err(format!("expected device_not_found, got {}", e.code).into()),
            },
        );
        self.report
    }

    fn check_actions(&mut self, actions: &[ActionDefinition], ui_tree: bool) {
        let mut names = HashSet::new();
        let dup: Vec<_> = actions
            .iter()
            .filter(|a| !names.insert(a.name.as_str()))
            .map(|a| a.name.clone())
            .collect();
        self.record(
            "action names are unique and non-empty",
            if actions.is_empty() {
                Err("the action space is empty".into())
            } else if !dup.is_empty() {
                Err(format!("duplicates: {dup:?}").into())
            } else if actions
                .iter()
                .any(|a| a.name.is_empty() || a.description.is_empty())
            {
                Err("an action has an empty name or description".into())
            } else {
                Ok(())
            },
        );
        let bad_schemas: Vec<String> = actions
            .iter()
            .filter_map(|a| {
                let object = a.input_schema.get("type").and_then(Value::as_str) == Some("object");
                match jsonschema::validator_for(&a.input_schema) {
                    Ok(_) if object => None,
                    Ok(_) => Some(format!("{}: input schema is not an object schema", a.name)),
                    Err(e) => Some(format!("{}: {e}", a.name)),
                }
            })
            .collect();
        self.record(
            "input schemas are valid object schemas",
            if bad_schemas.is_empty() {
                Ok(())
            } else {
                Err(bad_schemas.join("; ").into())
            },
        );
        let unprotected: Vec<_> = actions
            .iter()
            .filter(|a| looks_secret(&a.name) && !a.is_protected())
            .map(|a| a.name.clone())
            .collect();
        self.record(
            "secret-bearing actions are protected",
            if unprotected.is_empty() {
                Ok(())
            } else {
                Err(format!("unprotected: {unprotected:?}").into())
            },
        );
        let semantic: Vec<_> = actions
            .iter()
            .filter(|a| SEMANTIC_ACTIONS.contains(&a.name.as_str()))
            .map(|a| a.name.clone())
            .collect();
        self.record(
            "semantic actions only with UI snapshots",
            if !semantic.is_empty() && !ui_tree {
                Err(format!("{semantic:?} advertised without UI tree support").into())
            } else {
                Ok(())
            },
        );
        let examples = [
            (
                "findElement",
                json!({ "selector": { "role": "button", "name": "OK" } }),
            ),
            (
                "tapElement",
                json!({ "target": { "kind": "selector", "selector": { "identifier": "ok" } } }),
            ),
            (
                "clearElement",
                json!({ "target": { "kind": "selector", "selector": { "identifier": "field" } } }),
            ),
            (
                "setElementValue",
                json!({ "target": { "kind": "selector", "selector": { "identifier": "field" } }, "value": "x" }),
            ),
            (
                "waitForElement",
                json!({ "selector": { "text": { "value": "Done" } }, "condition": "visible" }),
            ),
        ];
        let mut rejected = Vec::new();
        for (name, example) in examples {
            if let Some(def) = actions.iter().find(|a| a.name == name)
                && let Ok(v) = jsonschema::validator_for(&def.input_schema)
                && !v.is_valid(&example)
            {
                rejected.push(name);
            }
        }
        self.record(
            "semantic input schemas accept canonical arguments",
            if rejected.is_empty() {
                Ok(())
            } else {
                Err(format!("rejected: {rejected:?}").into())
            },
        );
    }

    fn check_observe(&mut self, ctx: &CallContext, device: &DeviceId, ui_tree: bool) {
        let obs = self.driver.observe(
            ctx,
            device,
            &ObserveRequest {
                screenshot: true,
                ui_tree,
            },
        );
        let obs = match obs {
            Ok(o) => o,
            Err(e) => {
                self.record("observe returns a screenshot", Err(e.into()));
                return;
            }
        };
        let png = match &obs.png {
            None => Err("no PNG although one was requested".into()),
            Some(bytes) => {
                match image::load_from_memory_with_format(bytes, image::ImageFormat::Png) {
                    Ok(img)
                        if img.width() == obs.viewport.width
                            && img.height() == obs.viewport.height =>
                    {
                        Ok(())
                    }
                    Ok(img) => Err(format!(
                        "PNG is {}x{}, viewport is {}x{}",
                        img.width(),
                        img.height(),
                        obs.viewport.width,
                        obs.viewport.height
                    )
                    .into()),
                    Err(e) => Err(format!("PNG does not decode: {e}").into()),
                }
            }
        };
        self.record("screenshot PNG decodes and matches the viewport", png);
        if ui_tree {
            let tree = match obs.ui_tree {
                None => Err("no UI tree although one was requested".into()),
                Some(tree) => {
                    let snapshot = BoundedVec::new(tree.root_stable_node_ids).and_then(|roots| {
                        BoundedVec::new(tree.nodes).map(|nodes| UiSnapshot {
                            format_version: Bounded::MIN,
                            observation_id: ObservationId::new_v7(),
                            context: tree.context,
                            root_stable_node_ids: roots,
                            nodes,
                        })
                    });
                    match snapshot {
                        Ok(s) => s.validate().map_err(|e| Failure(e.to_string())),
                        Err(e) => Err(Failure(e.to_string())),
                    }
                }
            };
            self.record("the UI tree is a valid snapshot", tree);
        }
        let plain = self.driver.observe(
            ctx,
            device,
            &ObserveRequest {
                screenshot: false,
                ui_tree: false,
            },
        );
        self.record(
            "observe without screenshot returns no PNG",
            match plain {
                Ok(o) if o.png.is_none() => Ok(()),
                Ok(_) => Err("PNG returned although none was requested".into()),
                Err(e) => Err(e.into()),
            },
        );
    }

    fn check_errors(&mut self, device: &DeviceId, actions: &[ActionDefinition]) {
        let ctx = CallContext::unbounded();
        let call =
            |name: &str, arguments: Value| ActionCall::new(CallId::new_v4(), name, arguments);
        let unknown =
            self.driver
                .execute(&ctx, device, &call("conformanceNoSuchAction", json!({})));
        self.record(
            "an unknown action gives unknown_action",
            Self::expect_code(unknown, ErrorCode::UnknownAction),
        );
        let mut wrong = Vec::new();
        for def in actions {
            let r = self
                .driver
                .execute(&ctx, device, &call(&def.name, json!("not an object")));
            if let Err(msg) = Self::expect_code(r, ErrorCode::InvalidArguments) {
                wrong.push(format!("{}: {msg}", def.name));
            }
        }
        self.record(
            "invalid arguments give invalid_arguments",
            if wrong.is_empty() {
                Ok(())
            } else {
                Err(wrong.join("; ").into())
            },
        );
        if let Some(def) = actions.first() {
            let cancelled = CallContext::unbounded();
            cancelled.cancel();
            let r = self
                .driver
                .execute(&cancelled, device, &call(&def.name, json!({})));
            self.record(
                "a cancelled call fails with request_cancelled",
                Self::expect_code(r, ErrorCode::RequestCancelled),
            );
        }
    }
}
