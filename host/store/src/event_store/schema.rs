//! The store's tables, their migrations from earlier versions, and the row
//! helpers reader and writer share.
//!
//! Migrations add columns, move rows into a table's newer layout or drop
//! an index; they must never drop an event or change its stored JSON.

use std::path::Path;

use devicerail_host_protocol::{
    CallId, EventSequence, SafeU64, SessionId, SessionInfo, SessionState, TestEvent,
};
use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;

pub(super) fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    // Checkpoint the log every 32 MiB rather than every 4: a checkpoint
    // copies and fsyncs pages, and fewer of them cost less per commit.
    conn.pragma_update(None, "wal_autocheckpoint", 8192)?;
    Ok(conn)
}

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    ord INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    state TEXT NOT NULL,
    started_at_ms INTEGER NOT NULL,
    ended_at_ms INTEGER,
    last_sequence INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    session_ord INTEGER NOT NULL,
    sequence INTEGER NOT NULL,
    json TEXT NOT NULL,
    min_minor INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_ord, sequence)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS session_evidence (
    session_ord INTEGER NOT NULL,
    asset_id TEXT NOT NULL,
    sha256 TEXT,
    json TEXT NOT NULL,
    PRIMARY KEY (session_ord, asset_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS session_evidence_sha ON session_evidence (sha256);
CREATE TABLE IF NOT EXISTS observations (
    session_ord INTEGER NOT NULL,
    observation_id TEXT NOT NULL,
    ui_sha256 TEXT,
    ui_omission TEXT,
    ui_bytes BLOB,
    ui_codec TEXT,
    UNIQUE (session_ord, observation_id)
);
CREATE TABLE IF NOT EXISTS blobs (
    sha256 TEXT PRIMARY KEY NOT NULL,
    media_type TEXT NOT NULL,
    bytes BLOB NOT NULL
);
";

/// Brings a store written by an earlier version up to [`SCHEMA`]: events
/// gain the protocol minor they need, and the UI snapshot index becomes
/// the index of every Observation.
pub(super) fn migrate(conn: &Connection) -> Result<(), StoreError> {
    let observations_sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'observations'",
            [],
            |r| r.get(0),
        )
        .unwrap_or_default();
    if observations_sql.contains("WITHOUT ROWID") {
        rebuild_observations_with_rowid(conn)?;
    }
    let has_ui_bytes: bool = conn
        .prepare("SELECT 1 FROM pragma_table_info('observations') WHERE name = 'ui_bytes'")?
        .exists([])?;
    if !has_ui_bytes {
        conn.execute_batch("ALTER TABLE observations ADD COLUMN ui_bytes BLOB")?;
    }
    let has_ui_codec: bool = conn
        .prepare("SELECT 1 FROM pragma_table_info('observations') WHERE name = 'ui_codec'")?
        .exists([])?;
    if !has_ui_codec {
        conn.execute_batch("ALTER TABLE observations ADD COLUMN ui_codec TEXT")?;
    }
    // Snapshots are found through their Observation; an index by digest
    // only cost every write a page.
    conn.execute_batch("DROP INDEX IF EXISTS observations_sha")?;
    let has_min_minor: bool = conn
        .prepare("SELECT 1 FROM pragma_table_info('events') WHERE name = 'min_minor'")?
        .exists([])?;
    if !has_min_minor {
        conn.execute_batch("ALTER TABLE events ADD COLUMN min_minor INTEGER NOT NULL DEFAULT 0")?;
        let rows: Vec<(i64, i64, String)> = {
            let mut stmt = conn.prepare("SELECT session_ord, sequence, json FROM events")?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                .collect::<Result<_, _>>()?
        };
        for (ord, sequence, json) in rows {
            if let Ok(event) = serde_json::from_str::<TestEvent>(&json) {
                conn.execute(
                    "UPDATE events SET min_minor = ?1 WHERE session_ord = ?2 AND sequence = ?3",
                    params![event.payload.required_minor(), ord, sequence],
                )?;
            }
        }
    }
    let legacy: bool = conn
        .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ui_snapshots'")?
        .exists([])?;
    if legacy {
        conn.execute_batch(
            "INSERT OR IGNORE INTO observations (session_ord, observation_id, ui_sha256)
                 SELECT session_ord, observation_id, sha256 FROM ui_snapshots;
             DROP TABLE ui_snapshots;",
        )?;
    }
    Ok(())
}

/// Earlier stores kept Observations in a `WITHOUT ROWID` table: fine for
/// digests, but a UI snapshot stored in the row then lives in the key's
/// b-tree, and every insert compares against (and reads) such rows. The
/// rebuilt table appends rows by rowid with a small unique key index.
fn rebuild_observations_with_rowid(conn: &Connection) -> Result<(), StoreError> {
    let has_ui_bytes: bool = conn
        .prepare("SELECT 1 FROM pragma_table_info('observations') WHERE name = 'ui_bytes'")?
        .exists([])?;
    let bytes = if has_ui_bytes { "ui_bytes" } else { "NULL" };
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE;
         CREATE TABLE observations_rebuilt (
             session_ord INTEGER NOT NULL,
             observation_id TEXT NOT NULL,
             ui_sha256 TEXT,
             ui_omission TEXT,
             ui_bytes BLOB,
             ui_codec TEXT,
             UNIQUE (session_ord, observation_id)
         );
         INSERT INTO observations_rebuilt
             (session_ord, observation_id, ui_sha256, ui_omission, ui_bytes)
             SELECT session_ord, observation_id, ui_sha256, ui_omission, {bytes}
             FROM observations;
         DROP TABLE observations;
         ALTER TABLE observations_rebuilt RENAME TO observations;
         COMMIT;"
    ))?;
    Ok(())
}

pub(super) fn seq(n: u64) -> Result<EventSequence, StoreError> {
    EventSequence::try_new(n).map_err(|e| StoreError::Storage(e.to_string()))
}

pub(super) fn parse_session_row(
    id: String,
    state: String,
    started: i64,
    ended: Option<i64>,
    last: i64,
) -> Result<SessionInfo, StoreError> {
    let id: SessionId = id
        .parse()
        .map_err(|e: uuid::Error| StoreError::Storage(e.to_string()))?;
    let state = if state == "active" {
        SessionState::Active
    } else {
        SessionState::Ended
    };
    let ms = |v: i64| SafeU64::saturating(u64::try_from(v).unwrap_or(0));
    let last = seq(u64::try_from(last).unwrap_or(0))?;
    Ok(SessionInfo {
        id,
        state,
        started_at_ms: ms(started),
        ended_at_ms: ended.map(ms),
        event_count: last,
        last_sequence: last,
    })
}

/// Actions of session `ord` started without a terminal event (read from
/// the log: used when a Session is loaded, e.g. at recovery).
pub(super) fn open_calls(c: &Connection, ord: i64) -> Result<Vec<CallId>, StoreError> {
    #[derive(serde::Deserialize)]
    struct Peek {
        payload: PeekPayload,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct PeekPayload {
        #[serde(rename = "type")]
        kind: String,
        call: Option<PeekCall>,
        call_id: Option<CallId>,
    }
    #[derive(serde::Deserialize)]
    struct PeekCall {
        id: CallId,
    }
    let mut stmt = c.prepare(
        "SELECT json FROM events WHERE session_ord = ?1
           AND (json LIKE '%\"type\":\"actionStarted\"%' OR json LIKE '%\"type\":\"actionCompleted\"%')
         ORDER BY sequence",
    )?;
    let rows = stmt.query_map([ord], |r| r.get::<_, String>(0))?;
    let mut open: Vec<CallId> = Vec::new();
    for json in rows {
        let Ok(peek) = serde_json::from_str::<Peek>(&json?) else {
            continue;
        };
        match (
            peek.payload.kind.as_str(),
            peek.payload.call,
            peek.payload.call_id,
        ) {
            ("actionStarted", Some(call), _) => open.push(call.id),
            ("actionCompleted", _, Some(id)) => open.retain(|c| *c != id),
            _ => {}
        }
    }
    Ok(open)
}

pub(super) fn session_ord(c: &Connection, id: &SessionId) -> Result<Option<i64>, StoreError> {
    Ok(c.query_row(
        "SELECT ord FROM sessions WHERE id = ?1",
        [id.to_string()],
        |r| r.get(0),
    )
    .optional()?)
}

pub(super) fn session_info(
    c: &Connection,
    id: &SessionId,
) -> Result<Option<SessionInfo>, StoreError> {
    let row: Option<(String, String, i64, Option<i64>, i64)> = c
        .query_row(
            "SELECT id, state, started_at_ms, ended_at_ms, COALESCE((SELECT MAX(sequence) FROM events WHERE session_ord = sessions.ord), 0) FROM sessions WHERE id = ?1",
            [id.to_string()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .optional()?;
    row.map(|(id, state, started, ended, last)| parse_session_row(id, state, started, ended, last))
        .transpose()
}
