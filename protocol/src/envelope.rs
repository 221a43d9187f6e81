//! The JSON-RPC 2.0 envelope subset DeviceRail uses.
//!
//! Requests always carry an `id` (there are no client notifications and no
//! batches). Every response has exactly one of `result` or `error`. The
//! server sends notifications only on a negotiated event-stream WebSocket.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::bounded::{RequestTimeoutMs, presence::required_value};
use crate::errors::{ErrorCode, RpcError};
use crate::ids::RpcId;
use crate::stream::{EventsStreamEventParams, EventsStreamTerminalParams};

/// Declares a unit type that (de)serializes as exactly one string.
#[macro_export]
#[doc(hidden)]
macro_rules! wire_literal {
    ($(#[$doc:meta])* $name:ident = $value:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The only string this type reads and writes.
            pub const VALUE: &'static str = $value;
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str($value)
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <::std::borrow::Cow<'de, str> as ::serde::Deserialize>::deserialize(d)?;
                if s == $value {
                    Ok($name)
                } else {
                    Err(<D::Error as ::serde::de::Error>::invalid_value(
                        ::serde::de::Unexpected::Str(&s),
                        &concat!("\"", $value, "\""),
                    ))
                }
            }
        }

        impl ::schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut ::schemars::SchemaGenerator) -> ::schemars::Schema {
                ::schemars::json_schema!({ "type": "string", "enum": [$value] })
            }
        }
    };
}

wire_literal!(
    /// The `jsonrpc` member: always `"2.0"`.
    JsonRpcVersion = "2.0"
);
wire_literal!(
    /// Method name of event notifications.
    EventsStreamEventMethod = "events.stream.event"
);
wire_literal!(
    /// Method name of the terminal notification.
    EventsStreamTerminalMethod = "events.stream.terminal"
);

/// Request parameters: an object or an array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RpcParams {
    /// Named params: a JSON object.
    Object(Map<String, Value>),
    /// Positional params: a JSON array. Methods only accept an empty one.
    Array(Vec<Value>),
}

impl RpcParams {
    /// Whether the params are `{}` or `[]`.
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Object(m) => m.is_empty(),
            Self::Array(a) => a.is_empty(),
        }
    }

    /// The params as a plain JSON value.
    pub fn into_value(self) -> Value {
        match self {
            Self::Object(m) => Value::Object(m),
            Self::Array(a) => Value::Array(a),
        }
    }
}

/// The params of a method that takes none: absent, `{}` or `[]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NoParams;

impl Serialize for NoParams {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        s.serialize_map(Some(0))?.end()
    }
}

impl<'de> Deserialize<'de> for NoParams {
    /// An empty object or array, read without buffering it first.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct Empty;
        impl<'de> Visitor<'de> for Empty {
            type Value = NoParams;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("no parameters: {} or []")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NoParams, A::Error> {
                match map.next_key::<IgnoredAny>()? {
                    None => Ok(NoParams),
                    Some(_) => Err(de::Error::custom("this method takes no parameters")),
                }
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NoParams, A::Error> {
                match seq.next_element::<IgnoredAny>()? {
                    None => Ok(NoParams),
                    Some(_) => Err(de::Error::custom("this method takes no parameters")),
                }
            }
        }
        d.deserialize_any(Empty)
    }
}

impl schemars::JsonSchema for NoParams {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NoParams".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [
                { "type": "object", "additionalProperties": false },
                { "type": "array", "maxItems": 0 }
            ]
        })
    }
}

/// A request as it arrives, before its method is dispatched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Chosen by the client to match the response to the request; must not
    /// equal the id of a request still awaiting its response.
    pub id: RpcId,
    /// The method name, such as `device.observe`.
    pub method: String,
    /// The method's params; absent for methods that take none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<RpcParams>,
    /// Absolute budget for request-scoped device work (`request.control.v1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<RequestTimeoutMs>,
}

/// A request envelope that could not be accepted: always answered with
/// `invalid_request` and a `null` id, as the reference daemon does (even
/// when the id was readable, the request as a whole was not).
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeError {
    /// The `invalid_request` error to answer with.
    pub error: RpcError,
}

impl RpcRequest {
    /// A request with `params` when it is an object or array (anything else
    /// is dropped).
    pub fn new(id: impl Into<RpcId>, method: impl Into<String>, params: Option<Value>) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id: id.into(),
            method: method.into(),
            params: params.and_then(|p| match p {
                Value::Object(m) => Some(RpcParams::Object(m)),
                Value::Array(a) => Some(RpcParams::Array(a)),
                _ => None,
            }),
            timeout_ms: None,
        }
    }

    /// Validates an already-parsed JSON value as a request envelope: an
    /// object with `jsonrpc: "2.0"`, a string or safe non-negative integer
    /// `id`, a string `method`, `params` (when present) an object or array,
    /// `timeoutMs` (when present) a positive safe integer, and nothing else.
    #[allow(clippy::result_large_err)]
    pub fn from_value(value: Value) -> Result<Self, EnvelopeError> {
        let invalid = |msg: String| EnvelopeError {
            error: ErrorCode::InvalidRequest.rpc(msg, Value::Null),
        };
        let Value::Object(mut map) = value else {
            let msg = if value.is_array() {
                "batch requests are not supported".to_owned()
            } else {
                "a request must be a JSON object".to_owned()
            };
            return Err(invalid(msg));
        };
        let id = match map.remove("id") {
            None => {
                return Err(invalid(
                    "the request has no id (notifications are not supported)".into(),
                ));
            }
            Some(raw) => RpcId::deserialize(&raw).map_err(|_| {
                invalid("id must be a string or a non-negative JavaScript-safe integer".into())
            })?,
        };
        match map.remove("jsonrpc") {
            Some(Value::String(v)) if v == JsonRpcVersion::VALUE => {}
            _ => return Err(invalid("jsonrpc must be \"2.0\"".into())),
        }
        let method = match map.remove("method") {
            Some(Value::String(m)) => m,
            _ => return Err(invalid("method must be a string".into())),
        };
        let params = match map.remove("params") {
            None => None,
            Some(Value::Object(m)) => Some(RpcParams::Object(m)),
            Some(Value::Array(a)) => Some(RpcParams::Array(a)),
            Some(_) => {
                return Err(invalid(
                    "params, when present, must be an object or an array".into(),
                ));
            }
        };
        let timeout_ms = match map.remove("timeoutMs") {
            None => None,
            Some(raw) => Some(RequestTimeoutMs::deserialize(&raw).map_err(|_| {
                invalid("timeoutMs must be a positive JavaScript-safe integer".into())
            })?),
        };
        if let Some(unknown) = map.keys().next() {
            return Err(invalid(format!("unknown request member {unknown:?}")));
        }
        Ok(Self {
            jsonrpc: JsonRpcVersion,
            id,
            method,
            params,
            timeout_ms,
        })
    }

    /// Reads a frame that is exactly a well-formed request (the members
    /// [`Self::from_value`] accepts, each once, nothing else) without
    /// building a JSON tree of the envelope first; `None` for anything
    /// else, which [`Self::from_value`] then answers precisely. Whatever
    /// this returns equals what `from_value` returns for the same text.
    pub fn from_exact_str(text: &str) -> Option<Self> {
        let exact: ExactRequest<'_> = serde_json::from_str(text).ok()?;
        let params = match exact.params {
            None => None,
            Some(raw) => {
                let raw = raw.get();
                // Parsed on its own, the params would get the nesting
                // bound of a whole frame: deep ones go the long way,
                // which counts the envelope's level too.
                let openings = raw.bytes().filter(|b| matches!(b, b'{' | b'[')).count();
                if openings > EXACT_MAX_OPENINGS {
                    return None;
                }
                match raw.as_bytes().first() {
                    Some(b'{') => Some(RpcParams::Object(serde_json::from_str(raw).ok()?)),
                    Some(b'[') => Some(RpcParams::Array(serde_json::from_str(raw).ok()?)),
                    _ => return None,
                }
            }
        };
        Some(Self {
            jsonrpc: exact.jsonrpc,
            id: exact.id,
            method: exact.method.into_owned(),
            params,
            timeout_ms: exact.timeout_ms,
        })
    }
}

/// A request's members as [`RpcRequest::from_exact_str`] reads them: each
/// at most once (serde refuses a repeated member), none unknown, and
/// `params` and `timeoutMs` never `null` (an `Option` would read `null` as
/// absent; [`RpcRequest::from_value`] refuses it).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ExactRequest<'a> {
    jsonrpc: JsonRpcVersion,
    id: RpcId,
    #[serde(borrow)]
    method: std::borrow::Cow<'a, str>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a serde_json::value::RawValue>,
    #[serde(default, deserialize_with = "present")]
    timeout_ms: Option<RequestTimeoutMs>,
}

/// A member that, when present, must be a `T` (`null` included).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// Params with more openings (`{`, `[`) than this are read the long way,
/// so the nesting bound counts the envelope (far below serde_json's 128).
const EXACT_MAX_OPENINGS: usize = 100;

/// A success response carrying a result of type `R`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RpcSuccess<R = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    pub id: RpcId,
    /// The method's result.
    pub result: R,
}

/// A failure response. `id` is `null` when the request's id was unreadable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RpcFailure {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Always present; `null` only when the request's id was unreadable.
    #[serde(deserialize_with = "nullable_id")]
    #[schemars(with = "NullableRpcId")]
    pub id: Option<RpcId>,
    /// The JSON-RPC error, with DeviceRail's structured `data`.
    pub error: RpcError,
}

fn nullable_id<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<RpcId>, D::Error> {
    Option::<RpcId>::deserialize(d)
}

/// Schema of [`RpcFailure::id`]: an id or `null`, but never absent (a plain
/// `Option` would make the member optional in the schema, while
/// `nullable_id` requires it).
struct NullableRpcId;

impl schemars::JsonSchema for NullableRpcId {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "NullableRpcId".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let id = generator.subschema_for::<RpcId>();
        schemars::json_schema!({ "anyOf": [id, { "type": "null" }] })
    }
}

impl RpcFailure {
    /// A failure answering request `id` (`None` when the id was unreadable).
    pub fn new(id: Option<RpcId>, error: RpcError) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        }
    }
}

impl<R> RpcSuccess<R> {
    /// A success answering request `id` with `result`.
    pub fn new(id: RpcId, result: R) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

/// Any response.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum RpcResponse {
    /// The request succeeded.
    Success(RpcSuccess),
    /// The request failed.
    Failure(RpcFailure),
}

impl<'de> Deserialize<'de> for RpcResponse {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut value = Value::deserialize(d)?;
        let is_failure = value.get("error").is_some();
        let is_success = value.get("result").is_some();
        if is_failure == is_success {
            return Err(serde::de::Error::custom(
                "a response has exactly one of result or error",
            ));
        }
        if is_failure {
            RpcFailure::deserialize(value.take())
                .map(Self::Failure)
                .map_err(serde::de::Error::custom)
        } else {
            RpcSuccess::deserialize(value.take())
                .map(Self::Success)
                .map_err(serde::de::Error::custom)
        }
    }
}

impl RpcResponse {
    /// The id of the request answered; `None` for a failure whose request id
    /// was unreadable.
    pub fn id(&self) -> Option<&RpcId> {
        match self {
            Self::Success(s) => Some(&s.id),
            Self::Failure(f) => f.id.as_ref(),
        }
    }
}

/// `events.stream.event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamEventNotification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Always `events.stream.event`.
    pub method: EventsStreamEventMethod,
    /// The event, its cursor and its subscription.
    pub params: EventsStreamEventParams,
}

/// `events.stream.terminal`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsStreamTerminalNotification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// Always `events.stream.terminal`.
    pub method: EventsStreamTerminalMethod,
    /// Why the stream ended and how far it got.
    pub params: EventsStreamTerminalParams,
}

/// The two notifications a server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)]
pub enum RpcServerNotification {
    /// One replayed or live event.
    Event(EventsStreamEventNotification),
    /// The last message of a stream.
    Terminal(EventsStreamTerminalNotification),
}

/// Anything a server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
#[allow(clippy::large_enum_variant)]
pub enum RpcServerMessage {
    /// The answer to a request.
    Response(RpcResponse),
    /// An event-stream notification (WebSocket only).
    Notification(RpcServerNotification),
}

/// `required_value` re-exported for the method macros.
#[doc(hidden)]
pub fn __required_value<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    required_value(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `from_value` of the parsed text: what a request is, the long way.
    fn long_way(text: &str) -> Option<RpcRequest> {
        let value: Value = serde_json::from_str(text).ok()?;
        RpcRequest::from_value(value).ok()
    }

    /// `from_exact_str` answers only what `from_value` would accept, and
    /// exactly as `from_value` reads it.
    fn agrees(text: &str) -> bool {
        match RpcRequest::from_exact_str(text) {
            Some(exact) => {
                assert_eq!(Some(&exact), long_way(text).as_ref(), "{text}");
                true
            }
            None => false,
        }
    }

    fn nested(depth: usize) -> String {
        format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn the_exact_reading_of_a_request_is_the_long_one() {
        let read = [
            r#"{"jsonrpc":"2.0","id":1,"method":"devices.list"}"#,
            r#" { "method" : "device.observe", "id" : "a\"b\u00e9", "jsonrpc" : "2.0", "params" : {"screenshot":"omit","x":[1,{"y":null}]} } "#,
            r#"{"jsonrpc":"2.0","id":9007199254740991,"method":"m","params":[]}"#,
            r#"{"jsonrpc":"2.0","id":0,"method":"m","params":{},"timeoutMs":5}"#,
            r#"{"jsonrpc":"2\u002e0","i\u0064":"x","m\u0065thod":"dev\nices","params":{"k":1,"k":2}}"#,
        ];
        for text in read {
            assert!(agrees(text), "not read the short way: {text}");
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}}}}}"#,
            nested(126)
        );
        let deeper = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":{}}}}}"#,
            nested(130)
        );
        let left = [
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","timeoutMs":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","timeoutMs":0}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","timeoutMs":1.0}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1e2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":9007199254740992,"method":"m"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":true}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
            "",
            &deep,
            &deeper,
        ];
        for text in left {
            assert!(!agrees(text), "read the short way: {text}");
        }
        // Deep params are refused the long way when the whole frame is
        // too deep, so they must never be read the short way.
        assert!(long_way(&deeper).is_none());
    }

    #[test]
    fn mangled_requests_are_never_read_otherwise_than_the_long_way() {
        let seeds = [
            r#"{"jsonrpc":"2.0","id":1,"method":"devices.list"}"#,
            r#"{"jsonrpc":"2.0","id":"r-7","method":"device.observe","params":{"screenshot":"always","ui":[true,{"a":null}]},"timeoutMs":1500}"#,
            r#"{"jsonrpc":"2.0","id":12,"method":"session.current","params":[]}"#,
        ];
        let alphabet = br#"{}[]",:.-0123456789eE \nulltrue\u00"#;
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let (mut short, mut total) = (0, 0);
        for round in 0..40_000 {
            let mut bytes = seeds[round % seeds.len()].as_bytes().to_vec();
            for _ in 0..1 + next(3) {
                let at = next(bytes.len() + 1);
                match next(3) {
                    0 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    1 => bytes.insert(at, alphabet[next(alphabet.len())]),
                    _ if at < bytes.len() => bytes[at] = alphabet[next(alphabet.len())],
                    _ => {}
                }
            }
            let Ok(text) = String::from_utf8(bytes) else {
                continue;
            };
            total += 1;
            if agrees(&text) {
                short += 1;
            }
        }
        // Some mangled frames are still requests (a digit changed).
        assert!(short > 0 && short < total, "{short} of {total}");
    }

    fn code(v: Value) -> String {
        RpcRequest::from_value(v)
            .expect_err("should fail")
            .error
            .data
            .code
    }

    #[test]
    fn envelope_defects_are_invalid_requests() {
        for bad in [
            json!([1]),
            json!("x"),
            json!({"jsonrpc":"2.0","method":"m"}),
            json!({"jsonrpc":"2.0","id":-1,"method":"m"}),
            json!({"jsonrpc":"2.0","id":null,"method":"m"}),
            json!({"jsonrpc":"2.0","id":1.5,"method":"m"}),
            json!({"jsonrpc":"1.0","id":1,"method":"m"}),
            json!({"jsonrpc":"2.0","id":"a","method":3}),
            json!({"jsonrpc":"2.0","id":"a","method":"m","params":"s"}),
            json!({"jsonrpc":"2.0","id":"a","method":"m","params":null}),
            json!({"jsonrpc":"2.0","id":"a","method":"m","timeoutMs":0}),
            json!({"jsonrpc":"2.0","id":"a","method":"m","timeoutMs":null}),
            json!({"jsonrpc":"2.0","id":"a","method":"m","extra":1}),
        ] {
            assert_eq!(code(bad.clone()), "invalid_request", "{bad}");
        }
    }

    #[test]
    fn accepts_valid_requests() {
        let r = RpcRequest::from_value(
            json!({"jsonrpc":"2.0","id":7,"method":"m","params":[],"timeoutMs":5}),
        );
        let r = r.expect("valid");
        assert_eq!(r.id, RpcId::Number(7));
        assert_eq!(r.timeout_ms.map(|t| t.get()), Some(5));
    }

    #[test]
    fn response_has_exactly_one_member() {
        assert!(
            serde_json::from_value::<RpcResponse>(json!({"jsonrpc":"2.0","id":1,"result":null}))
                .is_ok()
        );
        assert!(serde_json::from_value::<RpcResponse>(json!({"jsonrpc":"2.0","id":1})).is_err());
        let both = json!({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m","data":{"code":"c","message":"m","retryable":false}}});
        assert!(serde_json::from_value::<RpcResponse>(both).is_err());
    }

    #[test]
    fn no_params_forms() {
        assert!(serde_json::from_str::<NoParams>("{}").is_ok());
        assert!(serde_json::from_str::<NoParams>("[]").is_ok());
        assert!(serde_json::from_str::<NoParams>("{\"a\":1}").is_err());
        assert!(serde_json::from_str::<NoParams>("[1]").is_err());
    }
}
