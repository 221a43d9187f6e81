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
//!
//! `writer` owns the write connection and its thread; `reader` holds
//! the read queries (each on a pooled read-only connection off the async
//! workers); `read_only` the snapshot offline tools (`report`, `bundle`)
//! read without a writer or the host's lock ([`ReadOnlyStore`]); `schema`
//! the tables,
//! migrations and row helpers.

mod read_only;
mod reader;
mod schema;
mod writer;

pub use read_only::{RawEvent, ReadOnlyStore};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use devicerail_host_protocol::{
    AssetRef, DeviceId, RpcId, SafeU64, SessionId, SessionInfo, SessionOutcome, TestEvent,
    TestEventPayload,
};
use rusqlite::Connection;
use serde_json::value::RawValue;
use tokio::sync::{oneshot, watch};

use writer::{Command, Writer, refuse_writes};

/// Largest stored event: every event must fit, with room to spare, in one
/// response frame (`events.list`, a page of `session.export`) and one
/// event-stream message.
pub const MAX_EVENT_BYTES: usize = devicerail_host_protocol::MAX_FRAME_BYTES - 16 * 1024;

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

/// Queue depth between the host and the writer thread.
const QUEUE: usize = 4096;

/// Wall-clock milliseconds since the Unix epoch.
pub fn now_ms() -> SafeU64 {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    SafeU64::saturating(u64::try_from(ms).unwrap_or(u64::MAX))
}

/// Why a store operation failed; nothing was written when it did.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The store has no session with this id (never created, or deleted).
    #[error("no session {0}")]
    NotFound(SessionId),
    /// The session is sealed by its `sessionEnded` event: no more appends.
    #[error("session {0} has ended")]
    Ended(SessionId),
    /// The session is still active, so it cannot be deleted yet.
    #[error("session {0} is still active")]
    Active(SessionId),
    /// SQLite or a stored row failed in a way no caller can fix (corrupt
    /// row, failed query, thread start); the text says what.
    #[error("the event store failed: {0}")]
    Storage(String),
    /// A write hit a full disk or an I/O error; the store goes on serving
    /// reads.
    #[error("the event store cannot write (full disk or I/O error): {0}")]
    CannotWrite(String),
    /// The store started read-only (it could not write at start), so every
    /// write is refused; the text says why.
    #[error("the event store is read-only: {0}")]
    ReadOnly(String),
    /// The serialized event would exceed [`MAX_EVENT_BYTES`] and could not
    /// be read back in one frame, so it is refused unrecorded.
    #[error(
        "the event is {bytes} bytes, over the {MAX_EVENT_BYTES}-byte limit of a readable event"
    )]
    TooLarge {
        /// The size of the event's JSON, in bytes.
        bytes: usize,
    },
    /// The writer thread is gone (the store is shutting down).
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
    /// The JSON-RPC request that caused the event, when one did.
    pub request_id: Option<RpcId>,
    /// The device the event is about, when it is about one.
    pub device_id: Option<DeviceId>,
    /// What happened; the store adds the session, sequence and time.
    pub payload: TestEventPayload,
    /// Evidence this event makes reachable from its session.
    pub evidence: Vec<AssetRef>,
    /// Evidence bytes to store in the same transaction (small blobs).
    pub blobs: Vec<crate::evidence::Blob>,
}

impl NewEvent {
    /// An event with `payload` only: no request, device, Evidence or blobs.
    pub fn new(payload: TestEventPayload) -> Self {
        Self {
            request_id: None,
            device_id: None,
            payload,
            evidence: Vec::new(),
            blobs: Vec::new(),
        }
    }
}

/// A committed event with its stored JSON.
#[derive(Debug, Clone)]
pub struct StoredEvent {
    /// The event as committed, with its session, sequence and time.
    pub event: TestEvent,
    /// The event's JSON exactly as stored (and as every later read returns
    /// it).
    pub json: Arc<str>,
}

/// What opening the store did: sessions left active by a previous run that
/// were closed, and whether the store could only be opened read-only.
#[derive(Debug, Clone, Default)]
pub struct Recovery {
    /// Sessions a previous run left active, now ended with outcome
    /// `shutdown`.
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
    /// Set by [`EventStore::close`]: no reader opens a connection again.
    closed: Arc<std::sync::atomic::AtomicBool>,
}

/// One stored event as read back: its exact JSON and the protocol minor a
/// reader needs.
#[derive(Debug)]
pub struct EventRow {
    /// The event's sequence in its session (1 is `sessionStarted`).
    pub sequence: u64,
    /// The lowest protocol minor version whose clients may be sent this
    /// event (older ones do not know its kind).
    pub min_minor: u16,
    /// The event's JSON exactly as stored.
    pub json: Box<RawValue>,
}

/// The commit that made an [`EventStore::append_one_then`] event durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Commit {
    /// Commands the commit answered, this one included (1: alone). Their
    /// answers are handed over one after the other, so a caller can tell
    /// whether others follow at once.
    pub commands: usize,
}

type Then = Box<dyn FnOnce(Result<StoredEvent, StoreError>, Commit) + Send>;

/// An [`EventStore::append_one_then`] continuation; one dropped unrun
/// (the command was never applied) runs with [`StoreError::Closed`].
pub(crate) struct OnCommit(Option<Then>);

impl OnCommit {
    fn run(mut self, r: Result<StoredEvent, StoreError>, commit: Commit) {
        if let Some(then) = self.0.take() {
            then(r, commit);
        }
    }
}

impl Drop for OnCommit {
    fn drop(&mut self) {
        if let Some(then) = self.0.take() {
            then(Err(StoreError::Closed), Commit { commands: 1 });
        }
    }
}

/// What the store knows of one Observation of a Session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservationRow {
    /// The UI snapshot blob, when one was stored.
    pub ui_sha256: Option<String>,
    /// Why it has none (`driverUnsupported`, `policy`, `protectedAction`),
    /// when the Observation says so.
    pub ui_omission: Option<String>,
    /// The snapshot's bytes, when they were stored with the Observation
    /// (larger ones are Evidence files), as stored: see `ui_codec`.
    pub ui_bytes: Option<Vec<u8>>,
    /// How `ui_bytes` is encoded ([`crate::snapshot_codec`]).
    pub ui_codec: Option<String>,
}

impl EventStore {
    /// Opens `<data_dir>/events.sqlite3`, closes sessions left active by a
    /// previous run, and starts the writer thread.
    pub fn open(data_dir: &Path) -> Result<(Self, Recovery), StoreError> {
        let path = data_dir.join("events.sqlite3");
        // Owner-only whatever the umask: SQLite creates the write-ahead log
        // and its index with the database file's mode.
        for (file, create) in [
            ("events.sqlite3", true),
            ("events.sqlite3-wal", false),
            ("events.sqlite3-shm", false),
        ] {
            let p = data_dir.join(file);
            let made = if create && !p.exists() {
                crate::private_file::create_private(&p).map(drop)
            } else {
                crate::private_file::tighten(&p).map(drop)
            };
            if let Err(e) = made {
                tracing::warn!(file = %p.display(), "cannot make the file private: {e}");
            }
        }
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
                closed: Arc::default(),
            },
            recovery,
        ))
    }

    /// The write connection, migrated and recovered.
    fn open_writer(path: &Path) -> Result<(Writer, Recovery), StoreError> {
        let conn = schema::open_connection(path)?;
        conn.execute_batch(schema::SCHEMA)?;
        schema::migrate(&conn)?;
        let mut writer = Writer::new(conn);
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
        self.queue(make(reply)).await?;
        rx.await.map_err(|_| StoreError::Closed)?
    }

    /// Hands `cmd` to the writer thread. The queue is bounded; a full
    /// queue applies backpressure off the async workers. A command that
    /// cannot be queued is dropped (its reply answers `Closed`).
    async fn queue(&self, cmd: Command) -> Result<(), StoreError> {
        let tx = self.tx.clone();
        match tx.try_send(cmd) {
            Ok(()) => Ok(()),
            Err(std::sync::mpsc::TrySendError::Full(cmd)) => {
                tokio::task::spawn_blocking(move || tx.send(cmd))
                    .await
                    .map_err(|_| StoreError::Closed)?
                    .map_err(|_| StoreError::Closed)
            }
            Err(std::sync::mpsc::TrySendError::Disconnected(_)) => Err(StoreError::Closed),
        }
    }

    /// Closes the store at a clean stop: the pooled readers first, then
    /// the writer once it has committed what is queued. The last
    /// connection to close folds the write-ahead log into the file and
    /// deletes it, so offline readers find the file alone and create
    /// nothing beside it. Later calls through any handle answer
    /// [`StoreError::Closed`].
    pub async fn close(&self) {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.readers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let (reply, rx) = oneshot::channel();
        let tx = self.tx.clone();
        let sent = tokio::task::spawn_blocking(move || tx.send(Command::Close { reply })).await;
        if matches!(sent, Ok(Ok(()))) {
            let _ = rx.await;
        }
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
            reply: writer::AppendReply::Channel(reply),
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

    /// Appends one event and hands how it ended to `then`, on the store's
    /// writer thread, as soon as its commit is durable (or has failed):
    /// for an answer known before the commit, which can then reach its
    /// client without first waking the caller's thread. Returns once the
    /// event is queued. `then` runs exactly once, with
    /// [`StoreError::Closed`] if the store stops first; it runs on the
    /// writer thread, so it must never block (or every commit waits).
    pub async fn append_one_then(
        &self,
        session: SessionId,
        event: NewEvent,
        then: impl FnOnce(Result<StoredEvent, StoreError>, Commit) + Send + 'static,
    ) {
        let cmd = Command::Append {
            session,
            events: vec![event],
            reply: writer::AppendReply::Then(OnCommit(Some(Box::new(then)))),
        };
        // A command that cannot be queued is dropped, which runs `then`.
        let _ = self.queue(cmd).await;
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_protocol::{ActionOutcome, CallId, ErrorCode, SessionState};

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

    #[tokio::test]
    async fn an_append_then_runs_once_after_its_commit_and_once_when_the_store_is_gone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _) = EventStore::open(dir.path()).expect("open");
        let (info, _) = store.start_session(None).await.expect("start");
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for _ in 0..20 {
            let tx = tx.clone();
            let reader = store.clone();
            store
                .append_one_then(
                    info.id,
                    NewEvent::new(TestEventPayload::SessionStarted),
                    move |r, commit| {
                        // Durable when handed over: a fresh reader sees it.
                        let seq = r.expect("appended").event.sequence.get();
                        let seen = reader.path.clone();
                        let conn = rusqlite::Connection::open(seen).expect("read");
                        let last: i64 = conn
                            .query_row("SELECT count(*) FROM events", [], |row| row.get(0))
                            .expect("count");
                        tx.send((seq, last, commit.commands)).expect("send");
                    },
                )
                .await;
        }
        drop(tx);
        let mut seqs = Vec::new();
        while let Some((seq, last, commands)) = rx.recv().await {
            assert!(
                last >= i64::try_from(seq).expect("small"),
                "{seq} is committed"
            );
            assert!((1..=20).contains(&commands));
            seqs.push(seq);
        }
        assert_eq!(
            seqs,
            (2..=21).collect::<Vec<_>>(),
            "each ran once, in order"
        );

        store.close().await;
        let (tx, rx) = tokio::sync::oneshot::channel();
        store
            .append_one_then(
                info.id,
                NewEvent::new(TestEventPayload::SessionStarted),
                move |r, _| drop(tx.send(r.map(|e| e.event.sequence.get()))),
            )
            .await;
        assert!(matches!(rx.await, Ok(Err(StoreError::Closed))));
    }

    /// Runs `sql` on the store file in `dir`, as an earlier version or a
    /// tool beside the host would.
    fn run_sql(dir: &Path, sql: &str) {
        rusqlite::Connection::open(dir.join("events.sqlite3"))
            .expect("open the store file")
            .execute_batch(sql)
            .expect("sql");
    }

    /// The `CREATE` statement the store file in `dir` holds for `table`.
    fn table_sql(dir: &Path, table: &str) -> String {
        rusqlite::Connection::open(dir.join("events.sqlite3"))
            .expect("open the store file")
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .expect("table")
    }

    #[tokio::test]
    async fn observations_of_an_earlier_layout_are_rebuilt_with_rowids() {
        let dir = tempfile::tempdir().expect("tempdir");
        run_sql(
            dir.path(),
            "CREATE TABLE observations (
                     session_ord INTEGER NOT NULL,
                     observation_id TEXT NOT NULL,
                     ui_sha256 TEXT,
                     ui_omission TEXT,
                     PRIMARY KEY (session_ord, observation_id)
                 ) WITHOUT ROWID;
                 INSERT INTO observations VALUES (1, 'obs-1', 'abc', NULL);",
        );
        let (store, _) = EventStore::open(dir.path()).expect("open");
        drop(store);
        let sql = table_sql(dir.path(), "observations");
        assert!(!sql.contains("WITHOUT ROWID"), "{sql}");
        let conn = rusqlite::Connection::open(dir.path().join("events.sqlite3")).expect("read");
        let row: (String, Option<Vec<u8>>) = conn
            .query_row(
                "SELECT ui_sha256, ui_bytes FROM observations WHERE observation_id = 'obs-1'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("row kept");
        assert_eq!(row, ("abc".to_owned(), None));
    }

    #[tokio::test]
    async fn events_of_an_earlier_layout_are_read_as_they_are_then_rekeyed() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (store, _) = EventStore::open(dir.path()).expect("open");
        let (a, _) = store.start_session(None).await.expect("a");
        let (b, _) = store.start_session(None).await.expect("b");
        for _ in 0..3 {
            store
                .append_one(a.id, started(CallId::new_v4()))
                .await
                .expect("append a");
        }
        store
            .append_one(b.id, started(CallId::new_v4()))
            .await
            .expect("append b");
        let json = |rows: Vec<EventRow>| -> Vec<(u64, String)> {
            rows.into_iter()
                .map(|r| (r.sequence, r.json.get().to_owned()))
                .collect()
        };
        let a_events = json(store.events(a.id, 0, None).await.expect("a events"));
        let b_events = json(store.events(b.id, 0, None).await.expect("b events"));
        assert_eq!(a_events.len(), 4);
        assert_eq!(b_events.len(), 2);
        assert!(
            store
                .events(a.id, u64::MAX, None)
                .await
                .expect("past the end")
                .is_empty()
        );
        store.close().await;
        drop(store);
        // Write the store back into the layout of earlier versions:
        // `(session_ord, sequence)` in a `WITHOUT ROWID` table.
        run_sql(
            dir.path(),
            "CREATE TABLE events_old (
                     session_ord INTEGER NOT NULL,
                     sequence INTEGER NOT NULL,
                     json TEXT NOT NULL,
                     min_minor INTEGER NOT NULL DEFAULT 0,
                     PRIMARY KEY (session_ord, sequence)
                 ) WITHOUT ROWID;
                 INSERT INTO events_old SELECT pos >> 32, pos & 4294967295, json, min_minor FROM events;
                 DROP TABLE events;
                 ALTER TABLE events_old RENAME TO events;
                 PRAGMA wal_checkpoint(TRUNCATE);",
        );
        // A read-only tool reads it as it is, and changes nothing.
        let old = ReadOnlyStore::open(dir.path()).expect("read-only");
        let raw = |s: SessionId| -> Vec<(u64, String)> {
            old.events(s)
                .expect("events")
                .into_iter()
                .map(|r| (r.sequence, r.json))
                .collect()
        };
        assert_eq!(raw(a.id), a_events);
        assert_eq!(raw(b.id), b_events);
        let listed: Vec<u64> = old
            .sessions()
            .expect("sessions")
            .iter()
            .map(|s| s.last_sequence.get())
            .collect();
        assert_eq!(listed, vec![4, 2]);
        assert_eq!(
            old.session(a.id)
                .expect("a")
                .expect("a")
                .last_sequence
                .get(),
            4
        );
        drop(old);
        assert!(table_sql(dir.path(), "events").contains("WITHOUT ROWID"));
        // A host rekeys it: every event kept, byte for byte, and the
        // sequences go on where they stopped (recovery closes both
        // sessions, their open Actions first).
        let (store, recovery) = EventStore::open(dir.path()).expect("migrate");
        let sql = table_sql(dir.path(), "events");
        assert!(sql.contains("pos INTEGER PRIMARY KEY"), "{sql}");
        assert_eq!(recovery.closed.len(), 2);
        let a_now = json(store.events(a.id, 0, None).await.expect("a"));
        assert_eq!(a_now[..4], a_events[..]);
        assert_eq!(
            a_now.iter().map(|(s, _)| *s).collect::<Vec<_>>(),
            (1..=8).collect::<Vec<_>>()
        );
        let b_now = json(store.events(b.id, 1, None).await.expect("b"));
        assert_eq!(b_now[..1], b_events[1..]);
        assert_eq!(b_now.len(), 3);
        let listed: Vec<u64> = store
            .sessions()
            .await
            .expect("sessions")
            .iter()
            .map(|s| s.last_sequence.get())
            .collect();
        assert_eq!(listed, vec![8, 4]);
    }

    fn started(call: CallId) -> NewEvent {
        NewEvent::new(TestEventPayload::ActionStarted {
            call: devicerail_host_protocol::RecordedActionCall {
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
