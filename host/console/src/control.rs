//! One viewer's control of one device: its own connection to the host
//! (through the link crate, like any client), the device's lease, and a
//! Session that records every Action the person takes — taps and drags on
//! the live screen, text, secrets (as `inputSecret`, redacted by the host)
//! and keys. Released on request or when the viewer leaves.
//!
//! It must never log a secret's text.

use devicerail_host_link::methods::{
    DeviceConnect, DeviceDisconnect, DeviceExecute, DeviceSelect, SessionEnd, SessionStart,
};
use devicerail_host_link::typed::call0_as;
use devicerail_host_link::{DeviceRailClient, Intro, LinkError, Reach, call, call0};
use devicerail_host_protocol::SessionInfo;
use serde_json::{Value, json};

use crate::messages::Failure;

/// How long one Action may take.
const ACTION_TIMEOUT_MS: u64 = 60_000;
/// How long connecting a device may take (a browser starts).
const CONNECT_TIMEOUT_MS: u64 = 60_000;

/// What a viewer asked the device to do.
#[derive(Debug)]
pub(crate) enum Act<'a> {
    /// `tap`.
    Tap { x: f64, y: f64 },
    /// `swipe`.
    Swipe {
        from: (f64, f64),
        to: (f64, f64),
        duration_ms: u64,
    },
    /// `inputText`.
    Text(&'a str),
    /// `inputSecret`.
    Secret(&'a crate::messages::SecretText),
    /// `pressKey`.
    Key(&'a str),
}

impl Act<'_> {
    /// The Action's name and arguments (points in whole pixels).
    fn call(&self) -> (&'static str, Value) {
        let px = |v: f64| v.round().max(0.0) as u64;
        match self {
            Act::Tap { x, y } => ("tap", json!({ "x": px(*x), "y": px(*y) })),
            Act::Swipe {
                from,
                to,
                duration_ms,
            } => (
                "swipe",
                json!({
                    "fromX": px(from.0), "fromY": px(from.1),
                    "toX": px(to.0), "toY": px(to.1),
                    "durationMs": (*duration_ms).clamp(50, 5_000),
                }),
            ),
            Act::Text(t) => ("inputText", json!({ "text": t })),
            Act::Secret(s) => ("inputSecret", json!({ "text": s.expose() })),
            Act::Key(k) => ("pressKey", json!({ "key": k })),
        }
    }
}

/// A device this viewer holds.
pub(crate) struct Control {
    pub(crate) device: String,
    pub(crate) session: String,
    client: DeviceRailClient,
}

/// The page's error for a failed call.
pub(crate) fn failure(e: &LinkError) -> Failure {
    match e {
        LinkError::Remote { code, message, .. } => Failure {
            code: code.clone(),
            message: message.clone(),
        },
        LinkError::Decode(_) => Failure {
            code: "invalid_request".into(),
            message: e.to_string(),
        },
        other => Failure {
            code: "host_unreachable".into(),
            message: other.to_string(),
        },
    }
}

impl Control {
    /// Takes `device` for `viewer`: a connection, the lease, a Session.
    pub(crate) async fn take(reach: &Reach, viewer: &str, device: &str) -> Result<Self, LinkError> {
        let client = reach
            .client(
                &Intro::new(&format!("console {viewer}")),
                &format!("devicerail-console ({viewer})"),
            )
            .await?;
        let ready = async {
            call::<DeviceSelect>(&client, json!({ "deviceId": device }), None).await?;
            call0::<DeviceConnect>(&client, Some(CONNECT_TIMEOUT_MS)).await?;
            call0_as::<SessionStart, SessionInfo>(&client, None).await
        }
        .await;
        match ready {
            Ok(info) => {
                tracing::info!(viewer, device, session = %info.id, "console control taken");
                Ok(Self {
                    device: device.to_owned(),
                    session: info.id.to_string(),
                    client,
                })
            }
            Err(e) => {
                let _ = client.close().await;
                Err(e)
            }
        }
    }

    /// Runs one Action in the Session.
    pub(crate) async fn act(&self, act: &Act<'_>) -> Result<Value, LinkError> {
        let (name, arguments) = act.call();
        call::<DeviceExecute>(
            &self.client,
            json!({ "id": uuid::Uuid::new_v4().to_string(), "name": name, "arguments": arguments }),
            Some(ACTION_TIMEOUT_MS),
        )
        .await
    }

    /// Ends the Session, frees the device, closes the connection.
    pub(crate) async fn release(self) {
        let ended = async {
            call::<SessionEnd>(&self.client, json!({ "outcome": "completed" }), None).await?;
            call0::<DeviceDisconnect>(&self.client, None).await
        }
        .await;
        if let Err(e) = ended {
            tracing::warn!(device = %self.device, "releasing the device: {e}");
        }
        let _ = self.client.close().await;
        tracing::info!(device = %self.device, session = %self.session, "console control released");
    }
}
