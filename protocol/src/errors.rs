//! The error catalog: every DeviceRail error code, its JSON-RPC code and
//! whether a client may retry, plus the wire error types.
//!
//! Clients branch on `error.data.code`; the envelope code groups codes.
//! Drivers may report their own codes; those travel with envelope code
//! [`ErrorCode::DRIVER_RPC_CODE`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Structured error data (`error.data` of a failure, or nested in events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ErrorInfo {
    /// A stable machine-readable code (see the catalog).
    pub code: String,
    /// Human-readable text; never branch on it.
    pub message: String,
    /// Whether repeating the same request may succeed.
    pub retryable: bool,
    /// Code-specific structured details, or `null`.
    #[serde(default)]
    pub details: serde_json::Value,
}

impl ErrorInfo {
    pub fn new(code: impl Into<String>, message: impl Into<String>, retryable: bool) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable,
            details: serde_json::Value::Null,
        }
    }

    #[must_use]
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = details;
        self
    }
}

/// The `error` member of a JSON-RPC failure response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RpcError {
    /// JSON-RPC numeric code.
    // schemars states no bounds for `i32`; state the type's range.
    #[schemars(range(min = i32::MIN, max = i32::MAX))]
    pub code: i32,
    pub message: String,
    pub data: ErrorInfo,
}

impl RpcError {
    /// A failure whose envelope code comes from the catalog (unknown codes,
    /// i.e. driver codes, use [`ErrorCode::DRIVER_RPC_CODE`]).
    pub fn from_info(data: ErrorInfo) -> Self {
        let code = ErrorCode::from_code(&data.code)
            .map(ErrorCode::rpc_code)
            .unwrap_or(ErrorCode::DRIVER_RPC_CODE);
        Self {
            code,
            message: data.message.clone(),
            data,
        }
    }
}

macro_rules! catalog {
    ($( $variant:ident = $code:literal, $rpc:literal, $retry:literal, $desc:literal; )*) => {
        /// Every error code the host or its drivers emit.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $( #[doc = $desc] $variant, )* }

        impl ErrorCode {
            /// The whole catalog, in table order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            /// The `error.data.code` string.
            pub const fn as_str(self) -> &'static str {
                match self { $( ErrorCode::$variant => $code, )* }
            }
            /// The JSON-RPC envelope code.
            pub const fn rpc_code(self) -> i32 {
                match self { $( ErrorCode::$variant => $rpc, )* }
            }
            /// Whether a client may retry the same request.
            pub const fn retryable(self) -> bool {
                match self { $( ErrorCode::$variant => $retry, )* }
            }
            /// What the code means.
            pub const fn description(self) -> &'static str {
                match self { $( ErrorCode::$variant => $desc, )* }
            }
            pub fn from_code(code: &str) -> Option<Self> {
                match code { $( $code => Some(ErrorCode::$variant), )* _ => None }
            }
        }
    };
}

catalog! {
    // JSON-RPC level.
    ParseError = "parse_error", -32700, false, "The frame is not valid JSON (or not UTF-8).";
    InvalidRequest = "invalid_request", -32600, false, "The JSON-RPC envelope is invalid or unsupported.";
    MethodNotFound = "method_not_found", -32601, false, "The method does not exist, or its feature or version was not negotiated.";
    InvalidParams = "invalid_params", -32602, false, "The parameters do not match the method's contract.";
    FeatureNotNegotiated = "feature_not_negotiated", -32602, false, "A control field or protected action needs a feature this connection did not negotiate.";
    RequestTimeoutNotSupported = "request_timeout_not_supported", -32602, false, "timeoutMs was sent to a method without request deadlines.";
    InternalError = "internal_error", -32603, false, "The host failed unexpectedly.";
    // Handshake.
    HandshakeRequired = "handshake_required", -32001, false, "system.hello has not completed on this connection.";
    HandshakeAlreadyCompleted = "handshake_already_completed", -32002, false, "system.hello already succeeded on this connection.";
    ProtocolVersionIncompatible = "protocol_version_incompatible", -32003, false, "Client and server share no wire version.";
    RequiredFeatureUnsupported = "required_feature_unsupported", -32004, false, "A required feature is unknown or unavailable at the selected version.";
    FeatureDependencyUnsatisfied = "feature_dependency_unsatisfied", -32004, false, "An enabled feature needs another feature that is not enabled.";
    // Sessions and the store.
    SessionRequired = "session_required", -32005, false, "The operation records facts and needs an active Session.";
    SessionBusy = "session_busy", -32006, true, "Work is still in flight in the Session; cancel or await it, then retry.";
    SessionAlreadyActive = "session_already_active", -32006, false, "A Session is already active on this connection.";
    SessionNotFound = "session_not_found", -32006, false, "No Session with this id exists.";
    SessionNotEnded = "session_not_ended", -32006, false, "The operation needs an ended Session.";
    SequenceOutOfRange = "sequence_out_of_range", -32006, false, "The cursor lies beyond the Session's last event.";
    StorageFailure = "storage_failure", -32006, true, "The event or evidence store could not complete the write.";
    EvidenceNotInSession = "evidence_not_in_session", -32006, false, "An Evidence reference is not reachable from the active Session.";
    UiSnapshotNotFound = "ui_snapshot_not_found", -32006, false, "The Observation has no UI snapshot in the active Session.";
    MediaStreamExists = "media_stream_exists", -32006, false, "The media stream id was already used in this daemon lifetime.";
    MediaStreamNotFound = "media_stream_not_found", -32006, false, "No open media stream with this id belongs to the active Session.";
    MediaStreamOpen = "media_stream_open", -32006, false, "The Session still has an open media stream.";
    MediaFrameOutOfOrder = "media_frame_out_of_order", -32006, false, "The frame index skips ahead or goes back.";
    MediaFrameMismatch = "media_frame_mismatch", -32006, false, "A retried frame index differs from the captured frame.";
    MediaDurationRequired = "media_duration_required", -32602, false, "A video capture needs a positive durationMs.";
    MediaCaptureDisabled = "media_capture_disabled", -32006, false, "The host's screenshot policy forbids capturing media frames.";
    // Request control.
    RequestCancelled = "request_cancelled", -32007, false, "The request observed explicit cancellation or shutdown.";
    RequestTimedOut = "request_timed_out", -32008, true, "The request's timeoutMs budget elapsed.";
    ActionTimedOut = "action_timed_out", -32008, true, "The Driver-only actionTimeoutMs budget elapsed.";
    RequestIdInUse = "request_id_in_use", -32009, false, "The RPC id is reserved by an unfinished request.";
    TooManyRequests = "too_many_requests", -32010, true, "The connection reached its in-flight request bound.";
    // Routing.
    DeviceSelectionRequired = "device_selection_required", -32011, false, "Several devices exist; select one first.";
    DeviceNotFound = "device_not_found", -32011, false, "No registered device has this id (or none is registered).";
    ResponseFrameTooLarge = "response_frame_too_large", -32012, false, "The result cannot fit in one 1 MiB response frame.";
    // Driver codes (envelope -32000).
    DeviceUnavailable = "device_unavailable", -32000, true, "The device is offline, unauthorized or gone.";
    DeviceNotConnected = "device_not_connected", -32000, false, "The device must be connected first.";
    InvalidArguments = "invalid_arguments", -32000, false, "The Action arguments do not match its input schema.";
    UnknownAction = "unknown_action", -32000, false, "The device's action space has no Action of this name.";
    ActionFailed = "action_failed", -32000, false, "The Driver tried the Action and it failed.";
    ElementNotFound = "element_not_found", -32000, false, "No UI element matches the selector.";
    ElementAmbiguous = "element_ambiguous", -32000, false, "More than one UI element matches the selector.";
    ElementNotActionable = "element_not_actionable", -32000, true, "The element is hidden, disabled, moving or covered.";
    StaleElement = "stale_element", -32000, false, "The node reference belongs to an older document epoch.";
    DriverPanicked = "driver_panicked", -32000, false, "The Driver panicked; the call was contained.";
    DriverFailure = "driver_failure", -32000, false, "The Driver failed for a reason of its own.";
    DriverProtocolViolation = "driver_protocol_violation", -32000, false, "The Driver returned data that breaks the protocol contract.";
    // Nested action terminal codes (inside actionCompleted events).
    ActionCancelled = "action_cancelled", -32007, false, "The Action was cancelled after it started.";
    ActionTimeout = "action_timeout", -32008, true, "The Action exceeded its deadline after it started.";
    // Event-payload and stream codes.
    SessionDegraded = "session_degraded", -32006, false, "The Session recorded terminal Action errors.";
    SessionRecovered = "session_recovered", -32006, false, "The Session was active when the host stopped and was closed on restart.";
    StreamSlowConsumer = "stream_slow_consumer", -32006, true, "The subscriber fell behind its bounded queue.";
    StreamSessionDeleted = "stream_session_deleted", -32006, false, "The streamed Session was deleted.";
    StreamServerShutdown = "stream_server_shutdown", -32006, true, "The host is shutting down.";
    StreamSequenceGap = "stream_sequence_gap", -32006, true, "The stream could not continue without a gap.";
    StreamEventTooLarge = "stream_event_too_large", -32006, false, "An event does not fit in one WebSocket message.";
    StreamInternalError = "stream_internal_error", -32603, false, "The stream failed unexpectedly.";
    StreamCursorInvalid = "stream_cursor_invalid", -32602, false, "The cursor belongs to another Session or daemon lifetime, or lies beyond the log.";
    StreamAlreadySubscribed = "stream_already_subscribed", -32006, false, "This stream connection already has its one subscription.";
}

impl ErrorCode {
    /// Envelope code of errors reported by a routed Driver.
    pub const DRIVER_RPC_CODE: i32 = -32000;

    /// Builds the wire data for this code.
    pub fn info(self, message: impl Into<String>) -> ErrorInfo {
        ErrorInfo::new(self.as_str(), message, self.retryable())
    }

    /// Builds a complete JSON-RPC error for this code.
    pub fn rpc(self, message: impl Into<String>, details: serde_json::Value) -> RpcError {
        let data = self.info(message).with_details(details);
        RpcError {
            code: self.rpc_code(),
            message: data.message.clone(),
            data,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_codes_are_unique_and_round_trip() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "duplicate {code}");
            assert_eq!(ErrorCode::from_code(code.as_str()), Some(*code));
        }
    }

    #[test]
    fn documented_table() {
        let table = [
            ("parse_error", -32700),
            ("invalid_request", -32600),
            ("method_not_found", -32601),
            ("invalid_params", -32602),
            ("feature_not_negotiated", -32602),
            ("request_timeout_not_supported", -32602),
            ("internal_error", -32603),
            ("handshake_required", -32001),
            ("handshake_already_completed", -32002),
            ("protocol_version_incompatible", -32003),
            ("required_feature_unsupported", -32004),
            ("feature_dependency_unsatisfied", -32004),
            ("session_required", -32005),
            ("session_busy", -32006),
            ("request_cancelled", -32007),
            ("request_timed_out", -32008),
            ("action_timed_out", -32008),
            ("request_id_in_use", -32009),
            ("too_many_requests", -32010),
            ("device_selection_required", -32011),
            ("device_not_found", -32011),
            ("response_frame_too_large", -32012),
            ("device_unavailable", -32000),
        ];
        for (code, rpc) in table {
            let c = ErrorCode::from_code(code).expect(code);
            assert_eq!(c.rpc_code(), rpc, "{code}");
        }
    }

    #[test]
    fn driver_codes_use_driver_envelope() {
        let e = RpcError::from_info(ErrorInfo::new("adb_shell_failed", "x", false));
        assert_eq!(e.code, ErrorCode::DRIVER_RPC_CODE);
        let e = RpcError::from_info(ErrorCode::SessionBusy.info("busy"));
        assert_eq!(e.code, -32006);
    }
}
