//! The iOS Simulator plugin end to end through the real host binary, with
//! the fake `xcrun` and the fake WebDriverAgent.

use devicerail_client::methods::{
    DeviceCapabilities, DeviceConnect, DeviceObserve, DevicesList, SessionEnd, SessionExport,
    SessionStart, UiSnapshotGet,
};
use devicerail_host_testing::build_workspace_plugin;
use devicerail_host_testing::client::{HostClient, wire};
use devicerail_ios_simulator_fakes::sim_state::SE_UDID;
use devicerail_ios_simulator_fakes::{FakeSimulators, FakeWdaOptions};
use serde_json::{Value, json};

fn selector(s: Value) -> Value {
    json!({ "target": { "kind": "selector", "selector": s } })
}

#[test]
fn a_login_flow_through_the_host() {
    let sims = FakeSimulators::new().expect("fake simulators");
    let wda = sims
        .wda(SE_UDID, FakeWdaOptions::default())
        .expect("fake WDA");
    let lib = build_workspace_plugin("devicerail-host-plugin-ios-simulator", "ios-simulator");
    let xcrun = sims.xcrun().display().to_string();
    let url = wda.url();
    let host = HostClient::start(
        &[lib],
        &[
            ("DEVICERAIL_XCRUN", &xcrun),
            ("DEVICERAIL_IOS_WDA_URL", &url),
        ],
    );
    let devices = wire(Ok(host.ok0::<DevicesList>()));
    assert_eq!(devices["devices"][0]["id"], SE_UDID, "{devices}");
    assert_eq!(devices["devices"][0]["platform"], json!({ "kind": "ios" }));
    assert!(host.ok0::<DeviceConnect>().connected);
    let caps = wire(Ok(host.ok0::<DeviceCapabilities>()));
    let names: Vec<&str> = caps
        .as_array()
        .expect("actions")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    for expected in [
        "tap",
        "swipe",
        "inputText",
        "inputSecret",
        "launchApp",
        "openUrl",
        "findElement",
        "waitForElement",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    host.ok0::<SessionStart>();
    let obs = wire(Ok(host.ok0::<DeviceObserve>()));
    assert!(obs["screenshot"]["sha256"].is_string(), "{obs}");
    assert_eq!(obs["uiSnapshot"]["context"]["contextKind"], "native");
    let snap = wire(Ok(
        host.ok::<UiSnapshotGet>(json!({ "observationId": obs["id"] }))
    ));
    assert!(snap["nodes"].as_array().is_some_and(|n| n.len() > 5));
    // A success decoded by the client is the check; the wire JSON of the
    // typed result is what the assertions read.
    wire(host.execute(
        "setElementValue",
        json!({ "target": selector(json!({ "role": "textField" }))["target"], "value": "grace" }),
    ));
    wire(host.execute("tapElement", selector(json!({ "role": "secureTextField" }))));
    let secret = "hopper-never-logged";
    let r = wire(host.execute("inputSecret", json!({ "text": secret })));
    assert_eq!(r["after"]["screenshotOmission"], "protectedAction", "{r}");
    let r = wire(host.execute(
        "tapElement",
        selector(json!({ "role": "button", "name": "Sign In" })),
    ));
    assert!(r["execution"]["mode"].is_string(), "{r}");
    let r = wire(host.execute(
        "waitForElement",
        json!({ "selector": { "text": { "value": "Welcome, grace", "mode": "contains" } }, "condition": "visible" }),
    ));
    assert_eq!(r["output"]["matched"], true, "{r}");
    let export = wire(host.call::<SessionExport>(Value::Null)).to_string();
    assert!(!export.contains(secret), "the secret reached the event log");
    host.ok::<SessionEnd>(Value::Null);
    let stderr = host.finish().expect("the host exits 0 on EOF");
    assert!(
        !stderr.contains(secret),
        "the secret reached the host's logs"
    );
}
