//! Starting and supervising one plugin's worker process: the socketpair on
//! a dedicated descriptor, the parent-death signal, the handshake, then
//! reading replies until the worker dies; a dead worker is reaped,
//! reported (signal or exit code, last output lines), every call it had
//! fails, and it is restarted with exponential back-off.
//!
//! The supervisor thread spawns every worker itself and lives as long as
//! the host: the parent-death signal is tied to the thread that forked.
//! This module never reads or writes the host's protocol descriptors; the
//! worker's stdin is null and its stdout and stderr are pipes to the log.

use std::io::BufReader;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::frame::{FrameError, Kind, read_frame, write_frame};
use super::link::{Link, WorkerDown};
use super::message::{Init, Ready, Reply};
use super::output::{self, Tail};
use super::shared::Shared;
use super::spec::{StartError, WorkerSpec};

/// The worker's descriptor of its end of the channel.
pub(super) const WORKER_FD: i32 = 3;
/// How long a worker may take to construct its driver.
const INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one write to a worker may block.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a worker that closed its channel may take to exit.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A worker that is ready.
pub(super) struct Running {
    pub child: Child,
    pub link: Arc<Link>,
    pub reader: BufReader<UnixStream>,
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

/// Spawns a worker and completes its handshake.
pub(super) fn spawn(spec: &WorkerSpec) -> Result<Running, StartError> {
    let (host_end, child_end) =
        UnixStream::pair().map_err(|e| StartError::Spawn(format!("socketpair: {e}")))?;
    let child_fd = child_end.as_raw_fd();
    let parent = std::process::id();
    let mut cmd = Command::new(&spec.exe);
    cmd.arg("plugin-worker")
        .arg("--fd")
        .arg(WORKER_FD.to_string())
        .arg("--plugin")
        .arg(&spec.plugin_file)
        .arg("--parent")
        .arg(parent.to_string())
        .arg("--log-filter")
        .arg(&spec.log_filter)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The worker dies with the host (and never starts orphaned), and gets
    // its channel as descriptor WORKER_FD.
    devicerail_host_sys::spawn_tied(&mut cmd, Some((child_fd, WORKER_FD)));
    let mut child = cmd
        .spawn()
        .map_err(|e| StartError::Spawn(format!("{}: {e}", spec.exe.display())))?;
    drop(child_end);
    let tail = Tail::default();
    if let Some(out) = child.stdout.take() {
        output::forward(&spec.plugin_id, "stdout", out, &tail);
    }
    if let Some(err) = child.stderr.take() {
        output::forward(&spec.plugin_id, "stderr", err, &tail);
    }
    match handshake(spec, &host_end) {
        Ok(()) => {}
        Err(e) => {
            let _ = child.kill();
            let status = reap(&mut child);
            // Give the forwarders a moment to keep the last lines.
            std::thread::sleep(Duration::from_millis(20));
            return Err(match e {
                StartError::Died(why) => {
                    StartError::Died(with_tail(&format!("{why}; the worker {status}"), &tail))
                }
                other => other,
            });
        }
    }
    // A worker that stops reading (stopped, wedged) must not block the
    // host's callers on the writer lock forever.
    host_end
        .set_write_timeout(Some(WRITE_TIMEOUT))
        .map_err(|e| StartError::Spawn(e.to_string()))?;
    let writer = host_end
        .try_clone()
        .map_err(|e| StartError::Spawn(format!("cannot clone the channel: {e}")))?;
    Ok(Running {
        link: Arc::new(Link::new(child.id(), writer)),
        child,
        reader: BufReader::new(host_end),
        tail,
    })
}

fn handshake(spec: &WorkerSpec, channel: &UnixStream) -> Result<(), StartError> {
    let died = |e: FrameError| StartError::Died(e.to_string());
    let init = Init {
        plugin_id: spec.plugin_id.clone(),
        settings: spec.settings.clone(),
        purpose: "serve".into(),
    };
    let header = serde_json::to_vec(&init).map_err(|e| StartError::Spawn(e.to_string()))?;
    let mut w = channel;
    write_frame(&mut w, Kind::Init, &header, &[]).map_err(died)?;
    channel
        .set_read_timeout(Some(INIT_TIMEOUT))
        .map_err(|e| StartError::Spawn(e.to_string()))?;
    let mut r = channel;
    let frame = read_frame(&mut r).map_err(died)?;
    channel
        .set_read_timeout(None)
        .map_err(|e| StartError::Spawn(e.to_string()))?;
    if frame.kind != Kind::Ready {
        return Err(StartError::Died("the worker answered out of turn".into()));
    }
    match serde_json::from_slice::<Ready>(&frame.header) {
        Ok(Ready::Ok { .. }) => Ok(()),
        Ok(Ready::Failed { message, setting }) => Err(StartError::Init { message, setting }),
        Err(e) => Err(StartError::Died(format!("unreadable handshake: {e}"))),
    }
}

/// Reads replies until the worker's channel ends; returns why it ended.
fn read_replies(link: &Link, reader: &mut BufReader<UnixStream>, plugin: &str) -> String {
    loop {
        match read_frame(reader) {
            Ok(frame) if frame.kind == Kind::Reply => {
                match serde_json::from_slice::<Reply>(&frame.header) {
                    Ok(reply) => link.deliver(reply.id, reply.outcome, frame.bytes),
                    Err(e) => {
                        tracing::error!(
                            plugin,
                            "the worker sent an unreadable reply ({e}); killing it"
                        );
                        link.kill("it sent an unreadable reply");
                    }
                }
            }
            Ok(_) => {
                tracing::error!(plugin, "the worker sent a frame out of turn; killing it");
                link.kill("it sent a frame out of turn");
            }
            Err(FrameError::Closed) => return "its channel closed".into(),
            Err(e) => {
                link.kill("its channel broke");
                return e.to_string();
            }
        }
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
            mut reader,
            tail,
        } = running;
        let started = Instant::now();
        shared.set_up(link.clone());
        if restarted {
            tracing::info!(plugin = %plugin, pid = link.pid(), "plugin worker restarted");
            shared.after_restart();
        }
        let ended = read_replies(&link, &mut reader, &plugin);
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

/// Starts the first worker on a new supervisor thread (which spawns every
/// later one too) and waits for its handshake.
pub(super) fn start(shared: Arc<Shared>) -> Result<(), StartError> {
    let (tx, rx) = mpsc::channel();
    let plugin = shared.spec().plugin_id.clone();
    std::thread::Builder::new()
        .name(format!("worker-supervisor-{plugin}"))
        .spawn(move || match spawn(shared.spec()) {
            Ok(running) => {
                shared.set_up(running.link.clone());
                let _ = tx.send(Ok(running.link.pid()));
                supervise(shared, running);
            }
            Err(e) => {
                let _ = tx.send(Err(e));
            }
        })
        .map_err(|e| StartError::Spawn(format!("cannot start the supervisor thread: {e}")))?;
    match rx.recv() {
        Ok(Ok(pid)) => {
            tracing::debug!(plugin = %plugin, pid, "plugin worker ready");
            Ok(())
        }
        Ok(Err(e)) => Err(e),
        Err(_) => Err(StartError::Spawn("the supervisor thread ended".into())),
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
