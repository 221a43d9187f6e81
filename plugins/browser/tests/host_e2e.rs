//! The browser plugin end to end through the real host binary, against
//! real Chromium and pages served by the test on 127.0.0.1.

mod common;

use devicerail_testing::build_workspace_plugin;
use devicerail_testing::host_process::HostProcess;
use serde_json::{Value, json};

const PAGE: &str = r#"<!doctype html><html><head><title>Checkout</title></head><body>
<h1 id="heading">Checkout</h1>
<label for="email">Email</label><input id="email" type="email">
<button id="pay" onclick="document.getElementById('heading').textContent='Paid';
  setTimeout(function(){var d=document.createElement('p');d.id='receipt';d.textContent='Receipt 42';document.body.appendChild(d);},400);">Pay now</button>
</body></html>"#;

fn nodes(snapshot: &Value) -> Vec<Value> {
    snapshot["nodes"].as_array().cloned().unwrap_or_default()
}

fn has_text(snapshot: &Value, text: &str) -> bool {
    nodes(snapshot)
        .iter()
        .any(|n| n["name"] == text || n["text"] == text || n["value"] == text)
}

fn snapshot(host: &mut HostProcess) -> (Value, Value) {
    let obs = host.ok("device.observe", None);
    let snap = host.ok(
        "ui.snapshot.get",
        Some(json!({ "observationId": obs["id"] })),
    );
    (obs, snap)
}

#[test]
fn a_checkout_through_the_host() {
    common::require_browser();
    let _serial = common::serial();
    let server = common::TestServer::start(&[("/", PAGE)]);
    let lib = build_workspace_plugin("devicerail-plugin-browser", "browser");
    let mut host = HostProcess::start(&[lib], &[("DEVICERAIL_BROWSER_VIEWPORT", "1024x700")]);
    host.hello();
    let devices = host.ok("devices.list", None);
    assert_eq!(
        devices["devices"][0]["platform"],
        json!({ "kind": "web" }),
        "{devices}"
    );
    host.ok("device.connect", None);
    host.ok("session.start", None);
    let r = host.execute("navigate", json!({ "url": server.url("/") }));
    assert!(r.get("result").is_some(), "{r}");

    let (obs, snap) = snapshot(&mut host);
    assert_eq!(obs["viewport"]["width"], 1024);
    assert_eq!(obs["viewport"]["height"], 700);
    assert_eq!(snap["context"]["contextKind"], "web");
    assert!(has_text(&snap, "Checkout"));

    // Find the button by role and name, tap it, see the page change.
    let found = host.execute(
        "findElement",
        json!({ "selector": { "role": "button", "name": "Pay now" } }),
    );
    let element = found["result"]["output"]["element"].clone();
    assert!(element["stableNodeId"].is_string(), "{found}");
    let tapped = host.execute(
        "tapElement",
        json!({ "target": { "kind": "node", "node": element } }),
    );
    assert!(tapped.get("result").is_some(), "{tapped}");
    assert!(tapped["result"]["execution"]["mode"].is_string());
    let (_, after) = snapshot(&mut host);
    assert!(
        has_text(&after, "Paid"),
        "the next UI snapshot shows the change"
    );

    // setElementValue, then read it back.
    let set = host.execute(
        "setElementValue",
        json!({ "target": { "kind": "selector", "selector": { "css": "#email" } }, "value": "ada@example.com" }),
    );
    assert_eq!(set["result"]["execution"]["mode"], "webSemantic", "{set}");
    let (_, snap) = snapshot(&mut host);
    assert!(has_text(&snap, "ada@example.com"), "the value reads back");

    // An element that appears after a delay, and a wait that times out.
    let waited = host.execute(
        "waitForElement",
        json!({ "selector": { "identifier": "receipt" }, "condition": "visible" }),
    );
    assert_eq!(waited["result"]["output"]["matched"], true, "{waited}");
    let id = host.request(
        "device.execute",
        Some(
            json!({ "id": "5b0c2a1e-7d7f-4c5e-8b7a-2f3d4c5b6a79", "name": "waitForElement",
            "arguments": { "selector": { "identifier": "never-there" } }, "actionTimeoutMs": 500 }),
        ),
        None,
    );
    let r = host.response(&id);
    assert_eq!(r["error"]["data"]["code"], "action_timed_out", "{r}");
    let events = host.ok("events.list", None);
    let last = events
        .as_array()
        .and_then(|e| e.last().cloned())
        .expect("events");
    assert_eq!(last["payload"]["outcome"]["outcome"], "timedOut");

    host.ok("session.end", None);
    host.ok("device.disconnect", None);
    assert!(host.finish().success());
}
