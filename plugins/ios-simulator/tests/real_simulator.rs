//! Against a real iOS Simulator with WebDriverAgent running on it. Runs only
//! when `DEVICERAIL_IOS_REAL=1` (macOS with Xcode); configuration comes from
//! the usual `DEVICERAIL_*` variables, the simulator from
//! `DEVICERAIL_IOS_REAL_UDID` or the first booted one. See the README.

mod common;

use devicerail_host_plugin_api::conformance::Suite;
use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{CallContext, Driver, ObserveRequest};
use serde_json::json;

fn enabled() -> bool {
    if std::env::var("DEVICERAIL_IOS_REAL").as_deref() == Ok("1") {
        if !cfg!(target_os = "macos") {
            panic!("DEVICERAIL_IOS_REAL=1 needs macOS with Xcode and a booted simulator");
        }
        true
    } else {
        eprintln!("skipped: set DEVICERAIL_IOS_REAL=1 to test against a real simulator");
        false
    }
}

#[test]
fn a_real_simulator_passes_the_conformance_kit_and_drives_settings() {
    if !enabled() {
        return;
    }
    let plugin = common::load(json!({}));
    let ctx = CallContext::unbounded();
    let devices = plugin.list_devices(&ctx).expect("devices");
    let udid = std::env::var("DEVICERAIL_IOS_REAL_UDID")
        .ok()
        .or_else(|| devices.first().map(|d| d.id.0.clone()))
        .expect("a booted simulator (or DEVICERAIL_IOS_REAL_UDID)");
    Suite::loaded(&plugin).device(&udid).run().assert_passed();

    let device = DeviceId::new(udid);
    plugin.connect(&ctx, &device).expect("connects");
    let exec = |name: &str, args| {
        plugin
            .execute(&ctx, &device, &devicerail_host_testing::call(name, args))
            .unwrap_or_else(|e| panic!("{name} failed: {e}"))
    };
    exec("launchApp", json!({ "bundleId": "com.apple.Preferences" }));
    let request = ObserveRequest {
        screenshot: true,
        ui_tree: true,
        live: None,
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let (obs, general) = loop {
        let obs = plugin.observe(&ctx, &device, &request).expect("observes");
        let tree = obs.ui_tree.as_ref().expect("a tree");
        let general = tree
            .nodes
            .iter()
            .find(|n| n.name.as_deref() == Some("General") && n.hittable != Some(false))
            .map(|n| n.stable_node_id.clone());
        if let Some(id) = general {
            break (obs, id);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "Settings shows no General row"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    };
    let tree = obs.ui_tree.as_ref().expect("a tree");
    assert_eq!(tree.context.context_id.as_str(), "com.apple.Preferences");
    let png = obs.png.as_ref().expect("a screenshot");
    let img = image::load_from_memory(png).expect("a PNG");
    assert_eq!(
        (img.width(), img.height()),
        (obs.viewport.width, obs.viewport.height)
    );
    let node = json!({
        "observationId": devicerail_host_plugin_api::protocol::ObservationId::new_v7(),
        "context": tree.context,
        "stableNodeId": general,
    });
    let tapped = exec(
        "tapElement",
        json!({ "target": { "kind": "node", "node": node } }),
    );
    assert!(tapped.execution.is_some());
    exec("home", json!({}));
    plugin.disconnect(&ctx, &device).expect("disconnects");
}
