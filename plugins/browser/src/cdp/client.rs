//! The DevTools transport: one WebSocket, JSON requests with increasing
//! ids, answers matched to their request, and events fanned out to
//! subscribers. Sessions of attached targets share the connection
//! ("flat" mode): a request names its `sessionId`, events carry it.
//!
//! Parameters are never logged (they may carry protected text); only
//! method names and ids are, at trace level.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::net::TcpStream;
use tokio::sync::{broadcast, mpsc, oneshot};
use tokio_tungstenite::tungstenite::Message;

use super::error::CdpError;

/// Events buffered per subscriber before it starts losing the oldest.
const EVENT_BUFFER: usize = 1024;

/// One DevTools event.
#[derive(Debug, Clone, PartialEq)]
pub struct CdpEvent {
    /// The event name, e.g. `Page.loadEventFired`.
    pub method: String,
    /// The event's parameters as sent (may hold page text; never logged).
    pub params: Value,
    /// The session of the target that sent it (`None`: the browser).
    pub session_id: Option<String>,
}

/// An answer's `result`, kept as text so callers decode it straight into
/// their own types (large answers never become a `Value` tree).
type Reply = oneshot::Sender<Result<Box<RawValue>, CdpError>>;

struct Pending {
    method: String,
    reply: Reply,
}

struct Shared {
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, Pending>>,
    /// Set once the connection is gone; new requests fail at once.
    closed: Mutex<Option<String>>,
    events: broadcast::Sender<Arc<CdpEvent>>,
}

impl Shared {
    fn lock_pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Pending>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn closed_reason(&self) -> Option<String> {
        self.closed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Marks the connection closed and fails every request in flight.
    fn close(&self, reason: String) {
        {
            let mut closed = self.closed.lock().unwrap_or_else(|p| p.into_inner());
            if closed.is_none() {
                *closed = Some(reason.clone());
            }
        }
        let drained: Vec<Pending> = self.lock_pending().drain().map(|(_, p)| p).collect();
        for p in drained {
            let _ = p.reply.send(Err(CdpError::Closed(reason.clone())));
        }
    }
}

/// A connected DevTools client. Cheap to clone; all clones share the
/// connection, which closes when the last clone is dropped.
#[derive(Clone)]
pub struct CdpClient {
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Message>,
    _guard: Arc<CloseOnDrop>,
}

/// Stops the connection tasks when the last client clone goes away.
struct CloseOnDrop {
    stop: Mutex<Option<oneshot::Sender<()>>>,
}

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = stop.send(());
        }
    }
}

/// An incoming frame: an answer (`id`) or an event (`method`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Incoming {
    #[serde(default)]
    id: Option<u64>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Option<WireError>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    session_id: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(default)]
    code: i64,
    #[serde(default)]
    message: String,
    #[serde(default)]
    data: Option<Value>,
}

impl CdpClient {
    /// Connects to a browser or page WebSocket endpoint (`ws://...`). Must
    /// run inside a tokio runtime, which then drives the connection.
    pub async fn connect(ws_url: &str, timeout: Duration) -> Result<Self, CdpError> {
        let connect_err = |reason: String| CdpError::Connect {
            url: ws_url.to_owned(),
            reason,
        };
        let stream = tokio::time::timeout(timeout, open_websocket(ws_url))
            .await
            .map_err(|_| connect_err(format!("no handshake within {timeout:?}")))?
            .map_err(|e| connect_err(e.to_string()))?;
        let (mut sink, mut source) = stream.split();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let shared = Arc::new(Shared {
            next_id: AtomicU64::new(1),
            pending: Mutex::new(HashMap::new()),
            closed: Mutex::new(None),
            events,
        });
        let (outgoing, mut queue) = mpsc::unbounded_channel::<Message>();
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();

        let writer_shared = shared.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    msg = queue.recv() => match msg {
                        Some(msg) => {
                            if let Err(e) = sink.send(msg).await {
                                writer_shared.close(format!("send failed: {e}"));
                                break;
                            }
                        }
                        None => break,
                    },
                    _ = &mut stop_rx => {
                        let _ = sink.send(Message::Close(None)).await;
                        writer_shared.close("the client was dropped".into());
                        break;
                    }
                }
            }
        });

        let reader_shared = shared.clone();
        tokio::spawn(async move {
            let reason = loop {
                match source.next().await {
                    Some(Ok(Message::Text(text))) => dispatch(&reader_shared, text.as_str()),
                    Some(Ok(Message::Binary(bytes))) => {
                        if let Ok(text) = std::str::from_utf8(&bytes) {
                            dispatch(&reader_shared, text);
                        }
                    }
                    Some(Ok(Message::Close(frame))) => {
                        break format!(
                            "the browser closed the connection{}",
                            frame
                                .map(|f| format!(" ({})", f.reason))
                                .unwrap_or_default()
                        );
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break format!("read failed: {e}"),
                    None => break "the connection ended".to_owned(),
                }
            };
            tracing::debug!("DevTools connection closed: {reason}");
            reader_shared.close(reason);
        });

        Ok(Self {
            shared,
            outgoing,
            _guard: Arc::new(CloseOnDrop {
                stop: Mutex::new(Some(stop_tx)),
            }),
        })
    }

    /// Why the connection is closed, if it is.
    pub(crate) fn closed(&self) -> Option<String> {
        self.shared.closed_reason()
    }

    /// A receiver of every event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<CdpEvent>> {
        self.shared.events.subscribe()
    }

    /// Sends one request and waits for its answer as JSON (`timeout: None`:
    /// no limit besides the connection's life).
    pub async fn call_raw(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Value, CdpError> {
        let text = self.call_text(session_id, method, params, timeout).await?;
        serde_json::from_str(text.get()).map_err(|e| CdpError::Decode {
            method: method.to_owned(),
            reason: e.to_string(),
        })
    }

    /// Sends one request and waits for its answer's `result` text.
    async fn call_text(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<Box<RawValue>, CdpError> {
        if let Some(reason) = self.shared.closed_reason() {
            return Err(CdpError::Closed(reason));
        }
        let id = self.shared.next_id.fetch_add(1, Ordering::Relaxed);
        let mut frame = serde_json::json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session_id {
            frame["sessionId"] = Value::String(session.to_owned());
        }
        let (reply, answer) = oneshot::channel();
        self.shared.lock_pending().insert(
            id,
            Pending {
                method: method.to_owned(),
                reply,
            },
        );
        tracing::trace!(id, method, "DevTools request");
        if self
            .outgoing
            .send(Message::Text(frame.to_string().into()))
            .is_err()
        {
            self.shared.lock_pending().remove(&id);
            return Err(CdpError::Closed("the writer stopped".into()));
        }
        let result = match timeout {
            None => answer.await,
            Some(budget) => match tokio::time::timeout(budget, answer).await {
                Ok(r) => r,
                Err(_) => {
                    self.shared.lock_pending().remove(&id);
                    return Err(CdpError::Timeout {
                        method: method.to_owned(),
                        budget,
                    });
                }
            },
        };
        match result {
            Ok(r) => r,
            Err(_) => Err(CdpError::Closed(
                self.shared
                    .closed_reason()
                    .unwrap_or_else(|| "the reply was dropped".into()),
            )),
        }
    }

    /// Sends one request and decodes its result.
    pub(crate) async fn call<R: DeserializeOwned>(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: Value,
        timeout: Option<Duration>,
    ) -> Result<R, CdpError> {
        let text = self.call_text(session_id, method, params, timeout).await?;
        serde_json::from_str(text.get()).map_err(|e| CdpError::Decode {
            method: method.to_owned(),
            reason: e.to_string(),
        })
    }
}

/// The WebSocket to `ws_url` over TCP with Nagle's algorithm off. With
/// it on, requests sent together (a click's move, press and release; a
/// screenshot beside a tree walk) wait behind the first one until Chromium
/// acknowledges it, and Chromium acknowledges a mouse move only with its
/// answer, a frame later: every pipelined click cost 16 ms more (a tap 33
/// ms instead of 17, docs/PERFORMANCE.md). tokio-tungstenite resolves,
/// connects and sets the option; built without TLS, it refuses a `wss://`
/// URL before sending anything.
async fn open_websocket(ws_url: &str) -> Result<WebSocket, tokio_tungstenite::tungstenite::Error> {
    let (stream, _response) =
        tokio_tungstenite::connect_async_with_config(ws_url, None, true).await?;
    Ok(stream)
}

/// The DevTools connection's stream.
type WebSocket = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

fn null_raw() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_else(|_| unreachable!("null is JSON"))
}

fn dispatch(shared: &Shared, text: &str) {
    let incoming: Incoming = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            tracing::warn!("undecodable DevTools frame: {e}");
            return;
        }
    };
    if let Some(id) = incoming.id {
        let Some(pending) = shared.lock_pending().remove(&id) else {
            // The caller gave up (timeout) before the answer came.
            return;
        };
        let outcome = match incoming.error {
            Some(err) => Err(CdpError::Protocol {
                method: pending.method,
                code: err.code,
                message: match err.data {
                    Some(Value::String(data)) => format!("{}: {data}", err.message),
                    _ => err.message,
                },
            }),
            None => Ok(incoming.result.unwrap_or_else(null_raw)),
        };
        let _ = pending.reply.send(outcome);
    } else if let Some(method) = incoming.method {
        // No subscriber is fine: events are only wanted while waiting.
        let _ = shared.events.send(Arc::new(CdpEvent {
            method,
            params: incoming.params.unwrap_or(Value::Null),
            session_id: incoming.session_id,
        }));
    }
}

#[cfg(test)]
mod tests {
    //! Against a fake DevTools endpoint speaking the real wire format.

    use super::*;
    use tokio::net::TcpListener;

    /// Accepts one WebSocket client and answers with `script`: for each
    /// request, the frames to send back (`{id}` is replaced by its id).
    async fn fake_devtools(script: Vec<Vec<&'static str>>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!(
            "ws://{}/devtools/browser/fake",
            listener.local_addr().expect("addr")
        );
        tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.expect("accept");
            let mut ws = tokio_tungstenite::accept_async(tcp)
                .await
                .expect("handshake");
            let mut held: Vec<String> = Vec::new();
            for answers in script {
                let Some(Ok(Message::Text(req))) = ws.next().await else {
                    return;
                };
                let v: Value = serde_json::from_str(req.as_str()).expect("json request");
                let id = v["id"].as_u64().expect("id");
                for a in answers {
                    match a {
                        "HOLD" => held.push(id.to_string()),
                        "CLOSE" => {
                            let _ = ws.close(None).await;
                            return;
                        }
                        "SILENT" => {}
                        frame => {
                            let mut f = frame.replace("{id}", &id.to_string());
                            if f.contains("{held}") {
                                f = f.replace("{held}", &held.remove(0));
                            }
                            ws.send(Message::Text(f.into())).await.expect("send");
                        }
                    }
                }
            }
            // Keep the connection open until the client goes away.
            while ws.next().await.is_some() {}
        });
        url
    }

    const T: Option<Duration> = Some(Duration::from_secs(5));

    #[tokio::test]
    async fn answers_are_matched_to_requests_and_events_fan_out() {
        let url = fake_devtools(vec![
            vec!["HOLD"],
            vec![
                r#"{"method":"Page.loadEventFired","params":{"timestamp":1},"sessionId":"S1"}"#,
                r#"{"id":{id},"result":{"second":true}}"#,
                r#"{"id":{held},"result":{"first":true}}"#,
            ],
            vec![r#"{"id":{id},"error":{"code":-32000,"message":"No node with given id found"}}"#],
        ])
        .await;
        let client = CdpClient::connect(&url, Duration::from_secs(5))
            .await
            .expect("connect");
        let mut events = client.subscribe();
        let first = client.call_raw(None, "A.first", json_params(), T);
        let second = async {
            // Sent after the first, answered before it.
            tokio::time::sleep(Duration::from_millis(50)).await;
            client
                .call_raw(Some("S1"), "A.second", json_params(), T)
                .await
        };
        let (a, b) = tokio::join!(first, second);
        assert_eq!(a.expect("first"), serde_json::json!({ "first": true }));
        assert_eq!(b.expect("second"), serde_json::json!({ "second": true }));
        let event = events.recv().await.expect("event");
        assert_eq!(event.method, "Page.loadEventFired");
        assert_eq!(event.session_id.as_deref(), Some("S1"));
        let err = client
            .call_raw(None, "DOM.resolveNode", json_params(), T)
            .await;
        assert!(
            matches!(&err, Err(CdpError::Protocol { code: -32000, method, .. }) if method == "DOM.resolveNode"),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn silence_is_a_timeout_and_a_close_fails_what_is_pending() {
        let url = fake_devtools(vec![vec!["SILENT"], vec!["CLOSE"]]).await;
        let client = CdpClient::connect(&url, Duration::from_secs(5))
            .await
            .expect("connect");
        let slow = client
            .call_raw(
                None,
                "Page.captureScreenshot",
                json_params(),
                Some(Duration::from_millis(100)),
            )
            .await;
        assert!(matches!(slow, Err(CdpError::Timeout { .. })), "{slow:?}");
        let closed = client
            .call_raw(None, "Browser.getVersion", json_params(), T)
            .await;
        assert!(matches!(closed, Err(CdpError::Closed(_))), "{closed:?}");
        assert!(client.closed().is_some());
        let after = client
            .call_raw(None, "Browser.getVersion", json_params(), T)
            .await;
        assert!(matches!(after, Err(CdpError::Closed(_))), "{after:?}");
    }

    #[tokio::test]
    async fn an_endpoint_that_is_not_there_is_a_connect_error() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("ws://{}/", listener.local_addr().expect("addr"));
        drop(listener);
        let r = CdpClient::connect(&url, Duration::from_secs(2)).await;
        assert!(matches!(r, Err(CdpError::Connect { .. })));
    }

    /// Accepts one WebSocket handshake on `listener` and keeps the
    /// connection open until the test ends.
    fn serve_one_handshake(listener: TcpListener) {
        tokio::spawn(async move {
            let (socket, _) = listener.accept().await.expect("accept");
            let ws = tokio_tungstenite::accept_async(socket)
                .await
                .expect("handshake");
            std::future::pending::<()>().await;
            drop(ws);
        });
    }

    fn nodelay(ws: &WebSocket) -> bool {
        match ws.get_ref() {
            tokio_tungstenite::MaybeTlsStream::Plain(s) => s.nodelay().expect("read the option"),
            _ => panic!("a plain TCP stream was expected"),
        }
    }

    #[tokio::test]
    async fn the_socket_sends_each_request_at_once() {
        // Nagle's algorithm off: a pipelined request is not held back
        // until the one before it is acknowledged.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!(
            "ws://{}/devtools/page/X",
            listener.local_addr().expect("addr")
        );
        serve_one_handshake(listener);
        let ws = open_websocket(&url).await.expect("connect");
        assert!(nodelay(&ws));
        if let Ok(v6) = TcpListener::bind("[::1]:0").await {
            let url = format!("ws://{}/", v6.local_addr().expect("addr"));
            serve_one_handshake(v6);
            let ws = open_websocket(&url).await.expect("connect over IPv6");
            assert!(nodelay(&ws));
        }
        assert!(open_websocket("not a url").await.is_err());
        // A TLS endpoint is refused with a clear error, not spoken to in
        // plain text.
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!(
            "wss://{}/devtools/browser/x",
            listener.local_addr().expect("addr")
        );
        let tls = CdpClient::connect(&url, Duration::from_secs(2)).await;
        match tls {
            Err(CdpError::Connect { reason, .. }) => {
                assert!(reason.contains("TLS"), "{reason}")
            }
            other => panic!("a connect error was expected: {:?}", other.err()),
        }
    }

    fn json_params() -> Value {
        serde_json::json!({})
    }
}
