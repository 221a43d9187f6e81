//! Dispatch: one input frame in, one response out. Transports hand frames
//! to a [`Dispatcher`] they are given; dispatch checks them and routes each
//! request to its handler. It never reaches back into a transport.
//!
//! Checks run in the reference daemon's order: JSON → envelope → reserved
//! id → in-flight bound → hello → handshake phase → method table (feature,
//! version, transport) → `timeoutMs` rules → params. Control methods run
//! inline, in arrival order; device methods are accepted inline and run
//! concurrently ([`device`]), so their responses may come out of order.
//! Event-stream sockets follow a fixed conversation ([`stream`]).

mod device;
mod stream;

use std::sync::Arc;

use devicerail_host_protocol::lab::{LAB_FRAME, LAB_METHODS, LAB_STATUS};
use devicerail_host_protocol::pool::{POOL_METHODS, POOL_RESERVE, POOL_STATUS};
use devicerail_host_protocol::{
    ErrorCode, Feature, MAX_FRAME_BYTES, MethodId, MethodSpec, RequestCancelParams,
    RequestCancelResult, RequestCancelStatus, RpcError, RpcId, RpcParams, RpcRequest, method_spec,
};
use serde_json::json;

use crate::connection::{CancelOutcome, Connection, Phase};
use crate::handlers::call::Call;
pub(crate) use crate::handlers::closing::Why as Closing;
use crate::handlers::{self, events, media};
use crate::state::Host;
pub(crate) use crate::wire_errors::feature_not_negotiated;

pub(crate) use stream::{CLOSE_POLICY, SocketPhase};

/// What transports hand their frames to.
#[derive(Clone)]
pub(crate) struct Dispatcher {
    host: Arc<Host>,
}

impl Dispatcher {
    pub(crate) fn new(host: Arc<Host>) -> Self {
        Self { host }
    }

    /// The host this dispatcher serves.
    pub(crate) fn host(&self) -> &Arc<Host> {
        &self.host
    }

    /// Handles one request frame of a control connection.
    pub(crate) async fn handle_line(&self, conn: &Arc<Connection>, line: Vec<u8>) {
        handle_line(&self.host, conn, line).await;
    }

    /// Ends a control connection whose transport is done with it: cancels
    /// its unfinished requests, ends its Session, releases its leases.
    pub(crate) async fn close(&self, conn: &Arc<Connection>, why: Closing) {
        handlers::closing::close(&self.host, conn, why).await;
    }

    /// Answers a frame the transport discarded for its size.
    pub(crate) async fn frame_too_large(&self, conn: &Arc<Connection>, len: usize) {
        conn.respond_error(None, frame_too_large(len)).await;
    }

    /// Handles one message of an event-stream socket (`None`: a binary
    /// frame) in its `phase` and returns the next phase.
    pub(crate) async fn stream_message(
        &self,
        conn: &Arc<Connection>,
        phase: SocketPhase,
        bytes: Option<Vec<u8>>,
    ) -> SocketPhase {
        stream::message(&self.host, conn, phase, bytes).await
    }
}

/// The error for a frame over the limit. (The reference daemon closes the
/// connection; this host answers and keeps serving, so one bad line costs
/// the client one error, not its Session.)
pub(crate) fn frame_too_large(len: usize) -> RpcError {
    ErrorCode::InvalidRequest.rpc(
        format!(
            "the frame is {len} bytes, over the {MAX_FRAME_BYTES}-byte limit; it was discarded"
        ),
        serde_json::Value::Null,
    )
}

/// The longest request id this host echoes, in bytes of its JSON form.
///
/// Every frame the host writes must fit the 1 MiB limit it enforces on its
/// peers, and every answer echoes its request's id: an id close to the
/// limit could not be answered at all, not even with
/// `response_frame_too_large`. A string id longer than this is refused as
/// `invalid_request` with `id: null` (JSON-RPC's answer when the id cannot
/// be echoed). 4 KiB is far beyond any id a client uses (UUIDs are 38
/// bytes) and leaves every error answer well inside the frame limit.
pub(crate) const MAX_ECHOED_ID_BYTES: usize = 4096;

/// Parses one frame into a request envelope. Failures are answered with a
/// `null` id: `parse_error` (with the line and column) or
/// `invalid_request` (including an id longer than
/// [`MAX_ECHOED_ID_BYTES`]).
pub(crate) fn parse_request(line: Vec<u8>) -> Result<RpcRequest, RpcError> {
    let text = String::from_utf8(line).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        ErrorCode::ParseError.rpc(
            format!("the frame is not UTF-8 (invalid byte at offset {offset})"),
            json!({ "line": 1, "column": offset + 1 }),
        )
    })?;
    // A well-formed request is read straight into its members; anything
    // else the long way, which names what is wrong.
    let request = match RpcRequest::from_exact_str(&text) {
        Some(request) => request,
        None => {
            let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
                ErrorCode::ParseError.rpc(
                    format!("the frame is not valid JSON: {e}"),
                    json!({ "line": e.line(), "column": e.column() }),
                )
            })?;
            RpcRequest::from_value(value).map_err(|e| e.error)?
        }
    };
    let id_bytes = echoed_id_bytes(&request.id);
    if id_bytes > MAX_ECHOED_ID_BYTES {
        return Err(ErrorCode::InvalidRequest.rpc(
            format!(
                "the id is {id_bytes} bytes; ids longer than {MAX_ECHOED_ID_BYTES} bytes cannot be echoed in an answer"
            ),
            serde_json::Value::Null,
        ));
    }
    Ok(request)
}

/// The length of `id` as an answer would carry it.
fn echoed_id_bytes(id: &RpcId) -> usize {
    match id {
        // Digits only: short by construction.
        RpcId::Number(_) => 0,
        RpcId::String(s) => serde_json::to_string(s).map_or(usize::MAX, |j| j.len()),
    }
}

/// Handles one input line.
async fn handle_line(host: &Arc<Host>, conn: &Arc<Connection>, line: Vec<u8>) {
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
        Ok(Prepared::Pool { method, params }) => {
            use handlers::pool;
            match method.as_str() {
                POOL_STATUS => conn.respond(&id, Ok(pool::status(host).await)).await,
                POOL_RESERVE => conn.respond(&id, pool::reserve(host, conn, params)).await,
                _ => conn.respond(&id, pool::release(host, params)).await,
            }
        }
        Ok(Prepared::Lab { method, params }) => {
            use handlers::lab;
            match method.as_str() {
                LAB_STATUS => conn.respond(&id, Ok(lab::status(host).await)).await,
                LAB_FRAME => conn.respond(&id, lab::frame(host, params).await).await,
                _ => conn.respond(&id, lab::events(host, params).await).await,
            }
        }
        Err(e) => conn.respond_error(Some(&id), e).await,
    }
}

enum Prepared {
    Hello(Option<RpcParams>),
    Call(Call),
    /// A method of the host's pool extension (outside the method table).
    Pool {
        method: String,
        params: Option<RpcParams>,
    },
    /// A method of the host's lab extension (outside the method table).
    Lab {
        method: String,
        params: Option<RpcParams>,
    },
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
    if spec.is_none() && neg.pool && POOL_METHODS.contains(&req.method.as_str()) {
        if req.timeout_ms.is_some() {
            if !neg.has(Feature::RequestControl) {
                return Err(feature_not_negotiated("timeoutMs", Feature::RequestControl));
            }
            return Err(timeout_not_supported(&req.method));
        }
        return Ok(Prepared::Pool {
            method: req.method,
            params: req.params,
        });
    }
    if spec.is_none() && neg.lab && LAB_METHODS.contains(&req.method.as_str()) {
        if req.timeout_ms.is_some() {
            if !neg.has(Feature::RequestControl) {
                return Err(feature_not_negotiated("timeoutMs", Feature::RequestControl));
            }
            return Err(timeout_not_supported(&req.method));
        }
        return Ok(Prepared::Lab {
            method: req.method,
            params: req.params,
        });
    }
    if spec.is_none() && POOL_METHODS.contains(&req.method.as_str()) {
        // Nothing about reservations for anyone but the pool manager.
        return Err(ErrorCode::MethodNotFound.rpc(
            format!(
                "{} is answered only to the host's pool manager, on a connection that negotiated {}",
                req.method,
                devicerail_host_protocol::pool::POOL_FEATURE
            ),
            json!({ "method": req.method }),
        ));
    }
    let Some(spec) = spec else {
        return Err(MethodSpec::not_found_error(
            &req.method,
            &devicerail_host_protocol::Availability::Unknown,
        ));
    };
    match spec.availability(neg.version, neg.features, web_socket) {
        devicerail_host_protocol::Availability::Available => {}
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
pub(crate) fn handshake_required() -> RpcError {
    ErrorCode::HandshakeRequired.rpc(
        "system.hello must complete before any other method",
        json!({ "requiredMethod": MethodId::SystemHello.name() }),
    )
}

/// `too_many_requests` at `limit`.
pub(crate) fn too_many_requests(limit: usize) -> RpcError {
    ErrorCode::TooManyRequests.rpc(
        format!("the connection already has {limit} requests in flight"),
        json!({ "limit": limit }),
    )
}

/// `request_timeout_not_supported` for `method`.
pub(crate) fn timeout_not_supported(method: &str) -> RpcError {
    let supported: Vec<&str> = devicerail_host_protocol::METHODS
        .iter()
        .filter(|m| m.accepts_timeout)
        .map(|m| m.name)
        .collect();
    ErrorCode::RequestTimeoutNotSupported.rpc(
        format!("{method} does not accept timeoutMs"),
        json!({ "field": "timeoutMs", "method": method, "supportedMethods": supported }),
    )
}

async fn run(mut call: Call) {
    use handlers::{evidence, routing, sessions, system};
    let id = call.id.clone();
    let conn = call.conn.clone();
    match call.spec.id {
        MethodId::SystemHello => unreachable_hello(&conn, &id).await,
        MethodId::SystemDescribe => {
            let r = call
                .params::<devicerail_host_protocol::NoParams>()
                .map(|_| system::describe(&call));
            conn.respond(&id, r).await;
        }
        MethodId::DevicesList => {
            let r = call
                .params::<devicerail_host_protocol::NoParams>()
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
        MethodId::EventsSubscribe => {
            events::subscribe(&mut call).await;
        }
        MethodId::EventsStreamOpen => {
            let r = events::open(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::MediaStreamStart => {
            let r = media::start(&mut call).await;
            conn.respond(&id, r).await;
        }
        MethodId::MediaStreamEnd => {
            let r = media::end(&mut call).await;
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
