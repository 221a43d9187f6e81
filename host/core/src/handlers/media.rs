//! Media streams (`media.stream.start`, `capture`, `end`): Session-scoped
//! sequences of screenshot Evidence the host captures from the stream's
//! device. A capture is a device request (concurrent, with deadlines);
//! start and end are answered inline.

use std::sync::Arc;

use devicerail_host_protocol::{
    ErrorCode, MediaFrame, MediaStreamCaptureParams, MediaStreamCaptureResult,
    MediaStreamEndParams, MediaStreamEndResult, MediaStreamId, MediaStreamInfo, MediaStreamKind,
    MediaStreamStartParams, MediaStreamStartResult, PNG_MEDIA_TYPE, RpcError, SafeU64,
    TestEventPayload,
};
use serde_json::json;

use crate::connection::{ActiveSession, Connection};
use crate::handlers::call::Call;
use crate::handlers::device::{look, record};
use crate::handlers::request::Accepted;
use crate::handlers::{routing, session_required, store_error};
use crate::media::{
    MAX_ACTIVE_STREAMS, MAX_FRAMES_PER_STREAM, MAX_SESSION_STREAMS, MediaStream, Progress,
};
use crate::state::Host;
use devicerail_host_config::ScreenshotPolicy;
use devicerail_host_store::event_store::NewEvent;

fn stream_not_found(id: &MediaStreamId) -> RpcError {
    ErrorCode::MediaStreamNotFound.rpc(
        format!("this connection's session has no media stream {id}"),
        json!({ "streamId": id }),
    )
}

fn stream_busy(id: &MediaStreamId) -> RpcError {
    ErrorCode::MediaStreamBusy.rpc(
        format!("a capture of media stream {id} is running"),
        json!({ "streamId": id }),
    )
}

/// `media.stream.start`.
pub(crate) async fn start(call: &mut Call) -> Result<MediaStreamStartResult, RpcError> {
    let p: MediaStreamStartParams = call.params()?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("media.stream.start"))?;
    if call.host.config.screenshot_policy == ScreenshotPolicy::Omit {
        // The screenshot capture behind media streams is switched off.
        return Err(ErrorCode::MethodNotFound.rpc(
            "media streams need screenshot capture, which this host's screenshot policy (omit) disables",
            json!({ "method": "media.stream.start" }),
        ));
    }
    let route = routing::resolve(&call.host, &call.conn)?;
    if let Some(existing) = session.stream(&p.stream_id) {
        // An identical start is answered with the first one's stream.
        if existing.info.kind == p.kind && existing.route.device == route.device {
            return Ok(MediaStreamStartResult {
                stream: existing.info.clone(),
            });
        }
        return Err(ErrorCode::MediaStreamConflict.rpc(
            format!(
                "media stream {} was started with another kind or device",
                p.stream_id
            ),
            json!({ "streamId": p.stream_id }),
        ));
    }
    admit_stream(&session)?;
    if session.sensitive_in_flight() {
        return Err(ErrorCode::MediaStreamSensitiveActionInFlight.rpc(
            "a protected or unclassified action is running; start the stream after it",
            serde_json::Value::Null,
        ));
    }
    if !call.host.is_connected(&route.device) {
        return Err(ErrorCode::DeviceNotConnected.rpc(
            format!(
                "device {} is not connected; call device.connect first",
                route.device
            ),
            json!({ "deviceId": route.device }),
        ));
    }
    let info = MediaStreamInfo {
        id: p.stream_id,
        kind: p.kind,
        media_type: devicerail_host_protocol::BoundedString::truncating(PNG_MEDIA_TYPE)
            .unwrap_or_else(|| unreachable!()),
        viewport: None,
    };
    let device = route.device.clone();
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
        .streams
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(p.stream_id, Arc::new(MediaStream::new(info.clone(), route)));
    Ok(MediaStreamStartResult { stream: info })
}

/// The Session's stream limits: [`MAX_ACTIVE_STREAMS`] un-ended at once,
/// [`MAX_SESSION_STREAMS`] in all (checked in that order, as the reference
/// daemon does).
fn admit_stream(session: &ActiveSession) -> Result<(), RpcError> {
    let streams = session.streams.lock().unwrap_or_else(|p| p.into_inner());
    if streams.values().filter(|s| !s.is_ended()).count() >= MAX_ACTIVE_STREAMS {
        return Err(ErrorCode::MediaStreamActiveLimit.rpc(
            format!("{MAX_ACTIVE_STREAMS} media streams of this session are open; end one first"),
            json!({ "limit": MAX_ACTIVE_STREAMS }),
        ));
    }
    if streams.len() >= MAX_SESSION_STREAMS {
        return Err(ErrorCode::MediaStreamSessionLimit.rpc(
            format!("this session has started its {MAX_SESSION_STREAMS} media streams"),
            json!({ "limit": MAX_SESSION_STREAMS }),
        ));
    }
    Ok(())
}

/// Ends one open stream of `session`, recording `mediaStreamEnded`; an
/// ended stream answers with its final count again.
pub(crate) async fn end_stream(
    host: &Arc<Host>,
    session: &Arc<ActiveSession>,
    id: MediaStreamId,
    request_id: Option<devicerail_host_protocol::RpcId>,
) -> Result<MediaStreamEndResult, RpcError> {
    let stream = session.stream(&id).ok_or_else(|| stream_not_found(&id))?;
    let progress = stream.progress.try_lock().map_err(|_| stream_busy(&id))?;
    let frame_count = SafeU64::saturating(progress.frame_count);
    if stream.is_ended() {
        return Ok(MediaStreamEndResult {
            stream_id: id,
            frame_count,
        });
    }
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
    stream.mark_ended();
    Ok(MediaStreamEndResult {
        stream_id: id,
        frame_count,
    })
}

/// `media.stream.end`.
pub(crate) async fn end(call: &mut Call) -> Result<MediaStreamEndResult, RpcError> {
    let p: MediaStreamEndParams = call.params()?;
    let session = call
        .conn
        .session()
        .ok_or_else(|| session_required("media.stream.end"))?;
    end_stream(&call.host, &session, p.stream_id, Some(call.id.clone())).await
}

/// The route a capture must use: the stream's bound device.
pub(crate) fn capture_route(
    conn: &Connection,
    id: &MediaStreamId,
) -> Result<devicerail_host_engine::registry::Route, RpcError> {
    let session = conn
        .session()
        .ok_or_else(|| session_required("media.stream.capture"))?;
    session
        .stream(id)
        .map(|s| s.route.clone())
        .ok_or_else(|| stream_not_found(id))
}

/// The media type of image bytes, as far as their signature tells.
fn sniff_media_type(bytes: &[u8]) -> &'static str {
    if crate::recorder::png_dimensions(bytes).is_some() {
        PNG_MEDIA_TYPE
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        "image/jpeg"
    } else {
        "application/octet-stream"
    }
}

/// `media.stream.capture` (a device request: runs concurrently, honours
/// `timeoutMs` and cancellation).
pub(crate) async fn capture(
    a: &Accepted,
    p: MediaStreamCaptureParams,
) -> Result<MediaStreamCaptureResult, RpcError> {
    let session = a
        .session
        .clone()
        .ok_or_else(|| session_required("media.stream.capture"))?;
    let id = p.stream_id;
    let stream = session.stream(&id).ok_or_else(|| stream_not_found(&id))?;
    let mut progress = stream.progress.try_lock().map_err(|_| stream_busy(&id))?;
    let duration = p.duration_ms.map(|d| d.get());
    let invalid = |why: &str| {
        ErrorCode::InvalidMediaFrame.rpc(
            format!("invalid frame for media stream {id}: {why}"),
            json!({ "streamId": id }),
        )
    };
    match (stream.info.kind, duration) {
        (MediaStreamKind::Video, None | Some(0)) => {
            return Err(invalid("a video frame needs a positive durationMs"));
        }
        (MediaStreamKind::Screenshot, Some(_)) => {
            return Err(invalid("a screenshot frame takes no durationMs"));
        }
        _ => {}
    }
    let index = p.frame_index.get();
    if let Some(last) = &progress.last
        && index == last.frame_index.get()
    {
        // An exact retry of the last committed frame returns it.
        return if last.duration_ms.map(|d| d.get()) == duration {
            Ok(MediaStreamCaptureResult {
                frame: last.clone(),
            })
        } else {
            Err(ErrorCode::MediaFrameRetryConflict.rpc(
                format!("frame {index} was captured with another durationMs"),
                json!({ "streamId": id, "frameIndex": index }),
            ))
        };
    }
    if stream.is_ended() {
        return Err(ErrorCode::MediaStreamEnded.rpc(
            format!("media stream {id} has ended"),
            json!({ "streamId": id }),
        ));
    }
    if progress.frame_count >= MAX_FRAMES_PER_STREAM {
        return Err(ErrorCode::MediaStreamFrameLimit.rpc(
            format!("media stream {id} holds its {MAX_FRAMES_PER_STREAM} frames; start another"),
            json!({ "limit": MAX_FRAMES_PER_STREAM }),
        ));
    }
    let expected = progress.frame_count + 1;
    if index != expected {
        return Err(ErrorCode::MediaFrameOutOfOrder.rpc(
            format!("the next frame of stream {id} is {expected}, not {index}"),
            json!({ "streamId": id, "frameIndex": index, "expectedFrameIndex": expected }),
        ));
    }
    if let Err(retry_after_ms) = progress.admit(std::time::Instant::now()) {
        return Err(ErrorCode::MediaCaptureRateLimited.rpc(
            format!(
                "media stream {id} was captured less than 50 ms ago; retry in {retry_after_ms} ms"
            ),
            json!({ "streamId": id, "retryAfterMs": retry_after_ms }),
        ));
    }
    // The frame is an ordinary Observation of the device (its UI tree too,
    // where negotiated), recorded before the frame that names its
    // screenshot, both in one commit.
    let looked = look(a).await?;
    let media_type = looked.obs.png.as_deref().map(sniff_media_type);
    match media_type {
        None => {
            return Err(ErrorCode::MediaCaptureUnavailable.rpc(
                "the device returned no screenshot for the frame",
                json!({ "streamId": id }),
            ));
        }
        Some(PNG_MEDIA_TYPE) => {}
        Some(other) => {
            return Err(ErrorCode::MediaCaptureFormatUnsupported.rpc(
                format!("the device's screenshot is {other}, not the stream's image/png"),
                json!({ "streamId": id, "mediaType": other }),
            ));
        }
    }
    let (observation, observed) = record(a, looked).await?;
    let evidence = observation.screenshot.clone().ok_or_else(|| {
        ErrorCode::MediaCaptureUnavailable.rpc(
            "the observation recorded no screenshot for the frame",
            json!({ "streamId": id }),
        )
    })?;
    let frame = MediaFrame {
        stream_id: id,
        frame_index: p.frame_index,
        key_frame: true,
        duration_ms: p.duration_ms,
        evidence: evidence.clone(),
    };
    let mut captured = a.event(TestEventPayload::MediaFrameCaptured {
        frame: frame.clone(),
    });
    captured.evidence = vec![evidence];
    a.host
        .store
        .append(session.id, vec![observed, captured])
        .await
        .map_err(store_error)?;
    *progress = Progress {
        last: Some(frame.clone()),
        frame_count: index,
        last_admitted: progress.last_admitted,
    };
    Ok(MediaStreamCaptureResult { frame })
}
