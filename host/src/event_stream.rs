//! The loopback WebSocket event stream (`events.stream.v1`).
//!
//! `events.stream.open` mints a short-lived, single-use capability bound to
//! one Session and one Origin policy; its endpoint is
//! `ws://127.0.0.1:PORT/v/<64 hex>`, with 256 random bits, and is never
//! logged. At most [`MAX_PENDING_CAPABILITIES`] unused endpoints exist at
//! once. The server binds 127.0.0.1 only when the first endpoint is opened,
//! checks the exact `Host`, the `Origin` policy and the
//! `devicerail.events.v1` subprotocol (any failure: HTTP 403), and spends
//! the capability on upgrade. On the socket: `system.hello` (a failure
//! closes with 1002), then one `events.subscribe` (a failure closes with
//! 1008), then `events.stream.event` notifications in sequence order, then
//! exactly one `events.stream.terminal` and a normal close.
//!
//! Events are read from the store page by page, so a subscriber costs a
//! bounded amount of memory; one that stops reading is ended with
//! `slowConsumer` rather than buffered without limit.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use devicerail_protocol::{
    ErrorCode, ErrorInfo, EventStreamCursor, EventStreamEndpoint, EventStreamOriginPolicy,
    EventsStreamTerminalNotification, EventsStreamTerminalParams, EventsStreamTermination,
    JsonRpcVersion, MAX_FRAME_BYTES, SessionId, StreamEpoch, SubscriptionId, TransportInfo,
};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
use tokio_tungstenite::tungstenite::protocol::{
    CloseFrame, WebSocketConfig, frame::coding::CloseCode,
};

use crate::connection::Connection;
use crate::event_store::{EventStore, now_ms};
use crate::state::Host;
use crate::transport::{Outgoing, OutputQueue};

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
/// Bytes a subscriber may have queued before it counts as slow.
const SUBSCRIBER_BYTES: usize = 8 * 1024 * 1024;
/// How long a full subscriber queue is tolerated.
const SLOW_CONSUMER_GRACE: Duration = Duration::from_secs(2);
/// Events read from the store per page.
const PAGE: u64 = 256;
/// Unused, unexpired endpoints that may exist at once.
pub const MAX_PENDING_CAPABILITIES: usize = 256;
/// Subscribers one Session may have at once.
pub const MAX_SUBSCRIBERS: usize = 128;
/// Sockets open at once (subscribed or not).
pub const MAX_SOCKETS: usize = 256;
/// Sockets that have not subscribed yet, at once.
pub const MAX_PENDING_SOCKETS: usize = 64;
/// How long the HTTP upgrade may take.
pub const UPGRADE_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a socket may take from upgrade to subscription.
pub const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Close code after a failed `system.hello` on the socket.
pub const CLOSE_PROTOCOL: u16 = 1002;
/// Close code after a failed `events.subscribe`.
pub const CLOSE_POLICY: u16 = 1008;
/// The wire versions the event stream serves (it exists from 1.3).
pub const STREAM_PROTOCOL_RANGES: &[devicerail_protocol::ProtocolRange] =
    &[devicerail_protocol::ProtocolRange::new(1, 3, 5)];

/// Why an endpoint could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("the host is shutting down")]
    ShuttingDown,
    #[error("{0} unused endpoints are pending")]
    CapabilityLimit(usize),
    #[error("cannot listen on 127.0.0.1: {0}")]
    Bind(std::io::Error),
    #[error("no randomness for the capability: {0}")]
    Random(getrandom::Error),
    #[error("the endpoint is malformed: {0}")]
    Endpoint(String),
}

/// One minted, not yet spent capability.
#[derive(Debug, Clone)]
struct Capability {
    session: SessionId,
    origin: EventStreamOriginPolicy,
    expires: Instant,
}

type SubscriberCounts = Arc<Mutex<HashMap<SessionId, usize>>>;

/// The stream server of one host process.
pub struct StreamServer {
    addr: OnceCell<SocketAddr>,
    capabilities: Mutex<HashMap<String, Capability>>,
    subscribers: SubscriberCounts,
}

/// What the upgrade checks bound to an accepted socket.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub session: SessionId,
}

/// Counts one subscriber of a Session until dropped.
#[derive(Debug)]
pub struct SubscriberGuard {
    counts: SubscriberCounts,
    session: SessionId,
}

impl Drop for SubscriberGuard {
    fn drop(&mut self) {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = counts.get_mut(&self.session) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.session);
            }
        }
    }
}

/// One running subscription.
#[derive(Debug)]
pub struct Subscription {
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

impl Default for StreamServer {
    fn default() -> Self {
        Self {
            addr: OnceCell::new(),
            capabilities: Mutex::new(HashMap::new()),
            subscribers: Arc::default(),
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
    ) -> Result<(EventStreamEndpoint, u64), OpenError> {
        if host.shutdown.is_cancelled() {
            return Err(OpenError::ShuttingDown);
        }
        {
            let mut caps = self.capabilities.lock().unwrap_or_else(|p| p.into_inner());
            let now = Instant::now();
            caps.retain(|_, c| c.expires > now);
            if caps.len() >= MAX_PENDING_CAPABILITIES {
                return Err(OpenError::CapabilityLimit(MAX_PENDING_CAPABILITIES));
            }
        }
        let addr = *self
            .addr
            .get_or_try_init(|| async {
                let listener = TcpListener::bind(("127.0.0.1", 0))
                    .await
                    .map_err(OpenError::Bind)?;
                let addr = listener.local_addr().map_err(OpenError::Bind)?;
                tokio::spawn(accept_loop(host.clone(), listener, addr));
                tracing::info!(
                    port = addr.port(),
                    "event stream server listening on 127.0.0.1"
                );
                Ok::<_, OpenError>(addr)
            })
            .await?;
        let token = random_token().map_err(OpenError::Random)?;
        let ttl = capability_ttl();
        let expires = Instant::now() + ttl;
        let expires_at_ms = now_ms().get() + u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX / 2);
        self.capabilities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(
                token.clone(),
                Capability {
                    session,
                    origin,
                    expires,
                },
            );
        let endpoint = EventStreamEndpoint::new(format!("ws://{addr}/v/{token}"))
            .map_err(OpenError::Endpoint)?;
        Ok((endpoint, expires_at_ms))
    }

    /// Counts a new subscriber of `session`; `None` at the limit.
    pub fn subscribe(&self, session: SessionId) -> Option<SubscriberGuard> {
        let mut counts = self.subscribers.lock().unwrap_or_else(|p| p.into_inner());
        let n = counts.entry(session).or_insert(0);
        if *n >= MAX_SUBSCRIBERS {
            return None;
        }
        *n += 1;
        Some(SubscriberGuard {
            counts: self.subscribers.clone(),
            session,
        })
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
                StatusCode::FORBIDDEN,
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
                StatusCode::FORBIDDEN,
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
    let open = Arc::new(Semaphore::new(MAX_SOCKETS));
    let pending = Arc::new(Semaphore::new(MAX_PENDING_SOCKETS));
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
                // Over either cap the socket is closed at once: a refused
                // connection costs nothing beyond its accept.
                let (Ok(slot), Ok(handshake)) = (
                    open.clone().try_acquire_owned(),
                    pending.clone().try_acquire_owned(),
                ) else {
                    tracing::warn!(
                        "event stream connection refused: too many open or pending sockets"
                    );
                    drop(stream);
                    continue;
                };
                let _ = stream.set_nodelay(true);
                tokio::spawn(serve_socket(host.clone(), stream, addr, slot, handshake));
            }
            Err(e) => {
                tracing::warn!("event stream accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Serves one socket. `_slot` counts it as open while it lives;
/// `handshake` counts it as pending until it has subscribed (or gives up:
/// the upgrade must finish within [`UPGRADE_TIMEOUT`], hello and the
/// subscription within [`SUBSCRIBE_TIMEOUT`]).
async fn serve_socket(
    host: Arc<Host>,
    stream: TcpStream,
    addr: SocketAddr,
    _slot: OwnedSemaphorePermit,
    handshake: OwnedSemaphorePermit,
) {
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
    let upgrade = tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config));
    let ws = match tokio::time::timeout(UPGRADE_TIMEOUT, upgrade).await {
        Ok(Ok(ws)) => ws,
        Ok(Err(e)) => {
            tracing::debug!("event stream handshake failed: {e}");
            return;
        }
        Err(_) => {
            tracing::debug!("event stream handshake timed out");
            return;
        }
    };
    let Some(binding) = binding else { return };
    let (mut sink, mut source) = ws.split();
    let (out, mut frames) = OutputQueue::bounded(SUBSCRIBER_QUEUE, SUBSCRIBER_BYTES);
    let conn = Connection::new_stream(TransportInfo::web_socket(), out, binding);
    let close_code = conn
        .stream
        .as_ref()
        .map(|s| s.close_code.clone())
        .unwrap_or_default();
    let writer = tokio::spawn(async move {
        while let Some(Outgoing { frame, .. }) = frames.recv().await {
            if frame.is_empty() {
                // The terminal (or a failure answer) was sent: close.
                let code = close_code.load(std::sync::atomic::Ordering::Acquire);
                let close = CloseFrame {
                    code: CloseCode::from(code),
                    reason: if code == 1000 {
                        "stream complete".into()
                    } else {
                        "stream refused".into()
                    },
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
    let mut phase = SocketPhase::AwaitingHello;
    let mut handshake = Some(handshake);
    let subscribe_by = tokio::time::Instant::now() + SUBSCRIBE_TIMEOUT;
    loop {
        let deadline = async {
            if handshake.is_some() {
                tokio::time::sleep_until(subscribe_by).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        let msg = tokio::select! {
            _ = host.shutdown.cancelled() => break,
            _ = conn.closed() => break,
            _ = deadline => {
                tracing::debug!("event stream socket did not subscribe in time");
                conn.fail_stream(CLOSE_POLICY).await;
                break;
            }
            m = source.next() => m,
        };
        let bytes = match msg {
            Some(Ok(Message::Text(text))) => Some(text.as_bytes().to_vec()),
            Some(Ok(Message::Binary(_))) => None,
            Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
            Some(Ok(_)) => continue,
        };
        phase = socket_message(&host, &conn, phase, bytes).await;
        if phase == SocketPhase::Subscribed {
            handshake = None;
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

/// Where a stream socket is in its fixed conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SocketPhase {
    AwaitingHello,
    AwaitingSubscribe,
    Subscribed,
}

/// Handles one message of a stream socket (`None`: a binary frame) and
/// returns the next phase. Anything out of turn is answered once and the
/// socket closed.
async fn socket_message(
    host: &Arc<Host>,
    conn: &Arc<Connection>,
    phase: SocketPhase,
    bytes: Option<Vec<u8>>,
) -> SocketPhase {
    let close = match phase {
        SocketPhase::AwaitingHello => CLOSE_PROTOCOL,
        _ => CLOSE_POLICY,
    };
    let request = match bytes.map(crate::dispatch::parse_request) {
        Some(Ok(r)) => r,
        Some(Err(e)) => {
            conn.respond_error(None, e).await;
            conn.fail_stream(close).await;
            return phase;
        }
        None => {
            let e = ErrorCode::InvalidRequest.rpc(
                "the event stream carries JSON text messages only",
                serde_json::Value::Null,
            );
            conn.respond_error(None, e).await;
            conn.fail_stream(close).await;
            return phase;
        }
    };
    match phase {
        SocketPhase::AwaitingHello => {
            let result = if request.method != "system.hello" || request.timeout_ms.is_some() {
                Err(ErrorCode::HandshakeRequired.rpc_in(
                    devicerail_protocol::errors::Context::EventStream,
                    "the first message on the event stream must be system.hello without timeoutMs",
                    serde_json::json!({ "requiredMethod": "system.hello" }),
                ))
            } else {
                crate::handlers::system::hello_stream(host, conn, request.params)
            };
            let ok = result.is_ok();
            conn.respond(&request.id, result).await;
            if ok {
                SocketPhase::AwaitingSubscribe
            } else {
                conn.fail_stream(CLOSE_PROTOCOL).await;
                phase
            }
        }
        SocketPhase::AwaitingSubscribe => {
            let refused = if request.method != "events.subscribe" {
                Some(ErrorCode::MethodNotFound.rpc(
                    "the second message on the event stream must be events.subscribe",
                    serde_json::json!({ "method": request.method }),
                ))
            } else if request.timeout_ms.is_some() {
                Some(ErrorCode::RequestTimeoutNotSupported.rpc(
                    "events.subscribe does not accept timeoutMs",
                    serde_json::Value::Null,
                ))
            } else {
                None
            };
            if let Some(e) = refused {
                conn.respond_error(Some(&request.id), e).await;
                conn.fail_stream(CLOSE_POLICY).await;
                return phase;
            }
            let crate::connection::Phase::Ready(neg) = conn.phase() else {
                return phase;
            };
            let mut call = crate::dispatch::Call {
                host: host.clone(),
                conn: conn.clone(),
                neg,
                id: request.id,
                spec: devicerail_protocol::MethodId::EventsSubscribe.spec(),
                params: request.params,
                timeout_ms: None,
            };
            crate::handlers::streams::subscribe(&mut call).await;
            SocketPhase::Subscribed
        }
        SocketPhase::Subscribed => {
            // The conversation is over: one subscription per socket.
            conn.fail_stream(CLOSE_POLICY).await;
            phase
        }
    }
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
    method: devicerail_protocol::envelope::EventsStreamEventMethod,
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
pub async fn pump(host: Arc<Host>, conn: Arc<Connection>, sub: Subscription) {
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
                Err(crate::event_store::StoreError::NotFound(_)) => {
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

pub fn cursor(epoch: StreamEpoch, session: SessionId, sequence: u64) -> EventStreamCursor {
    EventStreamCursor {
        stream_epoch: epoch,
        session_id: session,
        sequence: devicerail_protocol::EventSequence::saturating(sequence),
    }
}
