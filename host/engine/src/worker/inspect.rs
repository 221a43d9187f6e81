//! A short-lived worker that inspects one plugin library for the command
//! line (`plugins install|list|remove`, `doctor`): it opens the library
//! and reports the manifest, optionally constructs the driver to inspect
//! (no external server started), then answers a few calls (devices, doctor
//! checks) one at a time, each bounded by a timeout after which the worker
//! is killed. Whatever the plugin's code does, it does in the worker: a
//! crash or a hang becomes an [`InspectError`] naming the step.
//!
//! The thread that opens an [`Inspection`] must keep it until it is done
//! with it: the worker's parent-death signal is tied to that thread.

use std::path::Path;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::{DriverError, LoadPurpose, PluginManifest};
use devicerail_host_protocol::ObservationId;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::channel::{self, Outgoing};
use super::frame::{FrameError, Kind};
use super::link::WRITE_TIMEOUT;
use super::message::{Call, Method, Outcome, Reply};
use super::spec::StartError;
use super::supervisor::{self, Launched, timed_out};

/// How long past a call's own deadline an inspecting worker may stay
/// silent before it is killed.
const GRACE: Duration = Duration::from_secs(2);

/// Why an inspection call did not answer.
#[derive(Debug, Clone, thiserror::Error)]
pub enum InspectError {
    /// The driver answered with an error.
    #[error("{0}")]
    Driver(DriverError),
    /// The worker died, hung or broke the protocol (how, with its last
    /// output); it is gone.
    #[error("{0}")]
    Worker(String),
}

/// A worker that opened one plugin library to inspect it.
#[derive(Debug)]
pub struct Inspection {
    /// `None` once the worker is gone.
    worker: Option<Launched>,
    manifest: PluginManifest,
    /// Why the worker is gone, for later calls.
    gone: Option<String>,
    next_id: u64,
}

impl Inspection {
    /// Starts a worker of `exe` that opens `file` and reports its manifest;
    /// the library is refused if the loader refuses it, or if it crashes or
    /// hangs while loading.
    pub fn open(exe: &Path, file: &Path, log_filter: &str) -> Result<Self, StartError> {
        let label = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let launched = supervisor::launch(exe, file, log_filter, &label)?;
        Ok(Self {
            manifest: launched.manifest.clone(),
            worker: Some(launched),
            gone: None,
            next_id: 1,
        })
    }

    /// The manifest the library reported.
    pub fn manifest(&self) -> &PluginManifest {
        &self.manifest
    }

    /// Constructs the driver with `settings` (and the plugin's `env`
    /// variables), to inspect (it starts no external server).
    pub fn init(
        &mut self,
        settings: &Map<String, Value>,
        env: &[(String, String)],
    ) -> Result<(), StartError> {
        let Some(launched) = self.worker.take() else {
            return Err(StartError::Died(self.gone.clone().unwrap_or_default()));
        };
        match supervisor::init(
            launched,
            &self.manifest.id,
            settings,
            env,
            LoadPurpose::Inspect,
            None,
            None,
        ) {
            Ok(l) => {
                self.worker = Some(l);
                Ok(())
            }
            Err(e) => {
                self.gone = Some(e.to_string());
                Err(e)
            }
        }
    }

    /// Runs one driver call within `timeout` (the driver sees it as its
    /// deadline); past it plus a grace the worker is killed.
    pub(crate) fn call<T: DeserializeOwned>(
        &mut self,
        method: Method,
        timeout: Duration,
    ) -> Result<T, InspectError> {
        let name = method.name();
        let Some(worker) = self.worker.as_mut() else {
            return Err(InspectError::Worker(
                self.gone
                    .clone()
                    .unwrap_or_else(|| "its worker is gone".into()),
            ));
        };
        let id = self.next_id;
        self.next_id += 1;
        let call = Call {
            id,
            budget_us: Some(u64::try_from(timeout.as_micros()).unwrap_or(u64::MAX)),
            observation_id: ObservationId::new_v7(),
            request_id: format!("inspect-{id}"),
            method,
        };
        let until = Instant::now() + timeout + GRACE;
        let answer = (|| -> Result<Reply, FrameError> {
            let header = serde_json::to_vec(&call)
                .map_err(|_| FrameError::Malformed("the call does not serialize"))?;
            let out = Outgoing::new(Kind::Call, &header, &[], None, Vec::new())?;
            channel::send_within(&worker.channel, &out, WRITE_TIMEOUT)?;
            let mut buf = channel::buffer();
            loop {
                let left = until.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(FrameError::Io(std::io::ErrorKind::TimedOut.into()));
                }
                let frame = channel::receive(&worker.channel, &mut buf, None, Some(left))?;
                if frame.kind != Kind::Reply {
                    return Err(FrameError::Malformed("a frame out of turn"));
                }
                let reply: Reply = serde_json::from_slice(&frame.header)
                    .map_err(|_| FrameError::Malformed("an unreadable reply"))?;
                if reply.id == id {
                    return Ok(reply);
                }
            }
        })();
        match answer {
            Ok(Reply {
                outcome: Outcome::Ok(v),
                ..
            }) => serde_json::from_str(v.get()).map_err(|e| {
                InspectError::Driver(DriverError::new(
                    devicerail_host_protocol::ErrorCode::ProtocolError,
                    format!("the driver returned an invalid {name} answer: {e}"),
                ))
            }),
            Ok(Reply {
                outcome: Outcome::Err(e),
                ..
            }) => Err(InspectError::Driver(e)),
            Err(e) => {
                let hung = timed_out(&e);
                let how = self
                    .worker
                    .take()
                    .map(Launched::abandon)
                    .unwrap_or_default();
                let why = if hung {
                    format!(
                        "{name} did not answer within {} s; its worker was killed ({how})",
                        timeout.as_secs()
                    )
                } else {
                    format!("its worker ended during {name} ({e}): {how}")
                };
                self.gone = Some(why.clone());
                Err(InspectError::Worker(why))
            }
        }
    }
}

impl Drop for Inspection {
    fn drop(&mut self) {
        if let Some(worker) = self.worker.take() {
            worker.discard();
        }
    }
}
