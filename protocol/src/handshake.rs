//! `system.hello` and `system.describe` DTOs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::{BoundedVec, UniqueStrings};
use crate::ids::{ConnectionId, DeviceId, SessionId};

/// Name and version of one peer (client or server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PeerInfo {
    pub name: String,
    pub version: String,
}

/// One wire version.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProtocolVersion {
    pub major: u16,
    pub minor: u16,
}

impl ProtocolVersion {
    pub const fn new(major: u16, minor: u16) -> Self {
        Self { major, minor }
    }
}

impl std::fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The minor versions `minMinor..=maxMinor` of one major version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProtocolRange {
    pub major: u16,
    pub min_minor: u16,
    pub max_minor: u16,
}

impl ProtocolRange {
    pub const fn new(major: u16, min_minor: u16, max_minor: u16) -> Self {
        Self {
            major,
            min_minor,
            max_minor,
        }
    }
    pub const fn lowest(&self) -> ProtocolVersion {
        ProtocolVersion::new(self.major, self.min_minor)
    }
    pub const fn highest(&self) -> ProtocolVersion {
        ProtocolVersion::new(self.major, self.max_minor)
    }
}

/// The version ranges one side supports. Majors are listed explicitly, so
/// offering 1 and 3 says nothing about 2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProtocolOffer {
    pub ranges: BoundedVec<ProtocolRange, 1, { usize::MAX }>,
}

impl ProtocolOffer {
    /// Builds an offer; `None` if `ranges` is empty.
    pub fn new(ranges: Vec<ProtocolRange>) -> Option<Self> {
        BoundedVec::new(ranges).ok().map(|ranges| Self { ranges })
    }
}

/// The negotiated version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProtocolSelection {
    pub selected: ProtocolVersion,
}

/// Why version negotiation found no common version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ProtocolIncompatibilityReason {
    /// Every version the client offers is older than every server version.
    ClientTooOld,
    /// Every version the client offers is newer than every server version.
    ServerTooOld,
    /// The offers interleave without overlapping.
    NoCommonVersion,
}

/// Features a client asks for: `required` ones fail the handshake when
/// unavailable, `optional` ones are enabled when available.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureOffer {
    #[serde(default)]
    pub required: UniqueStrings,
    #[serde(default)]
    pub optional: UniqueStrings,
}

/// The complete set of features enabled on a connection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureSelection {
    pub enabled: UniqueStrings,
}

/// The transport a connection runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransportInfo {
    /// `stdio` or `webSocket`.
    pub kind: String,
    /// `ndjson` or `jsonMessage`.
    pub framing: String,
}

impl TransportInfo {
    pub fn stdio() -> Self {
        Self {
            kind: "stdio".into(),
            framing: "ndjson".into(),
        }
    }
    pub fn web_socket() -> Self {
        Self {
            kind: "webSocket".into(),
            framing: "jsonMessage".into(),
        }
    }
}

/// Parameters of `system.hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HelloParams {
    pub client: PeerInfo,
    pub protocol: ProtocolOffer,
    #[serde(default)]
    pub features: FeatureOffer,
}

/// Result of a successful `system.hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HelloResult {
    pub connection_id: ConnectionId,
    pub protocol: ProtocolSelection,
    pub server: PeerInfo,
    pub transport: TransportInfo,
    pub features: FeatureSelection,
}

/// Result of `system.describe`: the negotiated connection and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SystemDescribeResult {
    pub connection: HelloResult,
    pub client: PeerInfo,
    /// The device this connection routes to, if any.
    #[serde(default)]
    pub device_id: Option<DeviceId>,
    /// The connection's active Session, if any.
    #[serde(default)]
    pub active_session_id: Option<SessionId>,
}
