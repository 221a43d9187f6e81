//! The streaming planes: `events.stream.open` (stdio), `events.subscribe`
//! (the WebSocket) and `media.stream.start`/`capture`/`end`.

use std::sync::Arc;

use devicerail_plugin_api::ObserveRequest;
use devicerail_protocol::{
    ErrorCode, EventStreamOriginPolicy, EventsStreamOpenParams, EventsStreamOpenResult,
    EventsSubscribeParams, EventsSubscribeResult, MediaFrame, MediaStreamCaptureParams,
    MediaStreamCaptureResult, MediaStreamEndParams, MediaStreamEndResult, MediaStreamId,
    MediaStreamInfo, MediaStreamKind, MediaStreamStartParams, MediaStreamStartResult, MethodId,
    ObservationId, PNG_MEDIA_TYPE, RpcError, SafeU64, SubscriptionId, TestEventPayload,
};
use serde_json::json;

use crate::connection::{ActiveSession, Connection};
use crate::dispatch::Call;
use crate::event_store::NewEvent;
use crate::event_stream::{self, OpenError, cursor};
use crate::handlers::device::{Accepted, call_driver, interrupt_error, require_connected};
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

/// Whether an exact origin is `http(s)://127.0.0.1:<port>` with an explicit,
/// non-default port, at most 256 ASCII characters.
fn valid_exact_origin(origin: &str) -> bool {
    if origin.len() > 256 || !origin.is_ascii() {
        return false;
    }
    let (rest, default_port) = if let Some(r) = origin.strip_prefix("http://127.0.0.1:") {
        (r, 80)
    } else if let Some(r) = origin.strip_prefix("https://127.0.0.1:") {
        (r, 443)
    } else {
        return false;
    };
    let canonical =
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) && !rest.starts_with('0');
    canonical
        && rest
            .parse::<u16>()
            .is_ok_and(|p| p != 0 && p != default_port)
}

async fn open(call: &mut Call) -> Result<EventsStreamOpenResult, RpcError> {
    let p: EventsStreamOpenParams = call.params()?;
    if let EventStreamOriginPolicy::Exact { origin } = &p.origin_policy
        && !valid_exact_origin(origin)
    {
        return Err(ErrorCode::InvalidStreamOrigin.rpc(
            "an exact origin must be http(s)://127.0.0.1:<port> with an explicit, non-default port",
            serde_json::Value::Null,
        ));
    }
    existing_session(&call.host, p.session_id).await?;
    let (endpoint, expires_at_ms) = call
        .host
        .streams
        .open(&call.host, p.session_id, p.origin_policy)
        .await
        .map_err(|e| match e {
            OpenError::ShuttingDown => ErrorCode::StreamServerShutdown
                .rpc("the host is shutting down", serde_json::Value::Null),
            OpenError::CapabilityLimit(limit) => ErrorCode::StreamCapabilityLimit.rpc(
                format!(
                    "{limit} unused stream endpoints are already pending; use or let them expire"
                ),
                serde_json::Value::Null,
            ),
            other => ErrorCode::StreamTransportError.rpc(
                format!("cannot open the event stream: {other}"),
                serde_json::Value::Null,
            ),
        })?;
    tracing::info!(session = %p.session_id, "event stream endpoint opened");
    Ok(EventsStreamOpenResult {
        endpoint,
        stream_epoch: call.host.epoch,
        expires_at_ms: SafeU64::saturating(expires_at_ms),
    })
}

/// `events.subscribe`: answers, then starts the pump (so the response
/// always precedes the first event). A failed subscription closes the
/// socket (close code 1008).
pub async fn subscribe(call: &mut Call) {
    let id = call.id.clone();
    let conn = call.conn.clone();
    match prepare_subscription(call).await {
        Ok((result, after, guard)) => {
            conn.respond(&id, Ok::<_, RpcError>(&result)).await;
            conn.pump_started();
            tokio::spawn(event_stream::pump(
                call.host.clone(),
                conn,
                event_stream::Subscription {
                    id: result.subscription_id,
                    session: result.session_id,
                    epoch: call.host.epoch,
                    after,
                    minor: call.neg.version.minor,
                    ended_at: (result.session_state == devicerail_protocol::SessionState::Ended)
                        .then_some(result.replay_through.sequence.get()),
                    _guard: guard,
                },
            ));
        }
        Err(e) => {
            conn.respond_error(Some(&id), e).await;
            conn.fail_stream(event_stream::CLOSE_POLICY).await;
        }
    }
}

async fn prepare_subscription(
    call: &mut Call,
) -> Result<(EventsSubscribeResult, u64, event_stream::SubscriberGuard), RpcError> {
    let p: EventsSubscribeParams = call.params()?;
    let Some(stream) = &call.conn.stream else {
        return Err(ErrorCode::MethodNotFound.rpc(
            "events.subscribe is served on the event stream only",
            json!({ "method": "events.subscribe" }),
        ));
    };
    let bound = stream.binding.session;
    let cursor_session = p.after_cursor.as_ref().map(|c| c.session_id);
    if p.session_id != bound || cursor_session.is_some_and(|s| s != bound) {
        return Err(ErrorCode::StreamCursorSessionMismatch.rpc(
            format!("this endpoint is bound to session {bound}"),
            serde_json::Value::Null,
        ));
    }
    if let Some(c) = &p.after_cursor
        && c.stream_epoch != call.host.epoch
    {
        return Err(ErrorCode::StreamCursorEpochMismatch.rpc(
            "the cursor belongs to another daemon lifetime; resume from a cursor of this one (or from the start)",
            serde_json::Value::Null,
        ));
    }
    // The endpoint was opened for an existing Session: gone now means
    // deleted.
    let info = call
        .host
        .store
        .session(p.session_id)
        .await
        .map_err(store_error)?
        .ok_or_else(|| {
            ErrorCode::StreamSessionDeleted.rpc(
                format!("session {} was deleted", p.session_id),
                json!({ "sessionId": p.session_id }),
            )
        })?;
    let after = p.after_cursor.map_or(0, |c| c.sequence.get());
    if after > info.last_sequence.get() {
        return Err(ErrorCode::StreamCursorAhead.rpc(
            format!(
                "the cursor sequence {after} is beyond the log ({})",
                info.last_sequence
            ),
            json!({ "afterSequence": after, "lastSequence": info.last_sequence }),
        ));
    }
    let guard = call.host.streams.subscribe(p.session_id).ok_or_else(|| {
        ErrorCode::StreamSubscriptionLimit.rpc(
            format!(
                "session {} already has {} subscribers",
                p.session_id,
                event_stream::MAX_SUBSCRIBERS
            ),
            json!({ "maximumSubscribers": event_stream::MAX_SUBSCRIBERS }),
        )
    })?;
    let result = EventsSubscribeResult {
        subscription_id: SubscriptionId::new_v4(),
        session_id: p.session_id,
        replay_through: cursor(call.host.epoch, p.session_id, info.last_sequence.get()),
        session_state: info.state,
    };
    Ok((result, after, guard))
}

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

async fn media_start(call: &mut Call) -> Result<MediaStreamStartResult, RpcError> {
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
        media_type: devicerail_protocol::BoundedString::truncating(PNG_MEDIA_TYPE)
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
        .insert(
            p.stream_id,
            Arc::new(MediaStream::new(info.clone(), session.id, route)),
        );
    Ok(MediaStreamStartResult { stream: info })
}

/// Ends one open stream of `session`, recording `mediaStreamEnded`; an
/// ended stream answers with its final count again.
pub async fn end_stream(
    host: &Arc<Host>,
    session: &Arc<ActiveSession>,
    id: MediaStreamId,
    request_id: Option<devicerail_protocol::RpcId>,
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
    conn: &Connection,
    id: &MediaStreamId,
) -> Result<crate::registry::Route, RpcError> {
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
pub async fn capture(
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
    let expected = progress.frame_count + 1;
    if index != expected {
        return Err(ErrorCode::MediaFrameOutOfOrder.rpc(
            format!("the next frame of stream {id} is {expected}, not {index}"),
            json!({ "streamId": id, "frameIndex": index, "expectedFrameIndex": expected }),
        ));
    }
    require_connected(a)?;
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
        ErrorCode::MediaCaptureUnavailable.rpc(
            "the device returned no screenshot for the frame",
            json!({ "streamId": id }),
        )
    })?;
    let media_type = sniff_media_type(&png);
    if media_type != PNG_MEDIA_TYPE {
        return Err(ErrorCode::MediaCaptureFormatUnsupported.rpc(
            format!("the device's screenshot is {media_type}, not the stream's image/png"),
            json!({ "streamId": id, "mediaType": media_type }),
        ));
    }
    let evidence = a.host.evidence.clone();
    let asset = tokio::task::spawn_blocking(move || evidence.put(&png, PNG_MEDIA_TYPE))
        .await
        .map_err(crate::recorder::storage)?
        .map_err(crate::recorder::storage)?;
    if let Some(why) = a.stop.fired() {
        return Err(interrupt_error(why, a.timeout_ms));
    }
    let frame = MediaFrame {
        stream_id: id,
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
    };
    Ok(MediaStreamCaptureResult { frame })
}
