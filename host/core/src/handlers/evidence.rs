//! `ui.snapshot.get` and `verdict.record`: reads and writes that must stay
//! inside the connection's active Session.

use devicerail_host_protocol::{
    ErrorCode, RpcError, TestEvent, TestEventPayload, UiSnapshotGetParams, VerdictRecordParams,
    VerdictRecordResult,
};
use serde_json::json;
use serde_json::value::RawValue;

use crate::handlers::call::Call;
use crate::handlers::{routing, session_required, store_error};
use devicerail_host_store::event_store::NewEvent;

/// Returns the stored UI tree of an Observation of the active Session.
pub(crate) async fn ui_snapshot_get(call: &mut Call) -> Result<Box<RawValue>, RpcError> {
    let p: UiSnapshotGetParams = call.params()?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("ui.snapshot.get"))?;
    let observation = p.observation_id;
    let row = call
        .host
        .store
        .observation(session.id, observation)
        .await
        .map_err(store_error)?
        .ok_or_else(|| {
            ErrorCode::UiSnapshotNotFound.rpc(
                format!("observation {observation} is not in the active session"),
                json!({ "observationId": observation }),
            )
        })?;
    let Some(sha) = row.ui_sha256 else {
        return Err(ErrorCode::UiSnapshotUnavailable.rpc(
            format!("observation {observation} has no UI snapshot"),
            json!({ "observationId": observation, "omissionReason": row.ui_omission }),
        ));
    };
    let read_failed = |why: String| {
        ErrorCode::UiSnapshotReadFailed.rpc(
            format!("the UI snapshot of observation {observation} could not be read: {why}"),
            json!({ "observationId": observation }),
        )
    };
    let bytes = match row.ui_bytes {
        Some(stored) => {
            devicerail_host_store::snapshot_codec::decompress(stored, row.ui_codec.as_deref())
                .map_err(|e| read_failed(e.to_string()))?
        }
        None => call
            .host
            .evidence_bytes(&sha)
            .await
            .map_err(|e| read_failed(e.to_string()))?
            .ok_or_else(|| read_failed("the blob is missing".into()))?,
    };
    if devicerail_host_store::evidence::sha256_hex(&bytes) != sha {
        return Err(read_failed(
            "its bytes no longer match the digest the Observation names".into(),
        ));
    }
    let invalid = |why: &str| {
        ErrorCode::InvalidUiSnapshot.rpc(
            format!("the stored UI snapshot of observation {observation} is invalid: {why}"),
            json!({ "observationId": observation }),
        )
    };
    let text = String::from_utf8(bytes).map_err(|_| invalid("not UTF-8"))?;
    RawValue::from_string(text).map_err(|_| invalid("not JSON"))
}

/// Persists the caller's verdict after checking every Evidence reference
/// is reachable from the active Session (and matches what was stored).
pub(crate) async fn verdict_record(call: &mut Call) -> Result<VerdictRecordResult, RpcError> {
    let p: VerdictRecordParams = call.params().map_err(|e| {
        ErrorCode::InvalidParams.rpc(
            e.message,
            json!({
                "method": "verdict.record",
                "maximumSummaryLength": 16384,
                "maximumEvidenceReferences": 64,
            }),
        )
    })?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("verdict.record"))?;
    let mut seen = std::collections::HashSet::new();
    for asset in p.verdict.evidence.iter() {
        if !seen.insert(asset.id.as_str()) {
            return Err(ErrorCode::DuplicateEvidenceReference.rpc(
                format!("the verdict cites evidence {} twice", asset.id),
                json!({ "digest": asset.id }),
            ));
        }
        let stored = call
            .host
            .store
            .evidence_ref(session.id, asset.id.clone())
            .await
            .map_err(store_error)?;
        if stored.as_ref() != Some(asset) {
            let why = if stored.is_some() {
                "does not match the session's stored reference"
            } else {
                "is not reachable from the active session"
            };
            return Err(ErrorCode::EvidenceNotReachable.rpc(
                format!("evidence {} {why}", asset.id),
                json!({ "digest": asset.id }),
            ));
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
