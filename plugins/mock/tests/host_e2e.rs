//! The mock plugin end to end through the real host binary.

use devicerail_testing::build_workspace_plugin;
use devicerail_testing::host_process::HostProcess;
use serde_json::json;

#[test]
fn the_mock_serves_through_the_host() {
    let lib = build_workspace_plugin("devicerail-plugin-mock", "mock");
    let mut host = HostProcess::start(&[lib], &[]);
    host.hello();
    assert_eq!(host.ok("devices.list", None)["devices"][0]["id"], "mock-1");
    host.ok("device.connect", None);
    host.ok("session.start", None);
    let obs = host.ok("device.observe", None);
    assert_eq!(obs["viewport"]["width"], 720);
    let found = host.execute(
        "findElement",
        json!({ "selector": { "role": "button", "name": "Sign in" } }),
    );
    assert_eq!(
        found["result"]["output"]["element"]["stableNodeId"], "sign-in",
        "{found}"
    );
    host.ok("session.end", None);
    assert!(host.finish().success());
}
