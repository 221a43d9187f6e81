//! `devicerail report` and `devicerail bundle export|validate` through the
//! real binary: a Session recorded with the mock (a semantic Action, a
//! failed Action, a protected Action with a secret, a verdict) is reported
//! while the host runs and after it ended, exported, validated, tampered
//! with, reported from the bundle, and opened in headless Chromium.

mod support;

use support::client::LaunchBlocking as _;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};
use support::Options;
use support::client::{BlockingHost, action};

/// The secret typed by the protected Action: it must appear nowhere.
const SECRET: &str = "s3cr3t-Hunter2-XYZZY";

fn devicerail(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_devicerail"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run devicerail")
}

fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Records the session every test looks at; returns its id. The session
/// is left active.
fn record(h: &mut BlockingHost) -> String {
    let session = h.ready_session();
    let obs = h.ok_json("device.observe", None);
    assert!(obs["uiSnapshot"].is_object(), "{obs}");
    // A semantic Action (resolved element on its before screenshot).
    let tap = h.ok_json(
        "device.execute",
        Some(action(
            "tapElement",
            json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } } }),
        )),
    );
    assert!(
        tap["output"]["element"]["stableNodeId"].is_string(),
        "{tap}"
    );
    h.ok_json(
        "device.execute",
        Some(action(
            "setElementValue",
            json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } }, "value": "ada" }),
        )),
    );
    // A failed Action.
    let failed = h.answer("device.execute", Some(action("failAction", json!({}))));
    assert!(failed.get("error").is_some(), "{failed}");
    // A protected Action with a secret.
    h.ok_json(
        "device.execute",
        Some(action(
            "tapElement",
            json!({ "target": { "kind": "selector", "selector": { "identifier": "password" } } }),
        )),
    );
    h.ok_json(
        "device.execute",
        Some(action("inputSecret", json!({ "text": SECRET }))),
    );
    let last = h.ok_json("device.observe", None);
    h.ok_json(
        "verdict.record",
        Some(json!({ "verdict": { "status": "fail", "summary": "sign-in failed: <b>not</b> markup", "evidence": [last["screenshot"]] } })),
    );
    session
}

fn end(h: &mut BlockingHost) {
    h.ok_json(
        "session.end",
        Some(json!({ "outcome": "failed", "reason": "failAction failed" })),
    );
}

fn data_dir(h: &BlockingHost) -> String {
    h.root().join("data").display().to_string()
}

fn assert_no_secret(bytes: &[u8], what: &str) {
    let hay = String::from_utf8_lossy(bytes);
    assert!(
        !hay.contains(SECRET),
        "{what} contains the protected secret"
    );
    // Nor base64 of it (at any of the three alignments).
    use base64::Engine as _;
    for skip in 0..3 {
        let enc = base64::engine::general_purpose::STANDARD.encode(&SECRET.as_bytes()[skip..]);
        assert!(
            !hay.contains(&enc[4..enc.len() - 4]),
            "{what} contains the secret in base64"
        );
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).expect("stat").permissions().mode() & 0o777
}

/// The entries of a tar file.
fn tar_entries(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut archive = tar::Archive::new(std::fs::File::open(path).expect("open bundle"));
    archive
        .entries()
        .expect("entries")
        .map(|e| {
            let mut e = e.expect("entry");
            let name = e.path().expect("path").display().to_string();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).expect("read entry");
            (name, bytes)
        })
        .collect()
}

fn write_tar(path: &Path, entries: &[(String, Vec<u8>)]) {
    let mut b = tar::Builder::new(std::fs::File::create(path).expect("create"));
    for (name, bytes) in entries {
        let mut h = tar::Header::new_ustar();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, name, bytes.as_slice())
            .expect("append");
    }
    b.into_inner().expect("finish");
}

fn validate_fails(path: &Path, reason: &str) {
    let o = devicerail(&["bundle", "validate", &path.display().to_string()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(reason), "expected {reason:?}: {}", text(&o));
}

#[test]
fn report_and_bundle_round_trip_and_tampering_is_caught() {
    let mut h = BlockingHost::serve(Options {
        faults: true,
        ..Options::default()
    });
    let session = record(&mut h);
    let out = tempfile::tempdir().expect("tempdir");
    let dd = data_dir(&h);

    // While the host runs and the session is active: read-only, no lock.
    let live = out.path().join("live.html");
    let o = devicerail(&[
        "report",
        "--last",
        "--data-dir",
        &dd,
        "--out",
        &live.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let live_html = std::fs::read_to_string(&live).expect("live report");
    assert!(live_html.contains(&session));
    assert!(
        live_html.contains("\\\"state\\\":\\\"active\\\"")
            || live_html.contains("\"state\":\"active\"")
    );
    // The host goes on recording after that.
    end(&mut h);

    let html_path = out.path().join("report.html");
    let o = devicerail(&[
        "report",
        &session,
        "--data-dir",
        &dd,
        "--out",
        &html_path.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains("KiB") && stdout.contains("events"),
        "size reported: {stdout}"
    );
    let html = std::fs::read(&html_path).expect("report");
    assert_no_secret(&html, "the report");
    assert_eq!(mode(&html_path), 0o600);
    let html_text = String::from_utf8_lossy(&html);
    assert!(html_text.contains("Content-Security-Policy"));
    assert!(
        !html_text.contains("http://") && !html_text.contains("https://"),
        "no external URL"
    );
    assert!(
        !html_text.contains("<b>not</b>"),
        "device/caller text is never markup"
    );

    // Export and validate.
    let bundle = out.path().join("session.tar");
    let o = devicerail(&[
        "bundle",
        "export",
        &session,
        "--data-dir",
        &dd,
        "--out",
        &bundle.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(mode(&bundle), 0o600);
    assert_no_secret(&std::fs::read(&bundle).expect("bundle"), "the bundle");
    let o = devicerail(&["bundle", "validate", &bundle.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).starts_with("valid: "),
        "{}",
        text(&o)
    );

    // The events are exactly as stored: compare with session.export.
    let export = h.ok_json("session.export", Some(json!({ "sessionId": session })));
    let entries = tar_entries(&bundle);
    let names: Vec<&str> = entries.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names[..2], ["manifest.json", "events.ndjson"]);
    assert!(names[2..].iter().all(|n| n.starts_with("blobs/sha256/")));
    let ndjson = String::from_utf8(entries[1].1.clone()).expect("utf8");
    let lines: Vec<&str> = ndjson.lines().collect();
    let exported = export["events"].as_array().expect("events");
    assert_eq!(lines.len(), exported.len());
    for (line, ev) in lines.iter().zip(exported) {
        assert_eq!(serde_json::from_str::<Value>(line).expect("json"), *ev);
    }
    let manifest: Value = serde_json::from_slice(&entries[0].1).expect("manifest");
    assert_eq!(manifest["format"], "devicerail-session-bundle");
    assert_eq!(manifest["events"]["count"], lines.len());
    // Export is deterministic.
    let again = out.path().join("again.tar");
    let o = devicerail(&[
        "bundle",
        "export",
        "--last",
        "--data-dir",
        &dd,
        "--out",
        &again.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(&again).expect("again"),
        std::fs::read(&bundle).expect("bundle")
    );

    // A report from the bundle is the report from the store.
    let from_bundle = out.path().join("from-bundle.html");
    let o = devicerail(&[
        "report",
        &bundle.display().to_string(),
        "--out",
        &from_bundle.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        std::fs::read(&from_bundle).expect("report"),
        html,
        "identical content"
    );

    // Tampering: each is rejected with its exact reason.
    let blob_at = entries
        .iter()
        .position(|(n, b)| n.starts_with("blobs/") && b.starts_with(b"\x89PNG"))
        .expect("a screenshot blob");
    let sha = entries[blob_at]
        .0
        .trim_start_matches("blobs/sha256/")
        .to_owned();
    let mut flipped = entries.clone();
    let mid = flipped[blob_at].1.len() / 2;
    flipped[blob_at].1[mid] ^= 0x01;
    let p = out.path().join("flipped.tar");
    write_tar(&p, &flipped);
    validate_fails(&p, &format!("blob {sha} does not match its digest"));

    let mut missing = entries.clone();
    missing.remove(blob_at);
    let p = out.path().join("missing.tar");
    write_tar(&p, &missing);
    validate_fails(
        &p,
        &format!("blob {sha} is listed in the manifest but missing from the archive"),
    );

    let mut gap = entries.clone();
    let mut kept: Vec<&str> = lines.clone();
    kept.remove(3); // sequence 4
    gap[1].1 = format!("{}\n", kept.join("\n")).into_bytes();
    let p = out.path().join("gap.tar");
    write_tar(&p, &gap);
    validate_fails(
        &p,
        "sequences are not contiguous: event 3 is followed by 5 (gap)",
    );

    let mut edited = entries.clone();
    edited[1].1 = ndjson
        .replace("failAction always fails", "failAction always passes")
        .into_bytes();
    let p = out.path().join("edited.tar");
    write_tar(&p, &edited);
    validate_fails(&p, "events.ndjson hashes to");

    let mut dangling = entries.clone();
    let mut m = manifest.clone();
    m["blobs"]
        .as_array_mut()
        .expect("blobs")
        .retain(|b| b["sha256"] != sha.as_str());
    dangling[0].1 = serde_json::to_vec(&m).expect("manifest");
    dangling.remove(blob_at);
    let p = out.path().join("dangling.tar");
    write_tar(&p, &dangling);
    validate_fails(
        &p,
        &format!("references sha256:{sha}, which the bundle does not hold"),
    );

    // A report is refused for a bundle that is not valid.
    let o = devicerail(&[
        "report",
        &p.display().to_string(),
        "--out",
        &out.path().join("x.html").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!out.path().join("x.html").exists());

    // After the host stopped: the same report, and nothing written to the
    // data directory.
    let _root = h.keep_root();
    assert!(h.finish_owned().success());
    // A clean stop folds the write-ahead log into the file: the store is
    // one file, which offline readers open without creating anything.
    assert!(
        !Path::new(&dd).join("events.sqlite3-wal").exists(),
        "a clean stop leaves no write-ahead log"
    );
    // "Unchanged" means every data file keeps its name and its bytes: the
    // event store, its write-ahead log when a stopped host left one, the
    // Evidence and the lock file. SQLite's `-shm` index is not data: a
    // reader of a store with a log builds it beside the log (a host that
    // opens the store rebuilds it from the log), so it may appear.
    fn listing_of(dir: &Path, into: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).expect("data dir").flatten() {
            let name = e.path().display().to_string();
            if name.ends_with("-shm") {
                continue;
            }
            if e.path().is_dir() {
                into.push((name, Vec::new()));
                listing_of(&e.path(), into);
            } else {
                use sha2::Digest as _;
                let bytes = std::fs::read(e.path()).unwrap_or_default();
                into.push((name, sha2::Sha256::digest(bytes).to_vec()));
            }
        }
    }
    let listing = |dir: &str| -> Vec<(String, Vec<u8>)> {
        let mut v = Vec::new();
        listing_of(Path::new(dir), &mut v);
        v.sort();
        v
    };
    let before = listing(&dd);
    let after_stop = out.path().join("after-stop.html");
    let o = devicerail(&[
        "report",
        &session,
        "--data-dir",
        &dd,
        "--out",
        &after_stop.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::read(&after_stop).expect("report"), html);
    assert_eq!(listing(&dd), before, "the data directory is unchanged");
    // A store that lost a screenshot: the report still renders (showing
    // it missing); an export refuses, naming it.
    {
        let conn =
            rusqlite::Connection::open(Path::new(&dd).join("events.sqlite3")).expect("store");
        let n = conn
            .execute("DELETE FROM blobs WHERE sha256 = ?1", [&sha])
            .expect("delete");
        assert_eq!(n, 1, "the screenshot is a stored blob");
    }
    let lossy = out.path().join("lossy.html");
    let o = devicerail(&[
        "report",
        &session,
        "--data-dir",
        &dd,
        "--out",
        &lossy.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("whose bytes are not in the store"),
        "{}",
        text(&o)
    );
    let o = devicerail(&[
        "bundle",
        "export",
        &session,
        "--data-dir",
        &dd,
        "--out",
        &out.path().join("lossy.tar").display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains(&format!(
            "references {sha}, whose bytes are not in the store"
        )),
        "{}",
        text(&o)
    );
    assert!(!out.path().join("lossy.tar").exists());
    // Typed refusals, with a non-zero exit.
    let o = devicerail(&["report", "--data-dir", &dd]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("name a session id, a bundle file or --last"),
        "{}",
        text(&o)
    );
    let o = devicerail(&[
        "report",
        "0190b6f0-0000-7000-8000-000000000000",
        "--data-dir",
        &dd,
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("no session 0190b6f0-0000-7000-8000-000000000000"),
        "{}",
        text(&o)
    );
}

// ---------------------------------------------------------------------
// Headless Chromium over CDP.

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Where to keep the README's picture of a report, when asked.
fn picture_path() -> Option<PathBuf> {
    std::env::var_os("DEVICERAIL_REPORT_PICTURE").map(PathBuf::from)
}

fn near(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1.5, "{what}: {a} vs {b}");
}

#[test]
fn the_report_works_in_headless_chromium() {
    let mut h = BlockingHost::serve(Options {
        faults: true,
        ..Options::default()
    });
    let session = record(&mut h);
    end(&mut h);
    let out = tempfile::tempdir().expect("tempdir");
    let bundle = out.path().join("s.tar");
    let o = devicerail(&[
        "bundle",
        "export",
        &session,
        "--data-dir",
        &data_dir(&h),
        "--out",
        &bundle.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    h.finish_owned();
    // The report is made from the bundle, on "another machine".
    let html = out.path().join("report.html");
    let o = devicerail(&[
        "report",
        &bundle.display().to_string(),
        "--out",
        &html.display().to_string(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let data = devicerail_host_report::bundle::open(&bundle).expect("bundle");
    let events: Vec<Value> = data
        .events
        .iter()
        .map(|e| serde_json::from_str(&e.json).expect("event"))
        .collect();
    // What the page must show, from the recorded events.
    let failed_call = events
        .iter()
        .find(|e| {
            e["payload"]["type"] == "actionStarted" && e["payload"]["call"]["name"] == "failAction"
        })
        .expect("failAction")["payload"]["call"]["id"]
        .clone();
    let failed_done = events
        .iter()
        .find(|e| e["payload"]["callId"] == failed_call)
        .expect("failAction completed")["sequence"]
        .as_u64()
        .expect("seq");
    let tap_done = events
        .iter()
        .find(|e| {
            e["payload"]["type"] == "actionCompleted"
                && e["payload"]["outcome"]["result"]["output"]["element"]["stableNodeId"]
                    .is_string()
        })
        .expect("a semantic action");
    let result = &tap_done["payload"]["outcome"]["result"];
    let resolved = result["output"]["element"]["stableNodeId"]
        .as_str()
        .expect("id")
        .to_owned();
    let before = &result["before"];
    let tree_sha = before["uiSnapshot"]["evidence"]["sha256"]
        .as_str()
        .expect("tree");
    let tree: Value = serde_json::from_slice(&data.blobs[tree_sha].bytes).expect("tree json");
    let node = |id: &str| -> Value {
        tree["nodes"]
            .as_array()
            .expect("nodes")
            .iter()
            .find(|n| n["stableNodeId"] == id)
            .expect("node")
            .clone()
    };
    let bounds = node(&resolved)["bounds"].clone();
    let hover_id = tree["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .find(|n| {
            n["stableNodeId"] != resolved.as_str()
                && n["bounds"]["width"].as_f64().unwrap_or(0.0) > 20.0
                && n["parentStableNodeId"].is_string()
        })
        .expect("another node with bounds")["stableNodeId"]
        .as_str()
        .expect("id")
        .to_owned();
    let hover_bounds = node(&hover_id)["bounds"].clone();
    let vp = (
        before["viewport"]["width"].as_f64().expect("w"),
        before["viewport"]["height"].as_f64().expect("h"),
    );

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let started = std::time::Instant::now();
        let mut p = support::chromium::open(&file_url(&html), (1400, 900)).await;
        let opened_ms = started.elapsed().as_millis();

        // Every event is on the timeline.
        assert_eq!(p.eval("document.querySelectorAll('#timeline li').length").await, json!(events.len()));
        assert_eq!(p.eval("document.querySelector('#event-count b').textContent").await, json!(events.len().to_string()));
        // The failed Action is highlighted.
        let row = format!("#event-{failed_done}");
        assert_eq!(p.eval(&format!("document.querySelector('{row}').classList.contains('failed')")).await, json!(true));
        assert_eq!(
            p.eval(&format!("getComputedStyle(document.querySelector('{row}')).backgroundColor")).await,
            json!("rgb(255, 235, 233)")
        );
        p.click(&row).await;
        assert_eq!(p.eval("document.querySelector('#detail .badge').textContent").await, json!("failed"));
        let code = events
            .iter()
            .find(|e| e["sequence"] == failed_done)
            .expect("terminal")["payload"]["outcome"]["error"]["code"]
            .clone();
        assert!(code.is_string());
        assert_eq!(p.eval("document.querySelector('#detail .error-box dd').textContent").await, code);
        // The protected Action's arguments are redacted.
        let secret_row = events
            .iter()
            .find(|e| e["payload"]["call"]["name"] == "inputSecret")
            .expect("inputSecret")["sequence"]
            .as_u64()
            .expect("seq");
        p.click(&format!("#event-{secret_row}")).await;
        assert!(p.eval("document.querySelector('#detail .redacted.arguments') !== null").await == json!(true));
        assert_eq!(p.eval(&format!("document.body.innerText.includes({})", json!(SECRET))).await, json!(false));

        // The semantic Action: the resolved element outlined on the before screenshot.
        p.click(&format!("#event-{}", tap_done["sequence"])).await;
        // Its execution metadata.
        assert_eq!(
            p.eval("[...document.querySelectorAll('#detail dl.props dt')].find(d => d.textContent === 'execution').nextElementSibling.textContent").await,
            json!("native")
        );
        p.wait_for("(() => { const i = document.querySelector('#detail .shot img'); return i.complete && i.naturalWidth > 0; })()").await;
        assert_eq!(p.eval("document.querySelector('#detail .shot img').naturalWidth").await, json!(vp.0 as u64));
        let rel = "(sel) => { const b = document.querySelector(sel); const i = b.parentElement.querySelector('img').getBoundingClientRect(); const r = b.getBoundingClientRect(); return [r.x - i.x, r.y - i.y, r.width, r.height, i.width, i.height, b.hidden]; }";
        let r = p.eval(&format!("({rel})('#detail .element-box')")).await;
        let scale = r[4].as_f64().expect("img w") / vp.0;
        near(r[0].as_f64().expect("x") / scale, bounds["x"].as_f64().expect("bx"), "element x");
        near(r[1].as_f64().expect("y") / scale, bounds["y"].as_f64().expect("by"), "element y");
        near(r[2].as_f64().expect("w") / scale, bounds["width"].as_f64().expect("bw"), "element width");
        near(r[3].as_f64().expect("h") / scale, bounds["height"].as_f64().expect("bh"), "element height");
        // The tree: hovering a node outlines it on the screenshot.
        assert_eq!(p.eval("document.querySelector('#detail .hover-box').hidden").await, json!(true));
        let (x, y) = p.center(&format!("#detail .tree-node[data-node-id='{hover_id}']")).await;
        p.mouse("mouseMoved", x, y).await;
        let r = p.eval(&format!("({rel})('#detail .hover-box')")).await;
        let at = p.eval(&format!("(() => {{ const e = document.elementFromPoint({x}, {y}); return e ? e.className + ' ' + e.textContent.slice(0, 40) : null; }})()")).await;
        assert_eq!(r[6], json!(false), "the hover outline shows; at ({x},{y}) is {at}");
        near(r[0].as_f64().expect("x") / scale, hover_bounds["x"].as_f64().expect("x"), "hover x");
        near(r[1].as_f64().expect("y") / scale, hover_bounds["y"].as_f64().expect("y"), "hover y");
        near(r[2].as_f64().expect("w") / scale, hover_bounds["width"].as_f64().expect("w"), "hover width");
        // ... and it is on screen: the screenshot has its colour there.
        let abs = p
            .eval("(() => { const r = document.querySelector('#detail .hover-box').getBoundingClientRect(); return [r.x, r.y, r.height]; })()")
            .await;
        let png = p.screenshot().await;
        if let Some(path) = picture_path() {
            std::fs::write(&path, &png).expect("write picture");
        }
        let img = image::load_from_memory(&png).expect("png").to_rgb8();
        assert_eq!((img.width(), img.height()), (1400, 900));
        let (bx, by) = (abs[0].as_f64().unwrap_or(0.0) + 0.5, abs[1].as_f64().unwrap_or(0.0) + abs[2].as_f64().unwrap_or(0.0) / 2.0);
        let px = img.get_pixel(bx as u32, by as u32).0;
        assert!(px[2] > 150 && px[0] < 80, "the hover outline's blue is on screen at ({bx},{by}): {px:?}");
        p.mouse("mouseMoved", 5.0, 5.0).await;
        assert_eq!(p.eval("document.querySelector('#detail .hover-box').hidden").await, json!(true));

        // The verdict, with its evidence shown.
        let verdict_row = events
            .iter()
            .find(|e| e["payload"]["type"] == "verdictRecorded")
            .expect("verdict")["sequence"]
            .as_u64()
            .expect("seq");
        p.click(&format!("#event-{verdict_row}")).await;
        assert_eq!(p.eval("document.querySelector('#detail .badge').textContent").await, json!("fail"));
        assert_eq!(
            p.eval("document.querySelector('#detail .verdict-summary').textContent").await,
            json!("sign-in failed: <b>not</b> markup")
        );
        p.wait_for("(() => { const i = document.querySelector('#detail .evidence img'); return !!i && i.complete && i.naturalWidth > 0; })()").await;

        // Filters: failed only (a real click), then by action name.
        let failed_rows = p.eval("document.querySelectorAll('#timeline li.failed').length").await;
        assert!(failed_rows.as_u64().unwrap_or(0) >= 3, "{failed_rows}");
        p.click("#filter-failed").await;
        assert_eq!(p.eval("[...document.querySelectorAll('#timeline li')].filter(l => !l.hidden).length").await, failed_rows);
        assert_eq!(p.eval("[...document.querySelectorAll('#timeline li')].every(l => l.hidden || l.classList.contains('failed'))").await, json!(true));
        p.click("#filter-failed").await;
        assert_eq!(p.eval("[...document.querySelectorAll('#timeline li')].filter(l => !l.hidden).length").await, json!(events.len()));
        p.eval("(() => { const s = document.getElementById('filter-action'); s.value = 'failAction'; s.dispatchEvent(new Event('change')); })()").await;
        assert_eq!(p.eval("[...document.querySelectorAll('#timeline li')].filter(l => !l.hidden).map(l => l.dataset.action)").await, json!(["failAction", "failAction"]));
        assert_eq!(p.eval("document.getElementById('shown-count').dataset.shown").await, json!("2"));
        p.eval("(() => { const s = document.getElementById('filter-action'); s.value = ''; s.dispatchEvent(new Event('change')); })()").await;

        // Keyboard: j / ArrowDown move to the next event, n to the next failure.
        p.click("#event-1").await;
        p.key("j", "KeyJ", 74).await;
        assert_eq!(p.eval("document.querySelector('#timeline li.selected').dataset.seq").await, json!("2"));
        p.key("ArrowDown", "ArrowDown", 40).await;
        assert_eq!(p.eval("document.querySelector('#timeline li.selected').dataset.seq").await, json!("3"));
        p.key("k", "KeyK", 75).await;
        assert_eq!(p.eval("document.querySelector('#timeline li.selected').dataset.seq").await, json!("2"));
        p.key("n", "KeyN", 78).await;
        let sel = p.eval("document.querySelector('#timeline li.selected').className").await;
        assert!(sel.as_str().unwrap_or_default().contains("failed"), "{sel}");

        // No console errors, no exceptions, no network.
        let seen = p.drain();
        let mut problems = Vec::new();
        for e in &seen {
            match e.method.as_str() {
                "Runtime.exceptionThrown" => problems.push(format!("exception: {}", e.params)),
                "Runtime.consoleAPICalled" if matches!(e.params["type"].as_str(), Some("error" | "warning" | "assert")) => {
                    problems.push(format!("console: {}", e.params))
                }
                "Log.entryAdded" if matches!(e.params["entry"]["level"].as_str(), Some("error" | "warning")) => {
                    problems.push(format!("log: {}", e.params["entry"]))
                }
                "Network.requestWillBeSent" => {
                    let url = e.params["request"]["url"].as_str().unwrap_or_default();
                    if !(url.starts_with("file:") || url.starts_with("data:") || url.starts_with("blob:")) {
                        problems.push(format!("network request: {url}"));
                    }
                }
                _ => {}
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
        println!(
            "report in Chromium: {} events, {} bytes, ready in {opened_ms} ms",
            events.len(),
            std::fs::metadata(&html).map(|m| m.len()).unwrap_or(0)
        );
    });
}

/// A Session of 5,000 events with 1,000 distinct screenshots: the figures
/// (report and bundle size, times) are printed; the page must open, and
/// scroll the whole timeline with frames to spare.
///
/// Recording it through the host takes about two minutes on a 2-core
/// machine (debug builds encode 1,000 PNGs), so it runs on request:
/// `cargo test -p devicerail-host --test report -- --ignored --nocapture`.
#[test]
#[ignore = "records 5,000 events (about two minutes); run with --ignored"]
fn a_large_session_stays_usable() {
    let h = BlockingHost::serve(Options {
        faults: true,
        ..Options::default()
    });
    let session = h.ready_session();
    let started = std::time::Instant::now();
    for i in 0..1000 {
        let r = h.answer(
            "device.execute",
            Some(action(
                "setElementValue",
                json!({ "target": { "kind": "selector", "selector": { "identifier": "username" } }, "value": format!("user {i}") }),
            )),
        );
        assert!(r.get("error").is_none(), "{r}");
    }
    for _ in 0..1500 {
        let r = h.answer("device.execute", Some(action("failAction", json!({}))));
        assert!(r.get("error").is_some(), "{r}");
    }
    h.ok_json("session.end", Some(json!({})));
    let record_ms = started.elapsed().as_millis();
    let dd = data_dir(&h);
    let out = tempfile::tempdir().expect("tempdir");

    let html = out.path().join("large.html");
    let t = std::time::Instant::now();
    let o = devicerail(&[
        "report",
        &session,
        "--data-dir",
        &dd,
        "--out",
        &html.display().to_string(),
    ]);
    let report_ms = t.elapsed().as_millis();
    assert!(o.status.success(), "{}", text(&o));
    let bundle = out.path().join("large.tar");
    let t = std::time::Instant::now();
    let o = devicerail(&[
        "bundle",
        "export",
        &session,
        "--data-dir",
        &dd,
        "--out",
        &bundle.display().to_string(),
    ]);
    let export_ms = t.elapsed().as_millis();
    assert!(o.status.success(), "{}", text(&o));
    let t = std::time::Instant::now();
    let o = devicerail(&["bundle", "validate", &bundle.display().to_string()]);
    let validate_ms = t.elapsed().as_millis();
    assert!(o.status.success(), "{}", text(&o));
    h.finish_owned();
    let data = devicerail_host_report::bundle::open(&bundle).expect("bundle");
    let events = data.events.len();
    let pngs = data
        .blobs
        .values()
        .filter(|b| b.media_type == "image/png")
        .count();
    assert!(events >= 5000, "{events} events");
    assert!(pngs >= 1000, "{pngs} screenshots");

    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let (open_ms, frames) = rt.block_on(async {
        let t = std::time::Instant::now();
        let mut p = support::chromium::open(&file_url(&html), (1400, 900)).await;
        let open_ms = t.elapsed().as_millis();
        assert_eq!(p.eval("document.querySelectorAll('#timeline li').length").await, json!(events));
        // Scroll the whole timeline, one step a frame, timing the frames.
        let frames = p
            .eval(
                "new Promise((done) => {
                   const t = document.getElementById('timeline');
                   const gaps = []; let last = performance.now();
                   const step = () => {
                     const now = performance.now(); gaps.push(now - last); last = now;
                     if (t.scrollTop + t.clientHeight >= t.scrollHeight) { done(gaps); return; }
                     t.scrollTop += 600; requestAnimationFrame(step);
                   };
                   requestAnimationFrame(step);
                 })",
            )
            .await;
        let mut gaps: Vec<f64> = frames
            .as_array()
            .expect("frames")
            .iter()
            .filter_map(Value::as_f64)
            .skip(1)
            .collect();
        gaps.sort_by(|a, b| a.total_cmp(b));
        // The last event and a screenshot deep in the log still show.
        let last = events;
        p.click(&format!("#event-{last}")).await;
        let shot_row = p
            .eval("[...document.querySelectorAll('#timeline li')].reverse().find(l => l.dataset.action === 'setElementValue' && l.textContent.includes('succeeded')).dataset.seq")
            .await;
        p.click(&format!("#event-{}", shot_row.as_str().unwrap_or("1"))).await;
        p.wait_for("(() => { const i = document.querySelector('#detail .shot img'); return !!i && i.complete && i.naturalWidth > 0; })()").await;
        // Only the images shown were decoded.
        let decoded = p.eval("Number(document.body.dataset.decodedImages)").await;
        assert!(decoded.as_u64().unwrap_or(99) <= 4, "decoded {decoded} images");
        let problems: Vec<String> = p
            .drain()
            .iter()
            .filter(|e| e.method == "Runtime.exceptionThrown")
            .map(|e| e.params.to_string())
            .collect();
        assert!(problems.is_empty(), "{problems:?}");
        (open_ms, gaps)
    });
    let p95 = frames[(frames.len() * 95 / 100).min(frames.len().saturating_sub(1))];
    let median = frames[frames.len() / 2];
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    println!(
        "large session: {events} events, {pngs} screenshots, recorded in {record_ms} ms; report {} bytes in {report_ms} ms; bundle {} bytes, export {export_ms} ms, validate {validate_ms} ms; Chromium ready in {open_ms} ms; timeline scroll {} frames, median {median:.1} ms, p95 {p95:.1} ms",
        size(&html),
        size(&bundle),
        frames.len()
    );
    // Smooth enough on a 2-core machine without a GPU: most frames well
    // under 100 ms while scrolling 5,000 rows.
    assert!(p95 < 100.0, "p95 frame {p95:.1} ms");
}

/// A replay Session's report shows the replay beside the recording, step
/// by step, in a browser: every step's row, its verdict, and the recorded
/// and replayed screens decoded from the page itself.
#[test]
fn a_replay_sessions_report_shows_both_sides_in_chromium() {
    let mut h = BlockingHost::serve(Options::default());
    let tmp = h.keep_root();
    let session = h.ready_session();
    h.ok_json("device.observe", None);
    for (x, y) in [(360, 328), (360, 468)] {
        h.ok_json(
            "device.execute",
            Some(action("tap", json!({ "x": x, "y": y }))),
        );
    }
    h.ok_json("session.end", None);
    let root = h.root().to_path_buf();
    assert!(h.finish_owned().success());
    let html = root.join("replay.html");
    let o = Command::new(env!("CARGO_BIN_EXE_devicerail"))
        .args([
            "replay",
            &session,
            "--json",
            "--plugins-dir",
            &root.join("plugins").display().to_string(),
            "--data-dir",
            &root.join("data").display().to_string(),
            "--out",
            &html.display().to_string(),
        ])
        .env("RUST_LOG", "warn")
        .env("DEVICERAIL_SOCKET", root.join("no-host.sock"))
        .env_remove("DEVICERAIL_CONFIG")
        .output()
        .expect("replay");
    assert!(o.status.success(), "{}", text(&o));
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let mut p = support::chromium::open(&file_url(&html), (1280, 900)).await;
        assert_eq!(p.eval("document.getElementById('replay').hidden").await, json!(false));
        assert_eq!(
            p.eval("document.querySelectorAll('#replay tr.replay-step.matched').length")
                .await,
            json!(2)
        );
        assert!(
            p.eval("document.querySelector('#replay summary').textContent")
                .await
                .as_str()
                .is_some_and(|t| t.contains(&session) && t.contains("2 matched")),
        );
        // Three screens a row: the recorded before and after, the replayed.
        p.wait_for("[...document.querySelectorAll('#replay tr.replay-step img')].length === 6 && [...document.querySelectorAll('#replay tr.replay-step img')].every(i => i.complete && i.naturalWidth > 0)").await;
        let problems: Vec<String> = p
            .drain()
            .iter()
            .filter(|e| e.method == "Runtime.exceptionThrown")
            .map(|e| e.params.to_string())
            .collect();
        assert!(problems.is_empty(), "{problems:?}");
    });
    drop(tmp);
}
