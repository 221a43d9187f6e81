//! Starting and supervising one plugin's worker process: the packet socket
//! pair on a dedicated descriptor, the parent-death signal, the handshake
//! (the worker opens the library and reports its manifest, the host sends
//! the settings and the arena, the worker reports its driver constructed),
//! then reading replies (a task on the host's runtime when it has one, else
//! this thread) until the worker dies; a dead worker is reaped,
//! reported (signal or exit code, last output lines), every call it had
//! fails, and it is restarted with exponential back-off.
//!
//! The supervisor thread spawns every worker itself and lives as long as
//! the host: the parent-death signal is tied to the thread that forked.
//! This module never reads or writes the host's protocol descriptors; the
//! worker's stdin is null and its stdout and stderr are pipes to the log.

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::{LoadPurpose, PluginManifest};
use devicerail_host_sys::packet::PacketSocket;

use super::channel::{self, HostArena, Outgoing};
use super::environment;
use super::frame::{FrameError, Kind};
use super::link::{Link, WRITE_TIMEOUT, WorkerDown};
use super::message::{Init, Opened, Ready};
use super::output::{self, Tail};
use super::ring::HostRings;
use super::shared::Shared;
use super::spec::{StartError, WorkerSpec};

/// The worker's descriptor of its end of the channel.
pub(super) const WORKER_FD: i32 = 3;
/// How long a worker may take to open its plugin library and report the
/// manifest (the library's load-time code runs meanwhile).
pub(super) const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a worker may take to construct its driver.
const INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a worker that closed its channel may take to exit.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A worker that is ready.
pub(super) struct Running {
    pub child: Child,
    pub link: Arc<Link>,
    pub tail: Tail,
}

/// Text for how a process ended.
pub(super) fn describe_exit(status: ExitStatus) -> String {
    if let Some(sig) = status.signal() {
        match devicerail_host_sys::signal_name(sig) {
            Some(name) => format!("killed by signal {sig} ({name})"),
            None => format!("killed by signal {sig}"),
        }
    } else {
        match status.code() {
            Some(code) => format!("exited with code {code}"),
            None => "ended".to_owned(),
        }
    }
}

/// Reaps `child`, killing it if it does not exit within [`EXIT_WAIT`].
fn reap(child: &mut Child) -> String {
    let until = Instant::now() + EXIT_WAIT;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return describe_exit(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                return match child.wait() {
                    Ok(status) => format!("closed its channel and hung; {}", describe_exit(status)),
                    Err(e) => format!("could not be reaped: {e}"),
                };
            }
            Err(e) => return format!("could not be reaped: {e}"),
        }
    }
}

fn with_tail(reason: &str, tail: &Tail) -> String {
    let lines = tail.lines();
    if lines.is_empty() {
        reason.to_owned()
    } else {
        format!("{reason}; last output: {}", lines.join(" | "))
    }
}

/// A worker that opened its plugin library (its load-time code ran there)
/// and reported the manifest; it waits for its settings.
pub(super) struct Launched {
    pub child: Child,
    /// The host's end of the channel (non-blocking).
    pub channel: PacketSocket,
    pub tail: Tail,
    pub manifest: PluginManifest,
}

impl std::fmt::Debug for Launched {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launched")
            .field("pid", &self.child.id())
            .field("plugin", &self.manifest.id)
            .finish()
    }
}

impl Launched {
    /// Closes the channel (a worker that was not sent its settings exits)
    /// and reaps the process.
    pub(super) fn discard(self) {
        let Self {
            mut child, channel, ..
        } = self;
        drop(channel);
        let _ = reap(&mut child);
    }

    /// Kills and reaps the worker; how it ended, with its last output.
    pub(super) fn abandon(self) -> String {
        let Self {
            mut child, tail, ..
        } = self;
        let _ = child.kill();
        ended(&mut child, &tail)
    }
}

/// Reaps `child` (killing it if it does not exit within [`EXIT_WAIT`]) and
/// says how it ended, with its last output lines.
fn ended(child: &mut Child, tail: &Tail) -> String {
    let status = reap(child);
    // Give the forwarders a moment to keep the last lines.
    std::thread::sleep(Duration::from_millis(20));
    with_tail(&status, tail)
}

/// Whether a read failed because its timeout passed.
pub(super) fn timed_out(e: &FrameError) -> bool {
    matches!(e, FrameError::Io(io) if matches!(io.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

/// Starts a worker for the plugin library `file` and waits until it has
/// opened the library and reported its manifest. `label` names the worker
/// in the log. The library's own code runs only in the worker: a library
/// that crashes or hangs while loading costs the worker, never the host.
pub(super) fn launch(
    exe: &Path,
    file: &Path,
    log_filter: &str,
    label: &str,
) -> Result<Launched, StartError> {
    let (host_end, child_end) = devicerail_host_sys::packet::pair()
        .map_err(|e| StartError::Spawn(format!("socketpair: {e}")))?;
    let buffers = [&host_end, &child_end]
        .iter()
        .try_for_each(|s| s.set_send_buffer(channel::SEND_BUFFER).map(drop))
        .and_then(|()| host_end.set_nonblocking(true));
    if let Err(e) = buffers {
        return Err(StartError::Spawn(format!("channel setup: {e}")));
    }
    let child_fd = child_end.as_raw_fd();
    let parent = std::process::id();
    let mut cmd = Command::new(exe);
    cmd.arg("plugin-worker")
        .arg("--fd")
        .arg(WORKER_FD.to_string())
        .arg("--plugin")
        .arg(file)
        .arg("--parent")
        .arg(parent.to_string())
        .arg("--log-filter")
        .arg(log_filter)
        // Plugin code runs in the worker: it gets an environment built
        // from an allow-list, never the host's credentials.
        .env_clear()
        .envs(environment::for_worker(std::env::vars_os()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The worker dies with the host (and never starts orphaned), and gets
    // its channel as descriptor WORKER_FD.
    devicerail_host_sys::spawn_tied(&mut cmd, Some((child_fd, WORKER_FD)));
    let mut child = cmd
        .spawn()
        .map_err(|e| StartError::Spawn(format!("{}: {e}", exe.display())))?;
    drop(child_end);
    let tail = Tail::default();
    if let Some(out) = child.stdout.take() {
        output::forward(label, "stdout", out, &tail);
    }
    if let Some(err) = child.stderr.take() {
        output::forward(label, "stderr", err, &tail);
    }
    let mut buf = channel::buffer();
    let opened = channel::receive(&host_end, &mut buf, None, Some(OPEN_TIMEOUT));
    let frame = match opened {
        Ok(f) => f,
        Err(e) => {
            let hung = timed_out(&e);
            let _ = child.kill();
            let how = ended(&mut child, &tail);
            return Err(if hung {
                StartError::OpenTimeout {
                    secs: OPEN_TIMEOUT.as_secs(),
                }
            } else {
                StartError::Crashed(how)
            });
        }
    };
    let opened = (frame.kind == Kind::Opened)
        .then(|| serde_json::from_slice::<Opened>(&frame.header).ok())
        .flatten();
    match opened {
        Some(Opened::Ok { manifest }) => Ok(Launched {
            child,
            channel: host_end,
            tail,
            manifest,
        }),
        Some(Opened::Refused { reason }) => {
            drop(host_end);
            let _ = reap(&mut child);
            Err(StartError::Refused(reason))
        }
        None => {
            let _ = child.kill();
            let how = ended(&mut child, &tail);
            Err(StartError::Died(format!(
                "it did not report its plugin's manifest; the worker {how}"
            )))
        }
    }
}

/// Sends a launched worker its settings for `purpose` (and `arena`, the
/// memory its large reply parts come through, and `rings`, the memory its
/// calls and replies travel through) and waits until its driver is
/// constructed. On failure the worker is reaped.
pub(super) fn init(
    mut launched: Launched,
    plugin_id: &str,
    settings: &serde_json::Map<String, serde_json::Value>,
    env: &[(String, String)],
    purpose: LoadPurpose,
    arena: Option<&HostArena>,
    rings: Option<&HostRings>,
) -> Result<Launched, StartError> {
    match handshake(
        &launched.channel,
        plugin_id,
        settings,
        env,
        purpose,
        arena,
        rings,
    ) {
        Ok(()) => Ok(launched),
        Err(e @ StartError::Init { .. }) => {
            launched.discard();
            Err(e)
        }
        Err(StartError::Died(why)) => {
            let how = launched.abandon();
            Err(StartError::Died(format!("{why}; the worker {how}")))
        }
        Err(other) => {
            // Make sure the worker does not outlive the failed start.
            let _ = launched.child.kill();
            launched.discard();
            Err(other)
        }
    }
}

/// Spawns a worker for `spec` and completes its handshake.
pub(super) fn spawn(spec: &WorkerSpec) -> Result<Running, StartError> {
    let launched = launch(
        &spec.exe,
        &spec.plugin_file,
        &spec.log_filter,
        &spec.plugin_id,
    )?;
    running(launched, spec)
}

/// Completes the handshake of a worker that opened `spec`'s library.
fn running(launched: Launched, spec: &WorkerSpec) -> Result<Running, StartError> {
    let arena = match HostArena::create() {
        Ok(a) => a,
        Err(e) => {
            launched.abandon();
            return Err(StartError::Spawn(format!("cannot create the arena: {e}")));
        }
    };
    // Rings only where a reactor waits on their doorbell.
    let rings = match spec
        .runtime
        .as_ref()
        .map(|_| HostRings::create())
        .transpose()
    {
        Ok(r) => r,
        Err(e) => {
            launched.abandon();
            return Err(StartError::Spawn(format!("cannot create the rings: {e}")));
        }
    };
    let launched = init(
        launched,
        &spec.plugin_id,
        &spec.settings,
        &spec.env,
        LoadPurpose::Serve,
        Some(&arena),
        rings.as_ref(),
    )?;
    let Launched {
        mut child,
        channel: host_end,
        tail,
        ..
    } = launched;
    match Link::new(child.id(), host_end, arena, rings, spec.runtime.as_ref()) {
        Ok(link) => Ok(Running {
            link: Arc::new(link),
            child,
            tail,
        }),
        Err(e) => {
            let _ = child.kill();
            let _ = reap(&mut child);
            Err(StartError::Spawn(format!("cannot set up the channel: {e}")))
        }
    }
}

fn handshake(
    channel: &PacketSocket,
    plugin_id: &str,
    settings: &serde_json::Map<String, serde_json::Value>,
    env: &[(String, String)],
    purpose: LoadPurpose,
    arena: Option<&HostArena>,
    rings: Option<&HostRings>,
) -> Result<(), StartError> {
    let died = |e: FrameError| StartError::Died(e.to_string());
    let init = Init {
        plugin_id: plugin_id.to_owned(),
        settings: settings.clone(),
        purpose: purpose.to_ffi().to_owned(),
        env: env.to_vec(),
    };
    let header = serde_json::to_vec(&init).map_err(|e| StartError::Spawn(e.to_string()))?;
    let mut extra: Vec<OwnedFd> = match arena.map(|a| a.fd().try_clone_to_owned()).transpose() {
        Ok(fd) => fd.into_iter().collect(),
        Err(e) => return Err(StartError::Spawn(format!("cannot pass the arena: {e}"))),
    };
    if let Some(rings) = rings {
        match rings.fds() {
            Ok(fds) => extra.extend(fds),
            Err(e) => return Err(StartError::Spawn(format!("cannot pass the rings: {e}"))),
        }
    }
    let out = Outgoing::new(Kind::Init, &header, &[], None, extra).map_err(died)?;
    channel::send_within(channel, &out, WRITE_TIMEOUT).map_err(died)?;
    let mut buf = channel::buffer();
    let frame = channel::receive(channel, &mut buf, None, Some(INIT_TIMEOUT)).map_err(|e| {
        if timed_out(&e) {
            StartError::Died(format!(
                "the driver was not constructed within {} s",
                INIT_TIMEOUT.as_secs()
            ))
        } else {
            died(e)
        }
    })?;
    if frame.kind != Kind::Ready {
        return Err(StartError::Died("the worker answered out of turn".into()));
    }
    match serde_json::from_slice::<Ready>(&frame.header) {
        Ok(Ready::Ok { .. }) => Ok(()),
        Ok(Ready::Failed { message, setting }) => Err(StartError::Init { message, setting }),
        Err(e) => Err(StartError::Died(format!("unreadable handshake: {e}"))),
    }
}

/// Reads `link`'s replies until its channel ends: as a task on the host's
/// runtime when the link is registered with one (this thread waits for
/// it), else on this thread. Returns why the channel ended.
fn read_replies(link: &Arc<Link>, spec: &WorkerSpec) -> String {
    let plugin = spec.plugin_id.clone();
    match (&spec.runtime, link.is_async()) {
        (Some(rt), true) => {
            let (tx, rx) = mpsc::channel();
            let reader = link.clone();
            rt.spawn(async move {
                let why = reader.read_replies_async(&plugin).await;
                let _ = tx.send(why);
            });
            rx.recv()
                .unwrap_or_else(|_| "the host's runtime stopped".into())
        }
        _ => link.read_replies(&plugin),
    }
}

/// Runs `first` (already started) and every restart until the host stops.
pub(super) fn supervise(shared: Arc<Shared>, first: Running) {
    let spec = shared.spec();
    let plugin = spec.plugin_id.clone();
    let mut next = Some(first);
    let mut delay = spec.backoff.first;
    loop {
        let (running, restarted) = match next.take() {
            Some(r) => (r, false),
            None => match spawn(spec) {
                Ok(r) => (r, true),
                Err(e) => {
                    if shared.stopping() {
                        return;
                    }
                    tracing::error!(plugin = %plugin, retry_in_ms = delay.as_millis() as u64, "restarting the plugin worker failed: {e}");
                    shared.set_down(WorkerDown::RestartFailed(e.to_string()));
                    std::thread::sleep(delay);
                    delay = spec.backoff.next(delay);
                    continue;
                }
            },
        };
        let Running {
            mut child,
            link,
            tail,
        } = running;
        let started = Instant::now();
        shared.set_up(link.clone());
        if restarted {
            tracing::info!(plugin = %plugin, pid = link.pid(), "plugin worker restarted");
            shared.after_restart();
        }
        let ended = read_replies(&link, spec);
        shared.set_down(WorkerDown::Restarting);
        let killed_for = link.mark_reaped();
        let status = reap(&mut child);
        if shared.stopping() {
            link.fail_all(&WorkerDown::ShuttingDown);
            return;
        }
        // Let the forwarders catch the worker's last lines.
        std::thread::sleep(Duration::from_millis(20));
        let reason = match &killed_for {
            Some(why) => format!("the host killed it: {why} ({status})"),
            None => format!("{status} ({ended})"),
        };
        let reason = WorkerDown::Died(with_tail(&reason, &tail));
        let failed = link.fail_all(&reason);
        if started.elapsed() >= spec.backoff.stable {
            delay = spec.backoff.first;
        }
        tracing::error!(
            plugin = %plugin,
            pid = link.pid(),
            calls_failed = failed,
            restart_in_ms = delay.as_millis() as u64,
            "plugin worker died: {reason}"
        );
        shared.set_down(reason);
        std::thread::sleep(delay);
        delay = spec.backoff.next(delay);
        if shared.stopping() {
            return;
        }
    }
}

/// A plugin library opened by a worker on its own supervisor thread (the
/// parent-death signal is tied to the thread that forks, so the thread
/// that starts a worker supervises it for the host's lifetime). The host
/// reads the manifest, then either serves the plugin with that worker
/// (`Opening::serve`) or drops the opening, which ends the worker.
pub struct Opening {
    manifest: PluginManifest,
    decide: mpsc::Sender<Arc<Shared>>,
    started: mpsc::Receiver<Result<u32, StartError>>,
}

impl std::fmt::Debug for Opening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opening")
            .field("plugin", &self.manifest.id)
            .finish()
    }
}

impl Opening {
    /// Starts a supervisor thread whose worker opens `file`, and waits for
    /// the manifest (or why the library was refused, crashed or hung).
    pub fn open(exe: &Path, file: &Path, log_filter: &str) -> Result<Self, StartError> {
        let (opened_tx, opened_rx) = mpsc::channel();
        let (decide, decided) = mpsc::channel::<Arc<Shared>>();
        let (started_tx, started) = mpsc::channel();
        let label = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (exe, file, log_filter) =
            (exe.to_path_buf(), file.to_path_buf(), log_filter.to_owned());
        std::thread::Builder::new()
            .name(format!("worker-supervisor-{label}"))
            .spawn(move || {
                let launched = match launch(&exe, &file, &log_filter, &label) {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = opened_tx.send(Err(e));
                        return;
                    }
                };
                if opened_tx.send(Ok(launched.manifest.clone())).is_err() {
                    launched.discard();
                    return;
                }
                let Ok(shared) = decided.recv() else {
                    // The host only wanted the manifest.
                    launched.discard();
                    return;
                };
                match running(launched, shared.spec()) {
                    Ok(running) => {
                        shared.set_up(running.link.clone());
                        let _ = started_tx.send(Ok(running.link.pid()));
                        supervise(shared, running);
                    }
                    Err(e) => {
                        let _ = started_tx.send(Err(e));
                    }
                }
            })
            .map_err(|e| StartError::Spawn(format!("cannot start the supervisor thread: {e}")))?;
        match opened_rx.recv() {
            Ok(Ok(manifest)) => Ok(Self {
                manifest,
                decide,
                started,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StartError::Spawn("the supervisor thread ended".into())),
        }
    }

    /// The manifest the worker read from the library.
    pub fn manifest(&self) -> &PluginManifest {
        &self.manifest
    }

    /// Serves the plugin with this worker: sends `shared`'s settings and
    /// waits until its driver is constructed; the thread then supervises
    /// the worker (and its restarts).
    pub(super) fn serve(self, shared: Arc<Shared>) -> Result<(), StartError> {
        let plugin = shared.spec().plugin_id.clone();
        self.decide
            .send(shared)
            .map_err(|_| StartError::Spawn("the supervisor thread ended".into()))?;
        match self.started.recv() {
            Ok(Ok(pid)) => {
                tracing::debug!(plugin = %plugin, pid, "plugin worker ready");
                Ok(())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(StartError::Spawn("the supervisor thread ended".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::spec::Backoff;

    #[test]
    fn exits_read_as_signal_or_code() {
        // Wait statuses as the kernel encodes them.
        assert_eq!(
            describe_exit(ExitStatus::from_raw(11)),
            "killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(
            describe_exit(ExitStatus::from_raw(3 << 8)),
            "exited with code 3"
        );
    }

    #[test]
    fn the_back_off_doubles_up_to_its_limit() {
        let b = Backoff::default();
        let mut d = b.first;
        let steps: Vec<u128> = (0..8)
            .map(|_| {
                d = b.next(d);
                d.as_millis()
            })
            .collect();
        assert_eq!(steps, [200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
    }
}
