//! The write side: one thread owns the write connection, assigns
//! sequences and folds every queued command into one transaction (group
//! commit); a reply is sent (or an append's continuation run, on this
//! thread) only after the commit is durable.
//!
//! It must never acknowledge an event before its commit, hand out a
//! sequence twice, or rewrite an event once committed.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};

use devicerail_host_protocol::{
    ActionOutcome, CallId, ErrorCode, EventId, RpcId, SafeU64, SessionId, SessionInfo,
    SessionOutcome, SessionState, TestEvent, TestEventPayload,
};
use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::{oneshot, watch};

use super::schema::{
    EventsLayout, event_key, last_sequence_sql, open_calls, seq, session_info, session_keys,
};
use super::{
    Commit, Dangling, MAX_EVENT_BYTES, NewEvent, OnCommit, Recovery, StoreError, StoredEvent,
    now_ms,
};

/// Largest number of commands folded into one commit.
const MAX_BATCH: usize = 1024;
/// Blob digests the writer remembers as stored.
const KNOWN_BLOBS: usize = 65_536;

pub(super) enum Command {
    Start {
        request_id: Option<RpcId>,
        reply: oneshot::Sender<Result<(SessionInfo, StoredEvent), StoreError>>,
    },
    Append {
        session: SessionId,
        events: Vec<NewEvent>,
        reply: AppendReply,
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
    /// Stop after what is queued and close the connection (answered once
    /// it is closed; later commands find the store closed).
    Close { reply: oneshot::Sender<()> },
}

/// Who hears how an append ended.
pub(super) enum AppendReply {
    /// A caller awaiting the answer.
    Channel(oneshot::Sender<Result<Vec<StoredEvent>, StoreError>>),
    /// A function run on this thread once the commit is durable.
    Then(OnCommit),
}

impl AppendReply {
    fn send(self, r: Result<Vec<StoredEvent>, StoreError>, commit: Commit) {
        match self {
            // A caller that went away no longer needs its answer.
            Self::Channel(tx) => drop(tx.send(r)),
            Self::Then(then) => then.run(
                r.and_then(|mut v| v.pop().ok_or(StoreError::Closed)),
                commit,
            ),
        }
    }
}

/// The writer of a read-only store: every command is refused.
pub(super) fn refuse_writes(rx: &Receiver<Command>, why: &str) {
    while let Ok(cmd) = rx.recv() {
        if let Command::Close { reply } = cmd {
            let _ = reply.send(());
            return;
        }
        Writer::placeholder(cmd)
            .fail(StoreError::ReadOnly(why.to_owned()))
            .send(Commit { commands: 1 });
    }
}

/// Observations an event records (for `ui.snapshot.get`).
fn observations_of(payload: &TestEventPayload) -> Vec<&devicerail_host_protocol::Observation> {
    match payload {
        TestEventPayload::ObservationCaptured { observation } => vec![observation],
        TestEventPayload::ActionCompleted {
            outcome: devicerail_host_protocol::ActionOutcome::Succeeded { result },
            ..
        } => [&result.before, &result.after]
            .into_iter()
            .flatten()
            .collect(),
        _ => Vec::new(),
    }
}

#[derive(Clone)]
struct Active {
    ord: i64,
    last: u64,
    /// Actions started and not yet completed.
    open_calls: Vec<CallId>,
}

pub(super) struct Writer {
    conn: Connection,
    active: HashMap<SessionId, Active>,
    /// Blobs known to be stored (a cache: a miss only costs an insert that
    /// is ignored).
    known_blobs: HashSet<String>,
}

/// A reply to send once the batch has committed.
enum Done {
    Start(
        oneshot::Sender<Result<(SessionInfo, StoredEvent), StoreError>>,
        Result<(SessionInfo, StoredEvent), StoreError>,
    ),
    Append(AppendReply, Result<Vec<StoredEvent>, StoreError>),
    End(
        oneshot::Sender<Result<(SessionInfo, StoredEvent), StoreError>>,
        Result<(SessionInfo, StoredEvent), StoreError>,
    ),
    Delete(
        oneshot::Sender<Result<Vec<String>, StoreError>>,
        Result<Vec<String>, StoreError>,
        SessionId,
    ),
    /// A close request, answered after the connection closed.
    Close(oneshot::Sender<()>),
}

impl Done {
    fn fail(self, e: StoreError) -> Self {
        match self {
            Done::Start(r, _) => Done::Start(r, Err(e)),
            Done::Append(r, _) => Done::Append(r, Err(e)),
            Done::End(r, _) => Done::End(r, Err(e)),
            Done::Delete(r, _, s) => Done::Delete(r, Err(e), s),
            Done::Close(r) => Done::Close(r),
        }
    }

    fn send(self, commit: Commit) {
        // A caller that went away no longer needs its answer.
        match self {
            Done::Start(r, v) => drop(r.send(v)),
            Done::Append(r, v) => r.send(v, commit),
            Done::End(r, v) => drop(r.send(v)),
            Done::Delete(r, v, _) => drop(r.send(v)),
            Done::Close(r) => drop(r.send(())),
        }
    }
}

impl Writer {
    /// Runs one statement through the statement cache (these run for
    /// every command: parsing them each time costs more than they do).
    fn exec(&self, sql: &str) -> rusqlite::Result<usize> {
        self.conn.prepare_cached(sql)?.execute([])
    }

    /// A writer over the (migrated) write connection.
    pub(super) fn new(conn: Connection) -> Self {
        Self {
            conn,
            active: HashMap::new(),
            known_blobs: HashSet::new(),
        }
    }

    /// Closes sessions a previous process left active.
    pub(super) fn recover(&mut self) -> Result<Recovery, StoreError> {
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
                concat!(
                    "SELECT ord, state, ",
                    last_sequence_sql!(),
                    " FROM sessions WHERE id = ?1"
                ),
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

    pub(super) fn run(
        mut self,
        rx: Receiver<Command>,
        watchers: Arc<Mutex<HashMap<SessionId, watch::Sender<u64>>>>,
    ) {
        let mut closing = Vec::new();
        while let Ok(first) = rx.recv() {
            let mut batch = Vec::with_capacity(1);
            let mut next = Some(first);
            while let Some(c) = next.take() {
                match c {
                    Command::Close { reply } => closing.push(reply),
                    c => batch.push(c),
                }
                if batch.len() < MAX_BATCH {
                    next = rx.try_recv().ok();
                }
            }
            if batch.is_empty() && !closing.is_empty() {
                break;
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
            let commit = Commit {
                commands: done.len(),
            };
            for d in done {
                d.send(commit);
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
            if !closing.is_empty() {
                break;
            }
        }
        // Closing the last connection folds the write-ahead log into the
        // file and deletes it (the store's readers closed theirs first).
        if let Err((_, e)) = self.conn.close() {
            tracing::warn!("closing the event store: {e}");
        }
        for reply in closing {
            let _ = reply.send(());
        }
        tracing::debug!("event store writer stopped");
    }

    fn apply_batch(&mut self, batch: Vec<Command>) -> Vec<Done> {
        if let Err(e) = self.exec("BEGIN IMMEDIATE") {
            let err = StoreError::from(e);
            return batch
                .into_iter()
                .map(|c| Self::placeholder(c).fail(err.clone()))
                .collect();
        }
        let snapshot = self.active.clone();
        let mut done = Vec::with_capacity(batch.len());
        for cmd in batch {
            let _ = self.exec("SAVEPOINT cmd");
            let before = self.active.clone();
            let d = self.apply(cmd);
            let failed = match &d {
                Done::Start(_, r) | Done::End(_, r) => r.is_err(),
                Done::Append(_, r) => r.is_err(),
                Done::Delete(_, r, _) => r.is_err(),
                Done::Close(_) => false,
            };
            if failed {
                let _ = self.exec("ROLLBACK TO cmd");
                let _ = self.exec("RELEASE cmd");
                self.active = before;
            } else {
                let _ = self.exec("RELEASE cmd");
            }
            done.push(d);
        }
        if let Err(e) = self.exec("COMMIT") {
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
            Command::Close { reply } => Done::Close(reply),
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
            // Taken out of every batch before it is applied (`run`).
            Command::Close { reply } => Done::Close(reply),
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
        // One time for the Session's start: its row, every SessionInfo
        // and its `sessionStarted` event carry the same `at`.
        let mut stored = self.append_at(id, vec![first], Some(at))?;
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
        self.append_at(session, events, None)
    }

    /// Appends `events`, each stamped `at` when given, else with the clock
    /// as it is written.
    fn append_at(
        &mut self,
        session: SessionId,
        events: Vec<NewEvent>,
        at: Option<SafeU64>,
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
            // The Evidence this event references, in the same transaction.
            for blob in &e.blobs {
                if blob.observation.is_some() || self.known_blobs.contains(&blob.sha256) {
                    continue;
                }
                self.conn
                    .prepare_cached(
                        "INSERT OR IGNORE INTO blobs (sha256, media_type, bytes) VALUES (?1, ?2, ?3)",
                    )?
                    .execute(params![blob.sha256, blob.media_type, &blob.bytes[..]])?;
                if self.known_blobs.len() >= KNOWN_BLOBS {
                    self.known_blobs.clear();
                }
                self.known_blobs.insert(blob.sha256.clone());
            }
            last += 1;
            let event = TestEvent {
                event_id: EventId::new_v7(),
                session_id: session,
                sequence: seq(last)?,
                request_id: e.request_id,
                device_id: e.device_id,
                at_ms: at.unwrap_or_else(now_ms),
                payload: e.payload,
            };
            let json =
                serde_json::to_string(&event).map_err(|e| StoreError::Storage(e.to_string()))?;
            if json.len() > MAX_EVENT_BYTES {
                return Err(StoreError::TooLarge { bytes: json.len() });
            }
            self.conn
                .prepare_cached("INSERT INTO events (pos, json, min_minor) VALUES (?1, ?2, ?3)")?
                .execute(params![
                    event_key(ord, last)?,
                    json,
                    event.payload.required_minor()
                ])?;
            let mut snapshots = Vec::new();
            for o in observations_of(&event.payload) {
                let sha = o
                    .ui_snapshot
                    .as_ref()
                    .and_then(|u| u.evidence.sha256.clone());
                let omission = o
                    .ui_snapshot_omission
                    .and_then(|r| serde_json::to_value(r).ok())
                    .and_then(|v| v.as_str().map(str::to_owned));
                // The snapshot's bytes live in its Observation's row.
                let blob = e.blobs.iter().find(|b| b.observation == Some(o.id));
                let (bytes, codec) = match blob {
                    Some(b) => match &b.packed {
                        Some(packed) => (Some(&packed[..]), Some(crate::snapshot_codec::LZ4)),
                        None => (Some(&b.bytes[..]), None),
                    },
                    None => (None, None),
                };
                if let Some(sha) = &sha {
                    snapshots.push(sha.clone());
                }
                self.conn
                    .prepare_cached(
                        "INSERT OR REPLACE INTO observations (session_ord, observation_id, ui_sha256, ui_omission, ui_bytes, ui_codec) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    )?
                    .execute(params![ord, o.id.to_string(), sha, omission, bytes, codec])?;
            }
            for asset in &e.evidence {
                // UI snapshots are reachable through their Observation.
                if asset.sha256.as_ref().is_some_and(|s| snapshots.contains(s)) {
                    continue;
                }
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
        // (`sessions.last_sequence` is written when the Session ends; an
        // active Session's is its highest event.)
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
            concat!(
                "UPDATE sessions SET state = 'ended', ended_at_ms = ?1, last_sequence = ",
                last_sequence_sql!(),
                " WHERE id = ?2"
            ),
            params![ended.get() as i64, session.to_string()],
        )?;
        let info = session_info(&self.conn, EventsLayout::Keyed, &session)?
            .ok_or(StoreError::NotFound(session))?;
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
        // Screenshots and other shared Evidence may be cited by other
        // Sessions; UI snapshots name their Observation, so theirs are this
        // Session's alone (inline bytes go with the rows; large ones are
        // files to remove).
        let shared: Vec<String> = {
            let mut stmt = self.conn.prepare(
                "SELECT sha256 FROM session_evidence WHERE session_ord = ?1 AND sha256 IS NOT NULL",
            )?;
            stmt.query_map([ord], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        let snapshot_files: Vec<String> = {
            let mut stmt = self.conn.prepare(
                "SELECT ui_sha256 FROM observations WHERE session_ord = ?1 AND ui_sha256 IS NOT NULL AND ui_bytes IS NULL",
            )?;
            stmt.query_map([ord], |r| r.get(0))?
                .collect::<Result<_, _>>()?
        };
        let (first, last) = session_keys(ord)?;
        self.conn.execute(
            "DELETE FROM events WHERE pos BETWEEN ?1 AND ?2",
            [first, last],
        )?;
        self.conn
            .execute("DELETE FROM session_evidence WHERE session_ord = ?1", [ord])?;
        self.conn
            .execute("DELETE FROM observations WHERE session_ord = ?1", [ord])?;
        self.conn
            .execute("DELETE FROM sessions WHERE ord = ?1", [ord])?;
        let mut orphans = snapshot_files;
        for sha in shared {
            let used: i64 = self.conn.query_row(
                "SELECT COUNT(*) FROM session_evidence WHERE sha256 = ?1",
                [&sha],
                |r| r.get(0),
            )?;
            if used == 0 {
                self.conn
                    .prepare_cached("DELETE FROM blobs WHERE sha256 = ?1")?
                    .execute([&sha])?;
                self.known_blobs.remove(&sha);
                orphans.push(sha);
            }
        }
        Ok(orphans)
    }
}
