//! The mock's action space (fault injection on), byte for byte as clients
//! see it.

use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{CallContext, Driver, PluginConfig};

#[test]
fn the_action_space_is_stable() {
    // SAFETY: set before any other thread of this test binary reads it.
    unsafe { std::env::set_var(devicerail_plugin_mock::FAULTS_ENV, "1") };
    let driver = devicerail_plugin_mock::MockDriver::new(&PluginConfig::default()).expect("driver");
    let caps = driver
        .capabilities(&CallContext::unbounded(), &DeviceId::new("mock-1"))
        .expect("capabilities");
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/capabilities.json");
    devicerail_host_testing::assert_golden(&path, &caps);
}
