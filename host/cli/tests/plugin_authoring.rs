//! What an author outside this repository does to write a driver, end to
//! end through the real binary: the SDK crates are packaged with `cargo
//! package` and unpacked (built exactly as published, a `[patch]` in the
//! author's cargo configuration points at them instead of crates.io),
//! `devicerail plugins new acme-tv --dir <a temporary directory>` writes
//! the crate, which builds offline against those packages and passes its
//! own tests and conformance test, `devicerail plugins install <crate>`
//! builds it in release mode, runs the conformance suite on that library
//! and installs it, and `devicerail serve` serves its device to the
//! official Rust client (hello, list, connect, observe, actions).
//!
//! The second case breaks a generated driver on purpose (an action that
//! refuses arguments its own schema accepts, an action that blocks
//! ignoring cancellation): its conformance test fails naming both, and
//! `plugins install` refuses it and installs nothing. The third hollows
//! out the crate's own conformance test and makes its driver print on
//! stdout: the crate's tests pass, but `plugins install` runs the SDK's
//! suite itself, names the stdout check, and installs nothing.
//!
//! Nested cargo runs build into this test binary's target directory (the
//! registry dependencies compiled there are reused) with
//! `CARGO_NET_OFFLINE`, and one at a time.

mod support;

use support::client::Launch as _;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use devicerail_client::methods::{
    DeviceConnect, DeviceExecute, DeviceObserve, DeviceSelect, DevicesList, SessionStart,
};
use devicerail_host_plugin_api::{SDK_VERSION, library_file_name};
use devicerail_host_testing::profile_dir;
use serde_json::json;
use support::Options;
use support::client::{ClientHost, action, hello};

/// The SDK crates an author depends on, as `plugins new` names them.
const SDK_CRATES: [&str; 2] = ["devicerail-host-protocol", "devicerail-host-plugin-api"];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/cli/ is two levels below the workspace root")
        .to_path_buf()
}

fn devicerail() -> Command {
    Command::new(env!("CARGO_BIN_EXE_devicerail"))
}

/// A cargo (the one running these tests) building into this test binary's
/// target directory, offline.
fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    env_for_cargo(&mut cmd);
    cmd
}

/// What every nested cargo (ours or the one `plugins install` starts)
/// gets: this target directory, offline.
fn env_for_cargo(cmd: &mut Command) {
    if let Some(target) = profile_dir().parent() {
        cmd.env("CARGO_TARGET_DIR", target);
    }
    cmd.env("CARGO_NET_OFFLINE", "true")
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("DEVICERAIL_CONFORMANCE_LIBRARY");
}

/// One nested cargo (or `plugins install`) at a time: the cases share a
/// target directory.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs `cmd`, echoing its output, and returns it.
fn run(what: &str, cmd: &mut Command) -> Output {
    let started = Instant::now();
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!(
        "--- {what}: {} in {:.1}s\n{stdout}\n--- stderr\n{stderr}",
        out.status,
        started.elapsed().as_secs_f64()
    );
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The SDK crates packaged with `cargo package` and unpacked, as a
/// registry would serve them: `(package, directory)` pairs.
struct PackagedSdk {
    _root: tempfile::TempDir,
    crates: Vec<(&'static str, PathBuf)>,
}

fn packaged_sdk() -> &'static PackagedSdk {
    static SDK: OnceLock<PackagedSdk> = OnceLock::new();
    SDK.get_or_init(|| {
        let _one = serial();
        let root = tempfile::tempdir().expect("tempdir");
        let mut cmd = cargo();
        cmd.current_dir(workspace_root())
            .args(["package", "--no-verify", "--allow-dirty", "--target-dir"])
            .arg(root.path().join("target"));
        for name in SDK_CRATES {
            cmd.args(["-p", name]);
        }
        let out = run("cargo package", &mut cmd);
        assert!(out.status.success(), "cargo package failed");
        let unpacked = root.path().join("sdk");
        fs::create_dir_all(&unpacked).expect("mkdir");
        let crates = SDK_CRATES
            .iter()
            .map(|name| {
                let file = root
                    .path()
                    .join("target/package")
                    .join(format!("{name}-{SDK_VERSION}.crate"));
                assert!(file.is_file(), "cargo package wrote no {}", file.display());
                let out = run(
                    "tar",
                    Command::new("tar")
                        .arg("-xzf")
                        .arg(&file)
                        .arg("-C")
                        .arg(&unpacked),
                );
                assert!(out.status.success(), "cannot unpack {}", file.display());
                let dir = unpacked.join(format!("{name}-{SDK_VERSION}"));
                assert!(dir.join("Cargo.toml").is_file(), "{}", dir.display());
                (*name, dir)
            })
            .collect();
        PackagedSdk {
            _root: root,
            crates,
        }
    })
}

/// `devicerail plugins new NAME --dir DIR`, which must succeed (call it
/// without holding [`serial`]: the SDK may still need packaging); then the
/// author's own cargo configuration pointing the SDK at the packages (the
/// crate's files are untouched) and a lock file with this workspace's
/// versions (so an offline build finds every dependency).
fn new_driver(name: &str, dir: &Path) {
    let out = run(
        "devicerail plugins new",
        devicerail()
            .args(["plugins", "new", name, "--dir"])
            .arg(dir),
    );
    assert!(out.status.success(), "plugins new {name} failed");
    let said = text(&out.stdout);
    assert!(
        said.contains(&format!("created devicerail-plugin-{name} (plugin {name}"))
            && said.contains("devicerail plugins install ."),
        "{said}"
    );
    let sdk = packaged_sdk();
    let patch: String = sdk
        .crates
        .iter()
        .map(|(name, dir)| format!("{name} = {{ path = {:?} }}\n", dir.display().to_string()))
        .collect();
    fs::create_dir_all(dir.join(".cargo")).expect("mkdir .cargo");
    fs::write(
        dir.join(".cargo/config.toml"),
        format!("[patch.crates-io]\n{patch}"),
    )
    .expect("write .cargo/config.toml");
    fs::copy(workspace_root().join("Cargo.lock"), dir.join("Cargo.lock")).expect("copy Cargo.lock");
}

/// Every text file of the crate `dir` wrote (`.cargo` and the lock file
/// are the test's), to read.
fn written_files(dir: &Path, under: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in fs::read_dir(under).expect("read_dir") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if matches!(name, ".cargo" | "Cargo.lock" | "target") {
            continue;
        }
        if path.is_dir() {
            written_files(dir, &path, out);
        } else {
            let relative = path.strip_prefix(dir).expect("inside").to_path_buf();
            out.push((relative, fs::read_to_string(&path).expect("UTF-8 text")));
        }
    }
}

/// `plugins install DIR --plugins-dir PLUGINS` with the user's cargo.
fn install(dir: &Path, plugins: &Path) -> Output {
    let mut cmd = devicerail();
    cmd.args(["plugins", "install"])
        .arg(dir)
        .arg("--plugins-dir")
        .arg(plugins);
    env_for_cargo(&mut cmd);
    run("devicerail plugins install", &mut cmd)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outside_author_writes_tests_installs_and_serves_a_driver() {
    let started = Instant::now();
    let outside = tempfile::tempdir().expect("tempdir");
    let dir = outside.path().join("acme-tv");
    new_driver("acme-tv", &dir);
    let packaged = started.elapsed();

    // No path into this workspace, the SDK by version at its Rust version.
    let mut files = Vec::new();
    written_files(&dir, &dir, &mut files);
    let workspace = workspace_root().canonicalize().expect("workspace");
    for (path, content) in &files {
        assert!(
            !content.contains(workspace.to_str().expect("UTF-8")),
            "{} names the workspace",
            path.display()
        );
    }
    let names: Vec<String> = files.iter().map(|(p, _)| p.display().to_string()).collect();
    for expected in [
        "Cargo.toml",
        "README.md",
        ".github/workflows/ci.yml",
        "tests/conformance.rs",
    ] {
        assert!(names.iter().any(|n| n == expected), "{expected}: {names:?}");
    }
    let manifest: toml::Table = fs::read_to_string(dir.join("Cargo.toml"))
        .expect("Cargo.toml")
        .parse()
        .expect("TOML");
    assert_eq!(
        manifest["dependencies"]["devicerail-host-plugin-api"].as_str(),
        Some(SDK_VERSION)
    );
    assert_eq!(
        manifest["package"]["rust-version"].as_str(),
        Some(env!("CARGO_PKG_RUST_VERSION"))
    );
    assert_eq!(
        manifest["lib"]["name"].as_str(),
        Some("devicerail_plugin_acme_tv")
    );

    // Another `plugins new` into the same directory writes nothing.
    let again = run(
        "devicerail plugins new (again)",
        devicerail()
            .args(["plugins", "new", "acme-tv", "--dir"])
            .arg(&dir),
    );
    assert!(!again.status.success());
    assert!(
        text(&again.stderr).contains("already exists"),
        "{}",
        text(&again.stderr)
    );
    let bad = run(
        "devicerail plugins new Acme_TV",
        devicerail()
            .args(["plugins", "new", "Acme_TV", "--dir"])
            .arg(outside.path().join("bad")),
    );
    assert!(!bad.status.success());
    assert!(
        text(&bad.stderr).contains("a plugin id is lowercase: try \"acme-tv\""),
        "{}",
        text(&bad.stderr)
    );
    assert!(!outside.path().join("bad").exists());

    let built;
    {
        let _one = serial();
        // The SDK resolves to the packages, not to this workspace.
        for (name, unpacked) in &packaged_sdk().crates {
            let out = run(
                "cargo pkgid",
                cargo().current_dir(&dir).args(["pkgid", name]),
            );
            assert!(out.status.success(), "cargo pkgid {name} failed");
            let id = text(&out.stdout);
            let expected = format!("path+file://{}#", unpacked.display());
            assert!(id.starts_with(&expected), "{name} is {id}, not {expected}");
        }

        // The author's tests: unit tests and the conformance test.
        let out = run("cargo test", cargo().current_dir(&dir).arg("test"));
        assert!(out.status.success(), "the generated crate's tests failed");
        let said = text(&out.stdout);
        assert!(
            said.contains("test passes_the_devicerail_conformance_suite ... ok"),
            "{said}"
        );
        built = started.elapsed();
    }

    // Install: release build, conformance on that library, copy.
    let root = tempfile::tempdir().expect("tempdir");
    let plugins = root.path().join("plugins");
    let out = {
        let _one = serial();
        install(&dir, &plugins)
    };
    assert!(out.status.success(), "plugins install failed");
    let library = plugins.join(library_file_name("acme-tv"));
    assert_eq!(
        text(&out.stdout).trim(),
        format!("installed {}", library.display())
    );
    assert!(
        text(&out.stderr).contains("conformance: passed"),
        "{}",
        text(&out.stderr)
    );
    assert!(library.is_file());
    let installed = started.elapsed();

    // Serve it to the official client.
    let host = ClientHost::start(
        Options {
            root: Some(root.path().to_path_buf()),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host serves the installed driver");
    let listed = host.call0::<DevicesList>().await.expect("devices.list");
    let ids: Vec<&str> = listed.devices.iter().map(|d| d.id.0.as_str()).collect();
    assert_eq!(ids, ["acme-tv-1"]);
    host.call::<DeviceSelect>(json!({ "deviceId": "acme-tv-1" }))
        .await
        .expect("device.select");
    let connected = host.call0::<DeviceConnect>().await.expect("connect");
    assert!(connected.connected);
    assert_eq!(connected.id.0, "acme-tv-1");
    host.call0::<SessionStart>().await.expect("session.start");
    let observed = host.call0::<DeviceObserve>().await.expect("observe");
    assert_eq!(observed.device_id.0, "acme-tv-1");
    assert!(observed.screenshot.is_some(), "a screenshot");
    let greeted = host
        .call::<DeviceExecute>(action("greet", json!({ "name": "Ada" })))
        .await
        .expect("greet");
    let greeting = greeted.output["greeting"].as_str().unwrap_or_default();
    assert!(greeting.ends_with(", Ada!"), "{}", greeted.output);
    let painted = host
        .call::<DeviceExecute>(action("setColor", json!({ "color": "#3366cc" })))
        .await
        .expect("setColor");
    assert_eq!(painted.output["color"], "#3366cc");
    host.close().await;

    println!(
        "plugin authoring: packaged and generated in {:.1}s, built and tested by {:.1}s, installed by {:.1}s, served by {:.1}s",
        packaged.as_secs_f64(),
        built.as_secs_f64(),
        installed.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}

/// `text` with `from` replaced once by `to`: the break must apply.
fn break_once(file: &Path, from: &str, to: &str) {
    let text = fs::read_to_string(file).expect("read");
    assert_eq!(
        text.matches(from).count(),
        1,
        "{} no longer has {from:?}",
        file.display()
    );
    fs::write(file, text.replacen(from, to, 1)).expect("write");
}

#[test]
fn a_broken_driver_fails_its_conformance_test_naming_what_broke_and_is_not_installed() {
    let outside = tempfile::tempdir().expect("tempdir");
    let dir = outside.path().join("acme-broken");
    new_driver("acme-broken", &dir);
    let _one = serial();
    // greet refuses the short names its schema accepts (1 to 64 characters).
    break_once(
        &dir.join("src/actions.rs"),
        "chars > MAX_NAME_CHARS",
        "chars < MAX_NAME_CHARS",
    );
    // setColor blocks for 5 s, deaf to cancellation and deadlines (before
    // it takes the device's lock, so greet still runs beside it).
    break_once(
        &dir.join("src/lib.rs"),
        "        let mut d = self.connected(device)?;",
        "        if call.name == \"setColor\" {\n            std::thread::sleep(std::time::Duration::from_secs(5));\n        }\n        let mut d = self.connected(device)?;",
    );

    let out = run(
        "cargo test --test conformance",
        cargo()
            .current_dir(&dir)
            .args(["test", "--test", "conformance"]),
    );
    assert!(!out.status.success(), "the broken driver passed");
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    for expected in [
        "FAILED arguments the schema accepts are accepted",
        "greet",
        "FAILED a running call stops when cancelled",
        "setColor",
        "fix:",
    ] {
        assert!(
            said.contains(expected),
            "{expected:?} missing from:\n{said}"
        );
    }

    let plugins = outside.path().join("plugins");
    let out = install(&dir, &plugins);
    assert!(!out.status.success(), "the broken driver was installed");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("did not pass the DeviceRail conformance suite")
            && stderr.contains("FAILED a running call stops when cancelled"),
        "{stderr}"
    );
    assert!(text(&out.stdout).is_empty(), "{}", text(&out.stdout));
    let left = fs::read_dir(&plugins).map_or(0, Iterator::count);
    assert_eq!(left, 0, "nothing is installed");
}

#[test]
fn a_hollow_conformance_test_does_not_talk_the_install_gate_around() {
    let outside = tempfile::tempdir().expect("tempdir");
    let dir = outside.path().join("acme-hollow");
    new_driver("acme-hollow", &dir);
    let _one = serial();
    // The crate's own conformance test asserts nothing, and its driver
    // prints on stdout (where the host's protocol runs) while observing.
    fs::write(
        dir.join("tests/conformance.rs"),
        "#[test]\nfn passes_the_devicerail_conformance_suite() {}\n",
    )
    .expect("hollow test");
    break_once(
        &dir.join("src/lib.rs"),
        "    ) -> DriverResult<DriverObservation> {\n        ctx.check()?;",
        "    ) -> DriverResult<DriverObservation> {\n        println!(\"observing {device}\");\n        ctx.check()?;",
    );
    let out = run(
        "cargo test --test conformance",
        cargo()
            .current_dir(&dir)
            .args(["test", "--test", "conformance"]),
    );
    assert!(out.status.success(), "the hollow test passes on its own");

    let plugins = outside.path().join("plugins");
    let out = install(&dir, &plugins);
    assert!(!out.status.success(), "the printing driver was installed");
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("did not pass the DeviceRail conformance suite")
            && stderr.contains("FAILED nothing is written to stdout")
            && stderr.contains("observing"),
        "{stderr}"
    );
    let left = fs::read_dir(&plugins).map_or(0, Iterator::count);
    assert_eq!(left, 0, "nothing is installed");
}
