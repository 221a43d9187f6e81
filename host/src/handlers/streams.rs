//! The streaming planes: `events.stream.open` (stdio), `events.subscribe`
//! (the WebSocket) and `media.stream.start`/`capture`/`end`.

use std::sync::Arc;

use devicerail_plugin_api::ObserveRequest;
use devicerail_protocol::{
    ErrorCode, EventsStreamOpenParams, EventsStreamOpenResult, EventsSubscribeParams,
    EventsSubscribeResult, MediaFrame, MediaStreamCaptureParams, MediaStreamCaptureResult,
    MediaStreamEndParams, MediaStreamEndResult, MediaStreamId, MediaStreamInfo, MediaStreamKind,
    MediaStreamStartParams, MediaStreamStartResult, MethodId, ObservationId, PNG_MEDIA_TYPE,
    RpcError, SafeU64, SubscriptionId, TestEventPayload,
};
use serde_json::json;

use crate::connection::{ActiveSession, Connection};
use crate::dispatch::Call;
use crate::event_store::NewEvent;
use crate::event_stream::{self, cursor};
use crate::handlers::device::{Accepted, call_driver, interrupt_error};
use crate::handlers::{existing_session, routing, session_required, store_error};
use crate::media::{MediaStream, Progress};
use crate::state::{Host, ScreenshotPolicy};

/// Control methods of the streaming planes, answered inline.
pub async fn handle(call: &mut Call) -> Result<serde_json::Value, RpcError> {
    fn to_value<T: serde::Serialize>(
        v: Result<T, RpcError>,
    ) -> Result<serde_json::Value, RpcError> {
        v.and_then(|v| {
            serde_json::to_value(v)
                .map_err(|e| ErrorCode::InternalError.rpc(e.to_string(), serde_json::Value::Null))
        })
    }
    match call.spec.id {
        MethodId::EventsStreamOpen => to_value(open(call).await),
        MethodId::MediaStreamStart => to_value(media_start(call).await),
        MethodId::MediaStreamEnd => to_value(media_end(call).await),
        other => Err(ErrorCode::InternalError.rpc(
            format!("{} is not a stream control method", other.name()),
            serde_json::Value::Null,
        )),
    }
}

async fn open(call: &mut Call) -> Result<EventsStreamOpenResult, RpcError> {
    let p: EventsStreamOpenParams = call.params()?;
    existing_session(&call.host, p.session_id).await?;
    let (endpoint, expires_at_ms) = call
        .host
        .streams
        .open(&call.host, p.session_id, p.origin_policy)
        .await
        .map_err(|e| {
            ErrorCode::InternalError.rpc(
                format!("cannot open the event stream: {e}"),
                serde_json::Value::Null,
            )
        })?;
    tracing::info!(session = %p.session_id, "event stream endpoint opened");
    Ok(EventsStreamOpenResult {
        endpoint,
        stream_epoch: call.host.epoch,
        expires_at_ms: SafeU64::saturating(expires_at_ms),
    })
}

fn cursor_invalid(message: String, details: serde_json::Value) -> RpcError {
    ErrorCode::StreamCursorInvalid.rpc(message, details)
}

/// `events.subscribe`: answers, then starts the pump (so the response
/// always precedes the first event).
pub async fn subscribe(call: &mut Call) {
    let id = call.id.clone();
    let conn = call.conn.clone();
    match prepare_subscription(call).await {
        Ok((result, after)) => {
            conn.respond(&id, Ok::<_, RpcError>(&result)).await;
            conn.pump_started();
            tokio::spawn(event_stream::pump(
                call.host.clone(),
                conn,
                result.subscription_id,
                result.session_id,
                call.host.epoch,
                after,
            ));
        }
        Err(e) => conn.respond_error(Some(&id), e).await,
    }
}

async fn prepare_subscription(call: &mut Call) -> Result<(EventsSubscribeResult, u64), RpcError> {
    let p: EventsSubscribeParams = call.params()?;
    let Some(stream) = &call.conn.stream else {
        return Err(ErrorCode::MethodNotFound.rpc(
            "events.subscribe is served on the event stream only",
            serde_json::Value::Null,
        ));
    };
    if p.session_id != stream.binding.session {
        return Err(ErrorCode::InvalidParams.rpc(
            format!(
                "this endpoint is bound to session {}, not {}",
                stream.binding.session, p.session_id
            ),
            json!({ "sessionId": p.session_id, "boundSessionId": stream.binding.session }),
        ));
    }
    let info = existing_session(&call.host, p.session_id).await?;
    let after = match &p.after_cursor {
        None => 0,
        Some(c) => {
            if c.stream_epoch != call.host.epoch {
                return Err(cursor_invalid(
                    "the cursor belongs to another daemon lifetime".into(),
                    json!({ "reason": "epoch", "cursorEpoch": c.stream_epoch, "streamEpoch": call.host.epoch }),
                ));
            }
            if c.session_id != p.session_id {
                return Err(cursor_invalid(
                    "the cursor belongs to another session".into(),
                    json!({ "reason": "session", "cursorSessionId": c.session_id, "sessionId": p.session_id }),
                ));
            }
            if c.sequence > info.last_sequence {
                return Err(cursor_invalid(
                    format!(
                        "the cursor sequence {} is beyond the log ({})",
                        c.sequence, info.last_sequence
                    ),
                    json!({ "reason": "beyondLog", "sequence": c.sequence, "lastSequence": info.last_sequence }),
                ));
            }
            c.sequence.get()
        }
    };
    if !call.conn.claim_subscription() {
        return Err(ErrorCode::StreamAlreadySubscribed.rpc(
            "this stream connection already has its subscription",
            serde_json::Value::Null,
        ));
    }
    let result = EventsSubscribeResult {
        subscription_id: SubscriptionId::new_v4(),
        session_id: p.session_id,
        replay_through: cursor(call.host.epoch, p.session_id, info.last_sequence.get()),
        session_state: info.state,
    };
    Ok((result, after))
}

fn stream_not_found(id: &MediaStreamId) -> RpcError {
    ErrorCode::MediaStreamNotFound.rpc(
        format!("no open media stream {id} in the active session"),
        json!({ "streamId": id }),
    )
}

async fn media_start(call: &mut Call) -> Result<MediaStreamStartResult, RpcError> {
    let p: MediaStreamStartParams = call.params()?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("media.stream.start"))?;
    if call.host.config.screenshot_policy == ScreenshotPolicy::Omit {
        return Err(ErrorCode::MediaCaptureDisabled.rpc(
            "the host's screenshot policy is omit, so media frames cannot be captured",
            json!({ "screenshotPolicy": "omit" }),
        ));
    }
    let route = routing::resolve(&call.host, &call.conn)?;
    let info = MediaStreamInfo {
        id: p.stream_id,
        kind: p.kind,
        media_type: devicerail_protocol::BoundedString::truncating(PNG_MEDIA_TYPE)
            .unwrap_or_else(|| unreachable!()),
        viewport: None,
    };
    let device = route.device.clone();
    let stream = MediaStream {
        info: info.clone(),
        session: session.id,
        route,
        progress: Default::default(),
    };
    if !call.host.media.insert(stream) {
        return Err(ErrorCode::MediaStreamExists.rpc(
            format!("media stream id {} was already used", p.stream_id),
            json!({ "streamId": p.stream_id }),
        ));
    }
    let mut event = NewEvent::new(TestEventPayload::MediaStreamStarted {
        stream: info.clone(),
    });
    event.request_id = Some(call.id.clone());
    event.device_id = Some(device);
    call.host
        .store
        .append_one(session.id, event)
        .await
        .map_err(store_error)?;
    session
        .open_streams
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(p.stream_id);
    Ok(MediaStreamStartResult { stream: info })
}

/// Ends one open stream of `session`, recording `mediaStreamEnded`.
pub async fn end_stream(
    host: &Arc<Host>,
    session: &Arc<ActiveSession>,
    id: MediaStreamId,
    request_id: Option<devicerail_protocol::RpcId>,
) -> Result<MediaStreamEndResult, RpcError> {
    let stream = host
        .media
        .get(&id)
        .filter(|s| s.session == session.id)
        .ok_or_else(|| stream_not_found(&id))?;
    let mut progress = stream.progress.lock().await;
    if progress.ended {
        return Err(stream_not_found(&id));
    }
    let frame_count = SafeU64::saturating(progress.frame_count);
    let mut event = NewEvent::new(TestEventPayload::MediaStreamEnded {
        stream_id: id,
        frame_count,
    });
    event.request_id = request_id;
    event.device_id = Some(stream.route.device.clone());
    host.store
        .append_one(session.id, event)
        .await
        .map_err(store_error)?;
    progress.ended = true;
    session
        .open_streams
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .retain(|s| *s != id);
    Ok(MediaStreamEndResult {
        stream_id: id,
        frame_count,
    })
}

async fn media_end(call: &mut Call) -> Result<MediaStreamEndResult, RpcError> {
    let p: MediaStreamEndParams = call.params()?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("media.stream.end"))?;
    end_stream(&call.host, &session, p.stream_id, Some(call.id.clone())).await
}

/// The route a capture must use: the stream's bound device.
pub fn capture_route(
    host: &Host,
    conn: &Connection,
    id: &MediaStreamId,
) -> Result<crate::registry::Route, RpcError> {
    let session = conn
        .session()
        .ok_or_else(|| session_required("media.stream.capture"))?;
    host.media
        .get(id)
        .filter(|s| s.session == session.id)
        .map(|s| s.route.clone())
        .ok_or_else(|| stream_not_found(id))
}

/// `media.stream.capture` (a device request: runs concurrently, honours
/// `timeoutMs` and cancellation).
pub async fn capture(
    a: &Accepted,
    p: MediaStreamCaptureParams,
) -> Result<MediaStreamCaptureResult, RpcError> {
    let session = a
        .session
        .clone()
        .ok_or_else(|| session_required("media.stream.capture"))?;
    let stream = a
        .host
        .media
        .get(&p.stream_id)
        .filter(|s| s.session == session.id)
        .ok_or_else(|| stream_not_found(&p.stream_id))?;
    let mut progress = tokio::select! {
        g = stream.progress.lock() => g,
        why = a.stop.wait() => return Err(interrupt_error(why, a.timeout_ms)),
    };
    if progress.ended {
        return Err(stream_not_found(&p.stream_id));
    }
    let duration = p.duration_ms.map(|d| d.get());
    if stream.info.kind == MediaStreamKind::Video && duration.is_none_or(|d| d == 0) {
        return Err(ErrorCode::MediaDurationRequired.rpc(
            "a video frame needs a positive durationMs",
            json!({ "streamId": p.stream_id, "frameIndex": p.frame_index }),
        ));
    }
    let expected = progress.frame_count + 1;
    let index = p.frame_index.get();
    if let Some(last) = &progress.last
        && index == last.frame_index.get()
    {
        return if last.duration_ms.map(|d| d.get()) == duration {
            Ok(MediaStreamCaptureResult {
                frame: last.clone(),
            })
        } else {
            Err(ErrorCode::MediaFrameMismatch.rpc(
                format!("frame {index} was captured with another durationMs"),
                json!({ "streamId": p.stream_id, "frameIndex": index }),
            ))
        };
    }
    if index != expected {
        return Err(ErrorCode::MediaFrameOutOfOrder.rpc(
            format!(
                "the next frame of stream {} is {expected}, not {index}",
                p.stream_id
            ),
            json!({ "streamId": p.stream_id, "frameIndex": index, "expectedFrameIndex": expected }),
        ));
    }
    let device = stream.route.device.clone();
    let request = ObserveRequest {
        screenshot: true,
        ui_tree: false,
    };
    let obs = call_driver(a, a.context(ObservationId::new_v7()), move |d, ctx| {
        d.observe(ctx, &device, &request)
    })
    .await?;
    let png = obs.png.ok_or_else(|| {
        ErrorCode::DriverProtocolViolation.rpc(
            "the driver returned no screenshot for a media frame",
            serde_json::Value::Null,
        )
    })?;
    if crate::recorder::png_dimensions(&png).is_none() {
        return Err(ErrorCode::MediaFrameMismatch.rpc(
            "the device produced a frame that is not image/png, the stream's media type",
            json!({ "streamId": p.stream_id }),
        ));
    }
    let evidence = a.host.evidence.clone();
    let asset = tokio::task::spawn_blocking(move || evidence.put(&png, PNG_MEDIA_TYPE))
        .await
        .map_err(|e| ErrorCode::InternalError.rpc(e.to_string(), serde_json::Value::Null))?
        .map_err(|e| {
            ErrorCode::StorageFailure.rpc(
                format!("could not store the frame: {e}"),
                serde_json::Value::Null,
            )
        })?;
    if let Some(why) = a.stop.fired() {
        return Err(interrupt_error(why, a.timeout_ms));
    }
    let frame = MediaFrame {
        stream_id: p.stream_id,
        frame_index: p.frame_index,
        key_frame: true,
        duration_ms: p.duration_ms,
        evidence: asset.clone(),
    };
    let mut event = a.event(TestEventPayload::MediaFrameCaptured {
        frame: frame.clone(),
    });
    event.evidence = vec![asset];
    a.host
        .store
        .append_one(session.id, event)
        .await
        .map_err(store_error)?;
    *progress = Progress {
        last: Some(frame.clone()),
        frame_count: index,
        ended: false,
    };
    Ok(MediaStreamCaptureResult { frame })
}
