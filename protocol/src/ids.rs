//! Identifiers that appear on the wire.

use std::borrow::Cow;
use std::fmt;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use uuid::Uuid;

use crate::bounded::MAX_SAFE_INTEGER;

/// A JSON-RPC request id: a string, or a non-negative JavaScript-safe integer.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RpcId {
    /// A non-negative integer id, at most 2^53 - 1.
    Number(u64),
    /// A string id (any string, including the empty one).
    String(String),
}

impl RpcId {
    /// A numeric id; `None` above the JavaScript-safe range.
    pub fn number(n: u64) -> Option<Self> {
        (n <= MAX_SAFE_INTEGER).then_some(Self::Number(n))
    }
}

impl fmt::Debug for RpcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl fmt::Display for RpcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl From<&str> for RpcId {
    fn from(value: &str) -> Self {
        Self::String(value.to_owned())
    }
}

impl From<String> for RpcId {
    fn from(value: String) -> Self {
        Self::String(value)
    }
}

impl Serialize for RpcId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => serializer.serialize_u64(*n),
            Self::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> Deserialize<'de> for RpcId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RpcId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a non-negative JavaScript-safe integer")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RpcId, E> {
                Ok(RpcId::String(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<RpcId, E> {
                Ok(RpcId::String(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RpcId, E> {
                RpcId::number(v).ok_or_else(|| E::invalid_value(de::Unexpected::Unsigned(v), &self))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RpcId, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::invalid_value(de::Unexpected::Signed(v), &self)),
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RpcId, E> {
                Err(E::invalid_type(de::Unexpected::Float(v), &self))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl JsonSchema for RpcId {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "RpcId".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "anyOf": [
                { "type": "string" },
                { "type": "integer", "format": "uint64", "minimum": 0, "maximum": MAX_SAFE_INTEGER }
            ]
        })
    }
}

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh, time-ordered id (UUIDv7).
            pub fn new_v7() -> Self {
                Self(Uuid::now_v7())
            }
            /// A fresh random id (UUIDv4).
            pub fn new_v4() -> Self {
                Self(Uuid::new_v4())
            }
            /// The underlying UUID.
            pub const fn as_uuid(&self) -> &Uuid {
                &self.0
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0, f)
            }
        }

        impl std::str::FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map(Self)
            }
        }

        impl From<Uuid> for $name {
            fn from(value: Uuid) -> Self {
                Self(value)
            }
        }

        impl JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }
            fn schema_name() -> Cow<'static, str> {
                stringify!($name).into()
            }
            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                json_schema!({ "type": "string", "format": "uuid" })
            }
        }
    };
}

uuid_id!(
    /// Identifies one protocol connection (one `system.hello`).
    ConnectionId
);
uuid_id!(
    /// Identifies one recorded Session.
    SessionId
);
uuid_id!(
    /// Globally unique id of one recorded event.
    EventId
);
uuid_id!(
    /// Identifies one Observation (and, through it, its UI snapshot).
    ObservationId
);
uuid_id!(
    /// Caller-chosen id of one Action invocation.
    CallId
);
uuid_id!(
    /// Caller-chosen id of one media stream, unique for the daemon's lifetime.
    MediaStreamId
);
uuid_id!(
    /// Identifies one event-stream subscription on a WebSocket.
    SubscriptionId
);
uuid_id!(
    /// One daemon process lifetime; stream cursors are only valid within it.
    StreamEpoch
);
uuid_id!(
    /// Identifies one manual recording document.
    RecordingId
);

/// A driver-assigned device id, stable across listings.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct DeviceId(pub String);

impl DeviceId {
    /// Wraps a driver-assigned id.
    pub fn new(id: impl Into<String>) -> Self {
        Self(id.into())
    }
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for DeviceId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for DeviceId {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl JsonSchema for DeviceId {
    fn inline_schema() -> bool {
        true
    }
    fn schema_name() -> Cow<'static, str> {
        "DeviceId".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "string" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpc_id_forms() {
        assert_eq!(
            serde_json::from_str::<RpcId>("42").ok(),
            Some(RpcId::Number(42))
        );
        assert_eq!(
            serde_json::from_str::<RpcId>("\"a\"").ok(),
            Some(RpcId::from("a"))
        );
        assert!(serde_json::from_str::<RpcId>("-1").is_err());
        assert!(serde_json::from_str::<RpcId>("1.0").is_err());
        assert!(serde_json::from_str::<RpcId>("9007199254740992").is_err());
        assert!(serde_json::from_str::<RpcId>("null").is_err());
        assert!(serde_json::from_str::<RpcId>("true").is_err());
        assert!(serde_json::from_str::<RpcId>("{}").is_err());
    }
}
