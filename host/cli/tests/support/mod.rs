//! A test client for the real `devicerail serve` binary over pipes.
#![allow(dead_code)]

pub(crate) mod chromium;
pub(crate) mod client;
pub(crate) mod python;

use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ExitStatus};
use std::sync::OnceLock;
use std::time::Duration;

pub(crate) use devicerail_host_testing::host_process::ALL_FEATURES;
use devicerail_host_testing::host_process::HostProcess;
use serde_json::{Value, json};

/// The mock plugin library, built once per test binary.
pub(crate) fn mock_library() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        devicerail_host_testing::build_workspace_plugin("devicerail-host-plugin-mock", "mock")
    })
    .clone()
}

/// A plugins directory with the mock installed.
pub(crate) fn plugins_dir_with_mock(root: &Path) -> PathBuf {
    let dir = root.join("plugins");
    std::fs::create_dir_all(&dir).expect("create plugins dir");
    std::fs::copy(mock_library(), dir.join("libdevicerail_plugin_mock.so")).expect("copy mock");
    dir
}

/// How to start a host.
#[derive(Default, Clone)]
pub(crate) struct Options {
    pub faults: bool,
    pub devices: Option<usize>,
    pub screenshot_policy: Option<&'static str>,
    /// Reuse this root (plugins/ and data/ inside) instead of a fresh one.
    pub root: Option<PathBuf>,
    /// Start without any plugin.
    pub no_plugins: bool,
    /// The data directory (default: `data` under the root).
    pub data_dir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// A configuration file (TOML text), written beside the plugins.
    pub config: Option<String>,
}

/// A running host: the shared [`HostProcess`] client plus what these tests
/// need on top (options, a reusable root, signals).
pub(crate) struct TestHost {
    inner: HostProcess,
    pub root: PathBuf,
    _tmp: Option<tempfile::TempDir>,
}

impl std::ops::Deref for TestHost {
    type Target = HostProcess;
    fn deref(&self) -> &HostProcess {
        &self.inner
    }
}

impl std::ops::DerefMut for TestHost {
    fn deref_mut(&mut self) -> &mut HostProcess {
        &mut self.inner
    }
}

impl TestHost {
    pub(crate) fn start() -> Self {
        Self::with(Options::default())
    }

    pub(crate) fn with(opts: Options) -> Self {
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
        let binary = Path::new(env!("CARGO_BIN_EXE_devicerail"));
        let data = opts.data_dir.clone().unwrap_or_else(|| root.join("data"));
        let mut cmd = HostProcess::serve_command(binary, &plugins, &data);
        if let Some(p) = opts.screenshot_policy {
            cmd.arg("--screenshot-policy").arg(p);
        }
        if let Some(text) = &opts.config {
            let file = root.join("config.toml");
            std::fs::write(&file, text).expect("write the configuration file");
            cmd.arg("--config").arg(file);
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
        Self {
            inner: HostProcess::spawn(cmd),
            root,
            _tmp: tmp,
        }
    }

    /// Keeps the temp root alive beyond this host (for restarts).
    pub(crate) fn keep_root(&mut self) -> Option<tempfile::TempDir> {
        self._tmp.take()
    }

    /// Sends a request with a fresh numeric id and returns the id.
    pub(crate) fn request(&mut self, method: &str, params: Option<Value>) -> Value {
        self.inner.request(method, params, None)
    }

    /// Sends a request with `timeoutMs`; returns its id.
    pub(crate) fn request_with_timeout(
        &mut self,
        method: &str,
        params: Option<Value>,
        ms: u64,
    ) -> Value {
        self.inner.request(method, params, Some(ms))
    }

    /// Calls with `timeoutMs` and returns the whole response.
    pub(crate) fn call_with_timeout(
        &mut self,
        method: &str,
        params: Option<Value>,
        ms: u64,
    ) -> Value {
        let id = self.request_with_timeout(method, params, ms);
        self.inner.response(&id)
    }

    /// Whether no message arrives within `wait`.
    pub(crate) fn quiet_for(&mut self, wait: Duration) -> bool {
        match self.inner.recv_within(wait) {
            Some(m) => {
                self.inner.unrecv(m);
                false
            }
            None => true,
        }
    }

    /// Handshake with every feature optional, protocol 1.0–1.5.
    pub(crate) fn hello(&mut self) -> Value {
        self.hello_with(
            json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
            &[],
            ALL_FEATURES,
        )
    }

    pub(crate) fn hello_with(
        &mut self,
        ranges: Value,
        required: &[&str],
        optional: &[&str],
    ) -> Value {
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
    pub(crate) fn ready_session(&mut self) -> String {
        self.hello();
        self.ok("device.connect", None);
        let s = self.ok("session.start", None);
        s["id"].as_str().expect("session id").to_owned()
    }

    /// A `device.execute` params object with a fresh call id.
    pub(crate) fn action(name: &str, arguments: Value) -> Value {
        json!({ "id": uuid::Uuid::new_v4().to_string(), "name": name, "arguments": arguments })
    }

    /// Takes the stdin pipe (to write from another thread).
    pub(crate) fn take_stdin_pipe(&mut self) -> ChildStdin {
        self.inner.take_stdin().expect("stdin open")
    }

    pub(crate) fn put_stdin_pipe(&mut self, pipe: ChildStdin) {
        self.inner.put_stdin(pipe);
    }

    pub(crate) fn close_stdin(&mut self) {
        drop(self.inner.take_stdin());
    }

    /// Closes stdin and waits for the process to exit.
    pub(crate) fn finish(mut self) -> ExitStatus {
        self.close_stdin();
        self.inner.wait()
    }

    /// SIGKILL, as a crash.
    pub(crate) fn kill9(&mut self) {
        self.inner.child.kill().expect("kill -9");
        let _ = self.inner.child.wait();
    }

    pub(crate) fn signal(&self, sig: i32) {
        let pid = i32::try_from(self.inner.child.id()).expect("pid");
        // SAFETY: sending a signal to our own child process.
        let rc = unsafe { libc::kill(pid, sig) };
        assert_eq!(rc, 0, "kill({pid}, {sig}) failed");
    }

    /// The host's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.inner.child.id()
    }

    /// The host's resident memory in KiB (Linux `VmRSS`).
    pub(crate) fn rss_kib(&self) -> u64 {
        proc_status_kib(self.pid(), "VmRSS:")
    }

    /// Descriptors the host has open.
    pub(crate) fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .map(|d| d.count())
            .unwrap_or(0)
    }

    pub(crate) fn stderr_text(&self) -> String {
        self.inner.stderr()
    }
}

/// A `/proc/<pid>/status` line's value in KiB.
pub(crate) fn proc_status_kib(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// The hostile test plugin library, built once per test binary.
pub(crate) fn hostile_library() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        devicerail_host_testing::build_workspace_plugin(
            "devicerail-host-test-plugin-hostile",
            "test-hostile",
        )
    })
    .clone()
}

/// A root whose plugins directory holds the mock and the hostile plugin.
pub(crate) fn root_with_hostile() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = plugins_dir_with_mock(tmp.path());
    std::fs::copy(
        hostile_library(),
        dir.join("libdevicerail_plugin_test_hostile.so"),
    )
    .expect("copy hostile plugin");
    tmp
}

/// The plugin workers `parent` started (not yet reaped), with their
/// command lines.
pub(crate) fn plugin_workers(parent: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let after = stat.rsplit(')').next().unwrap_or("");
        let mut fields = after.split_whitespace();
        let state = fields.next().unwrap_or("");
        let ppid: u32 = fields.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        if ppid != parent || state == "Z" {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
            .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
            .unwrap_or_default();
        if cmdline.contains("plugin-worker") {
            out.push((pid, cmdline));
        }
    }
    out
}

/// The environment process `pid` was started with (`/proc/<pid>/environ`),
/// as `NAME=value` entries.
pub(crate) fn process_environ(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|e| !e.is_empty())
                .map(|e| String::from_utf8_lossy(e).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `error.data.code` of a response.
pub(crate) fn error_code(response: &Value) -> Option<String> {
    response["error"]["data"]["code"]
        .as_str()
        .map(str::to_owned)
}

/// The JSON-RPC numeric code of a failure.
pub(crate) fn rpc_code(response: &Value) -> i64 {
    response["error"]["code"].as_i64().unwrap_or(0)
}
