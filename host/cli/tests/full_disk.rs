//! A full disk, through the real binary, on a size-limited tmpfs (the test
//! mounts one where the machine allows it, and says so when it cannot):
//! writes fail with typed errors and leave no partial Evidence, the host
//! keeps serving, and a host that cannot write starts read-only, so reads
//! and exports still work.

mod support;

use support::client::Launch as _;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::json;
use support::client::{ClientHost, action, hello};
use support::{Options, error_code, plugins_dir_with_mock};

/// A tmpfs mounted for the test's lifetime.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    fn mount(size: &str) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let status = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::piped())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !status.status.success() {
            return Err(String::from_utf8_lossy(&status.stderr).trim().to_owned());
        }
        Ok(Self { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

/// Writes zeros into `path` until the file system is full.
fn fill(path: &Path) -> PathBuf {
    let filler = path.join("filler");
    let mut f = std::fs::File::create(&filler).expect("create filler");
    let block = vec![0u8; 64 * 1024];
    while f.write_all(&block).is_ok() {}
    let small = [0u8; 512];
    while f.write_all(&small).is_ok() {}
    let _ = f.sync_all();
    filler
}

async fn host(root: &Path, data: &Path) -> ClientHost {
    ClientHost::start_owned(
        Options {
            root: Some(root.to_path_buf()),
            faults: true,
            data_dir: Some(data.to_path_buf()),
            ..Options::default()
        },
        hello(),
    )
    .await
    .expect("the host starts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_writes_keeps_reads_and_starts_read_only() {
    let disk = match Tmpfs::mount("16m") {
        Ok(d) => d,
        Err(why) => {
            println!(
                "full disk: skipped (mounting a size-limited tmpfs needs privileges here: {why})"
            );
            return;
        }
    };
    let root = tempfile::tempdir().expect("tempdir");
    plugins_dir_with_mock(root.path());
    let data = disk.path().join("data");
    let mut h = host(root.path(), &data).await;
    h.ok("device.connect", None).await;
    let session = h.ok("session.start", None).await["id"].clone();
    for _ in 0..3 {
        h.ok("device.observe", None).await;
    }
    let filler = fill(disk.path());
    // New Evidence (a changed screen) cannot be written.
    let tap = h
        .answer(
            "device.execute",
            Some(action("tap", json!({ "x": 100, "y": 300 }))),
        )
        .await;
    println!("full disk: a tap answered {:?}", error_code(&tap));
    let r = h.answer("device.observe", None).await;
    let code = error_code(&r);
    println!("full disk: device.observe answered {code:?}");
    assert!(
        matches!(
            code.as_deref(),
            Some("evidence_io_error" | "event_store_error")
        ),
        "{r}"
    );
    assert_eq!(r["error"]["data"]["retryable"], true);
    let tmp = std::fs::read_dir(data.join("evidence/tmp"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(tmp, 0, "a failed Evidence write leaves no partial file");
    // Reads still work, and so does everything that needs no write.
    assert!(h.ok("devices.list", None).await["devices"].is_array());
    assert!(
        h.ok("events.list", Some(json!({})))
            .await
            .as_array()
            .is_some()
    );
    // Every write that fails on the full disk answers a documented store
    // error (the log's or the Evidence store's), whatever was being written
    // when the space ran out: the start of an Action, its after-screenshot,
    // or its terminal event.
    let mut codes = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..40u64 {
        let r = if i % 2 == 0 {
            h.answer(
                "device.execute",
                Some(action("tap", json!({ "x": 40 + i * 7, "y": 200 + i * 11 }))),
            )
            .await
        } else {
            h.answer("device.observe", None).await
        };
        let code = error_code(&r).unwrap_or_else(|| "ok".to_owned());
        if code != "ok" {
            assert!(
                matches!(code.as_str(), "event_store_error" | "evidence_io_error"),
                "a write on a full disk answered {r}"
            );
            assert_eq!(r["error"]["data"]["retryable"], true, "{r}");
        }
        *codes.entry(code).or_default() += 1;
    }
    println!("full disk: 40 writes on a full disk answered {codes:?}");
    assert!(
        codes.keys().any(|c| c != "ok"),
        "the disk is full: some writes fail"
    );
    // Space returns: the same host writes again.
    std::fs::remove_file(&filler).expect("free the disk");
    h.ok("device.observe", None).await;
    h.ok(
        "device.execute",
        Some(action("tap", json!({ "x": 100, "y": 300 }))),
    )
    .await;
    println!("full disk: writes succeed again once space returns");
    let filler = fill(disk.path());
    // A crash while the disk is full.
    h.kill9().await;
    let mut h = host(root.path(), &data).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !h.stderr_text().contains("read-only") && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(
        h.stderr_text().contains("read-only"),
        "the host says it serves read-only:\n{}",
        h.stderr_text()
    );
    let sessions = h.ok("sessions.list", None).await;
    assert_eq!(sessions.as_array().map(Vec::len), Some(1), "{sessions}");
    let export = h
        .ok("session.export", Some(json!({ "sessionId": session })))
        .await;
    assert!(
        export["events"].as_array().map(Vec::len).unwrap_or(0) >= 4,
        "every acknowledged event reads back"
    );
    h.ok("device.connect", None).await;
    let r = h.answer("session.start", None).await;
    assert_eq!(error_code(&r).as_deref(), Some("event_store_error"), "{r}");
    // Gone before the next host takes the data directory.
    h.kill9().await;
    drop(h);
    // With room again, the next start recovers the session.
    std::fs::remove_file(filler).expect("free the disk");
    let h = host(root.path(), &data).await;
    let export = h
        .ok("session.export", Some(json!({ "sessionId": session })))
        .await;
    let last = export["events"]
        .as_array()
        .and_then(|e| e.last().cloned())
        .expect("events");
    assert_eq!(last["payload"]["type"], "sessionEnded");
    assert_eq!(last["payload"]["outcome"], "shutdown");
}
