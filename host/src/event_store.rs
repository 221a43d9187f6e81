//! The durable, append-only event store (SQLite in WAL mode, fsync on
//! every commit).
//!
//! One writer thread owns the write connection and assigns sequences; it
//! drains every queued command into one transaction (group commit), so an
//! fsync is shared by all appends that arrived meanwhile. A caller gets its
//! event only after the commit is durable: an event acknowledged in a
//! response survives `kill -9` and power loss. Readers use their own
//! connections. Event JSON is stored exactly as first serialized, so
//! exports after a restart are byte-identical.
//!
//! Why SQLite (through rusqlite, bundled): decades of crash-safety testing,
//! WAL gives concurrent readers with one writer, a single inspectable file,
//! and no server. Events live on disk, not in memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use devicerail_protocol::{
    ActionOutcome, AssetRef, CallId, DeviceId, ErrorCode, EventId, EventSequence, ObservationId,
    RpcId, SafeU64, SessionId, SessionInfo, SessionOutcome, SessionState, TestEvent,
    TestEventPayload,
};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;
use tokio::sync::{oneshot, watch};

/// Largest stored event: every event must fit, with room to spare, in one
/// response frame (`events.list`, a page of `session.export`) and one
/// event-stream message.
pub const MAX_EVENT_BYTES: usize = devicerail_protocol::MAX_FRAME_BYTES - 16 * 1024;

/// How `session.end` closes Actions that have no terminal event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dangling {
    /// Recovery after the host died: `cancelled` with `host_stopped`.
    HostStopped,
    /// A shutdown that did not wait for them: `cancelled` with
    /// `action_cancelled` (`reason: shutdown`).
    Shutdown,
    /// Their terminal write failed: `failed` with `internal_error`.
    NotRecorded,
}

/// Largest number of commands folded into one commit.
const MAX_BATCH: usize = 1024;
/// Queue depth between the host and the writer thread.
const QUEUE: usize = 4096;

/// The writer of a read-only store: every command is refused.
fn refuse_writes(rx: &Receiver<Command>, why: &str) {
    while let Ok(cmd) = rx.recv() {
        Writer::placeholder(cmd)
            .fail(StoreError::ReadOnly(why.to_owned()))
            .send();
    }
}

/// Wall-clock milliseconds since the Unix epoch.
pub fn now_ms() -> SafeU64 {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    SafeU64::saturating(u64::try_from(ms).unwrap_or(u64::MAX))
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("no session {0}")]
    NotFound(SessionId),
    #[error("session {0} has ended")]
    Ended(SessionId),
    #[error("session {0} is still active")]
    Active(SessionId),
    #[error("the event store failed: {0}")]
    Storage(String),
    #[error("the event store cannot write (full disk or I/O error): {0}")]
    CannotWrite(String),
    #[error("the event store is read-only: {0}")]
    ReadOnly(String),
    #[error(
        "the event is {bytes} bytes, over the {MAX_EVENT_BYTES}-byte limit of a readable event"
    )]
    TooLarge { bytes: usize },
    #[error("the event store is shut down")]
    Closed,
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode as C;
        match e.sqlite_error_code() {
            Some(C::DiskFull | C::SystemIoFailure | C::ReadOnly | C::CannotOpen) => {
                Self::CannotWrite(e.to_string())
            }
            _ => Self::Storage(e.to_string()),
        }
    }
}

/// One fact to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub request_id: Option<RpcId>,
    pub device_id: Option<DeviceId>,
    pub payload: TestEventPayload,
    /// Evidence this event makes reachable from its session.
    pub evidence: Vec<AssetRef>,
}

impl NewEvent {
    pub fn new(payload: TestEventPayload) -> Self {
        Self {
            request_id: None,
            device_id: None,
            payload,
            evidence: Vec::new(),
        }
    }
}

/// A committed event with its stored JSON.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    pub event: TestEvent,
    pub json: Arc<str>,
}

enum Command {
    Start {
        request_id: Option<RpcId>,
        reply: oneshot::Sender<Result<(SessionInfo, StoredEvent), StoreError>>,
    },
    Append {
        session: SessionId,
        events: Vec<NewEvent>,
        reply: oneshot::Sender<Result<Vec<StoredEvent>, StoreError>>,
    },
    End {
        session: SessionId,
        outcome: SessionOutcome,
        reason: Option<String>,
        request_id: Option<RpcId>,
        dangling: Dangling,
        reply: oneshot::Sender<Result<(SessionInfo, StoredEvent), StoreError>>,
    },
    Delete {
        session: SessionId,
        reply: oneshot::Sender<Result<Vec<String>, StoreError>>,
    },
}

/// What opening the store did: sessions left active by a previous run that
/// were closed, and whether the store could only be opened read-only.
#[derive(Debug, Clone, Default)]
pub struct Recovery {
    pub closed: Vec<SessionId>,
    /// Why writes are refused, when the store started read-only.
    pub read_only: Option<String>,
}

/// Handle to the store; cheap to clone.
#[derive(Clone)]
pub struct EventStore {
    tx: SyncSender<Command>,
    readers: Arc<Mutex<Vec<Connection>>>,
    path: PathBuf,
    /// Read-only start without a write-ahead log: readers open the file
    /// as immutable.
    immutable: bool,
    watchers: Arc<Mutex<HashMap<SessionId, watch::Sender<u64>>>>,
}

fn open_connection(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.pragma_update(None, "foreign_keys", "OFF")?;
    Ok(conn)
}

const SCHEMA: &str = "
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
    PRIMARY KEY (session_ord, observation_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS observations_sha ON observations (ui_sha256);
";

/// Brings a store written by an earlier version up to [`SCHEMA`]: events
/// gain the protocol minor they need, and the UI snapshot index becomes
/// the index of every Observation.
fn migrate(conn: &Connection) -> Result<(), StoreError> {
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

/// One stored event as read back: its exact JSON and the protocol minor a
/// reader needs.
#[derive(Debug)]
pub struct EventRow {
    pub sequence: u64,
    pub min_minor: u16,
    pub json: Box<RawValue>,
}

/// What the store knows of one Observation of a Session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservationRow {
    /// The UI snapshot blob, when one was stored.
    pub ui_sha256: Option<String>,
    /// Why it has none (`driverUnsupported`, `policy`, `protectedAction`),
    /// when the Observation says so.
    pub ui_omission: Option<String>,
}

/// Observations an event records (for `ui.snapshot.get`).
fn observations_of(payload: &TestEventPayload) -> Vec<&devicerail_protocol::Observation> {
    match payload {
        TestEventPayload::ObservationCaptured { observation } => vec![observation],
        TestEventPayload::ActionCompleted {
            outcome: devicerail_protocol::ActionOutcome::Succeeded { result },
            ..
        } => [&result.before, &result.after]
            .into_iter()
            .flatten()
            .collect(),
        _ => Vec::new(),
    }
}

fn seq(n: u64) -> Result<EventSequence, StoreError> {
    EventSequence::try_new(n).map_err(|e| StoreError::Storage(e.to_string()))
}

fn parse_session_row(
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

impl EventStore {
    /// Opens `<data_dir>/events.sqlite3`, closes sessions left active by a
    /// previous run, and starts the writer thread.
    pub fn open(data_dir: &Path) -> Result<(Self, Recovery), StoreError> {
        let path = data_dir.join("events.sqlite3");
        let watchers: Arc<Mutex<HashMap<SessionId, watch::Sender<u64>>>> = Arc::default();
        let (tx, rx) = sync_channel(QUEUE);
        let (recovery, immutable) = match Self::open_writer(&path) {
            Ok((writer, recovery)) => {
                let w = watchers.clone();
                std::thread::Builder::new()
                    .name("event-store-writer".into())
                    .spawn(move || writer.run(rx, w))
                    .map_err(|e| {
                        StoreError::Storage(format!("cannot start the writer thread: {e}"))
                    })?;
                (recovery, false)
            }
            // A full disk must not cost the reads: start read-only.
            Err(StoreError::CannotWrite(why)) if path.exists() => {
                tracing::error!("the event store cannot write ({why}); serving it read-only");
                let reason = why.clone();
                std::thread::Builder::new()
                    .name("event-store-writer".into())
                    .spawn(move || refuse_writes(&rx, &reason))
                    .map_err(|e| {
                        StoreError::Storage(format!("cannot start the writer thread: {e}"))
                    })?;
                // Without a write-ahead log every committed event is in the
                // main file, and readers need not create the shared-memory
                // index (which a full disk may refuse).
                let wal = path.with_extension("sqlite3-wal");
                (
                    Recovery {
                        closed: Vec::new(),
                        read_only: Some(why),
                    },
                    !wal.exists(),
                )
            }
            Err(e) => return Err(e),
        };
        Ok((
            Self {
                tx,
                readers: Arc::default(),
                path,
                immutable,
                watchers,
            },
            recovery,
        ))
    }

    /// The write connection, migrated and recovered.
    fn open_writer(path: &Path) -> Result<(Writer, Recovery), StoreError> {
        let conn = open_connection(path)?;
        conn.execute_batch(SCHEMA)?;
        migrate(&conn)?;
        let mut writer = Writer {
            conn,
            active: HashMap::new(),
        };
        let recovery = writer.recover()?;
        Ok((writer, recovery))
    }

    /// Whether the store started read-only (writes are refused).
    pub fn is_read_only(&self) -> bool {
        self.immutable
    }

    async fn call<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<Result<T, StoreError>>) -> Command,
    ) -> Result<T, StoreError> {
        let (reply, rx) = oneshot::channel();
        let tx = self.tx.clone();
        let cmd = make(reply);
        // The queue is bounded; a full queue applies backpressure off the
        // async workers.
        match tx.try_send(cmd) {
            Ok(()) => {}
            Err(std::sync::mpsc::TrySendError::Full(cmd)) => {
                tokio::task::spawn_blocking(move || tx.send(cmd))
                    .await
                    .map_err(|_| StoreError::Closed)?
                    .map_err(|_| StoreError::Closed)?;
            }
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => return Err(StoreError::Closed),
        }
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Creates a session with its `sessionStarted` event (sequence 1).
    pub async fn start_session(
        &self,
        request_id: Option<RpcId>,
    ) -> Result<(SessionInfo, StoredEvent), StoreError> {
        self.call(|reply| Command::Start { request_id, reply })
            .await
    }

    /// Appends events to an active session, in order, durably.
    pub async fn append(
        &self,
        session: SessionId,
        events: Vec<NewEvent>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.call(|reply| Command::Append {
            session,
            events,
            reply,
        })
        .await
    }

    /// Appends one event.
    pub async fn append_one(
        &self,
        session: SessionId,
        event: NewEvent,
    ) -> Result<StoredEvent, StoreError> {
        let mut v = self.append(session, vec![event]).await?;
        v.pop().ok_or(StoreError::Closed)
    }

    /// Appends `sessionEnded` and seals the log, first closing any Action
    /// still open (its terminal could not be written, or it outlived a
    /// shutdown) as `dangling` says.
    pub async fn end_session(
        &self,
        session: SessionId,
        outcome: SessionOutcome,
        reason: Option<String>,
        request_id: Option<RpcId>,
        dangling: Dangling,
    ) -> Result<(SessionInfo, StoredEvent), StoreError> {
        self.call(|reply| Command::End {
            session,
            outcome,
            reason,
            request_id,
            dangling,
            reply,
        })
        .await
    }

    /// Deletes one ended session; returns the Evidence digests nothing
    /// references any more.
    pub async fn delete_session(&self, session: SessionId) -> Result<Vec<String>, StoreError> {
        self.call(|reply| Command::Delete { session, reply }).await
    }

    /// A receiver of the session's last committed sequence (for streams).
    pub fn watch(&self, session: SessionId, current: u64) -> watch::Receiver<u64> {
        let mut w = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
        w.entry(session)
            .or_insert_with(|| watch::channel(current).0)
            .subscribe()
    }

    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let readers = self.readers.clone();
        let path = self.path.clone();
        let immutable = self.immutable;
        tokio::task::spawn_blocking(move || {
            let conn = readers.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let conn = match conn {
                Some(c) => c,
                None => {
                    let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
                    let c = if immutable {
                        let uri = format!("file:{}?immutable=1", path.display());
                        Connection::open_with_flags(
                            uri,
                            flags | rusqlite::OpenFlags::SQLITE_OPEN_URI,
                        )?
                    } else {
                        Connection::open_with_flags(&path, flags)?
                    };
                    c.busy_timeout(std::time::Duration::from_secs(5))?;
                    c
                }
            };
            let out = f(&conn);
            readers.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
            out
        })
        .await
        .map_err(|e| StoreError::Storage(e.to_string()))?
    }

    /// Every session, oldest first.
    pub async fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.read(|c| {
            let mut stmt =
                c.prepare_cached("SELECT id, state, started_at_ms, ended_at_ms, last_sequence FROM sessions ORDER BY ord")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?;
            rows.map(|r| {
                let (id, state, started, ended, last) = r?;
                parse_session_row(id, state, started, ended, last)
            })
            .collect()
        })
        .await
    }

    /// One session.
    pub async fn session(&self, id: SessionId) -> Result<Option<SessionInfo>, StoreError> {
        self.read(move |c| session_info(c, &id)).await
    }

    /// Stored events of `session` after `after` (exclusive), at most
    /// `limit` of them.
    pub async fn events(
        &self,
        session: SessionId,
        after: u64,
        limit: Option<u64>,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.read(move |c| {
            let Some(ord) = session_ord(c, &session)? else {
                return Err(StoreError::NotFound(session));
            };
            let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
            let mut stmt = c.prepare_cached(
                "SELECT sequence, min_minor, json FROM events WHERE session_ord = ?1 AND sequence > ?2 ORDER BY sequence LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![ord, i64::try_from(after).unwrap_or(i64::MAX), limit], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?))
            })?;
            rows.map(|r| {
                let (sequence, min_minor, json) = r?;
                Ok(EventRow {
                    sequence: u64::try_from(sequence).unwrap_or(0),
                    min_minor: u16::try_from(min_minor).unwrap_or(u16::MAX),
                    json: RawValue::from_string(json).map_err(|e| StoreError::Storage(e.to_string()))?,
                })
            })
            .collect()
        })
        .await
    }

    /// The stored reference of an Evidence id reachable from `session`.
    pub async fn evidence_ref(
        &self,
        session: SessionId,
        asset_id: String,
    ) -> Result<Option<AssetRef>, StoreError> {
        self.read(move |c| {
            let json: Option<String> = c
                .query_row(
                    "SELECT e.json FROM session_evidence e JOIN sessions s ON s.ord = e.session_ord
                     WHERE s.id = ?1 AND e.asset_id = ?2",
                    params![session.to_string(), asset_id],
                    |r| r.get(0),
                )
                .optional()?;
            json.map(|j| serde_json::from_str(&j).map_err(|e| StoreError::Storage(e.to_string())))
                .transpose()
        })
        .await
    }

    /// What the store knows of Observation `observation` of `session`.
    pub async fn observation(
        &self,
        session: SessionId,
        observation: ObservationId,
    ) -> Result<Option<ObservationRow>, StoreError> {
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT o.ui_sha256, o.ui_omission FROM observations o JOIN sessions s ON s.ord = o.session_ord
                 WHERE s.id = ?1 AND o.observation_id = ?2",
                params![session.to_string(), observation.to_string()],
                |r| {
                    Ok(ObservationRow {
                        ui_sha256: r.get(0)?,
                        ui_omission: r.get(1)?,
                    })
                },
            )
            .optional()?)
        })
        .await
    }
}

/// Actions of session `ord` started without a terminal event (read from
/// the log: used when a Session is loaded, e.g. at recovery).
fn open_calls(c: &Connection, ord: i64) -> Result<Vec<CallId>, StoreError> {
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

fn session_ord(c: &Connection, id: &SessionId) -> Result<Option<i64>, StoreError> {
    Ok(c.query_row(
        "SELECT ord FROM sessions WHERE id = ?1",
        [id.to_string()],
        |r| r.get(0),
    )
    .optional()?)
}

fn session_info(c: &Connection, id: &SessionId) -> Result<Option<SessionInfo>, StoreError> {
    let row: Option<(String, String, i64, Option<i64>, i64)> = c
        .query_row(
            "SELECT id, state, started_at_ms, ended_at_ms, last_sequence FROM sessions WHERE id = ?1",
            [id.to_string()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
        )
        .optional()?;
    row.map(|(id, state, started, ended, last)| parse_session_row(id, state, started, ended, last))
        .transpose()
}

#[derive(Clone)]
struct Active {
    ord: i64,
    last: u64,
    /// Actions started and not yet completed.
    open_calls: Vec<CallId>,
}

struct Writer {
    conn: Connection,
    active: HashMap<SessionId, Active>,
}

/// A reply to send once the batch has committed.
enum Done {
    Start(
        oneshot::Sender<Result<(SessionInfo, StoredEvent), StoreError>>,
        Result<(SessionInfo, StoredEvent), StoreError>,
    ),
    Append(
        oneshot::Sender<Result<Vec<StoredEvent>, StoreError>>,
        Result<Vec<StoredEvent>, StoreError>,
    ),
    End(
        oneshot::Sender<Result<(SessionInfo, StoredEvent), StoreError>>,
        Result<(SessionInfo, StoredEvent), StoreError>,
    ),
    Delete(
        oneshot::Sender<Result<Vec<String>, StoreError>>,
        Result<Vec<String>, StoreError>,
        SessionId,
    ),
}

impl Done {
    fn fail(self, e: StoreError) -> Self {
        match self {
            Done::Start(r, _) => Done::Start(r, Err(e)),
            Done::Append(r, _) => Done::Append(r, Err(e)),
            Done::End(r, _) => Done::End(r, Err(e)),
            Done::Delete(r, _, s) => Done::Delete(r, Err(e), s),
        }
    }

    fn send(self) {
        // A caller that went away no longer needs its answer.
        match self {
            Done::Start(r, v) => drop(r.send(v)),
            Done::Append(r, v) => drop(r.send(v)),
            Done::End(r, v) => drop(r.send(v)),
            Done::Delete(r, v, _) => drop(r.send(v)),
        }
    }
}

impl Writer {
    /// Closes sessions a previous process left active.
    fn recover(&mut self) -> Result<Recovery, StoreError> {
        let ids: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT id FROM sessions WHERE state = 'active' ORDER BY ord")?;
            stmt.query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        let mut closed = Vec::new();
        for id in ids {
            let session: SessionId = id
                .parse()
                .map_err(|e: uuid::Error| StoreError::Storage(e.to_string()))?;
            self.load_active(&session)?;
            self.conn.execute_batch("BEGIN IMMEDIATE")?;
            let r = self.end(
                session,
                SessionOutcome::Shutdown,
                Some("the host stopped while this session was active; closed when the host restarted".into()),
                None,
                Dangling::HostStopped,
            );
            match r {
                Ok(_) => self.conn.execute_batch("COMMIT")?,
                Err(e) => {
                    self.conn.execute_batch("ROLLBACK")?;
                    return Err(e);
                }
            }
            self.active.remove(&session);
            tracing::warn!(session = %session, "closed a session left active by a previous run (outcome shutdown)");
            closed.push(session);
        }
        Ok(Recovery {
            closed,
            read_only: None,
        })
    }

    fn load_active(&mut self, session: &SessionId) -> Result<(), StoreError> {
        if self.active.contains_key(session) {
            return Ok(());
        }
        let row: Option<(i64, String, i64)> = self
            .conn
            .query_row(
                "SELECT ord, state, last_sequence FROM sessions WHERE id = ?1",
                [session.to_string()],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        match row {
            None => Err(StoreError::NotFound(*session)),
            Some((_, state, _)) if state != "active" => Err(StoreError::Ended(*session)),
            Some((ord, _, last)) => {
                let open_calls = open_calls(&self.conn, ord)?;
                self.active.insert(
                    *session,
                    Active {
                        ord,
                        last: u64::try_from(last).unwrap_or(0),
                        open_calls,
                    },
                );
                Ok(())
            }
        }
    }

    fn run(
        mut self,
        rx: Receiver<Command>,
        watchers: Arc<Mutex<HashMap<SessionId, watch::Sender<u64>>>>,
    ) {
        while let Ok(first) = rx.recv() {
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(c) => batch.push(c),
                    Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
                }
            }
            let done = self.apply_batch(batch);
            let mut touched: Vec<(SessionId, u64)> = Vec::new();
            for d in &done {
                match d {
                    Done::Start(_, Ok((info, _))) | Done::End(_, Ok((info, _))) => {
                        touched.push((info.id, info.last_sequence.get()));
                    }
                    Done::Append(_, Ok(events)) => {
                        if let Some(last) = events.last() {
                            touched.push((last.event.session_id, last.event.sequence.get()));
                        }
                    }
                    // u64::MAX tells streams the session is gone.
                    Done::Delete(_, Ok(_), session) => touched.push((*session, u64::MAX)),
                    _ => {}
                }
            }
            for d in done {
                d.send();
            }
            if !touched.is_empty() {
                let mut w = watchers.lock().unwrap_or_else(|p| p.into_inner());
                for (session, last) in touched {
                    if let Some(tx) = w.get(&session) {
                        tx.send_replace(last);
                    }
                    if last == u64::MAX {
                        w.remove(&session);
                    }
                }
            }
        }
        tracing::debug!("event store writer stopped");
    }

    fn apply_batch(&mut self, batch: Vec<Command>) -> Vec<Done> {
        if let Err(e) = self.conn.execute_batch("BEGIN IMMEDIATE") {
            let err = StoreError::from(e);
            return batch
                .into_iter()
                .map(|c| Self::placeholder(c).fail(err.clone()))
                .collect();
        }
        let snapshot = self.active.clone();
        let mut done = Vec::with_capacity(batch.len());
        for cmd in batch {
            let _ = self.conn.execute_batch("SAVEPOINT cmd");
            let before = self.active.clone();
            let d = self.apply(cmd);
            let failed = match &d {
                Done::Start(_, r) | Done::End(_, r) => r.is_err(),
                Done::Append(_, r) => r.is_err(),
                Done::Delete(_, r, _) => r.is_err(),
            };
            if failed {
                let _ = self.conn.execute_batch("ROLLBACK TO cmd; RELEASE cmd");
                self.active = before;
            } else {
                let _ = self.conn.execute_batch("RELEASE cmd");
            }
            done.push(d);
        }
        if let Err(e) = self.conn.execute_batch("COMMIT") {
            let _ = self.conn.execute_batch("ROLLBACK");
            self.active = snapshot;
            let err = StoreError::from(e);
            tracing::error!("event store commit failed: {err}");
            return done.into_iter().map(|d| d.fail(err.clone())).collect();
        }
        done
    }

    fn placeholder(cmd: Command) -> Done {
        match cmd {
            Command::Start { reply, .. } => Done::Start(reply, Err(StoreError::Closed)),
            Command::Append { reply, .. } => Done::Append(reply, Err(StoreError::Closed)),
            Command::End { reply, .. } => Done::End(reply, Err(StoreError::Closed)),
            Command::Delete { reply, session } => {
                Done::Delete(reply, Err(StoreError::Closed), session)
            }
        }
    }

    fn apply(&mut self, cmd: Command) -> Done {
        match cmd {
            Command::Start { request_id, reply } => Done::Start(reply, self.start(request_id)),
            Command::Append {
                session,
                events,
                reply,
            } => Done::Append(reply, self.append(session, events)),
            Command::End {
                session,
                outcome,
                reason,
                request_id,
                dangling,
                reply,
            } => {
                let r = self.end(session, outcome, reason, request_id, dangling);
                if r.is_ok() {
                    self.active.remove(&session);
                }
                Done::End(reply, r)
            }
            Command::Delete { session, reply } => {
                Done::Delete(reply, self.delete(session), session)
            }
        }
    }

    fn start(
        &mut self,
        request_id: Option<RpcId>,
    ) -> Result<(SessionInfo, StoredEvent), StoreError> {
        let id = SessionId::new_v7();
        let at = now_ms();
        self.conn.execute(
            "INSERT INTO sessions (id, state, started_at_ms, ended_at_ms, last_sequence) VALUES (?1, 'active', ?2, NULL, 0)",
            params![id.to_string(), at.get() as i64],
        )?;
        let ord = self.conn.last_insert_rowid();
        self.active.insert(
            id,
            Active {
                ord,
                last: 0,
                open_calls: Vec::new(),
            },
        );
        let mut first = NewEvent::new(TestEventPayload::SessionStarted);
        first.request_id = request_id;
        let mut stored = self.append(id, vec![first])?;
        let event = stored
            .pop()
            .ok_or_else(|| StoreError::Storage("no event".into()))?;
        let info = SessionInfo {
            id,
            state: SessionState::Active,
            started_at_ms: at,
            ended_at_ms: None,
            event_count: event.event.sequence,
            last_sequence: event.event.sequence,
        };
        Ok((info, event))
    }

    fn append(
        &mut self,
        session: SessionId,
        events: Vec<NewEvent>,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.load_active(&session)?;
        let (ord, mut last, mut open) = match self.active.get(&session) {
            Some(a) => (a.ord, a.last, a.open_calls.clone()),
            None => return Err(StoreError::NotFound(session)),
        };
        let mut out = Vec::with_capacity(events.len());
        for e in events {
            // Exactly one terminal event per started Action.
            match &e.payload {
                TestEventPayload::ActionStarted { call } => {
                    if open.contains(&call.id) {
                        return Err(StoreError::Storage(format!(
                            "action {} was already started",
                            call.id
                        )));
                    }
                    open.push(call.id);
                }
                TestEventPayload::ActionCompleted { call_id, .. } => {
                    let Some(pos) = open.iter().position(|c| c == call_id) else {
                        return Err(StoreError::Storage(format!(
                            "action {call_id} is not running in session {session}"
                        )));
                    };
                    open.swap_remove(pos);
                }
                _ => {}
            }
            last += 1;
            let event = TestEvent {
                event_id: EventId::new_v7(),
                session_id: session,
                sequence: seq(last)?,
                request_id: e.request_id,
                device_id: e.device_id,
                at_ms: now_ms(),
                payload: e.payload,
            };
            let json =
                serde_json::to_string(&event).map_err(|e| StoreError::Storage(e.to_string()))?;
            if json.len() > MAX_EVENT_BYTES {
                return Err(StoreError::TooLarge { bytes: json.len() });
            }
            self.conn
                .prepare_cached(
                    "INSERT INTO events (session_ord, sequence, json, min_minor) VALUES (?1, ?2, ?3, ?4)",
                )?
                .execute(params![ord, last as i64, json, event.payload.required_minor()])?;
            for o in observations_of(&event.payload) {
                let sha = o
                    .ui_snapshot
                    .as_ref()
                    .and_then(|u| u.evidence.sha256.clone());
                let omission = o
                    .ui_snapshot_omission
                    .and_then(|r| serde_json::to_value(r).ok())
                    .and_then(|v| v.as_str().map(str::to_owned));
                self.conn
                    .prepare_cached(
                        "INSERT OR REPLACE INTO observations (session_ord, observation_id, ui_sha256, ui_omission) VALUES (?1, ?2, ?3, ?4)",
                    )?
                    .execute(params![ord, o.id.to_string(), sha, omission])?;
            }
            for asset in &e.evidence {
                let asset_json =
                    serde_json::to_string(asset).map_err(|e| StoreError::Storage(e.to_string()))?;
                self.conn
                    .prepare_cached(
                        "INSERT OR IGNORE INTO session_evidence (session_ord, asset_id, sha256, json) VALUES (?1, ?2, ?3, ?4)",
                    )?
                    .execute(params![ord, asset.id, asset.sha256, asset_json])?;
            }
            out.push(StoredEvent {
                event,
                json: json.into(),
            });
        }
        self.conn
            .prepare_cached("UPDATE sessions SET last_sequence = ?1 WHERE ord = ?2")?
            .execute(params![last as i64, ord])?;
        if let Some(a) = self.active.get_mut(&session) {
            a.last = last;
            a.open_calls = open;
        }
        Ok(out)
    }

    /// Records a terminal event for every Action of `session` still open:
    /// nothing is sealed with a started Action left without one.
    fn close_dangling(&mut self, session: SessionId, why: Dangling) -> Result<(), StoreError> {
        self.load_active(&session)?;
        let open = self
            .active
            .get(&session)
            .map(|a| a.open_calls.clone())
            .unwrap_or_default();
        if open.is_empty() {
            return Ok(());
        }
        tracing::warn!(session = %session, actions = open.len(), ?why, "closing actions without a terminal event");
        let events = open
            .into_iter()
            .map(|call_id| {
                let details = serde_json::json!({ "callId": call_id });
                let outcome = match why {
                    Dangling::HostStopped => ActionOutcome::Cancelled {
                        error: ErrorCode::HostStopped
                            .info("the host stopped while the action was running")
                            .with_details(details),
                    },
                    Dangling::Shutdown => ActionOutcome::Cancelled {
                        error: ErrorCode::ActionCancelled
                            .info("the host shut down while the action was running")
                            .with_details(
                                serde_json::json!({ "callId": call_id, "reason": "shutdown" }),
                            ),
                    },
                    Dangling::NotRecorded => ActionOutcome::Failed {
                        error: ErrorCode::InternalError
                            .info("the action's outcome could not be recorded when it ended")
                            .with_details(serde_json::json!({ "cause": "terminalNotRecorded" })),
                    },
                };
                NewEvent::new(TestEventPayload::ActionCompleted { call_id, outcome })
            })
            .collect();
        self.append(session, events).map(|_| ())
    }

    fn end(
        &mut self,
        session: SessionId,
        outcome: SessionOutcome,
        reason: Option<String>,
        request_id: Option<RpcId>,
        dangling: Dangling,
    ) -> Result<(SessionInfo, StoredEvent), StoreError> {
        self.close_dangling(session, dangling)?;
        let mut ev = NewEvent::new(TestEventPayload::SessionEnded { outcome, reason });
        ev.request_id = request_id;
        let mut stored = self.append(session, vec![ev])?;
        let event = stored
            .pop()
            .ok_or_else(|| StoreError::Storage("no event".into()))?;
        let ended = event.event.at_ms;
        self.conn.execute(
            "UPDATE sessions SET state = 'ended', ended_at_ms = ?1 WHERE id = ?2",
            params![ended.get() as i64, session.to_string()],
        )?;
        let info = session_info(&self.conn, &session)?.ok_or(StoreError::NotFound(session))?;
        Ok((info, event))
    }

    fn delete(&mut self, session: SessionId) -> Result<Vec<String>, StoreError> {
        let row: Option<(i64, String)> = self
            .conn
            .query_row(
                "SELECT ord, state FROM sessions WHERE id = ?1",
                [session.to_string()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let Some((ord, state)) = row else {
            return Err(StoreError::NotFound(session));
        };
        if state == "active" {
            return Err(StoreError::Active(session));
        }
        let shas: Vec<String> = {
            let mut stmt = self.conn.prepare(
                "SELECT sha256 FROM session_evidence WHERE session_ord = ?1 AND sha256 IS NOT NULL
                 UNION SELECT ui_sha256 FROM observations WHERE session_ord = ?1 AND ui_sha256 IS NOT NULL",
            )?;
            stmt.query_map([ord], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        self.conn
            .execute("DELETE FROM events WHERE session_ord = ?1", [ord])?;
        self.conn
            .execute("DELETE FROM session_evidence WHERE session_ord = ?1", [ord])?;
        self.conn
            .execute("DELETE FROM observations WHERE session_ord = ?1", [ord])?;
        self.conn
            .execute("DELETE FROM sessions WHERE ord = ?1", [ord])?;
        let mut orphans = Vec::new();
        for sha in shas {
            let used: i64 = self.conn.query_row(
                "SELECT (SELECT COUNT(*) FROM session_evidence WHERE sha256 = ?1)
                      + (SELECT COUNT(*) FROM observations WHERE ui_sha256 = ?1)",
                [&sha],
                |r| r.get(0),
            )?;
            if used == 0 {
                orphans.push(sha);
            }
        }
        Ok(orphans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn sequences_are_contiguous_and_survive_reopen() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _) = EventStore::open(dir.path()).expect("open");
        let (info, first) = store.start_session(None).await.expect("start");
        assert_eq!(first.event.sequence.get(), 1);
        let mut handles = Vec::new();
        for _ in 0..50 {
            let s = store.clone();
            handles.push(tokio::spawn(async move {
                s.append_one(info.id, NewEvent::new(TestEventPayload::SessionStarted))
                    .await
            }));
        }
        let mut seqs: Vec<u64> = Vec::new();
        for h in handles {
            seqs.push(h.await.expect("join").expect("append").event.sequence.get());
        }
        seqs.sort_unstable();
        assert_eq!(seqs, (2..=51).collect::<Vec<_>>());
        let events = store.events(info.id, 0, None).await.expect("events");
        assert_eq!(events.len(), 51);
        drop(store);
        // Reopen: the active session is closed with outcome shutdown.
        let (store, recovery) = EventStore::open(dir.path()).expect("reopen");
        assert_eq!(recovery.closed, vec![info.id]);
        let info = store.session(info.id).await.expect("read").expect("exists");
        assert_eq!(info.state, SessionState::Ended);
        assert_eq!(info.last_sequence.get(), 52);
        let again = store.events(info.id, 0, None).await.expect("events");
        assert_eq!(
            again[..51].iter().map(|r| r.json.get()).collect::<Vec<_>>(),
            events.iter().map(|r| r.json.get()).collect::<Vec<_>>()
        );
    }

    fn started(call: CallId) -> NewEvent {
        NewEvent::new(TestEventPayload::ActionStarted {
            call: devicerail_protocol::RecordedActionCall {
                id: call,
                name: "tap".into(),
                arguments: serde_json::Value::Null,
                arguments_redacted: false,
            },
        })
    }

    fn completed(call: CallId) -> NewEvent {
        NewEvent::new(TestEventPayload::ActionCompleted {
            call_id: call,
            outcome: ActionOutcome::Cancelled {
                error: ErrorCode::ActionCancelled.info("x"),
            },
        })
    }

    #[tokio::test]
    async fn every_started_action_gets_exactly_one_terminal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _) = EventStore::open(dir.path()).expect("open");
        let (info, _) = store.start_session(None).await.expect("start");
        let (a, b) = (CallId::new_v4(), CallId::new_v4());
        store.append_one(info.id, started(a)).await.expect("a");
        store.append_one(info.id, started(b)).await.expect("b");
        store
            .append_one(info.id, completed(a))
            .await
            .expect("a ends");
        // A second terminal, or one for an Action never started, is refused.
        assert!(store.append_one(info.id, completed(a)).await.is_err());
        assert!(
            store
                .append_one(info.id, completed(CallId::new_v4()))
                .await
                .is_err()
        );
        // Ending closes b, whose terminal never came.
        store
            .end_session(
                info.id,
                SessionOutcome::Completed,
                None,
                None,
                Dangling::NotRecorded,
            )
            .await
            .expect("end");
        let events = store.events(info.id, 0, None).await.expect("events");
        let kinds: Vec<TestEvent> = events
            .iter()
            .map(|r| serde_json::from_str(r.json.get()).expect("event"))
            .collect();
        let last_two: Vec<&str> = kinds[kinds.len() - 2..]
            .iter()
            .map(|e| e.payload.kind())
            .collect();
        assert_eq!(last_two, ["actionCompleted", "sessionEnded"]);
        match &kinds[kinds.len() - 2].payload {
            TestEventPayload::ActionCompleted { call_id, outcome } => {
                assert_eq!(*call_id, b);
                assert!(matches!(outcome, ActionOutcome::Failed { .. }));
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn recovery_closes_actions_left_running() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _) = EventStore::open(dir.path()).expect("open");
        let (info, _) = store.start_session(None).await.expect("start");
        let a = CallId::new_v4();
        store.append_one(info.id, started(a)).await.expect("a");
        drop(store);
        let (store, recovery) = EventStore::open(dir.path()).expect("reopen");
        assert_eq!(recovery.closed, vec![info.id]);
        let events = store.events(info.id, 0, None).await.expect("events");
        let terminal: TestEvent = serde_json::from_str(events[2].json.get()).expect("event");
        match terminal.payload {
            TestEventPayload::ActionCompleted {
                call_id,
                outcome: ActionOutcome::Cancelled { error },
            } => {
                assert_eq!(call_id, a);
                assert_eq!(error.code, "host_stopped");
            }
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn events_too_large_to_read_back_are_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _) = EventStore::open(dir.path()).expect("open");
        let (info, _) = store.start_session(None).await.expect("start");
        let mut big = started(CallId::new_v4());
        if let TestEventPayload::ActionStarted { call } = &mut big.payload {
            call.arguments = serde_json::json!({ "text": "x".repeat(MAX_EVENT_BYTES) });
        }
        assert!(matches!(
            store.append_one(info.id, big).await,
            Err(StoreError::TooLarge { .. })
        ));
        // Nothing was recorded; the session goes on.
        store
            .append_one(info.id, started(CallId::new_v4()))
            .await
            .expect("a small one");
        assert_eq!(
            store.events(info.id, 0, None).await.expect("events").len(),
            2
        );
    }

    #[tokio::test]
    async fn ended_sessions_refuse_appends_and_can_be_deleted() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _) = EventStore::open(dir.path()).expect("open");
        let (info, _) = store.start_session(None).await.expect("start");
        assert!(matches!(
            store.delete_session(info.id).await,
            Err(StoreError::Active(_))
        ));
        store
            .end_session(
                info.id,
                SessionOutcome::Completed,
                None,
                None,
                Dangling::NotRecorded,
            )
            .await
            .expect("end");
        let r = store
            .append_one(info.id, NewEvent::new(TestEventPayload::SessionStarted))
            .await;
        assert!(matches!(r, Err(StoreError::Ended(_))));
        store.delete_session(info.id).await.expect("delete");
        assert!(store.session(info.id).await.expect("read").is_none());
    }
}
