//! `device.capabilities`, `device.observe` and `device.execute` through the
//! mock: evidence, redaction, semantic actions, the screenshot policy.

mod support;

use serde_json::{Value, json};
use support::{Options, TestHost, error_code};

fn names(caps: &Value) -> Vec<String> {
    caps.as_array()
        .expect("actions")
        .iter()
        .map(|a| a["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

fn events(h: &mut TestHost) -> Vec<Value> {
    h.ok("events.list", None)
        .as_array()
        .expect("events")
        .clone()
}

#[test]
fn capabilities_hide_what_was_not_negotiated() {
    let mut h = TestHost::start();
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &["events.snapshot.v1"],
    );
    let caps = h.ok("device.capabilities", None);
    assert_eq!(names(&caps), ["tap", "inputText", "scroll"]);
    let mut h = TestHost::start();
    h.hello();
    let caps = h.ok("device.capabilities", None);
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
            "waitForElement"
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
    assert_eq!(events(&mut h).len(), 1, "rejected calls record nothing");
}

#[test]
fn observe_stores_content_addressed_evidence() {
    let mut h = TestHost::start();
    h.ready_session();
    let a = h.ok("device.observe", None);
    let b = h.ok("device.observe", None);
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
    assert_eq!(devicerail_host::evidence::sha256_hex(&bytes), sha);
    let ev = events(&mut h);
    assert_eq!(ev[1]["payload"]["type"], "observationCaptured");
    assert_eq!(ev[1]["payload"]["observation"], a);
}

#[test]
fn screenshot_policy_omit() {
    let mut h = TestHost::with(Options {
        screenshot_policy: Some("omit"),
        ..Options::default()
    });
    h.ready_session();
    let obs = h.ok("device.observe", None);
    assert_eq!(obs["screenshot"], Value::Null);
    assert_eq!(obs["screenshotOmission"], "policy");
    assert!(
        obs["uiSnapshot"].is_object(),
        "UI trees are not screenshots"
    );
    let r = h.ok(
        "device.execute",
        Some(TestHost::action("tap", json!({ "x": 100, "y": 300 }))),
    );
    assert_eq!(r["after"]["screenshotOmission"], "policy");
    assert_eq!(r["evidence"], json!([]));
}

#[test]
fn actions_record_started_and_completed() {
    let mut h = TestHost::start();
    h.ready_session();
    let call = TestHost::action("tap", json!({ "x": 100, "y": 300 }));
    let r = h.ok("device.execute", Some(call.clone()));
    assert_eq!(r["callId"], call["id"]);
    assert_eq!(r["output"]["hit"], "username");
    assert_eq!(r["before"], Value::Null);
    assert_eq!(r["after"]["deviceId"], "mock-1");
    assert_eq!(r["evidence"], json!([r["after"]["screenshot"]]));
    assert!(r["finishedAtMs"].as_u64() >= r["startedAtMs"].as_u64());
    let ev = events(&mut h);
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
    let bad = TestHost::action("tap", json!({ "x": "left" }));
    let resp = h.call("device.execute", Some(bad.clone()));
    assert_eq!(error_code(&resp).as_deref(), Some("invalid_arguments"));
    assert_eq!(resp["error"]["code"], -32000);
    let ev = events(&mut h);
    assert_eq!(ev[3]["payload"]["call"], bad);
    assert_eq!(ev[4]["payload"]["outcome"]["outcome"], "failed");
    assert_eq!(
        ev[4]["payload"]["outcome"]["error"]["code"],
        "invalid_arguments"
    );
}

#[test]
fn unknown_and_protected_actions_are_redacted() {
    let mut h = TestHost::start();
    h.ready_session();
    let unknown = TestHost::action("selfDestruct", json!({ "code": "0000" }));
    let r = h.call("device.execute", Some(unknown.clone()));
    assert_eq!(error_code(&r).as_deref(), Some("unknown_action"));
    h.ok(
        "device.execute",
        Some(TestHost::action("tap", json!({ "x": 100, "y": 440 }))),
    );
    let secret = "correct-horse-battery-staple";
    let protected = TestHost::action("inputSecret", json!({ "text": secret }));
    let r = h.ok("device.execute", Some(protected.clone()));
    assert_eq!(r["after"]["screenshot"], Value::Null);
    assert_eq!(r["after"]["screenshotOmission"], "protectedAction");
    assert_eq!(r["evidence"], json!([]));
    // A protected call with bad arguments must not leak them either.
    let leaky = TestHost::action("inputSecret", json!({ "text": 42, "note": secret }));
    assert_eq!(h.err("device.execute", Some(leaky)), "invalid_arguments");
    let ev = events(&mut h);
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
    let export = h.ok("session.export", None).to_string();
    assert!(!export.contains(secret), "the secret reached the event log");
    assert!(
        !export.contains("0000\""),
        "unknown action arguments reached the event log"
    );
}

#[test]
fn secrets_never_reach_logs_or_data_files() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().to_path_buf();
    let mut h = TestHost::with(Options {
        root: Some(root.clone()),
        ..Options::default()
    });
    h.ready_session();
    let secret = "s3cr3t-Value-never-logged";
    h.ok(
        "device.execute",
        Some(TestHost::action("tap", json!({ "x": 100, "y": 440 }))),
    );
    h.ok(
        "device.execute",
        Some(TestHost::action("inputSecret", json!({ "text": secret }))),
    );
    h.ok("session.end", None);
    let stderr = {
        let status = h.finish_keep();
        assert!(status.success());
        h.stderr_text()
    };
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

trait FinishKeep {
    fn finish_keep(&mut self) -> std::process::ExitStatus;
}

impl FinishKeep for TestHost {
    fn finish_keep(&mut self) -> std::process::ExitStatus {
        self.close_stdin();
        self.wait()
    }
}

#[test]
fn semantic_actions_resolve_against_recorded_observations() {
    let mut h = TestHost::start();
    h.ready_session();
    let found = h.ok(
        "device.execute",
        Some(TestHost::action(
            "findElement",
            json!({ "selector": { "role": "button", "name": "Sign in" } }),
        )),
    );
    let element = found["output"]["element"].clone();
    assert_eq!(element["stableNodeId"], "sign-in");
    assert_eq!(element["context"]["documentEpoch"], "mock-epoch-1");
    assert_eq!(found["before"]["id"], element["observationId"]);
    assert!(found["before"]["uiSnapshot"].is_object());
    // The node reference resolves to the tree it was found in.
    let snap = h.ok(
        "ui.snapshot.get",
        Some(json!({ "observationId": element["observationId"] })),
    );
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
        Some(TestHost::action("setElementValue", json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } }, "value": "ada" }))),
    );
    assert_eq!(set["execution"]["mode"], "nativeSemantic");
    let obs = h.ok("device.observe", None);
    let snap = h.ok(
        "ui.snapshot.get",
        Some(json!({ "observationId": obs["id"] })),
    );
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
        Some(TestHost::action("setElementValue", json!({ "target": { "kind": "selector", "selector": { "identifier": "password" } }, "value": "pw" }))),
    );
    // Disabled elements are not actionable.
    assert_eq!(
        h.err(
            "device.execute",
            Some(TestHost::action(
                "tapElement",
                json!({ "target": { "kind": "selector", "selector": { "identifier": "help" } } })
            ))
        ),
        "element_not_interactable"
    );
    assert_eq!(
        h.err(
            "device.execute",
            Some(TestHost::action(
                "findElement",
                json!({ "selector": { "role": "button" } })
            ))
        ),
        "element_ambiguous"
    );
    assert_eq!(
        h.err(
            "device.execute",
            Some(TestHost::action(
                "findElement",
                json!({ "selector": { "identifier": "nope" } })
            ))
        ),
        "element_not_found"
    );
    // Tap the button found earlier by its node reference: navigates.
    let tapped = h.ok(
        "device.execute",
        Some(TestHost::action(
            "tapElement",
            json!({ "target": { "kind": "node", "node": element } }),
        )),
    );
    assert_eq!(tapped["output"]["element"]["stableNodeId"], "sign-in");
    // The old reference is stale on the new screen.
    assert_eq!(
        h.err(
            "device.execute",
            Some(TestHost::action(
                "tapElement",
                json!({ "target": { "kind": "node", "node": element } })
            ))
        ),
        "element_stale"
    );
    // The sign-out button appears after a delay.
    let waited = h.ok(
        "device.execute",
        Some(TestHost::action(
            "waitForElement",
            json!({ "selector": { "identifier": "sign-out" }, "condition": "visible" }),
        )),
    );
    assert_eq!(waited["output"]["matched"], true);
    assert_eq!(waited["output"]["element"]["stableNodeId"], "sign-out");
    assert_eq!(
        waited["output"]["element"]["context"]["documentEpoch"],
        "mock-epoch-2"
    );
    let gone = h.ok(
        "device.execute",
        Some(TestHost::action(
            "waitForElement",
            json!({ "selector": { "identifier": "username" }, "condition": "absent" }),
        )),
    );
    assert_eq!(
        gone["output"],
        json!({ "matched": true, "condition": "absent", "element": null })
    );
}
