//! The method table: the 24 public methods, each with its params and result
//! types, the feature and minimum minor version that expose it, and
//! whether it accepts `timeoutMs`. The host dispatches from this table.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::action::{ActionDefinition, ActionResult, DeviceExecuteParams};
use crate::bounded::RequestTimeoutMs;
use crate::control::{RequestCancelParams, RequestCancelResult};
use crate::device::{
    DeviceDisconnectResult, DeviceInfo, DeviceSelectParams, DeviceSelectResult, DevicesListResult,
};
use crate::envelope::{JsonRpcVersion, NoParams, RpcFailure, RpcParams};
use crate::errors::{ErrorCode, RpcError};
use crate::event::TestEvent;
use crate::event::{SessionExportResult, VerdictRecordResult};
use crate::handshake::{HelloParams, HelloResult, ProtocolVersion, SystemDescribeResult};
use crate::ids::RpcId;
use crate::media::{
    MediaStreamCaptureParams, MediaStreamCaptureResult, MediaStreamEndParams, MediaStreamEndResult,
    MediaStreamStartParams, MediaStreamStartResult,
};
use crate::negotiation::{Feature, FeatureSet};
use crate::observation::Observation;
use crate::session::{
    EventsClearResult, EventsListParams, SessionCurrentResult, SessionEndParams,
    SessionExportParams, SessionInfo, SessionTargetParams,
};
use crate::stream::{
    EventsStreamOpenParams, EventsStreamOpenResult, EventsSubscribeParams, EventsSubscribeResult,
};
use crate::ui::{UiSnapshot, UiSnapshotGetParams};
use crate::verdict::VerdictRecordParams;

/// How a method takes params.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamsShape {
    /// Absent, `{}` or `[]`; anything else is refused.
    None,
    /// Absent (or `{}`/`[]`) means all defaults; otherwise an object.
    Optional,
    /// An object is required.
    Required,
}

/// Which transports serve a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transports {
    /// Both stdio and the event-stream WebSocket (only `system.hello`).
    Any,
    /// The control connection (stdio).
    Stdio,
    /// The event-stream WebSocket.
    WebSocket,
}

/// One row of the method table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    /// The method's id.
    pub id: MethodId,
    /// The wire name, such as `device.observe`.
    pub name: &'static str,
    /// How the method takes params.
    pub params: ParamsShape,
    /// Rust type name of the params (documentation and diagnostics).
    pub params_type: &'static str,
    /// Rust type name of the result.
    pub result_type: &'static str,
    /// The extension that exposes the method, if any.
    pub feature: Option<Feature>,
    /// First minor version of major 1 that has the method.
    pub min_minor: u16,
    /// Whether `timeoutMs` is accepted (after `request.control.v1`).
    pub accepts_timeout: bool,
    /// The transports that serve the method.
    pub transports: Transports,
}

/// Why a method cannot be called on this connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// The method can be called.
    Available,
    /// Unknown name.
    Unknown,
    /// Needs a feature the connection did not negotiate (or a newer version).
    FeatureRequired(Feature),
    /// Not served on this transport.
    WrongTransport,
}

impl MethodSpec {
    /// Whether the method is visible on a connection that negotiated
    /// `version` and `enabled`.
    pub fn availability(
        &self,
        version: ProtocolVersion,
        enabled: FeatureSet,
        web_socket: bool,
    ) -> Availability {
        let transport_ok = match self.transports {
            Transports::Any => true,
            Transports::Stdio => !web_socket,
            Transports::WebSocket => web_socket,
        };
        if !transport_ok {
            return Availability::WrongTransport;
        }
        if let Some(f) = self.feature
            && !enabled.contains(f)
        {
            return Availability::FeatureRequired(f);
        }
        if version.major != 1 || version.minor < self.min_minor {
            return match self.feature {
                Some(f) => Availability::FeatureRequired(f),
                None => Availability::Unknown,
            };
        }
        Availability::Available
    }

    /// The `method_not_found` error for an unavailable method.
    pub fn not_found_error(name: &str, availability: &Availability) -> RpcError {
        match availability {
            Availability::FeatureRequired(f) => ErrorCode::MethodNotFound.rpc(
                format!("{name} requires the {f} feature"),
                json!({ "method": name, "requiredFeature": f.name() }),
            ),
            Availability::WrongTransport => ErrorCode::MethodNotFound.rpc(
                format!("{name} is not served on this transport"),
                json!({ "method": name }),
            ),
            _ => ErrorCode::MethodNotFound
                .rpc(format!("unknown method {name}"), json!({ "method": name })),
        }
    }
}

/// A params defect, answered with `invalid_params`.
pub fn invalid_params(method: &str, message: impl std::fmt::Display) -> RpcError {
    ErrorCode::InvalidParams.rpc(
        format!("invalid params for {method}: {message}"),
        json!({ "method": method }),
    )
}

/// Decodes params of a given shape into `P`. Absent (or empty) params of
/// `None`/`Optional` methods decode from `{}`, so `P`'s defaults apply.
pub fn parse_params<P: DeserializeOwned>(
    spec: &MethodSpec,
    params: Option<RpcParams>,
) -> Result<P, RpcError> {
    let empty = || serde_json::from_value(json!({})).map_err(|e| invalid_params(spec.name, e));
    match (spec.params, params) {
        (ParamsShape::None, None) => empty(),
        (ParamsShape::None, Some(p)) if p.is_empty() => empty(),
        (ParamsShape::None, Some(_)) => {
            Err(invalid_params(spec.name, "this method takes no parameters"))
        }
        (ParamsShape::Optional, None) => empty(),
        (ParamsShape::Optional, Some(RpcParams::Array(a))) if a.is_empty() => empty(),
        (ParamsShape::Required, None) => Err(invalid_params(spec.name, "params are required")),
        (_, Some(RpcParams::Array(_))) => Err(invalid_params(
            spec.name,
            "params must be an object (positional params are not supported)",
        )),
        (_, Some(RpcParams::Object(map))) => {
            serde_json::from_value(Value::Object(map)).map_err(|e| invalid_params(spec.name, e))
        }
    }
}

/// A method with its types, for typed clients and dispatch.
pub trait Method {
    /// The method's row of [`METHODS`].
    const SPEC: MethodSpec;
    /// Params type (`NoParams` for methods without params).
    type Params: Serialize + DeserializeOwned;
    /// Result type of a successful call.
    type Result: Serialize + DeserializeOwned;
}

macro_rules! params_schema {
    (none $p:ty) => {
        None
    };
    ($shape:ident $p:ty) => {
        Some(schemars::schema_for!($p))
    };
}

macro_rules! params_shape {
    (none) => {
        ParamsShape::None
    };
    (optional) => {
        ParamsShape::Optional
    };
    (required) => {
        ParamsShape::Required
    };
}

/// Emits one per-method request struct; the params field depends on the
/// method's params shape and the `timeoutMs` field on whether it is accepted.
macro_rules! request_struct {
    ($name:literal, $req:ident, $lit:ident, none, $p:ty, $t:tt) => {
        request_struct!(@timeout $name, $req, $lit, $t, [
            /// Absent, `{}` or `[]`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub params: Option<NoParams>,
        ]);
    };
    ($name:literal, $req:ident, $lit:ident, optional, $p:ty, $t:tt) => {
        request_struct!(@timeout $name, $req, $lit, $t, [
            /// The params; absent means all defaults.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub params: Option<$p>,
        ]);
    };
    ($name:literal, $req:ident, $lit:ident, required, $p:ty, $t:tt) => {
        request_struct!(@timeout $name, $req, $lit, $t, [
            /// The method's params object; required.
            pub params: $p,
        ]);
    };
    (@timeout $name:literal, $req:ident, $lit:ident, true, [$($f:tt)*]) => {
        request_struct!(@emit $name, $req, $lit, [
            $($f)*
            /// Absolute budget for the request (`request.control.v1`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub timeout_ms: Option<RequestTimeoutMs>,
        ]);
    };
    (@timeout $name:literal, $req:ident, $lit:ident, false, [$($f:tt)*]) => {
        request_struct!(@emit $name, $req, $lit, [$($f)*]);
    };
    (@emit $name:literal, $req:ident, $lit:ident, [$($f:tt)*]) => {
        #[doc = concat!("A complete `", $name, "` request.")]
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct $req {
            /// Always `"2.0"`.
            pub jsonrpc: JsonRpcVersion,
            /// Chosen by the client to match the response to the request.
            pub id: RpcId,
            /// The method name.
            pub method: $lit,
            $($f)*
        }
    };
}

macro_rules! methods {
    ($(
        $variant:ident = $name:literal {
            params: $shape:ident $params:ty,
            result: $result:ty,
            feature: $feature:expr,
            min_minor: $minor:literal,
            timeout: $timeout:tt,
            transports: $transports:ident,
            types: $marker:ident, $lit:ident, $request:ident, $success:ident, $response:ident
        }
    )*) => {
        /// The 24 public methods.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum MethodId {
            $(
                #[doc = concat!("`", $name, "`.")]
                $variant,
            )*
        }

        /// The method table.
        pub const METHODS: &[MethodSpec] = &[ $(
            MethodSpec {
                id: MethodId::$variant,
                name: $name,
                params: params_shape!($shape),
                params_type: stringify!($params),
                result_type: stringify!($result),
                feature: $feature,
                min_minor: $minor,
                accepts_timeout: $timeout,
                transports: Transports::$transports,
            },
        )* ];

        impl MethodId {
            /// The method's row of [`METHODS`].
            pub fn spec(self) -> &'static MethodSpec {
                &METHODS[self as usize]
            }
            /// The method with wire name `name`, if there is one.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $( $name => Some(MethodId::$variant), )* _ => None }
            }
            /// The wire name.
            pub const fn name(self) -> &'static str {
                match self { $( MethodId::$variant => $name, )* }
            }
            /// The JSON Schema of the method's params object, which a
            /// server validates before decoding (serde alone would accept
            /// an array where an object is required); `None` for methods
            /// that take no params.
            pub fn params_schema(self) -> Option<schemars::Schema> {
                match self { $( MethodId::$variant => params_schema!($shape $params), )* }
            }
        }

        $(
            crate::wire_literal!(
                #[doc = concat!("The method name `", $name, "`.")]
                $lit = $name
            );

            #[doc = concat!("Marker for `", $name, "`.")]
            #[derive(Debug, Clone, Copy)]
            pub struct $marker;

            impl Method for $marker {
                const SPEC: MethodSpec = METHODS[MethodId::$variant as usize];
                type Params = $params;
                type Result = $result;
            }

            request_struct!($name, $request, $lit, $shape, $params, $timeout);

            #[doc = concat!("A successful `", $name, "` response.")]
            #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
            #[serde(rename_all = "camelCase", deny_unknown_fields)]
            pub struct $success {
                /// Always `"2.0"`.
                pub jsonrpc: JsonRpcVersion,
                /// The id of the request answered.
                pub id: RpcId,
                /// The method's result.
                pub result: $result,
            }

            #[doc = concat!("Any `", $name, "` response.")]
            #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
            #[serde(untagged)]
            #[allow(clippy::large_enum_variant)]
            pub enum $response {
                /// The request succeeded.
                Success($success),
                /// The request failed.
                Failure(RpcFailure),
            }
        )*
    };
}

methods! {
    SystemHello = "system.hello" {
        params: required HelloParams, result: HelloResult, feature: None, min_minor: 0, timeout: false,
        transports: Any,
        types: SystemHello, SystemHelloMethod, SystemHelloRequest, SystemHelloSuccess, SystemHelloResponse
    }
    SystemDescribe = "system.describe" {
        params: none NoParams, result: SystemDescribeResult, feature: None, min_minor: 0, timeout: false,
        transports: Stdio,
        types: SystemDescribe, SystemDescribeMethod, SystemDescribeRequest, SystemDescribeSuccess, SystemDescribeResponse
    }
    DevicesList = "devices.list" {
        params: none NoParams, result: DevicesListResult, feature: None, min_minor: 0, timeout: false,
        transports: Stdio,
        types: DevicesList, DevicesListMethod, DevicesListRequest, DevicesListSuccess, DevicesListResponse
    }
    DeviceSelect = "device.select" {
        params: required DeviceSelectParams, result: DeviceSelectResult, feature: Some(Feature::DeviceRouting), min_minor: 2, timeout: false,
        transports: Stdio,
        types: DeviceSelect, DeviceSelectMethod, DeviceSelectRequest, DeviceSelectSuccess, DeviceSelectResponse
    }
    DeviceConnect = "device.connect" {
        params: none NoParams, result: DeviceInfo, feature: None, min_minor: 0, timeout: true,
        transports: Stdio,
        types: DeviceConnect, DeviceConnectMethod, DeviceConnectRequest, DeviceConnectSuccess, DeviceConnectResponse
    }
    DeviceDisconnect = "device.disconnect" {
        params: none NoParams, result: DeviceDisconnectResult, feature: None, min_minor: 0, timeout: true,
        transports: Stdio,
        types: DeviceDisconnect, DeviceDisconnectMethod, DeviceDisconnectRequest, DeviceDisconnectSuccess, DeviceDisconnectResponse
    }
    DeviceCapabilities = "device.capabilities" {
        params: none NoParams, result: Vec<ActionDefinition>, feature: None, min_minor: 0, timeout: true,
        transports: Stdio,
        types: DeviceCapabilities, DeviceCapabilitiesMethod, DeviceCapabilitiesRequest, DeviceCapabilitiesSuccess, DeviceCapabilitiesResponse
    }
    DeviceObserve = "device.observe" {
        params: none NoParams, result: Observation, feature: None, min_minor: 0, timeout: true,
        transports: Stdio,
        types: DeviceObserve, DeviceObserveMethod, DeviceObserveRequest, DeviceObserveSuccess, DeviceObserveResponse
    }
    DeviceExecute = "device.execute" {
        params: required DeviceExecuteParams, result: ActionResult, feature: None, min_minor: 0, timeout: true,
        transports: Stdio,
        types: DeviceExecute, DeviceExecuteMethod, DeviceExecuteRequest, DeviceExecuteSuccess, DeviceExecuteResponse
    }
    RequestCancel = "request.cancel" {
        params: required RequestCancelParams, result: RequestCancelResult, feature: Some(Feature::RequestControl), min_minor: 1, timeout: false,
        transports: Stdio,
        types: RequestCancel, RequestCancelMethod, RequestCancelRequest, RequestCancelSuccess, RequestCancelResponse
    }
    SessionStart = "session.start" {
        params: none NoParams, result: SessionInfo, feature: None, min_minor: 0, timeout: false,
        transports: Stdio,
        types: SessionStart, SessionStartMethod, SessionStartRequest, SessionStartSuccess, SessionStartResponse
    }
    SessionCurrent = "session.current" {
        params: none NoParams, result: SessionCurrentResult, feature: None, min_minor: 0, timeout: false,
        transports: Stdio,
        types: SessionCurrent, SessionCurrentMethod, SessionCurrentRequest, SessionCurrentSuccess, SessionCurrentResponse
    }
    SessionEnd = "session.end" {
        params: optional SessionEndParams, result: SessionInfo, feature: None, min_minor: 0, timeout: false,
        transports: Stdio,
        types: SessionEnd, SessionEndMethod, SessionEndRequest, SessionEndSuccess, SessionEndResponse
    }
    SessionsList = "sessions.list" {
        params: none NoParams, result: Vec<SessionInfo>, feature: Some(Feature::EventsSnapshot), min_minor: 0, timeout: false,
        transports: Stdio,
        types: SessionsList, SessionsListMethod, SessionsListRequest, SessionsListSuccess, SessionsListResponse
    }
    SessionExport = "session.export" {
        params: optional SessionExportParams, result: SessionExportResult, feature: Some(Feature::EventsSnapshot), min_minor: 0, timeout: false,
        transports: Stdio,
        types: SessionExport, SessionExportMethod, SessionExportRequest, SessionExportSuccess, SessionExportResponse
    }
    EventsList = "events.list" {
        params: optional EventsListParams, result: Vec<TestEvent>, feature: Some(Feature::EventsSnapshot), min_minor: 0, timeout: false,
        transports: Stdio,
        types: EventsList, EventsListMethod, EventsListRequest, EventsListSuccess, EventsListResponse
    }
    EventsClear = "events.clear" {
        params: optional SessionTargetParams, result: EventsClearResult, feature: Some(Feature::EventsSnapshot), min_minor: 0, timeout: false,
        transports: Stdio,
        types: EventsClear, EventsClearMethod, EventsClearRequest, EventsClearSuccess, EventsClearResponse
    }
    EventsStreamOpen = "events.stream.open" {
        params: required EventsStreamOpenParams, result: EventsStreamOpenResult, feature: Some(Feature::EventsStream), min_minor: 3, timeout: false,
        transports: Stdio,
        types: EventsStreamOpen, EventsStreamOpenMethod, EventsStreamOpenRequest, EventsStreamOpenSuccess, EventsStreamOpenResponse
    }
    EventsSubscribe = "events.subscribe" {
        params: required EventsSubscribeParams, result: EventsSubscribeResult, feature: Some(Feature::EventsStream), min_minor: 3, timeout: false,
        transports: WebSocket,
        types: EventsSubscribe, EventsSubscribeMethod, EventsSubscribeRequest, EventsSubscribeSuccess, EventsSubscribeResponse
    }
    MediaStreamStart = "media.stream.start" {
        params: required MediaStreamStartParams, result: MediaStreamStartResult, feature: Some(Feature::MediaStream), min_minor: 4, timeout: false,
        transports: Stdio,
        types: MediaStreamStart, MediaStreamStartMethod, MediaStreamStartRequest, MediaStreamStartSuccess, MediaStreamStartResponse
    }
    MediaStreamCapture = "media.stream.capture" {
        params: required MediaStreamCaptureParams, result: MediaStreamCaptureResult, feature: Some(Feature::MediaStream), min_minor: 4, timeout: true,
        transports: Stdio,
        types: MediaStreamCapture, MediaStreamCaptureMethod, MediaStreamCaptureRequest, MediaStreamCaptureSuccess, MediaStreamCaptureResponse
    }
    MediaStreamEnd = "media.stream.end" {
        params: required MediaStreamEndParams, result: MediaStreamEndResult, feature: Some(Feature::MediaStream), min_minor: 4, timeout: false,
        transports: Stdio,
        types: MediaStreamEnd, MediaStreamEndMethod, MediaStreamEndRequest, MediaStreamEndSuccess, MediaStreamEndResponse
    }
    UiSnapshotGet = "ui.snapshot.get" {
        params: required UiSnapshotGetParams, result: UiSnapshot, feature: Some(Feature::ObservationUiSnapshot), min_minor: 5, timeout: false,
        transports: Stdio,
        types: UiSnapshotGet, UiSnapshotGetMethod, UiSnapshotGetRequest, UiSnapshotGetSuccess, UiSnapshotGetResponse
    }
    VerdictRecord = "verdict.record" {
        params: required VerdictRecordParams, result: VerdictRecordResult, feature: Some(Feature::VerdictRecord), min_minor: 5, timeout: false,
        transports: Stdio,
        types: VerdictRecord, VerdictRecordMethod, VerdictRecordRequest, VerdictRecordSuccess, VerdictRecordResponse
    }
}

/// Looks a method up by name.
pub fn method_spec(name: &str) -> Option<&'static MethodSpec> {
    MethodId::from_name(name).map(MethodId::spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_consistent() {
        assert_eq!(METHODS.len(), 24);
        for (i, m) in METHODS.iter().enumerate() {
            assert_eq!(m.id as usize, i);
            assert_eq!(MethodId::from_name(m.name), Some(m.id));
            if let Some(f) = m.feature {
                assert_eq!(f.min_minor(), m.min_minor, "{}", m.name);
            }
        }
        let timeouts: Vec<&str> = METHODS
            .iter()
            .filter(|m| m.accepts_timeout)
            .map(|m| m.name)
            .collect();
        assert_eq!(
            timeouts,
            [
                "device.connect",
                "device.disconnect",
                "device.capabilities",
                "device.observe",
                "device.execute",
                "media.stream.capture"
            ]
        );
    }

    #[test]
    fn snapshot_methods_need_their_feature() {
        let v = ProtocolVersion::new(1, 5);
        let spec = MethodId::EventsList.spec();
        assert_eq!(
            spec.availability(v, FeatureSet::EMPTY, false),
            Availability::FeatureRequired(Feature::EventsSnapshot)
        );
        assert_eq!(
            spec.availability(v, FeatureSet::all(), false),
            Availability::Available
        );
        assert_eq!(
            MethodId::EventsSubscribe
                .spec()
                .availability(v, FeatureSet::all(), false),
            Availability::WrongTransport
        );
    }

    #[test]
    fn params_shapes() {
        let spec = MethodId::SessionStart.spec();
        let obj = |v: Value| match v {
            Value::Object(m) => Some(RpcParams::Object(m)),
            _ => None,
        };
        assert!(parse_params::<NoParams>(spec, None).is_ok());
        assert!(parse_params::<NoParams>(spec, obj(json!({}))).is_ok());
        assert!(parse_params::<NoParams>(spec, Some(RpcParams::Array(vec![]))).is_ok());
        assert!(parse_params::<NoParams>(spec, obj(json!({"a": 1}))).is_err());
        let spec = MethodId::EventsList.spec();
        assert!(parse_params::<EventsListParams>(spec, None).is_ok());
        let e = parse_params::<EventsListParams>(spec, obj(json!({"limit": 0})));
        assert_eq!(e.err().map(|e| e.data.code), Some("invalid_params".into()));
        let e = parse_params::<EventsListParams>(spec, obj(json!({"bogus": 0})));
        assert_eq!(e.err().map(|e| e.data.code), Some("invalid_params".into()));
    }
}
