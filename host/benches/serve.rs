//! Throughput of the real `devicerail serve` over pipes with the mock
//! plugin (release build): pipelined `devices.list`, `device.observe` with
//! captured screenshots under the durability promise, host CPU per cheap
//! request, and peak RSS after 100,000 recorded events.
//!
//! Run: `cargo bench -p devicerail-host --bench serve` (add `-- quick` for
//! a shorter run).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Host {
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Vec<u8>>,
    _tmp: tempfile::TempDir,
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

impl Host {
    fn start() -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let plugins = tmp.path().join("plugins");
        std::fs::create_dir_all(&plugins).expect("mkdir");
        let lib = devicerail_plugin_api::conformance::build_workspace_plugin(
            "devicerail-plugin-mock",
            "mock",
        );
        std::fs::copy(lib, plugins.join("libdevicerail_plugin_mock.so")).expect("copy");
        let mut child = Command::new(env!("CARGO_BIN_EXE_devicerail"))
            .arg("serve")
            .arg("--plugins-dir")
            .arg(&plugins)
            .arg("--data-dir")
            .arg(tmp.path().join("data"))
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::with_capacity(1 << 20, stdout);
            loop {
                let mut line = Vec::new();
                match r.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let mut h = Self {
            child,
            stdin,
            rx,
            _tmp: tmp,
        };
        h.call(json!({"jsonrpc":"2.0","id":"hello","method":"system.hello","params":{
            "client":{"name":"bench","version":"0"},
            "protocol":{"ranges":[{"major":1,"minMinor":0,"maxMinor":5}]},
            "features":{"optional":["events.snapshot.v1","request.control.v1","device.routing.v1"]}}}));
        h
    }

    fn call(&mut self, msg: Value) -> Value {
        let mut line = serde_json::to_vec(&msg).expect("encode");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
        self.stdin.flush().expect("flush");
        let resp = self
            .rx
            .recv_timeout(Duration::from_secs(30))
            .expect("response");
        let v: Value = serde_json::from_slice(&resp).expect("json");
        assert!(v.get("error").is_none(), "{v}");
        v
    }

    /// CPU seconds (user + system) the host has used so far.
    fn cpu_seconds(&self) -> f64 {
        let stat =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        let after = stat.rsplit(')').next().unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        let utime: f64 = fields.get(11).and_then(|s| s.parse().ok()).unwrap_or(0.0);
        let stime: f64 = fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
        (utime + stime) / ticks_per_second()
    }

    fn threads(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("Threads:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    fn peak_rss_mb(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }

    /// Pipelines `n` requests built by `make`, keeping at most `window` in
    /// flight, and returns the elapsed time.
    fn pipeline(&mut self, n: usize, window: usize, make: impl Fn(usize) -> Value) -> Duration {
        let lines: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let mut l = serde_json::to_vec(&make(i)).expect("encode");
                l.push(b'\n');
                l
            })
            .collect();
        let start = Instant::now();
        let mut sent = 0;
        let mut received = 0;
        let mut buf = Vec::with_capacity(1 << 20);
        while received < n {
            buf.clear();
            while sent < n && sent - received < window {
                buf.extend_from_slice(&lines[sent]);
                sent += 1;
            }
            if !buf.is_empty() {
                self.stdin.write_all(&buf).expect("write");
                self.stdin.flush().expect("flush");
            }
            let line = self
                .rx
                .recv_timeout(Duration::from_secs(60))
                .expect("response");
            debug_assert!(
                !line.windows(8).any(|w| w == b"\"error\":"),
                "{}",
                String::from_utf8_lossy(&line)
            );
            received += 1;
            while let Ok(line) = self.rx.try_recv() {
                assert!(
                    !line.windows(9).any(|w| w == b"\"error\":{"),
                    "{}",
                    String::from_utf8_lossy(&line)
                );
                received += 1;
            }
        }
        start.elapsed()
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let scale = if quick { 10 } else { 1 };
    let mut h = Host::start();

    let n = 200_000 / scale;
    h.pipeline(
        10_000 / scale,
        4096,
        |i| json!({"jsonrpc":"2.0","id":i,"method":"devices.list"}),
    );
    let cpu0 = h.cpu_seconds();
    let t = h.pipeline(
        n,
        8192,
        |i| json!({"jsonrpc":"2.0","id":i,"method":"devices.list"}),
    );
    let cpu = h.cpu_seconds() - cpu0;
    println!(
        "devices.list pipelined: {n} requests in {:.3}s = {:.0} req/s; host CPU {:.2} us/request",
        t.as_secs_f64(),
        n as f64 / t.as_secs_f64(),
        cpu * 1e6 / n as f64
    );
    println!("  peak RSS after devices.list: {:.1} MB", h.peak_rss_mb());

    h.call(json!({"jsonrpc":"2.0","id":"c","method":"device.connect"}));
    h.call(json!({"jsonrpc":"2.0","id":"s","method":"session.start"}));
    let n = 20_000 / scale;
    let cpu0 = h.cpu_seconds();
    let t = h.pipeline(
        n,
        512,
        |i| json!({"jsonrpc":"2.0","id":i,"method":"device.observe"}),
    );
    let cpu = h.cpu_seconds() - cpu0;
    println!(
        "device.observe (screenshot captured, durable): {n} in {:.3}s = {:.0} obs/s; host CPU {:.1} us/observe",
        t.as_secs_f64(),
        n as f64 / t.as_secs_f64(),
        cpu * 1e6 / n as f64
    );
    println!(
        "  peak RSS after observe: {:.1} MB ({} threads)",
        h.peak_rss_mb(),
        h.threads()
    );

    let target = 100_000 / scale;
    let remaining = target.saturating_sub(n + 1);
    let t = h.pipeline(
        remaining,
        512,
        |i| json!({"jsonrpc":"2.0","id":format!("r{i}"),"method":"device.observe"}),
    );
    println!(
        "recorded {} events in total ({remaining} more in {:.1}s); peak RSS {:.1} MB",
        target,
        t.as_secs_f64(),
        h.peak_rss_mb()
    );
    drop(h.stdin);
    let _ = h.child.wait();
}
