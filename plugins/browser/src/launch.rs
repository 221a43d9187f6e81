//! Starting a headless (or headful) Chromium with a fresh temporary profile
//! and reading its DevTools endpoint from `DevToolsActivePort`.
//!
//! The browser's stdout never reaches ours (stdout is the host's protocol
//! channel): it goes to /dev/null, and stderr is forwarded line by line to
//! `tracing` at debug level. Children are spawned by one long-lived thread
//! with a parent-death signal, so a browser cannot outlive the process that
//! started it.

use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Flags every launch gets (besides profile, port and headless mode).
pub(crate) const BASE_ARGS: [&str; 16] = [
    "--disable-gpu",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-features=BackForwardCache,Translate,MediaRouter,OptimizationHints",
    "--disable-smooth-scrolling",
    "--hide-scrollbars",
    "--mute-audio",
    "--password-store=basic",
    "--remote-debugging-port=0",
];

/// Lines of browser stderr kept for error messages.
const STDERR_TAIL: usize = 20;

/// How long a browser gets to exit after `Browser.close` before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// What to launch.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    /// The executable (see [`crate::binary::find`]).
    pub binary: PathBuf,
    /// Run with `--headless=new` (no window).
    pub headless: bool,
    /// Initial window size in CSS pixels.
    pub window: (u32, u32),
    /// Extra command-line flags, appended last.
    pub extra_args: Vec<String>,
}

/// Why a launch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaunchError {
    /// The temporary profile directory could not be created.
    #[error("could not create a temporary browser profile: {0}")]
    Profile(
        /// The I/O error.
        String,
    ),
    /// The executable could not be started.
    #[error("could not start {binary}: {reason}")]
    Spawn {
        /// The executable.
        binary: PathBuf,
        /// The spawn error.
        reason: String,
    },
    /// The browser exited before it reported its endpoint.
    #[error("the browser exited during startup ({status}); last stderr lines: {stderr}")]
    Exited {
        /// Its exit status.
        status: String,
        /// Its last stderr lines, `|`-separated.
        stderr: String,
    },
    /// The deadline passed first; the browser was killed.
    #[error("the browser did not report its DevTools endpoint within {0:?}")]
    Timeout(
        /// How long the launch waited.
        Duration,
    ),
    /// The caller cancelled first; the browser was killed.
    #[error("the launch was cancelled")]
    Cancelled,
}

/// Whether the process runs as root (Chromium's sandbox refuses root).
pub(crate) fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The full command line for `opts` with profile `profile`.
pub(crate) fn command_line(opts: &LaunchOptions, profile: &Path, as_root: bool) -> Vec<String> {
    let mut args: Vec<String> = Vec::new();
    if opts.headless {
        args.push("--headless=new".into());
    }
    args.extend(BASE_ARGS.iter().map(|s| (*s).to_owned()));
    if as_root {
        args.push("--no-sandbox".into());
    }
    args.push(format!("--user-data-dir={}", profile.display()));
    args.push(format!("--window-size={},{}", opts.window.0, opts.window.1));
    args.extend(opts.extra_args.iter().cloned());
    args.push("about:blank".into());
    args
}

type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// Spawns child processes from one thread that lives as long as the
/// driver: Linux delivers the parent-death signal when the spawning
/// *thread* exits, so it must not be a short-lived caller thread.
pub struct Spawner {
    requests: Mutex<Option<mpsc::Sender<SpawnRequest>>>,
}

impl Spawner {
    /// Starts the spawning thread; fails only when the thread cannot be
    /// created.
    pub fn new() -> std::io::Result<Self> {
        let (tx, rx) = mpsc::channel::<SpawnRequest>();
        std::thread::Builder::new()
            .name("devicerail-browser-spawner".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    let _ = reply.send(cmd.spawn());
                }
            })?;
        Ok(Self {
            requests: Mutex::new(Some(tx)),
        })
    }

    fn spawn(&self, mut cmd: Command) -> std::io::Result<Child> {
        // SAFETY: the closure runs in the forked child before exec and
        // only calls prctl, which is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let (reply_tx, reply_rx) = mpsc::channel();
        let sent = self
            .requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .map(|tx| tx.send((cmd, reply_tx)).is_ok())
            .unwrap_or(false);
        if !sent {
            return Err(std::io::Error::other("the spawner thread is gone"));
        }
        reply_rx
            .recv()
            .unwrap_or_else(|_| Err(std::io::Error::other("the spawner thread is gone")))
    }
}

/// A running browser this driver started. Dropping it stops the browser
/// (killing it after a grace period) and removes its profile.
pub struct LaunchedBrowser {
    child: Child,
    profile: Option<tempfile::TempDir>,
    ws_url: String,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl std::fmt::Debug for LaunchedBrowser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaunchedBrowser")
            .field("pid", &self.child.id())
            .field("ws_url", &self.ws_url)
            .finish()
    }
}

impl LaunchedBrowser {
    /// The browser-level DevTools WebSocket URL.
    pub fn ws_url(&self) -> &str {
        &self.ws_url
    }

    /// The browser's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The temporary profile directory.
    pub fn profile_dir(&self) -> Option<&Path> {
        self.profile.as_ref().map(|p| p.path())
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The last stderr lines, for error messages.
    pub(crate) fn stderr_tail(&self) -> String {
        tail_text(&self.stderr)
    }

    /// Waits up to `grace` for a clean exit, then kills; removes the profile.
    pub fn shutdown(&mut self, grace: Duration) {
        let end = Instant::now() + grace;
        while Instant::now() < end {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        if let Some(profile) = self.profile.take() {
            remove_profile(profile);
        }
    }
}

impl Drop for LaunchedBrowser {
    fn drop(&mut self) {
        self.shutdown(EXIT_GRACE);
    }
}

/// Removes a profile, retrying while the browser's helpers finish writing.
fn remove_profile(profile: tempfile::TempDir) {
    let path = profile.keep();
    for _ in 0..10 {
        match std::fs::remove_dir_all(&path) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
    }
    tracing::warn!("could not remove the browser profile {}", path.display());
}

fn tail_text(tail: &Mutex<VecDeque<String>>) -> String {
    let lines = tail.lock().unwrap_or_else(|p| p.into_inner());
    if lines.is_empty() {
        "(none)".into()
    } else {
        lines.iter().cloned().collect::<Vec<_>>().join(" | ")
    }
}

/// Starts the browser and waits until `DevToolsActivePort` names its
/// endpoint, `deadline` passes or `cancelled()` turns true.
pub fn launch(
    spawner: &Spawner,
    opts: &LaunchOptions,
    deadline: Instant,
    cancelled: &dyn Fn() -> bool,
) -> Result<LaunchedBrowser, LaunchError> {
    let profile = tempfile::Builder::new()
        .prefix("devicerail-browser-")
        .tempdir()
        .map_err(|e| LaunchError::Profile(e.to_string()))?;
    let args = command_line(opts, profile.path(), running_as_root());
    let mut cmd = Command::new(&opts.binary);
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = spawner.spawn(cmd).map_err(|e| LaunchError::Spawn {
        binary: opts.binary.clone(),
        reason: e.to_string(),
    })?;
    tracing::info!(pid = child.id(), binary = %opts.binary.display(), headless = opts.headless, "browser started");
    let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
    if let Some(pipe) = child.stderr.take() {
        let tail = stderr.clone();
        let _ = std::thread::Builder::new()
            .name("devicerail-browser-stderr".into())
            .spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    tracing::debug!(target: "devicerail_plugin_browser::chromium", "{line}");
                    let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
                    if t.len() == STDERR_TAIL {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            });
    }
    let mut browser = LaunchedBrowser {
        child,
        profile: Some(profile),
        ws_url: String::new(),
        stderr,
    };
    let started = Instant::now();
    let port_file = browser
        .profile_dir()
        .map(|p| p.join("DevToolsActivePort"))
        .unwrap_or_default();
    loop {
        if let Some(url) = read_active_port(&port_file) {
            browser.ws_url = url;
            return Ok(browser);
        }
        if let Ok(Some(status)) = browser.child.try_wait() {
            // Let the stderr thread catch the last lines.
            std::thread::sleep(Duration::from_millis(50));
            let stderr = browser.stderr_tail();
            browser.shutdown(Duration::ZERO);
            return Err(LaunchError::Exited {
                status: status.to_string(),
                stderr,
            });
        }
        if cancelled() {
            browser.shutdown(Duration::ZERO);
            return Err(LaunchError::Cancelled);
        }
        if Instant::now() >= deadline {
            browser.shutdown(Duration::ZERO);
            return Err(LaunchError::Timeout(started.elapsed()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `DevToolsActivePort` holds the port and the browser target path on two
/// lines; it may be seen half-written.
fn read_active_port(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    parse_active_port(&text)
}

/// Parses `DevToolsActivePort` text into the browser WebSocket URL.
pub(crate) fn parse_active_port(text: &str) -> Option<String> {
    let mut lines = text.lines();
    let port: u16 = lines.next()?.trim().parse().ok()?;
    let path = lines.next()?.trim();
    if port == 0 || !path.starts_with('/') {
        return None;
    }
    Some(format!("ws://127.0.0.1:{port}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn active_port_file() {
        assert_eq!(
            parse_active_port("43123\n/devtools/browser/abc-def\n").as_deref(),
            Some("ws://127.0.0.1:43123/devtools/browser/abc-def")
        );
        assert_eq!(parse_active_port("43123\n"), None);
        assert_eq!(parse_active_port(""), None);
        assert_eq!(parse_active_port("x\n/devtools/browser/a"), None);
    }

    #[test]
    fn command_line_has_the_required_flags() {
        let opts = LaunchOptions {
            binary: "chromium".into(),
            headless: true,
            window: (1280, 800),
            extra_args: vec!["--lang=en-US".into()],
        };
        let args = command_line(&opts, Path::new("/tmp/p"), true);
        for flag in [
            "--headless=new",
            "--disable-gpu",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-quic",
            "--remote-debugging-port=0",
            "--no-sandbox",
            "--user-data-dir=/tmp/p",
            "--lang=en-US",
        ] {
            assert!(args.iter().any(|a| a == flag), "missing {flag}");
        }
        let not_root = command_line(&opts, Path::new("/tmp/p"), false);
        assert!(!not_root.iter().any(|a| a == "--no-sandbox"));
        let headful = command_line(
            &LaunchOptions {
                headless: false,
                ..opts
            },
            Path::new("/tmp/p"),
            false,
        );
        assert!(!headful.iter().any(|a| a.starts_with("--headless")));
    }
}
