//! Runs one child process (always `xcrun`) with no shell, a closed stdin,
//! captured output, and a bound: the call's deadline, a cap, and the call's
//! cancellation flag. A child still running at the bound is killed.

use std::ffi::OsStr;
use std::io::Read;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::CallContext;

/// How often a waiting call re-checks cancellation.
const POLL: Duration = Duration::from_millis(5);
/// Most output kept from one stream (simctl JSON listings are small; a
/// screenshot never goes through a pipe).
const MAX_OUTPUT: u64 = 16 * 1024 * 1024;

/// The captured result of a finished child.
#[derive(Debug)]
pub(crate) struct Output {
    /// How the child exited.
    pub(crate) status: ExitStatus,
    /// Its standard output (at most `MAX_OUTPUT` bytes).
    pub(crate) stdout: Vec<u8>,
    /// Its standard error (at most `MAX_OUTPUT` bytes).
    pub(crate) stderr: Vec<u8>,
}

impl Output {
    /// stderr as trimmed text (lossy), for error messages.
    pub(crate) fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).trim().to_owned()
    }
}

/// Why a child did not produce an [`Output`].
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProcessError {
    /// The program does not exist (or is not on `PATH`).
    #[error("{program} was not found")]
    NotFound {
        /// The program as configured.
        program: String,
    },
    /// Starting it failed for another reason.
    #[error("could not start {program}: {source}")]
    Spawn {
        /// The program as configured.
        program: String,
        /// The spawn error.
        source: std::io::Error,
    },
    /// The call was cancelled; the child was killed.
    #[error("{program} was cancelled")]
    Cancelled {
        /// The program as configured.
        program: String,
    },
    /// The call's deadline or the command's cap passed; the child was
    /// killed.
    #[error("{program} did not finish within {waited_ms} ms")]
    TimedOut {
        /// The program as configured.
        program: String,
        /// How long it ran, in milliseconds.
        waited_ms: u128,
    },
    /// Waiting for the child's exit failed.
    #[error("could not wait for {program}: {source}")]
    Wait {
        /// The program as configured.
        program: String,
        /// The wait error.
        source: std::io::Error,
    },
}

enum Event {
    Stdout(Vec<u8>),
    Stderr(Vec<u8>),
}

fn reader(
    mut stream: impl Read + Send + 'static,
    tx: mpsc::Sender<Event>,
    wrap: fn(Vec<u8>) -> Event,
) {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stream).take(MAX_OUTPUT).read_to_end(&mut buf);
        // Drain anything past the cap so the child never blocks on a full pipe.
        let _ = std::io::copy(&mut stream, &mut std::io::sink());
        let _ = tx.send(wrap(buf));
    });
}

/// Runs `program args...` to completion within `min(ctx deadline, now + cap)`.
pub(crate) fn run(
    program: &Path,
    args: &[&OsStr],
    ctx: &CallContext,
    cap: Duration,
) -> Result<Output, ProcessError> {
    let name = program.display().to_string();
    let start = Instant::now();
    let bound = match ctx.deadline() {
        Some(d) => d.min(start + cap),
        None => start + cap,
    };
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => ProcessError::NotFound {
                program: name.clone(),
            },
            _ => ProcessError::Spawn {
                program: name.clone(),
                source,
            },
        })?;
    let (tx, rx) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        reader(out, tx.clone(), Event::Stdout);
    }
    if let Some(err) = child.stderr.take() {
        reader(err, tx, Event::Stderr);
    } else {
        drop(tx);
    }
    let (mut stdout, mut stderr) = (None, None);
    let stop = |child: &mut std::process::Child, e: ProcessError| {
        let _ = child.kill();
        let _ = child.wait();
        Err(e)
    };
    while stdout.is_none() || stderr.is_none() {
        if ctx.is_cancelled() {
            return stop(&mut child, ProcessError::Cancelled { program: name });
        }
        let now = Instant::now();
        if now >= bound {
            let waited_ms = now.duration_since(start).as_millis();
            return stop(
                &mut child,
                ProcessError::TimedOut {
                    program: name,
                    waited_ms,
                },
            );
        }
        match rx.recv_timeout(POLL.min(bound - now)) {
            Ok(Event::Stdout(b)) => stdout = Some(b),
            Ok(Event::Stderr(b)) => stderr = Some(b),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    // Both pipes are closed: the child has exited or is about to.
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                return Ok(Output {
                    status,
                    stdout: stdout.unwrap_or_default(),
                    stderr: stderr.unwrap_or_default(),
                });
            }
            Ok(None) if Instant::now() >= bound || ctx.is_cancelled() => {
                let waited_ms = start.elapsed().as_millis();
                return stop(
                    &mut child,
                    ProcessError::TimedOut {
                        program: name,
                        waited_ms,
                    },
                );
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(1)),
            Err(source) => {
                return Err(ProcessError::Wait {
                    program: name,
                    source,
                });
            }
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn sh(script: &str, ctx: &CallContext, cap: Duration) -> Result<Output, ProcessError> {
        run(
            Path::new("/bin/sh"),
            &[OsStr::new("-c"), OsStr::new(script)],
            ctx,
            cap,
        )
    }

    #[test]
    fn captures_both_streams_and_status() {
        let out = sh(
            "echo out; echo err >&2; exit 3",
            &CallContext::unbounded(),
            Duration::from_secs(10),
        )
        .expect("sh runs");
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(out.stdout, b"out\n");
        assert_eq!(out.stderr_text(), "err");
    }

    #[test]
    fn a_slow_child_is_killed_at_the_cap() {
        let t = Instant::now();
        let r = sh(
            "sleep 5",
            &CallContext::unbounded(),
            Duration::from_millis(100),
        );
        assert!(matches!(r, Err(ProcessError::TimedOut { .. })), "{r:?}");
        assert!(t.elapsed() < Duration::from_secs(4));
    }

    #[test]
    fn cancellation_kills_the_child() {
        let ctx = CallContext::unbounded();
        let c2 = ctx.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            c2.cancel();
        });
        let r = sh("sleep 5", &ctx, Duration::from_secs(10));
        assert!(matches!(r, Err(ProcessError::Cancelled { .. })), "{r:?}");
    }

    #[test]
    fn a_missing_program_is_not_found() {
        let r = run(
            Path::new("/nonexistent/xcrun"),
            &[],
            &CallContext::unbounded(),
            Duration::from_secs(1),
        );
        assert!(matches!(r, Err(ProcessError::NotFound { .. })), "{r:?}");
    }
}
