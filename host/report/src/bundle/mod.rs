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
//! first ([`open`], [`validate`]): contiguous sequences, every digest, every reference.
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

pub(crate) use refs::asset_refs;
pub(crate) use validate::read;
pub use validate::validate;

/// `manifest.json`'s `format`.
pub(crate) const FORMAT: &str = "devicerail-session-bundle";
/// The bundle layout this host writes and reads.
pub(crate) const FORMAT_VERSION: u32 = 1;
/// Path of the manifest in the archive.
pub(crate) const MANIFEST_PATH: &str = "manifest.json";
/// Path of the events in the archive.
pub(crate) const EVENTS_PATH: &str = "events.ndjson";
/// Directory of the blobs in the archive.
pub(crate) const BLOBS_DIR: &str = "blobs/sha256/";
/// Largest entry a bundle may hold (a bundle is read into memory).
pub(crate) const MAX_ENTRY_BYTES: u64 = 512 * 1024 * 1024;

/// Why a bundle could not be written, read or trusted. Each variant names
/// one exact reason; `bundle validate` prints it and exits non-zero.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// Reading the store failed (no store in the data directory, or a
    /// query or row failed).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The store has no session with the id asked for.
    #[error("no session {0} in the store")]
    NoSuchSession(SessionId),
    /// `--last` was asked for, but the store holds no session.
    #[error("the store holds no session")]
    NoSessions,
    /// A file could not be opened, read or written.
    #[error("{what} {path}: {source}")]
    Io {
        /// What was being done (`cannot open`, `cannot write`).
        what: &'static str,
        /// The file concerned.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// An event references Evidence the store has no bytes for.
    #[error("event {sequence} references {sha256}, whose bytes are not in the store")]
    EvidenceMissingInStore {
        /// The referencing event's sequence (0: the session's Evidence
        /// list rather than one event).
        sequence: u64,
        /// The missing blob's digest.
        sha256: String,
    },
    /// Stored Evidence bytes no longer match their digest.
    #[error("the stored bytes of {sha256} hash to {actual}: the store is corrupt")]
    EvidenceCorruptInStore {
        /// The digest the blob is stored under.
        sha256: String,
        /// The digest of the bytes actually stored.
        actual: String,
    },
    /// A UI snapshot stored with its Observation cannot be decoded.
    #[error("the stored UI snapshot {sha256} cannot be unpacked: {reason}")]
    SnapshotUnreadable {
        /// The snapshot's digest.
        sha256: String,
        /// Why it cannot be decoded (unknown codec, corrupt bytes).
        reason: String,
    },
    /// A stored event's JSON contains a newline, so it cannot be one line
    /// of `events.ndjson`.
    #[error("stored event {sequence} spans several lines")]
    MultilineEvent {
        /// The event's sequence.
        sequence: u64,
    },
    /// The file is not a tar archive, or an entry cannot be read.
    #[error("not a readable tar archive: {0}")]
    NotAnArchive(String),
    /// An entry's path is absolute, empty, or has `.`, `..` or empty
    /// components.
    #[error("entry {0:?} has an unsafe path")]
    UnsafePath(String),
    /// An entry is a link, directory or device rather than a regular file.
    #[error("entry {0:?} is not a regular file")]
    NotAFile(String),
    /// Two entries have the same path.
    #[error("entry {0:?} appears twice")]
    DuplicateEntry(String),
    /// An entry is larger than a bundle entry may be (512 MiB); it is not
    /// read.
    #[error("entry {path:?} is {size} bytes, over the {MAX_ENTRY_BYTES}-byte limit")]
    EntryTooLarge {
        /// The entry's path in the archive.
        path: String,
        /// Its size in bytes, as its header says.
        size: u64,
    },
    /// An entry is neither the manifest, the events nor a blob.
    #[error("entry {0:?} is not part of the bundle layout")]
    UnexpectedEntry(String),
    /// The archive has no `manifest.json`.
    #[error("the bundle has no {MANIFEST_PATH}")]
    MissingManifest,
    /// `manifest.json` does not parse, or names a wrong events path or a
    /// blob name that is not a digest.
    #[error("{MANIFEST_PATH} is invalid: {0}")]
    InvalidManifest(String),
    /// The manifest's format or version is not the one this host reads.
    #[error(
        "unsupported bundle format {format:?} version {version} (this host reads {FORMAT:?} {FORMAT_VERSION})"
    )]
    UnsupportedFormat {
        /// The manifest's `format`.
        format: String,
        /// The manifest's `formatVersion`.
        version: u32,
    },
    /// The archive has no `events.ndjson`.
    #[error("the bundle has no {EVENTS_PATH}")]
    MissingEvents,
    /// An event is not a valid protocol event (or the first one is not
    /// `sessionStarted`).
    #[error("{EVENTS_PATH} line {line} is not a valid event: {reason}")]
    InvalidEvent {
        /// The 1-based line (0: the file is not UTF-8; for an event read
        /// from the store, its sequence).
        line: usize,
        /// Why it is not valid.
        reason: String,
    },
    /// An event belongs to another session than the manifest's.
    #[error("event {sequence} belongs to session {found}, not {expected}")]
    WrongSession {
        /// The event's sequence.
        sequence: u64,
        /// The session the event names.
        found: String,
        /// The manifest's session.
        expected: String,
    },
    /// A sequence was skipped.
    #[error("sequences are not contiguous: event {after} is followed by {next} (gap)")]
    SequenceGap {
        /// The last sequence before the gap.
        after: u64,
        /// The sequence that follows it.
        next: u64,
    },
    /// A sequence repeats or goes backwards.
    #[error("sequences are not contiguous: expected {expected}, found {found}")]
    SequenceOutOfOrder {
        /// The sequence that should come next.
        expected: u64,
        /// The sequence found instead.
        found: u64,
    },
    /// The manifest's event count differs from the events present.
    #[error("the manifest lists {manifest} events, {EVENTS_PATH} holds {found}")]
    EventCountMismatch {
        /// The count the manifest gives.
        manifest: u64,
        /// The events actually present.
        found: u64,
    },
    /// `events.ndjson` does not match the manifest's digest.
    #[error("{EVENTS_PATH} hashes to {actual}, the manifest says {expected}")]
    EventsDigestMismatch {
        /// The digest the manifest gives.
        expected: String,
        /// The digest of the file's bytes.
        actual: String,
    },
    /// The manifest lists a blob the archive does not hold.
    #[error("blob {sha256} is listed in the manifest but missing from the archive")]
    MissingBlob {
        /// The listed blob's digest.
        sha256: String,
    },
    /// The archive holds a blob the manifest does not list.
    #[error("blob {sha256} is not listed in the manifest")]
    UnlistedBlob {
        /// The name of the unlisted blob's entry.
        sha256: String,
    },
    /// A blob's bytes do not hash to its name.
    #[error("blob {sha256} does not match its digest: its bytes hash to {actual}")]
    BlobDigestMismatch {
        /// The blob's name (its claimed digest).
        sha256: String,
        /// The digest of its bytes.
        actual: String,
    },
    /// A blob's size differs from the manifest's.
    #[error("blob {sha256} is {actual} bytes, the manifest says {expected}")]
    BlobSizeMismatch {
        /// The blob's digest.
        sha256: String,
        /// The size the manifest gives, in bytes.
        expected: u64,
        /// The entry's size, in bytes.
        actual: u64,
    },
    /// An event references an asset the bundle does not hold (or whose id
    /// is not `sha256:<digest>`).
    #[error("event {sequence} references {asset}, which the bundle does not hold")]
    UnresolvedReference {
        /// The referencing event's sequence.
        sequence: u64,
        /// The asset id it names.
        asset: String,
    },
    /// An Action's result names an element of an Observation no event up
    /// to it recorded.
    #[error(
        "event {sequence} names element {node} of observation {observation}, which no event up to it recorded"
    )]
    UnresolvedObservation {
        /// The event's sequence.
        sequence: u64,
        /// The Observation id it names.
        observation: String,
        /// The element's `stableNodeId`.
        node: String,
    },
    /// An `actionCompleted` event completes a call no earlier
    /// `actionStarted` started.
    #[error("event {sequence} completes call {call_id}, which no earlier event started")]
    UnknownCall {
        /// The completing event's sequence.
        sequence: u64,
        /// The call id it names.
        call_id: String,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> BundleError {
    let path = path.to_path_buf();
    move |source| BundleError::Io { what, path, source }
}

/// One blob with its media type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlobEntry {
    /// The MIME type the referencing events (or the manifest) give it.
    pub media_type: String,
    /// The blob's original bytes (UI snapshots decompressed).
    pub bytes: Vec<u8>,
}

/// One Session: its summary, its events as stored and every blob they
/// reference (UI snapshots as their original bytes), by SHA-256.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionData {
    /// The Session's summary (state, outcome, last sequence).
    pub session: SessionInfo,
    /// Its events in sequence order, each as stored.
    pub events: Vec<RawEvent>,
    /// Every referenced blob, by lower-case hex SHA-256.
    pub blobs: BTreeMap<String, BlobEntry>,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Manifest {
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
pub(crate) struct EventsManifest {
    pub path: String,
    pub count: u64,
    pub sha256: String,
}

/// The manifest's record of one blob (at `blobs/sha256/<sha256>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct BlobManifest {
    pub sha256: String,
    pub media_type: String,
    pub size: u64,
}

/// Resolves `--last` or an id to a session of the store.
pub(crate) fn pick_session(
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
pub(crate) enum Missing {
    /// Refuse (a bundle must be complete).
    Fail,
    /// Leave it out with a warning (a report shows what there is).
    Skip,
}

/// Reads one Session and every blob its events reference from the store.
pub(crate) fn load_from_store(
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
pub(crate) fn manifest_of(data: &SessionData) -> Manifest {
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
pub(crate) fn write_bundle(data: &SessionData, out: impl Write) -> Result<(), std::io::Error> {
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
    /// The exported Session's summary.
    pub session: SessionInfo,
    /// Events written.
    pub events: usize,
    /// Blobs written.
    pub blobs: usize,
    /// Size of the bundle file, in bytes.
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

/// Reads a bundle file into memory (at most 512 MiB per entry) and
/// validates it completely before returning what it holds.
pub fn open(path: &Path) -> Result<SessionData, BundleError> {
    let file = std::fs::File::open(path).map_err(io("cannot open", path))?;
    read(std::io::BufReader::new(file))
}
