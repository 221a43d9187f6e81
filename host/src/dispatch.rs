//! Request dispatch: one input frame in, one response out.
//!
//! Checks run in the reference daemon's order: JSON → envelope → reserved
//! id → in-flight bound → hello → handshake phase → method table (feature,
//! version, transport) → `timeoutMs` rules → params. Control-plane methods run inline, in arrival order; device
//! methods are accepted inline (route, Session and deadline captured, id
//! reserved) and then run concurrently, so their responses may come out of
//! order.

use std::sync::Arc;

use devicerail_protocol::{
    ErrorCode, Feature, MAX_FRAME_BYTES, MethodId, MethodSpec, RequestCancelParams,
    RequestCancelResult, RequestCancelStatus, RpcError, RpcId, RpcParams, RpcRequest, method_spec,
};
use serde_json::json;
use tokio::time::Instant;

use crate::connection::{CancelOutcome, Connection, Negotiated, Phase};
use crate::device_call::Stop;
use crate::handlers;
use crate::state::Host;

/// One request that passed the envelope and method checks.
pub struct Call {
    pub host: Arc<Host>,
    pub conn: Arc<Connection>,
    pub neg: Arc<Negotiated>,
    pub id: RpcId,
    pub spec: &'static MethodSpec,
    pub params: Option<RpcParams>,
    pub timeout_ms: Option<u64>,
}

impl Call {
    /// Decodes the params for this method.
    pub fn params<P: serde::de::DeserializeOwned>(&mut self) -> Result<P, RpcError> {
        crate::params::decode(self.spec, self.params.take())
    }

    /// The request's stop conditions, measured from now (acceptance).
    pub fn stop(&self, cancel: tokio_util::sync::CancellationToken) -> Stop {
        Stop {
            deadline: self
                .timeout_ms
                .map(|ms| Instant::now() + std::time::Duration::from_millis(ms)),
            cancel,
            shutdown: self.host.shutdown.clone(),
        }
    }
}

/// The error for a frame over the limit. (The reference daemon closes the
/// connection; this host answers and keeps serving, so one bad line costs
/// the client one error, not its Session.)
pub fn frame_too_large(len: usize) -> RpcError {
    ErrorCode::InvalidRequest.rpc(
        format!(
            "the frame is {len} bytes, over the {MAX_FRAME_BYTES}-byte limit; it was discarded"
        ),
        serde_json::Value::Null,
    )
}

/// [`handle_line`] as a boxed `Send` future, for the event-stream socket:
/// the named type breaks the cycle stream → dispatch → `events.stream.open`
/// → stream that would otherwise leave `Send` unprovable.
pub fn handle_line_boxed(
    host: Arc<Host>,
    conn: Arc<Connection>,
    line: Vec<u8>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(async move { handle_line(&host, &conn, line).await })
}

/// Parses one frame into a request envelope. Failures are answered with a
/// `null` id: `parse_error` (with the line and column) or
/// `invalid_request`.
pub fn parse_request(line: Vec<u8>) -> Result<RpcRequest, RpcError> {
    let text = String::from_utf8(line).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        ErrorCode::ParseError.rpc(
            format!("the frame is not UTF-8 (invalid byte at offset {offset})"),
            json!({ "line": 1, "column": offset + 1 }),
        )
    })?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        ErrorCode::ParseError.rpc(
            format!("the frame is not valid JSON: {e}"),
            json!({ "line": e.line(), "column": e.column() }),
        )
    })?;
    RpcRequest::from_value(value).map_err(|e| e.error)
}

/// Handles one input line.
pub async fn handle_line(host: &Arc<Host>, conn: &Arc<Connection>, line: Vec<u8>) {
    let request = match parse_request(line) {
        Ok(r) => r,
        Err(e) => return conn.respond_error(None, e).await,
    };
    let id = request.id.clone();
    match prepare(host, conn, request) {
        Ok(Prepared::Hello(params)) => {
            let result = handlers::system::hello(host, conn, params);
            conn.respond(&id, result).await;
        }
        Ok(Prepared::Call(call)) => run(call).await,
        Err(e) => conn.respond_error(Some(&id), e).await,
    }
}

enum Prepared {
    Hello(Option<RpcParams>),
    Call(Call),
}

/// The methods that run concurrently and count against the in-flight bound.
fn concurrent(spec: &MethodSpec) -> bool {
    spec.accepts_timeout
}

/// The checks before a handler runs, in the reference daemon's order:
/// reserved id → in-flight bound → hello → handshake → method table →
/// `timeoutMs` feature → `timeoutMs` support. (The envelope was checked by
/// [`parse_request`]; params are checked by each handler.)
fn prepare(
    host: &Arc<Host>,
    conn: &Arc<Connection>,
    req: RpcRequest,
) -> Result<Prepared, RpcError> {
    if conn.inflight.contains(&req.id) {
        return Err(ErrorCode::RequestIdInUse.rpc(
            format!("request id {} is reserved by an unfinished request", req.id),
            json!({ "requestId": req.id }),
        ));
    }
    let spec = method_spec(&req.method);
    if spec.is_some_and(concurrent) && conn.inflight.len() >= host.config.max_inflight {
        return Err(too_many_requests(host.config.max_inflight));
    }
    if req.method == MethodId::SystemHello.name() {
        if let Phase::Ready(_) = conn.phase() {
            return Err(ErrorCode::HandshakeAlreadyCompleted.rpc(
                "system.hello already succeeded on this connection",
                serde_json::Value::Null,
            ));
        }
        if req.timeout_ms.is_some() {
            return Err(feature_not_negotiated("timeoutMs", Feature::RequestControl));
        }
        return Ok(Prepared::Hello(req.params));
    }
    let Phase::Ready(neg) = conn.phase() else {
        return Err(handshake_required());
    };
    let web_socket = conn.transport.kind == "webSocket";
    let Some(spec) = spec else {
        return Err(MethodSpec::not_found_error(
            &req.method,
            &devicerail_protocol::Availability::Unknown,
        ));
    };
    match spec.availability(neg.version, neg.features, web_socket) {
        devicerail_protocol::Availability::Available => {}
        other => return Err(MethodSpec::not_found_error(&req.method, &other)),
    }
    if req.timeout_ms.is_some() {
        if !neg.has(Feature::RequestControl) {
            return Err(feature_not_negotiated("timeoutMs", Feature::RequestControl));
        }
        if !spec.accepts_timeout {
            return Err(timeout_not_supported(spec.name));
        }
    }
    Ok(Prepared::Call(Call {
        host: host.clone(),
        conn: conn.clone(),
        neg,
        id: req.id,
        spec,
        params: req.params,
        timeout_ms: req.timeout_ms.map(|t| t.get()),
    }))
}

/// `handshake_required` on the control connection.
pub fn handshake_required() -> RpcError {
    ErrorCode::HandshakeRequired.rpc(
        "system.hello must complete before any other method",
        json!({ "requiredMethod": MethodId::SystemHello.name() }),
    )
}

/// `too_many_requests` at `limit`.
pub fn too_many_requests(limit: usize) -> RpcError {
    ErrorCode::TooManyRequests.rpc(
        format!("the connection already has {limit} requests in flight"),
        json!({ "limit": limit }),
    )
}

/// `request_timeout_not_supported` for `method`.
pub fn timeout_not_supported(method: &str) -> RpcError {
    let supported: Vec<&str> = devicerail_protocol::METHODS
        .iter()
        .filter(|m| m.accepts_timeout)
        .map(|m| m.name)
        .collect();
    ErrorCode::RequestTimeoutNotSupported.rpc(
        format!("{method} does not accept timeoutMs"),
        json!({ "field": "timeoutMs", "method": method, "supportedMethods": supported }),
    )
}

/// `feature_not_negotiated` for a control field or capability.
pub fn feature_not_negotiated(what: &str, feature: Feature) -> RpcError {
    ErrorCode::FeatureNotNegotiated.rpc(
        format!("{what} needs the {feature} feature, which this connection did not negotiate"),
        json!({ "field": what, "requiredFeature": feature.name() }),
    )
}

async fn run(mut call: Call) {
    use handlers::*;
    let id = call.id.clone();
    let conn = call.conn.clone();
    match call.spec.id {
        MethodId::SystemHello => unreachable_hello(&conn, &id).await,
        MethodId::SystemDescribe => {
            let r = call
                .params::<devicerail_protocol::NoParams>()
                .map(|_| system::describe(&call));
            conn.respond(&id, r).await;
        }
        MethodId::DevicesList => {
            let r = call
                .params::<devicerail_protocol::NoParams>()
                .map(|_| routing::devices_list(&call));
            conn.respond(&id, r).await;
        }
        MethodId::DeviceSelect => {
            let r = routing::device_select(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::RequestCancel => {
            let r = call
                .params::<RequestCancelParams>()
                .map(|p| cancel(&call, p));
            conn.respond(&id, r).await;
        }
        MethodId::DeviceConnect
        | MethodId::DeviceDisconnect
        | MethodId::DeviceCapabilities
        | MethodId::DeviceObserve
        | MethodId::DeviceExecute
        | MethodId::MediaStreamCapture => device::accept(call).await,
        MethodId::SessionStart => {
            let r = sessions::start(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::SessionCurrent => {
            let r = sessions::current(&mut call);
            conn.respond(&id, r).await;
        }
        MethodId::SessionEnd => {
            let r = sessions::end(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::SessionsList => {
            let r = sessions::list(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::SessionExport => {
            let r = sessions::export(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::EventsList => {
            let r = sessions::events_list(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::EventsClear => {
            let r = sessions::clear(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::UiSnapshotGet => {
            let r = evidence::ui_snapshot_get(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::VerdictRecord => {
            let r = evidence::verdict_record(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::EventsSubscribe => streams::subscribe(&mut call).await,
        MethodId::EventsStreamOpen | MethodId::MediaStreamStart | MethodId::MediaStreamEnd => {
            let r = streams::handle(&mut call).await;
            conn.respond(&id, r).await;
        }
    }
}

async fn unreachable_hello(conn: &Arc<Connection>, id: &RpcId) {
    // `prepare` answers every system.hello; keep a typed answer anyway.
    conn.respond_error(
        Some(id),
        ErrorCode::HandshakeAlreadyCompleted
            .rpc("system.hello already succeeded", serde_json::Value::Null),
    )
    .await;
}

fn cancel(call: &Call, target: RequestCancelParams) -> RequestCancelResult {
    let status = match call.conn.inflight.cancel(&target.request_id) {
        CancelOutcome::Requested => RequestCancelStatus::Requested,
        CancelOutcome::AlreadyRequested => RequestCancelStatus::AlreadyRequested,
        CancelOutcome::NotFound => RequestCancelStatus::NotFound,
    };
    tracing::debug!(target = %target.request_id, ?status, "request.cancel");
    RequestCancelResult {
        request_id: target.request_id,
        status,
    }
}
