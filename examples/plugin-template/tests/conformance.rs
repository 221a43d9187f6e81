//! The plugin, built and loaded as the real cdylib the host would load,
//! passes the DeviceRail conformance kit and behaves as documented.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use devicerail_host_plugin_api::conformance::Suite;
use devicerail_host_plugin_api::loader::{self, LoadedPlugin};
use devicerail_host_plugin_api::protocol::{ActionCall, CallId, DeviceId, ErrorCode};
use devicerail_host_plugin_api::{CallContext, Driver, ObserveRequest, library_file_name};
use serde_json::json;

/// Builds this crate's library with cargo (once per test binary) and
/// loads it through the host's own loader, with its ABI, layout and
/// manifest checks.
fn load_plugin() -> LoadedPlugin {
    static LIBRARY: OnceLock<PathBuf> = OnceLock::new();
    let library = LIBRARY.get_or_init(|| {
        // The test binary is target/<profile>/deps/<name>.
        let exe = std::env::current_exe().expect("test binary path");
        let profile = exe.parent().and_then(|d| d.parent()).expect("profile dir");
        let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
        cargo
            .args(["build", "--quiet", "--lib", "--manifest-path"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            // The features the test build used, so its library is reused.
            .args(["--features", "devicerail-host-plugin-api/conformance"]);
        if profile.ends_with("release") {
            cargo.arg("--release");
        }
        assert!(
            cargo.status().expect("run cargo").success(),
            "cargo build failed"
        );
        profile.join(library_file_name("hello"))
    });
    loader::load(library, &serde_json::Map::new())
        .unwrap_or_else(|e| panic!("{} did not load: {e}", library.display()))
}

#[test]
fn the_loaded_plugin_passes_the_conformance_kit() {
    let plugin = load_plugin();
    assert_eq!(plugin.manifest().id, "hello");
    Suite::new(&plugin).device("hello-1").run().assert_passed();
}

#[test]
fn the_loaded_plugin_draws_taps_and_greets() {
    let plugin = load_plugin();
    let ctx = CallContext::unbounded();
    let device = DeviceId::new("hello-1");
    let call = |name: &str, arguments| ActionCall::new(CallId::new_v4(), name, arguments);
    plugin.connect(&ctx, &device).expect("connect");

    let shot = ObserveRequest {
        screenshot: true,
        ui_tree: false,
    };
    let before = plugin.observe(&ctx, &device, &shot).expect("observe");
    let out = plugin
        .execute(&ctx, &device, &call("tap", json!({ "x": 10, "y": 20 })))
        .expect("tap");
    assert_eq!(out.output, json!({ "accepted": true, "x": 10, "y": 20 }));
    let after = plugin.observe(&ctx, &device, &shot).expect("observe");
    assert_ne!(before.png, after.png, "the tap marker is not drawn");
    assert_eq!(after.metadata["taps"], 1);

    let out = plugin
        .execute(&ctx, &device, &call("greet", json!({ "name": "Ada" })))
        .expect("greet");
    assert_eq!(out.output, json!({ "greeting": "Hello, Ada!" }));

    let outside = plugin.execute(&ctx, &device, &call("tap", json!({ "x": 100000, "y": 0 })));
    assert_eq!(
        outside.map_err(|e| e.code),
        Err(ErrorCode::InvalidArguments.into())
    );
    plugin.disconnect(&ctx, &device).expect("disconnect");
}
