//! `examples/plugin-template` builds outside this workspace, as an author's
//! copy would, and the library it produces loads and passes the
//! conformance kit.
//!
//! The copy's path dependency is pointed at this workspace's plugin-api,
//! it gets this workspace's Cargo.lock (same dependency versions) and
//! builds into this workspace's target directory (already-compiled
//! registry dependencies are reused).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use devicerail_host_plugin_api::conformance::Suite;
use devicerail_host_plugin_api::{Driver, library_file_name, loader};
use devicerail_host_testing::profile_dir;

/// The template's plugin id and device.
const PLUGIN_ID: &str = "hello";
const DEVICE_ID: &str = "hello-1";
/// How the template refers to plugin-api.
const TEMPLATE_API_PATH: &str = "path = \"../../plugin-api\"";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("host/cli/ is two levels below the workspace root")
        .to_path_buf()
}

/// Copies `from` into `to`, leaving out build output and lock files.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read template") {
        let entry = entry.expect("entry");
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        let src = entry.path();
        let dst = to.join(&name);
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&src, &dst);
        } else {
            fs::copy(&src, &dst).expect("copy");
        }
    }
}

#[test]
fn the_plugin_template_builds_standalone_and_passes_the_conformance_kit() {
    let started = Instant::now();
    let root = workspace_root();
    let template = root.join("examples/plugin-template");
    let copy = tempfile::tempdir().expect("tempdir");
    copy_tree(&template, copy.path());

    let manifest = copy.path().join("Cargo.toml");
    let text = fs::read_to_string(&manifest).expect("read Cargo.toml");
    assert_eq!(
        text.matches(TEMPLATE_API_PATH).count(),
        2,
        "the template no longer depends on {TEMPLATE_API_PATH} (dependency and dev-dependency)"
    );
    assert!(
        text.contains("\n[workspace]\n"),
        "the template must be its own workspace"
    );
    let api = fs::canonicalize(root.join("plugin-api")).expect("plugin-api");
    let api = api.to_str().expect("utf-8 path").replace('\\', "/");
    fs::write(
        &manifest,
        text.replace(TEMPLATE_API_PATH, &format!("path = \"{api}\"")),
    )
    .expect("write Cargo.toml");
    fs::copy(root.join("Cargo.lock"), copy.path().join("Cargo.lock")).expect("copy Cargo.lock");

    let profile = profile_dir();
    let target_dir = profile.parent().expect("target dir");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.arg("build")
        .arg("--quiet")
        .arg("--manifest-path")
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", target_dir)
        .current_dir(copy.path());
    if profile.file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("run cargo build");
    assert!(status.success(), "the template copy did not build");
    let built = started.elapsed();

    let library = profile.join(library_file_name(PLUGIN_ID));
    let plugin = loader::load(&library, &serde_json::Map::new())
        .unwrap_or_else(|e| panic!("{} did not load: {e}", library.display()));
    assert_eq!(plugin.id(), PLUGIN_ID);
    assert!(
        !plugin.doctor().is_empty(),
        "the template reports no doctor checks"
    );
    Suite::new(&plugin).device(DEVICE_ID).run().assert_passed();
    // Its action space, byte for byte as clients see it.
    let caps = plugin
        .capabilities(
            &devicerail_host_plugin_api::CallContext::unbounded(),
            &devicerail_host_plugin_api::protocol::DeviceId::new(DEVICE_ID),
        )
        .expect("capabilities");
    devicerail_host_testing::assert_golden(
        &root.join("examples/plugin-template/tests/golden/capabilities.json"),
        &caps,
    );
    println!(
        "plugin template: copied and built in {:.1}s, loaded and checked in {:.1}s total",
        built.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
}
