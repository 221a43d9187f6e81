//! Accepting device requests: decode params, check what must be checked
//! before routing, capture the route, the Session and the deadline,
//! reserve the id, then run the handler on a task of its own (responses
//! may come out of order). The task first takes one of the plugin's
//! permits, so a flood of pipelined requests stays bounded.

use devicerail_host_protocol::{
    DeviceExecuteParams, ErrorCode, Feature, MediaStreamCaptureParams, MethodId, NoParams,
    RpcError, RpcId, SEMANTIC_ACTIONS,
};
use serde_json::json;

use crate::connection::{BusyGuard, Connection, Work as SessionWork};
use crate::handlers::answer::Answer;
use crate::handlers::call::Call;
use crate::handlers::request::{Accepted, permit};
use crate::handlers::{device, execute, media, routing, session_required};
use crate::wire_errors::feature_not_negotiated;

/// What an accepted device request will do.
enum Work {
    Connect,
    Disconnect,
    Capabilities,
    Observe,
    Execute(Box<DeviceExecuteParams>),
    Capture(MediaStreamCaptureParams),
}

/// Accepts a device request inline and runs it on its own task. The task
/// first takes one of the plugin's permits (waiting within the request's
/// deadline), so the memory and threads of a flood of pipelined requests
/// stay bounded.
pub(super) async fn accept(mut call: Call) {
    let id = call.id.clone();
    let conn = call.conn.clone();
    match admit(&mut call) {
        Ok((accepted, work, busy)) => {
            tokio::spawn(async move {
                let mut answer = Answer::new(accepted.conn.clone(), accepted.id.clone(), busy);
                match permit(&accepted).await {
                    Ok(permit) => {
                        answer.hold(permit);
                        run(&accepted, work, answer).await;
                    }
                    Err(e) => {
                        let frame = Connection::encode_error(Some(&accepted.id), &e);
                        answer.send(frame).await;
                    }
                }
            });
        }
        Err(e) => conn.respond_error(Some(&id), e).await,
    }
}

/// `semantic_action_not_negotiated` for `name`.
fn semantic_not_negotiated(name: &str) -> RpcError {
    ErrorCode::SemanticActionNotNegotiated.rpc(
        format!("{name} is a semantic action; negotiate device.semanticActions.v1 to use it"),
        json!({ "action": name, "requiredFeature": Feature::DeviceSemanticActions.name() }),
    )
}

fn admit(call: &mut Call) -> Result<(Accepted, Work, Option<BusyGuard>), RpcError> {
    let work = match call.spec.id {
        MethodId::DeviceConnect => call.params::<NoParams>().map(|_| Work::Connect)?,
        MethodId::DeviceDisconnect => call.params::<NoParams>().map(|_| Work::Disconnect)?,
        MethodId::DeviceCapabilities => call.params::<NoParams>().map(|_| Work::Capabilities)?,
        MethodId::DeviceObserve => call.params::<NoParams>().map(|_| Work::Observe)?,
        MethodId::DeviceExecute => {
            let p: DeviceExecuteParams = call.params()?;
            if SEMANTIC_ACTIONS.contains(&p.name.as_str())
                && !call.neg.has(Feature::DeviceSemanticActions)
            {
                return Err(semantic_not_negotiated(&p.name));
            }
            if p.action_timeout_ms.is_some() && !call.neg.has(Feature::RequestControl) {
                return Err(feature_not_negotiated(
                    "actionTimeoutMs",
                    Feature::RequestControl,
                ));
            }
            Work::Execute(Box::new(p))
        }
        MethodId::MediaStreamCapture => Work::Capture(call.params()?),
        other => {
            return Err(ErrorCode::InternalError.rpc(
                format!("{} is not a device method", other.name()),
                serde_json::Value::Null,
            ));
        }
    };
    let route = match &work {
        // A capture always uses the device its stream was started on.
        Work::Capture(p) => media::capture_route(&call.conn, &p.stream_id)?,
        _ => routing::resolve(&call.host, &call.conn)?,
    };
    let session = call.conn.session();
    // device.execute checks its Session after the protected-action check.
    if matches!(work, Work::Observe | Work::Capture(_)) && session.is_none() {
        return Err(session_required(call.spec.name));
    }
    let cancel = call.conn.inflight.reserve(
        &call.id,
        &tokio_util::sync::CancellationToken::new(),
        call.host.config.max_inflight,
    )?;
    let busy_kind = match work {
        Work::Observe => Some(SessionWork::Observation),
        Work::Execute(_) => Some(SessionWork::Action),
        Work::Capture(_) => Some(SessionWork::Capture),
        _ => None,
    };
    let (session, busy) = match busy_kind {
        Some(kind) => (session.clone(), session.as_ref().map(|s| s.enter(kind))),
        None => (None, None),
    };
    let accepted = Accepted {
        host: call.host.clone(),
        conn: call.conn.clone(),
        neg: call.neg.clone(),
        id: call.id.clone(),
        route,
        stop: call.stop(cancel),
        session,
        timeout_ms: call.timeout_ms,
    };
    Ok((accepted, work, busy))
}

async fn run(a: &Accepted, work: Work, answer: Answer) {
    let id = &a.id;
    let frame = match work {
        Work::Connect => encode(id, device::connect(a).await),
        Work::Disconnect => encode(id, device::disconnect(a).await),
        Work::Capabilities => encode(id, device::capabilities_method(a).await),
        // Answered from its commit.
        Work::Observe => return device::observe(a, answer).await,
        Work::Execute(p) => encode(id, execute::execute(a, *p).await),
        Work::Capture(p) => encode(id, media::capture(a, p).await),
    };
    answer.send(frame).await;
}

fn encode<T: serde::Serialize>(id: &RpcId, r: Result<T, RpcError>) -> Vec<u8> {
    match r {
        Ok(v) => Connection::encode_result(id, &v),
        Err(e) => Connection::encode_error(Some(id), &e),
    }
}
