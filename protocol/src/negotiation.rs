//! Pure version and feature negotiation for `system.hello`.

use serde_json::json;

use crate::errors::{Context, ErrorCode, RpcError};
use crate::handshake::{
    FeatureOffer, ProtocolIncompatibilityReason, ProtocolOffer, ProtocolRange, ProtocolVersion,
};

/// The wire versions this implementation serves: 1.0 through 1.5.
pub const SERVER_PROTOCOL_RANGES: &[ProtocolRange] = &[ProtocolRange::new(1, 0, 5)];

/// The newest version this crate describes.
pub const LATEST: ProtocolVersion = ProtocolVersion::new(1, 5);

/// The server's offer as it appears in errors.
pub fn server_offer() -> ProtocolOffer {
    ProtocolOffer::new(SERVER_PROTOCOL_RANGES.to_vec()).unwrap_or_else(|| unreachable!())
}

/// Why version negotiation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// The client offered no range.
    #[error("the protocol offer is empty")]
    EmptyOffer,
    /// A range's `minMinor` exceeds its `maxMinor`.
    #[error("protocol range {index} has minMinor {min_minor} greater than maxMinor {max_minor}")]
    InvertedRange {
        /// Position of the range in the offer, from 0.
        index: usize,
        /// The range's `minMinor`.
        min_minor: u16,
        /// The range's `maxMinor`.
        max_minor: u16,
    },
    /// The offers share no version.
    #[error("client and server do not share a protocol version ({reason:?})")]
    Incompatible {
        /// How the offers miss each other.
        reason: ProtocolIncompatibilityReason,
    },
}

impl VersionError {
    /// The JSON-RPC error this failure is answered with on the control
    /// connection.
    pub fn to_rpc_error(&self, client: &[ProtocolRange], server: &[ProtocolRange]) -> RpcError {
        match self {
            Self::EmptyOffer => ErrorCode::InvalidParams.rpc_in(
                Context::Hello,
                self.to_string(),
                json!({ "reason": "emptyProtocolOffer" }),
            ),
            Self::InvertedRange { .. } => ErrorCode::InvalidParams.rpc_in(
                Context::Hello,
                self.to_string(),
                json!({ "reason": "invalidProtocolRange", "clientProtocol": { "ranges": client } }),
            ),
            Self::Incompatible { reason } => ErrorCode::ProtocolVersionIncompatible.rpc(
                "client and server do not share a protocol version",
                json!({
                    "reason": reason,
                    "clientProtocol": { "ranges": client },
                    "serverProtocol": { "ranges": server },
                }),
            ),
        }
    }

    /// The error on the event-stream WebSocket, whose offers carry no
    /// `reason`.
    pub fn to_stream_rpc_error(
        &self,
        client: &[ProtocolRange],
        server: &[ProtocolRange],
    ) -> RpcError {
        match self {
            Self::Incompatible { .. } => ErrorCode::ProtocolVersionIncompatible.rpc(
                "client and server do not share a protocol version",
                json!({
                    "clientProtocol": { "ranges": client },
                    "serverProtocol": { "ranges": server },
                }),
            ),
            other => other.to_rpc_error(client, server),
        }
    }
}

/// Validates both offers, intersects ranges of equal majors, and selects
/// the lexicographically highest common `{major, minor}`.
pub fn negotiate_version(
    client: &[ProtocolRange],
    server: &[ProtocolRange],
) -> Result<ProtocolVersion, VersionError> {
    validate_ranges(client)?;
    validate_ranges(server)?;
    let mut best: Option<ProtocolVersion> = None;
    for c in client {
        for s in server.iter().filter(|s| s.major == c.major) {
            let lo = c.min_minor.max(s.min_minor);
            let hi = c.max_minor.min(s.max_minor);
            if lo <= hi {
                let candidate = ProtocolVersion::new(c.major, hi);
                if best.is_none_or(|b| candidate > b) {
                    best = Some(candidate);
                }
            }
        }
    }
    best.ok_or_else(|| VersionError::Incompatible {
        reason: incompatibility(client, server),
    })
}

fn validate_ranges(ranges: &[ProtocolRange]) -> Result<(), VersionError> {
    if ranges.is_empty() {
        return Err(VersionError::EmptyOffer);
    }
    for (index, r) in ranges.iter().enumerate() {
        if r.min_minor > r.max_minor {
            return Err(VersionError::InvertedRange {
                index,
                min_minor: r.min_minor,
                max_minor: r.max_minor,
            });
        }
    }
    Ok(())
}

fn incompatibility(
    client: &[ProtocolRange],
    server: &[ProtocolRange],
) -> ProtocolIncompatibilityReason {
    let client_max = client.iter().map(ProtocolRange::highest).max();
    let client_min = client.iter().map(ProtocolRange::lowest).min();
    let server_max = server.iter().map(ProtocolRange::highest).max();
    let server_min = server.iter().map(ProtocolRange::lowest).min();
    match (client_min, client_max, server_min, server_max) {
        (Some(_), Some(cmax), Some(smin), Some(_)) if cmax < smin => {
            ProtocolIncompatibilityReason::ClientTooOld
        }
        (Some(cmin), Some(_), Some(_), Some(smax)) if cmin > smax => {
            ProtocolIncompatibilityReason::ServerTooOld
        }
        _ => ProtocolIncompatibilityReason::NoCommonVersion,
    }
}

macro_rules! features {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, minor $minor:literal, requires $req:expr; )*) => {
        /// An optional protocol extension. Variants are declared in name order,
        /// which is the order `enabled` lists them in.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Feature {
            $(
                $(#[$doc])*
                $variant,
            )*
        }

        impl Feature {
            /// Every feature, sorted by name.
            pub const ALL: &'static [Feature] = &[ $( Feature::$variant, )* ];

            /// The versioned wire name, such as `events.snapshot.v1`.
            pub const fn name(self) -> &'static str {
                match self { $( Feature::$variant => $name, )* }
            }

            /// The first minor version of major 1 that has this feature.
            pub const fn min_minor(self) -> u16 {
                match self { $( Feature::$variant => $minor, )* }
            }

            /// A feature that must be enabled together with this one.
            pub const fn requires(self) -> Option<Feature> {
                match self { $( Feature::$variant => $req, )* }
            }

            /// The feature with wire name `name`, if there is one.
            pub fn from_name(name: &str) -> Option<Self> {
                match name { $( $name => Some(Feature::$variant), )* _ => None }
            }
        }
    };
}

features! {
    /// `action.protected.v1`: protected Actions are listed and can be
    /// executed, with redacted arguments and no screenshots.
    ActionProtected = "action.protected.v1", minor 2, requires None;
    /// `device.routing.v1`: `device.select` and the connection's selection
    /// in `devices.list`.
    DeviceRouting = "device.routing.v1", minor 2, requires None;
    /// `device.semanticActions.v1`: the five semantic element Actions and
    /// their execution metadata; needs `observation.uiSnapshot.v1`.
    DeviceSemanticActions = "device.semanticActions.v1", minor 5, requires Some(Feature::ObservationUiSnapshot);
    /// `events.snapshot.v1`: reading and deleting recorded Sessions
    /// (`events.list`, `events.clear`, `session.export`, `sessions.list`).
    EventsSnapshot = "events.snapshot.v1", minor 0, requires None;
    /// `events.stream.v1`: replayed and live events over a loopback
    /// WebSocket.
    EventsStream = "events.stream.v1", minor 3, requires None;
    /// `media.stream.v1`: Session-scoped screenshot and video frame streams.
    MediaStream = "media.stream.v1", minor 4, requires None;
    /// `observation.uiSnapshot.v1`: UI trees referenced from Observations
    /// and read with `ui.snapshot.get`.
    ObservationUiSnapshot = "observation.uiSnapshot.v1", minor 5, requires None;
    /// `request.control.v1`: `timeoutMs` on device requests, and
    /// `request.cancel`.
    RequestControl = "request.control.v1", minor 1, requires None;
    /// `session.export.page.v1`: paged `session.export` of ended Sessions;
    /// needs `events.snapshot.v1`.
    SessionExportPage = "session.export.page.v1", minor 4, requires Some(Feature::EventsSnapshot);
    /// `verdict.record.v1`: storing caller-made verdicts with
    /// `verdict.record`.
    VerdictRecord = "verdict.record.v1", minor 5, requires None;
}

impl Feature {
    /// Whether the feature exists at `version`.
    pub const fn available_at(self, version: ProtocolVersion) -> bool {
        version.major == 1 && version.minor >= self.min_minor()
    }
}

impl std::fmt::Display for Feature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of features.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FeatureSet(u32);

impl FeatureSet {
    /// No features.
    pub const EMPTY: Self = Self(0);

    /// Every feature.
    pub fn all() -> Self {
        Feature::ALL.iter().copied().collect()
    }

    /// The features a stdio connection may enable.
    pub fn stdio() -> Self {
        Self::all()
    }

    /// The features an event-stream WebSocket connection may enable.
    pub fn web_socket() -> Self {
        [Feature::EventsStream].into_iter().collect()
    }

    /// Whether `f` is a member.
    pub const fn contains(self, f: Feature) -> bool {
        self.0 & (1 << f as u8) != 0
    }

    /// Adds `f`.
    pub fn insert(&mut self, f: Feature) {
        self.0 |= 1 << f as u8;
    }

    /// Members in name order.
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL
            .iter()
            .copied()
            .filter(move |f| self.contains(*f))
    }

    /// Member names in the deterministic `enabled` order.
    pub fn names(self) -> crate::bounded::UniqueStrings {
        self.iter().map(Feature::name).collect()
    }

    /// Whether the set has no members.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl FromIterator<Feature> for FeatureSet {
    fn from_iter<I: IntoIterator<Item = Feature>>(iter: I) -> Self {
        let mut set = Self::EMPTY;
        for f in iter {
            set.insert(f);
        }
        set
    }
}

impl std::fmt::Debug for FeatureSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.iter().map(Feature::name))
            .finish()
    }
}

/// Why feature negotiation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeatureError {
    /// Some `required` features are unknown or unavailable.
    #[error("required features are unavailable: {}", .unsupported.join(", "))]
    RequiredUnsupported {
        /// The unavailable names, in the order offered.
        unsupported: Vec<String>,
    },
    /// An enabled feature lacks the feature it depends on.
    #[error("feature {feature} needs {requires}, which is not enabled")]
    DependencyUnsatisfied {
        /// The enabled feature.
        feature: Feature,
        /// The feature it needs.
        requires: Feature,
    },
}

impl FeatureError {
    /// The JSON-RPC error on the control connection; `available` is what the
    /// transport offers at the selected version.
    pub fn to_rpc_error(&self, available: FeatureSet) -> RpcError {
        match self {
            Self::RequiredUnsupported { unsupported } => ErrorCode::RequiredFeatureUnsupported.rpc(
                self.to_string(),
                json!({ "unsupportedRequired": unsupported, "available": available.names() }),
            ),
            Self::DependencyUnsatisfied { feature, requires } => {
                ErrorCode::FeatureDependencyUnsatisfied.rpc(
                    self.to_string(),
                    json!({ "feature": feature.name(), "requiredFeature": requires.name() }),
                )
            }
        }
    }

    /// The error on the event-stream WebSocket (not retryable there).
    pub fn to_stream_rpc_error(&self) -> RpcError {
        match self {
            Self::RequiredUnsupported { unsupported } => ErrorCode::RequiredFeatureUnsupported
                .rpc_in(
                    Context::EventStream,
                    self.to_string(),
                    json!({ "unsupportedRequired": unsupported }),
                ),
            other => other.to_rpc_error(FeatureSet::EMPTY),
        }
    }
}

/// The features a transport offers at `version`.
pub fn available_features(transport: FeatureSet, version: ProtocolVersion) -> FeatureSet {
    transport
        .iter()
        .filter(|f| f.available_at(version))
        .collect()
}

/// Resolves a client's feature offer against what the transport offers at
/// the negotiated version. Unknown or unavailable optional names are
/// ignored; unknown or unavailable required names fail. The result must be
/// closed under [`Feature::requires`].
pub fn negotiate_features(
    offer: &FeatureOffer,
    transport: FeatureSet,
    version: ProtocolVersion,
) -> Result<FeatureSet, FeatureError> {
    let available = |name: &str| {
        Feature::from_name(name).filter(|f| transport.contains(*f) && f.available_at(version))
    };
    let mut enabled = FeatureSet::EMPTY;
    let mut unsupported = Vec::new();
    for name in offer.required.iter() {
        match available(name) {
            Some(f) => enabled.insert(f),
            None => unsupported.push(name.to_owned()),
        }
    }
    if !unsupported.is_empty() {
        return Err(FeatureError::RequiredUnsupported { unsupported });
    }
    for name in offer.optional.iter() {
        if let Some(f) = available(name) {
            enabled.insert(f);
        }
    }
    for feature in enabled.iter() {
        if let Some(requires) = feature.requires()
            && !enabled.contains(requires)
        {
            return Err(FeatureError::DependencyUnsatisfied { feature, requires });
        }
    }
    Ok(enabled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bounded::UniqueStrings;
    use crate::handshake::ProtocolIncompatibilityReason as R;

    fn r(major: u16, lo: u16, hi: u16) -> ProtocolRange {
        ProtocolRange::new(major, lo, hi)
    }

    #[test]
    fn selects_highest_common_pair() {
        let v = negotiate_version(&[r(1, 0, 2), r(3, 0, 0)], SERVER_PROTOCOL_RANGES);
        assert_eq!(v, Ok(ProtocolVersion::new(1, 2)));
        let v = negotiate_version(&[r(1, 0, 9)], &[r(1, 0, 5), r(2, 0, 1)]);
        assert_eq!(v, Ok(ProtocolVersion::new(1, 5)));
        let v = negotiate_version(&[r(1, 0, 9), r(2, 0, 0)], &[r(1, 0, 5), r(2, 0, 1)]);
        assert_eq!(v, Ok(ProtocolVersion::new(2, 0)));
    }

    #[test]
    fn majors_never_mix() {
        let v = negotiate_version(&[r(2, 0, 9)], SERVER_PROTOCOL_RANGES);
        assert_eq!(
            v,
            Err(VersionError::Incompatible {
                reason: R::ServerTooOld
            })
        );
    }

    #[test]
    fn reasons() {
        let e = |c: &[ProtocolRange]| negotiate_version(c, SERVER_PROTOCOL_RANGES).err();
        assert_eq!(
            e(&[r(0, 1, 9)]),
            Some(VersionError::Incompatible {
                reason: R::ClientTooOld
            })
        );
        assert_eq!(
            e(&[r(1, 6, 9)]),
            Some(VersionError::Incompatible {
                reason: R::ServerTooOld
            })
        );
        assert_eq!(
            negotiate_version(&[r(1, 0, 0), r(1, 4, 4)], &[r(1, 2, 3)]).err(),
            Some(VersionError::Incompatible {
                reason: R::NoCommonVersion
            })
        );
    }

    #[test]
    fn invalid_offers() {
        assert_eq!(
            negotiate_version(&[], SERVER_PROTOCOL_RANGES),
            Err(VersionError::EmptyOffer)
        );
        assert!(matches!(
            negotiate_version(&[r(1, 3, 2)], SERVER_PROTOCOL_RANGES),
            Err(VersionError::InvertedRange { index: 0, .. })
        ));
    }

    fn offer(required: &[&str], optional: &[&str]) -> FeatureOffer {
        FeatureOffer {
            required: required.iter().copied().collect::<UniqueStrings>(),
            optional: optional.iter().copied().collect::<UniqueStrings>(),
        }
    }

    #[test]
    fn optional_features_are_gated_by_version() {
        let all: Vec<&str> = Feature::ALL.iter().map(|f| f.name()).collect();
        let at = |minor| {
            negotiate_features(
                &offer(&[], &all),
                FeatureSet::stdio(),
                ProtocolVersion::new(1, minor),
            )
            .map(|s| s.iter().collect::<Vec<_>>())
        };
        assert_eq!(at(0), Ok(vec![Feature::EventsSnapshot]));
        assert_eq!(
            at(1),
            Ok(vec![Feature::EventsSnapshot, Feature::RequestControl])
        );
        assert_eq!(at(5).map(|v| v.len()), Ok(10));
    }

    #[test]
    fn enabled_order_is_by_name() {
        let names = FeatureSet::all().names();
        let mut sorted: Vec<&str> = names.iter().collect();
        sorted.sort_unstable();
        assert_eq!(names.iter().collect::<Vec<_>>(), sorted);
    }

    #[test]
    fn required_unknown_or_gated_fails() {
        let v = ProtocolVersion::new(1, 2);
        let e = negotiate_features(
            &offer(&["media.stream.v1", "x.v9"], &[]),
            FeatureSet::stdio(),
            v,
        );
        assert_eq!(
            e,
            Err(FeatureError::RequiredUnsupported {
                unsupported: vec!["media.stream.v1".into(), "x.v9".into()]
            })
        );
        let e = negotiate_features(&offer(&[], &["x.v9"]), FeatureSet::stdio(), v);
        assert_eq!(e, Ok(FeatureSet::EMPTY));
    }

    #[test]
    fn dependencies() {
        let v = LATEST;
        let e = negotiate_features(
            &offer(&[], &["device.semanticActions.v1"]),
            FeatureSet::stdio(),
            v,
        );
        assert_eq!(
            e,
            Err(FeatureError::DependencyUnsatisfied {
                feature: Feature::DeviceSemanticActions,
                requires: Feature::ObservationUiSnapshot
            })
        );
        let e = negotiate_features(
            &offer(&["session.export.page.v1"], &[]),
            FeatureSet::stdio(),
            v,
        );
        assert!(matches!(e, Err(FeatureError::DependencyUnsatisfied { .. })));
        let ok = negotiate_features(
            &offer(
                &["device.semanticActions.v1"],
                &["observation.uiSnapshot.v1"],
            ),
            FeatureSet::stdio(),
            v,
        );
        assert!(ok.is_ok());
    }

    #[test]
    fn web_socket_transport_only_streams() {
        let all: Vec<&str> = Feature::ALL.iter().map(|f| f.name()).collect();
        let s = negotiate_features(&offer(&[], &all), FeatureSet::web_socket(), LATEST);
        assert_eq!(
            s.map(|s| s.iter().collect::<Vec<_>>()),
            Ok(vec![Feature::EventsStream])
        );
    }
}
