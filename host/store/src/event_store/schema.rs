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

/// Where an event sits in the `events` table: its session's `ord` in the
/// high bits, its sequence in the low [`SEQUENCE_BITS`]. One integer key
/// keeps an event in its table's leaf page: under a two-column key in a
/// `WITHOUT ROWID` table, an event of more than about 1,000 bytes (an
/// Observation's is 1,300) spilled into an overflow page of its own, and
/// every commit wrote that page and the file's header page besides.
pub(super) const SEQUENCE_BITS: u32 = 32;

/// The largest sequence a session can hold (4,294,967,295 events).
pub(super) const MAX_SEQUENCE: u64 = (1 << SEQUENCE_BITS) - 1;

/// The key of event `sequence` of the session numbered `ord`; a typed
/// error past the sequences or sessions a store can number.
pub(super) fn event_key(ord: i64, sequence: u64) -> Result<i64, StoreError> {
    if !(0..1 << 31).contains(&ord) {
        return Err(StoreError::Storage(format!(
            "the store cannot number session {ord}: it holds at most 2^31 sessions"
        )));
    }
    if sequence > MAX_SEQUENCE {
        return Err(StoreError::Storage(format!(
            "a session holds at most {MAX_SEQUENCE} events"
        )));
    }
    // In range: ord < 2^31 and sequence < 2^32, so the key is below 2^63.
    Ok((ord << SEQUENCE_BITS) | sequence as i64)
}

/// The first and last keys the session numbered `ord` can hold.
pub(super) fn session_keys(ord: i64) -> Result<(i64, i64), StoreError> {
    Ok((event_key(ord, 0)?, event_key(ord, MAX_SEQUENCE)?))
}

/// The sequence an event key holds.
pub(super) fn key_sequence(key: i64) -> u64 {
    (key as u64) & MAX_SEQUENCE
}

/// An SQL expression: the last sequence of the row of `sessions` in scope
/// (0 for a session with no events), read from the end of its key range.
macro_rules! last_sequence_sql {
    () => {
        "COALESCE((SELECT pos FROM events WHERE pos BETWEEN sessions.ord << 32 AND (sessions.ord << 32) + 4294967295 ORDER BY pos DESC LIMIT 1) - (sessions.ord << 32), 0)"
    };
}
pub(super) use last_sequence_sql;

/// [`last_sequence_sql`] for a store keyed by `(session_ord, sequence)`
/// ([`EventsLayout::ByColumns`]).
macro_rules! by_columns_last_sequence_sql {
    () => {
        "COALESCE((SELECT MAX(sequence) FROM events WHERE session_ord = sessions.ord), 0)"
    };
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
    pos INTEGER PRIMARY KEY,
    json TEXT NOT NULL,
    min_minor INTEGER NOT NULL DEFAULT 0
);
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
    if EventsLayout::of(conn)? == EventsLayout::ByColumns {
        rebuild_events_keyed(conn)?;
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

/// How a store keys its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EventsLayout {
    /// One integer key per event ([`event_key`]): this version's.
    Keyed,
    /// `(session_ord, sequence)` in a `WITHOUT ROWID` table: stores
    /// written before the single key, read as they are by read-only tools.
    ByColumns,
}

impl EventsLayout {
    /// The layout of the store open on `conn`.
    pub(super) fn of(conn: &Connection) -> Result<Self, StoreError> {
        let by_columns = conn
            .prepare("SELECT 1 FROM pragma_table_info('events') WHERE name = 'session_ord'")?
            .exists([])?;
        Ok(if by_columns {
            Self::ByColumns
        } else {
            Self::Keyed
        })
    }

    /// `SELECT` of every session's row, oldest first, for
    /// [`parse_session_row`].
    pub(super) fn sessions_sql(self) -> &'static str {
        match self {
            Self::Keyed => concat!(
                "SELECT id, state, started_at_ms, ended_at_ms, ",
                last_sequence_sql!(),
                " FROM sessions ORDER BY ord"
            ),
            Self::ByColumns => concat!(
                "SELECT id, state, started_at_ms, ended_at_ms, ",
                by_columns_last_sequence_sql!(),
                " FROM sessions ORDER BY ord"
            ),
        }
    }

    /// `SELECT` of one session's row (`?1` its id), for
    /// [`parse_session_row`].
    fn session_sql(self) -> &'static str {
        match self {
            Self::Keyed => concat!(
                "SELECT id, state, started_at_ms, ended_at_ms, ",
                last_sequence_sql!(),
                " FROM sessions WHERE id = ?1"
            ),
            Self::ByColumns => concat!(
                "SELECT id, state, started_at_ms, ended_at_ms, ",
                by_columns_last_sequence_sql!(),
                " FROM sessions WHERE id = ?1"
            ),
        }
    }

    /// `SELECT sequence, json` of every event of the session numbered
    /// `?1`, in sequence order.
    pub(super) fn events_sql(self) -> &'static str {
        match self {
            Self::Keyed => {
                "SELECT pos & 4294967295, json FROM events WHERE pos BETWEEN ?1 << 32 AND (?1 << 32) + 4294967295 ORDER BY pos"
            }
            Self::ByColumns => {
                "SELECT sequence, json FROM events WHERE session_ord = ?1 ORDER BY sequence"
            }
        }
    }
}

/// Moves the events of a store keyed by `(session_ord, sequence)` into the
/// single-key table, every event's JSON and protocol minor unchanged.
fn rebuild_events_keyed(conn: &Connection) -> Result<(), StoreError> {
    let out_of_range: bool = conn
        .prepare(
            "SELECT 1 FROM events WHERE session_ord NOT BETWEEN 0 AND 2147483647
                 OR sequence NOT BETWEEN 0 AND 4294967295 LIMIT 1",
        )?
        .exists([])?;
    if out_of_range {
        return Err(StoreError::Storage(
            "the store holds an event this version cannot key (session or sequence out of range)"
                .into(),
        ));
    }
    conn.execute_batch(
        "BEGIN IMMEDIATE;
         CREATE TABLE events_keyed (
             pos INTEGER PRIMARY KEY,
             json TEXT NOT NULL,
             min_minor INTEGER NOT NULL DEFAULT 0
         );
         INSERT INTO events_keyed (pos, json, min_minor)
             SELECT (session_ord << 32) | sequence, json, min_minor FROM events
             ORDER BY session_ord, sequence;
         DROP TABLE events;
         ALTER TABLE events_keyed RENAME TO events;
         COMMIT;",
    )?;
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
        "SELECT json FROM events WHERE pos BETWEEN ?1 AND ?2
           AND (json LIKE '%\"type\":\"actionStarted\"%' OR json LIKE '%\"type\":\"actionCompleted\"%')
         ORDER BY pos",
    )?;
    let (first, last) = session_keys(ord)?;
    let rows = stmt.query_map([first, last], |r| r.get::<_, String>(0))?;
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
    layout: EventsLayout,
    id: &SessionId,
) -> Result<Option<SessionInfo>, StoreError> {
    let row: Option<(String, String, i64, Option<i64>, i64)> = c
        .query_row(layout.session_sql(), [id.to_string()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .optional()?;
    row.map(|(id, state, started, ended, last)| parse_session_row(id, state, started, ended, last))
        .transpose()
}
