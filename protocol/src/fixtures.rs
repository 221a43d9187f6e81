//! The golden fixtures, embedded at build time (feature `fixtures`).
//!
//! `manifest.json` lists each fixture's id, path, schema file, kind and the
//! model it exercises; [`all`] pairs each entry with its JSON text.
//! [`round_trip`] maps a manifest `kind` to its Rust type, so conformance
//! suites in any crate check fixtures the same way.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::methods::*;
use crate::*;

/// Every file under `fixtures/`, keyed by its path relative to that folder.
static FILES: &[(&str, &str)] = include!(concat!(env!("OUT_DIR"), "/fixture_files.rs"));

/// The manifest document.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Manifest {
    /// Version of the manifest format (1).
    pub manifest_version: u32,
    /// The wire version the fixtures describe.
    pub protocol_version: crate::ProtocolVersion,
    /// What each entry's `path` is relative to (`manifestDirectory`).
    pub fixture_paths_relative_to: String,
    /// What each entry's `schema` is relative to (`repositoryRoot`).
    pub schema_paths_relative_to: String,
    /// One entry per fixture.
    pub fixtures: Vec<ManifestEntry>,
}

/// One manifest entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestEntry {
    /// Unique fixture id, such as `device.observation.v1`.
    pub id: String,
    /// The fixture file, relative to the `fixtures/` folder.
    pub path: String,
    /// The schema file the fixture must validate against, relative to the
    /// repository root.
    pub schema: String,
    /// Names the Rust type the fixture round-trips through (one of [`KINDS`]).
    pub kind: String,
    /// The Rust type and variant the fixture exercises, for readers.
    pub model: String,
}

impl ManifestEntry {
    /// The schema's file name (`device-info.schema.json`).
    pub fn schema_file(&self) -> &str {
        self.schema.rsplit('/').next().unwrap_or(&self.schema)
    }
}

/// One fixture with its text.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// The fixture's manifest entry.
    pub entry: ManifestEntry,
    /// The fixture's JSON text, as embedded.
    pub json: &'static str,
}

/// The manifest's raw text.
pub fn manifest_text() -> &'static str {
    file("manifest.json").unwrap_or("")
}

/// The parsed manifest.
pub fn manifest() -> Result<Manifest, serde_json::Error> {
    serde_json::from_str(manifest_text())
}

/// The path (relative to `fixtures/`) of every embedded file, sorted.
pub fn paths() -> impl Iterator<Item = &'static str> {
    FILES.iter().map(|(path, _)| *path)
}

/// The text of one embedded file.
pub fn file(path: &str) -> Option<&'static str> {
    FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(_, text)| *text)
}

/// Why [`all`] cannot pair the manifest with the embedded fixtures.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// `manifest.json` is missing or does not parse as a [`Manifest`].
    #[error("manifest.json: {0}")]
    Manifest(serde_json::Error),
    /// A manifest entry names a file that was not embedded.
    #[error("fixture file {path} is not embedded")]
    NotEmbedded {
        /// The entry's `path`.
        path: String,
    },
}

/// Why [`round_trip`] failed.
#[derive(Debug, thiserror::Error)]
pub enum RoundTripError {
    /// The kind is not one of [`KINDS`].
    #[error("no Rust type for fixture kind {kind:?}")]
    UnknownKind {
        /// The manifest `kind` given.
        kind: String,
    },
    /// The value does not deserialize as the kind's Rust type.
    #[error(transparent)]
    Deserialize(serde_json::Error),
    /// The typed value does not serialize back to JSON.
    #[error(transparent)]
    Serialize(serde_json::Error),
}

/// Every manifest entry with its text; entries whose file is missing are
/// returned as errors naming the path.
pub fn all() -> Result<Vec<Fixture>, FixtureError> {
    let manifest = manifest().map_err(FixtureError::Manifest)?;
    manifest
        .fixtures
        .into_iter()
        .map(|entry| match file(&entry.path) {
            Some(json) => Ok(Fixture { entry, json }),
            None => Err(FixtureError::NotEmbedded { path: entry.path }),
        })
        .collect()
}

/// Deserializes `value` as `T` and serializes it back.
fn through<T: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, RoundTripError> {
    let typed: T = serde_json::from_value(value.clone()).map_err(RoundTripError::Deserialize)?;
    serde_json::to_value(&typed).map_err(RoundTripError::Serialize)
}

macro_rules! kinds {
    ($( $($kind:literal)|+ => $ty:ty, )*) => {
        /// Every manifest `kind` this crate has a Rust type for.
        pub const KINDS: &[&str] = &[ $( $($kind,)+ )* ];

        /// Deserializes `value` as the Rust type a manifest `kind` names and
        /// serializes it back; compare the result with [`json_equal`].
        pub fn round_trip(kind: &str, value: &Value) -> Result<Value, RoundTripError> {
            match kind {
                $( $($kind)|+ => through::<$ty>(value), )*
                other => Err(RoundTripError::UnknownKind { kind: other.to_owned() }),
            }
        }
    };
}

kinds! {
    "helloRequest" | "webSocketHelloRequest" => SystemHelloRequest,
    "helloResponse" | "webSocketHelloResponse" => SystemHelloResponse,
    "systemDescribeRequest" => SystemDescribeRequest,
    "systemDescribeResponse" => SystemDescribeResponse,
    "deviceInfo" => DeviceInfo,
    "observation" => Observation,
    "actionDefinition" => ActionDefinition,
    "actionCall" => ActionCall,
    "manualRecording" => ManualRecording,
    "actionResult" => ActionResult,
    "errorInfo" => ErrorInfo,
    "deviceConnectRequest" => DeviceConnectRequest,
    "deviceConnectResponse" => DeviceConnectResponse,
    "deviceDisconnectRequest" => DeviceDisconnectRequest,
    "deviceDisconnectResponse" => DeviceDisconnectResponse,
    "deviceCapabilitiesRequest" => DeviceCapabilitiesRequest,
    "deviceCapabilitiesResponse" => DeviceCapabilitiesResponse,
    "deviceObserveRequest" => DeviceObserveRequest,
    "deviceObserveResponse" => DeviceObserveResponse,
    "deviceExecuteRequest" => DeviceExecuteRequest,
    "deviceExecuteResponse" => DeviceExecuteResponse,
    "deviceSelectRequest" => DeviceSelectRequest,
    "deviceSelectResponse" => DeviceSelectResponse,
    "devicesListRequest" => DevicesListRequest,
    "devicesListResponse" => DevicesListResponse,
    "requestCancelRequest" => RequestCancelRequest,
    "requestCancelResponse" => RequestCancelResponse,
    "sessionStartRequest" => SessionStartRequest,
    "sessionStartResponse" => SessionStartResponse,
    "sessionCurrentRequest" => SessionCurrentRequest,
    "sessionCurrentResponse" => SessionCurrentResponse,
    "sessionEndRequest" => SessionEndRequest,
    "sessionEndResponse" => SessionEndResponse,
    "sessionsListRequest" => SessionsListRequest,
    "sessionsListResponse" => SessionsListResponse,
    "sessionExportRequest" => SessionExportRequest,
    "sessionExportResponse" => SessionExportResponse,
    "eventsListRequest" => EventsListRequest,
    "eventsListResponse" => EventsListResponse,
    "eventsClearRequest" => EventsClearRequest,
    "eventsClearResponse" => EventsClearResponse,
    "mediaStreamCaptureRequest" => MediaStreamCaptureRequest,
    "mediaStreamCaptureResponse" => MediaStreamCaptureResponse,
    "mediaStreamEndRequest" => MediaStreamEndRequest,
    "mediaStreamEndResponse" => MediaStreamEndResponse,
    "mediaStreamStartRequest" => MediaStreamStartRequest,
    "mediaStreamStartResponse" => MediaStreamStartResponse,
    "rpcFailure" => RpcResponse,
    "testEvent" => TestEvent,
    "eventsStreamOpenRequest" => EventsStreamOpenRequest,
    "eventsStreamOpenResponse" => EventsStreamOpenResponse,
    "eventsSubscribeRequest" => EventsSubscribeRequest,
    "eventsSubscribeResponse" => EventsSubscribeResponse,
    "eventsStreamEventNotification" => EventsStreamEventNotification,
    "eventsStreamTerminalNotification" => EventsStreamTerminalNotification,
    "uiSnapshot" => UiSnapshot,
    "findElementArguments" => FindElementArguments,
    "findElementResult" => FindElementResult,
    "tapElementArguments" => TapElementArguments,
    "tapElementResult" => TapElementResult,
    "clearElementArguments" => ClearElementArguments,
    "clearElementResult" => ClearElementResult,
    "setElementValueArguments" => SetElementValueArguments,
    "setElementValueResult" => SetElementValueResult,
    "waitForElementArguments" => WaitForElementArguments,
    "waitForElementResult" => WaitForElementResult,
    "uiSnapshotGetRequest" => UiSnapshotGetRequest,
    "uiSnapshotGetResponse" => UiSnapshotGetResponse,
    "verdictRecordRequest" => VerdictRecordRequest,
    "verdictRecordResponse" => VerdictRecordResponse,
}

/// JSON equality where numbers compare by value (`1` equals `1.0`).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_u64(), y.as_u64()) {
            (Some(p), Some(q)) => p == q,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}
