//! The event-stream WebSocket transport: a loopback listener whose
//! sockets pass the gate's upgrade checks (any failure: HTTP 403), then
//! carry text frames to the dispatcher and its notifications back.
//!
//! Bounds. A connection that has not completed its HTTP upgrade has shown
//! no token yet, so it must never be able to keep another client out:
//! at most [`MAX_UPGRADING`] such connections are kept, and when another
//! arrives the *oldest* of them is closed to make room (an idle or slow
//! peer loses its place; a client that sends its upgrade at once completes
//! it in a millisecond). Each gets [`UPGRADE_TIMEOUT`] to finish. Accepting
//! never waits. Past the upgrade (token, Host and Origin checked) a socket
//! counts against [`MAX_SOCKETS`] open and [`MAX_PENDING_SOCKETS`] not yet
//! subscribed, each checked before `101` is sent (over either: `503`), and
//! has [`SUBSCRIBE_TIMEOUT`] from the upgrade to the subscription.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use devicerail_host_protocol::{MAX_FRAME_BYTES, TransportInfo};
use futures_util::{SinkExt, StreamExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, OnceCell, OwnedSemaphorePermit, Semaphore};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tokio_tungstenite::tungstenite::http::{HeaderValue, StatusCode};
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

/// Upgraded sockets that have not subscribed yet, at once.
pub(crate) const MAX_PENDING_SOCKETS: usize = 64;

/// Connections whose HTTP upgrade is not complete, at once; a new one
/// closes the oldest. Generous, so that an idle crowd below it costs the
/// host a descriptor each and nobody their upgrade, and a crowd above it
/// only ever loses its own oldest members.
pub(crate) const MAX_UPGRADING: usize = 512;

/// How long the HTTP upgrade may take.
pub(crate) const UPGRADE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a socket may take from upgrade to subscription.
pub(crate) const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The connections that have not completed their upgrade, oldest first.
struct Upgrading {
    queue: Mutex<VecDeque<(u64, Arc<Notify>)>>,
    next: AtomicU64,
}

/// One connection's place among the [`Upgrading`]; leaving (drop) frees it.
struct UpgradeTicket {
    id: u64,
    evicted: Arc<Notify>,
    upgrading: Arc<Upgrading>,
}

impl Upgrading {
    fn new() -> Arc<Self> {
        Arc::new(Self {
            queue: Mutex::new(VecDeque::with_capacity(MAX_UPGRADING)),
            next: AtomicU64::new(0),
        })
    }

    /// A place for a new connection; when all are taken, the oldest holder
    /// is told to leave.
    fn enter(self: &Arc<Self>) -> UpgradeTicket {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let evicted = Arc::new(Notify::new());
        let mut queue = self.queue.lock().unwrap_or_else(|p| p.into_inner());
        if queue.len() >= MAX_UPGRADING
            && let Some((_, oldest)) = queue.pop_front()
        {
            // A stored permit: the holder sees it even if it is not
            // waiting yet.
            oldest.notify_one();
        }
        queue.push_back((id, evicted.clone()));
        UpgradeTicket {
            id,
            evicted,
            upgrading: self.clone(),
        }
    }
}

impl Drop for UpgradeTicket {
    fn drop(&mut self) {
        let mut queue = self
            .upgrading
            .queue
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if let Some(i) = queue.iter().position(|(id, _)| *id == self.id) {
            queue.remove(i);
        }
    }
}

async fn accept_loop(dispatcher: Dispatcher, listener: TcpListener, addr: SocketAddr) {
    let host = dispatcher.host().clone();
    let limits = Limits {
        open: Arc::new(Semaphore::new(MAX_SOCKETS)),
        pending: Arc::new(Semaphore::new(MAX_PENDING_SOCKETS)),
    };
    let upgrading = Upgrading::new();
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
                let ticket = upgrading.enter();
                tokio::spawn(serve_socket(
                    dispatcher.clone(),
                    stream,
                    addr,
                    limits.clone(),
                    ticket,
                ));
            }
            Err(e) => {
                tracing::warn!("event stream accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// The counts an upgraded socket is admitted against.
#[derive(Clone)]
struct Limits {
    /// Sockets open (subscribed or not).
    open: Arc<Semaphore>,
    /// Sockets not yet subscribed.
    pending: Arc<Semaphore>,
}

/// Serves one socket. `ticket` keeps its place among the connections still
/// upgrading (it leaves when evicted, at [`UPGRADE_TIMEOUT`], or once
/// upgraded). An upgraded socket holds an open slot while it lives and a
/// pending slot until it has subscribed (hello and the subscription within
/// [`SUBSCRIBE_TIMEOUT`]).
async fn serve_socket(
    dispatcher: Dispatcher,
    stream: TcpStream,
    addr: SocketAddr,
    limits: Limits,
    ticket: UpgradeTicket,
) {
    let host = dispatcher.host().clone();
    let mut binding = None;
    let mut slots: Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)> = None;
    // The signature is tungstenite's upgrade callback contract.
    #[allow(clippy::result_large_err)]
    let callback = |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        let refuse = |status: StatusCode, why: &str| {
            let mut r = ErrorResponse::new(Some(why.to_owned()));
            *r.status_mut() = status;
            r
        };
        match host.streams.admit(addr, req) {
            Ok(b) => {
                let (Ok(open), Ok(pending)) = (
                    limits.open.clone().try_acquire_owned(),
                    limits.pending.clone().try_acquire_owned(),
                ) else {
                    tracing::warn!(
                        "event stream upgrade refused: too many open or unsubscribed sockets"
                    );
                    return Err(refuse(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "too many event stream sockets",
                    ));
                };
                slots = Some((open, pending));
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
                Err(refuse(status, why))
            }
        }
    };
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_FRAME_BYTES))
        .max_frame_size(Some(MAX_FRAME_BYTES));
    let upgrade = tokio_tungstenite::accept_hdr_async_with_config(stream, callback, Some(config));
    let upgraded = tokio::select! {
        r = tokio::time::timeout(UPGRADE_TIMEOUT, upgrade) => r,
        _ = ticket.evicted.notified() => {
            tracing::debug!("event stream connection closed before its upgrade to make room for a newer one");
            return;
        }
    };
    drop(ticket);
    let ws = match upgraded {
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
    let (Some(binding), Some((_open, pending))) = (binding, slots) else {
        return;
    };
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
    let mut handshake = Some(pending);
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
