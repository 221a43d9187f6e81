//! The event stream's methods: `events.stream.open` (on the control
//! connection) mints an endpoint; `events.subscribe` (on the socket) starts
//! the pump, which sends the Session's events in sequence order, then one
//! typed terminal.
//!
//! Events are read from the store page by page, so a subscriber costs a
//! bounded amount of memory; one that stops reading is ended with
//! `slowConsumer` rather than buffered without limit.

use std::sync::Arc;
use std::time::Duration;

use devicerail_host_protocol::{
    ErrorCode, ErrorInfo, EventStreamCursor, EventStreamOriginPolicy, EventsStreamOpenParams,
    EventsStreamOpenResult, EventsStreamTerminalNotification, EventsStreamTerminalParams,
    EventsStreamTermination, EventsSubscribeParams, EventsSubscribeResult, JsonRpcVersion,
    MAX_FRAME_BYTES, RpcError, SafeU64, SessionId, StreamEpoch, SubscriptionId,
};
use serde_json::json;

use crate::connection::Connection;
use crate::handlers::call::Call;
use crate::handlers::{existing_session, store_error};
use crate::state::Host;
use crate::stream_gate::{MAX_SUBSCRIBERS, OpenError, SubscriberGuard, cursor};
use devicerail_host_store::event_store::EventStore;

/// How long a full subscriber queue is tolerated.
const SLOW_CONSUMER_GRACE: Duration = Duration::from_secs(2);
/// Events read from the store per page.
const PAGE: u64 = 256;

/// One running subscription.
#[derive(Debug)]
pub(crate) struct Subscription {
    pub id: SubscriptionId,
    pub session: SessionId,
    pub epoch: StreamEpoch,
    /// Events up to this sequence were confirmed before; the pump starts
    /// after it.
    pub after: u64,
    /// The negotiated minor: newer events end the stream instead.
    pub minor: u16,
    /// The last sequence of a Session that had already ended at subscribe
    /// time (a resume at its end has nothing left to send).
    pub ended_at: Option<u64>,
    pub _guard: SubscriberGuard,
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

/// `events.stream.open`.
pub(crate) async fn open(call: &mut Call) -> Result<EventsStreamOpenResult, RpcError> {
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
        .open(
            call.host.shutdown.is_cancelled(),
            p.session_id,
            p.origin_policy,
        )
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
/// always precedes the first event). Returns whether it subscribed (the
/// caller closes the socket when it did not).
pub(crate) async fn subscribe(call: &mut Call) -> bool {
    let id = call.id.clone();
    let conn = call.conn.clone();
    match prepare_subscription(call).await {
        Ok((result, after, guard)) => {
            conn.respond(&id, Ok::<_, RpcError>(&result)).await;
            conn.pump_started();
            tokio::spawn(pump(
                call.host.clone(),
                conn,
                Subscription {
                    id: result.subscription_id,
                    session: result.session_id,
                    epoch: call.host.epoch,
                    after,
                    minor: call.neg.version.minor,
                    ended_at: (result.session_state
                        == devicerail_host_protocol::SessionState::Ended)
                        .then_some(result.replay_through.sequence.get()),
                    _guard: guard,
                },
            ));
            true
        }
        Err(e) => {
            conn.respond_error(Some(&id), e).await;
            false
        }
    }
}

async fn prepare_subscription(
    call: &mut Call,
) -> Result<(EventsSubscribeResult, u64, SubscriberGuard), RpcError> {
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
                p.session_id, MAX_SUBSCRIBERS
            ),
            json!({ "maximumSubscribers": MAX_SUBSCRIBERS }),
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

/// The minimal view of a stored event the pump needs.
#[derive(serde::Deserialize)]
struct Peek {
    payload: PeekPayload,
}

#[derive(serde::Deserialize)]
struct PeekPayload {
    #[serde(rename = "type")]
    kind: String,
}

/// `events.stream.event` with the event JSON exactly as stored.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EventNote<'a> {
    jsonrpc: JsonRpcVersion,
    method: devicerail_host_protocol::envelope::EventsStreamEventMethod,
    params: EventNoteParams<'a>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct EventNoteParams<'a> {
    subscription_id: SubscriptionId,
    cursor: EventStreamCursor,
    event: &'a serde_json::value::RawValue,
}

/// Why queueing a frame failed.
enum Push {
    Slow,
    Gone,
}

async fn push(conn: &Connection, frame: Vec<u8>) -> Result<(), Push> {
    match tokio::time::timeout(SLOW_CONSUMER_GRACE, conn.send_stream_frame(frame)).await {
        Ok(true) => Ok(()),
        Ok(false) => Err(Push::Gone),
        Err(_) => Err(Push::Slow),
    }
}

/// Error data of a stream terminal.
fn terminal_error(code: ErrorCode, message: String, details: serde_json::Value) -> ErrorInfo {
    code.info(message)
        .with_details(code.checked_details(details))
}

/// Streams the subscription's Session to the socket until a terminal
/// reason.
pub(crate) async fn pump(host: Arc<Host>, conn: Arc<Connection>, sub: Subscription) {
    let store: &EventStore = &host.store;
    let (session, epoch) = (sub.session, sub.epoch);
    let mut sent = sub.after;
    // Only what this socket sent; a resumed stream starts with none.
    let mut last_cursor: Option<EventStreamCursor> = None;
    let mut changes = store.watch(session, sub.after);
    let termination = 'pump: loop {
        loop {
            let page = match store.events(session, sent, Some(PAGE)).await {
                Ok(p) => p,
                Err(devicerail_host_store::event_store::StoreError::NotFound(_)) => {
                    break 'pump EventsStreamTermination::SessionDeleted {
                        error: terminal_error(
                            ErrorCode::StreamSessionDeleted,
                            "the session was deleted".into(),
                            serde_json::json!({ "lastSequence": sent }),
                        ),
                    };
                }
                Err(e) => {
                    break 'pump EventsStreamTermination::InternalError {
                        error: ErrorCode::StreamInternalError
                            .info(format!("reading the log failed: {e}")),
                    };
                }
            };
            if page.is_empty() {
                if sub.ended_at.is_some_and(|last| sent >= last) {
                    break 'pump EventsStreamTermination::SessionEnded;
                }
                break;
            }
            for row in page {
                if row.sequence != sent + 1 {
                    break 'pump EventsStreamTermination::SequenceGap {
                        error: ErrorCode::StreamSequenceGap.info(format!(
                            "expected sequence {}, read {}",
                            sent + 1,
                            row.sequence
                        )),
                    };
                }
                if row.min_minor > sub.minor {
                    break 'pump EventsStreamTermination::InternalError {
                        error: terminal_error(
                            ErrorCode::StreamEventProtocolIncompatible,
                            format!(
                                "event {} needs protocol 1.{}, but the stream negotiated 1.{}",
                                row.sequence, row.min_minor, sub.minor
                            ),
                            serde_json::json!({
                                "selectedProtocol": { "major": 1, "minor": sub.minor },
                                "requiredProtocol": { "major": 1, "minor": row.min_minor },
                                "sequence": row.sequence,
                            }),
                        ),
                    };
                }
                let Ok(peek) = serde_json::from_str::<Peek>(row.json.get()) else {
                    break 'pump EventsStreamTermination::InternalError {
                        error: ErrorCode::StreamInternalError.info("a stored event is unreadable"),
                    };
                };
                let c = cursor(epoch, session, row.sequence);
                let note = EventNote {
                    jsonrpc: JsonRpcVersion,
                    method: Default::default(),
                    params: EventNoteParams {
                        subscription_id: sub.id,
                        cursor: c,
                        event: &row.json,
                    },
                };
                let frame = serde_json::to_vec(&note).unwrap_or_default();
                if frame.len() > MAX_FRAME_BYTES {
                    break 'pump EventsStreamTermination::EventTooLarge {
                        error: terminal_error(
                            ErrorCode::StreamEventTooLarge,
                            format!(
                                "event {} is {} bytes, over the {MAX_FRAME_BYTES}-byte message limit",
                                row.sequence,
                                frame.len()
                            ),
                            serde_json::json!({
                                "observedBytesAtLeast": frame.len(),
                                "limitBytes": MAX_FRAME_BYTES,
                            }),
                        ),
                    };
                }
                match push(&conn, frame).await {
                    Ok(()) => {}
                    Err(Push::Gone) => {
                        conn.pump_finished();
                        return;
                    }
                    Err(Push::Slow) => {
                        let last = (*changes.borrow()).max(row.sequence);
                        break 'pump EventsStreamTermination::SlowConsumer {
                            error: terminal_error(
                                ErrorCode::StreamSlowConsumer,
                                "the subscriber exceeded its bounded queue".into(),
                                serde_json::json!({
                                    "lastDelivered": sent,
                                    "missedEvents": last.saturating_sub(sent),
                                }),
                            ),
                        };
                    }
                }
                sent = row.sequence;
                last_cursor = Some(c);
                if peek.payload.kind == "sessionEnded" {
                    break 'pump EventsStreamTermination::SessionEnded;
                }
            }
        }
        tokio::select! {
            _ = host.shutdown.cancelled() => {
                break EventsStreamTermination::ServerShutdown {
                    error: ErrorCode::StreamServerShutdown.info("the host is shutting down"),
                };
            }
            _ = conn.closed() => {
                conn.pump_finished();
                return;
            }
            r = changes.changed() => {
                if r.is_err() || *changes.borrow() == u64::MAX {
                    break EventsStreamTermination::SessionDeleted {
                        error: terminal_error(
                            ErrorCode::StreamSessionDeleted,
                            "the session was deleted".into(),
                            serde_json::json!({ "lastSequence": sent }),
                        ),
                    };
                }
            }
        }
    };
    let terminal = EventsStreamTerminalNotification {
        jsonrpc: JsonRpcVersion,
        method: Default::default(),
        params: EventsStreamTerminalParams {
            subscription_id: sub.id,
            session_id: session,
            last_emitted_cursor: last_cursor,
            termination,
        },
    };
    let frame = serde_json::to_vec(&terminal).unwrap_or_default();
    // The terminal is delivered after everything already queued; a
    // subscriber that is gone simply misses it.
    let _ = tokio::time::timeout(Duration::from_secs(10), conn.send_stream_frame(frame)).await;
    let _ = tokio::time::timeout(Duration::from_secs(10), conn.send_stream_frame(Vec::new())).await;
    conn.pump_finished();
    conn.close_stream();
}
