//! The read side: every query runs on a pooled read-only connection on
//! the blocking pool, never on the writer thread and never on an async
//! worker.

use devicerail_host_protocol::{AssetRef, ObservationId, SessionId, SessionInfo};
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use super::schema::{
    EventsLayout, MAX_SEQUENCE, event_key, key_sequence, parse_session_row, session_info,
    session_keys, session_ord,
};
use super::{EventRow, EventStore, ObservationRow, StoreError};

impl EventStore {
    async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let readers = self.readers.clone();
        let path = self.path.clone();
        let immutable = self.immutable;
        let closed = self.closed.clone();
        tokio::task::spawn_blocking(move || {
            if closed.load(std::sync::atomic::Ordering::Acquire) {
                return Err(StoreError::Closed);
            }
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
            if !closed.load(std::sync::atomic::Ordering::Acquire) {
                readers.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
            }
            out
        })
        .await
        .map_err(|e| StoreError::Storage(e.to_string()))?
    }

    /// Every session, oldest first.
    pub async fn sessions(&self) -> Result<Vec<SessionInfo>, StoreError> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(EventsLayout::Keyed.sessions_sql())?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?;
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
        self.read(move |c| session_info(c, EventsLayout::Keyed, &id))
            .await
    }

    /// Stored events of `session` after `after` (exclusive), at most
    /// `limit` of them.
    pub async fn events(
        &self,
        session: SessionId,
        after: u64,
        limit: Option<u64>,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.events_within(session, after, limit, usize::MAX).await
    }

    /// Like [`Self::events`], but the page also stops before its events'
    /// JSON (with one separator byte each) would pass `max_bytes`; the
    /// first event is always returned, whatever its size, so a caller can
    /// tell "one event cannot fit" from "the page is full".
    pub async fn events_within(
        &self,
        session: SessionId,
        after: u64,
        limit: Option<u64>,
        max_bytes: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.read(move |c| {
            let Some(ord) = session_ord(c, &session)? else {
                return Err(StoreError::NotFound(session));
            };
            let limit = limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX));
            if after >= MAX_SEQUENCE {
                return Ok(Vec::new());
            }
            let mut stmt = c.prepare_cached(
                "SELECT pos, min_minor, json FROM events WHERE pos > ?1 AND pos <= ?2 ORDER BY pos LIMIT ?3",
            )?;
            let (_, last) = session_keys(ord)?;
            let mut rows = stmt.query(params![event_key(ord, after)?, last, limit])?;
            let mut page = Vec::new();
            let mut bytes = 0usize;
            while let Some(r) = rows.next()? {
                let json = r.get_ref(2)?.as_str().map_err(|e| StoreError::Storage(e.to_string()))?;
                bytes = bytes.saturating_add(json.len() + 1);
                if bytes > max_bytes && !page.is_empty() {
                    break;
                }
                page.push(EventRow {
                    sequence: key_sequence(r.get(0)?),
                    min_minor: u16::try_from(r.get::<_, i64>(1)?).unwrap_or(u16::MAX),
                    json: RawValue::from_string(json.to_owned())
                        .map_err(|e| StoreError::Storage(e.to_string()))?,
                });
            }
            Ok(page)
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
            if let Some(j) = json {
                return serde_json::from_str(&j)
                    .map(Some)
                    .map_err(|e| StoreError::Storage(e.to_string()));
            }
            // A UI snapshot is reachable through its Observation.
            let Some(sha) = asset_id.strip_prefix("sha256:") else {
                return Ok(None);
            };
            let found = c
                .query_row(
                    "SELECT 1 FROM observations o JOIN sessions s ON s.ord = o.session_ord
                     WHERE s.id = ?1 AND o.ui_sha256 = ?2 LIMIT 1",
                    params![session.to_string(), sha],
                    |_| Ok(()),
                )
                .optional()?;
            Ok(found.map(|()| {
                AssetRef::content_addressed(sha, devicerail_host_protocol::UI_TREE_MEDIA_TYPE)
            }))
        })
        .await
    }

    /// The bytes of a (shared) blob stored in the event store, if it is one
    /// (UI snapshots are read through their Observation).
    pub async fn blob(&self, sha256: String) -> Result<Option<Vec<u8>>, StoreError> {
        self.read(move |c| {
            let stored: Option<Vec<u8>> = c
                .prepare_cached("SELECT bytes FROM blobs WHERE sha256 = ?1")?
                .query_row([&sha256], |r| r.get(0))
                .optional()?;
            Ok(stored)
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
                "SELECT o.ui_sha256, o.ui_omission, o.ui_bytes, o.ui_codec FROM observations o JOIN sessions s ON s.ord = o.session_ord
                 WHERE s.id = ?1 AND o.observation_id = ?2",
                params![session.to_string(), observation.to_string()],
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
        })
        .await
    }
}
