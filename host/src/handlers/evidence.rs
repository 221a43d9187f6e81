//! `ui.snapshot.get` and `verdict.record`: reads and writes that must stay
//! inside the connection's active Session.

use devicerail_protocol::{
    ErrorCode, RpcError, TestEvent, TestEventPayload, UiSnapshotGetParams, VerdictRecordParams,
    VerdictRecordResult,
};
use serde_json::json;
use serde_json::value::RawValue;

use crate::dispatch::Call;
use crate::event_store::NewEvent;
use crate::handlers::{routing, session_required, store_error};

/// Returns the stored UI tree of an Observation of the active Session.
pub async fn ui_snapshot_get(call: &mut Call) -> Result<Box<RawValue>, RpcError> {
    let p: UiSnapshotGetParams = call.params()?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("ui.snapshot.get"))?;
    let not_found = || {
        ErrorCode::UiSnapshotNotFound.rpc(
            format!(
                "observation {} has no UI snapshot in the active session",
                p.observation_id
            ),
            json!({ "observationId": p.observation_id, "sessionId": session.id }),
        )
    };
    let sha = call
        .host
        .store
        .ui_snapshot(session.id, p.observation_id)
        .await
        .map_err(store_error)?
        .ok_or_else(not_found)?;
    let evidence = call.host.evidence.clone();
    let bytes = tokio::task::spawn_blocking(move || evidence.get(&sha))
        .await
        .map_err(|e| ErrorCode::InternalError.rpc(e.to_string(), serde_json::Value::Null))?
        .map_err(|e| {
            ErrorCode::StorageFailure.rpc(
                format!("the UI snapshot blob is unreadable: {e}"),
                serde_json::Value::Null,
            )
        })?;
    let text = String::from_utf8(bytes).map_err(|_| {
        ErrorCode::StorageFailure.rpc("the UI snapshot blob is not UTF-8", serde_json::Value::Null)
    })?;
    RawValue::from_string(text).map_err(|e| {
        ErrorCode::StorageFailure.rpc(
            format!("the UI snapshot blob is not JSON: {e}"),
            serde_json::Value::Null,
        )
    })
}

/// Persists the caller's verdict after checking every Evidence reference
/// is reachable from the active Session (and matches what was stored).
pub async fn verdict_record(call: &mut Call) -> Result<VerdictRecordResult, RpcError> {
    let p: VerdictRecordParams = call.params()?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("verdict.record"))?;
    for asset in p.verdict.evidence.iter() {
        let stored = call
            .host
            .store
            .evidence_ref(session.id, asset.id.clone())
            .await
            .map_err(store_error)?;
        match stored {
            Some(s) if s == *asset => {}
            Some(_) => {
                return Err(ErrorCode::EvidenceNotInSession.rpc(
                    format!("evidence {} does not match the session's stored reference", asset.id),
                    json!({ "evidenceId": asset.id, "sessionId": session.id, "reason": "mismatch" }),
                ));
            }
            None => {
                return Err(ErrorCode::EvidenceNotInSession.rpc(
                    format!(
                        "evidence {} is not reachable from the active session",
                        asset.id
                    ),
                    json!({ "evidenceId": asset.id, "sessionId": session.id }),
                ));
            }
        }
    }
    let mut event = NewEvent::new(TestEventPayload::VerdictRecorded { verdict: p.verdict });
    event.request_id = Some(call.id.clone());
    event.device_id = routing::current_device(&call.host, &call.conn);
    let stored = call
        .host
        .store
        .append_one(session.id, event)
        .await
        .map_err(store_error)?;
    let event: TestEvent = stored.event;
    Ok(VerdictRecordResult { event })
}
