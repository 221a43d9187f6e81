//! `xcrun simctl`: listing simulators, booting, screenshots, launching apps
//! and opening URLs. Every command runs the configured `xcrun` binary with
//! fixed argument vectors (no shell); nothing secret is ever passed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use devicerail_host_plugin_api::CallContext;
use serde::Deserialize;

use crate::process::{self, Output, ProcessError};

/// Upper bound of a short simctl command (list, launch, openurl, screenshot).
pub(crate) const SHORT_CAP: Duration = Duration::from_secs(60);

/// The prefix of runtime identifiers.
const RUNTIME_PREFIX: &str = "com.apple.CoreSimulator.SimRuntime.";

/// Why a simctl command failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SimctlError {
    /// `xcrun` could not run or finish (see [`ProcessError`]).
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// It ran and exited non-zero.
    #[error("`xcrun simctl {command}` failed with {status}: {stderr}")]
    Failed {
        /// The arguments after `simctl`.
        command: String,
        /// The exit status, as text.
        status: String,
        /// Its stderr, trimmed.
        stderr: String,
    },
    /// It succeeded but printed something this plugin cannot read.
    #[error("`xcrun simctl {command}` printed unexpected output: {reason}")]
    BadOutput {
        /// The arguments after `simctl`.
        command: String,
        /// What was wrong.
        reason: String,
    },
}

impl SimctlError {
    /// Whether `xcrun` itself is missing.
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, Self::Process(ProcessError::NotFound { .. }))
    }
}

/// A simulator's boot state as simctl reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SimState {
    /// `Booted`: usable.
    Booted,
    /// `Booting`.
    Booting,
    /// `Shutdown`.
    Shutdown,
    /// `Shutting Down`.
    ShuttingDown,
    /// `Creating`.
    Creating,
    /// Any other state, verbatim.
    Other(String),
}

impl SimState {
    /// The state from simctl's text (unknown ones kept as [`SimState::Other`]).
    pub(crate) fn parse(s: &str) -> Self {
        match s {
            "Booted" => Self::Booted,
            "Booting" => Self::Booting,
            "Shutdown" => Self::Shutdown,
            "Shutting Down" => Self::ShuttingDown,
            "Creating" => Self::Creating,
            other => Self::Other(other.to_owned()),
        }
    }

    /// The state as `device_unavailable`'s `details.reason`: lower camel
    /// case (`shutdown`, `shuttingDown`, `booting`, ...).
    pub(crate) fn reason(&self) -> String {
        match self {
            Self::Booted => "booted".into(),
            Self::Booting => "booting".into(),
            Self::Shutdown => "shutdown".into(),
            Self::ShuttingDown => "shuttingDown".into(),
            Self::Creating => "creating".into(),
            Self::Other(s) => {
                let mut words = s.split_whitespace();
                let first = words.next().unwrap_or("unknown").to_lowercase();
                words.fold(first, |mut out, w| {
                    let mut c = w.chars();
                    if let Some(f) = c.next() {
                        out.extend(f.to_uppercase());
                        out.push_str(&c.as_str().to_lowercase());
                    }
                    out
                })
            }
        }
    }

    /// The state as simctl writes it.
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Booted => "Booted",
            Self::Booting => "Booting",
            Self::Shutdown => "Shutdown",
            Self::ShuttingDown => "Shutting Down",
            Self::Creating => "Creating",
            Self::Other(s) => s,
        }
    }
}

/// One simulator from `simctl list devices --json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SimDevice {
    /// The simulator's UDID, which is also its DeviceRail device id.
    pub(crate) udid: String,
    /// Its display name (`iPhone SE (3rd generation)`).
    pub(crate) name: String,
    /// The runtime identifier, e.g. `com.apple.CoreSimulator.SimRuntime.iOS-17-4`.
    pub(crate) runtime: String,
    /// `iOS`, `watchOS`, `tvOS`, `xrOS`, ...
    pub(crate) platform: String,
    /// `17.4`, when the runtime identifier carries it.
    pub(crate) os_version: Option<String>,
    /// Its boot state.
    pub(crate) state: SimState,
    /// Whether simctl says it can run (its runtime is installed).
    pub(crate) available: bool,
    /// Why it cannot, when simctl says.
    pub(crate) availability_error: Option<String>,
    /// The device type identifier, when listed.
    pub(crate) device_type: Option<String>,
}

impl SimDevice {
    /// Whether it is an iOS simulator (the only platform this plugin drives).
    pub(crate) fn is_ios(&self) -> bool {
        self.platform == "iOS"
    }
}

#[derive(Deserialize)]
struct ListJson {
    devices: BTreeMap<String, Vec<DeviceJson>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeviceJson {
    udid: String,
    name: String,
    state: String,
    #[serde(default)]
    is_available: Option<bool>,
    /// Older Xcode: `"(available)"` / `"(unavailable, ...)"`.
    #[serde(default)]
    availability: Option<String>,
    #[serde(default)]
    availability_error: Option<String>,
    #[serde(default)]
    device_type_identifier: Option<String>,
}

/// Splits a runtime key into platform and dotted version:
/// `com.apple.CoreSimulator.SimRuntime.iOS-17-4` → (`iOS`, `17.4`); the old
/// `iOS 12.1` form is understood too.
pub(crate) fn parse_runtime(runtime: &str) -> (String, Option<String>) {
    if let Some(rest) = runtime.strip_prefix(RUNTIME_PREFIX) {
        return match rest.split_once('-') {
            Some((platform, version)) if !version.is_empty() => {
                (platform.to_owned(), Some(version.replace('-', ".")))
            }
            _ => (rest.to_owned(), None),
        };
    }
    match runtime.split_once(' ') {
        Some((platform, version)) if !version.is_empty() => {
            (platform.to_owned(), Some(version.trim().to_owned()))
        }
        _ => (runtime.to_owned(), None),
    }
}

/// Parses the JSON of `simctl list devices --json`.
pub(crate) fn parse_list(json: &[u8]) -> Result<Vec<SimDevice>, serde_json::Error> {
    let list: ListJson = serde_json::from_slice(json)?;
    let mut out = Vec::new();
    for (runtime, devices) in list.devices {
        let (platform, os_version) = parse_runtime(&runtime);
        for d in devices {
            let available = d
                .is_available
                .unwrap_or_else(|| d.availability.as_deref().is_none_or(|a| a == "(available)"));
            out.push(SimDevice {
                udid: d.udid,
                name: d.name,
                runtime: runtime.clone(),
                platform: platform.clone(),
                os_version: os_version.clone(),
                state: SimState::parse(&d.state),
                available,
                availability_error: d.availability_error.or_else(|| {
                    d.availability
                        .filter(|a| a != "(available)")
                        .map(|a| a.trim_matches(['(', ')']).to_owned())
                }),
                device_type: d.device_type_identifier,
            });
        }
    }
    Ok(out)
}

/// The `xcrun simctl` front end.
#[derive(Debug, Clone)]
pub(crate) struct Simctl {
    xcrun: PathBuf,
}

fn describe(args: &[&OsStr]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Simctl {
    /// A front end running the given `xcrun`.
    pub(crate) fn new(xcrun: impl Into<PathBuf>) -> Self {
        Self {
            xcrun: xcrun.into(),
        }
    }

    /// The `xcrun` it runs.
    pub(crate) fn xcrun(&self) -> &Path {
        &self.xcrun
    }

    /// Runs `xcrun simctl <args>`; a non-zero exit is an error.
    fn simctl(
        &self,
        ctx: &CallContext,
        args: &[&OsStr],
        cap: Duration,
    ) -> Result<Output, SimctlError> {
        let out = self.simctl_raw(ctx, args, cap)?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(SimctlError::Failed {
                command: describe(args),
                status: out.status.to_string(),
                stderr: out.stderr_text(),
            })
        }
    }

    fn simctl_raw(
        &self,
        ctx: &CallContext,
        args: &[&OsStr],
        cap: Duration,
    ) -> Result<Output, SimctlError> {
        let mut full: Vec<&OsStr> = Vec::with_capacity(args.len() + 1);
        full.push(OsStr::new("simctl"));
        full.extend_from_slice(args);
        tracing::trace!(command = %describe(args), "running xcrun simctl");
        Ok(process::run(&self.xcrun, &full, ctx, cap)?)
    }

    /// Every simulator simctl knows, of every platform.
    pub(crate) fn list(&self, ctx: &CallContext) -> Result<Vec<SimDevice>, SimctlError> {
        let args = ["list", "devices", "--json"].map(OsStr::new);
        let out = self.simctl(ctx, &args, SHORT_CAP)?;
        parse_list(&out.stdout).map_err(|e| SimctlError::BadOutput {
            command: describe(&args),
            reason: e.to_string(),
        })
    }

    /// `simctl boot <udid>`; a simulator that is already booted is fine.
    pub(crate) fn boot(
        &self,
        ctx: &CallContext,
        udid: &str,
        cap: Duration,
    ) -> Result<(), SimctlError> {
        let args = [OsStr::new("boot"), OsStr::new(udid)];
        let out = self.simctl_raw(ctx, &args, cap)?;
        if out.status.success() || out.stderr_text().contains("current state: Booted") {
            Ok(())
        } else {
            Err(SimctlError::Failed {
                command: describe(&args),
                status: out.status.to_string(),
                stderr: out.stderr_text(),
            })
        }
    }

    /// `simctl bootstatus <udid> -b`: boots if needed and waits until the
    /// simulator has finished booting.
    pub(crate) fn wait_booted(
        &self,
        ctx: &CallContext,
        udid: &str,
        cap: Duration,
    ) -> Result<(), SimctlError> {
        let args = [OsStr::new("bootstatus"), OsStr::new(udid), OsStr::new("-b")];
        self.simctl(ctx, &args, cap).map(drop)
    }

    /// A PNG screenshot of the simulator's main display, in device pixels.
    pub(crate) fn screenshot(&self, ctx: &CallContext, udid: &str) -> Result<Vec<u8>, SimctlError> {
        let dir = tempfile::Builder::new()
            .prefix("devicerail-ios-")
            .tempdir()
            .map_err(|e| SimctlError::BadOutput {
                command: "io screenshot".into(),
                reason: format!("could not create a temporary directory: {e}"),
            })?;
        let file = dir.path().join("screen.png");
        let args = [
            OsStr::new("io"),
            OsStr::new(udid),
            OsStr::new("screenshot"),
            OsStr::new("--type=png"),
            file.as_os_str(),
        ];
        self.simctl(ctx, &args, SHORT_CAP)?;
        std::fs::read(&file).map_err(|e| SimctlError::BadOutput {
            command: describe(&args),
            reason: format!("no screenshot file was written: {e}"),
        })
    }

    /// `simctl launch <udid> <bundleId>`; returns the pid when printed.
    pub(crate) fn launch(
        &self,
        ctx: &CallContext,
        udid: &str,
        bundle_id: &str,
    ) -> Result<Option<u32>, SimctlError> {
        let args = [
            OsStr::new("launch"),
            OsStr::new(udid),
            OsStr::new(bundle_id),
        ];
        let out = self.simctl(ctx, &args, SHORT_CAP)?;
        // "com.example.app: 12345"
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text
            .lines()
            .filter_map(|l| l.rsplit_once(':'))
            .find_map(|(_, pid)| pid.trim().parse().ok()))
    }

    /// `simctl openurl <udid> <url>`.
    pub(crate) fn open_url(
        &self,
        ctx: &CallContext,
        udid: &str,
        url: &str,
    ) -> Result<(), SimctlError> {
        let args = [OsStr::new("openurl"), OsStr::new(udid), OsStr::new(url)];
        self.simctl(ctx, &args, SHORT_CAP).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes() {
        assert_eq!(
            parse_runtime("com.apple.CoreSimulator.SimRuntime.iOS-17-4"),
            ("iOS".into(), Some("17.4".into()))
        );
        assert_eq!(
            parse_runtime("com.apple.CoreSimulator.SimRuntime.watchOS-10-4"),
            ("watchOS".into(), Some("10.4".into()))
        );
        assert_eq!(
            parse_runtime("com.apple.CoreSimulator.SimRuntime.iOS-18-0-1"),
            ("iOS".into(), Some("18.0.1".into()))
        );
        assert_eq!(
            parse_runtime("iOS 12.1"),
            ("iOS".into(), Some("12.1".into()))
        );
        assert_eq!(parse_runtime("weird"), ("weird".into(), None));
    }

    #[test]
    fn listing_in_both_shapes() {
        let json = br#"{
          "devices" : {
            "com.apple.CoreSimulator.SimRuntime.iOS-17-4" : [
              { "udid" : "U1", "isAvailable" : true, "state" : "Booted", "name" : "iPhone 15",
                "deviceTypeIdentifier" : "com.apple.CoreSimulator.SimDeviceType.iPhone-15" },
              { "udid" : "U2", "isAvailable" : false, "state" : "Shutdown", "name" : "iPad",
                "availabilityError" : "runtime profile not found" }
            ],
            "iOS 12.1" : [
              { "udid" : "U3", "availability" : "(available)", "state" : "Shutting Down", "name" : "Old" }
            ]
          }
        }"#;
        let list = parse_list(json).expect("parses");
        assert_eq!(list.len(), 3);
        let u1 = list.iter().find(|d| d.udid == "U1").expect("U1");
        assert!(u1.available && u1.is_ios() && u1.state == SimState::Booted);
        assert_eq!(u1.os_version.as_deref(), Some("17.4"));
        let u2 = list.iter().find(|d| d.udid == "U2").expect("U2");
        assert!(!u2.available);
        assert_eq!(
            u2.availability_error.as_deref(),
            Some("runtime profile not found")
        );
        let u3 = list.iter().find(|d| d.udid == "U3").expect("U3");
        assert!(u3.available && u3.state == SimState::ShuttingDown);
        assert_eq!(u3.os_version.as_deref(), Some("12.1"));
    }
}
