//! The console page's WebSocket messages, both ways, as types: JSON text
//! frames tagged by `type`. The page (`assets/console.js`) is their only
//! other speaker. Nothing here does I/O.

use devicerail_host_protocol::TestEvent;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who holds a device, as one viewer sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Holder {
    /// `none`, `you`, `client` or `reservation`.
    pub kind: &'static str,
    /// The client's name or the reservation's label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// One device in the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DeviceView {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `android`, `ios` or `web`.
    pub platform: String,
    /// The plugin serving it.
    pub plugin: String,
    /// `up`, `restarting`, `crashed` or `stopping`.
    pub health: String,
    /// Why it cannot be used, in a few words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What `doctor` says is wrong.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub doctor: Vec<String>,
    /// Who holds it.
    pub holder: Holder,
}

/// One Session in the list.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    /// Its id.
    pub id: String,
    /// Its device, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// `active` or `ended`.
    pub state: String,
    /// When it started, in Unix milliseconds.
    pub started_at_ms: u64,
    /// When it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ended_at_ms: Option<u64>,
    /// How many events it has.
    pub events: u64,
}

/// What a viewer's control of the watched device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ControlState {
    /// This viewer holds it.
    Yours,
    /// Someone else does.
    Held,
    /// Nobody does.
    Free,
}

/// A failed request's error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Failure {
    /// A protocol error code, or the console's own (`not_in_control`…).
    pub code: String,
    /// What went wrong, for a person.
    pub message: String,
}

/// Server to page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ServerMsg {
    /// First message: who this viewer is and which host it sees.
    Hello {
        /// `{id, name}`.
        viewer: Value,
        /// `{mode, dataDir}`.
        host: Value,
    },
    /// Every device (sent whenever something changed).
    Devices {
        /// The devices.
        devices: Vec<DeviceView>,
    },
    /// A frame of the watched device.
    #[serde(rename_all = "camelCase")]
    Frame {
        /// The device.
        device: String,
        /// Its number.
        seq: u64,
        /// `image/png` or `image/jpeg`.
        media_type: String,
        /// Width in screenshot pixels.
        width: u32,
        /// Height in screenshot pixels.
        height: u32,
        /// When the device's driver captured it.
        captured_at_ms: u64,
        /// The image, base64.
        data: String,
    },
    /// This viewer's control of a device.
    Control {
        /// The device.
        device: String,
        /// The state.
        state: ControlState,
        /// Who holds it, when someone else does.
        #[serde(skip_serializing_if = "Option::is_none")]
        holder: Option<String>,
        /// The Session this viewer's Actions go to.
        #[serde(skip_serializing_if = "Option::is_none")]
        session: Option<String>,
    },
    /// Every Session, newest first.
    Sessions {
        /// The Sessions.
        sessions: Vec<SessionView>,
    },
    /// One event of the followed Session.
    Event {
        /// The Session.
        session: String,
        /// The event as recorded.
        event: Box<TestEvent>,
    },
    /// An Action's effect in the followed Session.
    #[serde(rename_all = "camelCase")]
    Effect {
        /// The Session.
        session: String,
        /// The Action.
        call_id: String,
        /// `changed`, `no visible change`…
        verdict: String,
        /// In a few words.
        summary: String,
        /// The before screenshot's digest.
        #[serde(skip_serializing_if = "Option::is_none")]
        before: Option<String>,
        /// The after screenshot's digest.
        #[serde(skip_serializing_if = "Option::is_none")]
        after: Option<String>,
    },
    /// The answer to a request.
    Result {
        /// The request's id.
        id: u64,
        /// Whether it succeeded.
        ok: bool,
        /// What it answered.
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
        /// Why it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<Failure>,
    },
    /// Something a person should read.
    Notice {
        /// The text.
        message: String,
    },
}

/// Page to server.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase", deny_unknown_fields)]
pub enum ClientMsg {
    /// Start watching a device's screen.
    Watch {
        /// The device.
        device: String,
    },
    /// Stop watching it.
    Unwatch {
        /// The device.
        device: String,
    },
    /// Take control of a device.
    Take {
        /// Request id.
        id: u64,
        /// The device.
        device: String,
    },
    /// Let go of it.
    Release {
        /// Request id.
        id: u64,
    },
    /// A tap, in screenshot pixels.
    Tap {
        /// Request id.
        id: u64,
        /// x.
        x: f64,
        /// y.
        y: f64,
    },
    /// A swipe, in screenshot pixels.
    #[serde(rename_all = "camelCase")]
    Swipe {
        /// Request id.
        id: u64,
        /// Start x.
        from_x: f64,
        /// Start y.
        from_y: f64,
        /// End x.
        to_x: f64,
        /// End y.
        to_y: f64,
        /// How long it takes.
        duration_ms: u64,
    },
    /// Text typed into the focused field.
    Text {
        /// Request id.
        id: u64,
        /// The text.
        text: String,
    },
    /// A secret typed into the focused field (recorded redacted).
    Secret {
        /// Request id.
        id: u64,
        /// The secret; never logged.
        text: SecretText,
    },
    /// A key.
    Key {
        /// Request id.
        id: u64,
        /// `Enter`, `Back`, `Tab`…
        key: String,
    },
    /// Follow a Session's events.
    Follow {
        /// The Session.
        session: String,
    },
    /// Replay an ended Session on its device.
    Replay {
        /// Request id.
        id: u64,
        /// The Session.
        session: String,
    },
    /// Export a Session as a script.
    Export {
        /// Request id.
        id: u64,
        /// The Session.
        session: String,
        /// `python`, `typescript`, `rust` or `playwright`.
        script: String,
    },
    /// A new invite link for another viewer.
    Invite {
        /// Request id.
        id: u64,
    },
    /// The page painted a frame (for the latency figures).
    #[serde(rename_all = "camelCase")]
    Painted {
        /// The device.
        device: String,
        /// The frame.
        seq: u64,
        /// When it was captured.
        captured_at_ms: Option<u64>,
        /// When it was painted.
        painted_at_ms: u64,
    },
}

/// A secret's text: its `Debug` never shows it.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct SecretText(String);

impl SecretText {
    /// The text, for the one call that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<redacted>")
    }
}
