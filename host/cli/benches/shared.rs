//! Many clients on one shared host: 32 connections to the real
//! `devicerail serve --listen unix:PATH` (release build, mock plugin), each
//! pipelining requests at once. Reports the total throughput and each
//! connection's latency percentiles, so one starved connection shows.
//!
//! Run: `cargo bench -p devicerail-host --bench shared` (add `-- quick`
//! for a shorter run).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const CONNECTIONS: usize = 32;
const WINDOW: usize = 16;

fn hello(stream: &mut UnixStream, reader: &mut BufReader<UnixStream>) {
    let msg = json!({"jsonrpc":"2.0","id":0,"method":"system.hello","params":{
        "client":{"name":"bench","version":"0"},
        "protocol":{"ranges":[{"major":1,"minMinor":0,"maxMinor":5}]},
        "features":{"optional":["device.routing.v1","request.control.v1"]}}});
    let mut line = serde_json::to_vec(&msg).expect("json");
    line.push(b'\n');
    stream.write_all(&line).expect("hello");
    let mut answer = String::new();
    reader.read_line(&mut answer).expect("hello answer");
    let v: Value = serde_json::from_str(&answer).expect("json");
    assert!(v.get("result").is_some(), "hello failed: {v}");
}

/// Pipelines `n` requests `WINDOW` deep; returns each one's latency.
fn run_connection(socket: &Path, n: usize, make: impl Fn(usize) -> Value) -> Vec<Duration> {
    let mut stream = UnixStream::connect(socket).expect("connect");
    let mut reader = BufReader::with_capacity(1 << 20, stream.try_clone().expect("clone"));
    hello(&mut stream, &mut reader);
    let mut sent_at = vec![Instant::now(); n];
    let mut latencies = Vec::with_capacity(n);
    let (mut sent, mut got) = (0usize, 0usize);
    let mut line = String::new();
    while got < n {
        let mut batch = Vec::new();
        while sent < n && sent - got < WINDOW {
            let mut m = serde_json::to_vec(&make(sent)).expect("json");
            m.push(b'\n');
            batch.extend_from_slice(&m);
            sent_at[sent] = Instant::now();
            sent += 1;
        }
        if !batch.is_empty() {
            stream.write_all(&batch).expect("write");
        }
        line.clear();
        reader.read_line(&mut line).expect("read");
        let v: Value = serde_json::from_str(&line).expect("json");
        assert!(v.get("result").is_some(), "request failed: {v}");
        let id = v["id"].as_u64().expect("numeric id") as usize;
        latencies.push(sent_at[id].elapsed());
        got += 1;
    }
    latencies
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(what: &str, per_conn: Vec<Vec<Duration>>, wall: Duration) {
    let total: usize = per_conn.iter().map(Vec::len).sum();
    let mut p99s: Vec<Duration> = Vec::new();
    let mut all: Vec<Duration> = Vec::new();
    for mut l in per_conn {
        l.sort();
        p99s.push(percentile(&l, 0.99));
        all.extend(l);
    }
    all.sort();
    p99s.sort();
    println!(
        "{what}: {CONNECTIONS} connections x {WINDOW} deep, {total} requests in {:.2}s = {:.0} req/s; p50 {:?}, p99 {:?}; per-connection p99 best {:?}, slowest {:?}",
        wall.as_secs_f64(),
        total as f64 / wall.as_secs_f64(),
        percentile(&all, 0.5),
        percentile(&all, 0.99),
        p99s[0],
        p99s[p99s.len() - 1],
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = tmp.path().join("plugins");
    std::fs::create_dir_all(&plugins).expect("mkdir");
    let lib =
        devicerail_host_testing::build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    std::fs::copy(lib, plugins.join("libdevicerail_plugin_mock.so")).expect("copy");
    let socket = tmp.path().join("run").join("host.sock");
    let mut listen = std::ffi::OsString::from("unix:");
    listen.push(&socket);
    let mut host = Command::new(env!("CARGO_BIN_EXE_devicerail"))
        .arg("serve")
        .arg("--plugins-dir")
        .arg(&plugins)
        .arg("--data-dir")
        .arg(tmp.path().join("data"))
        .arg("--listen")
        .arg(listen)
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + Duration::from_secs(30);
    while UnixStream::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "the host never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let n = if quick { 2_000 } else { 20_000 };
    let list = |i: usize| json!({"jsonrpc":"2.0","id":i,"method":"devices.list"});
    let start = Instant::now();
    let per_conn: Vec<Vec<Duration>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CONNECTIONS)
            .map(|_| s.spawn(|| run_connection(&socket, n, list)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("connection"))
            .collect()
    });
    report("devices.list", per_conn, start.elapsed());
    // SAFETY: signals the host this bench started.
    unsafe { libc::kill(host.id() as i32, libc::SIGTERM) };
    let _ = host.wait();
}
