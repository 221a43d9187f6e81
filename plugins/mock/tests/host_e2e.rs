//! The mock plugin end to end through the real host binary, driven by the
//! official Rust client.

use devicerail_client::methods::{
    DeviceConnect, DeviceObserve, DevicesList, SessionEnd, SessionStart,
};
use devicerail_client::protocol::FindElementResult;
use devicerail_host_testing::build_workspace_plugin;
use devicerail_host_testing::client::HostClient;
use serde_json::{Value, json};

#[test]
fn the_mock_serves_through_the_host() {
    let lib = build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let host = HostClient::start(&[lib], &[]);
    assert_eq!(host.ok0::<DevicesList>().devices[0].id.0, "mock-1");
    host.ok0::<DeviceConnect>();
    host.ok0::<SessionStart>();
    let obs = host.ok0::<DeviceObserve>();
    assert_eq!(obs.viewport.width, 720);
    let found = host
        .execute(
            "findElement",
            json!({ "selector": { "role": "button", "name": "Sign in" } }),
        )
        .expect("findElement");
    let found: FindElementResult = serde_json::from_value(found.output).expect("typed output");
    assert_eq!(found.element.stable_node_id, "sign-in");
    host.ok::<SessionEnd>(Value::Null);
    host.finish().expect("the host exits 0 on EOF");
}
