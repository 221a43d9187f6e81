//! The loopback WebSocket event stream (`events.stream.v1`).
//!
//! `events.stream.open` mints a short-lived, single-use capability bound to
//! one Session and one Origin policy; its endpoint is
//! `ws://127.0.0.1:PORT/v/<64 hex>`, with 256 random bits, and is never
//! logged. The server binds 127.0.0.1 only when the first endpoint is
//! opened, checks the exact `Host`, the `Origin` policy and the
//! `devicerail.events.v1` subprotocol, and spends the capability on upgrade.
//! On the socket: `system.hello`, then one `events.subscribe`, then
//! `events.stream.event` notifications in sequence order, then exactly one
//! `events.stream.terminal` and a normal close.
//!
//! Events are read from the store page by page, so a subscriber costs a
//! bounded amount of memory; one that stops reading is ended with
//! `slowConsumer` rather than buffered without limit.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use devicerail_protocol::{
    ErrorCode, EventStreamCursor, EventStreamEndpoint, EventStreamOriginPolicy,
    EventsStreamEventNotification, EventsStreamEventParams, EventsStreamTerminalNotification,
    EventsStreamTerminalParams, EventsStreamTermination, JsonRpcVersion, MAX_FRAME_BYTES,
    SessionId, StreamEpoch, SubscriptionId, TestEvent, TransportInfo,
};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OnceCell, mpsc};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::{
    CloseFrame, WebSocketConfig, frame::coding::CloseCode,
};

use crate::connection::Connection;
use crate::dispatch::handle_line_boxed;
use crate::event_store::{EventStore, now_ms};
use crate::state::Host;

/// The subprotocol a client must offer.
pub const SUBPROTOCOL: &str = "devicerail.events.v1";
/// How long an opened endpoint stays usable (default).
pub const CAPABILITY_TTL: Duration = Duration::from_secs(30);
/// Environment variable overriding [`CAPABILITY_TTL`] in milliseconds.
pub const TTL_ENV: &str = "DEVICERAIL_EVENT_STREAM_TTL_MS";

fn capability_ttl() -> Duration {
    static TTL: std::sync::OnceLock<Duration> = std::sync::OnceLock::new();
    *TTL.get_or_init(|| {
        std::env::var(TTL_ENV)
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|ms| *ms > 0)
            .map_or(CAPABILITY_TTL, Duration::from_millis)
    })
}
/// Frames a subscriber may have queued before it counts as slow.
const SUBSCRIBER_QUEUE: usize = 1024;
/// How long a full subscriber queue is tolerated.
const SLOW_CONSUMER_GRACE: Duration = Duration::from_secs(2);
/// Events read from the store per page.
const PAGE: u64 = 256;

/// One minted, not yet spent capability.
#[derive(Debug, Clone)]
struct Capability {
    session: SessionId,
    origin: EventStreamOriginPolicy,
    expires: Instant,
}

/// The stream server of one host process.
pub struct StreamServer {
    addr: OnceCell<SocketAddr>,
    capabilities: Mutex<HashMap<String, Capability>>,
}

/// What the upgrade checks bound to an accepted socket.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub session: SessionId,
}

impl Default for StreamServer {
    fn default() -> Self {
        Self {
            addr: OnceCell::new(),
            capabilities: Mutex::new(HashMap::new()),
        }
    }
}

fn random_token() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl StreamServer {
    /// Mints an endpoint for `session` (binding the server on first use).
    pub async fn open(
        &self,
        host: &Arc<Host>,
        session: SessionId,
        origin: EventStreamOriginPolicy,
    ) -> Result<(EventStreamEndpoint, u64), String> {
        let addr = *self
            .addr
            .get_or_try_init(|| async {
                let listener = TcpListener::bind(("127.0.0.1", 0))
                    .await
                    .map_err(|e| format!("cannot bind: {e}"))?;
                let addr = listener.local_addr().map_err(|e| e.to_string())?;
                tokio::spawn(accept_loop(host.clone(), listener, addr));
                tracing::info!(
                    port = addr.port(),
                    "event stream server listening on 127.0.0.1"
                );
                Ok::<_, String>(addr)
            })
            .await?;
        let token = random_token().map_err(|e| format!("no randomness: {e}"))?;
        let ttl = capability_ttl();
        let expires = Instant::now() + ttl;
        let expires_at_ms = now_ms().get() + u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX / 2);
        {
            let mut caps = self.capabilities.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            caps.retain(|_, c| c.expires > now);
            caps.insert(
                token.clone(),
                Capability {
                    session,
                    origin,
                    expires,
                },
            );
        }
        let endpoint = EventStreamEndpoint::new(format!("ws://{addr}/v/{token}"))?;
        Ok((endpoint, expires_at_ms))
    }

    /// Checks an upgrade request and spends its capability.
    fn admit(
        &self,
        addr: SocketAddr,
        req: &Request,
    ) -> Result<Binding, (StatusCode, &'static str)> {
        let expected_host = addr.to_string();
        let host = req.headers().get("host").and_then(|h| h.to_str().ok());
        if host != Some(expected_host.as_str()) {
            return Err((
                StatusCode::MISDIRECTED_REQUEST,
                "the Host header must name this loopback endpoint exactly",
            ));
        }
        let token = req.uri().path().strip_prefix("/v/").unwrap_or("");
        let offered = req
            .headers()
            .get_all("sec-websocket-protocol")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|p| p.trim() == SUBPROTOCOL);
        let mut caps = self.capabilities.lock().unwrap_or_else(|p| p.into_inner());
        let Some(cap) = caps.get(token).cloned() else {
            return Err((StatusCode::FORBIDDEN, "unknown or spent stream capability"));
        };
        if cap.expires <= Instant::now() {
            caps.remove(token);
            return Err((StatusCode::FORBIDDEN, "the stream capability expired"));
        }
        let origin = req.headers().get("origin").and_then(|o| o.to_str().ok());
        let origin_ok = match (&cap.origin, origin) {
            (EventStreamOriginPolicy::Absent, None) => true,
            (EventStreamOriginPolicy::Exact { origin: want }, Some(got)) => want == got,
            _ => false,
        };
        if !origin_ok {
            return Err((
                StatusCode::FORBIDDEN,
                "the Origin does not match the stream's origin policy",
            ));
        }
        if !offered {
            return Err((
                StatusCode::BAD_REQUEST,
                "the devicerail.events.v1 subprotocol is required",
            ));
        }
        // Single use: spent on the first successful upgrade.
        caps.remove(token);
        Ok(Binding {
            session: cap.session,
        })
    }
}

async fn accept_loop(host: Arc<Host>, listener: TcpListener, addr: SocketAddr) {
    loop {
        let accepted = tokio::select! {
            _ = host.shutdown.cancelled() => return,
            a = listener.accept() => a,
        };
        match accepted {
            Ok((stream, peer)) => {
                if !peer.ip().is_loopback() {
                    continue;
                }
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_socket(host.clone(), stream, addr));
            }
            Err(e) => {
                tracing::warn!("event stream accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

async fn serve_socket(host: Arc<Host>, stream: TcpStream, addr: SocketAddr) {
    let mut binding = None;
    // The signature is tungstenite's upgrade callback contract.
    #[allow(clippy::result_large_err)]
    let callback = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        match host.streams.admit(addr, req) {
            Ok(b) => {
                binding = Some(b);
                resp.headers_mut().insert(
                    "sec-websocket-protocol",
                    HeaderValue::from_static(SUBPROTOCOL),
                );
                Ok(resp)
            }
            Err((status, why)) => {
                tracing::warn!(
                    status = status.as_u16(),
                    "event stream upgrade refused: {why}"
                );
                let mut r = ErrorResponse::new(Some(why.to_owned()));
                *r.status_mut() = status;
                Err(r)
            }
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_FRAME_BYTES))
        .max_frame_size(Some(MAX_FRAME_BYTES));
    let ws = match tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config))
        .await
    {
        Ok(ws) => ws,
        Err(e) => {
            tracing::debug!("event stream handshake failed: {e}");
            return;
        }
    };
    let Some(binding) = binding else { return };
    let (mut sink, mut source) = ws.split();
    let (out, mut frames) = mpsc::channel::<Vec<u8>>(SUBSCRIBER_QUEUE);
    let conn = Connection::new_stream(TransportInfo::web_socket(), out, binding);
    let writer = tokio::spawn(async move {
        while let Some(frame) = frames.recv().await {
            if frame.is_empty() {
                // The terminal was sent: close normally.
                let close = CloseFrame {
                    code: CloseCode::Normal,
                    reason: "stream complete".into(),
                };
                let _ = sink.send(Message::Close(Some(close))).await;
                break;
            }
            let text = String::from_utf8(frame).unwrap_or_default();
            if sink.send(Message::text(text)).await.is_err() {
                break;
            }
        }
        let _ = sink.close().await;
    });
    loop {
        let msg = tokio::select! {
            _ = host.shutdown.cancelled() => break,
            _ = conn.closed() => break,
            m = source.next() => m,
        };
        match msg {
            Some(Ok(Message::Text(text))) => {
                handle_line_boxed(host.clone(), conn.clone(), text.as_bytes().to_vec()).await
            }
            Some(Ok(Message::Binary(bytes))) => {
                handle_line_boxed(host.clone(), conn.clone(), bytes.to_vec()).await
            }
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => {}
        }
    }
    conn.close_stream();
    // Let a running pump finish its terminal, then stop the writer.
    let _ = tokio::time::timeout(Duration::from_secs(5), conn.pump_done()).await;
    drop(conn);
    let abort = writer.abort_handle();
    if tokio::time::timeout(Duration::from_secs(5), writer)
        .await
        .is_err()
    {
        abort.abort();
    }
}

/// The minimal view of a stored event the pump needs.
#[derive(serde::Deserialize)]
struct Peek {
    sequence: u64,
    payload: PeekPayload,
}

#[derive(serde::Deserialize)]
struct PeekPayload {
    #[serde(rename = "type")]
    kind: String,
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

/// Streams `session` after `after` to the socket until a terminal reason.
pub async fn pump(
    host: Arc<Host>,
    conn: Arc<Connection>,
    subscription: SubscriptionId,
    session: SessionId,
    epoch: StreamEpoch,
    after: u64,
) {
    let store: &EventStore = &host.store;
    let mut sent = after;
    let mut last_cursor = (after > 0).then(|| cursor(epoch, session, after));
    let mut changes = store.watch(session, after);
    let termination = 'pump: loop {
        loop {
            let page = match store.events(session, sent, Some(PAGE)).await {
                Ok(p) => p,
                Err(crate::event_store::StoreError::NotFound(_)) => {
                    break 'pump EventsStreamTermination::SessionDeleted {
                        error: ErrorCode::StreamSessionDeleted.info("the session was deleted"),
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
                break;
            }
            for raw in page {
                let Ok(peek) = serde_json::from_str::<Peek>(raw.get()) else {
                    break 'pump EventsStreamTermination::InternalError {
                        error: ErrorCode::StreamInternalError.info("a stored event is unreadable"),
                    };
                };
                if peek.sequence != sent + 1 {
                    break 'pump EventsStreamTermination::SequenceGap {
                        error: ErrorCode::StreamSequenceGap.info(format!(
                            "expected sequence {}, read {}",
                            sent + 1,
                            peek.sequence
                        )),
                    };
                }
                let event: TestEvent = match serde_json::from_str(raw.get()) {
                    Ok(e) => e,
                    Err(e) => {
                        break 'pump EventsStreamTermination::InternalError {
                            error: ErrorCode::StreamInternalError
                                .info(format!("a stored event is invalid: {e}")),
                        };
                    }
                };
                let c = cursor(epoch, session, peek.sequence);
                let note = EventsStreamEventNotification {
                    jsonrpc: JsonRpcVersion,
                    method: Default::default(),
                    params: EventsStreamEventParams {
                        subscription_id: subscription,
                        cursor: c,
                        event,
                    },
                };
                let frame = serde_json::to_vec(&note).unwrap_or_default();
                if frame.len() > MAX_FRAME_BYTES {
                    break 'pump EventsStreamTermination::EventTooLarge {
                        error: ErrorCode::StreamEventTooLarge.info(format!(
                            "event {} is {} bytes, over the {MAX_FRAME_BYTES}-byte message limit",
                            peek.sequence,
                            frame.len()
                        )),
                    };
                }
                match push(&conn, frame).await {
                    Ok(()) => {}
                    Err(Push::Gone) => {
                        conn.pump_finished();
                        return;
                    }
                    Err(Push::Slow) => {
                        break 'pump EventsStreamTermination::SlowConsumer {
                            error: ErrorCode::StreamSlowConsumer
                                .info("the subscriber exceeded its bounded queue"),
                        };
                    }
                }
                sent = peek.sequence;
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
                        error: ErrorCode::StreamSessionDeleted.info("the session was deleted"),
                    };
                }
            }
        }
    };
    let terminal = EventsStreamTerminalNotification {
        jsonrpc: JsonRpcVersion,
        method: Default::default(),
        params: EventsStreamTerminalParams {
            subscription_id: subscription,
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

pub fn cursor(epoch: StreamEpoch, session: SessionId, sequence: u64) -> EventStreamCursor {
    EventStreamCursor {
        stream_epoch: epoch,
        session_id: session,
        sequence: devicerail_protocol::EventSequence::saturating(sequence),
    }
}
