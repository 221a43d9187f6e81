//! The browser plugin, loaded as a real cdylib and driving a real
//! headless Chromium, passes the conformance kit.

mod common;

use devicerail_host_plugin_api::Driver;
use devicerail_host_plugin_api::conformance::Suite;
use serde_json::json;

#[test]
fn loaded_browser_passes_the_conformance_kit() {
    let _serial = common::serial();
    let plugin = common::load(json!({}));
    assert_eq!(plugin.manifest().id, "browser");
    Suite::loaded(&plugin)
        .device(common::DEVICE)
        .run()
        .assert_passed();
}

#[test]
fn loaded_browser_at_scale_two_passes_the_conformance_kit() {
    let _serial = common::serial();
    let plugin = common::load(
        json!({ "viewportWidth": 640, "viewportHeight": 480, "deviceScaleFactor": 2.0 }),
    );
    Suite::loaded(&plugin)
        .device(common::DEVICE)
        .run()
        .assert_passed();
}

#[test]
fn doctor_finds_the_browser_and_its_version() {
    let plugin = common::load(json!({}));
    let checks = plugin.doctor();
    let browser = checks
        .iter()
        .find(|c| c.name == "browser browser-chromium")
        .expect("a browser check");
    assert_eq!(
        browser.status,
        devicerail_host_plugin_api::CheckStatus::Ok,
        "{}",
        browser.detail
    );
    assert!(
        browser.detail.contains("Chrom"),
        "the detail names the version: {}",
        browser.detail
    );
}

#[test]
fn several_browsers_are_listed_and_unknown_ones_refused() {
    let plugin = common::load(
        json!({ "browsers": [{ "id": "browser-a" }, { "id": "browser-b", "viewportWidth": 800 }] }),
    );
    let devices = plugin
        .list_devices(&devicerail_host_plugin_api::CallContext::unbounded())
        .expect("devices");
    let ids: Vec<&str> = devices.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(ids, ["browser-a", "browser-b"]);
    assert!(devices.iter().all(|d| d.platform
        == devicerail_host_plugin_api::protocol::Platform::Web
        && !d.connected));
}
