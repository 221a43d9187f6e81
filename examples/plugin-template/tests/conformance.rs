//! The plugin, built and loaded as the real cdylib the host would load,
//! passes the DeviceRail conformance kit and behaves as documented.

use devicerail_plugin_api::conformance::{Suite, load_workspace_plugin};
use devicerail_plugin_api::protocol::{ActionCall, CallId, DeviceId, ErrorCode};
use devicerail_plugin_api::{CallContext, Driver, ObserveRequest};
use serde_json::{Value, json};

fn call(name: &str, arguments: Value) -> ActionCall {
    ActionCall {
        id: CallId::new_v4(),
        name: name.into(),
        arguments,
    }
}

#[test]
fn the_loaded_plugin_passes_the_conformance_kit() {
    let plugin = load_workspace_plugin("devicerail-plugin-hello", "hello");
    assert_eq!(plugin.manifest().id, "hello");
    Suite::new(&plugin).device("hello-1").run().assert_passed();
}

#[test]
fn the_loaded_plugin_draws_taps_and_greets() {
    let plugin = load_workspace_plugin("devicerail-plugin-hello", "hello");
    let ctx = CallContext::unbounded();
    let device = DeviceId::new("hello-1");
    plugin.connect(&ctx, &device).expect("connect");

    let shot = ObserveRequest {
        screenshot: true,
        ui_tree: false,
    };
    let before = plugin.observe(&ctx, &device, &shot).expect("observe");
    let out = plugin
        .execute(&ctx, &device, &call("tap", json!({ "x": 10, "y": 20 })))
        .expect("tap");
    assert_eq!(out.output, json!({ "accepted": true, "x": 10, "y": 20 }));
    let after = plugin.observe(&ctx, &device, &shot).expect("observe");
    assert_ne!(before.png, after.png, "the tap marker is not drawn");
    assert_eq!(after.metadata["taps"], 1);

    let out = plugin
        .execute(&ctx, &device, &call("greet", json!({ "name": "Ada" })))
        .expect("greet");
    assert_eq!(out.output, json!({ "greeting": "Hello, Ada!" }));

    let outside = plugin.execute(&ctx, &device, &call("tap", json!({ "x": 100000, "y": 0 })));
    assert_eq!(
        outside.map_err(|e| e.code),
        Err(ErrorCode::InvalidArguments.as_str().to_owned())
    );
    plugin.disconnect(&ctx, &device).expect("disconnect");
}
