//! `system.hello` and `system.describe` DTOs.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::bounded::{BoundedVec, UniqueStrings};
use crate::ids::{ConnectionId, DeviceId, SessionId};

/// Name and version of one peer (client or server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PeerInfo {
    /// Product name, such as `devicerail-host`.
    pub name: String,
    /// The peer's own software version (not a wire version).
    pub version: String,
}

/// One wire version.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProtocolVersion {
    /// Major version; different majors never interoperate.
    pub major: u16,
    /// Minor version within `major`.
    pub minor: u16,
}

impl ProtocolVersion {
    /// Version `major.minor`.
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
    /// The major version the range belongs to.
    pub major: u16,
    /// Lowest supported minor, inclusive.
    pub min_minor: u16,
    /// Highest supported minor, inclusive; must not be below `minMinor`.
    pub max_minor: u16,
}

impl ProtocolRange {
    /// The minors `min_minor..=max_minor` of `major`.
    pub const fn new(major: u16, min_minor: u16, max_minor: u16) -> Self {
        Self {
            major,
            min_minor,
            max_minor,
        }
    }
    /// The oldest version in the range.
    pub const fn lowest(&self) -> ProtocolVersion {
        ProtocolVersion::new(self.major, self.min_minor)
    }
    /// The newest version in the range.
    pub const fn highest(&self) -> ProtocolVersion {
        ProtocolVersion::new(self.major, self.max_minor)
    }
}

/// The version ranges one side supports. Majors are listed explicitly, so
/// offering 1 and 3 says nothing about 2.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProtocolOffer {
    /// At least one range; their order carries no meaning.
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
    /// The version both sides speak from now on.
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
    /// Features that must all be enabled, or the handshake fails with
    /// `required_feature_unsupported`. Absent means none.
    #[serde(default)]
    pub required: UniqueStrings,
    /// Features to enable where available; unknown or unavailable names are
    /// ignored. Absent means none.
    #[serde(default)]
    pub optional: UniqueStrings,
}

/// The complete set of features enabled on a connection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FeatureSelection {
    /// Every enabled feature, sorted by name.
    pub enabled: UniqueStrings,
}

/// The transport a connection runs on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransportInfo {
    /// `stdio`, `unix` or `webSocket`.
    pub kind: String,
    /// `ndjson` or `jsonMessage`.
    pub framing: String,
}

impl TransportInfo {
    /// The NDJSON control connection.
    pub fn stdio() -> Self {
        Self {
            kind: "stdio".into(),
            framing: "ndjson".into(),
        }
    }
    /// A direct connection to the host's local control socket (NDJSON).
    pub fn unix() -> Self {
        Self {
            kind: "unix".into(),
            framing: "ndjson".into(),
        }
    }
    /// The event-stream WebSocket (one JSON message per WebSocket message).
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
    /// Who is connecting.
    pub client: PeerInfo,
    /// The wire versions the client speaks.
    pub protocol: ProtocolOffer,
    /// The optional extensions the client asks for; absent asks for none.
    #[serde(default)]
    pub features: FeatureOffer,
}

/// Result of a successful `system.hello`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HelloResult {
    /// Id of this connection; unrelated to device, Session or lease ids.
    pub connection_id: ConnectionId,
    /// The negotiated version.
    pub protocol: ProtocolSelection,
    /// The server's name and version.
    pub server: PeerInfo,
    /// The transport this connection runs on.
    pub transport: TransportInfo,
    /// The features enabled on this connection.
    pub features: FeatureSelection,
}

/// Result of `system.describe`: the negotiated connection and its state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SystemDescribeResult {
    /// What `system.hello` returned on this connection.
    pub connection: HelloResult,
    /// The client as it introduced itself in `system.hello`.
    pub client: PeerInfo,
    /// The device this connection routes to, if any.
    #[serde(default)]
    pub device_id: Option<DeviceId>,
    /// The connection's active Session, if any.
    #[serde(default)]
    pub active_session_id: Option<SessionId>,
}
