//! Sessions and the read paths of the event log: `session.start`,
//! `session.current`, `session.end`, `sessions.list`, `events.list`,
//! `session.export` (legacy and paged) and `events.clear`.

use devicerail_protocol::{
    ErrorCode, EventsClearResult, EventsListParams, Feature, NoParams, RpcError,
    SessionCurrentResult, SessionEndParams, SessionExportParams, SessionId, SessionInfo,
    SessionOutcome, SessionState, SessionTargetParams,
};
use serde::Serialize;
use serde_json::json;
use serde_json::value::RawValue;

use crate::connection::ActiveSession;
use crate::dispatch::{Call, feature_not_negotiated};
use crate::handlers::{existing_session, session_required, store_error};

pub async fn start(call: &mut Call) -> Result<SessionInfo, RpcError> {
    call.params::<NoParams>()?;
    if let Some(active) = call.conn.session() {
        return Err(ErrorCode::SessionAlreadyActive.rpc(
            format!(
                "session {} is already active on this connection; end it first",
                active.id
            ),
            json!({ "activeSessionId": active.id }),
        ));
    }
    let (info, _) = call
        .host
        .store
        .start_session(Some(call.id.clone()))
        .await
        .map_err(store_error)?;
    call.conn.set_session(Some(ActiveSession::new(info.id)));
    tracing::info!(session = %info.id, "session started");
    Ok(info)
}

pub fn current(call: &mut Call) -> Result<SessionCurrentResult, RpcError> {
    call.params::<NoParams>()?;
    call.conn
        .session()
        .map(|s| SessionCurrentResult { session_id: s.id })
        .ok_or_else(|| session_required("session.current"))
}

pub async fn end(call: &mut Call) -> Result<SessionInfo, RpcError> {
    let p: SessionEndParams = call.params()?;
    let active = call
        .conn
        .session()
        .ok_or_else(|| session_required("session.end"))?;
    let busy = active.busy();
    if busy > 0 {
        return Err(ErrorCode::SessionBusy.rpc(
            format!("{busy} action(s) or observation(s) are still in flight; cancel or await them, then retry"),
            json!({ "sessionId": active.id, "inFlight": busy }),
        ));
    }
    let open = active
        .open_streams
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    if !open.is_empty() {
        return Err(ErrorCode::MediaStreamOpen.rpc(
            format!(
                "{} media stream(s) are still open; end them first",
                open.len()
            ),
            json!({ "sessionId": active.id, "streamIds": open }),
        ));
    }
    let outcome = p.outcome.unwrap_or(SessionOutcome::Completed);
    let (info, _) = call
        .host
        .store
        .end_session(active.id, outcome, p.reason, Some(call.id.clone()))
        .await
        .map_err(store_error)?;
    call.conn.set_session(None);
    tracing::info!(session = %info.id, ?outcome, "session ended");
    Ok(info)
}

pub async fn list(call: &mut Call) -> Result<Vec<SessionInfo>, RpcError> {
    call.params::<NoParams>()?;
    call.host.store.sessions().await.map_err(store_error)
}

/// The session a read names, or the connection's active one.
fn target(call: &Call, explicit: Option<SessionId>, method: &str) -> Result<SessionId, RpcError> {
    explicit
        .or_else(|| call.conn.session().map(|s| s.id))
        .ok_or_else(|| {
            ErrorCode::SessionRequired.rpc(
                format!("{method} needs a sessionId or an active session"),
                serde_json::Value::Null,
            )
        })
}

fn beyond(info: &SessionInfo, after: u64) -> Option<RpcError> {
    (after > info.last_sequence.get()).then(|| {
        ErrorCode::SequenceOutOfRange.rpc(
            format!("afterSequence {after} is beyond the session's last sequence {}", info.last_sequence),
            json!({ "sessionId": info.id, "afterSequence": after, "lastSequence": info.last_sequence }),
        )
    })
}

pub async fn events_list(call: &mut Call) -> Result<Vec<Box<RawValue>>, RpcError> {
    let p: EventsListParams = call.params()?;
    let id = target(call, p.session_id, "events.list")?;
    let info = existing_session(&call.host, id).await?;
    let after = p.after_sequence.map_or(0, |s| s.get());
    if let Some(e) = beyond(&info, after) {
        return Err(e);
    }
    call.host
        .store
        .events(id, after, p.limit.map(|l| l.get()))
        .await
        .map_err(store_error)
}

/// `session.export` result with raw stored events.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportResult {
    session: SessionInfo,
    events: Vec<Box<RawValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    next_after_sequence: Option<u64>,
}

pub async fn export(call: &mut Call) -> Result<ExportResult, RpcError> {
    let p: SessionExportParams = call.params()?;
    if p.after_sequence.is_some() && p.limit.is_none() {
        return Err(ErrorCode::InvalidParams.rpc(
            "afterSequence needs limit (a paged export)",
            json!({ "method": "session.export", "field": "afterSequence" }),
        ));
    }
    let id = target(call, p.session_id, "session.export")?;
    let Some(limit) = p.limit else {
        let info = existing_session(&call.host, id).await?;
        let events = call
            .host
            .store
            .events(id, 0, None)
            .await
            .map_err(store_error)?;
        return Ok(ExportResult {
            session: info,
            events,
            next_after_sequence: None,
        });
    };
    if !call.neg.has(Feature::SessionExportPage) {
        return Err(feature_not_negotiated(
            "limit (paged session.export)",
            Feature::SessionExportPage,
        ));
    }
    let info = existing_session(&call.host, id).await?;
    if info.state == SessionState::Active {
        return Err(ErrorCode::SessionNotEnded.rpc(
            format!("session {id} is still active; paged export reads only ended sessions"),
            json!({ "sessionId": id }),
        ));
    }
    let after = p.after_sequence.map_or(0, |s| s.get());
    if let Some(e) = beyond(&info, after) {
        return Err(e);
    }
    let events = call
        .host
        .store
        .events(id, after, Some(limit.get()))
        .await
        .map_err(store_error)?;
    let last_returned = after + events.len() as u64;
    let next =
        (!events.is_empty() && last_returned < info.last_sequence.get()).then_some(last_returned);
    Ok(ExportResult {
        session: info,
        events,
        next_after_sequence: next,
    })
}

pub async fn clear(call: &mut Call) -> Result<EventsClearResult, RpcError> {
    let p: SessionTargetParams = call.params()?;
    let id = target(call, p.session_id, "events.clear")?;
    if call.conn.session().is_some_and(|s| s.id == id) {
        return Err(ErrorCode::SessionNotEnded.rpc(
            format!("session {id} is active; end it before deleting it"),
            json!({ "sessionId": id }),
        ));
    }
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
