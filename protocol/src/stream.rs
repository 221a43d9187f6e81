//! The event stream: a loopback WebSocket data plane for one Session.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::bounded::{EventSequence, SafeU64};
use crate::errors::ErrorInfo;
use crate::event::TestEvent;
use crate::ids::{SessionId, StreamEpoch, SubscriptionId};
use crate::session::SessionState;

/// A position in one Session's log, valid only within one daemon lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventStreamCursor {
    pub stream_epoch: StreamEpoch,
    pub session_id: SessionId,
    pub sequence: EventSequence,
}

/// A short-lived, single-use bearer URL. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EventStreamEndpoint(String);

impl EventStreamEndpoint {
    pub const MAX_LEN: usize = 2048;

    pub fn new(url: String) -> Result<Self, String> {
        let len = url.chars().count();
        if (1..=Self::MAX_LEN).contains(&len) {
            Ok(Self(url))
        } else {
            Err(format!(
                "endpoint length {len} is outside 1..={}",
                Self::MAX_LEN
            ))
        }
    }

    /// The secret URL. Callers must not log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for EventStreamEndpoint {
    type Error = String;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl From<EventStreamEndpoint> for String {
    fn from(value: EventStreamEndpoint) -> Self {
        value.0
    }
}

impl fmt::Debug for EventStreamEndpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventStreamEndpoint(<redacted>)")
    }
}

impl JsonSchema for EventStreamEndpoint {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "EventStreamEndpoint".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string", "minLength": 1, "maxLength": Self::MAX_LEN })
    }
}

/// Which browser `Origin` header the stream accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase", deny_unknown_fields)]
pub enum EventStreamOriginPolicy {
    /// Non-browser clients: the request must carry no `Origin`.
    Absent,
    /// A browser client: `Origin` must equal this value exactly.
    Exact { origin: String },
}

/// Parameters of `events.stream.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamOpenParams {
    pub session_id: SessionId,
    pub origin_policy: EventStreamOriginPolicy,
}

/// Result of `events.stream.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamOpenResult {
    pub endpoint: EventStreamEndpoint,
    pub stream_epoch: StreamEpoch,
    pub expires_at_ms: SafeU64,
}

/// Parameters of `events.subscribe` (WebSocket only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsSubscribeParams {
    pub session_id: SessionId,
    /// Resume after this confirmed position; absent replays from the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_cursor: Option<EventStreamCursor>,
}

/// Result of `events.subscribe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsSubscribeResult {
    pub subscription_id: SubscriptionId,
    pub session_id: SessionId,
    /// The last event that existed when the subscription started; replay
    /// runs through it, then live events follow.
    pub replay_through: EventStreamCursor,
    pub session_state: SessionState,
}

/// Params of one `events.stream.event` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamEventParams {
    pub subscription_id: SubscriptionId,
    pub cursor: EventStreamCursor,
    pub event: TestEvent,
}

/// Why a stream ended: a closed set, each with its own error shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "reason", rename_all = "camelCase", deny_unknown_fields)]
pub enum EventsStreamTermination {
    /// The Session ended and every event was sent.
    SessionEnded,
    /// The client cancelled.
    Cancelled,
    SlowConsumer {
        error: ErrorInfo,
    },
    SessionDeleted {
        error: ErrorInfo,
    },
    ServerShutdown {
        error: ErrorInfo,
    },
    SequenceGap {
        error: ErrorInfo,
    },
    EventTooLarge {
        error: ErrorInfo,
    },
    InternalError {
        error: ErrorInfo,
    },
}

/// Params of the one `events.stream.terminal` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamTerminalParams {
    pub subscription_id: SubscriptionId,
    pub session_id: SessionId,
    /// End of the contiguous prefix the server sent (not an acknowledgement).
    #[serde(default)]
    pub last_emitted_cursor: Option<EventStreamCursor>,
    pub termination: EventsStreamTermination,
}
