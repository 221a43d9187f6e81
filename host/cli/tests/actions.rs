//! `device.capabilities`, `device.observe` and `device.execute` through the
//! mock: evidence, redaction, semantic actions, the screenshot policy.

mod support;

use support::client::Launch as _;

use serde_json::{Value, json};
use support::client::{ClientHost, action, hello, hello_with, ready};
use support::{Options, TestHost, error_code};

fn names(caps: &Value) -> Vec<String> {
    caps.as_array()
        .expect("actions")
        .iter()
        .map(|a| a["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

async fn events(h: &ClientHost) -> Vec<Value> {
    h.ok("events.list", Some(json!({})))
        .await
        .as_array()
        .expect("events")
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capabilities_hide_what_was_not_negotiated() {
    let h = ClientHost::start(Options::default(), hello_with(&["events.snapshot.v1"]))
        .await
        .expect("the host starts");
    let caps = h.ok("device.capabilities", None).await;
    assert_eq!(names(&caps), ["tap", "inputText", "scroll", "launchApp"]);
    let h = ClientHost::started().await;
    let caps = h.ok("device.capabilities", None).await;
    assert_eq!(
        names(&caps),
        [
            "tap",
            "inputText",
            "scroll",
            "inputSecret",
            "findElement",
            "tapElement",
            "clearElement",
            "setElementValue",
            "waitForElement",
            "launchApp"
        ]
    );
    let secret = caps
        .as_array()
        .expect("actions")
        .iter()
        .find(|a| a["name"] == "inputSecret")
        .cloned()
        .expect("inputSecret");
    assert_eq!(secret["protection"], "protected");
    assert!(caps[0]["inputSchema"]["properties"]["x"].is_object());
}

/// Raw: the official client refuses to send a semantic Action without
/// its feature (it checks locally), so the host's answer is checked here.
#[test]
fn protected_and_semantic_actions_need_their_features() {
    let mut h = TestHost::start();
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &["events.snapshot.v1"],
    );
    h.ok("device.connect", None);
    h.ok("session.start", None);
    let r = h.call(
        "device.execute",
        Some(TestHost::action("inputSecret", json!({ "text": "pw" }))),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("protected_action_not_negotiated"),
        "{r}"
    );
    assert_eq!(r["error"]["code"], -32601);
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "action": "inputSecret", "requiredFeature": "action.protected.v1" })
    );
    let r = h.call(
        "device.execute",
        Some(TestHost::action(
            "findElement",
            json!({ "selector": { "identifier": "username" } }),
        )),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("semantic_action_not_negotiated")
    );
    assert_eq!(
        r["error"]["data"]["details"],
        json!({ "action": "findElement", "requiredFeature": "device.semanticActions.v1" })
    );
    assert_eq!(
        h.ok("events.list", None).as_array().map(Vec::len),
        Some(1),
        "rejected calls record nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observe_stores_content_addressed_evidence() {
    let h = ClientHost::started().await;
    ready(&h).await;
    let a = h.ok("device.observe", None).await;
    let b = h.ok("device.observe", None).await;
    assert_eq!(
        a["viewport"],
        json!({ "width": 720, "height": 1280, "scaleFactor": 2.0 })
    );
    let shot = &a["screenshot"];
    let sha = shot["sha256"].as_str().expect("sha256");
    assert_eq!(shot["id"], format!("sha256:{sha}"));
    assert_eq!(shot["uri"], format!("devicerail://assets/sha256/{sha}"));
    assert_eq!(shot["mediaType"], "image/png");
    assert_eq!(
        b["screenshot"], a["screenshot"],
        "unchanged screen, same Evidence"
    );
    assert_ne!(a["id"], b["id"]);
    // Small Evidence is stored in the event store, with its event.
    let db = rusqlite::Connection::open_with_flags(
        h.root.join("data/events.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the store");
    let bytes: Vec<u8> = db
        .query_row("SELECT bytes FROM blobs WHERE sha256 = ?1", [sha], |r| {
            r.get(0)
        })
        .expect("the screenshot blob");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(devicerail_host_store::evidence::sha256_hex(&bytes), sha);
    let ev = events(&h).await;
    assert_eq!(ev[1]["payload"]["type"], "observationCaptured");
    assert_eq!(ev[1]["payload"]["observation"], a);
}

/// The observation after an Action records the UI tree as well, so the
/// Action's record holds what it changed (`afterActionTree`, on by
/// default); the wire shape stays the protocol's `Observation`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_records_the_tree_after_it_unless_configured_off() {
    let h = ClientHost::started().await;
    ready(&h).await;
    let r = h
        .ok(
            "device.execute",
            Some(action("tap", json!({ "x": 100, "y": 300 }))),
        )
        .await;
    let after = &r["after"];
    assert!(after["screenshot"].is_object(), "{r}");
    assert!(after["uiSnapshot"].is_object(), "{r}");
    let tree = h
        .ok(
            "ui.snapshot.get",
            Some(json!({ "observationId": after["id"] })),
        )
        .await;
    assert_eq!(tree["observationId"], after["id"]);
    let username = tree["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["stableNodeId"] == "username"))
        .cloned()
        .expect("the username field");
    assert_eq!(username["role"], "textField");

    let off = ClientHost::start(
        Options {
            config: Some("[host]\nafterActionTree = false\n".into()),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts");
    ready(&off).await;
    let r = off
        .ok(
            "device.execute",
            Some(action("tap", json!({ "x": 100, "y": 300 }))),
        )
        .await;
    assert!(r["after"]["screenshot"].is_object(), "{r}");
    assert_eq!(r["after"].get("uiSnapshot"), None, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn screenshot_policy_omit() {
    let h = ClientHost::start(
        Options {
            screenshot_policy: Some("omit"),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts");
    ready(&h).await;
    let obs = h.ok("device.observe", None).await;
    assert_eq!(obs["screenshot"], Value::Null);
    assert_eq!(obs["screenshotOmission"], "policy");
    assert!(
        obs["uiSnapshot"].is_object(),
        "UI trees are not screenshots"
    );
    let r = h
        .ok(
            "device.execute",
            Some(action("tap", json!({ "x": 100, "y": 300 }))),
        )
        .await;
    assert_eq!(r["after"]["screenshotOmission"], "policy");
    assert_eq!(r["evidence"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn actions_record_started_and_completed() {
    let h = ClientHost::started().await;
    ready(&h).await;
    let call = action("tap", json!({ "x": 100, "y": 300 }));
    let r = h.ok("device.execute", Some(call.clone())).await;
    assert_eq!(r["callId"], call["id"]);
    assert_eq!(r["output"]["hit"], "username");
    assert_eq!(r["before"], Value::Null);
    assert_eq!(r["after"]["deviceId"], "mock-1");
    assert_eq!(r["evidence"], json!([r["after"]["screenshot"]]));
    assert!(r["finishedAtMs"].as_u64() >= r["startedAtMs"].as_u64());
    let ev = events(&h).await;
    assert_eq!(
        ev[1]["payload"],
        json!({ "type": "actionStarted", "call": call })
    );
    assert_eq!(ev[2]["payload"]["type"], "actionCompleted");
    assert_eq!(ev[2]["payload"]["callId"], call["id"]);
    assert_eq!(
        ev[2]["payload"]["outcome"],
        json!({ "outcome": "succeeded", "result": r })
    );
    // A failing action: started + failed, answered with the driver error.
    let bad = action("tap", json!({ "x": "left" }));
    let resp = h.answer("device.execute", Some(bad.clone())).await;
    assert_eq!(error_code(&resp).as_deref(), Some("invalid_arguments"));
    assert_eq!(resp["error"]["code"], -32000);
    let ev = events(&h).await;
    assert_eq!(ev[3]["payload"]["call"], bad);
    assert_eq!(ev[4]["payload"]["outcome"]["outcome"], "failed");
    assert_eq!(
        ev[4]["payload"]["outcome"]["error"]["code"],
        "invalid_arguments"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_protected_actions_are_redacted() {
    let h = ClientHost::started().await;
    ready(&h).await;
    let unknown = action("selfDestruct", json!({ "code": "0000" }));
    let r = h.answer("device.execute", Some(unknown.clone())).await;
    assert_eq!(error_code(&r).as_deref(), Some("unknown_action"));
    h.ok(
        "device.execute",
        Some(action("tap", json!({ "x": 100, "y": 440 }))),
    )
    .await;
    let secret = "correct-horse-battery-staple";
    let protected = action("inputSecret", json!({ "text": secret }));
    let r = h.ok("device.execute", Some(protected.clone())).await;
    assert_eq!(r["after"]["screenshot"], Value::Null);
    assert_eq!(r["after"]["screenshotOmission"], "protectedAction");
    assert_eq!(r["evidence"], json!([]));
    // A protected call with bad arguments must not leak them either.
    let leaky = action("inputSecret", json!({ "text": 42, "note": secret }));
    assert_eq!(
        h.err("device.execute", Some(leaky)).await,
        "invalid_arguments"
    );
    let ev = events(&h).await;
    let started: Vec<&Value> = ev
        .iter()
        .filter(|e| e["payload"]["type"] == "actionStarted")
        .collect();
    assert_eq!(
        started[0]["payload"]["call"],
        json!({ "id": unknown["id"], "name": "selfDestruct", "arguments": null, "argumentsRedacted": true })
    );
    assert_eq!(
        started[2]["payload"]["call"],
        json!({ "id": protected["id"], "name": "inputSecret", "arguments": null, "argumentsRedacted": true })
    );
    assert!(
        started[1]["payload"]["call"]
            .get("argumentsRedacted")
            .is_none()
    );
    let export = h.ok("session.export", Some(json!({}))).await.to_string();
    assert!(!export.contains(secret), "the secret reached the event log");
    assert!(
        !export.contains("0000\""),
        "unknown action arguments reached the event log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_never_reach_logs_or_data_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().to_path_buf();
    let mut h = ClientHost::start_owned(
        Options {
            root: Some(root.clone()),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts");
    ready(&h).await;
    let secret = "s3cr3t-Value-never-logged";
    h.ok(
        "device.execute",
        Some(action("tap", json!({ "x": 100, "y": 440 }))),
    )
    .await;
    h.ok(
        "device.execute",
        Some(action("inputSecret", json!({ "text": secret }))),
    )
    .await;
    h.ok("session.end", Some(json!({}))).await;
    h.client.close().await.expect("close");
    let status = h.wait().await;
    assert!(status.success());
    let stderr = h.stderr_text();
    assert!(!stderr.contains(secret), "the secret reached the logs");
    for entry in walk(&root.join("data")) {
        let bytes = std::fs::read(&entry).expect("read");
        let hay = String::from_utf8_lossy(&bytes);
        assert!(
            !hay.contains(secret),
            "the secret reached {}",
            entry.display()
        );
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantic_actions_resolve_against_recorded_observations() {
    let h = ClientHost::started().await;
    ready(&h).await;
    let found = h
        .ok(
            "device.execute",
            Some(action(
                "findElement",
                json!({ "selector": { "role": "button", "name": "Sign in" } }),
            )),
        )
        .await;
    let element = found["output"]["element"].clone();
    assert_eq!(element["stableNodeId"], "sign-in");
    assert_eq!(element["context"]["documentEpoch"], "mock-epoch-1");
    assert_eq!(found["before"]["id"], element["observationId"]);
    assert!(found["before"]["uiSnapshot"].is_object());
    // The node reference resolves to the tree it was found in.
    let snap = h
        .ok(
            "ui.snapshot.get",
            Some(json!({ "observationId": element["observationId"] })),
        )
        .await;
    assert!(
        snap["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .any(|n| n["stableNodeId"] == "sign-in")
    );
    // setElementValue by selector, then read the value back.
    let set = h.ok(
        "device.execute",
        Some(action("setElementValue", json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } }, "value": "ada" }))),
    ).await;
    assert_eq!(set["execution"]["mode"], "nativeSemantic");
    let obs = h.ok("device.observe", None).await;
    let snap = h
        .ok(
            "ui.snapshot.get",
            Some(json!({ "observationId": obs["id"] })),
        )
        .await;
    let user = snap["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| n["stableNodeId"] == "username")
        .cloned()
        .expect("username");
    assert_eq!(user["value"], "ada");
    h.ok(
        "device.execute",
        Some(action("setElementValue", json!({ "target": { "kind": "selector", "selector": { "identifier": "password" } }, "value": "pw" }))),
    ).await;
    // Disabled elements are not actionable.
    assert_eq!(
        h.err(
            "device.execute",
            Some(action(
                "tapElement",
                json!({ "target": { "kind": "selector", "selector": { "identifier": "help" } } })
            ))
        )
        .await,
        "element_not_interactable"
    );
    assert_eq!(
        h.err(
            "device.execute",
            Some(action(
                "findElement",
                json!({ "selector": { "role": "button" } })
            ))
        )
        .await,
        "element_ambiguous"
    );
    assert_eq!(
        h.err(
            "device.execute",
            Some(action(
                "findElement",
                json!({ "selector": { "identifier": "nope" } })
            ))
        )
        .await,
        "element_not_found"
    );
    // Tap the button found earlier by its node reference: navigates.
    let tapped = h
        .ok(
            "device.execute",
            Some(action(
                "tapElement",
                json!({ "target": { "kind": "node", "node": element } }),
            )),
        )
        .await;
    assert_eq!(tapped["output"]["element"]["stableNodeId"], "sign-in");
    // The old reference is stale on the new screen.
    assert_eq!(
        h.err(
            "device.execute",
            Some(action(
                "tapElement",
                json!({ "target": { "kind": "node", "node": element } })
            ))
        )
        .await,
        "element_stale"
    );
    // The sign-out button appears after a delay.
    let waited = h
        .ok(
            "device.execute",
            Some(action(
                "waitForElement",
                json!({ "selector": { "identifier": "sign-out" }, "condition": "visible" }),
            )),
        )
        .await;
    assert_eq!(waited["output"]["matched"], true);
    assert_eq!(waited["output"]["element"]["stableNodeId"], "sign-out");
    assert_eq!(
        waited["output"]["element"]["context"]["documentEpoch"],
        "mock-epoch-2"
    );
    let gone = h
        .ok(
            "device.execute",
            Some(action(
                "waitForElement",
                json!({ "selector": { "identifier": "username" }, "condition": "absent" }),
            )),
        )
        .await;
    assert_eq!(
        gone["output"],
        json!({ "matched": true, "condition": "absent", "element": null })
    );
}
