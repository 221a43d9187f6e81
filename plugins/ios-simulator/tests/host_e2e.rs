//! The iOS Simulator plugin end to end through the real host binary, with
//! the fake `xcrun` and the fake WebDriverAgent.

use devicerail_ios_simulator_fakes::sim_state::SE_UDID;
use devicerail_ios_simulator_fakes::{FakeSimulators, FakeWdaOptions};
use devicerail_testing::build_workspace_plugin;
use devicerail_testing::host_process::HostProcess;
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
    let lib = build_workspace_plugin("devicerail-plugin-ios-simulator", "ios-simulator");
    let xcrun = sims.xcrun().display().to_string();
    let url = wda.url();
    let mut host = HostProcess::start(
        &[lib],
        &[
            ("DEVICERAIL_XCRUN", &xcrun),
            ("DEVICERAIL_IOS_WDA_URL", &url),
        ],
    );
    host.hello();
    let devices = host.ok("devices.list", None);
    assert_eq!(devices["devices"][0]["id"], SE_UDID, "{devices}");
    assert_eq!(devices["devices"][0]["platform"], json!({ "kind": "ios" }));
    assert_eq!(host.ok("device.connect", None)["connected"], true);
    let caps = host.ok("device.capabilities", None);
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
    host.ok("session.start", None);
    let obs = host.ok("device.observe", None);
    assert!(obs["screenshot"]["sha256"].is_string(), "{obs}");
    assert_eq!(obs["uiSnapshot"]["context"]["contextKind"], "native");
    let snap = host.ok(
        "ui.snapshot.get",
        Some(json!({ "observationId": obs["id"] })),
    );
    assert!(snap["nodes"].as_array().is_some_and(|n| n.len() > 5));
    let r = host.execute(
        "setElementValue",
        json!({ "target": selector(json!({ "role": "textField" }))["target"], "value": "grace" }),
    );
    assert!(r.get("result").is_some(), "{r}");
    let r = host.execute("tapElement", selector(json!({ "role": "secureTextField" })));
    assert!(r.get("result").is_some(), "{r}");
    let secret = "hopper-never-logged";
    let r = host.execute("inputSecret", json!({ "text": secret }));
    assert!(r.get("result").is_some(), "{r}");
    assert_eq!(
        r["result"]["after"]["screenshotOmission"],
        "protectedAction"
    );
    let r = host.execute(
        "tapElement",
        selector(json!({ "role": "button", "name": "Sign In" })),
    );
    assert!(r.get("result").is_some(), "{r}");
    assert!(r["result"]["execution"]["mode"].is_string());
    let r = host.execute(
        "waitForElement",
        json!({ "selector": { "text": { "value": "Welcome, grace", "mode": "contains" } }, "condition": "visible" }),
    );
    assert_eq!(r["result"]["output"]["matched"], true, "{r}");
    let export = host.ok("session.export", None).to_string();
    assert!(!export.contains(secret), "the secret reached the event log");
    host.ok("session.end", None);
    let stderr = host.stderr();
    assert!(
        !stderr.contains(secret),
        "the secret reached the host's logs"
    );
    assert!(host.finish().success());
}
