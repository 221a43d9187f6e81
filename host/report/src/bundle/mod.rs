//! Portable session bundles: `devicerail bundle export|validate`.
//!
//! A bundle is one uncompressed tar archive:
//!
//! ```text
//! manifest.json              format, version, the session, every file with its digest
//! events.ndjson              the events exactly as stored, one per line, in sequence order
//! blobs/sha256/<64 hex>      every blob an event references, named by its SHA-256
//! ```
//!
//! Why tar (the `tar` crate, without its `xattr` feature): the format every
//! platform and CI artifact store already opens, a small pure-Rust crate
//! that cargo itself uses, streaming on both sides, and nothing to gain
//! from compression here (screenshots are PNG, snapshots are small next to
//! them). Entries carry fixed metadata (mode 0644, owner 0, the session's
//! start time), so exporting the same Session twice gives the same bytes.
//!
//! [`SessionData`] is what both a bundle and the store yield, so a report
//! renders the same from either. Reading a bundle validates it completely
//! first ([`read`]): contiguous sequences, every digest, every reference.
//!
//! What this module must never do: write to the event store or take the
//! host's lock (it reads through [`ReadOnlyStore`]), change an event's
//! stored text, add anything a protected Action's redaction removed, or
//! trust a path or size read from an archive.

mod refs;
mod validate;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use devicerail_host_protocol::{SessionId, SessionInfo, UI_TREE_MEDIA_TYPE};
use serde::{Deserialize, Serialize};

use devicerail_host_store::event_store::{RawEvent, ReadOnlyStore, StoreError};
use devicerail_host_store::evidence::sha256_hex;

pub use refs::{AssetUse, asset_refs};
pub use validate::{read, validate};

/// `manifest.json`'s `format`.
pub const FORMAT: &str = "devicerail-session-bundle";
/// The bundle layout this host writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Path of the manifest in the archive.
pub const MANIFEST_PATH: &str = "manifest.json";
/// Path of the events in the archive.
pub const EVENTS_PATH: &str = "events.ndjson";
/// Directory of the blobs in the archive.
pub const BLOBS_DIR: &str = "blobs/sha256/";
/// Largest entry a bundle may hold (a bundle is read into memory).
pub const MAX_ENTRY_BYTES: u64 = 512 * 1024 * 1024;

/// Why a bundle could not be written, read or trusted. Each variant names
/// one exact reason; `bundle validate` prints it and exits non-zero.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no session {0} in the store")]
    NoSuchSession(SessionId),
    #[error("the store holds no session")]
    NoSessions,
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("event {sequence} references {sha256}, whose bytes are not in the store")]
    EvidenceMissingInStore { sequence: u64, sha256: String },
    #[error("the stored bytes of {sha256} hash to {actual}: the store is corrupt")]
    EvidenceCorruptInStore { sha256: String, actual: String },
    #[error("the stored UI snapshot {sha256} cannot be unpacked: {reason}")]
    SnapshotUnreadable { sha256: String, reason: String },
    #[error("stored event {sequence} spans several lines")]
    MultilineEvent { sequence: u64 },
    #[error("not a readable tar archive: {0}")]
    NotAnArchive(String),
    #[error("entry {0:?} has an unsafe path")]
    UnsafePath(String),
    #[error("entry {0:?} is not a regular file")]
    NotAFile(String),
    #[error("entry {0:?} appears twice")]
    DuplicateEntry(String),
    #[error("entry {path:?} is {size} bytes, over the {MAX_ENTRY_BYTES}-byte limit")]
    EntryTooLarge { path: String, size: u64 },
    #[error("entry {0:?} is not part of the bundle layout")]
    UnexpectedEntry(String),
    #[error("the bundle has no {MANIFEST_PATH}")]
    MissingManifest,
    #[error("{MANIFEST_PATH} is invalid: {0}")]
    InvalidManifest(String),
    #[error(
        "unsupported bundle format {format:?} version {version} (this host reads {FORMAT:?} {FORMAT_VERSION})"
    )]
    UnsupportedFormat { format: String, version: u32 },
    #[error("the bundle has no {EVENTS_PATH}")]
    MissingEvents,
    #[error("{EVENTS_PATH} line {line} is not a valid event: {reason}")]
    InvalidEvent { line: usize, reason: String },
    #[error("event {sequence} belongs to session {found}, not {expected}")]
    WrongSession {
        sequence: u64,
        found: String,
        expected: String,
    },
    #[error("sequences are not contiguous: event {after} is followed by {next} (gap)")]
    SequenceGap { after: u64, next: u64 },
    #[error("sequences are not contiguous: expected {expected}, found {found}")]
    SequenceOutOfOrder { expected: u64, found: u64 },
    #[error("the manifest lists {manifest} events, {EVENTS_PATH} holds {found}")]
    EventCountMismatch { manifest: u64, found: u64 },
    #[error("{EVENTS_PATH} hashes to {actual}, the manifest says {expected}")]
    EventsDigestMismatch { expected: String, actual: String },
    #[error("blob {sha256} is listed in the manifest but missing from the archive")]
    MissingBlob { sha256: String },
    #[error("blob {sha256} is not listed in the manifest")]
    UnlistedBlob { sha256: String },
    #[error("blob {sha256} does not match its digest: its bytes hash to {actual}")]
    BlobDigestMismatch { sha256: String, actual: String },
    #[error("blob {sha256} is {actual} bytes, the manifest says {expected}")]
    BlobSizeMismatch {
        sha256: String,
        expected: u64,
        actual: u64,
    },
    #[error("event {sequence} references {asset}, which the bundle does not hold")]
    UnresolvedReference { sequence: u64, asset: String },
    #[error(
        "event {sequence} names element {node} of observation {observation}, which no event up to it recorded"
    )]
    UnresolvedObservation {
        sequence: u64,
        observation: String,
        node: String,
    },
    #[error("event {sequence} completes call {call_id}, which no earlier event started")]
    UnknownCall { sequence: u64, call_id: String },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BundleError {
    let path = path.to_path_buf();
    move |source| BundleError::Io { what, path, source }
}

/// One blob with its media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobEntry {
    pub media_type: String,
    pub bytes: Vec<u8>,
}

/// One Session: its summary, its events as stored and every blob they
/// reference (UI snapshots as their original bytes), by SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionData {
    pub session: SessionInfo,
    pub events: Vec<RawEvent>,
    pub blobs: BTreeMap<String, BlobEntry>,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Manifest {
    pub format: String,
    pub format_version: u32,
    /// The program that wrote the bundle.
    pub producer: String,
    pub session: SessionInfo,
    pub events: EventsManifest,
    pub blobs: Vec<BlobManifest>,
}

/// The manifest's record of `events.ndjson`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventsManifest {
    pub path: String,
    pub count: u64,
    pub sha256: String,
}

/// The manifest's record of one blob (at `blobs/sha256/<sha256>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BlobManifest {
    pub sha256: String,
    pub media_type: String,
    pub size: u64,
}

/// Resolves `--last` or an id to a session of the store.
pub fn pick_session(
    store: &ReadOnlyStore,
    id: Option<SessionId>,
) -> Result<SessionInfo, BundleError> {
    match id {
        Some(id) => store.session(id)?.ok_or(BundleError::NoSuchSession(id)),
        None => store.sessions()?.pop().ok_or(BundleError::NoSessions),
    }
}

/// What to do with a blob the store cannot give back intact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Refuse (a bundle must be complete).
    Fail,
    /// Leave it out with a warning (a report shows what there is).
    Skip,
}

/// Reads one Session and every blob its events reference from the store.
pub fn load_from_store(
    store: &ReadOnlyStore,
    session: &SessionInfo,
    missing: Missing,
) -> Result<SessionData, BundleError> {
    let events = store.events(session.id)?;
    // The summary is the snapshot's: a running session may have grown
    // since `session` was read.
    let session = store
        .session(session.id)?
        .ok_or(BundleError::NoSuchSession(session.id))?;
    let mut blobs = BTreeMap::new();
    let mut wanted: Vec<(u64, String, String, Option<String>)> = Vec::new();
    for event in &events {
        if event.json.contains('\n') {
            return Err(BundleError::MultilineEvent {
                sequence: event.sequence,
            });
        }
        let value: serde_json::Value =
            serde_json::from_str(&event.json).map_err(|e| BundleError::InvalidEvent {
                line: usize::try_from(event.sequence).unwrap_or(usize::MAX),
                reason: e.to_string(),
            })?;
        for u in asset_refs(&value) {
            wanted.push((event.sequence, u.sha256, u.media_type, u.observation_id));
        }
    }
    for asset in store.session_evidence(session.id)? {
        if let Some(sha) = asset.sha256 {
            wanted.push((0, sha, asset.media_type, None));
        }
    }
    for (sequence, sha, media_type, observation) in wanted {
        if blobs.contains_key(&sha) {
            continue;
        }
        let found = stored_bytes(store, session.id, &sha, &media_type, observation.as_deref())
            .and_then(|bytes| {
                let bytes = bytes.ok_or_else(|| BundleError::EvidenceMissingInStore {
                    sequence,
                    sha256: sha.clone(),
                })?;
                let actual = sha256_hex(&bytes);
                if actual != sha {
                    return Err(BundleError::EvidenceCorruptInStore {
                        sha256: sha.clone(),
                        actual,
                    });
                }
                Ok(bytes)
            });
        match (found, missing) {
            (Ok(bytes), _) => {
                blobs.insert(sha, BlobEntry { media_type, bytes });
            }
            (Err(e @ BundleError::Store(_)), _) | (Err(e), Missing::Fail) => return Err(e),
            (Err(e), Missing::Skip) => tracing::warn!("left out of the report: {e}"),
        }
    }
    Ok(SessionData {
        session,
        events,
        blobs,
    })
}

/// The original bytes of blob `sha`: a UI snapshot kept with its
/// Observation (maybe LZ4-packed), else a stored blob or Evidence file.
fn stored_bytes(
    store: &ReadOnlyStore,
    session: SessionId,
    sha: &str,
    media_type: &str,
    observation: Option<&str>,
) -> Result<Option<Vec<u8>>, BundleError> {
    if media_type == UI_TREE_MEDIA_TYPE
        && let Some(obs) = observation
        && let Some(row) = store.observation(session, obs)?
        && row.ui_sha256.as_deref() == Some(sha)
        && let Some(stored) = row.ui_bytes
    {
        return devicerail_host_store::snapshot_codec::decompress(stored, row.ui_codec.as_deref())
            .map(Some)
            .map_err(|e| BundleError::SnapshotUnreadable {
                sha256: sha.to_owned(),
                reason: e.to_string(),
            });
    }
    Ok(store.blob(sha)?)
}

/// The `events.ndjson` text of `events`.
fn events_text(events: &[RawEvent]) -> String {
    let mut text = String::with_capacity(events.iter().map(|e| e.json.len() + 1).sum());
    for e in events {
        text.push_str(&e.json);
        text.push('\n');
    }
    text
}

/// The manifest of `data`.
pub fn manifest_of(data: &SessionData) -> Manifest {
    Manifest {
        format: FORMAT.to_owned(),
        format_version: FORMAT_VERSION,
        producer: concat!("devicerail ", env!("CARGO_PKG_VERSION")).to_owned(),
        session: data.session.clone(),
        events: EventsManifest {
            path: EVENTS_PATH.to_owned(),
            count: data.events.len() as u64,
            sha256: sha256_hex(events_text(&data.events).as_bytes()),
        },
        blobs: data
            .blobs
            .iter()
            .map(|(sha, b)| BlobManifest {
                sha256: sha.clone(),
                media_type: b.media_type.clone(),
                size: b.bytes.len() as u64,
            })
            .collect(),
    }
}

/// Writes `data` as a bundle to `out`.
pub fn write_bundle(data: &SessionData, out: impl Write) -> Result<(), std::io::Error> {
    let mtime = data.session.started_at_ms.get() / 1000;
    let mut builder = tar::Builder::new(out);
    let mut append = |path: &str, bytes: &[u8]| -> std::io::Result<()> {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(mtime);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, path, bytes)
    };
    let manifest = serde_json::to_vec_pretty(&manifest_of(data)).map_err(std::io::Error::other)?;
    append(MANIFEST_PATH, &manifest)?;
    append(EVENTS_PATH, events_text(&data.events).as_bytes())?;
    for (sha, blob) in &data.blobs {
        append(&format!("{BLOBS_DIR}{sha}"), &blob.bytes)?;
    }
    builder.into_inner()?.flush()
}

/// What `bundle export` wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    pub session: SessionInfo,
    pub events: usize,
    pub blobs: usize,
    pub bytes: u64,
}

/// `bundle export`: reads one Session from the data directory (read-only)
/// and writes it to `out` (owner-only permissions, atomically).
pub fn export(
    data_dir: &Path,
    session: Option<SessionId>,
    out: &Path,
) -> Result<Exported, BundleError> {
    let store = ReadOnlyStore::open(data_dir)?;
    let info = pick_session(&store, session)?;
    let data = load_from_store(&store, &info, Missing::Fail)?;
    drop(store);
    let bytes = devicerail_host_store::private_file::write_with(out, |f| write_bundle(&data, f))
        .map_err(io("cannot write", out))?;
    tracing::info!(session = %data.session.id, events = data.events.len(), blobs = data.blobs.len(), bytes, "bundle written");
    Ok(Exported {
        session: data.session,
        events: data.events.len(),
        blobs: data.blobs.len(),
        bytes,
    })
}

/// Reads a bundle file into memory (bounded by [`MAX_ENTRY_BYTES`] per
/// entry) and validates it; see [`read`].
pub fn open(path: &Path) -> Result<SessionData, BundleError> {
    let file = std::fs::File::open(path).map_err(io("cannot open", path))?;
    read(std::io::BufReader::new(file))
}
