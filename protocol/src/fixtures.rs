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
    pub manifest_version: u32,
    pub protocol_version: crate::ProtocolVersion,
    pub fixture_paths_relative_to: String,
    pub schema_paths_relative_to: String,
    pub fixtures: Vec<ManifestEntry>,
}

/// One manifest entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ManifestEntry {
    pub id: String,
    pub path: String,
    pub schema: String,
    pub kind: String,
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
    pub entry: ManifestEntry,
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

/// Every manifest entry with its text; entries whose file is missing are
/// returned as errors naming the path.
pub fn all() -> Result<Vec<Fixture>, String> {
    let manifest = manifest().map_err(|e| format!("manifest.json: {e}"))?;
    manifest
        .fixtures
        .into_iter()
        .map(|entry| match file(&entry.path) {
            Some(json) => Ok(Fixture { entry, json }),
            None => Err(format!("fixture file {} is not embedded", entry.path)),
        })
        .collect()
}

/// Deserializes `value` as `T` and serializes it back.
fn through<T: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

macro_rules! kinds {
    ($( $($kind:literal)|+ => $ty:ty, )*) => {
        /// Every manifest `kind` this crate has a Rust type for.
        pub const KINDS: &[&str] = &[ $( $($kind,)+ )* ];

        /// Deserializes `value` as the Rust type a manifest `kind` names and
        /// serializes it back; compare the result with [`json_equal`].
        pub fn round_trip(kind: &str, value: &Value) -> Result<Value, String> {
            match kind {
                $( $($kind)|+ => through::<$ty>(value), )*
                other => Err(format!("no Rust type for fixture kind {other:?}")),
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
