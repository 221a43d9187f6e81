//! `devicerail replay` through the real binary on the mock: a sign-in
//! recorded through the official client replays with every step matched
//! (its secret from the environment, found nowhere afterwards); on a
//! shared host, a tap on a button a banner then pushed down is healed; a step whose element is gone
//! diverges and stops; `--strict` stops at the first divergence; usage
//! errors exit 2. The recording host is stopped before each replay, which
//! runs its own host in-process on the same data directory.

mod support;

use support::client::LaunchBlocking as _;

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use devicerail_host_testing::host_process::HostProcess;

use serde_json::{Value, json};
use support::Options;
use support::client::{BlockingHost, action};

/// The secret typed in the recording: it must appear nowhere after.
const SECRET: &str = "r3play-Secret-QUUX42";

fn devicerail(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_devicerail"));
    cmd.args(args)
        .env("RUST_LOG", "warn")
        // Never attach to a shared host of the machine running the tests.
        .env("DEVICERAIL_SOCKET", root.join("no-host.sock"))
        .env_remove("DEVICERAIL_SECRET_PASSWORD")
        .env_remove("DEVICERAIL_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run devicerail")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn tap(h: &BlockingHost, x: u32, y: u32) -> Value {
    h.ok_json(
        "device.execute",
        Some(action("tap", json!({ "x": x, "y": y }))),
    )
}

/// Signs in on the mock by coordinates, typing the password as a
/// protected Action, then signs out; returns the Session id.
fn record_sign_in(h: &BlockingHost) -> String {
    let session = h.ready_session();
    h.ok_json("device.observe", None);
    tap(h, 360, 328); // username
    h.ok_json(
        "device.execute",
        Some(action("inputText", json!({ "text": "alice" }))),
    );
    tap(h, 360, 468); // password
    h.ok_json(
        "device.execute",
        Some(action("inputSecret", json!({ "text": SECRET }))),
    );
    // A look at the filled form: the recorded state of the password field.
    h.ok_json("device.observe", None);
    tap(h, 360, 630); // Sign in
    // Sign out appears 300 ms after the home screen.
    std::thread::sleep(std::time::Duration::from_millis(600));
    h.ok_json("device.observe", None);
    let out = tap(h, 360, 1050); // Sign out
    assert_eq!(out["output"]["hit"], "sign-out", "{out}");
    h.ok_json("session.end", None);
    session
}

struct Recorded {
    root: PathBuf,
    _tmp: tempfile::TempDir,
    session: String,
}

impl Recorded {
    fn dirs(&self) -> Vec<String> {
        vec![
            "--plugins-dir".into(),
            self.root.join("plugins").display().to_string(),
            "--data-dir".into(),
            self.root.join("data").display().to_string(),
        ]
    }

    /// `devicerail replay SESSION ARGS --json`; the output and the parsed
    /// summary.
    fn replay(&self, args: &[&str], env: &[(&str, &str)]) -> (Output, Value) {
        let html = self.root.join("replay.html");
        let mut all: Vec<String> = vec!["replay".into(), self.session.clone(), "--json".into()];
        all.extend(args.iter().map(|s| (*s).to_owned()));
        all.extend(self.dirs());
        all.extend(["--out".into(), html.display().to_string()]);
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let o = devicerail(&self.root, &refs, env);
        let summary = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        (o, summary)
    }
}

fn recorded(record: fn(&BlockingHost) -> String) -> Recorded {
    let mut h = BlockingHost::serve(Options::default());
    let tmp = h.keep_root().expect("root");
    let session = record(&h);
    let root = h.root().to_path_buf();
    assert!(h.finish_owned().success());
    Recorded {
        root,
        _tmp: tmp,
        session,
    }
}

/// The replay comparison a report page embeds (its data's `replay`).
fn report_replay(html: &str) -> Value {
    let start = html
        .find("<script type=\"application/json\" id=\"report-data\">")
        .expect("report data");
    let data = &html[start..];
    let data = &data[data.find('>').expect("tag") + 1..];
    let data = &data[..data.find("</script>").expect("end")];
    let v: Value = serde_json::from_str(data).expect("report data is JSON");
    v["replay"].clone()
}

fn verdicts(summary: &Value) -> Vec<(u64, String)> {
    summary["steps"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|st| {
                    (
                        st["number"].as_u64().unwrap_or(0),
                        st["verdict"].as_str().unwrap_or("").to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn assert_no_secret(bytes: &[u8], what: &str) {
    let hay = String::from_utf8_lossy(bytes);
    assert!(!hay.contains(SECRET), "{what} contains the secret");
    use base64::Engine as _;
    for skip in 0..3 {
        let enc = base64::engine::general_purpose::STANDARD.encode(&SECRET.as_bytes()[skip..]);
        assert!(
            !hay.contains(&enc[4..enc.len() - 4]),
            "{what} contains the secret in base64"
        );
    }
}

#[test]
fn a_recorded_sign_in_replays_matched_with_its_secret_from_the_environment() {
    let r = recorded(record_sign_in);
    // Without the secret: a usage error naming the variable, before any
    // device is touched.
    let (o, _) = r.replay(&[], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("DEVICERAIL_SECRET_PASSWORD") && err.contains("step 4"),
        "{}",
        text(&o)
    );

    let (ro, s) = r.replay(&[], &[("DEVICERAIL_SECRET_PASSWORD", SECRET)]);
    assert_eq!(ro.status.code(), Some(0), "{}", text(&ro));
    assert_eq!(
        verdicts(&s),
        (1..=6)
            .map(|n| (n, "matched".to_owned()))
            .collect::<Vec<_>>(),
        "{s:#}"
    );
    assert_eq!(s["replays"], r.session.as_str());
    // The figures the issue asks for: replay time per step against the
    // recorded duration (run with --nocapture to see them).
    for st in s["steps"].as_array().expect("steps") {
        println!(
            "replay overhead: step {} {}: recorded {} ms, replayed Action {} ms, whole step {} ms",
            st["number"], st["action"], st["recordedMs"], st["actionMs"], st["stepMs"]
        );
    }
    assert_eq!(s["steps"][3]["secret"], "DEVICERAIL_SECRET_PASSWORD");
    // The protected step is compared by its field's state, never its value.
    assert_eq!(s["steps"][3]["comparison"]["compared"], true, "{s:#}");
    assert!(
        s["steps"][3]["note"]
            .as_str()
            .is_some_and(|n| n.contains("state the recording left it in")),
        "{s:#}"
    );
    // The sign-in step checked the recorded screen again.
    assert!(
        s["steps"][4]["comparison"]["expected"].as_u64() >= Some(1),
        "{s:#}"
    );
    let new = s["session"].as_str().expect("new session").to_owned();
    assert_ne!(new, r.session);

    // The new Session says what it replays, first thing, and ends with the
    // replay's verdict.
    let bundle = r.root.join("replay.tar");
    let mut args = vec!["bundle", "export", new.as_str(), "--out"];
    let b = bundle.display().to_string();
    args.push(&b);
    let data = r.root.join("data").display().to_string();
    args.extend(["--data-dir", data.as_str()]);
    let o = devicerail(&r.root, &args, &[]);
    assert!(o.status.success(), "{}", text(&o));
    let tar = std::fs::read(&bundle).expect("bundle");
    let events = String::from_utf8_lossy(&tar).into_owned();
    assert!(
        events.contains(&format!("this Session replays Session {}", r.session)),
        "the replay's start names the recorded Session"
    );
    assert!(events.contains("\"status\":\"pass\""), "a passing verdict");
    assert_no_secret(&tar, "the new Session's bundle");
    // Nor its report, the comparison report, the output, or the store.
    let report = r.root.join("new.html").display().to_string();
    let o = devicerail(
        &r.root,
        &[
            "report",
            new.as_str(),
            "--out",
            report.as_str(),
            "--data-dir",
            data.as_str(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secret(
        &std::fs::read(&report).expect("report"),
        "the new Session's report",
    );
    // The comparison is the replay Session's report: `devicerail replay`
    // wrote it, `devicerail report` of the new Session shows the same
    // steps, both sides embedded.
    let html = std::fs::read(r.root.join("replay.html")).expect("comparison report");
    assert_no_secret(&html, "the comparison report");
    let html = String::from_utf8_lossy(&html);
    let compared = report_replay(&html);
    assert_eq!(compared["replays"], r.session.as_str(), "{compared:#}");
    assert_eq!(compared["recordedAvailable"], true);
    let steps = compared["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 6, "{compared:#}");
    assert!(
        steps.iter().all(|st| st["verdict"] == "matched"),
        "{compared:#}"
    );
    for side in ["recordedAfter", "replayedAfter"] {
        let sha = steps[0][side].as_str().expect(side);
        assert!(
            html.contains(&format!("id=\"blob-{sha}\"")),
            "{side} embedded"
        );
    }
    let again = std::fs::read_to_string(&report).expect("report");
    assert_eq!(report_replay(&again)["steps"], compared["steps"]);
    assert_no_secret(&ro.stdout, "the replay's stdout");
    assert_no_secret(&ro.stderr, "the replay's stderr");
    for entry in std::fs::read_dir(r.root.join("data")).expect("data dir") {
        let p = entry.expect("entry").path();
        if p.is_file() {
            assert_no_secret(&std::fs::read(&p).expect("read"), &p.display().to_string());
        }
    }
}

/// A shared host (`serve --listen unix:PATH`) the replay attaches to, so
/// a test can change the device's screen between recording and replay.
struct Shared {
    host: HostProcess,
    socket: PathBuf,
    root: tempfile::TempDir,
}

impl Shared {
    fn start() -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        let plugins = support::plugins_dir_with_mock(root.path());
        let socket = root.path().join("run").join("host.sock");
        let mut cmd = HostProcess::serve_command(
            Path::new(env!("CARGO_BIN_EXE_devicerail")),
            &plugins,
            &root.path().join("data"),
        );
        let mut listen = std::ffi::OsString::from("unix:");
        listen.push(&socket);
        cmd.arg("--listen").arg(listen);
        let host = HostProcess::spawn(cmd);
        let deadline = Instant::now() + Duration::from_secs(20);
        while UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "the host never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { host, socket, root }
    }

    /// Runs `steps` in a Session of a client of its own (which then
    /// closes, releasing the device); returns the Session id.
    fn session(&self, steps: impl FnOnce(&BlockingHost)) -> String {
        let c = BlockingHost::attach(&self.socket, "e2e-replay");
        let id = c.ready_session();
        steps(&c);
        c.ok_json("session.end", None);
        c.finish_owned();
        id
    }

    fn replay(&self, session: &str, args: &[&str]) -> (Output, Value) {
        let root = self.root.path();
        let data = root.join("data").display().to_string();
        let html = root.join("replay.html").display().to_string();
        let mut all = vec![
            "replay",
            session,
            "--json",
            "--data-dir",
            &data,
            "--out",
            &html,
        ];
        all.extend(args);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_devicerail"));
        cmd.args(&all)
            .env("RUST_LOG", "warn")
            .env("DEVICERAIL_SOCKET", &self.socket)
            .env_remove("DEVICERAIL_CONFIG");
        let o = cmd.output().expect("run devicerail");
        let summary = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        (o, summary)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("shared host stderr:\n{}", self.host.stderr());
        }
    }
}

#[test]
fn a_tap_on_a_button_that_moved_is_healed_and_a_gone_one_diverges() {
    let host = Shared::start();
    // Recorded: Save pressed where it was (y 300-400).
    let recorded = host.session(|c| {
        c.ok_json(
            "device.execute",
            Some(action("launchApp", json!({ "appId": "changes" }))),
        );
        c.ok_json("device.observe", None);
        assert_eq!(tap(c, 360, 350)["output"]["hit"], "save");
    });
    // Then a banner pushes Save down to y 420-520.
    host.session(|c| {
        c.ok_json(
            "device.execute",
            Some(action("launchApp", json!({ "appId": "changes" }))),
        );
        assert_eq!(tap(c, 535, 930)["output"]["hit"], "insert-banner");
    });
    let (o, s) = host.replay(&recorded, &["--from", "2"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert_eq!(verdicts(&s), vec![(2, "healed".into())], "{s:#}");
    let heal = &s["steps"][0]["heal"];
    assert_eq!(heal["from"], json!([360.0, 350.0]), "{heal}");
    assert_eq!(heal["to"], json!([360.0, 470.0]), "{heal}");
    assert!(
        s["steps"][0]["element"]
            .as_str()
            .is_some_and(|e| e.contains("Save")),
        "{s:#}"
    );
    let html = std::fs::read_to_string(host.root.path().join("replay.html")).expect("report");
    let step = &report_replay(&html)["steps"][0];
    assert_eq!(step["verdict"], "healed", "{step:#}");
    assert!(
        step["note"]
            .as_str()
            .is_some_and(|n| n.contains("hit at (360, 470) instead of (360, 350)")),
        "both positions: {step:#}"
    );

    // Save removed: the step diverges and the replay stops there; the
    // report shows both screens.
    host.session(|c| {
        assert_eq!(tap(c, 185, 930)["output"]["hit"], "remove-save");
    });
    let (o, s) = host.replay(&recorded, &["--from", "2"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(verdicts(&s), vec![(2, "diverged".into())], "{s:#}");
    assert!(s["stopped"].is_string(), "{s:#}");
    let html = std::fs::read_to_string(host.root.path().join("replay.html")).expect("report");
    let step = &report_replay(&html)["steps"][0];
    assert_eq!(step["verdict"], "diverged", "{step:#}");
    let shot = step["recordedBefore"]
        .as_str()
        .expect("the recorded screen");
    assert!(
        html.contains(&format!("id=\"blob-{shot}\"")),
        "the recorded screen is embedded"
    );
}

#[test]
fn strict_stops_at_the_first_divergence_and_usage_errors_exit_2() {
    let r = recorded(record_sign_in);
    let secret = [("DEVICERAIL_SECRET_PASSWORD", SECRET)];
    // Without typing the username the sign-in stays on the login screen.
    let (o, s) = r.replay(&["--from", "3", "--strict"], &secret);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        verdicts(&s),
        vec![
            (3, "matched".into()),
            (4, "matched".into()),
            (5, "diverged".into())
        ],
        "{s:#}"
    );
    assert!(
        s["stopped"]
            .as_str()
            .is_some_and(|w| w.contains("--strict")),
        "{s:#}"
    );
    assert!(
        s["steps"][2]["comparison"]["differences"]
            .as_array()
            .is_some_and(|d| !d.is_empty()),
        "the difference is reported: {s:#}"
    );
    // Without --strict it goes on until a target is gone (Sign out).
    let (o, s) = r.replay(&["--from", "3"], &secret);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert_eq!(
        verdicts(&s).last(),
        Some(&(6, "diverged".to_owned())),
        "{s:#}"
    );

    for bad in [
        vec!["--from", "9"],
        vec!["--from", "3", "--to", "2"],
        vec!["--device", "no-such-device"],
    ] {
        let (o, _) = r.replay(&bad, &secret);
        assert_eq!(o.status.code(), Some(2), "{bad:?}: {}", text(&o));
    }
    let o = devicerail(&r.root, &["replay", "not-a-session-or-file"], &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn the_exported_python_script_runs_against_a_fresh_host() {
    let r = recorded(record_sign_in);
    let script = r.root.join("replay.py");
    export(&r, "python", &script);
    let text_of = std::fs::read_to_string(&script).expect("script");
    // Identifiers first, a wait before each tap, the secret by name.
    assert!(
        text_of.contains(r#"{"identifier": "username"}"#),
        "{text_of}"
    );
    assert!(text_of.contains("await wait_for("), "{text_of}");
    assert!(text_of.contains("DEVICERAIL_SECRET_PASSWORD"), "{text_of}");
    assert!(
        !text_of.contains("# coordinates"),
        "every tap identified: {text_of}"
    );

    let Some(python) = support::python::venv_python(
        "replay export",
        "the official Python client",
        "devicerail",
        "python3 -m venv .ci/python-venv && .ci/python-venv/bin/pip install devicerail-client==0.3.8",
    ) else {
        return;
    };
    let fresh = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(fresh.path());
    let run = Command::new(python)
        .arg(&script)
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("DEVICERAIL_PLUGINS_DIR", &plugins)
        .env("DEVICERAIL_DATA_DIR", fresh.path().join("data"))
        .env("DEVICERAIL_SECRET_PASSWORD", SECRET)
        .env("RUST_LOG", "warn")
        .env_remove("DEVICERAIL_CONFIG")
        .output()
        .expect("run the script");
    assert!(run.status.success(), "{}", text(&run));
    let out: Value = serde_json::from_slice(&run.stdout).expect("the script prints JSON");
    assert_eq!(out["replays"], r.session.as_str());
    assert_signed_in_and_out(fresh.path(), &out);
}

/// What an exported script must have done on the device, read from the
/// Session it ran (`out`'s): every step succeeded, the mock's home screen
/// came (its Sign out button was pressed, which only signing in shows)
/// and the verdict passed; the secret is nowhere in the record.
fn assert_signed_in_and_out(fresh: &Path, out: &Value) {
    let bundle = fresh.join("b.tar");
    let new = out["session"].as_str().expect("session").to_owned();
    let b = bundle.display().to_string();
    let fresh_data = fresh.join("data").display().to_string();
    let o = devicerail(
        fresh,
        &[
            "bundle",
            "export",
            new.as_str(),
            "--out",
            b.as_str(),
            "--data-dir",
            fresh_data.as_str(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    let tar = std::fs::read(&bundle).expect("bundle");
    let events = String::from_utf8_lossy(&tar);
    assert!(events.contains("\"status\":\"pass\""));
    assert!(events.matches("\"outcome\":\"succeeded\"").count() >= 6);
    assert!(
        events.contains("\"stableNodeId\":\"sign-out\""),
        "the script pressed Sign out, which only a signed-in screen has"
    );
    assert_no_secret(&tar, "the script's Session");
}

/// The program `devicerail export --script rust` writes builds with the
/// dependencies its header names (offline, against this workspace's lock
/// file) and runs against a fresh host with the same effect.
#[test]
fn the_exported_rust_program_builds_and_runs_against_a_fresh_host() {
    let r = recorded(record_sign_in);
    let dir = r.root.join("rust-export");
    std::fs::create_dir_all(dir.join("src")).expect("mkdir");
    export(&r, "rust", &dir.join("src/main.rs"));
    let main = std::fs::read_to_string(dir.join("src/main.rs")).expect("main.rs");
    assert!(main.contains("devicerail-client = \"=0.3.8\""), "{main}");
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"replay-export\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ndevicerail-client = \"=0.3.8\"\nserde_json = \"1\"\n\
         tokio = { version = \"1\", features = [\"macros\", \"rt\"] }\n\
         uuid = { version = \"1\", features = [\"v4\"] }\n\n[workspace]\n",
    )
    .expect("Cargo.toml");
    std::fs::copy(
        support::python::workspace_root().join("Cargo.lock"),
        dir.join("Cargo.lock"),
    )
    .expect("Cargo.lock");
    let build = devicerail_host_testing::cargo_command()
        .args(["build", "--quiet", "--offline", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env_remove("CARGO_MANIFEST_DIR")
        .output()
        .expect("cargo build");
    assert!(build.status.success(), "{}", text(&build));
    let program = devicerail_host_testing::profile_dir().join("replay-export");
    let fresh = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(fresh.path());
    let run = Command::new(&program)
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("DEVICERAIL_PLUGINS_DIR", &plugins)
        .env("DEVICERAIL_DATA_DIR", fresh.path().join("data"))
        .env("DEVICERAIL_SECRET_PASSWORD", SECRET)
        .env("RUST_LOG", "warn")
        .env_remove("DEVICERAIL_CONFIG")
        .output()
        .expect("run the program");
    assert!(run.status.success(), "{}", text(&run));
    let out: Value = serde_json::from_slice(&run.stdout).expect("the program prints JSON");
    assert_eq!(out["replays"], r.session.as_str());
    assert_signed_in_and_out(fresh.path(), &out);
}

/// `devicerail export SESSION --script LANGUAGE --out FILE`.
fn export(r: &Recorded, language: &str, file: &Path) {
    let data = r.root.join("data").display().to_string();
    let out = file.display().to_string();
    let o = devicerail(
        &r.root,
        &[
            "export",
            r.session.as_str(),
            "--script",
            language,
            "--out",
            out.as_str(),
            "--data-dir",
            data.as_str(),
        ],
        &[],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_no_secret(&std::fs::read(file).expect("script"), "the script");
}

#[test]
fn the_exported_typescript_script_compiles_with_tsc_and_runs() {
    let r = recorded(record_sign_in);
    let dir = r.root.join("ts");
    std::fs::create_dir_all(&dir).expect("mkdir");
    export(&r, "typescript", &dir.join("replay.mts"));
    let rust = r.root.join("main.rs");
    export(&r, "rust", &rust);
    let rust = std::fs::read_to_string(&rust).expect("rust script");
    assert!(
        rust.contains("DeviceRailClient::spawn") && rust.contains("\"identifier\":\"username\"")
    );

    let package = support::python::workspace_root().join("schema/typescript");
    let tsc = package.join("node_modules/typescript/bin/tsc");
    if !tsc.exists() {
        assert!(
            std::env::var("DEVICERAIL_REQUIRE_TYPESCRIPT").as_deref() != Ok("1"),
            "run `npm ci` in schema/typescript"
        );
        println!("replay typescript export: SKIPPED: `npm ci` in schema/typescript first");
        return;
    }
    let config = json!({
        "compilerOptions": {
            "strict": true,
            "target": "es2022",
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "types": ["node"],
            "typeRoots": [package.join("node_modules/@types")],
            "paths": { "@devicerail-host/protocol": [package.join("index.d.ts")] },
            "outDir": "js",
            "skipLibCheck": true
        },
        "files": ["replay.mts"]
    });
    std::fs::write(dir.join("tsconfig.json"), config.to_string()).expect("tsconfig");
    let compile = Command::new("node")
        .arg(&tsc)
        .args(["-p", "tsconfig.json", "--pretty", "false"])
        .current_dir(&dir)
        .output()
        .expect("run tsc");
    assert!(compile.status.success(), "tsc: {}", text(&compile));
    let fresh = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(fresh.path());
    let run = Command::new("node")
        .arg(dir.join("js/replay.mjs"))
        .env("DEVICERAIL_BIN", env!("CARGO_BIN_EXE_devicerail"))
        .env("DEVICERAIL_PLUGINS_DIR", &plugins)
        .env("DEVICERAIL_DATA_DIR", fresh.path().join("data"))
        .env("DEVICERAIL_SECRET_PASSWORD", SECRET)
        .env("RUST_LOG", "warn")
        .env_remove("DEVICERAIL_CONFIG")
        .output()
        .expect("run node");
    assert!(run.status.success(), "{}", text(&run));
    let out: Value = serde_json::from_slice(&run.stdout).expect("the script prints JSON");
    assert_eq!(out["replays"], r.session.as_str());
    assert_signed_in_and_out(fresh.path(), &out);
}
