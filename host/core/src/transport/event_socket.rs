//! The event-stream WebSocket transport: a loopback listener whose
//! sockets pass the gate's upgrade checks (any failure: HTTP 403), then
//! carry text frames to the dispatcher and its notifications back.
//!
//! Bounds: [`MAX_SOCKETS`] open and [`MAX_PENDING_SOCKETS`] not yet
//! subscribed (over either, a socket is closed at accept);
//! [`UPGRADE_TIMEOUT`] for the HTTP upgrade and [`SUBSCRIBE_TIMEOUT`] from
//! the upgrade to the subscription.

use std::net::SocketAddr;
use std::sync::{Arc, Weak};
use std::time::Duration;

use devicerail_host_protocol::{MAX_FRAME_BYTES, TransportInfo};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OnceCell, OwnedSemaphorePermit, Semaphore};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::{
    CloseFrame, WebSocketConfig, frame::coding::CloseCode,
};

use crate::connection::Connection;
use crate::dispatch::{CLOSE_POLICY, Dispatcher, SocketPhase};
use crate::outbox::{Outgoing, OutputQueue};
use crate::state::Host;
use crate::stream_gate::{SUBPROTOCOL, StreamListener};

/// Frames a subscriber may have queued before it counts as slow.
const SUBSCRIBER_QUEUE: usize = 1024;

/// Bytes a subscriber may have queued before it counts as slow.
const SUBSCRIBER_BYTES: usize = 8 * 1024 * 1024;

/// Sockets open at once (subscribed or not).
pub(crate) const MAX_SOCKETS: usize = 256;

/// Sockets that have not subscribed yet, at once.
pub(crate) const MAX_PENDING_SOCKETS: usize = 64;

/// How long the HTTP upgrade may take.
pub(crate) const UPGRADE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a socket may take from upgrade to subscription.
pub(crate) const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

async fn accept_loop(dispatcher: Dispatcher, listener: TcpListener, addr: SocketAddr) {
    let host = dispatcher.host().clone();
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
                tokio::spawn(serve_socket(
                    dispatcher.clone(),
                    stream,
                    addr,
                    slot,
                    handshake,
                ));
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
    dispatcher: Dispatcher,
    stream: TcpStream,
    addr: SocketAddr,
    _slot: OwnedSemaphorePermit,
    handshake: OwnedSemaphorePermit,
) {
    let host = dispatcher.host().clone();
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
        phase = dispatcher.stream_message(&conn, phase, bytes).await;
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

/// The listener the stream gate starts on first use.
pub(crate) struct Listener {
    host: Weak<Host>,
    addr: OnceCell<SocketAddr>,
}

impl Listener {
    /// A listener serving `host`'s event streams (it holds no strong
    /// reference to the host).
    pub(crate) fn new(host: &Arc<Host>) -> Arc<Self> {
        Arc::new(Self {
            host: Arc::downgrade(host),
            addr: OnceCell::new(),
        })
    }
}

impl StreamListener for Listener {
    fn listen(
        &self,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<SocketAddr>> + Send + '_>>
    {
        Box::pin(async move {
            self.addr
                .get_or_try_init(|| async {
                    let host = self
                        .host
                        .upgrade()
                        .ok_or_else(|| std::io::Error::other("the host has stopped"))?;
                    let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
                    let addr = listener.local_addr()?;
                    tokio::spawn(accept_loop(Dispatcher::new(host), listener, addr));
                    tracing::info!(
                        port = addr.port(),
                        "event stream server listening on 127.0.0.1"
                    );
                    Ok(addr)
                })
                .await
                .copied()
        })
    }
}
