//! The configuration file end to end, through the real binary: a file
//! that configures two browsers, a private adb server and the host itself
//! is honoured; each error names file, line and key (a bad plugin table
//! refuses only that plugin); `config show` tells where each value came
//! from and `doctor` includes it; and installing or listing the Android
//! plugin with no adb server succeeds without starting one.

mod support;

use support::client::Launch as _;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use devicerail_host_android_fake_adb::{AdbServer, FakeAdbDevice};
use devicerail_host_testing::build_workspace_plugin;
use serde_json::{Value, json};
use support::Options;
use support::client::{ClientHost, hello};

struct Libraries {
    mock: PathBuf,
    browser: PathBuf,
    android: PathBuf,
    ios: PathBuf,
}

fn libraries() -> &'static Libraries {
    static LIBS: OnceLock<Libraries> = OnceLock::new();
    LIBS.get_or_init(|| Libraries {
        mock: build_workspace_plugin("devicerail-host-plugin-mock", "mock"),
        browser: build_workspace_plugin("devicerail-host-plugin-browser", "browser"),
        android: build_workspace_plugin("devicerail-host-plugin-android", "android"),
        ios: build_workspace_plugin("devicerail-host-plugin-ios-simulator", "ios-simulator"),
    })
}

/// A 0700 directory under `root` holding copies of `libs`.
fn plugins_dir(root: &Path, libs: &[&Path]) -> PathBuf {
    let dir = root.join("plugins");
    fs::create_dir_all(&dir).expect("mkdir");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("chmod");
    for lib in libs {
        let dst = dir.join(lib.file_name().expect("a file name"));
        fs::copy(lib, &dst).expect("copy");
        fs::set_permissions(&dst, fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    dir
}

/// `devicerail` with nothing of the machine's configuration: default
/// locations under `root`, no configuring variables.
fn devicerail(root: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_devicerail"));
    cmd.env("XDG_DATA_HOME", root.join("xdg"));
    cmd.env("XDG_CONFIG_HOME", root.join("config"));
    for var in [
        "DEVICERAIL_CONFIG",
        "DEVICERAIL_PLUGINS_DIR",
        "DEVICERAIL_DATA_DIR",
        "DEVICERAIL_SCREENSHOT_POLICY",
        "RUST_LOG",
        "ADB_SERVER_SOCKET",
        "ANDROID_ADB_SERVER_PORT",
        "DEVICERAIL_ANDROID_START_SERVER",
        "DEVICERAIL_MOCK_DEVICES",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().expect("run devicerail");
    println!(
        "$ {cmd:?}\n[exit {:?}]\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A private adb server, or `None` with `DEVICERAIL_SKIP_ADB_TESTS=1`.
fn adb_server() -> Option<AdbServer> {
    if std::env::var("DEVICERAIL_SKIP_ADB_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("DEVICERAIL_SKIP_ADB_TESTS=1: skipping a test that needs adb");
        return None;
    }
    assert!(
        devicerail_host_android_fake_adb::adb_available(),
        "this test needs the real adb server: apt-get install adb (or set DEVICERAIL_SKIP_ADB_TESTS=1)"
    );
    Some(AdbServer::start().expect("a private adb server starts"))
}

fn ids(list: &Value) -> Vec<String> {
    let mut ids: Vec<String> = list["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .map(|d| d["id"].as_str().expect("id").to_owned())
        .collect();
    ids.sort();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_configures_two_browsers_a_private_adb_server_and_the_host() {
    let Some(server) = adb_server() else {
        return;
    };
    let fake = FakeAdbDevice::online().expect("fake device");
    let serial = server.attach(fake.port(), "device").expect("attached");
    let libs = libraries();
    let tmp = tempfile::tempdir().expect("tempdir");
    plugins_dir(tmp.path(), &[&libs.browser, &libs.android]);
    let config = format!(
        r#"# Both browsers and the private adb server from one file.
[host]
screenshotPolicy = "omit"

[plugins.android]
adbServer = "{spec}"
startServer = false
commandTimeoutMs = 15000

[[plugins.browser.browsers]]
id = "chrome-a"
name = "Profile A"
viewportWidth = 640
viewportHeight = 480

[[plugins.browser.browsers]]
id = "chrome-b"
name = "Profile B"
viewportWidth = 1024
viewportHeight = 768
"#,
        spec = server.socket_spec()
    );
    let host = ClientHost::start_owned(
        Options {
            root: Some(tmp.path().to_path_buf()),
            config: Some(config),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts");
    let list = host.ok("devices.list", None).await;
    let mut expected = vec!["chrome-a".to_owned(), "chrome-b".to_owned(), serial.clone()];
    expected.sort();
    assert_eq!(ids(&list), expected, "{list}");
    let name_of = |id: &str| {
        list["devices"]
            .as_array()
            .and_then(|d| d.iter().find(|d| d["id"] == id))
            .map(|d| d["name"].clone())
    };
    assert_eq!(name_of("chrome-a"), Some(json!("Profile A")));
    assert_eq!(name_of("chrome-b"), Some(json!("Profile B")));

    // The second browser runs with its own viewport; the host's screenshot
    // policy came from the file too.
    host.ok("device.select", Some(json!({ "deviceId": "chrome-b" })))
        .await;
    host.ok("device.connect", None).await;
    host.ok("session.start", None).await;
    let obs = host.ok("device.observe", None).await;
    assert_eq!(obs["viewport"]["width"], 1024, "{obs}");
    assert_eq!(obs["viewport"]["height"], 768, "{obs}");
    assert_eq!(obs["screenshotOmission"], "policy", "{obs}");
    host.ok("session.end", Some(json!({ "outcome": "completed" })))
        .await;
    host.ok("device.disconnect", None).await;

    // The Android device came through the private server.
    host.ok("device.select", Some(json!({ "deviceId": serial })))
        .await;
    assert_eq!(host.ok("device.connect", None).await["connected"], true);
    host.ok("device.disconnect", None).await;
    assert_eq!(host.finish().await.code(), Some(0));
}

/// Serve with `config` as the file; it must refuse to start. Returns stderr.
fn refused_at_start(config: &str) -> (PathBuf, String) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = plugins_dir(tmp.path(), &[&libraries().mock]);
    let file = tmp.path().join("devicerail.toml");
    fs::write(&file, config).expect("write");
    let out = run(devicerail(tmp.path())
        .arg("serve")
        .arg("--config")
        .arg(&file)
        .arg("--plugins-dir")
        .arg(&dir)
        .arg("--data-dir")
        .arg(tmp.path().join("data")));
    assert_eq!(out.status.code(), Some(1), "must refuse to start");
    assert!(out.stdout.is_empty(), "nothing on the protocol stream");
    assert!(
        !tmp.path().join("data").exists(),
        "refused before touching the data directory"
    );
    (file, text(&out.stderr))
}

#[test]
fn unknown_keys_wrong_types_and_bad_syntax_are_refused_at_start_with_file_line_and_key() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[host]\ndataDir = \"d\"\npluginDir = \"p\"\n",
            ":3: host.pluginDir: ",
            "unknown field `pluginDir`, expected one of `dataDir`, `pluginsDir`, `screenshotPolicy`, `logFilter`, `afterActionTree`",
        ),
        (
            "[host]\n\nscreenshotPolicy = true\n",
            ":3: host.screenshotPolicy: ",
            "wanted string or table",
        ),
        (
            "[host]\nscreenshotPolicy = \"sometimes\"\n",
            ":2: host.screenshotPolicy: ",
            "unknown variant `sometimes`, expected `capture` or `omit`",
        ),
        (
            "[host]\ndataDir = 7\n",
            ":2: host.dataDir: ",
            "invalid type: integer `7`",
        ),
        (
            "[host]\nlogFilter = \"info,[\"\n",
            ":2: host.logFilter: ",
            "",
        ),
        (
            "\n\n[servers]\nport = 1\n",
            ":3: servers: ",
            "unknown field `servers`",
        ),
        ("[host\n", ":1: ", ""),
        (
            "[plugins.Mock]\ndevices = 2\n",
            ":1: plugins.Mock: ",
            "not a plugin id",
        ),
    ];
    let mut agreed = 0;
    for (config, located, message) in cases {
        let (file, stderr) = refused_at_start(config);
        let expected = format!("devicerail serve: {}{located}{message}", file.display());
        assert!(
            stderr.contains(&expected),
            "for {config:?} expected {expected:?} in:\n{stderr}"
        );
        agreed += 1;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing = tmp.path().join("missing.toml");
    let out = run(devicerail(tmp.path())
        .args(["config", "show"])
        .env("DEVICERAIL_CONFIG", &missing));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains(&format!(
            "cannot read the configuration file {} (named by environment DEVICERAIL_CONFIG)",
            missing.display()
        )),
        "{}",
        text(&out.stderr)
    );
    println!("configuration errors: {agreed}/{} located", cases.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_plugin_table_refuses_that_plugin_only_with_its_line_in_list_doctor_and_serve() {
    let libs = libraries();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = plugins_dir(tmp.path(), &[&libs.mock, &libs.browser]);
    let file = tmp.path().join("devicerail.toml");
    let config = "[host]\nscreenshotPolicy = \"omit\"\n\n[plugins.mock]\ndevices = 2\nfautls = true\n\n[[plugins.browser.browsers]]\nid = \"b-1\"\n\n[plugins.ios-simulator]\nboot = true\n";
    fs::write(&file, config).expect("write");
    let with = |cmd: &mut Command| {
        cmd.arg("--config")
            .arg(&file)
            .arg("--plugins-dir")
            .arg(&dir)
            .env("DEVICERAIL_DATA_DIR", tmp.path().join("data"));
    };
    let expected_reason = format!(
        "plugin initialization failed: the driver failed to initialize: setting \"fautls\" is not a known setting (known: devices, faults, feedRows) (at {}:6, key plugins.mock.fautls)",
        file.display()
    );

    let mut cmd = devicerail(tmp.path());
    cmd.args(["plugins", "list", "--json"]);
    with(&mut cmd);
    let out = run(&mut cmd);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let by_id = |id: &str| {
        doc["plugins"]
            .as_array()
            .and_then(|p| p.iter().find(|p| p["id"] == id))
            .cloned()
            .unwrap_or_else(|| panic!("no {id} in {doc}"))
    };
    let mock = by_id("mock");
    assert_eq!(mock["status"], "refused");
    assert_eq!(mock["reason"], expected_reason.as_str());
    let browser = by_id("browser");
    assert_eq!(browser["status"], "loaded");
    assert_eq!(browser["deviceStatus"], "listed");
    assert_eq!(browser["devices"][0]["id"], "b-1");

    let mut cmd = devicerail(tmp.path());
    cmd.args(["doctor", "--json"]);
    with(&mut cmd);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(1), "a refused plugin fails doctor");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let check = |name: &str| {
        doc["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == name))
            .cloned()
            .unwrap_or_else(|| panic!("no check {name} in {doc}"))
    };
    let refused = check(&format!("plugin file {}", "libdevicerail_plugin_mock.so"));
    assert_eq!(refused["status"], "fail");
    assert_eq!(refused["detail"], expected_reason.as_str());
    assert_eq!(check("plugin browser")["status"], "ok");
    assert_eq!(check("configuration file")["status"], "ok");
    let policy = check("setting host.screenshotPolicy");
    assert_eq!(
        policy["detail"],
        format!("omit (file {}:2)", file.display()).as_str()
    );
    let unused = check("settings plugins.ios-simulator");
    assert_eq!(unused["status"], "warn");

    // serve: the host starts, without the mock.
    let host = ClientHost::start_owned(
        Options {
            root: Some(tmp.path().to_path_buf()),
            config: Some(config.to_owned()),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts");
    assert_eq!(
        ids(&host.ok("devices.list", None).await),
        vec!["b-1".to_owned()]
    );
    let status = host.finish().await;
    assert_eq!(status.code(), Some(0));

    // A plugin value that is not a table refuses that plugin the same way.
    fs::write(
        &file,
        "[plugins]\nmock = 3\n\n[[plugins.browser.browsers]]\nid = \"b-1\"\n",
    )
    .expect("write");
    let mut cmd = devicerail(tmp.path());
    cmd.args(["plugins", "list"]);
    with(&mut cmd);
    let out = run(&mut cmd);
    assert!(out.status.success());
    let listed = text(&out.stdout);
    assert!(
        listed.contains(&format!(
            "reason: bad configuration table: {}:2: plugins.mock: must be a table of the plugin's settings, not an integer",
            file.display()
        )),
        "{listed}"
    );
    assert!(listed.contains("devices: b-1"), "{listed}");
}

#[test]
fn config_show_tells_where_each_value_came_from() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // The default location: `$XDG_CONFIG_HOME/devicerail/config.toml`.
    let base = tmp.path().join("config/devicerail");
    fs::create_dir_all(&base).expect("mkdir");
    let file = base.join("config.toml");
    fs::write(
        &file,
        "[host]\npluginsDir = \"drivers\"\ndataDir = \"/from/file\"\nscreenshotPolicy = \"omit\"\nlogFilter = \"debug\"\n\n[plugins.android]\nstartServer = false\n",
    )
    .expect("write");
    let out = run(devicerail(tmp.path())
        .args(["config", "show", "--json", "--data-dir", "/from/flag"])
        .env("DEVICERAIL_SCREENSHOT_POLICY", "capture"));
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        doc["file"],
        json!({ "path": file, "chosenBy": { "kind": "default" }, "present": true })
    );
    let from_file = |line: usize| json!({ "kind": "file", "path": file, "line": line });
    assert_eq!(
        doc["host"]["pluginsDir"],
        json!({ "value": base.join("drivers"), "source": from_file(2) })
    );
    assert_eq!(
        doc["host"]["dataDir"],
        json!({ "value": "/from/flag", "source": { "kind": "commandLine", "flag": "--data-dir" } })
    );
    assert_eq!(
        doc["host"]["screenshotPolicy"],
        json!({ "value": "capture", "source": { "kind": "environment", "var": "DEVICERAIL_SCREENSHOT_POLICY" } })
    );
    assert_eq!(
        doc["host"]["logFilter"],
        json!({ "value": "debug", "source": from_file(5) })
    );
    assert_eq!(
        doc["plugins"]["android"]["settings"]["startServer"],
        json!({ "value": false, "source": from_file(8) })
    );

    // The text form, and `--config` winning over the default location.
    let other = tmp.path().join("other.toml");
    fs::write(&other, "").expect("write");
    let out = run(devicerail(tmp.path()).args([
        "--config",
        other.to_str().expect("utf-8"),
        "config",
        "show",
    ]));
    assert!(out.status.success());
    let shown = text(&out.stdout);
    assert!(
        shown.starts_with(&format!(
            "configuration file: {} (named by command line --config)\n",
            other.display()
        )),
        "{shown}"
    );
    assert!(
        shown.contains("host.screenshotPolicy  capture  (default)"),
        "{shown}"
    );

    // A file only at the old location (beside the data directory) is
    // still read, and `config show` says where it should move.
    let old_base = tmp.path().join("xdg/devicerail");
    fs::create_dir_all(&old_base).expect("mkdir");
    let old = old_base.join("config.toml");
    fs::rename(&file, &old).expect("move to the old location");
    let out = run(devicerail(tmp.path()).args(["config", "show", "--json"]));
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        doc["file"],
        json!({ "path": old, "chosenBy": { "kind": "default" }, "present": true, "moveTo": file })
    );
}

/// Processes whose command line mentions `port` (an adb server on it
/// would: `adb -P <port> ...` or `-L tcp:<port>`).
fn processes_on_port(port: u16) -> Vec<String> {
    let needles = [format!("tcp:{port}"), format!("-P\0{port}")];
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(cmdline) = fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&cmdline);
        if needles.iter().any(|n| line.contains(n.as_str())) {
            found.push(line.replace('\0', " "));
        }
    }
    found
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn installing_and_listing_android_without_an_adb_server_starts_none() {
    if std::env::var("DEVICERAIL_SKIP_ADB_TESTS").is_ok_and(|v| v == "1") {
        return;
    }
    let libs = libraries();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("plugins");
    // No adb server answers on this port, and `startServer` is on (the
    // default): serving would start one, inspecting must not.
    let port = free_port();
    let file = tmp.path().join("devicerail.toml");
    fs::write(
        &file,
        format!("[plugins.android]\nadbServer = \"tcp:127.0.0.1:{port}\"\n"),
    )
    .expect("write");
    let cli = |args: &[&str]| {
        let mut cmd = devicerail(tmp.path());
        cmd.args(args)
            .arg("--config")
            .arg(&file)
            .arg("--plugins-dir")
            .arg(&dir)
            .env("DEVICERAIL_DATA_DIR", tmp.path().join("data"));
        run(&mut cmd)
    };
    let started = std::time::Instant::now();
    let out = cli(&[
        "plugins",
        "install",
        libs.android.to_str().expect("utf-8 path"),
    ]);
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "install refused: {}",
        text(&out.stderr)
    );
    assert!(text(&out.stdout).starts_with("installed "));
    assert_eq!(processes_on_port(port), Vec::<String>::new());

    let out = cli(&["plugins", "list", "--json"]);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let android = &doc["plugins"][0];
    assert_eq!(android["id"], "android");
    assert_eq!(android["status"], "loaded");
    assert_eq!(android["deviceStatus"], "failed");
    let why = android["devicesError"].as_str().expect("a reason");
    assert!(why.contains("adb_server_unavailable"), "{why}");

    let out = cli(&["doctor"]);
    let report = text(&out.stdout);
    assert!(
        report.contains("[warn] host: plugin android: libdevicerail_plugin_android.so loaded; devices unavailable: "),
        "{report}"
    );
    assert!(report.contains("[FAIL] android: adb server: "), "{report}");

    // Nothing listens on the port and no process was left behind.
    assert!(std::net::TcpStream::connect(("127.0.0.1", port)).is_err());
    assert_eq!(processes_on_port(port), Vec::<String>::new());
    println!("android install without an adb server: {took:?}, no process left");

    // The control: serving with the same file does start the server the
    // table names (so the checks above could fail).
    let config = fs::read_to_string(&file).expect("read");
    let host = ClientHost::start_owned(
        Options {
            root: Some(tmp.path().to_path_buf()),
            config: Some(config),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts");
    host.ok("devices.list", None).await;
    let started = processes_on_port(port);
    let _ = Command::new(devicerail_host_android_fake_adb::server::adb_binary())
        .args(["-P", &port.to_string(), "kill-server"])
        .output();
    assert_eq!(host.finish().await.code(), Some(0));
    assert!(
        !started.is_empty(),
        "serving with startServer on starts an adb server on {port}"
    );
}

/// The README's complete example file.
fn readme_example() -> &'static str {
    let readme = include_str!("../../../README.md");
    let start = readme
        .find("```toml\n[host]")
        .map(|i| i + "```toml\n".len())
        .expect("README has an example file");
    let len = readme[start..].find("```").expect("the block ends");
    &readme[start..start + len]
}

#[test]
fn every_plugin_accepts_its_table_of_the_readme_example() {
    let libs = libraries();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = plugins_dir(
        tmp.path(),
        &[&libs.mock, &libs.browser, &libs.android, &libs.ios],
    );
    let file = tmp.path().join("devicerail.toml");
    fs::write(&file, readme_example()).expect("write");
    let out = run(devicerail(tmp.path())
        .args(["plugins", "list", "--json", "--config"])
        .arg(&file)
        .arg("--plugins-dir")
        .arg(&dir));
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let plugins = doc["plugins"].as_array().expect("plugins");
    assert_eq!(plugins.len(), 4, "{doc}");
    for p in plugins {
        assert_eq!(p["status"], "loaded", "{p}");
    }
    let devices_of = |id: &str| -> Vec<String> {
        plugins
            .iter()
            .find(|p| p["id"] == id)
            .and_then(|p| p["devices"].as_array())
            .map(|d| {
                d.iter()
                    .map(|d| d["id"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(devices_of("browser"), vec!["chrome-a", "chrome-b"]);
    assert_eq!(devices_of("mock"), vec!["mock-1", "mock-2"]);
}
