//! The event-stream socket's fixed conversation: `system.hello` (versions
//! 1.3–1.5, only `events.stream.v1`), then exactly one `events.subscribe`.
//! Anything out of turn is answered once and the socket closed (1002 after
//! a failed hello, 1008 after a failed subscription).

use std::sync::Arc;

use devicerail_host_protocol::ErrorCode;

use crate::connection::Connection;
use crate::state::Host;

/// Close code after a failed `system.hello` on the socket.
pub(crate) const CLOSE_PROTOCOL: u16 = 1002;

/// Close code after a failed `events.subscribe`.
pub(crate) const CLOSE_POLICY: u16 = 1008;

/// Where a stream socket is in its fixed conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SocketPhase {
    AwaitingHello,
    AwaitingSubscribe,
    Subscribed,
}

/// Handles one message of a stream socket (`None`: a binary frame) and
/// returns the next phase. Anything out of turn is answered once and the
/// socket closed.
pub(super) async fn message(
    host: &Arc<Host>,
    conn: &Arc<Connection>,
    phase: SocketPhase,
    bytes: Option<Vec<u8>>,
) -> SocketPhase {
    let close = match phase {
        SocketPhase::AwaitingHello => CLOSE_PROTOCOL,
        _ => CLOSE_POLICY,
    };
    let request = match bytes.map(super::parse_request) {
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
                    devicerail_host_protocol::errors::Context::EventStream,
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
            let mut call = crate::handlers::call::Call {
                host: host.clone(),
                conn: conn.clone(),
                neg,
                id: request.id,
                spec: devicerail_host_protocol::MethodId::EventsSubscribe.spec(),
                params: request.params,
                timeout_ms: None,
            };
            if crate::handlers::events::subscribe(&mut call).await {
                SocketPhase::Subscribed
            } else {
                conn.fail_stream(CLOSE_POLICY).await;
                phase
            }
        }
        SocketPhase::Subscribed => {
            // The conversation is over: one subscription per socket.
            conn.fail_stream(CLOSE_POLICY).await;
            phase
        }
    }
}
