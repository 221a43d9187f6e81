//! A test client for the real `devicerail serve` binary over pipes.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long a test waits for any single response.
pub const WAIT: Duration = Duration::from_secs(30);

/// Every feature a 1.5 stdio client can ask for.
pub const ALL_FEATURES: &[&str] = &[
    "action.protected.v1",
    "device.routing.v1",
    "device.semanticActions.v1",
    "events.snapshot.v1",
    "events.stream.v1",
    "media.stream.v1",
    "observation.uiSnapshot.v1",
    "request.control.v1",
    "session.export.page.v1",
    "verdict.record.v1",
];

/// The mock plugin library, built once per test binary.
pub fn mock_library() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        devicerail_plugin_api::conformance::build_workspace_plugin("devicerail-plugin-mock", "mock")
    })
    .clone()
}

/// A plugins directory with the mock installed.
pub fn plugins_dir_with_mock(root: &Path) -> PathBuf {
    let dir = root.join("plugins");
    std::fs::create_dir_all(&dir).expect("create plugins dir");
    std::fs::copy(mock_library(), dir.join("libdevicerail_plugin_mock.so")).expect("copy mock");
    dir
}

/// How to start a host.
#[derive(Default, Clone)]
pub struct Options {
    pub faults: bool,
    pub devices: Option<usize>,
    pub screenshot_policy: Option<&'static str>,
    /// Reuse this root (plugins/ and data/ inside) instead of a fresh one.
    pub root: Option<PathBuf>,
    /// Start without any plugin.
    pub no_plugins: bool,
    pub env: Vec<(String, String)>,
}

/// A running host.
pub struct TestHost {
    pub child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    pending: VecDeque<Value>,
    pub root: PathBuf,
    _tmp: Option<tempfile::TempDir>,
    next_id: u64,
    pub stderr: Arc<Mutex<String>>,
}

impl TestHost {
    pub fn start() -> Self {
        Self::with(Options::default())
    }

    pub fn with(opts: Options) -> Self {
        let (tmp, root) = match &opts.root {
            Some(r) => (None, r.clone()),
            None => {
                let t = tempfile::tempdir().expect("tempdir");
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        let plugins = if opts.no_plugins {
            let d = root.join("empty-plugins");
            std::fs::create_dir_all(&d).expect("mkdir");
            d
        } else if root.join("plugins").exists() {
            root.join("plugins")
        } else {
            plugins_dir_with_mock(&root)
        };
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_devicerail"));
        cmd.arg("serve")
            .arg("--plugins-dir")
            .arg(&plugins)
            .arg("--data-dir")
            .arg(root.join("data"));
        if let Some(p) = opts.screenshot_policy {
            cmd.arg("--screenshot-policy").arg(p);
        }
        cmd.env("RUST_LOG", "info")
            .env_remove("DEVICERAIL_SCREENSHOT_POLICY");
        if opts.faults {
            cmd.env("DEVICERAIL_MOCK_FAULTS", "1");
        }
        if let Some(n) = opts.devices {
            cmd.env("DEVICERAIL_MOCK_DEVICES", n.to_string());
        }
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn devicerail serve");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"));
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                let mut s = sink.lock().expect("stderr lock");
                s.push_str(&line);
                s.push('\n');
            }
        });
        Self {
            child,
            stdin,
            rx,
            pending: VecDeque::new(),
            root,
            _tmp: tmp,
            next_id: 1,
            stderr,
        }
    }

    /// Keeps the temp root alive beyond this host (for restarts).
    pub fn keep_root(&mut self) -> Option<tempfile::TempDir> {
        self._tmp.take()
    }

    pub fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write stdin");
        stdin.flush().expect("flush stdin");
    }

    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("encode");
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// Sends a request with a fresh numeric id and returns the id.
    pub fn request(&mut self, method: &str, params: Option<Value>) -> Value {
        let id = json!(self.next_id());
        let mut msg = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if let Some(p) = params {
            msg["params"] = p;
        }
        self.send(&msg);
        id
    }

    /// The next message in arrival order.
    pub fn recv(&mut self) -> Value {
        if let Some(v) = self.pending.pop_front() {
            return v;
        }
        self.recv_wire(WAIT).unwrap_or_else(|| {
            panic!(
                "no message within {WAIT:?}; stderr:\n{}",
                self.stderr_text()
            )
        })
    }

    fn recv_wire(&mut self, wait: Duration) -> Option<Value> {
        match self.rx.recv_timeout(wait) {
            Ok(v) => Some(v),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => None,
        }
    }

    /// Waits for the response with `id`, keeping other messages queued.
    pub fn response(&mut self, id: &Value) -> Value {
        if let Some(pos) = self.pending.iter().position(|m| &m["id"] == id) {
            return self.pending.remove(pos).expect("present");
        }
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv_wire(left) {
                Some(m) if &m["id"] == id => return m,
                Some(m) => self.pending.push_back(m),
                None => panic!(
                    "no response to {id} within {WAIT:?}; stderr:\n{}",
                    self.stderr_text()
                ),
            }
        }
    }

    /// Whether any message arrives within `wait`.
    pub fn quiet_for(&mut self, wait: Duration) -> bool {
        if !self.pending.is_empty() {
            return false;
        }
        match self.recv_wire(wait) {
            Some(m) => {
                self.pending.push_back(m);
                false
            }
            None => true,
        }
    }

    pub fn call(&mut self, method: &str, params: Option<Value>) -> Value {
        let id = self.request(method, params);
        self.response(&id)
    }

    /// Calls and returns the result, failing on an error response.
    pub fn ok(&mut self, method: &str, params: Option<Value>) -> Value {
        let r = self.call(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// Calls and returns `error.data.code`, failing on success.
    pub fn err(&mut self, method: &str, params: Option<Value>) -> String {
        let r = self.call(method, params);
        error_code(&r).unwrap_or_else(|| panic!("{method} unexpectedly succeeded: {r}"))
    }

    /// Handshake with every feature optional, protocol 1.0–1.5.
    pub fn hello(&mut self) -> Value {
        self.hello_with(
            json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
            &[],
            ALL_FEATURES,
        )
    }

    pub fn hello_with(&mut self, ranges: Value, required: &[&str], optional: &[&str]) -> Value {
        self.ok(
            "system.hello",
            Some(json!({
                "client": { "name": "e2e-tests", "version": "0.0.0" },
                "protocol": { "ranges": ranges },
                "features": { "required": required, "optional": optional },
            })),
        )
    }

    /// Hello, connect and start a session; returns the session id.
    pub fn ready_session(&mut self) -> String {
        self.hello();
        self.ok("device.connect", None);
        let s = self.ok("session.start", None);
        s["id"].as_str().expect("session id").to_owned()
    }

    /// A `device.execute` params object with a fresh call id.
    pub fn action(name: &str, arguments: Value) -> Value {
        json!({ "id": uuid::Uuid::new_v4().to_string(), "name": name, "arguments": arguments })
    }

    /// Takes the stdin pipe (to write from another thread).
    pub fn take_stdin_pipe(&mut self) -> ChildStdin {
        self.stdin.take().expect("stdin open")
    }

    pub fn put_stdin_pipe(&mut self, pipe: ChildStdin) {
        self.stdin = Some(pipe);
    }

    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Closes stdin and waits for the process to exit.
    pub fn finish(mut self) -> ExitStatus {
        self.close_stdin();
        self.wait()
    }

    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the host did not exit; stderr:\n{}",
                self.stderr_text()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGKILL, as a crash.
    pub fn kill9(&mut self) {
        self.child.kill().expect("kill -9");
        let _ = self.child.wait();
    }

    pub fn signal(&self, sig: i32) {
        let pid = i32::try_from(self.child.id()).expect("pid");
        // SAFETY: sending a signal to our own child process.
        let rc = unsafe { libc::kill(pid, sig) };
        assert_eq!(rc, 0, "kill({pid}, {sig}) failed");
    }

    pub fn stderr_text(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Every message received so far that was not claimed.
    pub fn drain_pending(&mut self) -> Vec<Value> {
        self.pending.drain(..).collect()
    }
}

impl Drop for TestHost {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `error.data.code` of a response.
pub fn error_code(response: &Value) -> Option<String> {
    response["error"]["data"]["code"]
        .as_str()
        .map(str::to_owned)
}

/// The JSON-RPC numeric code of a failure.
pub fn rpc_code(response: &Value) -> i64 {
    response["error"]["code"].as_i64().unwrap_or(0)
}
