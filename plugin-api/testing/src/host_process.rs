//! An end-to-end client for driver tests: builds the workspace's
//! `devicerail` binary, serves a plugins directory holding the plugins under
//! test, and speaks NDJSON with it over pipes. Drivers test themselves
//! through the real host without depending on the host crate.
//!
//! ```ignore
//! let lib = devicerail_host_testing::build_workspace_plugin("devicerail-host-plugin-browser", "browser");
//! let mut host = HostProcess::start(&[lib], &[("CHROME_PATH", "/usr/bin/chromium")]);
//! host.hello();
//! host.ok("device.connect", None);
//! ```

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::profile_dir;

/// How long one response may take.
pub const RESPONSE_WAIT: Duration = Duration::from_secs(60);

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

/// Builds the workspace's host binary once per process and returns it.
pub fn host_binary() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = profile_dir();
            let mut cmd = crate::cargo_command();
            cmd.args([
                "build",
                "--quiet",
                "-p",
                "devicerail-host",
                "--bin",
                "devicerail",
            ]);
            if dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let status = cmd
                .status()
                .unwrap_or_else(|e| panic!("could not run cargo build -p devicerail-host: {e}"));
            assert!(status.success(), "cargo build -p devicerail-host failed");
            let bin = dir.join(format!("devicerail{}", std::env::consts::EXE_SUFFIX));
            assert!(bin.exists(), "{} was not built", bin.display());
            bin
        })
        .clone()
}

/// A running `devicerail serve`.
pub struct HostProcess {
    /// The `devicerail serve` process.
    pub child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Value>,
    pending: VecDeque<Value>,
    next_id: u64,
    stderr: Arc<Mutex<String>>,
    /// Receives once when the stderr reader has read the pipe to its end.
    stderr_done: Receiver<()>,
    stderr_drained: bool,
    _dir: Option<tempfile::TempDir>,
}

impl HostProcess {
    /// Serves a fresh plugins directory holding copies of `plugins`, with a
    /// fresh data directory, and `env` set for the host (and so for the
    /// plugins it loads).
    pub fn start(plugins: &[PathBuf], env: &[(&str, &str)]) -> Self {
        Self::start_configured(plugins, env, None)
    }

    /// [`HostProcess::start`] with `config` (TOML text, e.g. a
    /// `[plugins.<id>]` table of settings) as the configuration file.
    pub fn start_configured(
        plugins: &[PathBuf],
        env: &[(&str, &str)],
        config: Option<&str>,
    ) -> Self {
        let (dir, plugins_dir) = crate::root_with_plugins(plugins);
        let mut cmd = Self::serve_command(&host_binary(), &plugins_dir, &dir.path().join("data"));
        if let Some(text) = config {
            let file = dir.path().join("config.toml");
            std::fs::write(&file, text).unwrap_or_else(|e| panic!("write config: {e}"));
            cmd.arg("--config").arg(file);
        }
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut host = Self::spawn(cmd);
        host._dir = Some(dir);
        host
    }

    /// `binary serve` over `plugins_dir` and `data_dir`, for callers that
    /// add arguments or environment before [`HostProcess::spawn`]
    /// (drivers pass [`host_binary`]; the host's own tests pass the binary
    /// cargo built for them).
    pub fn serve_command(binary: &Path, plugins_dir: &Path, data_dir: &Path) -> Command {
        let mut cmd = Command::new(binary);
        cmd.arg("serve")
            .arg("--plugins-dir")
            .arg(plugins_dir)
            .arg("--data-dir")
            .arg(data_dir);
        cmd.env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
        );
        // No configuration file of the machine's user: the default
        // location moves beside the data directory, where there is none.
        cmd.env_remove("DEVICERAIL_CONFIG");
        if let Some(root) = data_dir.parent() {
            cmd.env("XDG_DATA_HOME", root.join("xdg"));
        }
        cmd
    }

    /// Spawns `cmd` (a `devicerail serve` command line) with piped stdio.
    /// Every stdout line must be JSON; stderr is collected.
    pub fn spawn(mut cmd: Command) -> Self {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn devicerail serve: {e}"));
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let stderr_pipe = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
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
        let (done_tx, stderr_done) = channel();
        let sink = stderr.clone();
        std::thread::spawn(move || {
            collect_lines(stderr_pipe, &sink);
            let _ = done_tx.send(());
        });
        Self {
            child,
            stdin,
            rx,
            pending: VecDeque::new(),
            next_id: 1,
            stderr,
            stderr_done,
            stderr_drained: false,
            _dir: None,
        }
    }

    /// A fresh numeric request id.
    pub fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Writes raw bytes to the host's stdin.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self
            .stdin
            .as_mut()
            .unwrap_or_else(|| panic!("stdin closed"));
        stdin
            .write_all(bytes)
            .and_then(|_| stdin.flush())
            .unwrap_or_else(|e| panic!("write: {e}"));
    }

    /// Writes one message as a line.
    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).unwrap_or_default();
        line.push(b'\n');
        self.send_raw(&line);
    }

    /// The next message in arrival order, if one comes within `wait`.
    pub fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        self.pending
            .pop_front()
            .or_else(|| self.rx.recv_timeout(wait).ok())
    }

    /// The next message in arrival order.
    pub fn recv(&mut self) -> Value {
        self.recv_within(RESPONSE_WAIT).unwrap_or_else(|| {
            panic!(
                "no message within {RESPONSE_WAIT:?}; host stderr:\n{}",
                self.stderr()
            )
        })
    }

    /// Puts a received message back at the front of the queue.
    pub fn unrecv(&mut self, message: Value) {
        self.pending.push_front(message);
    }

    /// Takes the stdin pipe (to write from another thread).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Gives back the stdin pipe taken with [`HostProcess::take_stdin`].
    pub fn put_stdin(&mut self, pipe: ChildStdin) {
        self.stdin = Some(pipe);
    }

    /// Waits for the process to exit, then for its stderr to be read to
    /// the end, so [`HostProcess::stderr`] holds every line it wrote
    /// (the pipe closes at exit, but the reader thread may still be
    /// behind; a grandchild that inherited the pipe only delays this up to
    /// the deadline).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + RESPONSE_WAIT;
        let status = loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "the host did not exit; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        self.drain_stderr(deadline);
        status
    }

    fn drain_stderr(&mut self, deadline: Instant) {
        if !self.stderr_drained {
            let left = deadline.saturating_duration_since(Instant::now());
            self.stderr_drained = self.stderr_done.recv_timeout(left).is_ok();
        }
    }

    /// Everything the host has written to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Sends a request with a fresh id; returns the id.
    pub fn request(
        &mut self,
        method: &str,
        params: Option<Value>,
        timeout_ms: Option<u64>,
    ) -> Value {
        let id = json!(self.next_id());
        let mut msg = json!({ "jsonrpc": "2.0", "id": id, "method": method });
        if let Some(p) = params {
            msg["params"] = p;
        }
        if let Some(t) = timeout_ms {
            msg["timeoutMs"] = json!(t);
        }
        self.send(&msg);
        id
    }

    /// Waits for the response with `id`.
    pub fn response(&mut self, id: &Value) -> Value {
        if let Some(pos) = self.pending.iter().position(|m| &m["id"] == id)
            && let Some(m) = self.pending.remove(pos)
        {
            return m;
        }
        let deadline = Instant::now() + RESPONSE_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(m) if &m["id"] == id => return m,
                Ok(m) => self.pending.push_back(m),
                Err(_) => panic!(
                    "no response to {id} within {RESPONSE_WAIT:?}; host stderr:\n{}",
                    self.stderr()
                ),
            }
        }
    }

    /// Calls and returns the whole response.
    pub fn call(&mut self, method: &str, params: Option<Value>) -> Value {
        let id = self.request(method, params, None);
        self.response(&id)
    }

    /// Calls and returns the result, panicking on an error response.
    pub fn ok(&mut self, method: &str, params: Option<Value>) -> Value {
        let r = self.call(method, params);
        assert!(
            r.get("error").is_none(),
            "{method} failed: {r}\nhost stderr:\n{}",
            self.stderr()
        );
        r["result"].clone()
    }

    /// Calls and returns `error.data.code`, panicking on success.
    pub fn err(&mut self, method: &str, params: Option<Value>) -> String {
        let r = self.call(method, params);
        r["error"]["data"]["code"]
            .as_str()
            .map(str::to_owned)
            .unwrap_or_else(|| panic!("{method} succeeded: {r}"))
    }

    /// Handshake at 1.5 with every feature optional.
    pub fn hello(&mut self) -> Value {
        self.ok(
            "system.hello",
            Some(json!({
                "client": { "name": "driver-e2e", "version": "0" },
                "protocol": { "ranges": [{ "major": 1, "minMinor": 0, "maxMinor": 5 }] },
                "features": { "optional": ALL_FEATURES },
            })),
        )
    }

    /// `device.execute` with a fresh call id; returns the whole response.
    pub fn execute(&mut self, name: &str, arguments: Value) -> Value {
        self.call("device.execute", Some(json!({ "id": uuid::Uuid::new_v4().to_string(), "name": name, "arguments": arguments })))
    }

    /// Closes stdin and waits for the exit.
    pub fn finish(mut self) -> std::process::ExitStatus {
        self.stdin.take();
        self.wait()
    }
}

/// Appends every line of `pipe` to `sink` until EOF: bytes that are not
/// UTF-8 are replaced rather than ending the read, and a last line without
/// a newline is kept.
fn collect_lines(pipe: impl std::io::Read, sink: &Mutex<String>) {
    let mut reader = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let text = String::from_utf8_lossy(&line);
                let text = text.strip_suffix('\n').unwrap_or(&text);
                if let Ok(mut s) = sink.lock() {
                    s.push_str(text);
                    s.push('\n');
                }
            }
        }
    }
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str) -> HostProcess {
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg(script);
        HostProcess::spawn(cmd)
    }

    #[test]
    fn wait_returns_with_every_stderr_line_read() {
        // Many lines written right before exit: wait() used to return as
        // soon as the process was reaped, with the reader still behind.
        for _ in 0..5 {
            let mut p = shell("i=0; while [ $i -lt 3000 ]; do echo line$i >&2; i=$((i+1)); done");
            assert!(p.wait().success());
            let text = p.stderr();
            assert_eq!(text.lines().count(), 3000, "lines lost");
            assert!(text.ends_with("line2999\n"), "last line truncated");
        }
    }

    #[test]
    fn stderr_that_is_not_utf8_or_lacks_a_newline_is_kept() {
        let mut p = shell(r"printf 'a\377b\nsecond\nno-newline' >&2");
        assert!(p.wait().success());
        assert_eq!(p.stderr(), "a\u{fffd}b\nsecond\nno-newline\n");
    }
}
