//! A bench client for the real `devicerail serve` (release) over pipes.
#![allow(dead_code)]

use std::io::{ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// What a bench host is started with.
pub(crate) struct Setup<'a> {
    /// Optional protocol features the client asks for.
    pub(crate) features: &'a [&'a str],
    /// Extra environment of the host (and its plugins).
    pub(crate) env: &'a [(&'a str, &'a str)],
    /// Workspace plugins installed: (package, plugin id).
    pub(crate) plugins: &'a [(&'a str, &'a str)],
    /// The configuration file's text.
    pub(crate) config: &'a str,
    /// The daemon binary (default: this build's `devicerail`); it must take
    /// `serve --config --plugins-dir --data-dir` as `devicerail` does,
    /// unless `bare` is set.
    pub(crate) binary: Option<&'a std::path::Path>,
    /// The daemon takes no flags (the published reference daemon): it is
    /// started bare, in the temporary directory as its home (where it keeps
    /// its data), with its built-in mock device and no adb.
    pub(crate) bare: bool,
}

/// Whether the daemon at `path` is one started without flags: the
/// published reference daemon answers `--version` with its own name.
pub(crate) fn takes_no_flags(path: &std::path::Path) -> bool {
    Command::new(path)
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("devicerail-daemon"))
}

impl Default for Setup<'_> {
    fn default() -> Self {
        Self {
            features: &[],
            env: &[],
            plugins: &[("devicerail-host-plugin-mock", "mock")],
            config: "",
            binary: None,
            bare: false,
        }
    }
}

pub(crate) struct Host {
    pub(crate) child: Child,
    pub(crate) stdin: ChildStdin,
    /// Read by this thread alone (no reader thread, no channel): on 2
    /// cores a thread handoff per chunk cost the load generator about as
    /// much CPU as the daemon it measured.
    stdout: ChildStdout,
    /// Where reads land.
    buf: Vec<u8>,
    /// Bytes read after the last complete answer.
    carry: Vec<u8>,
    _tmp: tempfile::TempDir,
}

fn ticks_per_second() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// CPU seconds (user + system, every thread) process `pid` has used.
pub(crate) fn process_cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let utime: f64 = fields.get(11).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    let stime: f64 = fields.get(12).and_then(|s| s.parse().ok()).unwrap_or(0.0);
    (utime + stime) / ticks_per_second()
}

impl Host {
    pub(crate) fn start(features: &[&str]) -> Self {
        Self::start_with_env(features, &[])
    }

    /// A host whose process (and so its plugins) also sees `env`.
    pub(crate) fn start_with_env(features: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_with(&Setup {
            features,
            env,
            ..Setup::default()
        })
    }

    /// A host as `setup` says.
    pub(crate) fn start_with(setup: &Setup<'_>) -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let plugins = tmp.path().join("plugins");
        std::fs::create_dir_all(&plugins).expect("mkdir");
        for (package, id) in setup.plugins {
            let lib = devicerail_host_testing::build_workspace_plugin(package, id);
            let name = format!("libdevicerail_plugin_{}.so", id.replace('-', "_"));
            std::fs::copy(lib, plugins.join(name)).expect("copy");
        }
        let config = tmp.path().join("config.toml");
        std::fs::write(&config, setup.config).expect("config");
        let features = setup.features;
        let binary = setup
            .binary
            .map(std::path::Path::to_path_buf)
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_devicerail").into());
        let mut command = Command::new(binary);
        if setup.bare {
            command
                .current_dir(tmp.path())
                .env("HOME", tmp.path())
                .env("DEVICERAIL_ANDROID", "off");
        } else {
            command
                .arg("serve")
                .arg("--config")
                .arg(&config)
                .arg("--plugins-dir")
                .arg(&plugins)
                .arg("--data-dir")
                .arg(tmp.path().join("data"));
        }
        let mut child = command
            .env("RUST_LOG", "warn")
            .envs(setup.env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let mut h = Self {
            child,
            stdin,
            stdout,
            buf: vec![0u8; 1 << 20],
            carry: Vec::new(),
            _tmp: tmp,
        };
        h.call(
            json!({"jsonrpc":"2.0","id":"hello","method":"system.hello","params":{
            "client":{"name":"bench","version":"0"},
            "protocol":{"ranges":[{"major":1,"minMinor":0,"maxMinor":5}]},
            "features":{"optional":features}}}),
        );
        h
    }

    pub(crate) fn call(&mut self, msg: Value) -> Value {
        let mut line = serde_json::to_vec(&msg).expect("encode");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
        self.stdin.flush().expect("flush");
        let resp = self.next_line();
        let v: Value = serde_json::from_slice(&resp).expect("json");
        assert!(v.get("error").is_none(), "{v}");
        v
    }

    /// The next answer line (without its newline).
    fn next_line(&mut self) -> Vec<u8> {
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.carry) {
                let rest = self.carry.split_off(i + 1);
                let mut line = std::mem::replace(&mut self.carry, rest);
                line.pop();
                return line;
            }
            let n = self.read_within(Duration::from_secs(30));
            self.carry.extend_from_slice(&self.buf[..n]);
        }
    }

    /// Waits up to `limit` for the host's output to be readable and reads
    /// what is there (panics on a timeout or the end of the output).
    fn read_within(&mut self, limit: Duration) -> usize {
        assert!(
            poll_one(self.stdout.as_raw_fd(), libc::POLLIN, limit),
            "no answer within {limit:?}"
        );
        self.read_ready()
    }

    /// Reads what the host's output holds into `buf` (it is readable;
    /// panics at the end of the output).
    fn read_ready(&mut self) -> usize {
        match self.stdout.read(&mut self.buf) {
            Ok(0) => panic!("the host closed its output"),
            Ok(n) => n,
            Err(e) => panic!("reading the host's output: {e}"),
        }
    }

    /// Runs one Action on the connected device.
    pub(crate) fn act(&mut self, name: &str, arguments: Value) -> Value {
        self.call(
            json!({"jsonrpc":"2.0","id":format!("act-{name}"),"method":"device.execute",
            "params":{"id":uuid::Uuid::new_v4().to_string(),"name":name,"arguments":arguments}}),
        )
    }

    /// Signs in on the mock's login screen (its home screen carries the
    /// feed).
    pub(crate) fn sign_in(&mut self) {
        self.act("tap", json!({"x": 100, "y": 300}));
        self.act("inputText", json!({"text": "ada"}));
        self.act("tap", json!({"x": 100, "y": 440}));
        self.act("inputText", json!({"text": "pw"}));
        self.act("tap", json!({"x": 100, "y": 600}));
    }

    /// CPU seconds (user + system) the host has used so far.
    pub(crate) fn cpu_seconds(&self) -> f64 {
        process_cpu_seconds(self.child.id())
    }

    /// The host's live child processes (its plugin workers).
    pub(crate) fn children(&self) -> Vec<u32> {
        let mut out = Vec::new();
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{}/task", self.child.id())) else {
            return out;
        };
        for task in tasks.flatten() {
            let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            out.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
        out
    }

    /// CPU seconds the host and its live children (plugin workers) have
    /// used so far.
    pub(crate) fn cpu_seconds_with_workers(&self) -> f64 {
        self.cpu_seconds()
            + self
                .children()
                .into_iter()
                .map(process_cpu_seconds)
                .sum::<f64>()
    }

    pub(crate) fn threads(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find(|l| l.starts_with("Threads:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    pub(crate) fn peak_rss_mb(&self) -> f64 {
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
    pub(crate) fn pipeline(
        &mut self,
        n: usize,
        window: usize,
        make: impl Fn(usize) -> Value,
    ) -> Duration {
        let lines: Vec<Vec<u8>> = (0..n)
            .map(|i| {
                let mut l = serde_json::to_vec(&make(i)).expect("encode");
                l.push(b'\n');
                l
            })
            .collect();
        let start = Instant::now();
        // Requests are written without blocking (a host that stops
        // reading while its answers are unread must not deadlock the
        // generator), answers read as they come, in one thread.
        set_nonblocking(self.stdin.as_raw_fd(), true);
        let (mut sent, mut received) = (0, 0);
        let mut out: Vec<u8> = Vec::with_capacity(1 << 20);
        let mut written = 0;
        while received < n {
            while sent < n && sent - received < window {
                out.extend_from_slice(&lines[sent]);
                sent += 1;
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.stdout.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.stdin.as_raw_fd(),
                    events: if written < out.len() {
                        libc::POLLOUT
                    } else {
                        0
                    },
                    revents: 0,
                },
            ];
            // SAFETY: `fds` is a valid array of two pollfd for the call.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, 60_000) };
            assert!(ready > 0, "no progress within 60 s");
            if fds[1].revents & libc::POLLOUT != 0 {
                match self.stdin.write(&out[written..]) {
                    Ok(k) => written += k,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                    Err(e) => panic!("writing requests: {e}"),
                }
                if written == out.len() {
                    out.clear();
                    written = 0;
                }
            }
            if fds[0].revents & (libc::POLLIN | libc::POLLHUP) != 0 {
                let k = self.read_ready();
                let chunk = std::mem::take(&mut self.buf);
                received += self.count_answers(&chunk[..k]);
                self.buf = chunk;
            }
        }
        set_nonblocking(self.stdin.as_raw_fd(), false);
        start.elapsed()
    }

    /// Complete answers in `chunk` (with what was carried over), none of
    /// them an error.
    fn count_answers(&mut self, chunk: &[u8]) -> usize {
        assert!(
            memchr::memmem::find(chunk, b"\"error\":{").is_none(),
            "an error answer: {}",
            String::from_utf8_lossy(chunk)
        );
        let lines = memchr::memchr_iter(b'\n', chunk).count();
        match memchr::memrchr(b'\n', chunk) {
            Some(last) => {
                self.carry.clear();
                self.carry.extend_from_slice(&chunk[last + 1..]);
            }
            None => self.carry.extend_from_slice(chunk),
        }
        lines
    }
}

/// CPU seconds (user + system) this process, the load generator, has used.
pub(crate) fn own_cpu_seconds() -> f64 {
    process_cpu_seconds(std::process::id())
}

/// Whether `fd` is ready for `events` within `limit`.
fn poll_one(fd: i32, events: libc::c_short, limit: Duration) -> bool {
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    let ms = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: `p` is one valid pollfd for the call.
    unsafe { libc::poll(&mut p, 1, ms) > 0 }
}

/// Turns `O_NONBLOCK` on or off for `fd`.
fn set_nonblocking(fd: i32, on: bool) {
    // SAFETY: fcntl on a descriptor this process owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        let flags = if on {
            flags | libc::O_NONBLOCK
        } else {
            flags & !libc::O_NONBLOCK
        };
        libc::fcntl(fd, libc::F_SETFL, flags);
    }
}
