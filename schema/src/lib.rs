//! # devicerail-host-schema-gen
//!
//! Produces the JSON Schema set (Draft 2020-12) that documents the
//! DeviceRail wire contract for clients written in other languages: one
//! schema per public protocol type under `schema/v1/`, plus a
//! `manifest.json` listing each document's file, `$id` and type name.
//!
//! The Rust types in `devicerail-host-protocol` are the single source of truth;
//! every schema is derived from them with `schemars`, and this crate only
//! adds the document identity (`$id`, `$schema`, `title`) and, for aliases,
//! a description. [`DOCUMENTS`] is the one table that maps a file to the
//! Rust type it describes; the binary and the tests both read it.
//!
//! What this crate must never do:
//!
//! - be a dependency of the host, a driver or a client: it is a build-time
//!   tool, and the wire types live in `devicerail-host-protocol`;
//! - hand-write or patch a schema's shape: a schema that is wrong is fixed
//!   in the Rust type (its serde or schemars attributes), so the schema and
//!   the deserializer cannot drift apart;
//! - produce output that depends on anything but the Rust types and the
//!   golden fixtures (no clock, no environment, no network, no hash-map
//!   order): the same source must always give byte-identical files, so
//!   `write --check` can gate CI.
//!
//! The same `write` also generates the type-only TypeScript package in
//! `schema/typescript/` from these schemas (see [`typescript`]).

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use devicerail_host_protocol::methods::*;
use devicerail_host_protocol::*;
// The session document, not the `session.export` method marker of the same name.
use devicerail_host_protocol::SessionExport;
use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema};
use serde_json::{Map, Value, json};

pub mod typescript;

/// Where the schema set lives, relative to the workspace root.
pub const SCHEMA_DIR: &str = "schema/v1";
/// The manifest's file name inside [`SCHEMA_DIR`].
pub const MANIFEST_FILE: &str = "manifest.json";
/// Suffix of every schema file.
pub const SCHEMA_SUFFIX: &str = ".schema.json";
/// Prefix of every document's `$id`; the file stem follows.
pub const ID_PREFIX: &str = "urn:devicerail:schema:protocol:v1:";
/// The meta-schema every document declares.
pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";
/// Version of the schema set's layout (file naming, manifest shape).
pub const SCHEMA_SET_VERSION: u32 = 1;

/// One generated schema document.
pub struct Document {
    /// The document's `title` and manifest `name` (PascalCase); the file
    /// name is derived from it.
    pub name: &'static str,
    /// The Rust type the schema is generated from.
    pub rust_type: &'static str,
    /// Replaces the type's own description; set for aliases, whose Rust
    /// type documents something more general.
    pub description: Option<&'static str>,
    generate: fn() -> Schema,
}

impl Document {
    /// The file stem (`device-info`).
    pub fn stem(&self) -> String {
        kebab_case(self.name)
    }

    /// The file name (`device-info.schema.json`).
    pub fn file_name(&self) -> String {
        format!("{}{SCHEMA_SUFFIX}", self.stem())
    }

    /// The document's `$id`.
    pub fn id(&self) -> String {
        format!("{ID_PREFIX}{}", self.stem())
    }

    /// The complete schema document, keys sorted.
    pub fn schema(&self) -> Value {
        let mut value = (self.generate)().to_value();
        if let Value::Object(map) = &mut value {
            map.insert("$id".into(), self.id().into());
            map.insert("$schema".into(), DRAFT.into());
            map.insert("title".into(), self.name.into());
            if let Some(description) = self.description {
                map.insert("description".into(), description.into());
            }
        }
        sorted(value)
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Document")
            .field("name", &self.name)
            .field("rust_type", &self.rust_type)
            .finish_non_exhaustive()
    }
}

/// The root schema of `T` under Draft 2020-12 settings (`$defs`).
fn root<T: JsonSchema>() -> Schema {
    SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<T>()
}

macro_rules! documents {
    ($( $name:ident $(=> $ty:ty)? $(, $desc:literal)?; )*) => {
        /// Every document of the schema set: its name, the Rust type behind
        /// it and, for aliases, the description that replaces the type's.
        pub static DOCUMENTS: &[Document] = &[ $(
            documents!(@one $name $(=> $ty)? $(, $desc)?),
        )* ];
    };
    (@one $name:ident) => {
        Document {
            name: stringify!($name),
            rust_type: stringify!($name),
            description: None,
            generate: root::<$name>,
        }
    };
    (@one $name:ident => $ty:ty $(, $desc:literal)?) => {
        Document {
            name: stringify!($name),
            rust_type: stringify!($ty),
            description: documents!(@desc $($desc)?),
            generate: root::<$ty>,
        }
    };
    (@one $name:ident, $desc:literal) => {
        Document {
            name: stringify!($name),
            rust_type: stringify!($name),
            description: Some($desc),
            generate: root::<$name>,
        }
    };
    (@desc) => { None };
    (@desc $desc:literal) => { Some($desc) };
}

documents! {
    // Envelope and identifiers.
    JsonRpcVersion, "The `jsonrpc` member of every message; always the string \"2.0\".";
    RpcId, "A request id chosen by the client: a string, or a non-negative integer no larger than 2^53 - 1.";
    RpcParams;
    RpcRequest;
    RpcResponse;
    RpcError;
    RpcServerMessage;
    RpcServerNotification;
    RequestTimeoutMs => RequestTimeoutMs, "A positive budget in milliseconds for request-scoped device work (`timeoutMs`, `actionTimeoutMs`).";
    ErrorInfo;
    DeviceId, "An opaque device id assigned by the driver that reaches the device; stable across listings.";
    SessionId, "The UUID of one recorded Session.";
    EventId, "The UUID of one recorded event; unique across Sessions.";
    EventSequence => EventSequence, "A one-based position in one Session's event log; also the index of a media frame.";
    MediaStreamId, "The UUID a caller picks for one media stream; unique for the daemon's lifetime.";
    EventStreamEpoch => StreamEpoch, "The UUID of one daemon lifetime; event-stream cursors are only valid within the epoch that issued them.";
    EventSubscriptionId => SubscriptionId, "The UUID of one event-stream subscription on a WebSocket connection.";

    // Handshake.
    PeerInfo;
    ProtocolVersion;
    ProtocolRange;
    ProtocolOffer;
    ProtocolSelection;
    ProtocolIncompatibilityReason;
    FeatureOffer;
    FeatureSelection;
    TransportInfo;
    HelloParams;
    HelloResult;
    SystemHelloRequest;
    SystemHelloResponse;
    SystemDescribeRequest;
    SystemDescribeResponse;
    SystemDescribeResult;

    // Devices.
    Platform;
    DeviceInfo;
    DevicesListRequest;
    DevicesListResponse;
    DevicesListResult;
    DeviceSelectParams;
    DeviceSelectRequest;
    DeviceSelectResponse;
    DeviceSelectResult;
    DeviceConnectRequest;
    DeviceConnectResponse;
    DeviceConnectResult => DeviceInfo, "Result of `device.connect`: the device the connection now holds.";
    DeviceDisconnectRequest;
    DeviceDisconnectResponse;
    DeviceDisconnectResult;
    DeviceCapabilitiesRequest;
    DeviceCapabilitiesResponse;
    DeviceCapabilitiesResult => Vec<ActionDefinition>, "Result of `device.capabilities`: every Action the connected device offers.";
    DeviceObserveRequest;
    DeviceObserveResponse;
    DeviceObserveResult => Observation, "Result of `device.observe`: what the host saw on the device.";

    // Observations and Actions.
    Viewport;
    AssetRef;
    ScreenshotOmissionReason;
    UiSnapshotOmissionReason;
    Observation;
    ActionProtection;
    ActionDefinition;
    ActionCall;
    RecordedActionCall;
    ActionExecution;
    CoordinateFallbackReason;
    ActionResult;
    ActionOutcome;
    DeviceExecuteParams;
    DeviceExecuteRequest;
    DeviceExecuteResponse;
    DeviceExecuteResult => ActionResult, "Result of `device.execute`: the success result of the Action.";

    // Request control.
    RequestCancelParams;
    RequestCancelRequest;
    RequestCancelResponse;
    RequestCancelResult;
    RequestCancelStatus;

    // Sessions and events.
    SessionState;
    SessionOutcome;
    SessionInfo;
    SessionStartRequest;
    SessionStartResponse;
    SessionStartResult => SessionInfo, "Result of `session.start`: the Session just started.";
    SessionCurrentRequest;
    SessionCurrentResponse;
    SessionCurrentResult;
    SessionEndParams;
    SessionEndRequest;
    SessionEndResponse;
    SessionEndResult => SessionInfo, "Result of `session.end`: the Session as it ended.";
    SessionsListRequest;
    SessionsListResponse;
    SessionsListResult => Vec<SessionInfo>, "Result of `sessions.list`: every Session the host has recorded.";
    SessionExportParams;
    SessionExportRequest;
    SessionExportResponse;
    SessionExportResult;
    SessionExport;
    SessionTargetParams;
    EventsListParams;
    EventsListRequest;
    EventsListResponse;
    EventsListResult => Vec<TestEvent>, "Result of `events.list`: the requested events in sequence order.";
    EventsClearRequest;
    EventsClearResponse;
    EventsClearResult;
    TestEvent;
    TestEventPayload;

    // Event stream.
    EventStreamCursor;
    EventStreamEndpoint, "A short-lived, single-use WebSocket URL for one Session's event stream; a bearer secret that clients must not log.";
    EventStreamOriginPolicy;
    EventsStreamOpenParams;
    EventsStreamOpenRequest;
    EventsStreamOpenResponse;
    EventsStreamOpenResult;
    EventsSubscribeParams;
    EventsSubscribeRequest;
    EventsSubscribeResponse;
    EventsSubscribeResult;
    EventsStreamEventParams;
    EventsStreamEventNotification;
    EventsStreamTermination;
    EventsStreamTerminalParams;
    EventsStreamTerminalNotification;

    // Media streams.
    MediaStreamKind;
    MediaStreamInfo;
    MediaFrame;
    MediaStreamStartParams;
    MediaStreamStartRequest;
    MediaStreamStartResponse;
    MediaStreamStartResult;
    MediaStreamCaptureParams;
    MediaStreamCaptureRequest;
    MediaStreamCaptureResponse;
    MediaStreamCaptureResult;
    MediaStreamEndParams;
    MediaStreamEndRequest;
    MediaStreamEndResponse;
    MediaStreamEndResult;

    // Manual recordings.
    ManualActionArguments;
    ManualActionStep;
    ManualRecording;

    // UI trees and semantic Actions.
    UiContextKind;
    UiContextRef;
    UiContextSelector;
    UiRect;
    UiNode;
    UiSnapshot;
    UiSnapshotRef;
    UiNodeRef;
    TextMatchMode;
    TextMatch;
    ElementSelector;
    ElementTarget;
    FindElementArguments;
    FindElementResult;
    TapElementArguments;
    TapElementResult;
    ClearElementArguments;
    ClearElementResult;
    SetElementValueArguments;
    SetElementValueResult;
    WaitForElementCondition;
    WaitForElementArguments;
    WaitForElementResult;
    UiSnapshotGetParams;
    UiSnapshotGetRequest;
    UiSnapshotGetResponse;
    UiSnapshotGetResult => UiSnapshot, "Result of `ui.snapshot.get`: the stored UI tree of one Observation.";

    // Verdicts.
    VerdictStatus;
    Verdict;
    VerdictRecordParams;
    VerdictRecordRequest;
    VerdictRecordResponse;
    VerdictRecordResult;
}

/// `DeviceInfo` → `device-info`.
fn kebab_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 8);
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Rebuilds every object with its keys in sorted order, so the output does
/// not depend on whether `serde_json` preserves insertion order.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let entries: BTreeMap<String, Value> =
                map.into_iter().map(|(k, v)| (k, sorted(v))).collect();
            Value::Object(entries.into_iter().collect::<Map<_, _>>())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The on-disk form: pretty-printed with two-space indents, one trailing
/// newline.
pub fn render(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_else(|e| {
        // Only non-string map keys can fail, and `Value` has none.
        unreachable!("a serde_json::Value always serializes: {e}")
    });
    text.push('\n');
    text
}

/// The manifest document.
pub fn manifest() -> Value {
    let documents: BTreeMap<String, Value> = DOCUMENTS
        .iter()
        .map(|d| {
            (
                d.file_name(),
                json!({ "file": d.file_name(), "id": d.id(), "name": d.name }),
            )
        })
        .collect();
    sorted(json!({
        "documents": documents.into_values().collect::<Vec<_>>(),
        "draft": DRAFT,
        "protocolVersion": {
            "major": LATEST.major,
            "minor": LATEST.minor,
        },
        "schemaSetVersion": SCHEMA_SET_VERSION,
    }))
}

/// Every file the generator produces (schemas and manifest), by file name,
/// with its exact text.
pub fn generate() -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> = DOCUMENTS
        .iter()
        .map(|d| (d.file_name(), render(&d.schema())))
        .collect();
    files.insert(MANIFEST_FILE.to_owned(), render(&manifest()));
    files
}

/// The workspace root, from this crate's manifest directory (never the
/// current directory).
pub fn workspace_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().unwrap_or(crate_dir).to_path_buf()
}

/// The checked-in schema folder.
pub fn schema_dir() -> PathBuf {
    workspace_root().join(SCHEMA_DIR)
}

/// How the schema folder differs from what the generator produces.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Difference {
    /// A generated file that is not on disk.
    Missing(String),
    /// A file on disk whose text differs from the generated text.
    Changed(String),
    /// A `*.json` file on disk that the generator no longer produces.
    Stale(String),
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing(file) => write!(f, "missing: {file}"),
            Self::Changed(file) => write!(f, "changed: {file}"),
            Self::Stale(file) => write!(f, "stale:   {file}"),
        }
    }
}

/// The `*.json` file names directly in `dir` (none if it does not exist).
fn json_files(dir: &Path) -> io::Result<Vec<String>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        if let Some(name) = entry.file_name().to_str()
            && name.ends_with(".json")
        {
            names.push(name.to_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Compares `dir` with the generator's output without writing anything.
/// An empty list means the folder is up to date.
pub fn check(dir: &Path) -> io::Result<Vec<Difference>> {
    let expected = generate();
    let mut differences = Vec::new();
    for (name, text) in &expected {
        match fs::read_to_string(dir.join(name)) {
            Ok(on_disk) if on_disk == *text => {}
            Ok(_) => differences.push(Difference::Changed(name.clone())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                differences.push(Difference::Missing(name.clone()));
            }
            Err(e) => return Err(e),
        }
    }
    for name in json_files(dir)? {
        if !expected.contains_key(&name) {
            differences.push(Difference::Stale(name));
        }
    }
    differences.sort();
    Ok(differences)
}

/// Brings `dir` up to date: writes missing and changed files and removes
/// stale `*.json` files. Returns what it did.
pub fn write(dir: &Path) -> io::Result<Vec<Difference>> {
    let differences = check(dir)?;
    if differences.is_empty() {
        return Ok(differences);
    }
    fs::create_dir_all(dir)?;
    let expected = generate();
    for difference in &differences {
        match difference {
            Difference::Missing(name) | Difference::Changed(name) => {
                fs::write(dir.join(name), &expected[name])?;
            }
            Difference::Stale(name) => fs::remove_file(dir.join(name))?,
        }
    }
    Ok(differences)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kebab() {
        assert_eq!(kebab_case("DeviceInfo"), "device-info");
        assert_eq!(kebab_case("RpcId"), "rpc-id");
        assert_eq!(kebab_case("JsonRpcVersion"), "json-rpc-version");
    }

    #[test]
    fn names_are_unique() {
        let files: std::collections::BTreeSet<String> =
            DOCUMENTS.iter().map(Document::file_name).collect();
        assert_eq!(files.len(), DOCUMENTS.len());
    }

    #[test]
    fn output_is_deterministic() {
        assert_eq!(generate(), generate());
        for text in generate().values() {
            assert!(text.ends_with("}\n"));
        }
    }

    #[test]
    fn documents_carry_identity() {
        let doc = DOCUMENTS
            .iter()
            .find(|d| d.name == "DeviceConnectResult")
            .map(Document::schema)
            .unwrap_or_default();
        assert_eq!(
            doc["$id"],
            "urn:devicerail:schema:protocol:v1:device-connect-result"
        );
        assert_eq!(doc["$schema"], DRAFT);
        assert_eq!(doc["title"], "DeviceConnectResult");
    }
}
