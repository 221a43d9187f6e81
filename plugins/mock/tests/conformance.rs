//! The mock plugin, loaded as a real cdylib, passes the conformance kit.

use devicerail_host_plugin_api::conformance::Suite;
use devicerail_host_plugin_api::{CallContext, Driver};
use devicerail_host_testing::load_workspace_plugin;

#[test]
fn loaded_mock_passes_the_conformance_kit() {
    let plugin = load_workspace_plugin("devicerail-host-plugin-mock", "mock");
    assert_eq!(plugin.manifest().id, "mock");
    Suite::loaded(&plugin)
        .device("mock-1")
        .run()
        .assert_passed();
}

#[test]
fn in_process_mock_passes_the_conformance_kit() {
    let driver = devicerail_plugin_mock::MockDriver::with_faults(false);
    Suite::new(&driver).device("mock-1").run().assert_passed();
}

#[test]
fn loaded_mock_lists_mock_1() {
    let plugin = load_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let devices = plugin
        .list_devices(&CallContext::unbounded())
        .expect("devices");
    assert_eq!(devices.len(), 1);
    assert_eq!(devices[0].id.as_str(), "mock-1");
}
