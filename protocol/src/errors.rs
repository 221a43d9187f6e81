//! The error catalog: every DeviceRail error code, its JSON-RPC code, whether
//! a client may retry, and the keys its `details` may carry, plus the wire
//! error types.
//!
//! Clients branch on `error.data.code` and `retryable`, so this table is a
//! compatibility contract. Its target is the published reference daemon's
//! catalog: every code marked [`Origin::Reference`] answers with exactly the
//! reference's numeric code, `retryable` flag and `details` keys (a test
//! compares the table with the catalog). [`Origin::Protocol`] codes are named
//! by the protocol text itself (nested Action terminal codes).
//!
//! Codes of our own ([`Origin::Own`]) exist only where the catalog has no
//! code for the condition:
//!
//! * `device_unavailable` (-32000, retryable): the device or the plugin that
//!   owns it is offline, unauthorized, gone or restarting. The reference
//!   daemon has no driver code for a device that vanishes under a connected
//!   Session; its pool codes (-32014) describe lease health, not the device.
//! * `driver_crashed` (-32000, retryable): a plugin worker process died
//!   while serving the call (it is restarted). The reference daemon runs
//!   drivers in process and has no such failure.
//! * `host_stopped` (nested in `actionCompleted`): the host stopped while
//!   the Action ran; recovery at the next start records it so every started
//!   Action has a terminal event.
//!
//! Some codes answer differently in one context (the same string with
//! another number or flag, as in the reference); [`Context`] names those
//! contexts and [`ALTERNATES`] lists them.

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
    /// Error data with `null` details.
    pub fn new(code: impl Into<String>, message: impl Into<String>, retryable: bool) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
            retryable,
            details: serde_json::Value::Null,
        }
    }

    /// The same data with `details` replaced.
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
    /// The same text as `data.message`.
    pub message: String,
    /// The DeviceRail error data clients branch on.
    pub data: ErrorInfo,
}

impl RpcError {
    /// A failure whose envelope code comes from the catalog (codes outside
    /// it, i.e. driver codes, use [`ErrorCode::DRIVER_RPC_CODE`]).
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

    /// Whether this is the given catalog code.
    pub fn is(&self, code: ErrorCode) -> bool {
        self.data.code == code.as_str()
    }
}

/// Where a code comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Origin {
    /// In the reference daemon's catalog; numbers, flags and detail keys
    /// agree with it.
    Reference,
    /// Named by the protocol text (nested Action terminal codes).
    Protocol,
    /// Ours: the catalog has no code for the condition (see the module
    /// docs for why each exists).
    Own,
}

/// A context in which a code answers with another number or flag.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Context {
    /// The default: the stdio control connection.
    Control,
    /// The event-stream WebSocket (`handshake_required`,
    /// `required_feature_unsupported`).
    EventStream,
    /// `system.hello` params (`invalid_params` is retryable there).
    Hello,
    /// A routed Driver's own failure (`internal_error` is -32000, retryable).
    Driver,
    /// No device is registered at all (`device_not_found` is retryable).
    NoDevices,
}

macro_rules! catalog {
    ($( $variant:ident = $code:literal, $rpc:literal, $retry:literal, $origin:ident, [$($key:literal),*], $desc:literal; )*) => {
        /// Every error code the host or its drivers put on the wire.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode { $( #[doc = $desc] $variant, )* }

        impl ErrorCode {
            /// The whole catalog, in table order.
            pub const ALL: &'static [ErrorCode] = &[ $( ErrorCode::$variant, )* ];

            /// The `error.data.code` string.
            pub const fn as_str(self) -> &'static str {
                match self { $( ErrorCode::$variant => $code, )* }
            }
            /// The JSON-RPC envelope code (in the default context).
            pub const fn rpc_code(self) -> i32 {
                match self { $( ErrorCode::$variant => $rpc, )* }
            }
            /// Whether a client may retry the same request (in the default
            /// context).
            pub const fn retryable(self) -> bool {
                match self { $( ErrorCode::$variant => $retry, )* }
            }
            /// Where the code comes from.
            pub const fn origin(self) -> Origin {
                match self { $( ErrorCode::$variant => Origin::$origin, )* }
            }
            /// Every key `details` may carry (empty: `details` is `null`).
            pub const fn detail_keys(self) -> &'static [&'static str] {
                match self { $( ErrorCode::$variant => &[$($key),*], )* }
            }
            /// What the code means.
            pub const fn description(self) -> &'static str {
                match self { $( ErrorCode::$variant => $desc, )* }
            }
            /// The code with this `error.data.code` string.
            pub fn from_code(code: &str) -> Option<Self> {
                match code { $( $code => Some(ErrorCode::$variant), )* _ => None }
            }
        }
    };
}

catalog! {
    // JSON-RPC level.
    ParseError = "parse_error", -32700, false, Reference, ["line", "column"], "The line is not complete, valid JSON (or not UTF-8).";
    InvalidRequest = "invalid_request", -32600, false, Reference, [], "The JSON is not an accepted request envelope.";
    MethodNotFound = "method_not_found", -32601, false, Reference, ["method", "requiredFeature"], "The method does not exist, its feature was not negotiated, or what backs it is unavailable.";
    ProtectedActionNotNegotiated = "protected_action_not_negotiated", -32601, false, Reference, ["action", "requiredFeature"], "A protected Action needs action.protected.v1.";
    SemanticActionNotNegotiated = "semantic_action_not_negotiated", -32601, false, Reference, ["action", "requiredFeature"], "A semantic Action needs device.semanticActions.v1.";
    InvalidParams = "invalid_params", -32602, false, Reference, ["method", "reason", "clientProtocol", "maximumSummaryLength", "maximumEvidenceReferences"], "The parameters do not match the method's contract.";
    FeatureNotNegotiated = "feature_not_negotiated", -32602, false, Reference, ["field", "requiredFeature"], "A control field was used before its feature was negotiated.";
    RequestTimeoutNotSupported = "request_timeout_not_supported", -32602, false, Reference, ["field", "method", "supportedMethods"], "timeoutMs was sent to a method without request deadlines.";
    InvalidStreamOrigin = "invalid_stream_origin", -32602, false, Reference, [], "An exact stream origin must be http(s)://127.0.0.1:PORT.";
    DuplicateEvidenceReference = "duplicate_evidence_reference", -32602, false, Reference, ["digest"], "A verdict cites the same Evidence twice.";
    EvidenceNotReachable = "evidence_not_reachable", -32602, false, Reference, ["digest"], "A verdict cites Evidence not reachable from the active Session.";
    InternalError = "internal_error", -32603, false, Reference, ["cause"], "The host (or, as -32000, a Driver) failed unexpectedly.";
    EvidenceIoError = "evidence_io_error", -32603, true, Reference, [], "Reading or writing the Evidence store failed.";
    // Driver codes (envelope -32000).
    DeviceNotConnected = "device_not_connected", -32000, true, Reference, ["deviceId"], "The device must be connected (device.connect) first.";
    UnknownAction = "unknown_action", -32000, false, Reference, ["action"], "The device's action space has no Action of this name.";
    InvalidArguments = "invalid_arguments", -32000, false, Reference, ["action"], "The Driver rejected the Action arguments.";
    ElementNotFound = "element_not_found", -32000, false, Reference, [], "No UI element matches the semantic target.";
    ElementAmbiguous = "element_ambiguous", -32000, false, Reference, [], "More than one UI element matches the semantic target.";
    ElementNotInteractable = "element_not_interactable", -32000, false, Reference, [], "The element is hidden, disabled or cannot be operated.";
    ElementStale = "element_stale", -32000, true, Reference, [], "The element reference belongs to an older UI state.";
    UiContextNotFound = "ui_context_not_found", -32000, false, Reference, [], "The selected UI context is not available.";
    UiContextAmbiguous = "ui_context_ambiguous", -32000, false, Reference, [], "The UI context selector matches more than one context.";
    UiContextChanged = "ui_context_changed", -32000, true, Reference, [], "The UI context changed during the operation.";
    SemanticChannelUnavailable = "semantic_channel_unavailable", -32000, false, Reference, [], "The Driver cannot run semantic Actions now.";
    ProtocolError = "protocol_error", -32000, false, Reference, [], "The Driver broke its contract (results, Evidence, execution metadata).";
    DriverCancelled = "driver_cancelled", -32000, false, Reference, [], "The Driver stopped on a cancellation the host did not request.";
    DriverTimedOut = "driver_timed_out", -32000, true, Reference, [], "The Driver's own timeout elapsed before the request's deadline.";
    PlatformError = "platform_error", -32000, false, Reference, ["platformCode"], "A platform adapter failed; platformCode names how.";
    DeviceUnavailable = "device_unavailable", -32000, true, Own, ["deviceId", "reason"], "The device, or the plugin serving it, is offline, unauthorized, gone or restarting.";
    DriverCrashed = "driver_crashed", -32000, true, Own, ["plugin", "reason"], "The plugin worker serving the call died; it is being restarted.";
    // Handshake.
    HandshakeRequired = "handshake_required", -32001, true, Reference, ["requiredMethod"], "system.hello has not completed on this connection.";
    HandshakeAlreadyCompleted = "handshake_already_completed", -32002, false, Reference, [], "system.hello already succeeded on this connection.";
    ProtocolVersionIncompatible = "protocol_version_incompatible", -32003, false, Reference, ["reason", "clientProtocol", "serverProtocol"], "Client and server share no wire version.";
    RequiredFeatureUnsupported = "required_feature_unsupported", -32004, true, Reference, ["unsupportedRequired", "available", "requiredFeature"], "A required feature is unavailable at the selected version or transport.";
    FeatureDependencyUnsatisfied = "feature_dependency_unsatisfied", -32004, false, Reference, ["feature", "requiredFeature"], "An enabled feature needs another feature that is not enabled.";
    // Sessions and the event store.
    SessionRequired = "session_required", -32005, true, Reference, ["requiredMethod"], "The operation records or reads facts of an active Session.";
    SessionAlreadyActive = "session_already_active", -32006, false, Reference, ["sessionId"], "A Session is already active on this connection.";
    SessionNotFound = "session_not_found", -32006, false, Reference, ["sessionId"], "No Session with this id exists.";
    SessionActive = "session_active", -32006, false, Reference, ["sessionId"], "The operation needs an ended Session.";
    SessionBusy = "session_busy", -32006, true, Reference, ["sessionId", "inFlightActions", "inFlightObservations", "inFlightMediaStreams"], "Work is still in flight in the Session; cancel or await it, then retry.";
    SessionEnded = "session_ended", -32006, false, Reference, ["sessionId"], "The Session ended while the write was on its way.";
    DuplicateActionCall = "duplicate_action_call", -32006, false, Reference, ["callId"], "device.execute reused an Action id within the Session.";
    EventCursorAhead = "event_cursor_ahead", -32006, false, Reference, ["sessionId", "afterSequence", "lastSequence"], "A paged export cursor lies beyond the Session's last event.";
    SessionProtocolIncompatible = "session_protocol_incompatible", -32006, false, Reference, ["eventId", "eventSequence", "method", "requiredProtocol", "selectedProtocol", "sessionId"], "An event needs a newer protocol minor than the connection negotiated.";
    EventStoreShuttingDown = "event_store_shutting_down", -32006, false, Reference, [], "The event store is shutting down.";
    EventStoreError = "event_store_error", -32006, true, Reference, ["cause"], "The event store could not complete the operation (I/O, full disk).";
    // Request control.
    RequestCancelled = "request_cancelled", -32007, false, Reference, ["reason"], "The request observed request.cancel or host shutdown.";
    RequestTimedOut = "request_timed_out", -32008, true, Reference, ["scope", "timeoutMs"], "The request's timeoutMs budget elapsed.";
    ActionTimedOut = "action_timed_out", -32008, true, Reference, ["scope", "timeoutMs"], "The Driver-only actionTimeoutMs budget elapsed.";
    RequestIdInUse = "request_id_in_use", -32009, false, Reference, ["requestId"], "The RPC id is reserved by an unfinished request.";
    TooManyRequests = "too_many_requests", -32010, true, Reference, ["limit", "scope"], "The connection reached its in-flight request bound.";
    // Routing.
    DeviceSelectionRequired = "device_selection_required", -32011, true, Reference, ["deviceCount", "availableDeviceIds", "requiredMethod", "requiredFeature"], "Several devices exist and none is selected.";
    DeviceNotFound = "device_not_found", -32011, false, Reference, ["deviceId", "reason"], "No registered device has this id (or none is registered).";
    ResponseFrameTooLarge = "response_frame_too_large", -32012, false, Reference, ["actualBytes", "actualBytesAtLeast", "limitBytes"], "The response cannot fit in one 1 MiB frame.";
    // The event stream (-32013; the last four are stream terminals).
    StreamCapabilityLimit = "stream_capability_limit", -32013, true, Reference, [], "Too many unused stream endpoints are pending.";
    StreamServerShutdown = "stream_server_shutdown", -32013, true, Reference, [], "The host is shutting down.";
    StreamTransportError = "stream_transport_error", -32013, false, Reference, [], "The stream endpoint could not be formed.";
    StreamCursorSessionMismatch = "stream_cursor_session_mismatch", -32013, false, Reference, [], "The subscription names another Session than the endpoint's.";
    StreamCursorEpochMismatch = "stream_cursor_epoch_mismatch", -32013, true, Reference, [], "The cursor belongs to another daemon lifetime.";
    StreamCursorAhead = "stream_cursor_ahead", -32013, false, Reference, ["afterSequence", "lastSequence"], "The cursor lies beyond the Session's last event.";
    StreamSubscriptionLimit = "stream_subscription_limit", -32013, true, Reference, ["maximumSubscribers"], "The Session already has the maximum number of subscribers.";
    StreamSessionDeleted = "stream_session_deleted", -32013, false, Reference, ["sessionId", "lastSequence"], "The streamed Session was deleted.";
    StreamInternalError = "stream_internal_error", -32013, false, Reference, [], "The stream failed unexpectedly.";
    StreamSlowConsumer = "stream_slow_consumer", -32013, true, Reference, ["lastDelivered", "missedEvents"], "The subscriber fell behind its bounded queue.";
    StreamSequenceGap = "stream_sequence_gap", -32013, false, Reference, [], "The stream could not continue without a gap.";
    StreamEventTooLarge = "stream_event_too_large", -32013, false, Reference, ["observedBytesAtLeast", "limitBytes"], "An event does not fit in one WebSocket message.";
    StreamEventProtocolIncompatible = "stream_event_protocol_incompatible", -32013, false, Reference, ["selectedProtocol", "requiredProtocol", "sequence"], "An event needs a newer protocol minor than the stream negotiated.";
    // Device pool (-32014).
    DeviceLeaseActive = "device_lease_active", -32014, false, Reference, ["sessionId"], "The connection's active Session holds its device; the selection cannot change.";
    DeviceInUse = "device_in_use", -32014, true, Reference, ["deviceId", "holderConnectionId", "holderClient", "leasedSinceMs", "holderReservation"], "Another connection (or a device-pool reservation) holds the device's lease.";
    // Media streams (-32016).
    MediaStreamConflict = "media_stream_conflict", -32016, false, Reference, ["streamId"], "The stream id is in use with another kind, Session or device.";
    MediaStreamBusy = "media_stream_busy", -32016, true, Reference, ["streamId"], "Another capture of the stream is running.";
    MediaStreamSensitiveActionInFlight = "media_stream_sensitive_action_in_flight", -32016, true, Reference, [], "A protected or unclassified Action is running; no stream may start.";
    MediaStreamActiveLimit = "media_stream_active_limit", -32016, true, Reference, ["limit"], "Two media streams of the Session are open; end one first.";
    MediaStreamSessionLimit = "media_stream_session_limit", -32016, false, Reference, ["limit"], "The Session has started its eight media streams.";
    MediaStreamNotFound = "media_stream_not_found", -32016, false, Reference, ["streamId"], "The connection owns no media stream with this id.";
    MediaStreamSessionMismatch = "media_stream_session_mismatch", -32016, false, Reference, ["streamId"], "The stream belongs to another Session.";
    InvalidMediaFrame = "invalid_media_frame", -32016, false, Reference, ["streamId"], "durationMs is required for video frames and refused for screenshots.";
    MediaFrameRetryConflict = "media_frame_retry_conflict", -32016, false, Reference, ["streamId", "frameIndex"], "A retried frame index differs from the committed frame.";
    MediaStreamEnded = "media_stream_ended", -32016, false, Reference, ["streamId"], "The stream has ended.";
    MediaFrameOutOfOrder = "media_frame_out_of_order", -32016, false, Reference, ["streamId", "frameIndex", "expectedFrameIndex"], "The frame index is neither the last committed nor the next.";
    MediaStreamFrameLimit = "media_stream_frame_limit", -32016, false, Reference, ["limit"], "The stream holds its 1000 frames; start another.";
    MediaCaptureRateLimited = "media_capture_rate_limited", -32016, true, Reference, ["streamId", "retryAfterMs"], "The stream was captured less than 50 ms ago; retry after retryAfterMs.";
    MediaCaptureUnavailable = "media_capture_unavailable", -32016, true, Reference, ["streamId"], "The device returned no screenshot for the frame.";
    MediaCaptureFormatUnsupported = "media_capture_format_unsupported", -32016, false, Reference, ["streamId", "mediaType"], "The device's screenshot is not image/png.";
    MediaStreamProtectedActionBlocked = "media_stream_protected_action_blocked", -32016, true, Reference, [], "A protected or unclassified Action cannot run while a media stream is open.";
    // UI snapshots (-32017).
    UiSnapshotNotFound = "ui_snapshot_not_found", -32017, false, Reference, ["observationId"], "The Observation is not in the active Session.";
    UiSnapshotUnavailable = "ui_snapshot_unavailable", -32017, false, Reference, ["observationId", "omissionReason"], "The Observation has no UI snapshot.";
    InvalidUiSnapshot = "invalid_ui_snapshot", -32017, false, Reference, ["observationId"], "The stored UI snapshot is invalid.";
    UiSnapshotReadFailed = "ui_snapshot_read_failed", -32017, true, Reference, ["observationId"], "Reading the stored UI snapshot failed.";
    // Nested Action terminal codes (inside actionCompleted events).
    ActionCancelled = "action_cancelled", -32007, false, Protocol, ["callId", "reason"], "The Action was cancelled after it started.";
    ActionTimeout = "action_timeout", -32008, true, Protocol, ["callId", "scope", "timeoutMs"], "The Action exceeded its deadline after it started.";
    HostStopped = "host_stopped", -32007, false, Own, ["callId"], "The host stopped while the Action ran; recorded when it restarted.";
}

/// Codes that answer with another number or flag in one [`Context`].
pub const ALTERNATES: &[(ErrorCode, Context, i32, bool)] = &[
    (
        ErrorCode::HandshakeRequired,
        Context::EventStream,
        -32601,
        false,
    ),
    (
        ErrorCode::RequiredFeatureUnsupported,
        Context::EventStream,
        -32004,
        false,
    ),
    (ErrorCode::InvalidParams, Context::Hello, -32602, true),
    (ErrorCode::InternalError, Context::Driver, -32000, true),
    (ErrorCode::DeviceNotFound, Context::NoDevices, -32011, true),
];

/// Detail keys we add to a reference code beyond the catalog's own (which
/// are all kept), each for a stated reason.
pub const DETAIL_EXTENSIONS: &[(ErrorCode, &str, &str)] = &[
    (
        ErrorCode::DeviceInUse,
        "holderConnectionId",
        "which connection of a shared host holds the lease",
    ),
    (
        ErrorCode::DeviceInUse,
        "holderClient",
        "the holder's client name and version, as its hello gave them",
    ),
    (
        ErrorCode::DeviceInUse,
        "leasedSinceMs",
        "when the holder took the lease (Unix milliseconds)",
    ),
    (
        ErrorCode::EventStoreError,
        "cause",
        "`terminalNotRecorded` when a device.execute's Action ran (or may have) but its terminal event could not be written",
    ),
    (
        ErrorCode::DeviceInUse,
        "holderReservation",
        "the device-pool reservation holding the device (its label and since when), or null",
    ),
    (
        ErrorCode::TooManyRequests,
        "scope",
        "`connections` when a shared host refuses a connection over its cap",
    ),
];

impl ErrorCode {
    /// Envelope code of errors reported by a routed Driver.
    pub const DRIVER_RPC_CODE: i32 = -32000;

    /// The numeric code and flag in `context`.
    pub fn in_context(self, context: Context) -> (i32, bool) {
        ALTERNATES
            .iter()
            .find(|(c, ctx, _, _)| *c == self && *ctx == context)
            .map_or((self.rpc_code(), self.retryable()), |&(_, _, rpc, r)| {
                (rpc, r)
            })
    }

    /// Builds the wire data for this code (details `null`).
    pub fn info(self, message: impl Into<String>) -> ErrorInfo {
        ErrorInfo::new(
            self.as_str(),
            bound_message(message.into()),
            self.retryable(),
        )
    }

    /// Builds a complete JSON-RPC error for this code.
    pub fn rpc(self, message: impl Into<String>, details: serde_json::Value) -> RpcError {
        self.rpc_in(Context::Control, message, details)
    }

    /// Builds a complete JSON-RPC error for this code in `context`.
    ///
    /// `details` keys outside [`ErrorCode::detail_keys`] are dropped (a
    /// debug build panics instead, so tests catch the mistake).
    pub fn rpc_in(
        self,
        context: Context,
        message: impl Into<String>,
        details: serde_json::Value,
    ) -> RpcError {
        let (code, retryable) = self.in_context(context);
        let message = bound_message(message.into());
        RpcError {
            code,
            message: message.clone(),
            data: ErrorInfo {
                code: self.as_str().to_owned(),
                message,
                retryable,
                details: bound_value(self.checked_details(details), 0),
            },
        }
    }

    /// `details` the host builds itself: a debug build panics on a key
    /// outside [`ErrorCode::detail_keys`] (so tests catch the mistake), a
    /// release build drops it.
    pub fn checked_details(self, details: serde_json::Value) -> serde_json::Value {
        if let serde_json::Value::Object(map) = &details {
            let keys = self.detail_keys();
            debug_assert!(
                map.keys().all(|k| keys.contains(&k.as_str())),
                "{self}: details keys {:?} not in {keys:?}",
                map.keys().collect::<Vec<_>>()
            );
        } else {
            debug_assert!(details.is_null(), "{self}: details must be an object");
        }
        self.filtered_details(details)
    }

    /// `details` restricted to this code's keys (`null` when none remain),
    /// for details that come from elsewhere (a Driver).
    pub fn filtered_details(self, details: serde_json::Value) -> serde_json::Value {
        match details {
            serde_json::Value::Object(mut map) => {
                let keys = self.detail_keys();
                map.retain(|k, _| keys.contains(&k.as_str()));
                if map.is_empty() {
                    serde_json::Value::Null
                } else {
                    serde_json::Value::Object(map)
                }
            }
            _ => serde_json::Value::Null,
        }
    }
}

/// Longest error message, in characters; longer ones are cut.
pub const MAX_MESSAGE_CHARS: usize = 1024;
/// Longest string inside error details, in characters.
pub const MAX_DETAIL_STRING_CHARS: usize = 256;
/// Most items of an array (or members of an object) inside error details.
pub const MAX_DETAIL_ITEMS: usize = 32;
/// Deepest nesting inside error details.
const MAX_DETAIL_DEPTH: usize = 6;
/// Appended where text was cut.
const CUT: &str = "…(truncated)";

/// `message` cut to [`MAX_MESSAGE_CHARS`] (errors may quote input, and an
/// error frame must never outgrow the request that caused it).
pub fn bound_message(message: String) -> String {
    cut(message, MAX_MESSAGE_CHARS)
}

fn cut(text: String, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text,
        Some((at, _)) => {
            let mut t = text;
            t.truncate(at);
            t.push_str(CUT);
            t
        }
    }
}

/// Details with long strings cut and long arrays or objects shortened
/// (an array ends with a `"…(truncated)"` marker item), so echoed input is
/// bounded.
pub fn bound_value(value: serde_json::Value, depth: usize) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(s) => Value::String(cut(s, MAX_DETAIL_STRING_CHARS)),
        Value::Array(items) if depth >= MAX_DETAIL_DEPTH => {
            Value::String(format!("[{} items]{CUT}", items.len()))
        }
        Value::Object(map) if depth >= MAX_DETAIL_DEPTH => {
            Value::String(format!("{{{} members}}{CUT}", map.len()))
        }
        Value::Array(items) => {
            let long = items.len() > MAX_DETAIL_ITEMS;
            let mut out: Vec<Value> = items
                .into_iter()
                .take(MAX_DETAIL_ITEMS)
                .map(|v| bound_value(v, depth + 1))
                .collect();
            if long {
                out.push(Value::String(CUT.to_owned()));
            }
            Value::Array(out)
        }
        Value::Object(map) => Value::Object(
            map.into_iter()
                .take(MAX_DETAIL_ITEMS)
                .map(|(k, v)| (cut(k, MAX_DETAIL_STRING_CHARS), bound_value(v, depth + 1)))
                .collect(),
        ),
        other => other,
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

    #[test]
    fn contexts_change_number_and_flag() {
        let e = ErrorCode::HandshakeRequired.rpc_in(
            Context::EventStream,
            "x",
            serde_json::json!({ "requiredMethod": "system.hello" }),
        );
        assert_eq!((e.code, e.data.retryable), (-32601, false));
        let e = ErrorCode::HandshakeRequired.rpc("x", serde_json::Value::Null);
        assert_eq!((e.code, e.data.retryable), (-32001, true));
        assert_eq!(
            ErrorCode::InternalError.in_context(Context::Driver),
            (-32000, true)
        );
    }

    #[test]
    fn echoed_input_is_bounded() {
        let long = "x".repeat(100_000);
        let many: Vec<u32> = (0..10_000).collect();
        let e = ErrorCode::InvalidParams.rpc(
            long.clone(),
            serde_json::json!({ "method": long, "reason": many }),
        );
        let size = serde_json::to_vec(&e)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        assert!(size < 8 * 1024, "{size} bytes");
        assert!(e.message.ends_with("…(truncated)"));
        assert_eq!(
            e.data.details["reason"].as_array().map(Vec::len),
            Some(MAX_DETAIL_ITEMS + 1)
        );
    }

    #[test]
    fn empty_details_are_null() {
        let e = ErrorCode::ElementNotFound.rpc("x", serde_json::json!({}));
        assert_eq!(e.data.details, serde_json::Value::Null);
    }
}
