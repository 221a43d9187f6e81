//! The plugin, loaded as a real cdylib and pointed at the fakes, passes the
//! conformance kit; so does the driver called in process.

mod common;

use common::Rig;
use devicerail_host_plugin_api::Driver;
use devicerail_host_plugin_api::conformance::Suite;
use devicerail_ios_simulator_fakes::FakeSimulators;
use devicerail_ios_simulator_fakes::sim_state::SE_UDID;
use devicerail_plugin_ios_simulator::{Config, IosSimulatorDriver};

#[test]
fn loaded_plugin_passes_the_conformance_kit() {
    let rig = Rig::new();
    assert_eq!(rig.plugin.manifest().id, "ios-simulator");
    Suite::loaded(&rig.plugin)
        .device(SE_UDID)
        .run()
        .assert_passed();
}

#[test]
fn loaded_plugin_passes_with_simctl_screenshots_first() {
    let rig = Rig::with(
        Default::default(),
        serde_json::json!({ "screenshot": "simctl" }),
    );
    Suite::loaded(&rig.plugin)
        .device(SE_UDID)
        .run()
        .assert_passed();
}

#[test]
fn in_process_driver_passes_the_conformance_kit() {
    let sims = FakeSimulators::new().expect("fake simulators");
    let wda = sims.wda(SE_UDID, Default::default()).expect("fake WDA");
    let driver = IosSimulatorDriver::with_config(Config {
        xcrun: sims.xcrun().to_path_buf(),
        xcrun_explicit: true,
        wda_url: wda.url(),
        ..Config::default()
    });
    Suite::new(&driver).device(SE_UDID).run().assert_passed();
    assert!(!driver.doctor().is_empty());
}
