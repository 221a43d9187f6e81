//! `devicerail kube device-plugin` against a fake kubelet (the same
//! generated API; it stamps every `ListAndWatch` list as it arrives), with
//! a real shared host (release build, mock plugin, 2 devices):
//!
//! * registration to first device: from `Register` arriving at the
//!   kubelet to the first list with the devices (each kubelet restart
//!   gives one sample), and from process start to the first `Register`;
//! * health changes: a client outside Kubernetes connects a device (it
//!   must turn `Unhealthy`) and disconnects it (`Healthy` again), timed
//!   from the host's answer to the list that shows it;
//! * the plugin's CPU time while idle.
//!
//! Run: `cargo bench -p devicerail-host --bench kube` (add `-- quick` for
//! fewer samples). `-- poll-ms=N` sets the plugin's poll interval.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use devicerail_host_kube::fake_kubelet::{FakeKubelet, Registered};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_devicerail");
const WAIT: Duration = Duration::from_secs(30);
const MOCK: &str = "devicerail.dev/mock";

/// A raw protocol client on the host's socket.
struct Raw {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
    id: u64,
}

impl Raw {
    fn connect(socket: &Path) -> Self {
        let stream = UnixStream::connect(socket).expect("connect");
        let reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut r = Self {
            stream,
            reader,
            id: 0,
        };
        r.ok(
            "system.hello",
            json!({
                "client": { "name": "bench-outside", "version": "0" },
                "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] },
                "features": { "optional": ["device.routing.v1"] },
            }),
        );
        r
    }

    fn ok(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let mut line = serde_json::to_vec(
            &json!({ "jsonrpc": "2.0", "id": self.id, "method": method, "params": params }),
        )
        .expect("json");
        line.push(b'\n');
        self.stream.write_all(&line).expect("write");
        let mut answer = String::new();
        self.reader.read_line(&mut answer).expect("read");
        let v: Value = serde_json::from_str(&answer).expect("json");
        assert!(v.get("result").is_some(), "{method} failed: {v}");
        v["result"].clone()
    }
}

fn summary(what: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    println!(
        "{what}: n={} min {:.1} ms, p50 {:.1} ms, p95 {:.1} ms, max {:.1} ms",
        samples.len(),
        at(0.0).as_secs_f64() * 1e3,
        at(0.5).as_secs_f64() * 1e3,
        at(0.95).as_secs_f64() * 1e3,
        at(1.0).as_secs_f64() * 1e3,
    );
}

/// CPU time (user + system) of `pid` so far.
fn cpu(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 (11 and 12 after the state).
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

async fn mock_registration(kubelet: &mut FakeKubelet) -> Registered {
    loop {
        let r = kubelet
            .next_registration(WAIT)
            .await
            .expect("a registration");
        if r.request.resource_name == MOCK {
            return r;
        }
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let poll_ms: u64 = std::env::args()
        .find_map(|a| a.strip_prefix("poll-ms=").and_then(|v| v.parse().ok()))
        .unwrap_or(500);
    let samples = if quick { 5 } else { 30 };
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = tmp.path().join("plugins");
    std::fs::create_dir_all(&plugins).expect("mkdir");
    let lib =
        devicerail_host_testing::build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    std::fs::copy(lib, plugins.join("libdevicerail_plugin_mock.so")).expect("copy");
    let socket = tmp.path().join("run").join("host.sock");
    let mut listen = std::ffi::OsString::from("unix:");
    listen.push(&socket);
    let mut host = Command::new(BIN)
        .arg("serve")
        .arg("--plugins-dir")
        .arg(&plugins)
        .arg("--data-dir")
        .arg(tmp.path().join("data"))
        .arg("--listen")
        .arg(listen)
        .env("RUST_LOG", "warn")
        .env("DEVICERAIL_MOCK_DEVICES", "2")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the host");
    let deadline = Instant::now() + WAIT;
    while UnixStream::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "the host never listened");
        std::thread::sleep(Duration::from_millis(20));
    }
    let dir = tmp.path().join("device-plugins");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let mut kubelet = FakeKubelet::start(&dir).await.expect("fake kubelet");
    let started = Instant::now();
    let mut plugin = Command::new(BIN)
        .args(["kube", "device-plugin", "--socket"])
        .arg(&socket)
        .arg("--kubelet-socket")
        .arg(kubelet.socket())
        .arg("--no-pod-resources")
        .args(["--resource", &format!("mock={MOCK}")])
        .arg("--state-file")
        .arg(tmp.path().join("kube/allocations.json"))
        .args(["--poll-ms", &poll_ms.to_string()])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn the device plugin");
    let mut mock = mock_registration(&mut kubelet).await;
    println!(
        "process start to first Register: {:.1} ms",
        mock.at.duration_since(started).as_secs_f64() * 1e3
    );
    println!("poll interval: {poll_ms} ms");

    // Registration to first device, once per kubelet restart.
    let mut first = Vec::new();
    for i in 0..samples {
        if i > 0 {
            kubelet.restart().expect("restart");
            mock = mock_registration(&mut kubelet).await;
        }
        let l = mock
            .wait_for(WAIT, |l| l.devices.len() == 2)
            .await
            .expect("the devices");
        first.push(l.at.duration_since(mock.at));
    }
    summary("Register to first device list", first);

    // Health: leased outside Kubernetes and back.
    let mut raw = Raw::connect(&socket);
    raw.ok("device.select", json!({ "deviceId": "mock-2" }));
    let (mut down, mut up) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        mock.wait_for(WAIT, |l| l.health("mock-2") == Some("Healthy"))
            .await
            .expect("healthy");
        // Start at a random point of the poll cycle.
        tokio::time::sleep(Duration::from_millis(fastrand_ms(poll_ms))).await;
        raw.ok("device.connect", json!({}));
        let t = Instant::now();
        let l = mock
            .wait_for(WAIT, |l| l.health("mock-2") == Some("Unhealthy"))
            .await
            .expect("unhealthy");
        down.push(l.at.saturating_duration_since(t));
        tokio::time::sleep(Duration::from_millis(fastrand_ms(poll_ms))).await;
        raw.ok("device.disconnect", json!({}));
        let t = Instant::now();
        let l = mock
            .wait_for(WAIT, |l| l.health("mock-2") == Some("Healthy"))
            .await
            .expect("healthy again");
        up.push(l.at.saturating_duration_since(t));
    }
    summary("leased outside -> Unhealthy", down);
    summary("released -> Healthy", up);

    // Idle CPU.
    let before = cpu(plugin.id());
    let idle = if quick { 3 } else { 10 };
    tokio::time::sleep(Duration::from_secs(idle)).await;
    let used = cpu(plugin.id()).saturating_sub(before);
    println!(
        "device plugin CPU while idle: {:.1} ms per second",
        used.as_secs_f64() * 1e3 / idle as f64
    );
    let _ = plugin.kill();
    let _ = plugin.wait();
    // SAFETY: signals the host this bench started.
    unsafe { libc::kill(host.id() as i32, libc::SIGTERM) };
    let _ = host.wait();
}

/// A pseudo-random delay below `max` ms (time-seeded; no dependency).
fn fastrand_ms(max: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos() as u64)
        .unwrap_or(0);
    (nanos.wrapping_mul(6364136223846793005) >> 33) % max.max(1)
}
