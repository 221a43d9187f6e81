//! Sessions and the read paths of the event log: `session.start`,
//! `session.current`, `session.end`, `sessions.list`, `events.list`,
//! `session.export` (legacy and paged) and `events.clear`.

use devicerail_host_protocol::{
    ErrorCode, EventsClearResult, EventsListParams, Feature, MAX_FRAME_BYTES, NoParams, RpcError,
    SessionCurrentResult, SessionEndParams, SessionExportParams, SessionId, SessionInfo,
    SessionOutcome, SessionState, SessionTargetParams,
};
use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;

use crate::connection::ActiveSession;
use crate::handlers::call::Call;
use crate::handlers::{existing_session, routing, session_required, store_error};
use devicerail_host_store::event_store::{Dangling, EventRow};

pub(crate) async fn start(call: &mut Call) -> Result<SessionInfo, RpcError> {
    call.params::<NoParams>()?;
    if let Some(active) = call.conn.session() {
        return Err(ErrorCode::SessionAlreadyActive.rpc(
            format!(
                "session {} is already active on this connection; end it first",
                active.id
            ),
            json!({ "sessionId": active.id }),
        ));
    }
    // A Session is bound to one device: the selection, else the sole one.
    let route = routing::resolve(&call.host, &call.conn)?;
    let client = match call.conn.phase() {
        crate::connection::Phase::Ready(n) => Some(n.client.clone()),
        crate::connection::Phase::AwaitingHello => None,
    };
    let lease = call
        .host
        .leases
        .acquire(&route.device, call.conn.claimant(), client)?;
    let (info, _) = match call.host.store.start_session(Some(call.id.clone())).await {
        Ok(started) => started,
        Err(e) => {
            if lease == crate::leases::Acquired::New {
                call.host.leases.release(&route.device, call.conn.id);
            }
            return Err(store_error(e));
        }
    };
    call.conn
        .set_session(Some(ActiveSession::new(info.id, route.device.clone())));
    tracing::info!(session = %info.id, device = %route.device, "session started");
    Ok(info)
}

pub(crate) fn current(call: &mut Call) -> Result<SessionCurrentResult, RpcError> {
    call.params::<NoParams>()?;
    call.conn
        .session()
        .map(|s| SessionCurrentResult { session_id: s.id })
        .ok_or_else(|| session_required("session.current"))
}

pub(crate) async fn end(call: &mut Call) -> Result<SessionInfo, RpcError> {
    let p: SessionEndParams = call.params()?;
    let active = call
        .conn
        .session()
        .ok_or_else(|| session_required("session.end"))?;
    if let Some(e) = busy_error(&active) {
        return Err(e);
    }
    let outcome = p.outcome.unwrap_or(SessionOutcome::Completed);
    let info = finish(
        &call.host,
        &active,
        outcome,
        p.reason,
        Some(call.id.clone()),
    )
    .await?;
    call.conn.set_session(None);
    tracing::info!(session = %info.id, ?outcome, "session ended");
    Ok(info)
}

/// `session_busy` while any work of `active` is in flight.
pub(crate) fn busy_error(active: &ActiveSession) -> Option<RpcError> {
    let (actions, observations, captures) = active.busy();
    if actions + observations + captures == 0 {
        return None;
    }
    let mut details = serde_json::Map::new();
    details.insert("sessionId".into(), json!(active.id));
    for (key, n) in [
        ("inFlightActions", actions),
        ("inFlightObservations", observations),
        ("inFlightMediaStreams", captures),
    ] {
        if n > 0 {
            details.insert(key.into(), json!(n));
        }
    }
    Some(ErrorCode::SessionBusy.rpc(
        format!(
            "{} request(s) are still in flight in session {}; cancel or await them, then retry",
            actions + observations + captures,
            active.id
        ),
        serde_json::Value::Object(details),
    ))
}

/// Ends `active`: its open media streams first (each records
/// `mediaStreamEnded`), then the log with `sessionEnded`.
pub(crate) async fn finish(
    host: &std::sync::Arc<crate::state::Host>,
    active: &std::sync::Arc<ActiveSession>,
    outcome: SessionOutcome,
    reason: Option<String>,
    request_id: Option<devicerail_host_protocol::RpcId>,
) -> Result<SessionInfo, RpcError> {
    for stream in active.open_streams() {
        if let Err(e) = crate::handlers::media::end_stream(host, active, stream, None).await {
            // At shutdown the Session ends regardless.
            if outcome != SessionOutcome::Shutdown {
                return Err(e);
            }
            tracing::warn!(%stream, "could not end the media stream at shutdown: {}", e.message);
        }
    }
    let (info, _) = host
        .store
        .end_session(
            active.id,
            outcome,
            reason,
            request_id,
            // Only closing paths end a Session with work still open: a
            // shutdown, or a client whose connection went away.
            if matches!(
                outcome,
                SessionOutcome::Shutdown | SessionOutcome::Cancelled
            ) {
                Dangling::Shutdown
            } else {
                Dangling::NotRecorded
            },
        )
        .await
        .map_err(store_error)?;
    Ok(info)
}

pub(crate) async fn list(call: &mut Call) -> Result<Vec<SessionInfo>, RpcError> {
    call.params::<NoParams>()?;
    call.host.store.sessions().await.map_err(store_error)
}

/// The session a read names, or the connection's active one.
fn target(call: &Call, explicit: Option<SessionId>, method: &str) -> Result<SessionId, RpcError> {
    explicit
        .or_else(|| call.conn.session().map(|s| s.id))
        .ok_or_else(|| session_required(method))
}

/// Refuses events newer than the connection's protocol minor
/// (`session_protocol_incompatible`), then hands the JSON on.
fn readable(
    call: &Call,
    method: &str,
    session: SessionId,
    rows: Vec<EventRow>,
) -> Result<Vec<Box<RawValue>>, RpcError> {
    let selected = call.neg.version;
    if let Some(row) = rows.iter().find(|r| r.min_minor > selected.minor) {
        let event_id = serde_json::from_str::<serde_json::Value>(row.json.get())
            .ok()
            .and_then(|v| v.get("eventId").cloned())
            .unwrap_or(serde_json::Value::Null);
        return Err(ErrorCode::SessionProtocolIncompatible.rpc(
            format!(
                "event {} of session {session} needs protocol 1.{}, but this connection negotiated {selected}",
                row.sequence, row.min_minor
            ),
            json!({
                "eventId": event_id,
                "eventSequence": row.sequence,
                "method": method,
                "requiredProtocol": { "major": 1, "minor": row.min_minor },
                "selectedProtocol": selected,
                "sessionId": session,
            }),
        ));
    }
    Ok(rows.into_iter().map(|r| r.json).collect())
}

pub(crate) async fn events_list(call: &mut Call) -> Result<Vec<Box<RawValue>>, RpcError> {
    let p: EventsListParams = call.params()?;
    let id = target(call, p.session_id, "events.list")?;
    existing_session(&call.host, id).await?;
    // A cursor past the end reads an empty page.
    let after = p.after_sequence.map_or(0, |s| s.get());
    let rows = call
        .host
        .store
        .events(id, after, p.limit.map(|l| l.get()))
        .await
        .map_err(store_error)?;
    readable(call, "events.list", id, rows)
}

/// `session.export` result with raw stored events.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ExportResult {
    session: SessionInfo,
    events: Vec<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_after_sequence: Option<u64>,
}

pub(crate) async fn export(call: &mut Call) -> Result<ExportResult, RpcError> {
    let p: SessionExportParams = call.params()?;
    if p.after_sequence.is_some() && p.limit.is_none() {
        return Err(ErrorCode::InvalidParams.rpc(
            "afterSequence needs limit (a paged export)",
            json!({ "method": "session.export" }),
        ));
    }
    if p.limit.is_some() && !call.neg.has(Feature::SessionExportPage) {
        return Err(ErrorCode::MethodNotFound.rpc(
            "a paged session.export (limit) requires the session.export.page.v1 feature",
            json!({ "method": "session.export", "requiredFeature": Feature::SessionExportPage.name() }),
        ));
    }
    let id = target(call, p.session_id, "session.export")?;
    let Some(limit) = p.limit else {
        let info = existing_session(&call.host, id).await?;
        let rows = call
            .host
            .store
            .events(id, 0, None)
            .await
            .map_err(store_error)?;
        return Ok(ExportResult {
            session: info,
            events: readable(call, "session.export", id, rows)?,
            next_after_sequence: None,
        });
    };
    let info = existing_session(&call.host, id).await?;
    if info.state == SessionState::Active {
        return Err(ErrorCode::SessionActive.rpc(
            format!("session {id} is still active; paged export reads only ended sessions"),
            json!({ "sessionId": id }),
        ));
    }
    let after = p.after_sequence.map_or(0, |s| s.get());
    if after > info.last_sequence.get() {
        return Err(ErrorCode::EventCursorAhead.rpc(
            format!(
                "afterSequence {after} is beyond the session's last sequence {}",
                info.last_sequence
            ),
            json!({ "sessionId": id, "afterSequence": after, "lastSequence": info.last_sequence }),
        ));
    }
    // A page stops early rather than outgrow one frame: it holds what fits
    // beside the envelope (with the largest `nextAfterSequence`), and only
    // an event that cannot fit on its own fails the export.
    let envelope = serde_json::to_vec(&devicerail_host_protocol::RpcSuccess::new(
        call.id.clone(),
        &ExportResult {
            session: info.clone(),
            events: Vec::new(),
            next_after_sequence: Some(u64::MAX),
        },
    ))
    .map_or(MAX_FRAME_BYTES, |v| v.len());
    let rows = call
        .host
        .store
        .events_within(
            id,
            after,
            Some(limit.get()),
            MAX_FRAME_BYTES.saturating_sub(envelope),
        )
        .await
        .map_err(store_error)?;
    let events = readable(call, "session.export", id, rows)?;
    let last_returned = after + events.len() as u64;
    let next =
        (!events.is_empty() && last_returned < info.last_sequence.get()).then_some(last_returned);
    Ok(ExportResult {
        session: info,
        events,
        next_after_sequence: next,
    })
}

pub(crate) async fn clear(call: &mut Call) -> Result<EventsClearResult, RpcError> {
    let p: SessionTargetParams = call.params()?;
    let id = target(call, p.session_id, "events.clear")?;
    let orphans = call
        .host
        .store
        .delete_session(id)
        .await
        .map_err(store_error)?;
    let evidence = call.host.evidence.clone();
    let removed = orphans.len();
    let _ = tokio::task::spawn_blocking(move || {
        for sha in orphans {
            if let Err(e) = evidence.remove(&sha) {
                tracing::warn!(%sha, "could not remove unreferenced Evidence: {e}");
            }
        }
    })
    .await;
    tracing::info!(session = %id, evidence_removed = removed, "session deleted");
    Ok(EventsClearResult {
        deleted: true,
        session_id: id,
    })
}
