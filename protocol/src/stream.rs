//! The event stream: a loopback WebSocket data plane for one Session.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};

use crate::bounded::{EventSequence, OutOfRange, SafeU64};
use crate::errors::ErrorInfo;
use crate::event::TestEvent;
use crate::ids::{SessionId, StreamEpoch, SubscriptionId};
use crate::session::SessionState;

/// A position in one Session's log, valid only within one daemon lifetime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventStreamCursor {
    /// The daemon lifetime the cursor belongs to.
    pub stream_epoch: StreamEpoch,
    /// The Session the cursor belongs to.
    pub session_id: SessionId,
    /// The sequence of an event in that Session.
    pub sequence: EventSequence,
}

/// A short-lived, single-use bearer URL. `Debug` never shows it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct EventStreamEndpoint(String);

impl EventStreamEndpoint {
    /// Longest endpoint URL, in characters.
    pub const MAX_LEN: usize = 2048;

    /// Checks the URL's length (1 to [`Self::MAX_LEN`] characters).
    pub fn new(url: String) -> Result<Self, OutOfRange> {
        let len = url.chars().count();
        if (1..=Self::MAX_LEN).contains(&len) {
            Ok(Self(url))
        } else {
            Err(OutOfRange {
                what: "endpoint length",
                actual: len.to_string(),
                min: "1".to_owned(),
                max: Self::MAX_LEN.to_string(),
            })
        }
    }

    /// The secret URL. Callers must not log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for EventStreamEndpoint {
    type Error = OutOfRange;
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
    Exact {
        /// The exact `Origin` value, such as `http://127.0.0.1:5173`.
        origin: String,
    },
}

/// Parameters of `events.stream.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamOpenParams {
    /// The Session whose events the stream carries.
    pub session_id: SessionId,
    /// Which `Origin` header the WebSocket upgrade must carry.
    pub origin_policy: EventStreamOriginPolicy,
}

/// Result of `events.stream.open`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamOpenResult {
    /// The single-use WebSocket URL; a bearer secret.
    pub endpoint: EventStreamEndpoint,
    /// The current daemon lifetime, which every cursor of the stream carries.
    pub stream_epoch: StreamEpoch,
    /// When an unused endpoint stops working, in Unix milliseconds.
    pub expires_at_ms: SafeU64,
}

/// Parameters of `events.subscribe` (WebSocket only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsSubscribeParams {
    /// The Session to follow; must be the endpoint's Session.
    pub session_id: SessionId,
    /// Resume after this confirmed position; absent replays from the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_cursor: Option<EventStreamCursor>,
}

/// Result of `events.subscribe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsSubscribeResult {
    /// Id of the new subscription; every notification carries it.
    pub subscription_id: SubscriptionId,
    /// The Session followed.
    pub session_id: SessionId,
    /// The last event that existed when the subscription started; replay
    /// runs through it, then live events follow.
    pub replay_through: EventStreamCursor,
    /// Whether the Session was still active when the subscription started.
    pub session_state: SessionState,
}

/// Params of one `events.stream.event` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamEventParams {
    /// The subscription the event belongs to.
    pub subscription_id: SubscriptionId,
    /// The event's position; pass it as `afterCursor` to resume after it.
    pub cursor: EventStreamCursor,
    /// The recorded event, in the same shape `events.list` returns.
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
    /// The client read too slowly and overflowed the bounded send queue.
    SlowConsumer {
        /// Coded `stream_slow_consumer` (retryable).
        error: ErrorInfo,
    },
    /// The Session was deleted with `events.clear`.
    SessionDeleted {
        /// Coded `stream_session_deleted`.
        error: ErrorInfo,
    },
    /// The daemon is shutting down.
    ServerShutdown {
        /// Coded `stream_server_shutdown` (retryable).
        error: ErrorInfo,
    },
    /// The server cannot send the next event without skipping one.
    SequenceGap {
        /// Coded `stream_sequence_gap`.
        error: ErrorInfo,
    },
    /// An event does not fit in one WebSocket message.
    EventTooLarge {
        /// Coded `stream_event_too_large`.
        error: ErrorInfo,
    },
    /// The server failed, or an event needs a newer protocol version than
    /// the one negotiated.
    InternalError {
        /// Coded `stream_internal_error` or `stream_event_protocol_incompatible`.
        error: ErrorInfo,
    },
}

/// Params of the one `events.stream.terminal` notification.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamTerminalParams {
    /// The subscription that ended.
    pub subscription_id: SubscriptionId,
    /// The Session it followed.
    pub session_id: SessionId,
    /// End of the contiguous prefix the server sent (not an acknowledgement).
    #[serde(default)]
    pub last_emitted_cursor: Option<EventStreamCursor>,
    /// Why the stream ended.
    pub termination: EventsStreamTermination,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_length_is_bounded() {
        let long = "x".repeat(EventStreamEndpoint::MAX_LEN + 1);
        // The text reaches clients inside invalid_params reasons.
        let err = serde_json::from_value::<EventStreamEndpoint>(long.into())
            .err()
            .map(|e| e.to_string());
        assert!(
            err.as_deref()
                .is_some_and(|e| e.starts_with("endpoint length 2049 is outside 1..=2048")),
            "{err:?}"
        );
        assert!(EventStreamEndpoint::new(String::new()).is_err());
        assert!(EventStreamEndpoint::new("ws://127.0.0.1:1/v/t".into()).is_ok());
    }
}
