//! A plugin built against plugin ABI 1.0 still loads into this host (ABI
//! 1.1): the fixture in `plugins/testing/abi-1-0/` is compiled here from a
//! frozen copy of the 1.0 FFI types, so its root module really lacks
//! `init_for`. The host initializes it through `init` (as for serving),
//! hands it its table of the configuration file, and lists it as loaded.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use devicerail_host_plugin_api::{Driver, LoadPurpose, loader};
use devicerail_host_testing::{build_workspace_plugin, profile_dir};
use serde_json::{Value, json};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/cli/ is two levels below the workspace root")
        .to_path_buf()
}

fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read fixture") {
        let entry = entry.expect("entry");
        if entry.file_name() == "target" {
            continue;
        }
        let dst = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &dst);
        } else {
            fs::copy(entry.path(), &dst).expect("copy");
        }
    }
}

/// Builds the ABI 1.0 fixture (a copy, with the workspace's lock file, in
/// the same target directory) once per test binary.
fn abi_1_0_plugin() -> PathBuf {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let copy = tempfile::tempdir().expect("tempdir");
        copy_tree(
            &workspace_root().join("plugins/testing/abi-1-0"),
            copy.path(),
        );
        fs::copy(
            workspace_root().join("Cargo.lock"),
            copy.path().join("Cargo.lock"),
        )
        .expect("copy Cargo.lock");
        let profile = profile_dir();
        let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cmd.args(["build", "--quiet", "--manifest-path"])
            .arg(copy.path().join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", profile.parent().expect("target dir"))
            .current_dir(copy.path());
        if profile.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        assert!(
            cmd.status().expect("run cargo build").success(),
            "the ABI 1.0 fixture did not build"
        );
        let lib = profile.join(devicerail_host_plugin_api::library_file_name(
            "test-abi-1-0",
        ));
        assert!(lib.exists(), "{} was not built", lib.display());
        lib
    })
    .clone()
}

#[test]
fn an_abi_1_0_plugin_is_initialized_through_init_with_its_settings() {
    let lib = abi_1_0_plugin();
    let opened = loader::open(&lib).expect("an ABI 1.0 plugin passes the checks");
    assert_eq!(opened.manifest().abi_minor, 0);
    assert!(!opened.knows_purposes(), "1.0 has no init_for");
    let settings = json!({ "greeting": "hi" });
    let plugin = opened
        .init(
            settings.as_object().expect("an object"),
            LoadPurpose::Inspect,
        )
        .expect("initialized through init");
    let checks = plugin.doctor();
    assert_eq!(checks[0].detail, r#"{"greeting":"hi"}"#);

    let current = build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let opened = loader::open(&current).expect("the mock opens");
    assert_eq!(
        opened.manifest().abi_minor,
        devicerail_host_plugin_api::ffi::ABI_MINOR
    );
    assert!(opened.knows_purposes(), "1.1 plugins have init_for");
}

#[test]
fn the_binary_lists_serves_and_configures_an_abi_1_0_plugin() {
    let lib = abi_1_0_plugin();
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("plugins");
    fs::create_dir_all(&dir).expect("mkdir");
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("chmod");
    let file = tmp.path().join("devicerail.toml");
    fs::write(&file, "[plugins.test-abi-1-0]\ngreeting = \"hi\"\n").expect("write");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_devicerail"))
            .args(args)
            .arg("--config")
            .arg(&file)
            .arg("--plugins-dir")
            .arg(&dir)
            .env("XDG_DATA_HOME", tmp.path().join("xdg"))
            .env("DEVICERAIL_DATA_DIR", tmp.path().join("data"))
            .env_remove("DEVICERAIL_CONFIG")
            .env_remove("RUST_LOG")
            .output()
            .expect("run devicerail");
        println!(
            "$ devicerail {}\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let out = run(&["plugins", "install", lib.to_str().expect("utf-8 path")]);
    assert!(out.status.success(), "an ABI 1.0 plugin installs");
    let out = run(&["plugins", "list", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["plugins"][0]["id"], "test-abi-1-0", "{doc}");
    assert_eq!(doc["plugins"][0]["status"], "loaded", "{doc}");
    let out = run(&["doctor", "--json"]);
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let check = doc["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["source"] == "test-abi-1-0"))
        .cloned()
        .unwrap_or_else(|| panic!("no check of the plugin in {doc}"));
    assert_eq!(check["detail"], r#"{"greeting":"hi"}"#);
}
