//! What a newcomer does, run as written: the release archive unpacked
//! outside the workspace and used with no cargo on `PATH` (plugins installed
//! by name, `devices`, `doctor`, a browser session, shell completions), the
//! README's first session pasted line by line, and the one line that says
//! how to install plugins wherever there are none.

mod support;

use support::client::Launch as _;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use devicerail_client::SpawnConfig;
use serde_json::{Value, json};
use support::client::{ClientHost, action, hello};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/cli/ is two levels below the workspace root")
        .to_path_buf()
}

/// A user's environment: a fresh home, and `PATH` with the archive's `bin/`
/// and the system's tools but no cargo.
struct User {
    home: tempfile::TempDir,
    bin: PathBuf,
}

impl User {
    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        let home = self.home.path();
        cmd.env_clear()
            .env("HOME", home)
            .env("XDG_CONFIG_HOME", home.join(".config"))
            .env("XDG_DATA_HOME", home.join(".local/share"))
            .env("XDG_RUNTIME_DIR", home.join("run"))
            .env("PATH", format!("{}:/usr/bin:/bin", self.bin.display()))
            .env("LANG", "C.UTF-8")
            .current_dir(home);
        cmd
    }

    fn devicerail(&self, args: &[&str]) -> Output {
        let out = self
            .command("devicerail")
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("devicerail runs from PATH");
        println!(
            "$ devicerail {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// Serves `page` over HTTP on 127.0.0.1 until the process ends.
fn serve_page(page: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut reader = BufReader::new(s.try_clone().expect("clone"));
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
        }
    });
    format!("http://{addr}/")
}

const PAGE: &str = "<!doctype html><html><head><title>Welcome</title></head><body><h1>Hello from a local page</h1><button id=\"go\">Go</button></body></html>";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_release_archive_works_outside_the_workspace() {
    let chromium = Path::new("/usr/bin/chromium");
    assert!(
        chromium.exists(),
        "this test needs Chromium at /usr/bin/chromium (apt-get install chromium)"
    );
    // Build the archive (with the test profile's artifacts, already built).
    let out_dir = tempfile::tempdir().expect("tempdir");
    let dist = Command::new(workspace_root().join("scripts/dist"))
        .args(["--profile", "dev", "--out"])
        .arg(out_dir.path())
        .stderr(Stdio::inherit())
        .output()
        .expect("scripts/dist runs");
    assert!(dist.status.success(), "scripts/dist failed");
    let archive = PathBuf::from(String::from_utf8_lossy(&dist.stdout).trim());
    let size = std::fs::metadata(&archive)
        .expect("the archive exists")
        .len();
    let name = archive
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name")
        .trim_end_matches(".tar.gz")
        .to_owned();
    assert!(
        name.starts_with("devicerail-") && name.contains(std::env::consts::ARCH),
        "{name}"
    );

    // Unpack it into an empty directory outside the workspace.
    let place = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let status = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(place.path())
        .status()
        .expect("tar");
    assert!(status.success());
    let unpacked = place.path().join(&name);
    for file in [
        "bin/devicerail",
        "lib/devicerail/plugins/libdevicerail_plugin_mock.so",
        "lib/devicerail/plugins/libdevicerail_plugin_browser.so",
        "lib/devicerail/plugins/libdevicerail_plugin_android.so",
        "lib/devicerail/plugins/libdevicerail_plugin_ios_simulator.so",
        "share/bash-completion/completions/devicerail",
        "share/zsh/site-functions/_devicerail",
        "share/fish/vendor_completions.d/devicerail.fish",
        "share/man/man1/devicerail.1",
        "README.md",
        "LICENSE",
    ] {
        assert!(unpacked.join(file).is_file(), "the archive holds {file}");
    }
    let user = User {
        home: tempfile::tempdir().expect("home"),
        bin: unpacked.join("bin"),
    };
    std::fs::create_dir_all(user.home.path().join("run")).expect("run dir");
    let which = user
        .command("sh")
        .args(["-c", "command -v cargo || echo none"])
        .output()
        .expect("sh");
    assert_eq!(String::from_utf8_lossy(&which.stdout).trim(), "none");

    // Plugins by name, several at once.
    let out = user.devicerail(&["plugins", "install", "mock", "browser"]);
    assert!(out.status.success());
    let listed = user.devicerail(&["plugins", "list", "--available"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    for name in ["android", "browser", "ios-simulator", "mock"] {
        assert!(text.contains(name), "{text}");
    }
    // Devices, like `adb devices -l`.
    let out = user.devicerail(&["devices", "--json"]);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("devices --json is JSON");
    let ids: Vec<&str> = doc["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .filter_map(|d| d["id"].as_str())
        .collect();
    assert!(ids.contains(&"mock-1"), "{doc}");
    assert!(ids.contains(&"browser-chromium"), "{doc}");
    // Doctor: all good here, the iOS Simulator honestly skipped on Linux.
    let out = user.devicerail(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}");
    if cfg!(target_os = "linux") {
        assert!(
            text.lines()
                .any(|l| l.starts_with("[skip]") && l.contains("ios-simulator")),
            "{text}"
        );
        assert!(!text.contains("[FAIL]"), "{text}");
    }
    let out = user.devicerail(&["doctor", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("doctor --json is JSON");
    assert_eq!(doc["ok"], true);
    // Usage errors exit 2.
    assert_eq!(
        user.devicerail(&["doctor", "--no-such-flag"]).status.code(),
        Some(2)
    );

    // A client session on the browser device observes a local page.
    let url = serve_page(PAGE);
    let home = user.home.path();
    let config = SpawnConfig::new(user.bin.join("devicerail"), hello())
        .arg("serve")
        .env("HOME", home.display().to_string())
        .env(
            "XDG_CONFIG_HOME",
            home.join(".config").display().to_string(),
        )
        .env(
            "XDG_DATA_HOME",
            home.join(".local/share").display().to_string(),
        )
        .env("PATH", format!("{}:/usr/bin:/bin", user.bin.display()));
    let h = ClientHost::start_config(config)
        .await
        .expect("the archive's host starts");
    h.ok(
        "device.select",
        Some(json!({ "deviceId": "browser-chromium" })),
    )
    .await;
    h.ok("device.connect", None).await;
    h.ok("session.start", None).await;
    h.ok(
        "device.execute",
        Some(action("navigate", json!({ "url": url }))),
    )
    .await;
    let obs = h.ok("device.observe", None).await;
    assert!(obs["screenshot"].is_object(), "{obs}");
    let first_observation = started.elapsed();
    let found = h
        .ok(
            "device.execute",
            Some(action(
                "findElement",
                json!({ "selector": { "role": "button", "name": "Go" } }),
            )),
        )
        .await;
    assert!(found["output"]["element"].is_object(), "{found}");
    h.ok("session.end", Some(json!({ "outcome": "completed" })))
        .await;
    h.close().await;

    // The completions load in bash.
    let script = unpacked.join("share/bash-completion/completions/devicerail");
    let out = user
        .command("/bin/bash")
        .arg("-c")
        .arg(format!(
            "source {}; complete -p devicerail",
            script.display()
        ))
        .output()
        .expect("bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("devicerail"));

    println!(
        "newcomer: archive {name}.tar.gz is {size} bytes (this test's dev profile); unpack to first observation {} ms",
        first_observation.as_millis()
    );
}

/// The README's "A first session" lines, exactly as written.
fn readme_first_session() -> Vec<String> {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README");
    let start = readme
        .find("### A first session")
        .expect("README has a first session");
    let block = &readme[start..];
    let open = block.find("```json\n").expect("a json block") + "```json\n".len();
    let close = block[open..].find("```").expect("the block ends") + open;
    block[open..close]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_readme_first_session_runs_as_written() {
    let lines = readme_first_session();
    assert!(lines.len() >= 8, "{lines:?}");
    let root = tempfile::tempdir().expect("tempdir");
    let plugins = support::plugins_dir_with_mock(root.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_devicerail"))
        .arg("serve")
        .arg("--plugins-dir")
        .arg(&plugins)
        .arg("--data-dir")
        .arg(root.path().join("data"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    // One at a time, waiting for each answer, as the README says.
    for line in &lines {
        let request: Value = serde_json::from_str(line).expect("each README line is JSON");
        writeln!(stdin, "{line}").expect("write");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("an answer");
        let answer: Value = serde_json::from_str(&answer).expect("the answer is JSON");
        assert_eq!(answer["id"], request["id"], "{answer}");
        assert!(
            answer.get("error").is_none(),
            "the README's line {line} failed: {answer}"
        );
    }
    drop(stdin);
    let mut rest = String::new();
    let _ = stdout.read_to_string(&mut rest);
    assert!(child.wait().expect("exit").success());
}

#[test]
fn without_plugins_every_command_says_how_to_install_them() {
    let home = tempfile::tempdir().expect("home");
    let empty = home.path().join("plugins");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_devicerail"))
            .args(args)
            .arg("--plugins-dir")
            .arg(&empty)
            .env("HOME", home.path())
            .env("XDG_RUNTIME_DIR", home.path())
            .env_remove("DEVICERAIL_SOCKET")
            .stdin(Stdio::null())
            .output()
            .expect("devicerail");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, _) = run(&["devices"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("devicerail plugins install"), "{stdout}");
    assert!(
        stdout.contains("mock"),
        "the shipped plugins are named: {stdout}"
    );
    let (_, stdout, _) = run(&["devices", "--json"]);
    let doc: Value = serde_json::from_str(&stdout).expect("json");
    assert!(
        doc["hint"]
            .as_str()
            .is_some_and(|h| h.contains("devicerail plugins install")),
        "{doc}"
    );
    // `serve` says it in one line on stderr (stdin is closed at once).
    let data = home.path().join("data");
    let (code, _, stderr) = run(&["serve", "--data-dir", data.to_str().expect("utf-8")]);
    assert_eq!(code, Some(0));
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("devicerail plugins install"))
        .collect();
    assert_eq!(lines.len(), 1, "{stderr}");
}

/// The README's "Drive a real device" steps that can run here: an Android
/// device on an adb server (the device is a protocol-faithful fake behind
/// the real adb server) and a Chromium started by the user with a
/// remote-debugging port, each installed by name and seen by
/// `devicerail devices`.
#[test]
fn an_adb_device_and_an_attached_chromium_show_in_devices() {
    if std::env::var("DEVICERAIL_SKIP_ADB_TESTS").is_ok_and(|v| v == "1") {
        println!("newcomer: DEVICERAIL_SKIP_ADB_TESTS=1: skipped");
        return;
    }
    assert!(
        devicerail_host_android_fake_adb::adb_available(),
        "this test needs the real adb server: apt-get install adb"
    );
    let server = devicerail_host_android_fake_adb::AdbServer::start().expect("adb server");
    let fake = devicerail_host_android_fake_adb::FakeAdbDevice::online().expect("fake device");
    let serial = server.attach(fake.port(), "device").expect("adb connect");
    let home = tempfile::tempdir().expect("home");
    let devicerail = |args: &[&str], env: &[(&str, String)]| -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_devicerail"));
        cmd.args(args)
            .env("HOME", home.path())
            .env("XDG_RUNTIME_DIR", home.path())
            .env_remove("DEVICERAIL_PLUGINS_DIR")
            .env_remove("DEVICERAIL_SOCKET")
            .env_remove("DEVICERAIL_BROWSER_ENDPOINT")
            .stdin(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("devicerail");
        println!(
            "$ devicerail {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    // Installed by name from a checkout: the drivers built next to the binary.
    assert!(
        devicerail(&["plugins", "install", "android", "browser"], &[])
            .status
            .success()
    );
    let adb = [("ADB_SERVER_SOCKET", server.socket_spec())];
    let out = devicerail(&["devices", "--json"], &adb);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    let phone = doc["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .find(|d| d["id"] == serial.as_str())
        .unwrap_or_else(|| panic!("the adb device {serial} is listed: {doc}"))
        .clone();
    assert_eq!(phone["platform"]["kind"], "android", "{phone}");
    assert_eq!(phone["plugin"], "android");
    let out = devicerail(&["devices"], &adb);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(&serial),
        "the human listing names the serial"
    );

    // A Chromium the user started with a remote-debugging port.
    let profile = tempfile::tempdir().expect("profile");
    let mut chromium = Command::new("/usr/bin/chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("about:blank")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let port_file = profile.path().join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(30);
    let port = loop {
        if let Some(port) = std::fs::read_to_string(&port_file)
            .ok()
            .and_then(|t| t.lines().next().map(str::to_owned))
            .filter(|p| !p.is_empty())
        {
            break port;
        }
        assert!(
            Instant::now() < deadline,
            "chromium wrote no DevToolsActivePort"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let endpoint = [(
        "DEVICERAIL_BROWSER_ENDPOINT",
        format!("http://127.0.0.1:{port}"),
    )];
    let out = devicerail(&["devices", "--json"], &endpoint);
    let _ = chromium.kill();
    let _ = chromium.wait();
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        doc["devices"]
            .as_array()
            .expect("devices")
            .iter()
            .any(|d| d["id"] == "browser-remote" && d["platform"]["kind"] == "web"),
        "{doc}"
    );
}
