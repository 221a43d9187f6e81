//! The Android plugin, loaded as a real cdylib and driving a fake device
//! through a real adb server, passes the conformance kit.

mod support;

use devicerail_host_plugin_api::conformance::Suite;

#[test]
fn loaded_android_plugin_passes_the_conformance_kit() {
    let Some(server) = support::server() else {
        return;
    };
    let (_fake, serial) = support::online(&server);
    let plugin = support::plugin(&server);
    assert_eq!(plugin.manifest().id, "android");
    Suite::loaded(&plugin).device(&serial).run().assert_passed();
}

#[test]
fn conformance_with_device_side_png_screenshots() {
    let Some(server) = support::server() else {
        return;
    };
    let (_fake, serial) = support::online(&server);
    let plugin = support::plugin_with(&server, serde_json::json!({ "screenshotMode": "png" }));
    Suite::loaded(&plugin).device(&serial).run().assert_passed();
}
