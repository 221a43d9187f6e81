//! End-to-end tests of `devicerail plugins list|install|remove`, `doctor`
//! and `serve` on temporary plugins directories, driving the real binary
//! with the real mock plugin and the deliberately broken libraries of
//! `plugins/testing/` (plus garbage bytes and a duplicate written here).

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::ffi::ABI_MAJOR;
use devicerail_host_testing::build_workspace_plugin;
use serde_json::{Value, json};

/// The libraries the tests install, built once per test binary.
struct Libraries {
    mock: PathBuf,
    bad_abi: PathBuf,
    bad_layout: PathBuf,
    init_panic: PathBuf,
    not_a_plugin: PathBuf,
}

fn libraries() -> &'static Libraries {
    static LIBS: OnceLock<Libraries> = OnceLock::new();
    LIBS.get_or_init(|| Libraries {
        mock: build_workspace_plugin("devicerail-host-plugin-mock", "mock"),
        bad_abi: build_workspace_plugin("devicerail-host-test-plugin-bad-abi", "test-bad-abi"),
        bad_layout: build_workspace_plugin(
            "devicerail-host-test-plugin-bad-layout",
            "test-bad-layout",
        ),
        init_panic: build_workspace_plugin(
            "devicerail-host-test-plugin-init-panic",
            "test-init-panic",
        ),
        not_a_plugin: build_workspace_plugin(
            "devicerail-host-test-plugin-not-a-plugin",
            "test-not-a-plugin",
        ),
    })
}

/// The reason each broken case must be refused with (a prefix or an exact
/// text; each is distinct).
mod reason {
    pub(crate) const GARBAGE: &str = "not a loadable shared library: ";
    pub(crate) const NOT_A_PLUGIN: &str =
        "not a DeviceRail plugin: the library exports no plugin root module";
    pub(crate) const BAD_LAYOUT: &str = "incompatible plugin layout: ";
    pub(crate) const INIT_PANIC: &str = "plugin initialization failed: the driver panicked during init: \
                                  test-init-panic: the constructor always panics";
    pub(crate) const DUPLICATE: &str = "duplicate plugin id \"mock\" (already loaded from ";
    pub(crate) const WRITABLE: &str = "writable by group or others (mode 666)";
    pub(crate) const OUTSIDE: &str = "symlink leads outside the plugins directory (to ";

    pub(crate) fn bad_abi() -> String {
        format!(
            "plugin ABI major 99 does not match the host's ABI major {}",
            super::ABI_MAJOR
        )
    }
}

/// A home for the default locations (configuration file, data directory),
/// so the machine's own never count.
fn xdg_home() -> &'static Path {
    static HOME: OnceLock<tempfile::TempDir> = OnceLock::new();
    HOME.get_or_init(|| tempfile::tempdir().expect("tempdir"))
        .path()
}

fn devicerail() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_devicerail"));
    cmd.env("XDG_DATA_HOME", xdg_home())
        .env_remove("DEVICERAIL_CONFIG")
        .env_remove("DEVICERAIL_SCREENSHOT_POLICY")
        .env_remove("DEVICERAIL_PLUGINS_DIR")
        .env_remove("DEVICERAIL_DATA_DIR")
        .env_remove("DEVICERAIL_MOCK_DEVICES")
        .env_remove("DEVICERAIL_MOCK_FAULTS")
        .env_remove("RUST_LOG")
        .env("RUST_BACKTRACE", "0");
    cmd
}

fn run(args: &[&str], dir: &Path) -> Output {
    let mut cmd = devicerail();
    cmd.args(args).arg("--plugins-dir").arg(dir);
    let out = cmd.output().expect("run devicerail");
    println!(
        "$ devicerail {} --plugins-dir {}\n[exit {:?}]\n{}{}",
        args.join(" "),
        dir.display(),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn install(file: &Path, dir: &Path, force: bool) -> Output {
    let file = file.to_str().expect("utf-8 path");
    if force {
        run(&["plugins", "install", file, "--force"], dir)
    } else {
        run(&["plugins", "install", file], dir)
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `plugins list --json`, as file name → entry.
fn list_json(dir: &Path) -> BTreeMap<String, Value> {
    let out = run(&["plugins", "list", "--json"], dir);
    assert!(
        out.status.success(),
        "plugins list failed: {}",
        stderr(&out)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("list --json is JSON");
    assert_eq!(doc["pluginsDir"], json!(dir), "{doc}");
    doc["plugins"]
        .as_array()
        .expect("plugins array")
        .iter()
        .map(|p| (p["file"].as_str().expect("file").to_owned(), p.clone()))
        .collect()
}

/// Names of the regular files and links in `dir` (hidden ones included).
fn dir_entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    };
    names.sort();
    names
}

/// A fresh directory for plugins (0700, as the host requires no group or
/// other write bits).
fn plugins_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o700)).expect("chmod");
    dir
}

fn copy_into(src: &Path, dir: &Path, name: &str) -> PathBuf {
    let dst = dir.join(name);
    fs::copy(src, &dst).expect("copy");
    fs::set_permissions(&dst, fs::Permissions::from_mode(0o755)).expect("chmod");
    dst
}

/// Bytes that are no shared library (xorshift seeded by the clock; the
/// seed is printed).
fn write_garbage(path: &Path) {
    let mut state = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0x2545_f491_4f6c_dd1d, |d| d.as_nanos() as u64)
        | 1;
    println!("garbage seed for {}: {state:#x}", path.display());
    let bytes: Vec<u8> = (0..8192)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u8
        })
        .collect();
    fs::write(path, bytes).expect("write garbage");
    fs::set_permissions(path, fs::Permissions::from_mode(0o644)).expect("chmod");
}

/// A directory with every broken case and the mock. Returns the file name
/// → expected reason (`None`: loaded) map.
fn mixed_dir(dir: &Path) -> BTreeMap<String, Option<String>> {
    let libs = libraries();
    write_garbage(&dir.join("x.so"));
    let mock = library_name("mock");
    copy_into(&libs.mock, dir, &mock);
    // Sorts after the original, so it is the one that loses.
    copy_into(&libs.mock, dir, "mock-copy.so");
    for (lib, id) in [
        (&libs.bad_abi, "test-bad-abi"),
        (&libs.bad_layout, "test-bad-layout"),
        (&libs.init_panic, "test-init-panic"),
        (&libs.not_a_plugin, "test-not-a-plugin"),
    ] {
        copy_into(lib, dir, &library_name(id));
    }
    BTreeMap::from([
        ("x.so".to_owned(), Some(reason::GARBAGE.to_owned())),
        (mock, None),
        (
            "mock-copy.so".to_owned(),
            Some(reason::DUPLICATE.to_owned()),
        ),
        (library_name("test-bad-abi"), Some(reason::bad_abi())),
        (
            library_name("test-bad-layout"),
            Some(reason::BAD_LAYOUT.to_owned()),
        ),
        (
            library_name("test-init-panic"),
            Some(reason::INIT_PANIC.to_owned()),
        ),
        (
            library_name("test-not-a-plugin"),
            Some(reason::NOT_A_PLUGIN.to_owned()),
        ),
    ])
}

fn library_name(id: &str) -> String {
    devicerail_host_plugin_api::library_file_name(id)
}

fn assert_mock_loaded(entry: &Value) {
    assert_eq!(entry["status"], "loaded", "{entry}");
    assert_eq!(entry["reason"], Value::Null, "{entry}");
    assert_eq!(entry["id"], "mock", "{entry}");
    let devices = entry["devices"].as_array().expect("devices");
    assert_eq!(devices.len(), 1, "{entry}");
    assert_eq!(devices[0]["id"], "mock-1", "{entry}");
    assert_eq!(devices[0]["platform"]["kind"], "mock", "{entry}");
}

#[test]
fn acceptance_install_the_mock_into_a_fresh_dir_and_list_it() {
    let root = tempfile::tempdir().expect("tempdir");
    // Not created yet: install creates it.
    let dir = root.path().join("plugins");
    let out = install(&libraries().mock, &dir, false);
    assert!(out.status.success(), "install failed: {}", stderr(&out));
    let target = dir.join(library_name("mock"));
    assert_eq!(
        stdout(&out).trim(),
        format!("installed {}", target.display())
    );
    assert_eq!(dir_entries(&dir), vec![library_name("mock")]);
    let mode = fs::metadata(&target).expect("stat").permissions().mode();
    assert_eq!(mode & 0o022, 0, "installed with mode {mode:o}");
    let dir_mode = fs::metadata(&dir).expect("stat").permissions().mode();
    assert_eq!(dir_mode & 0o022, 0, "plugins dir has mode {dir_mode:o}");

    let listed = list_json(&dir);
    assert_eq!(listed.len(), 1, "{listed:?}");
    let entry = &listed[&library_name("mock")];
    assert_mock_loaded(entry);
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"), "{entry}");

    let text = run(&["plugins", "list"], &dir);
    assert!(text.status.success());
    let text = stdout(&text);
    assert!(
        text.lines()
            .any(|l| l.starts_with("mock") && l.contains(" loaded ") && l.contains("mock-1")),
        "{text}"
    );
}

#[test]
fn install_refuses_each_broken_file_with_its_own_reason_and_copies_nothing() {
    let libs = libraries();
    let scratch = tempfile::tempdir().expect("tempdir");
    let garbage = scratch.path().join("x.so");
    write_garbage(&garbage);
    let cases: [(&Path, String); 5] = [
        (&garbage, reason::GARBAGE.to_owned()),
        (&libs.not_a_plugin, reason::NOT_A_PLUGIN.to_owned()),
        (&libs.bad_layout, reason::BAD_LAYOUT.to_owned()),
        (&libs.bad_abi, reason::bad_abi()),
        (&libs.init_panic, reason::INIT_PANIC.to_owned()),
    ];
    let dir = plugins_dir();
    for (file, reason) in &cases {
        let out = install(file, dir.path(), false);
        assert!(!out.status.success(), "{} was installed", file.display());
        let err = stderr(&out);
        let expected = format!(
            "devicerail plugins: {} is not an installable plugin: {reason}",
            file.display()
        );
        assert!(
            err.contains(&expected),
            "expected {expected:?} in stderr:\n{err}"
        );
        assert!(stdout(&out).is_empty(), "{}", stdout(&out));
        assert_eq!(dir_entries(dir.path()), Vec::<String>::new());
        // --force does not make a broken file installable.
        let forced = install(file, dir.path(), true);
        assert!(!forced.status.success(), "{} was installed", file.display());
        assert!(stderr(&forced).contains(&expected), "{}", stderr(&forced));
        assert_eq!(dir_entries(dir.path()), Vec::<String>::new());
    }
    // Still usable after all that.
    let ok = install(&libs.mock, dir.path(), false);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_mock_loaded(&list_json(dir.path())[&library_name("mock")]);
}

#[test]
fn a_second_install_needs_force() {
    let libs = libraries();
    let dir = plugins_dir();
    let first = install(&libs.mock, dir.path(), false);
    assert!(first.status.success(), "{}", stderr(&first));
    let target = dir.path().join(library_name("mock"));

    let again = install(&libs.mock, dir.path(), false);
    assert!(!again.status.success(), "the second install was accepted");
    assert!(
        stderr(&again).contains(&format!(
            "plugin \"mock\" is already installed as {} (use --force to replace it)",
            target.display()
        )),
        "{}",
        stderr(&again)
    );
    assert_eq!(dir_entries(dir.path()), vec![library_name("mock")]);

    let forced = install(&libs.mock, dir.path(), true);
    assert!(forced.status.success(), "{}", stderr(&forced));
    assert_eq!(
        stdout(&forced).trim(),
        format!("installed {}", target.display())
    );
    assert_eq!(dir_entries(dir.path()), vec![library_name("mock")]);
    assert_mock_loaded(&list_json(dir.path())[&library_name("mock")]);
}

#[test]
fn install_refuses_an_id_already_present_under_another_file_name() {
    let libs = libraries();
    let dir = plugins_dir();
    let other = copy_into(&libs.mock, dir.path(), "my-mock.so");
    let out = install(&libs.mock, dir.path(), false);
    assert!(
        !out.status.success(),
        "installed beside {}",
        other.display()
    );
    assert!(
        stderr(&out).contains(&format!(
            "plugin \"mock\" is already installed as {} (use --force to replace it)",
            other.display()
        )),
        "{}",
        stderr(&out)
    );
    assert_eq!(dir_entries(dir.path()), vec!["my-mock.so".to_owned()]);
}

/// Host bug (`commands::install`): `--force` only skips the "already
/// installed" check. When the installed copy lives under another file name
/// that sorts first, the forced install adds a second file with the same
/// id, and the directory scan then refuses the freshly installed one as a
/// duplicate: the old plugin stays in service.
#[test]
fn a_forced_install_replaces_a_same_id_plugin_under_another_file_name() {
    let libs = libraries();
    let dir = plugins_dir();
    copy_into(&libs.mock, dir.path(), "a-older-mock.so");
    let out = install(&libs.mock, dir.path(), true);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = list_json(dir.path());
    assert_mock_loaded(&listed[&library_name("mock")]);
    assert_eq!(
        dir_entries(dir.path()),
        vec![library_name("mock")],
        "the replaced copy is still there: {listed:?}"
    );
}

#[test]
fn remove_deletes_the_plugin_and_then_has_nothing_to_remove() {
    let dir = plugins_dir();
    let out = install(&libraries().mock, dir.path(), false);
    assert!(out.status.success(), "{}", stderr(&out));
    let target = dir.path().join(library_name("mock"));

    let removed = run(&["plugins", "remove", "mock"], dir.path());
    assert!(removed.status.success(), "{}", stderr(&removed));
    assert_eq!(
        stdout(&removed).trim(),
        format!("removed {}", target.display())
    );
    assert_eq!(dir_entries(dir.path()), Vec::<String>::new());
    assert!(list_json(dir.path()).is_empty());

    let again = run(&["plugins", "remove", "mock"], dir.path());
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains(&format!(
            "no plugin \"mock\" is installed in {}",
            dir.path().display()
        )),
        "{}",
        stderr(&again)
    );
}

#[test]
fn remove_leaves_refused_files_of_other_ids_alone() {
    let dir = plugins_dir();
    let expected = mixed_dir(dir.path());
    let removed = run(&["plugins", "remove", "mock"], dir.path());
    assert!(removed.status.success(), "{}", stderr(&removed));
    // Both copies carry id "mock" (the refused duplicate too).
    let left = dir_entries(dir.path());
    assert!(!left.contains(&library_name("mock")), "{left:?}");
    assert!(!left.contains(&"mock-copy.so".to_owned()), "{left:?}");
    assert_eq!(left.len(), expected.len() - 2, "{left:?}");
}

#[test]
fn a_mixed_directory_lists_every_broken_file_as_refused_except_the_mock() {
    let dir = plugins_dir();
    let expected = mixed_dir(dir.path());
    let listed = list_json(dir.path());
    assert_eq!(
        listed.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    let mut reasons = Vec::new();
    for (file, want) in &expected {
        let entry = &listed[file];
        match want {
            None => assert_mock_loaded(entry),
            Some(want) => {
                assert_eq!(entry["status"], "refused", "{file}: {entry}");
                let got = entry["reason"].as_str().expect("reason");
                assert!(got.starts_with(want.as_str()), "{file}: {got:?}");
                assert_eq!(entry["devices"], json!([]), "{file}: {entry}");
                reasons.push(got.to_owned());
            }
        }
    }
    let distinct: std::collections::HashSet<_> = reasons.iter().collect();
    assert_eq!(distinct.len(), reasons.len(), "{reasons:?}");
    // The duplicate names the file that won.
    let dup = listed["mock-copy.so"]["reason"].as_str().expect("reason");
    assert!(
        dup.ends_with(&format!(
            "{})",
            dir.path().join(library_name("mock")).display()
        )),
        "{dup}"
    );

    let text = run(&["plugins", "list"], dir.path());
    assert!(text.status.success());
    let text = stdout(&text);
    for (file, want) in &expected {
        let line = text
            .lines()
            .find(|l| l.contains(&format!(" {file} ")))
            .unwrap_or_else(|| panic!("{file} is not listed:\n{text}"));
        match want {
            None => assert!(line.contains(" loaded "), "{line}"),
            Some(want) => assert!(
                line.contains(&format!("refused  {file}  reason: {want}")),
                "{line}"
            ),
        }
    }
}

#[test]
fn permission_and_symlink_checks() {
    let libs = libraries();
    let outside = tempfile::tempdir().expect("tempdir");
    let outside_lib = copy_into(&libs.mock, outside.path(), "libelsewhere.so");

    // Group/other-writable file.
    let dir = plugins_dir();
    let writable = copy_into(&libs.mock, dir.path(), &library_name("mock"));
    fs::set_permissions(&writable, fs::Permissions::from_mode(0o666)).expect("chmod");
    let entry = &list_json(dir.path())[&library_name("mock")];
    assert_eq!(entry["status"], "refused", "{entry}");
    assert_eq!(entry["reason"], reason::WRITABLE, "{entry}");
    assert_eq!(entry["id"], Value::Null, "never opened: {entry}");

    // A symlink leading outside the directory.
    let dir = plugins_dir();
    let link = dir.path().join(library_name("mock"));
    std::os::unix::fs::symlink(&outside_lib, &link).expect("symlink");
    let entry = &list_json(dir.path())[&library_name("mock")];
    assert_eq!(entry["status"], "refused", "{entry}");
    let got = entry["reason"].as_str().expect("reason");
    assert!(got.starts_with(reason::OUTSIDE), "{got}");
    assert_eq!(entry["id"], Value::Null, "never opened: {entry}");

    // A symlink to a file inside the directory (in a subdirectory, which
    // the scan does not list itself).
    let dir = plugins_dir();
    let store = dir.path().join("store");
    fs::create_dir(&store).expect("mkdir");
    fs::set_permissions(&store, fs::Permissions::from_mode(0o700)).expect("chmod");
    let real = copy_into(&libs.mock, &store, "mock-0.1.0.so");
    std::os::unix::fs::symlink(&real, dir.path().join(library_name("mock"))).expect("symlink");
    let listed = list_json(dir.path());
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_mock_loaded(&listed[&library_name("mock")]);
    // A relative symlink inside works the same.
    fs::remove_file(dir.path().join(library_name("mock"))).expect("rm");
    std::os::unix::fs::symlink("store/mock-0.1.0.so", dir.path().join(library_name("mock")))
        .expect("symlink");
    assert_mock_loaded(&list_json(dir.path())[&library_name("mock")]);
}

#[test]
fn a_group_writable_plugins_directory_is_refused_as_a_whole() {
    let dir = plugins_dir();
    copy_into(&libraries().mock, dir.path(), &library_name("mock"));
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o770)).expect("chmod");
    let out = run(&["plugins", "list", "--json"], dir.path());
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(&format!(
            "plugins directory {} is writable by group or others; refusing to load anything from it",
            dir.path().display()
        )),
        "{}",
        stderr(&out)
    );
}

/// Reads NDJSON lines of a child's stdout on a thread, so a silent host
/// fails the test instead of hanging it.
struct LineReader {
    rx: std::sync::mpsc::Receiver<String>,
}

impl LineReader {
    fn new(out: impl std::io::Read + Send + 'static) -> Self {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self { rx }
    }

    /// The response with JSON-RPC id `id` (skipping other frames).
    fn response(&self, id: u64, within: Duration) -> Value {
        let end = Instant::now() + within;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            let line = self
                .rx
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no response {id} from devicerail serve: {e}"));
            println!("<- {line}");
            let frame: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"));
            if frame["id"] == json!(id) {
                return frame;
            }
        }
    }
}

#[test]
fn serve_with_a_mixed_directory_still_serves_the_mock() {
    let dir = plugins_dir();
    mixed_dir(dir.path());
    let data = tempfile::tempdir().expect("tempdir");
    let mut child = devicerail()
        .arg("serve")
        .arg("--plugins-dir")
        .arg(dir.path())
        .arg("--data-dir")
        .arg(data.path())
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn devicerail serve");
    let log = child.stderr.take().expect("stderr");
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(log), &mut text);
        text
    });
    let reader = LineReader::new(child.stdout.take().expect("stdout"));
    let mut stdin = child.stdin.take().expect("stdin");
    let hello = json!({
        "jsonrpc": "2.0",
        "id": 1,
        "method": "system.hello",
        "params": {
            "client": { "name": "plugins-cli-test", "version": "0.1.0" },
            "protocol": { "ranges": [ { "major": 1, "minMinor": 0, "maxMinor": 5 } ] }
        }
    });
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "devices.list" });
    for frame in [&hello, &list] {
        println!("-> {frame}");
        writeln!(stdin, "{frame}").expect("write request");
    }
    stdin.flush().expect("flush");

    let hello = reader.response(1, Duration::from_secs(60));
    assert!(hello.get("error").is_none(), "{hello}");
    assert_eq!(
        hello["result"]["protocol"]["selected"]["major"], 1,
        "{hello}"
    );
    let list = reader.response(2, Duration::from_secs(30));
    assert!(list.get("error").is_none(), "{list}");
    let devices = list["result"]["devices"].as_array().expect("devices");
    let ids: Vec<&str> = devices.iter().filter_map(|d| d["id"].as_str()).collect();
    assert_eq!(ids, ["mock-1"], "{list}");

    // EOF on stdin shuts the daemon down cleanly.
    drop(stdin);
    let end = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            panic!("devicerail serve did not exit after stdin closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let log = log.join().expect("stderr reader");
    println!("--- serve log ---\n{log}");
    assert!(status.success(), "serve exited with {status}");
    // Every refused file was logged with its reason.
    for r in [
        reason::GARBAGE,
        reason::NOT_A_PLUGIN,
        reason::BAD_LAYOUT,
        reason::INIT_PANIC,
        reason::DUPLICATE,
    ] {
        assert!(log.contains(r), "{r:?} not logged");
    }
    assert!(log.contains(&reason::bad_abi()), "ABI refusal not logged");
}

fn doctor(dir: &Path, data: &Path) -> (Output, Value) {
    let out = devicerail()
        .arg("doctor")
        .arg("--plugins-dir")
        .arg(dir)
        .arg("--data-dir")
        .arg(data)
        .arg("--json")
        .output()
        .expect("run devicerail doctor");
    println!(
        "$ devicerail doctor --json\n[exit {:?}]\n{}{}",
        out.status.code(),
        stdout(&out),
        stderr(&out)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("doctor --json is JSON");
    (out, doc)
}

fn check<'a>(doc: &'a Value, source: &str, name: &str) -> &'a Value {
    doc["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["source"] == source && c["name"] == name)
        .unwrap_or_else(|| panic!("no check {source}/{name} in {doc}"))
}

#[test]
fn doctor_passes_with_the_mock_and_fails_when_a_plugin_file_is_refused() {
    let data = tempfile::tempdir().expect("tempdir");

    let good = plugins_dir();
    copy_into(&libraries().mock, good.path(), &library_name("mock"));
    // A data directory others may read is a warning (the host tightens it).
    std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let (_, doc) = doctor(good.path(), data.path());
    let open = check(&doc, "host", "data directory");
    assert_eq!(open["status"], "warn", "{open}");
    assert!(
        open["detail"]
            .as_str()
            .unwrap_or("")
            .contains("open to other users"),
        "{open}"
    );
    std::fs::set_permissions(data.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let (out, doc) = doctor(good.path(), data.path());
    assert!(out.status.success(), "doctor failed on a good directory");
    assert_eq!(doc["ok"], true, "{doc}");
    assert_eq!(check(&doc, "host", "plugins directory")["status"], "ok");
    assert_eq!(check(&doc, "host", "data directory")["status"], "ok");
    assert_eq!(check(&doc, "host", "plugin mock")["status"], "ok");
    assert_eq!(check(&doc, "mock", "mock devices")["status"], "ok");

    let mixed = plugins_dir();
    let expected = mixed_dir(mixed.path());
    let (out, doc) = doctor(mixed.path(), data.path());
    assert!(!out.status.success(), "doctor passed with refused files");
    assert_eq!(doc["ok"], false, "{doc}");
    assert_eq!(check(&doc, "host", "plugin mock")["status"], "ok");
    assert_eq!(check(&doc, "mock", "mock devices")["status"], "ok");
    for (file, want) in &expected {
        let Some(want) = want else { continue };
        let c = check(&doc, "host", &format!("plugin file {file}"));
        assert_eq!(c["status"], "fail", "{c}");
        let detail = c["detail"].as_str().expect("detail");
        assert!(detail.starts_with(want.as_str()), "{file}: {detail}");
    }
}
