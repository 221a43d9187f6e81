//! The conformance suite: the checks every driver plugin passes before a
//! host loads it, run against its real, loaded `cdylib` (or any
//! [`Driver`]). Every failure comes with what was found and how to fix it.
//!
//! From a driver crate, one call in `tests/conformance.rs` builds the
//! crate's library with cargo, loads it through the host's own loader and
//! runs every check (see [`assert_crate`]):
//!
//! ```ignore
//! #[test]
//! fn passes_the_devicerail_conformance_suite() {
//!     devicerail_host_plugin_api::conformance::assert_crate(env!("CARGO_MANIFEST_DIR"));
//! }
//! ```
//!
//! Keep that test alone in its file: the suite watches the process's
//! stdout while the driver runs, and the test harness prints there when
//! other tests of the same binary finish. For a plugin already loaded, or
//! an in-process driver: `Suite::loaded(&plugin).run().assert_passed()`,
//! `Suite::new(&driver).device("x-1").run().assert_passed()`.
//!
//! The suite connects one device (the first listed, or the one named with
//! [`Suite::device`]) and calls every action of its action space, with
//! arguments its input schema accepts and with arguments it refuses: run
//! it against a device you may disturb.
//!
//! # The checks
//!
//! Each check below is one line of the [`Report`] (which lists them in
//! [`CHECKS`]'s order); the names are the report's, and [`CHECKS`] holds
//! each check's fix. A call that is still running when the suite stops
//! waiting for it is reported once; its action is not called again.
//!
//! **Manifest** (when the suite knows the library: [`Suite::loaded`],
//! [`Suite::owned`], [`assert_crate`])
//! - `the library loads as the host loads it`: layout, plugin ABI,
//!   manifest and protocol range are checked and the driver initializes
//!   with the given settings ([`assert_crate`] only; a failure ends the run).
//! - `the manifest names the plugin and what it drives`: a valid id
//!   (`[a-z0-9-]`, 1–64), a version, a one-line description.
//! - `the library file is named after the plugin id`:
//!   `libdevicerail_plugin_<id with - as _>`, the name the host installs it
//!   under.
//! - `the plugin speaks the host's plugin ABI and protocol`.
//!
//! **Devices**
//! - `devices are listed with unique ids`
//! - `the device under test is listed`
//! - `relisting is stable`: a second listing has the same ids.
//! - `connect returns the connected device`: same id, `connected: true`
//!   (a failure ends the run).
//!
//! **Action space and argument schemas**
//! - `action names are unique, with descriptions`
//! - `input schemas are valid object schemas`: JSON Schemas with
//!   `"type": "object"`.
//! - `secret-bearing actions are protected`: actions named like secrets
//!   (password, passcode, secret, credential) are `protected`.
//! - `arguments the schema accepts are accepted`: each action is called
//!   with arguments its schema accepts (the schema's first valid
//!   `examples` entry, else a minimal instance built from the schema; see
//!   [`sample_arguments`]) and must not answer `invalid_arguments`.
//!   Actions whose schema says too little to build arguments (a `pattern`
//!   or `format` without `examples`) are listed as skipped.
//! - `arguments the schema refuses give invalid_arguments`: a non-object,
//!   an object without the required members, an unknown member where
//!   `additionalProperties` is `false`, a member of the wrong type.
//! - `an unknown action gives unknown_action`
//!
//! **Semantic-action contracts**
//! - `semantic actions only with UI snapshots`: `findElement` and the other
//!   semantic actions are advertised only when `ui_tree` is.
//! - `semantic input schemas accept canonical arguments`
//! - `semantic actions keep their result contract`: a canonical call
//!   answers the protocol's result shape (`FindElementResult` …) or a typed
//!   error (`element_not_found` …), never `invalid_arguments`.
//!
//! **Observations and UI-snapshot bounds**
//! - `screenshot PNG decodes and matches the viewport`
//! - `the UI tree is a valid snapshot within the protocol's bounds`
//!   (drivers with `ui_tree`): unique ids, parents before children,
//!   roots that exist, node, text and size limits.
//! - `observe without screenshot returns no PNG`
//!
//! **Cancellation and deadlines**
//! - `a cancelled call fails with request_cancelled`
//! - `a call past its deadline fails with request_timed_out`
//! - `a running call stops when cancelled`: every action, cancelled 100 ms
//!   into the call, returns within 2 s of the cancellation (the host kills
//!   a plugin's worker that leaves a call running longer).
//! - `a running call stops at its deadline`: every action, with a deadline
//!   300 ms away, returns within 2 s of it.
//!
//! **Device lifecycle**
//! - `doctor reports at least one check`
//! - `disconnect succeeds and is idempotent`
//! - `a disconnected device refuses observe with device_not_connected`
//! - `an unknown device is refused with device_not_found`
//!
//! **Errors typed**
//! - `errors are typed`: no call of the run panicked (`internal_error`
//!   with `cause: driverPanicked`), returned a malformed error code, or
//!   returned values the protocol types refuse (`protocol_error`).
//!
//! **Output** (with [`Suite::watch_stdout`], which [`assert_crate`] sets)
//! - `nothing is written to stdout`: stdout carries the host's protocol.
//!
//! With [`Suite::new`] the suite borrows the driver, so a call that never
//! returns blocks the run; [`Suite::owned`] and [`assert_crate`] leave
//! such a call behind and report it.
//!
//! Building and loading this workspace's own plugins for tests is the job
//! of the workspace's `devicerail-host-testing` crate, not of this suite.

mod krate;
mod sample;
mod stdout;

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use devicerail_host_protocol::{
    ActionCall, ActionDefinition, Bounded, BoundedVec, CallId, ClearElementResult, DeviceId,
    ErrorCode, FindElementResult, ObservationId, SEMANTIC_ACTIONS, SERVER_PROTOCOL_RANGES,
    SetElementValueResult, TapElementResult, UiSnapshot, WaitForElementResult,
};
use serde_json::{Value, json};

use crate::context::CallContext;
use crate::driver::{ActionOutput, Driver, DriverError, DriverResult, ObserveRequest};
use crate::ffi::ABI_MAJOR;
use crate::loader::LoadedPlugin;
use crate::manifest::{PluginManifest, library_file_name, valid_plugin_id};

pub use crate::cargo_build::LIBRARY_ENV;
pub use krate::{CrateCheck, assert_crate, for_crate};
pub use sample::sample_arguments;

/// When a running call is cancelled, after it started.
pub const CANCEL_AFTER: Duration = Duration::from_millis(100);
/// The deadline of a call that must stop at its deadline, after it started.
pub const DEADLINE_AFTER: Duration = Duration::from_millis(300);
/// How long a call may run on after its cancellation or deadline: the
/// host's worker supervision allows the same before it kills the worker.
pub const GRACE: Duration = Duration::from_secs(2);
/// The deadline of the other action calls of the run.
const CALL_DEADLINE: Duration = Duration::from_secs(1);

/// The group a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Area {
    /// What the library says about itself.
    Manifest,
    /// Listing and connecting devices.
    Devices,
    /// The action space and its argument schemas.
    ActionSpace,
    /// The semantic actions over UI trees.
    SemanticActions,
    /// Screenshots and UI snapshots.
    Observations,
    /// Cancellation and deadlines.
    Cancellation,
    /// Doctor, disconnect and refusals.
    Lifecycle,
    /// The errors of every call.
    Errors,
    /// What the driver writes to the process's stdout.
    Output,
}

impl Area {
    /// The area's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Manifest => "manifest",
            Self::Devices => "devices",
            Self::ActionSpace => "action space",
            Self::SemanticActions => "semantic actions",
            Self::Observations => "observations",
            Self::Cancellation => "cancellation and deadlines",
            Self::Lifecycle => "device lifecycle",
            Self::Errors => "errors",
            Self::Output => "output",
        }
    }
}

/// One check of the suite: its name in reports and how a driver fixes a
/// failure of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Check {
    /// Its group.
    pub area: Area,
    /// What it asserts, as the report names it.
    pub name: &'static str,
    /// What a driver changes to pass it.
    pub fix: &'static str,
}

const fn check(area: Area, name: &'static str, fix: &'static str) -> Check {
    Check { area, name, fix }
}

const LOADS: Check = check(
    Area::Manifest,
    "the library loads as the host loads it",
    "read the reason: build against the devicerail-host-plugin-api version of the host you install into, invoke `export_plugin!` exactly once, and let the driver's constructor accept empty settings (use defaults)",
);
const MANIFEST: Check = check(
    Area::Manifest,
    "the manifest names the plugin and what it drives",
    "in `export_plugin!`, give `id` as 1-64 of [a-z0-9-] and `description` as one line (at most 200 characters) saying what the plugin drives; the version is the crate's `version` in Cargo.toml",
);
const FILE_NAME: Check = check(
    Area::Manifest,
    "the library file is named after the plugin id",
    "set `[lib] name = \"devicerail_plugin_<id with - as _>\"` in Cargo.toml, or change the id in `export_plugin!` to match the library's name",
);
const SPEAKS: Check = check(
    Area::Manifest,
    "the plugin speaks the host's plugin ABI and protocol",
    "build with the devicerail-host-plugin-api version of the host you install into",
);
const LISTED: Check = check(
    Area::Devices,
    "devices are listed with unique ids",
    "list every device the driver can reach once, each with an id unique within the plugin; list at least one (a simulated or configured device) so the suite has something to exercise",
);
const UNDER_TEST: Check = check(
    Area::Devices,
    "the device under test is listed",
    "name a listed device with `.device(id)`, or make `list_devices` list it",
);
const RELIST: Check = check(
    Area::Devices,
    "relisting is stable",
    "return the same devices on every `list_devices` call while nothing is plugged in or removed",
);
const CONNECT: Check = check(
    Area::Devices,
    "connect returns the connected device",
    "return the device's `DeviceInfo` from `connect`, with the id that was asked for and `connected: true`",
);
const NAMES: Check = check(
    Area::ActionSpace,
    "action names are unique, with descriptions",
    "give every action a unique, non-empty name and a description (`actions::definition`)",
);
const SCHEMAS: Check = check(
    Area::ActionSpace,
    "input schemas are valid object schemas",
    "make each `input_schema` a valid JSON Schema with `\"type\": \"object\"` (the shared `actions::*` definitions are)",
);
const SECRETS: Check = check(
    Area::ActionSpace,
    "secret-bearing actions are protected",
    "declare actions that take secrets with `protection: Some(ActionProtection::Protected)`, or use `actions::input_secret`",
);
const ACCEPTS: Check = check(
    Area::ActionSpace,
    "arguments the schema accepts are accepted",
    "make the input schema describe exactly what the action parses (member names, types, bounds); where the action checks more than a schema can say, put arguments it accepts in the schema's `examples`",
);
const REFUSES: Check = check(
    Area::ActionSpace,
    "arguments the schema refuses give invalid_arguments",
    "parse arguments with `actions::parse_arguments` into a `#[serde(deny_unknown_fields)]` struct, check bounds before acting, and answer `DriverError::invalid_arguments` for anything the schema refuses",
);
const UNKNOWN_ACTION: Check = check(
    Area::ActionSpace,
    "an unknown action gives unknown_action",
    "answer `DriverError::unknown_action(name)` for a name outside the action space",
);
const SEMANTIC_NEEDS_TREE: Check = check(
    Area::SemanticActions,
    "semantic actions only with UI snapshots",
    "advertise semantic actions (`findElement` …) only when `capabilities().ui_tree` is true and `observe` builds UI trees",
);
const SEMANTIC_SCHEMAS: Check = check(
    Area::SemanticActions,
    "semantic input schemas accept canonical arguments",
    "take the semantic actions' definitions from `semantic::definitions()`",
);
const SEMANTIC_RESULTS: Check = check(
    Area::SemanticActions,
    "semantic actions keep their result contract",
    "run semantic actions through `semantic::execute` with a `UiBackend`: it answers the protocol's result shapes and element errors (`element_not_found` …)",
);
const PNG: Check = check(
    Area::Observations,
    "screenshot PNG decodes and matches the viewport",
    "encode the screen as PNG at exactly `Viewport.width` x `Viewport.height` pixels (screenshot pixels, the coordinate space of actions)",
);
const TREE: Check = check(
    Area::Observations,
    "the UI tree is a valid snapshot within the protocol's bounds",
    "build the tree with unique stable ids, each parent before its contiguous descendants, roots that are exactly the parentless nodes, within the protocol's node, text and size limits (`UiSnapshot::validate` names the rule)",
);
const NO_PNG: Check = check(
    Area::Observations,
    "observe without screenshot returns no PNG",
    "capture a screenshot only when `ObserveRequest.screenshot` is set",
);
const CANCELLED: Check = check(
    Area::Cancellation,
    "a cancelled call fails with request_cancelled",
    "start `execute` with `ctx.check()?`, which answers `request_cancelled` once the call is cancelled",
);
const EXPIRED: Check = check(
    Area::Cancellation,
    "a call past its deadline fails with request_timed_out",
    "start `execute` with `ctx.check()?`, which answers `request_timed_out` once the deadline has passed",
);
const STOPS_CANCELLED: Check = check(
    Area::Cancellation,
    "a running call stops when cancelled",
    "never block without a bound: poll `ctx.check()?` between steps, wait with `ctx.sleep()`, and give blocking I/O a timeout of `ctx.remaining()`; the host kills a plugin's worker that leaves a call running 2 s after its cancellation",
);
const STOPS_AT_DEADLINE: Check = check(
    Area::Cancellation,
    "a running call stops at its deadline",
    "never block past `ctx.deadline()`: give blocking I/O a timeout of `ctx.remaining()` and poll `ctx.check()?` between steps; the host kills a plugin's worker that leaves a call running 2 s past its deadline",
);
const DOCTOR: Check = check(
    Area::Lifecycle,
    "doctor reports at least one check",
    "return at least one `DoctorCheck` from `doctor()`, saying what the driver needs and whether it is there",
);
const DISCONNECT: Check = check(
    Area::Lifecycle,
    "disconnect succeeds and is idempotent",
    "release the device in `disconnect`; disconnecting a device that is not connected is not an error",
);
const NOT_CONNECTED: Check = check(
    Area::Lifecycle,
    "a disconnected device refuses observe with device_not_connected",
    "answer `DriverError::not_connected(device)` for calls on a device that is not connected",
);
const UNKNOWN_DEVICE: Check = check(
    Area::Lifecycle,
    "an unknown device is refused with device_not_found",
    "answer `DriverError::device_not_found(device)` for an id the driver does not list",
);
const TYPED: Check = check(
    Area::Errors,
    "errors are typed",
    "return `DriverError`s (`invalid_arguments`, `unknown_action`, `device_not_found`, `not_connected`, `device_unavailable`, `action_failed`, `platform`) instead of panicking; custom codes are 1-64 of [a-z0-9_.-]; every value returned must pass the protocol types",
);
const NO_STDOUT: Check = check(
    Area::Output,
    "nothing is written to stdout",
    "log with `tracing` (the host forwards it to its log) and never print: the host's stdout carries the protocol, and a stray line breaks every client",
);

/// Every check, in the order a run reports them.
pub const CHECKS: &[Check] = &[
    LOADS,
    MANIFEST,
    FILE_NAME,
    SPEAKS,
    LISTED,
    UNDER_TEST,
    RELIST,
    CONNECT,
    NAMES,
    SCHEMAS,
    SECRETS,
    STOPS_CANCELLED,
    STOPS_AT_DEADLINE,
    CANCELLED,
    EXPIRED,
    ACCEPTS,
    REFUSES,
    UNKNOWN_ACTION,
    SEMANTIC_NEEDS_TREE,
    SEMANTIC_SCHEMAS,
    SEMANTIC_RESULTS,
    PNG,
    TREE,
    NO_PNG,
    DOCTOR,
    DISCONNECT,
    NOT_CONNECTED,
    UNKNOWN_DEVICE,
    TYPED,
    NO_STDOUT,
];

/// One check's outcome.
#[derive(Debug, Clone)]
pub struct CheckResult {
    /// What was checked (a [`Check`]'s name).
    pub name: String,
    /// Whether the driver passed.
    pub passed: bool,
    /// `ok` (perhaps with what was skipped), or what was wrong.
    pub detail: String,
    /// How to fix a failure (empty when passed).
    pub fix: String,
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

/// A failure listing `problems`, or success when there are none.
fn all_ok(problems: Vec<String>) -> Outcome {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(Failure(problems.join("; ")))
    }
}

impl Report {
    /// How many checks passed.
    pub fn passed(&self) -> usize {
        self.checks.iter().filter(|c| c.passed).count()
    }

    /// The failed checks.
    pub fn failures(&self) -> Vec<&CheckResult> {
        self.checks.iter().filter(|c| !c.passed).collect()
    }

    /// Whether a check of this name failed.
    pub fn failed(&self, name: &str) -> bool {
        self.checks.iter().any(|c| c.name == name && !c.passed)
    }

    /// Every check on its own line (`ok` or `FAILED`), then each failure
    /// with what was found and the fix.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for c in &self.checks {
            let mark = if c.passed { "ok    " } else { "FAILED" };
            out.push_str(&format!("  {mark} {}", c.name));
            if c.passed && c.detail != "ok" {
                out.push_str(&format!(" ({})", c.detail));
            }
            out.push('\n');
        }
        let failures = self.failures();
        if !failures.is_empty() {
            out.push_str(&format!(
                "\nconformance: {} of {} checks failed:\n",
                failures.len(),
                self.checks.len()
            ));
            for c in failures {
                out.push_str(&format!(
                    "\nFAILED {}\n  found: {}\n  fix:   {}\n",
                    c.name, c.detail, c.fix
                ));
            }
        }
        out
    }

    /// Prints `conformance: N/M checks passed` and every check, then
    /// panics listing each failure with what was found and its fix.
    pub fn assert_passed(&self) {
        println!(
            "conformance: {}/{} checks passed\n{}",
            self.passed(),
            self.checks.len(),
            self.text()
        );
        let failures = self.failures();
        assert!(
            failures.is_empty(),
            "conformance: {} of {} checks failed:\n{}",
            failures.len(),
            self.checks.len(),
            failures
                .iter()
                .map(|c| format!(
                    "\nFAILED {}\n  found: {}\n  fix:   {}",
                    c.name, c.detail, c.fix
                ))
                .collect::<String>()
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

/// Canonical arguments of each semantic action.
fn canonical_semantic_arguments(name: &str) -> Option<Value> {
    Some(match name {
        "findElement" => json!({ "selector": { "role": "button", "name": "OK" } }),
        "tapElement" => {
            json!({ "target": { "kind": "selector", "selector": { "identifier": "ok" } } })
        }
        "clearElement" => {
            json!({ "target": { "kind": "selector", "selector": { "identifier": "field" } } })
        }
        "setElementValue" => json!({
            "target": { "kind": "selector", "selector": { "identifier": "field" } },
            "value": "x"
        }),
        "waitForElement" => {
            json!({ "selector": { "text": { "value": "Done" } }, "condition": "visible" })
        }
        _ => return None,
    })
}

/// Whether `output` has the protocol's result shape of semantic `action`
/// (the decoding error says where it does not).
fn semantic_result_shape(action: &str, output: &Value) -> Result<(), serde_json::Error> {
    fn decode<T: serde::de::DeserializeOwned>(v: &Value) -> Result<(), serde_json::Error> {
        serde_json::from_value::<T>(v.clone()).map(drop)
    }
    match action {
        "findElement" => decode::<FindElementResult>(output),
        "tapElement" => decode::<TapElementResult>(output),
        "clearElement" => decode::<ClearElementResult>(output),
        "setElementValue" => decode::<SetElementValueResult>(output),
        "waitForElement" => decode::<WaitForElementResult>(output),
        _ => Ok(()),
    }
}

/// The driver under test: borrowed (a call that never returns blocks the
/// run) or shared (such a call is left behind).
enum Target<'d> {
    Borrowed(&'d dyn Driver),
    Shared(Arc<dyn Driver>),
}

impl Target<'_> {
    fn get(&self) -> &dyn Driver {
        match self {
            Self::Borrowed(d) => *d,
            Self::Shared(d) => d.as_ref(),
        }
    }
}

/// How one timed action call ended.
struct Timed {
    /// The result, or `None` when the call was still running when the
    /// suite stopped waiting.
    result: Option<DriverResult<ActionOutput>>,
    /// How long the call ran (or how long the suite waited).
    elapsed: Duration,
    /// The call was not made: an earlier call of the action is still
    /// running.
    skipped: bool,
}

/// Runs `call`, turning a panic of an in-process driver into the error a
/// loaded plugin's export layer would return.
fn contained(call: impl FnOnce() -> DriverResult<ActionOutput>) -> DriverResult<ActionOutput> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(DriverError::panicked("execute", &message))
    })
}

/// What the library under test is, when the suite knows it.
struct Library {
    manifest: PluginManifest,
    file: std::path::PathBuf,
}

/// The suite, configured for one driver.
pub struct Suite<'d> {
    target: Target<'d>,
    library: Option<Library>,
    device: Option<DeviceId>,
    watch_stdout: bool,
    report: Report,
    /// Errors seen in the run, with the call that returned them.
    errors: Vec<(String, DriverError)>,
    /// Actions with a call still running when the suite stopped waiting
    /// for it; they are not called again.
    left_running: Vec<String>,
}

impl<'d> Suite<'d> {
    /// The suite for `driver`, borrowed: a call that never returns blocks
    /// the run (use [`Suite::owned`] to leave it behind instead).
    pub fn new(driver: &'d dyn Driver) -> Self {
        Self::with_target(Target::Borrowed(driver), None)
    }

    /// The suite for a loaded plugin, borrowed, with the manifest checks.
    pub fn loaded(plugin: &'d LoadedPlugin) -> Self {
        let library = Library {
            manifest: plugin.manifest().clone(),
            file: plugin.path().to_path_buf(),
        };
        Self::with_target(Target::Borrowed(plugin), Some(library))
    }

    fn with_target(target: Target<'d>, library: Option<Library>) -> Self {
        Self {
            target,
            library,
            device: None,
            watch_stdout: false,
            report: Report::default(),
            errors: Vec::new(),
            left_running: Vec::new(),
        }
    }

    /// The device to exercise (default: the first listed).
    #[must_use]
    pub fn device(mut self, id: &str) -> Self {
        self.device = Some(DeviceId::new(id));
        self
    }

    /// Also checks that nothing reaches the process's stdout (file
    /// descriptor 1) while the driver runs. Only for a test alone in its
    /// binary: the test harness prints there when other tests finish.
    #[must_use]
    pub fn watch_stdout(mut self) -> Self {
        self.watch_stdout = true;
        self
    }

    fn driver(&self) -> &dyn Driver {
        self.target.get()
    }

    fn record(&mut self, check: &Check, outcome: Outcome) -> bool {
        self.record_noting(check, outcome, None)
    }

    /// Records `outcome`; a pass carries `note` (what was skipped) when
    /// there is one.
    fn record_noting(&mut self, check: &Check, outcome: Outcome, note: Option<String>) -> bool {
        let passed = outcome.is_ok();
        let (detail, fix) = match outcome {
            Ok(()) => (note.unwrap_or_else(|| "ok".into()), String::new()),
            Err(f) => (f.0, check.fix.to_owned()),
        };
        self.report.checks.push(CheckResult {
            name: check.name.to_owned(),
            passed,
            detail,
            fix,
        });
        passed
    }

    /// Keeps the error of `result` for the typed-errors check.
    fn saw<T>(&mut self, what: &str, result: &DriverResult<T>) {
        if let Err(e) = result {
            self.errors.push((what.to_owned(), e.clone()));
        }
    }

    fn expect_code(result: &DriverResult<impl std::fmt::Debug>, code: ErrorCode) -> Outcome {
        match result {
            Err(e) if e.code == code => Ok(()),
            Err(e) => Err(format!("expected {code}, got {}: {}", e.code, e.message).into()),
            Ok(v) => Err(format!("expected {code}, got success {v:?}").into()),
        }
    }

    /// Runs `call` on `device` with `ctx`, cancelling it `cancel_after`
    /// into the call when given, and waits until `wait` has passed since
    /// the start (then the call counts as still running).
    fn execute_timed(
        &mut self,
        device: &DeviceId,
        call: ActionCall,
        ctx: CallContext,
        cancel_after: Option<Duration>,
        wait: Duration,
    ) -> Timed {
        if self.left_running.contains(&call.name) {
            return Timed {
                result: None,
                elapsed: Duration::ZERO,
                skipped: true,
            };
        }
        let (tx, rx) = mpsc::channel();
        let started = Instant::now();
        let waiting = |rx: &mpsc::Receiver<DriverResult<ActionOutput>>| {
            if let Some(after) = cancel_after {
                if let Ok(r) = rx.recv_timeout(after) {
                    return Some(r);
                }
                ctx.cancel();
            }
            rx.recv_timeout(wait.saturating_sub(started.elapsed())).ok()
        };
        let name = call.name.clone();
        let result = match &self.target {
            Target::Shared(driver) => {
                let (driver, device, ctx) = (driver.clone(), device.clone(), ctx.clone());
                let spawned = std::thread::Builder::new()
                    .name(format!("conformance {name}"))
                    .spawn(move || {
                        let _ = tx.send(contained(|| driver.execute(&ctx, &device, &call)));
                    });
                match spawned {
                    Ok(_) => waiting(&rx),
                    Err(e) => Some(Err(DriverError::failure(format!(
                        "the suite could not start a thread: {e}"
                    )))),
                }
            }
            Target::Borrowed(driver) => std::thread::scope(|s| {
                let (driver, ctx2) = (*driver, ctx.clone());
                s.spawn(move || {
                    let _ = tx.send(contained(|| driver.execute(&ctx2, device, &call)));
                });
                waiting(&rx)
            }),
        };
        let elapsed = started.elapsed();
        match &result {
            Some(r) => self.saw(&format!("execute {name}"), r),
            None => self.left_running.push(name),
        }
        Timed {
            result,
            elapsed,
            skipped: false,
        }
    }

    /// Runs `call` with a deadline [`CALL_DEADLINE`] away, waiting up to
    /// [`GRACE`] past it.
    fn execute_bounded(&mut self, device: &DeviceId, call: ActionCall) -> Timed {
        let ctx = CallContext::new(Some(Instant::now() + CALL_DEADLINE));
        self.execute_timed(device, call, ctx, None, CALL_DEADLINE + GRACE)
    }

    /// Runs every check and returns the report.
    pub fn run(mut self) -> Report {
        let capture = if self.watch_stdout {
            Some(stdout::Capture::start())
        } else {
            None
        };
        self.run_checks();
        if let Some(capture) = capture {
            let outcome = match capture.and_then(stdout::Capture::finish) {
                Ok(bytes) if bytes.is_empty() => Ok(()),
                Ok(bytes) => Err(Failure(stdout::describe(&bytes))),
                Err(e) => Err(Failure(format!("could not watch stdout: {e}"))),
            };
            self.record(&NO_STDOUT, outcome);
        }
        if !self.left_running.is_empty() {
            eprintln!(
                "conformance: left running: {} (calls that ignored their cancellation and deadline)",
                self.left_running.join(", ")
            );
        }
        self.report
    }

    fn run_checks(&mut self) {
        if let Some(library) = self.library.take() {
            self.check_manifest(&library);
        }
        let ctx = CallContext::unbounded();
        let listed = self.driver().list_devices(&ctx);
        self.saw("list_devices", &listed);
        let devices = match listed {
            Ok(d) => d,
            Err(e) => {
                self.record(&LISTED, Err(e.into()));
                return;
            }
        };
        let ids: HashSet<_> = devices.iter().map(|d| d.id.clone()).collect();
        self.record(
            &LISTED,
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
            return;
        };
        self.record(
            &UNDER_TEST,
            if ids.contains(&device) {
                Ok(())
            } else {
                Err(format!("{device} is not listed").into())
            },
        );
        let again = self.driver().list_devices(&ctx);
        self.saw("list_devices", &again);
        self.record(
            &RELIST,
            match again {
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
        let connected = self.driver().connect(&ctx, &device);
        self.saw("connect", &connected);
        let connected = match connected {
            Ok(info) if info.id == device && info.connected => Ok(()),
            Ok(info) => Err(format!("connect returned {info:?}").into()),
            Err(e) => Err(e.into()),
        };
        if !self.record(&CONNECT, connected) {
            return;
        }
        let caps = self.driver().capabilities(&ctx, &device);
        self.saw("capabilities", &caps);
        match caps {
            Ok(caps) => {
                self.check_actions(&caps.actions);
                self.check_cancellation(&device, &caps.actions);
                self.check_arguments(&device, &caps.actions, caps.ui_tree);
                self.check_semantic(&device, &caps.actions, caps.ui_tree);
                self.check_observe(&ctx, &device, caps.ui_tree);
            }
            Err(e) => {
                self.record(&NAMES, Err(format!("capabilities failed: {e}").into()));
            }
        }
        self.check_lifecycle(&ctx, &device);
        self.check_errors();
    }

    fn check_manifest(&mut self, library: &Library) {
        let m = &library.manifest;
        let mut problems = Vec::new();
        if !valid_plugin_id(&m.id) {
            problems.push(format!("id {:?} is not 1-64 of [a-z0-9-]", m.id));
        }
        if m.version.trim().is_empty() {
            problems.push("the version is empty".to_owned());
        }
        let description = m.description.trim();
        if description.is_empty() {
            problems.push("the description is empty".to_owned());
        } else if description.contains('\n') || description.chars().count() > 200 {
            problems.push(format!(
                "the description is not one line of at most 200 characters: {description:?}"
            ));
        }
        self.record(&MANIFEST, all_ok(problems));
        let expected = library_file_name(&m.id);
        let actual = library
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.record(
            &FILE_NAME,
            if actual == expected {
                Ok(())
            } else {
                Err(format!(
                    "plugin {:?} is in {actual}; the host installs it as {expected}",
                    m.id
                )
                .into())
            },
        );
        let overlaps = m.protocol.iter().any(|p| {
            SERVER_PROTOCOL_RANGES.iter().any(|h| {
                p.major == h.major && p.min_minor <= h.max_minor && h.min_minor <= p.max_minor
            })
        });
        self.record(
            &SPEAKS,
            if m.abi_major != ABI_MAJOR {
                Err(format!(
                    "plugin ABI major {} (the host's is {ABI_MAJOR})",
                    m.abi_major
                )
                .into())
            } else if !overlaps {
                Err(format!("protocol ranges {:?} meet none of the host's", m.protocol).into())
            } else {
                Ok(())
            },
        );
    }

    fn check_actions(&mut self, actions: &[ActionDefinition]) {
        let mut names = HashSet::new();
        let dup: Vec<_> = actions
            .iter()
            .filter(|a| !names.insert(a.name.as_str()))
            .map(|a| a.name.clone())
            .collect();
        self.record(
            &NAMES,
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
        self.record(&SCHEMAS, all_ok(bad_schemas));
        let unprotected: Vec<_> = actions
            .iter()
            .filter(|a| looks_secret(&a.name) && !a.is_protected())
            .map(|a| a.name.clone())
            .collect();
        self.record(
            &SECRETS,
            if unprotected.is_empty() {
                Ok(())
            } else {
                Err(format!("unprotected: {unprotected:?}").into())
            },
        );
    }

    /// The arguments `def` is called with: canonical ones for semantic
    /// actions, else a sample of its schema.
    fn arguments_for(def: &ActionDefinition) -> Option<Value> {
        canonical_semantic_arguments(&def.name)
            .filter(|_| SEMANTIC_ACTIONS.contains(&def.name.as_str()))
            .or_else(|| sample_arguments(&def.input_schema))
    }

    fn check_arguments(&mut self, device: &DeviceId, actions: &[ActionDefinition], ui_tree: bool) {
        let call =
            |name: &str, arguments: Value| ActionCall::new(CallId::new_v4(), name, arguments);
        let mut refused = Vec::new();
        let mut unbuildable = Vec::new();
        let mut running = Vec::new();
        for def in actions {
            // Semantic actions without UI trees are the semantic check's.
            if SEMANTIC_ACTIONS.contains(&def.name.as_str()) && !ui_tree {
                continue;
            }
            let Some(arguments) = Self::arguments_for(def) else {
                unbuildable.push(def.name.clone());
                continue;
            };
            let timed = self.execute_bounded(device, call(&def.name, arguments.clone()));
            match timed.result {
                Some(Err(e)) if e.code == ErrorCode::InvalidArguments => refused.push(format!(
                    "{}: {arguments} was refused as invalid_arguments ({})",
                    def.name, e.message
                )),
                Some(_) => {}
                None if timed.skipped => running.push(def.name.clone()),
                None => refused.push(format!(
                    "{}: {arguments} got no answer within {:.1} s (its deadline was {} s)",
                    def.name,
                    timed.elapsed.as_secs_f64(),
                    CALL_DEADLINE.as_secs()
                )),
            }
        }
        let mut notes = Vec::new();
        if !unbuildable.is_empty() {
            notes.push(format!(
                "skipped {}: their schemas say too little to build arguments (give them `examples`)",
                unbuildable.join(", ")
            ));
        }
        if let Some(note) = still_running_note(&running) {
            notes.push(note);
        }
        self.record_noting(&ACCEPTS, all_ok(refused), join_notes(notes));

        let mut accepted = Vec::new();
        let mut running = Vec::new();
        for def in actions {
            for (what, arguments) in refused_arguments(def) {
                let timed = self.execute_bounded(device, call(&def.name, arguments.clone()));
                let problem = match timed.result {
                    Some(r) => Self::expect_code(&r, ErrorCode::InvalidArguments)
                        .err()
                        .map(|f| f.0),
                    None if timed.skipped => {
                        running.push(def.name.clone());
                        break;
                    }
                    None => Some(format!(
                        "no answer within {:.1} s",
                        timed.elapsed.as_secs_f64()
                    )),
                };
                if let Some(p) = problem {
                    accepted.push(format!("{} with {what} {arguments}: {p}", def.name));
                }
            }
        }
        self.record_noting(&REFUSES, all_ok(accepted), still_running_note(&running));

        let unknown = self.execute_bounded(device, call("conformanceNoSuchAction", json!({})));
        self.record(
            &UNKNOWN_ACTION,
            match unknown.result {
                Some(r) => Self::expect_code(&r, ErrorCode::UnknownAction),
                None => Err("no answer".into()),
            },
        );
    }

    fn check_semantic(&mut self, device: &DeviceId, actions: &[ActionDefinition], ui_tree: bool) {
        let semantic: Vec<&ActionDefinition> = actions
            .iter()
            .filter(|a| SEMANTIC_ACTIONS.contains(&a.name.as_str()))
            .collect();
        let names: Vec<&str> = semantic.iter().map(|a| a.name.as_str()).collect();
        self.record(
            &SEMANTIC_NEEDS_TREE,
            if !semantic.is_empty() && !ui_tree {
                Err(format!("{names:?} advertised without UI tree support").into())
            } else {
                Ok(())
            },
        );
        let mut rejected = Vec::new();
        for def in &semantic {
            if let (Some(example), Ok(v)) = (
                canonical_semantic_arguments(&def.name),
                jsonschema::validator_for(&def.input_schema),
            ) && !v.is_valid(&example)
            {
                rejected.push(format!("{} refuses {example}", def.name));
            }
        }
        self.record(&SEMANTIC_SCHEMAS, all_ok(rejected));
        if semantic.is_empty() || !ui_tree {
            return;
        }
        let mut broken = Vec::new();
        for def in semantic {
            let Some(arguments) = canonical_semantic_arguments(&def.name) else {
                continue;
            };
            let call = ActionCall::new(CallId::new_v4(), &def.name, arguments);
            let timed = self.execute_bounded(device, call);
            let problem = match timed.result {
                Some(Ok(out)) => semantic_result_shape(&def.name, &out.output)
                    .err()
                    .map(|e| format!("its result {} is not the protocol's: {e}", out.output)),
                Some(Err(e))
                    if e.code == ErrorCode::InvalidArguments
                        || e.code == ErrorCode::UnknownAction =>
                {
                    Some(format!("{}: {}", e.code, e.message))
                }
                Some(Err(_)) => None,
                None if timed.skipped => None,
                None => Some("no answer".to_owned()),
            };
            if let Some(p) = problem {
                broken.push(format!("{}: {p}", def.name));
            }
        }
        self.record(&SEMANTIC_RESULTS, all_ok(broken));
    }

    fn check_observe(&mut self, ctx: &CallContext, device: &DeviceId, ui_tree: bool) {
        let request = ObserveRequest {
            screenshot: true,
            ui_tree,
            live: None,
        };
        let obs = self.driver().observe(ctx, device, &request);
        self.saw("observe", &obs);
        let obs = match obs {
            Ok(o) => o,
            Err(e) => {
                self.record(&PNG, Err(e.into()));
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
        self.record(&PNG, png);
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
            self.record(&TREE, tree);
        }
        let plain = self
            .driver()
            .observe(ctx, device, &ObserveRequest::default());
        self.saw("observe", &plain);
        self.record(
            &NO_PNG,
            match plain {
                Ok(o) if o.png.is_none() => Ok(()),
                Ok(_) => Err("PNG returned although none was requested".into()),
                Err(e) => Err(e.into()),
            },
        );
    }

    fn check_cancellation(&mut self, device: &DeviceId, actions: &[ActionDefinition]) {
        let call =
            |name: &str, arguments: Value| ActionCall::new(CallId::new_v4(), name, arguments);
        // Running calls first: a call that ignores its context shows here,
        // and is left alone for the rest of the run.
        let mut kept_running = Vec::new();
        let mut past_deadline = Vec::new();
        let (mut skipped_cancel, mut skipped_deadline) = (Vec::new(), Vec::new());
        for def in actions {
            let Some(arguments) = Self::arguments_for(def) else {
                continue;
            };
            let r = self.execute_timed(
                device,
                call(&def.name, arguments.clone()),
                CallContext::unbounded(),
                Some(CANCEL_AFTER),
                CANCEL_AFTER + GRACE,
            );
            match r.result {
                Some(_) => {}
                None if r.skipped => skipped_cancel.push(def.name.clone()),
                None => kept_running.push(format!(
                    "{}: still running {:.1} s after it was cancelled",
                    def.name,
                    r.elapsed.saturating_sub(CANCEL_AFTER).as_secs_f64()
                )),
            }
            let ctx = CallContext::new(Some(Instant::now() + DEADLINE_AFTER));
            let r = self.execute_timed(
                device,
                call(&def.name, arguments),
                ctx,
                None,
                DEADLINE_AFTER + GRACE,
            );
            match r.result {
                Some(_) => {}
                None if r.skipped => skipped_deadline.push(def.name.clone()),
                None => past_deadline.push(format!(
                    "{}: still running {:.1} s past its deadline",
                    def.name,
                    r.elapsed.saturating_sub(DEADLINE_AFTER).as_secs_f64()
                )),
            }
        }
        let note = still_running_note(&skipped_cancel);
        self.record_noting(&STOPS_CANCELLED, all_ok(kept_running), note);
        let note = still_running_note(&skipped_deadline);
        self.record_noting(&STOPS_AT_DEADLINE, all_ok(past_deadline), note);

        let Some(def) = actions.first() else {
            return;
        };
        let arguments = Self::arguments_for(def).unwrap_or_else(|| json!({}));
        let cancelled = CallContext::unbounded();
        cancelled.cancel();
        let pre_cancelled = (&CANCELLED, cancelled, ErrorCode::RequestCancelled);
        let expired = CallContext::new(Some(Instant::now()));
        let pre_expired = (&EXPIRED, expired, ErrorCode::RequestTimedOut);
        for (check, ctx, code) in [pre_cancelled, pre_expired] {
            let r =
                self.execute_timed(device, call(&def.name, arguments.clone()), ctx, None, GRACE);
            let (outcome, note) = match r.result {
                Some(r) => (
                    Self::expect_code(&r, code).map_err(|f| Failure(format!("{}: {f}", def.name))),
                    None,
                ),
                None if r.skipped => (Ok(()), still_running_note(std::slice::from_ref(&def.name))),
                None => (
                    Err(format!("{}: no answer within {} s", def.name, GRACE.as_secs()).into()),
                    None,
                ),
            };
            self.record_noting(check, outcome, note);
        }
    }

    fn check_lifecycle(&mut self, ctx: &CallContext, device: &DeviceId) {
        let doctor = self.driver().doctor();
        self.record(
            &DOCTOR,
            if doctor.is_empty() {
                Err("no checks".into())
            } else {
                Ok(())
            },
        );
        let first = self.driver().disconnect(ctx, device);
        self.saw("disconnect", &first);
        let second = self.driver().disconnect(ctx, device);
        self.saw("disconnect", &second);
        self.record(
            &DISCONNECT,
            match (first, second) {
                (Ok(()), Ok(())) => Ok(()),
                (Err(e), _) => Err(format!("disconnect failed: {e}").into()),
                (Ok(()), Err(e)) => Err(format!("a second disconnect failed: {e}").into()),
            },
        );
        let observed = self
            .driver()
            .observe(ctx, device, &ObserveRequest::default());
        self.saw("observe", &observed);
        self.record(
            &NOT_CONNECTED,
            match observed {
                Ok(_) => Err("observe succeeded after disconnect".into()),
                Err(e) if e.code == ErrorCode::DeviceNotConnected => Ok(()),
                Err(e) => Err(format!(
                    "expected device_not_connected, got {}: {}",
                    e.code, e.message
                )
                .into()),
            },
        );
        let unknown = self
            .driver()
            .connect(ctx, &DeviceId::new("conformance-no-such-device"));
        self.saw("connect", &unknown);
        self.record(
            &UNKNOWN_DEVICE,
            match unknown {
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
    }

    fn check_errors(&mut self) {
        let mut untyped = Vec::new();
        for (what, e) in &self.errors {
            let panicked = e.details.get("cause").and_then(Value::as_str) == Some("driverPanicked");
            let problem = if panicked {
                Some("panicked")
            } else if e.code.as_str() == crate::driver::CustomCode::UNKNOWN {
                Some("returned a malformed error code")
            } else if e.code == ErrorCode::ProtocolError {
                Some("returned a value the protocol refuses")
            } else {
                None
            };
            if let Some(p) = problem {
                untyped.push(format!("{what} {p}: {}", e.message));
            }
        }
        untyped.dedup();
        self.record(&TYPED, all_ok(untyped));
    }
}

impl Suite<'static> {
    /// The suite for a loaded plugin it owns, with the manifest checks: a
    /// call that never returns is left running and reported.
    pub fn owned(plugin: LoadedPlugin) -> Self {
        let library = Library {
            manifest: plugin.manifest().clone(),
            file: plugin.path().to_path_buf(),
        };
        Self::with_target(Target::Shared(Arc::new(plugin)), Some(library))
    }

    /// The suite for a shared driver: a call that never returns is left
    /// running and reported.
    pub fn shared(driver: Arc<dyn Driver>) -> Self {
        Self::with_target(Target::Shared(driver), None)
    }
}

/// The note of a check that skipped `actions`, whose earlier calls are
/// still running.
fn still_running_note(actions: &[String]) -> Option<String> {
    (!actions.is_empty()).then(|| {
        format!(
            "skipped {}: an earlier call is still running",
            actions.join(", ")
        )
    })
}

/// Notes joined into one, if any.
fn join_notes(notes: Vec<String>) -> Option<String> {
    (!notes.is_empty()).then(|| notes.join("; "))
}

/// A failed load, as a one-check report.
fn load_failure(file: &Path, reason: impl std::fmt::Display) -> Report {
    let mut report = Report::default();
    report.checks.push(CheckResult {
        name: LOADS.name.to_owned(),
        passed: false,
        detail: format!("{}: {reason}", file.display()),
        fix: LOADS.fix.to_owned(),
    });
    report
}

/// A passed load, as the first line of a report.
fn load_success(report: &mut Report) {
    report.checks.insert(
        0,
        CheckResult {
            name: LOADS.name.to_owned(),
            passed: true,
            detail: "ok".into(),
            fix: String::new(),
        },
    );
}

/// Arguments `def`'s schema refuses, each with what is wrong with them.
fn refused_arguments(def: &ActionDefinition) -> Vec<(&'static str, Value)> {
    let schema = &def.input_schema;
    let mut out = vec![("a non-object", json!("not an object"))];
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !required.is_empty() {
        out.push(("no members", json!({})));
    }
    let Some(sample) = sample_arguments(schema) else {
        return out;
    };
    if schema.get("additionalProperties") == Some(&Value::Bool(false)) {
        let mut extra = sample.clone();
        if let Some(map) = extra.as_object_mut() {
            map.insert("conformanceUnknownMember".into(), json!(1));
            out.push(("an unknown member", extra));
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    if let (Some(name), Some(props)) = (required.first(), properties)
        && let Some(wrong) = props
            .get(*name)
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .and_then(sample::wrong_type_for)
    {
        let mut mistyped = sample;
        if let Some(map) = mistyped.as_object_mut() {
            map.insert((*name).to_owned(), wrong);
            if let Ok(v) = jsonschema::validator_for(schema)
                && !v.is_valid(&mistyped)
            {
                out.push(("a member of the wrong type", mistyped));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
