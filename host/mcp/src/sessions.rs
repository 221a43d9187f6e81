//! One DeviceRail connection and one recorded Session per device the MCP
//! server drives: the connection selects and connects the device (taking
//! its lease), and a Session is started on first use, so every tool call
//! is a request in a recorded, replayable Session. Calls on one device are
//! serialized; different devices never wait for each other.
//!
//! It never guesses a device: every call names one. A device leased by
//! another client answers with the host's lease error.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use devicerail_host_link::methods::{
    DeviceConnect, DeviceDisconnect, DeviceSelect, SessionEnd, SessionStart, VerdictRecord,
};
use devicerail_host_link::{ClientState, DeviceRailClient};
use serde_json::{Value, json};

use super::backend::{Backend, BackendError, LeaseView, call, call0};

/// How long connecting a device may take (a browser launch, a simulator).
const CONNECT_TIMEOUT_MS: u64 = 60_000;

/// The state of one device's link.
#[derive(Default)]
pub(crate) struct Slot {
    client: Option<DeviceRailClient>,
    session: Option<String>,
    /// The last Session ended here, with its verdict.
    pub ended: Option<(String, Option<String>)>,
}

impl Slot {
    /// The active Session's id, if any.
    pub(crate) fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }

    /// Whether this server holds the device.
    pub(crate) fn holds(&self) -> bool {
        self.client.is_some()
    }

    /// The connection and the Session, starting either when missing.
    pub(crate) async fn ensure(
        &mut self,
        backend: &Backend,
        leases: &LeaseView,
        device: &str,
    ) -> Result<(&DeviceRailClient, String), BackendError> {
        if self.client.as_ref().is_some_and(|c| !usable(c)) {
            // The connection died (the shared host went away): the host
            // ended its Session; start afresh.
            tracing::warn!(device, "the connection to the host was lost; reconnecting");
            self.client = None;
            self.session = None;
        }
        if self.client.is_none() {
            let client = super::backend::connect(backend, leases).await?;
            let ready = async {
                call::<DeviceSelect>(&client, json!({ "deviceId": device }), None).await?;
                call0::<DeviceConnect>(&client, Some(CONNECT_TIMEOUT_MS)).await
            }
            .await;
            if let Err(e) = ready {
                let _ = client.close().await;
                return Err(e);
            }
            self.client = Some(client);
        }
        let Some(client) = self.client.as_ref() else {
            return Err(BackendError::Client(
                devicerail_host_link::ClientError::Closed,
            ));
        };
        if self.session.is_none() {
            let info = call0::<SessionStart>(client, None).await?;
            let id = info["id"].as_str().unwrap_or_default().to_owned();
            tracing::info!(device, session = %id, "session started");
            self.session = Some(id);
        }
        let id = self.session.clone().unwrap_or_default();
        Ok((client, id))
    }

    /// Records the verdict, ends the Session, disconnects the device and
    /// closes the connection (freeing the lease). Returns the Session id.
    pub(crate) async fn end(
        &mut self,
        verdict: &str,
        summary: &str,
    ) -> Result<Option<String>, BackendError> {
        let Some(client) = self.client.take() else {
            return Ok(None);
        };
        let session = self.session.take();
        let result = async {
            if session.is_some() {
                call::<VerdictRecord>(
                    &client,
                    json!({ "verdict": { "status": verdict, "summary": summary, "evidence": [] } }),
                    None,
                )
                .await?;
                let outcome = if verdict == "fail" {
                    "failed"
                } else {
                    "completed"
                };
                call::<SessionEnd>(&client, json!({ "outcome": outcome }), None).await?;
            }
            call0::<DeviceDisconnect>(&client, Some(CONNECT_TIMEOUT_MS)).await?;
            Ok::<(), BackendError>(())
        }
        .await;
        let _ = client.close().await;
        if let Some(id) = &session {
            tracing::info!(session = %id, verdict, "session ended");
            self.ended = Some((id.clone(), Some(verdict.to_owned())));
        }
        result.map(|()| session)
    }

    /// Closes the connection without a verdict (server shutdown): the host
    /// ends the Session as it does for any client that goes away.
    pub(crate) async fn close(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = client.close().await;
        }
        self.session = None;
    }
}

/// Whether a connection can still carry requests.
pub(crate) fn usable(client: &DeviceRailClient) -> bool {
    !matches!(
        client.state(),
        ClientState::Closed | ClientState::Failed | ClientState::Closing
    )
}

/// Every device's slot.
#[derive(Default)]
pub(crate) struct Slots {
    map: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Slot>>>>,
}

impl Slots {
    /// The slot of `device` (created empty).
    pub(crate) fn get(&self, device: &str) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.entry(device.to_owned()).or_default().clone()
    }

    /// Every slot, by device id.
    pub(crate) fn all(&self) -> Vec<(String, Arc<tokio::sync::Mutex<Slot>>)> {
        let map = self
            .map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
    }
}

/// `sessionId` and `device` of a structured result.
pub(crate) fn ids(device: &str, session: &str) -> Value {
    json!({ "device": device, "sessionId": session })
}
