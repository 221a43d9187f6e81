//! Durability and shutdown: acknowledged events survive `kill -9`, a
//! session active at a crash is closed on restart, one host per data dir,
//! and orderly shutdown on EOF/SIGTERM/SIGINT.

mod support;

use support::client::Launch as _;

use std::time::Duration;

use devicerail_client::CallOptions;
use devicerail_client::methods::{DeviceObserve, NoParams};
use serde_json::{Value, json};
use support::client::{ClientHost, WAIT, action, hello, ready};
use support::{Options, TestHost};

fn options(root: &std::path::Path) -> Options {
    Options {
        root: Some(root.to_path_buf()),
        faults: true,
        ..Options::default()
    }
}

/// A host on `root` the test owns (to kill or signal it).
async fn restart(root: &std::path::Path) -> ClientHost {
    ClientHost::start_owned(options(root), hello())
        .await
        .expect("the host starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_events_survive_kill_9() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().to_path_buf();
    let mut h = restart(&root).await;
    h.ok("device.connect", None).await;
    // An ended session, exported before the crash.
    let ended = h.ok("session.start", None).await["id"].clone();
    h.ok("device.observe", None).await;
    h.ok(
        "device.execute",
        Some(action("tap", json!({ "x": 100, "y": 300 }))),
    )
    .await;
    h.ok("session.end", Some(json!({}))).await;
    let before = h
        .ok("session.export", Some(json!({ "sessionId": ended })))
        .await;
    // An active session with acknowledged events, then a crash.
    let active = h.ok("session.start", None).await["id"].clone();
    let mut acknowledged = Vec::new();
    for _ in 0..20 {
        acknowledged.push(h.ok("device.observe", None).await["id"].clone());
    }
    h.kill9().await;

    let h = restart(&root).await;
    let sessions = h.ok("sessions.list", None).await;
    let list = sessions.as_array().expect("sessions");
    assert_eq!(list.len(), 2);
    assert!(list.iter().all(|s| s["state"] == "ended"), "{sessions}");
    let after = h
        .ok("session.export", Some(json!({ "sessionId": ended })))
        .await;
    assert_eq!(
        after, before,
        "an ended session exports unchanged after a crash"
    );
    let recovered = h
        .ok("session.export", Some(json!({ "sessionId": active })))
        .await;
    let events = recovered["events"].as_array().expect("events");
    let observed: Vec<Value> = events
        .iter()
        .filter(|e| e["payload"]["type"] == "observationCaptured")
        .map(|e| e["payload"]["observation"]["id"].clone())
        .collect();
    assert_eq!(
        observed, acknowledged,
        "every acknowledged event survived, in order"
    );
    let last = events.last().expect("events");
    assert_eq!(last["payload"]["type"], "sessionEnded");
    assert_eq!(last["payload"]["outcome"], "shutdown");
    assert_eq!(recovered["session"]["lastSequence"], events.len());
    for (i, e) in events.iter().enumerate() {
        assert_eq!(e["sequence"], i + 1, "no gaps");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_host_on_the_same_data_dir_fails_at_start() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let first = restart(tmp.path()).await;
    // The second host exits before any protocol byte: nothing to send.
    let mut second = TestHost::with(options(tmp.path()));
    let status = second.wait();
    assert!(!status.success());
    let err = second.stderr_text();
    assert!(
        err.contains("already in use by another DeviceRail host"),
        "{err}"
    );
    assert!(
        first.ok("devices.list", None).await["devices"].is_array(),
        "the first host is unaffected"
    );
}

/// What a stopped host must have recorded: the slow Action cancelled, the
/// Session ended by the shutdown, the device released.
async fn shutdown_was_orderly(root: &std::path::Path, session: &str) {
    let h = restart(root).await;
    let export = h
        .ok("session.export", Some(json!({ "sessionId": session })))
        .await;
    let events = export["events"].as_array().expect("events");
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| e["payload"]["type"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "sessionStarted",
            "actionStarted",
            "actionCompleted",
            "actionStarted",
            "actionCompleted",
            "sessionEnded"
        ]
    );
    assert_eq!(events[4]["payload"]["outcome"]["outcome"], "cancelled");
    assert_eq!(events[5]["payload"]["outcome"], "shutdown");
    assert_eq!(
        h.ok("devices.list", None).await["devices"][0]["connected"],
        false
    );
}

async fn a_signal_ends_everything(sig: i32) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().to_path_buf();
    let mut h = restart(&root).await;
    let session = ready(&h).await;
    h.ok(
        "device.execute",
        Some(action("tap", json!({ "x": 100, "y": 300 }))),
    )
    .await;
    let slow = h.request(
        "device.execute",
        Some(action("sleep", json!({ "ms": 60_000 }))),
        CallOptions::default(),
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    h.signal(sig);
    let r = h.response(slow).await;
    assert_eq!(
        support::error_code(&r).as_deref(),
        Some("request_cancelled"),
        "{r}"
    );
    let status = h.wait().await;
    assert!(
        status.success(),
        "exit status {status:?}; stderr:\n{}",
        h.stderr_text()
    );
    drop(h);
    shutdown_was_orderly(&root, &session).await;
}

/// Raw: closing stdin while a call is in flight is not something the
/// client does (its close fails pending calls locally).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eof_shuts_down_cleanly() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().to_path_buf();
    let mut h = TestHost::with(options(&root));
    let session = h.ready_session();
    h.ok(
        "device.execute",
        Some(TestHost::action("tap", json!({ "x": 100, "y": 300 }))),
    );
    let slow = h.request(
        "device.execute",
        Some(TestHost::action("sleep", json!({ "ms": 60_000 }))),
    );
    std::thread::sleep(Duration::from_millis(200));
    h.close_stdin();
    let r = h.response(&slow);
    assert_eq!(
        support::error_code(&r).as_deref(),
        Some("request_cancelled"),
        "{r}"
    );
    let status = h.wait();
    assert!(
        status.success(),
        "exit status {status:?}; stderr:\n{}",
        h.stderr_text()
    );
    drop(h);
    shutdown_was_orderly(&root, &session).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_shuts_down_cleanly() {
    a_signal_ends_everything(libc::SIGTERM).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigint_shuts_down_cleanly() {
    a_signal_ends_everything(libc::SIGINT).await;
}

#[test]
fn relative_paths_resolve_against_the_working_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    support::plugins_dir_with_mock(tmp.path());
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_devicerail"))
        .args([
            "serve",
            "--plugins-dir",
            "plugins",
            "--data-dir",
            "rel-data",
        ])
        .current_dir(tmp.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    drop(child.stdin.take());
    let status = child.wait().expect("wait");
    assert!(status.success());
    assert!(tmp.path().join("rel-data/events.sqlite3").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_observations_with_ui_snapshots_survive_kill_9() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().to_path_buf();
    let mut h = restart(&root).await;
    h.ok("device.connect", None).await;
    let session = h.ok("session.start", None).await["id"].clone();
    // Pipeline observations and crash while they are in flight.
    // (The client allows 240 pending requests.)
    let calls: Vec<_> = (0..200)
        .map(|_| {
            h.client
                .begin_call::<DeviceObserve>(NoParams, CallOptions::default())
                .expect("begin")
        })
        .collect();
    let mut acknowledged = Vec::new();
    let mut calls = calls.into_iter();
    for call in calls.by_ref().take(150) {
        let o = tokio::time::timeout(WAIT, call.result())
            .await
            .expect("in time")
            .expect("observed");
        acknowledged.push(serde_json::to_value(o).expect("observation"));
    }
    h.kill9().await;
    drop(calls);
    assert!(acknowledged.iter().all(|o| o["uiSnapshot"].is_object()));
    // After the restart (which closes the session), every acknowledged
    // Observation's screenshot and UI snapshot read back with the digest
    // its reference names.
    let h = restart(&root).await;
    let export = h
        .ok("session.export", Some(json!({ "sessionId": session })))
        .await;
    let recorded: Vec<Value> = export["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["payload"]["type"] == "observationCaptured")
        .map(|e| e["payload"]["observation"].clone())
        .collect();
    // Compare by id (the order of answers is the host's).
    let by_id: std::collections::HashMap<&str, &Value> = recorded
        .iter()
        .filter_map(|o| o["id"].as_str().map(|id| (id, o)))
        .collect();
    for o in &acknowledged {
        let id = o["id"].as_str().expect("id");
        assert!(
            by_id.get(id).is_some_and(|r| *r == o),
            "acknowledged observation {id} is missing or changed"
        );
    }
    drop(h);
    let db = rusqlite::Connection::open_with_flags(
        root.join("data/events.sqlite3"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open the store");
    for o in &acknowledged {
        let shot = o["screenshot"]["sha256"].as_str().expect("screenshot sha");
        let png: Vec<u8> = db
            .query_row("SELECT bytes FROM blobs WHERE sha256 = ?1", [shot], |r| {
                r.get(0)
            })
            .expect("the screenshot");
        assert_eq!(devicerail_host_store::evidence::sha256_hex(&png), shot);
        let tree = o["uiSnapshot"]["evidence"]["sha256"]
            .as_str()
            .expect("ui sha");
        let id = o["id"].as_str().expect("id");
        let bytes: Vec<u8> = db
            .query_row(
                "SELECT ui_bytes FROM observations WHERE observation_id = ?1",
                [id],
                |r| r.get(0),
            )
            .expect("the UI snapshot");
        assert_eq!(devicerail_host_store::evidence::sha256_hex(&bytes), tree);
        assert_eq!(
            bytes.len() as u64,
            o["uiSnapshot"]["byteLength"].as_u64().expect("length")
        );
        let snapshot: Value = serde_json::from_slice(&bytes).expect("json");
        assert_eq!(snapshot["observationId"], o["id"]);
    }
    println!(
        "durability: {} acknowledged observations with UI snapshots read back hash-correct after kill -9",
        acknowledged.len()
    );
}
