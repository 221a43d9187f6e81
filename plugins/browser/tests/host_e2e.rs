//! The browser plugin end to end through the real host binary, against
//! real Chromium and pages served by the test on 127.0.0.1.

mod common;
mod pages;

use devicerail_client::methods::{
    DeviceConnect, DeviceDisconnect, DeviceObserve, DevicesList, EventsList, SessionEnd,
    SessionStart, UiSnapshotGet,
};
use devicerail_host_testing::build_workspace_plugin;
use devicerail_host_testing::client::{HostClient, error_code, wire};
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

fn snapshot(host: &HostClient) -> (Value, Value) {
    let obs = wire(Ok(host.ok0::<DeviceObserve>()));
    let snap = wire(host.call::<UiSnapshotGet>(json!({ "observationId": obs["id"] })));
    (obs, snap)
}

#[test]
fn a_checkout_through_the_host() {
    common::require_browser();
    let _serial = common::serial();
    let server = common::TestServer::start(&[("/", PAGE)]);
    let lib = build_workspace_plugin("devicerail-host-plugin-browser", "browser");
    let host = HostClient::start(&[lib], &[("DEVICERAIL_BROWSER_VIEWPORT", "1024x700")]);
    let devices = wire(Ok(host.ok0::<DevicesList>()));
    assert_eq!(
        devices["devices"][0]["platform"],
        json!({ "kind": "web" }),
        "{devices}"
    );
    host.ok0::<DeviceConnect>();
    host.ok0::<SessionStart>();
    wire(host.execute("navigate", json!({ "url": server.url("/") })));

    let (obs, snap) = snapshot(&host);
    assert_eq!(obs["viewport"]["width"], 1024);
    assert_eq!(obs["viewport"]["height"], 700);
    assert_eq!(snap["context"]["contextKind"], "web");
    assert!(has_text(&snap, "Checkout"));

    let found = wire(host.execute(
        "findElement",
        json!({ "selector": { "role": "button", "name": "Pay now" } }),
    ));
    let element = found["output"]["element"].clone();
    assert!(element["stableNodeId"].is_string(), "{found}");
    let tapped = wire(host.execute(
        "tapElement",
        json!({ "target": { "kind": "node", "node": element } }),
    ));
    assert!(tapped["execution"]["mode"].is_string(), "{tapped}");
    let (_, after) = snapshot(&host);
    assert!(
        has_text(&after, "Paid"),
        "the next UI snapshot shows the change"
    );

    let set = wire(host.execute(
        "setElementValue",
        json!({ "target": { "kind": "selector", "selector": { "css": "#email" } }, "value": "ada@example.com" }),
    ));
    assert_eq!(set["execution"]["mode"], "webSemantic", "{set}");
    let (_, snap) = snapshot(&host);
    assert!(has_text(&snap, "ada@example.com"), "the value reads back");

    let waited = wire(host.execute(
        "waitForElement",
        json!({ "selector": { "identifier": "receipt" }, "condition": "visible" }),
    ));
    assert_eq!(waited["output"]["matched"], true, "{waited}");
    let r = host.execute_params(json!({
        "id": "5b0c2a1e-7d7f-4c5e-8b7a-2f3d4c5b6a79", "name": "waitForElement",
        "arguments": { "selector": { "identifier": "never-there" } }, "actionTimeoutMs": 500
    }));
    assert_eq!(error_code(&r), Some("action_timed_out"), "{r:?}");
    let events = wire(host.call::<EventsList>(Value::Null));
    let last = events
        .as_array()
        .and_then(|e| e.last().cloned())
        .expect("events");
    assert_eq!(last["payload"]["outcome"]["outcome"], "timedOut");

    host.ok::<SessionEnd>(Value::Null);
    host.ok0::<DeviceDisconnect>();
    host.finish().expect("the host exits 0 on EOF");
}

/// The last row of a 1,000-row table, beyond the snapshot's bounds, is
/// found by the live page search, tapped with its evidence recorded (the
/// partial tree it resolved against before, the screenshot after), and
/// its effect waited for: all through the host.
#[test]
fn the_last_row_of_a_thousand_through_the_host() {
    common::require_browser();
    let _serial = common::serial();
    const ROWS: usize = 1_000;
    let server = common::TestServer::start(&[("/table", &pages::table(ROWS))]);
    let lib = build_workspace_plugin("devicerail-host-plugin-browser", "browser");
    let host = HostClient::start(&[lib], &[("DEVICERAIL_BROWSER_VIEWPORT", "1280x800")]);
    host.ok0::<DeviceConnect>();
    host.ok0::<SessionStart>();
    wire(host.execute("navigate", json!({ "url": server.url("/table") })));
    let last = pages::person(ROWS - 1);

    // The snapshot stays within bounds and says what it left out; the
    // last row's name is not in it.
    let (obs, snap) = snapshot(&host);
    assert!(
        obs["metadata"]["uiTreeOmitted"]["nodes"]
            .as_u64()
            .is_some_and(|n| n > 0),
        "{}",
        obs["metadata"]
    );
    assert!(!has_text(&snap, &last));

    // queryElements finds it on the live page, with the partial tree it
    // resolved against recorded as the Action's before.
    let q = wire(host.execute(
        "queryElements",
        json!({ "selector": { "role": "cell", "name": last } }),
    ));
    assert_eq!(q["output"]["total"], 1, "{q}");
    let cell = q["output"]["nodes"][0]["stableNodeId"].clone();
    assert!(cell.is_string(), "{q}");
    let before_id = q["before"]["id"].clone();
    let resolved = wire(host.call::<UiSnapshotGet>(json!({ "observationId": before_id })));
    assert!(
        nodes(&resolved).iter().any(|n| n["stableNodeId"] == cell),
        "the recorded partial tree holds the match"
    );

    // findElement and tapElement by selector reach it.
    let found = wire(host.execute(
        "findElement",
        json!({ "selector": { "role": "cell", "name": last } }),
    ));
    assert_eq!(found["output"]["element"]["stableNodeId"], cell, "{found}");
    let tapped = wire(host.execute(
        "tapElement",
        json!({ "target": { "kind": "selector", "selector": {
            "css": format!("#people tbody tr:nth-child({ROWS}) button") } } }),
    ));
    // Synthesized mouse input at the checked point (DevTools has no
    // semantic press).
    assert_eq!(
        tapped["execution"]["mode"], "coordinateFallback",
        "{tapped}"
    );
    assert!(tapped["before"]["uiSnapshot"].is_object(), "{tapped}");
    assert!(tapped["after"]["screenshot"].is_object(), "{tapped}");
    let waited = wire(host.execute(
        "waitForElement",
        json!({ "selector": { "text": { "value": format!("Editing {last}") } }, "condition": "visible" }),
    ));
    assert_eq!(waited["output"]["matched"], true, "{waited}");

    // A selector naming no row on the page is not found, however large
    // the page.
    let r = host.execute(
        "tapElement",
        json!({ "target": { "kind": "selector", "selector": { "role": "cell", "name": pages::person(ROWS) } } }),
    );
    assert_eq!(error_code(&r), Some("element_not_found"), "{r:?}");

    host.ok::<SessionEnd>(Value::Null);
    host.ok0::<DeviceDisconnect>();
    host.finish().expect("the host exits 0 on EOF");
}

/// A tap on a form's submit button is followed to the page it posts to:
/// the after-Action observation is of that page (a screenshot raced
/// against its commit used to go unanswered for the whole 30 s budget),
/// and at a device scale factor of 2 the taps after it land on the
/// element they aim at (they landed at half their coordinates).
#[test]
fn a_submitted_form_is_followed_and_later_taps_land_where_they_aim() {
    common::require_browser();
    let _serial = common::serial();
    let mut rows = String::from(
        "<!doctype html><html><head><title>People</title></head><body><p id='status'>Nobody opened</p><table><tbody>",
    );
    for i in 0..1000 {
        rows.push_str(&format!(
            "<tr onclick=\"document.getElementById('status').textContent='Opened '+this.cells[1].textContent\"><td>{i}</td><td>Person {i:04}</td><td>person{i}@example.com</td><td><button>Edit</button></td></tr>"
        ));
    }
    rows.push_str("</tbody></table></body></html>");
    let web = common::TestServer::start(&[
        (
            "/form",
            "<!doctype html><title>Sign in</title><form method=post action='/done'><input id=name name=name><button id=go>Sign in</button></form>",
        ),
        (
            "/done",
            "<!doctype html><title>Done</title><h1 id=welcome>Welcome</h1>",
        ),
        ("/rows", &rows),
        (
            "/spa",
            "<!doctype html><title>App</title><form onsubmit=\"event.preventDefault(); document.getElementById('out').textContent='Saved'\"><button id=save>Save</button></form><p id=out>Unsaved</p>",
        ),
    ]);
    let lib = build_workspace_plugin("devicerail-host-plugin-browser", "browser");
    let host = HostClient::start(
        &[lib],
        &[
            ("DEVICERAIL_BROWSER_VIEWPORT", "1280x800"),
            ("DEVICERAIL_BROWSER_SCALE", "2"),
        ],
    );
    host.ok0::<DeviceConnect>();
    host.ok0::<SessionStart>();
    let by = |selector: Value| json!({ "target": { "kind": "selector", "selector": selector } });
    wire(host.execute("navigate", json!({ "url": web.url("/form") })));
    wire(host.execute(
        "setElementValue",
        json!({ "target": { "kind": "selector", "selector": { "identifier": "name" } }, "value": "ada" }),
    ));
    let submitted = wire(host.execute("tapElement", by(json!({ "identifier": "go" }))));
    assert!(
        submitted["after"]["screenshot"].is_object(),
        "the page after the submit is observed: {}",
        submitted["after"]
    );
    let (_, after) = snapshot(&host);
    assert!(has_text(&after, "Welcome"), "{after}");
    // A form the page handles itself (no navigation) is tapped as any
    // button.
    wire(host.execute("navigate", json!({ "url": web.url("/spa") })));
    wire(host.execute("tapElement", by(json!({ "identifier": "save" }))));
    let (_, saved) = snapshot(&host);
    assert!(has_text(&saved, "Saved"), "{saved}");
    wire(host.execute("navigate", json!({ "url": web.url("/rows") })));
    let opened = |host: &HostClient| {
        let q = wire(host.execute(
            "queryElements",
            json!({ "selector": { "text": { "value": "Opened", "mode": "contains" } } }),
        ));
        q["output"]["nodes"][0]["text"].clone()
    };
    // One row scrolled to the middle, then the last (at the bottom edge).
    for row in ["Person 0984", "Person 0999"] {
        wire(host.execute("tapElement", by(json!({ "role": "cell", "name": row }))));
        assert_eq!(opened(&host), format!("Opened {row}"));
    }
}

/// A screenshot is started right after an input only while the host's
/// observations take screenshots: under `screenshotPolicy = "omit"` none
/// is (nobody would take it, and it competes with the page), under
/// `capture` one is (the after-Action observation takes it).
#[test]
fn an_early_capture_starts_only_while_observations_take_screenshots() {
    common::require_browser();
    let _serial = common::serial();
    let server = common::TestServer::start(&[("/", PAGE)]);
    let lib = build_workspace_plugin("devicerail-host-plugin-browser", "browser");
    for (policy, started) in [("omit", false), ("capture", true)] {
        let host = HostClient::start(
            std::slice::from_ref(&lib),
            &[
                ("DEVICERAIL_SCREENSHOT_POLICY", policy),
                (
                    "RUST_LOG",
                    "info,devicerail_plugin_api=debug,devicerail_host_engine::worker=debug",
                ),
            ],
        );
        host.ok0::<DeviceConnect>();
        host.ok0::<SessionStart>();
        wire(host.execute("navigate", json!({ "url": server.url("/") })));
        let _ = snapshot(&host);
        for _ in 0..2 {
            wire(host.execute(
                "tapElement",
                json!({ "target": { "kind": "selector", "selector": { "identifier": "pay" } } }),
            ));
        }
        let log = host.stderr();
        assert_eq!(
            log.contains("started the screenshot of the screen after the input"),
            started,
            "{policy}: {log}"
        );
    }
}
