//! The fake `xcrun`: the `simctl` subcommands the driver uses, with real
//! output shapes, messages and exit codes, over a [`FakeSimState`] file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::render::{self, Fill};
use crate::sim_state::{
    FAKE_APP, FakeSimDevice, FakeSimState, SAFARI, SIBLING_STATE_FILE, SPRINGBOARD, STATE_ENV,
    now_ms, record_call,
};

/// What one invocation produced.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The exit code (simctl's own codes, such as 148 for an unknown
    /// device).
    pub code: i32,
    /// What to write to standard output.
    pub stdout: Vec<u8>,
    /// What to write to standard error.
    pub stderr: Vec<u8>,
}

impl Outcome {
    fn ok(stdout: impl Into<Vec<u8>>) -> Self {
        Self {
            code: 0,
            stdout: stdout.into(),
            stderr: Vec::new(),
        }
    }

    fn fail(code: i32, stderr: impl AsRef<str>) -> Self {
        Self {
            code,
            stdout: Vec::new(),
            stderr: format!("{}\n", stderr.as_ref()).into_bytes(),
        }
    }

    fn with_stderr(mut self, text: impl AsRef<str>) -> Self {
        self.stderr = format!("{}\n", text.as_ref()).into_bytes();
        self
    }
}

/// The state file: `$FAKE_XCRUN_STATE`, else `fake-simctl-state.json`
/// next to the path the fake was invoked as.
pub(crate) fn state_path(argv0: &Path, env: Option<PathBuf>) -> PathBuf {
    env.unwrap_or_else(|| {
        argv0
            .parent()
            .unwrap_or_else(|| Path::new("."))
            .join(SIBLING_STATE_FILE)
    })
}

/// Entry point of the binary: records the call and runs it.
pub fn main_with(argv0: &Path, args: &[String]) -> Outcome {
    let path = state_path(argv0, std::env::var_os(STATE_ENV).map(PathBuf::from));
    let _ = record_call(&path, args);
    run(&path, args)
}

fn not_booted(state: &str) -> Outcome {
    Outcome::fail(
        149,
        format!(
            "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to lookup in current state: {state}"
        ),
    )
}

fn invalid_device(udid: &str) -> Outcome {
    Outcome::fail(148, format!("Invalid device: {udid}"))
}

fn usage() -> Outcome {
    Outcome::fail(
        64,
        "usage: simctl [--set <path>] [--profiles <path>] <subcommand> ...\n(fake: list, boot, bootstatus, shutdown, io, launch, openurl)",
    )
}

/// Resolves `booted` or a UDID to a device index.
fn find(state: &FakeSimState, udid: &str) -> Option<usize> {
    if udid == "booted" {
        state.devices.iter().position(|d| d.is_booted())
    } else {
        state.devices.iter().position(|d| d.udid == udid)
    }
}

/// Runs one invocation against the state file at `path`.
pub(crate) fn run(path: &Path, args: &[String]) -> Outcome {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Some((&"simctl", rest)) = args.split_first() else {
        return Outcome::fail(
            1,
            format!(
                "xcrun: error: unable to find utility \"{}\", not a developer tool or in PATH",
                args.first().copied().unwrap_or("")
            ),
        );
    };
    let mut state = match FakeSimState::load(path) {
        Ok(s) => s,
        Err(e) => {
            return Outcome::fail(
                1,
                format!("fake-xcrun: cannot read {}: {e}", path.display()),
            );
        }
    };
    let Some((&sub, rest)) = rest.split_first() else {
        return usage();
    };
    if state.fail.iter().any(|f| f == sub) {
        return Outcome::fail(1, format!("fake-xcrun: injected failure of `simctl {sub}`"));
    }
    let outcome = match sub {
        "help" => {
            Outcome::ok("usage: simctl [--set <path>] [--profiles <path>] <subcommand> ...\n")
        }
        "list" => list(&state, rest),
        "boot" => boot(&mut state, rest),
        "bootstatus" => return bootstatus(path, rest),
        "shutdown" => shutdown(&mut state, rest),
        "io" => io(&state, path, rest),
        "launch" => launch(&mut state, rest),
        "openurl" => openurl(&mut state, rest),
        _ => usage(),
    };
    if outcome.code == 0
        && matches!(sub, "boot" | "shutdown" | "launch" | "openurl")
        && let Err(e) = state.save(path)
    {
        return Outcome::fail(
            1,
            format!("fake-xcrun: cannot write {}: {e}", path.display()),
        );
    }
    outcome
}

fn device_json(d: &FakeSimDevice) -> Value {
    let mut v = json!({
        "lastBootedAt": "2024-03-20T10:11:12Z",
        "dataPath": format!("/Users/fake/Library/Developer/CoreSimulator/Devices/{}/data", d.udid),
        "dataPathSize": 18_092_032,
        "logPath": format!("/Users/fake/Library/Logs/CoreSimulator/{}", d.udid),
        "udid": d.udid,
        "isAvailable": d.is_available,
        "logPathSize": 65_536,
        "deviceTypeIdentifier": d.device_type,
        "state": d.state,
        "name": d.name,
    });
    if let (Some(err), Some(obj)) = (&d.availability_error, v.as_object_mut()) {
        obj.insert("availabilityError".into(), json!(err));
    }
    v
}

fn list(state: &FakeSimState, rest: &[&str]) -> Outcome {
    let json_flag = rest.iter().any(|a| *a == "--json" || *a == "-j");
    let words: Vec<&str> = rest
        .iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !json_flag {
        let mut text = String::from("== Devices ==\n");
        for d in &state.devices {
            text.push_str(&format!("    {} ({}) ({})\n", d.name, d.udid, d.state));
        }
        return Outcome::ok(text);
    }
    let available_only = words.contains(&"available");
    match words.first() {
        None | Some(&"devices") => {}
        Some(other) => {
            return Outcome::fail(
                1,
                format!("fake-xcrun: list {other} is not faked (only devices)"),
            );
        }
    }
    let mut by_runtime: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for d in &state.devices {
        if available_only && !d.is_available {
            continue;
        }
        by_runtime
            .entry(d.runtime.clone())
            .or_default()
            .push(device_json(d));
    }
    let body = json!({ "devices": by_runtime });
    let mut out = serde_json::to_vec_pretty(&body).unwrap_or_default();
    out.push(b'\n');
    Outcome::ok(out)
}

fn boot(state: &mut FakeSimState, rest: &[&str]) -> Outcome {
    let Some(udid) = rest.first() else {
        return usage();
    };
    let Some(i) = find(state, udid) else {
        return invalid_device(udid);
    };
    let d = &mut state.devices[i];
    if !d.is_available {
        return Outcome::fail(
            1,
            "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=401):\nUnable to boot device because the runtime is unavailable",
        );
    }
    if d.state != "Shutdown" {
        return Outcome::fail(
            149,
            format!(
                "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to boot device in current state: {}",
                d.state
            ),
        );
    }
    d.state = "Booting".into();
    d.boot_done_at_ms = Some(now_ms() + d.boot_ms);
    Outcome::ok("")
}

/// `bootstatus <udid> [-b]`: waits (re-reading the file) until booted.
fn bootstatus(path: &Path, rest: &[&str]) -> Outcome {
    let Some(udid) = rest.first().copied() else {
        return usage();
    };
    let boot_if_needed = rest.contains(&"-b");
    let mut state = match FakeSimState::load(path) {
        Ok(s) => s,
        Err(e) => return Outcome::fail(1, e.to_string()),
    };
    let Some(i) = find(&state, udid) else {
        return invalid_device(udid);
    };
    let name = state.devices[i].name.clone();
    let real_udid = state.devices[i].udid.clone();
    let mut text = format!("Monitoring boot status for {name} ({real_udid}).\n");
    if state.devices[i].is_booted() {
        text.push_str("Device already booted, nothing to do.\n");
        return Outcome::ok(text);
    }
    if state.devices[i].state == "Shutdown" {
        if !boot_if_needed {
            return Outcome::fail(
                1,
                format!("Unable to monitor boot status: {name} is not booted (use -b to boot it)"),
            );
        }
        let booted = boot(&mut state, &[real_udid.as_str()]);
        if booted.code != 0 {
            return booted;
        }
        if let Err(e) = state.save(path) {
            return Outcome::fail(1, e.to_string());
        }
    }
    let started = Instant::now();
    let end = started + Duration::from_secs(60);
    loop {
        match FakeSimState::load(path) {
            Ok(s) if s.device(&real_udid).is_some_and(FakeSimDevice::is_booted) => {
                // Persist the settled state so later readers agree.
                let _ = s.save(path);
                text.push_str(&format!(
                    "Device booted in {:.2} seconds\n",
                    started.elapsed().as_secs_f64()
                ));
                return Outcome::ok(text);
            }
            Ok(_) => {}
            Err(e) => return Outcome::fail(1, e.to_string()),
        }
        if Instant::now() >= end {
            return Outcome::fail(1, "fake-xcrun: the boot did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn shutdown(state: &mut FakeSimState, rest: &[&str]) -> Outcome {
    let Some(udid) = rest.first() else {
        return usage();
    };
    let Some(i) = find(state, udid) else {
        return invalid_device(udid);
    };
    let d = &mut state.devices[i];
    if d.state == "Shutdown" {
        return Outcome::fail(
            149,
            "An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405):\nUnable to shutdown device in current state: Shutdown",
        );
    }
    d.state = "Shutdown".into();
    d.foreground_app = None;
    d.revision += 1;
    Outcome::ok("")
}

/// A picture of what the fake simulator shows: a status bar and a band
/// whose colour depends on the app in front.
pub(crate) fn screen_png(d: &FakeSimDevice) -> Vec<u8> {
    let (w, h) = (d.screen_width, d.screen_height);
    let app_color = match d.foreground_app.as_deref() {
        Some(FAKE_APP) => 2,
        Some(SAFARI) => 7,
        Some(SPRINGBOARD) => 5,
        _ => 4,
    };
    render::png(
        w,
        h,
        &[
            Fill {
                x: 0,
                y: 0,
                width: w,
                height: h / 30,
                color: 3,
            },
            Fill {
                x: w / 10,
                y: h / 5,
                width: w * 8 / 10,
                height: h / 10,
                color: app_color,
            },
            Fill {
                x: w / 10,
                y: h / 2,
                width: w * 8 / 10,
                height: h / 20,
                color: 1,
            },
        ],
    )
}

/// Screenshot PNGs are cached next to the state per device revision.
fn cached_png(path: &Path, d: &FakeSimDevice) -> Vec<u8> {
    let cache = path.with_file_name(format!(
        "{}.shot-{}-{}-{}x{}.png",
        path.file_name().unwrap_or_default().to_string_lossy(),
        d.udid,
        d.revision,
        d.screen_width,
        d.screen_height
    ));
    if let Ok(bytes) = std::fs::read(&cache) {
        return bytes;
    }
    let png = screen_png(d);
    let _ = std::fs::write(&cache, &png);
    png
}

fn io(state: &FakeSimState, path: &Path, rest: &[&str]) -> Outcome {
    let (Some(udid), Some(&"screenshot")) = (rest.first(), rest.get(1)) else {
        return Outcome::fail(1, "fake-xcrun: only `io <device> screenshot` is faked");
    };
    let Some(i) = find(state, udid) else {
        return invalid_device(udid);
    };
    let d = &state.devices[i];
    if !d.is_booted() {
        return not_booted(&d.state);
    }
    let mut file = None;
    for a in &rest[2..] {
        if let Some(t) = a.strip_prefix("--type=") {
            if t != "png" {
                return Outcome::fail(1, format!("fake-xcrun: --type={t} is not faked (only png)"));
            }
        } else if a.starts_with("--") {
            // --display=, --mask=: accepted and ignored.
        } else {
            file = Some(*a);
        }
    }
    let Some(file) = file else {
        return Outcome::fail(1, "Missing file or URL argument");
    };
    let png = cached_png(path, d);
    if file == "-" {
        return Outcome::ok(png);
    }
    match std::fs::write(file, &png) {
        Ok(()) => Outcome::ok("").with_stderr(format!(
            "Detected file type 'PNG' from extension\nWrote screenshot to: {file}"
        )),
        Err(e) => Outcome::fail(1, format!("Error writing screenshot to {file}: {e}")),
    }
}

fn launch(state: &mut FakeSimState, rest: &[&str]) -> Outcome {
    let args: Vec<&str> = rest
        .iter()
        .copied()
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (Some(udid), Some(bundle)) = (args.first(), args.get(1)) else {
        return usage();
    };
    let Some(i) = find(state, udid) else {
        return invalid_device(udid);
    };
    let d = &mut state.devices[i];
    if !d.is_booted() {
        return not_booted(&d.state);
    }
    if !d.installed_apps.iter().any(|a| a == bundle) {
        return Outcome::fail(
            4,
            format!(
                "An error was encountered processing the command (domain=FBSOpenApplicationServiceErrorDomain, code=4):\nThe request to open \"{bundle}\" failed."
            ),
        );
    }
    d.foreground_app = Some((*bundle).to_owned());
    d.revision += 1;
    let pid = 40_000 + (bundle.len() as u32) * 7;
    Outcome::ok(format!("{bundle}: {pid}\n"))
}

fn openurl(state: &mut FakeSimState, rest: &[&str]) -> Outcome {
    let (Some(udid), Some(url)) = (rest.first(), rest.get(1)) else {
        return usage();
    };
    let Some(i) = find(state, udid) else {
        return invalid_device(udid);
    };
    let d = &mut state.devices[i];
    if !d.is_booted() {
        return not_booted(&d.state);
    }
    let scheme = url.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    let app = match scheme.as_deref() {
        Some("http" | "https") => SAFARI,
        Some("fakeapp") => FAKE_APP,
        _ => {
            return Outcome::fail(
                1,
                "An error was encountered processing the command (domain=NSOSStatusErrorDomain, code=-10814):\nSimulator device failed to open the URL.",
            );
        }
    };
    d.foreground_app = Some(app.to_owned());
    d.last_url = Some((*url).to_owned());
    d.revision += 1;
    Outcome::ok("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim_state::{IPHONE15_UDID, SE_UDID};

    fn scenario() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let path = dir.path().join("state.json");
        FakeSimState::scenario().save(&path).expect("saves");
        (dir, path)
    }

    fn sv(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn list_has_the_real_shape() {
        let (_d, path) = scenario();
        let out = run(&path, &sv(&["simctl", "list", "devices", "--json"]));
        assert_eq!(out.code, 0);
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        let ios = &v["devices"]["com.apple.CoreSimulator.SimRuntime.iOS-17-4"];
        assert_eq!(ios.as_array().map(Vec::len), Some(2));
        assert_eq!(ios[0]["state"], "Booted");
        assert!(v["devices"]["com.apple.CoreSimulator.SimRuntime.watchOS-10-4"].is_array());
    }

    #[test]
    fn boot_then_bootstatus() {
        let (_d, path) = scenario();
        let again = run(&path, &sv(&["simctl", "boot", SE_UDID]));
        assert_eq!(again.code, 149);
        assert!(String::from_utf8_lossy(&again.stderr).contains("current state: Booted"));
        assert_eq!(run(&path, &sv(&["simctl", "boot", IPHONE15_UDID])).code, 0);
        let st = run(&path, &sv(&["simctl", "bootstatus", IPHONE15_UDID, "-b"]));
        assert_eq!(st.code, 0, "{}", String::from_utf8_lossy(&st.stderr));
        let s = FakeSimState::load(&path).expect("loads");
        assert!(
            s.device(IPHONE15_UDID)
                .is_some_and(FakeSimDevice::is_booted)
        );
    }

    #[test]
    fn screenshots_launches_and_urls() {
        let (dir, path) = scenario();
        let file = dir.path().join("shot.png");
        let file_s = file.display().to_string();
        let out = run(
            &path,
            &sv(&["simctl", "io", SE_UDID, "screenshot", "--type=png", &file_s]),
        );
        assert_eq!(out.code, 0);
        let png = std::fs::read(&file).expect("written");
        assert_eq!(&png[1..4], b"PNG");
        let off = run(
            &path,
            &sv(&["simctl", "io", IPHONE15_UDID, "screenshot", &file_s]),
        );
        assert_eq!(off.code, 149);
        let l = run(&path, &sv(&["simctl", "launch", SE_UDID, SAFARI]));
        assert_eq!(l.code, 0);
        assert!(String::from_utf8_lossy(&l.stdout).starts_with("com.apple.mobilesafari: "));
        assert_eq!(
            run(&path, &sv(&["simctl", "launch", SE_UDID, "com.x.none"])).code,
            4
        );
        assert_eq!(
            run(
                &path,
                &sv(&["simctl", "openurl", SE_UDID, "https://example.com"])
            )
            .code,
            0
        );
        let s = FakeSimState::load(&path).expect("loads");
        let d = s.device(SE_UDID).expect("SE");
        assert_eq!(d.foreground_app.as_deref(), Some(SAFARI));
        assert_eq!(d.last_url.as_deref(), Some("https://example.com"));
    }
}
