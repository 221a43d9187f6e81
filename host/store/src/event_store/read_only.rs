//! A read-only view of a data directory for offline tools (`devicerail
//! report`, `devicerail bundle export`): one SQLite connection opened
//! read-only, one read transaction (a consistent snapshot while a host
//! keeps appending), and the Evidence files beside it.
//!
//! It must never write: no writer thread, no migrations, no recovery, no
//! `host.lock`. A running host is neither blocked nor disturbed by it, and
//! a store written by an older host is read as it is.

use std::path::{Path, PathBuf};

use devicerail_host_protocol::{AssetRef, SessionId, SessionInfo};
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};

use super::schema::{EventsLayout, parse_session_row, session_info, session_ord};
use super::{ObservationRow, StoreError};

/// One stored event, exactly as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawEvent {
    /// The event's sequence in its session.
    pub sequence: u64,
    /// The event's JSON, byte for byte as the host stored it.
    pub json: String,
}

/// A read-only snapshot of one data directory.
pub struct ReadOnlyStore {
    conn: Connection,
    /// How the store read keys its events (an older host's store is
    /// read as it is).
    layout: EventsLayout,
    data_dir: PathBuf,
}

impl std::fmt::Debug for ReadOnlyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadOnlyStore")
            .field("data_dir", &self.data_dir)
            .finish()
    }
}

impl ReadOnlyStore {
    /// Opens `<data_dir>/events.sqlite3` read-only and starts a read
    /// transaction: every later read sees the same committed state.
    pub fn open(data_dir: &Path) -> Result<Self, StoreError> {
        let path = data_dir.join("events.sqlite3");
        if !path.is_file() {
            return Err(StoreError::Storage(format!(
                "no event store at {} (is --data-dir right?)",
                path.display()
            )));
        }
        // Without a write-ahead log no host has the store open (a host
        // keeps its log while it runs, and a clean stop folds it into the
        // file and deletes it), so the file alone holds every committed
        // event: read it as immutable, which creates nothing beside it (a
        // plain read-only connection would leave `-wal` and `-shm` files
        // in the data directory). With a log, read through it.
        let conn = if path.with_extension("sqlite3-wal").exists() {
            Self::connect(&path, false)?
        } else {
            Self::connect(&path, true)?
        };
        let layout = EventsLayout::of(&conn)?;
        Ok(Self {
            conn,
            layout,
            data_dir: data_dir.to_path_buf(),
        })
    }

    fn connect(path: &Path, immutable: bool) -> Result<Connection, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let conn = if immutable {
            Connection::open_with_flags(format!("file:{}?immutable=1", path.display()), flags)?
        } else {
            Connection::open_with_flags(path, flags)?
        };
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch("BEGIN DEFERRED; SELECT COUNT(*) FROM sessions;")?;
        Ok(conn)
    }

    /// The data directory read.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Every session, oldest first.
    pub fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        let mut stmt = self.conn.prepare(self.layout.sessions_sql())?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
        rows.map(|r| {
            let (id, state, started, ended, last) = r?;
            parse_session_row(id, state, started, ended, last)
        })
        .collect()
    }

    /// One session.
    pub fn session(&self, id: SessionId) -> Result<Option<SessionInfo>, StoreError> {
        session_info(&self.conn, self.layout, &id)
    }

    /// Every stored event of `session`, in sequence order, as stored.
    pub fn events(&self, session: SessionId) -> Result<Vec<RawEvent>, StoreError> {
        let ord = session_ord(&self.conn, &session)?.ok_or(StoreError::NotFound(session))?;
        let mut stmt = self.conn.prepare(self.layout.events_sql())?;
        let rows = stmt.query_map([ord], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?;
        rows.map(|r| {
            let (sequence, json) = r?;
            let sequence = u64::try_from(sequence)
                .map_err(|_| StoreError::Storage(format!("negative sequence {sequence}")))?;
            Ok(RawEvent { sequence, json })
        })
        .collect()
    }

    /// The Evidence references the store records as reachable from
    /// `session`.
    pub fn session_evidence(&self, session: SessionId) -> Result<Vec<AssetRef>, StoreError> {
        let ord = session_ord(&self.conn, &session)?.ok_or(StoreError::NotFound(session))?;
        let mut stmt = self.conn.prepare(
            "SELECT json FROM session_evidence WHERE session_ord = ?1 ORDER BY asset_id",
        )?;
        let rows = stmt.query_map([ord], |r| r.get::<_, String>(0))?;
        rows.map(|r| serde_json::from_str(&r?).map_err(|e| StoreError::Storage(e.to_string())))
            .collect()
    }

    /// The stored UI snapshot row of one Observation of `session`.
    pub fn observation(
        &self,
        session: SessionId,
        observation_id: &str,
    ) -> Result<Option<ObservationRow>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT o.ui_sha256, o.ui_omission, o.ui_bytes, o.ui_codec FROM observations o JOIN sessions s ON s.ord = o.session_ord
                 WHERE s.id = ?1 AND o.observation_id = ?2",
                params![session.to_string(), observation_id],
                |r| {
                    Ok(ObservationRow {
                        ui_sha256: r.get(0)?,
                        ui_omission: r.get(1)?,
                        ui_bytes: r.get(2)?,
                        ui_codec: r.get(3)?,
                    })
                },
            )
            .optional()?)
    }

    /// The bytes of a blob: from the store's table of small blobs, else
    /// the Evidence file. `None` when neither holds it.
    pub fn blob(&self, sha256: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let stored: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT bytes FROM blobs WHERE sha256 = ?1")?
            .query_row([sha256], |r| r.get(0))
            .optional()?;
        if stored.is_some() {
            return Ok(stored);
        }
        if !crate::evidence::is_sha256_hex(sha256) {
            return Ok(None);
        }
        let path = crate::evidence::blob_path(&self.data_dir.join("evidence"), sha256);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::Storage(format!(
                "cannot read {}: {e}",
                path.display()
            ))),
        }
    }
}
