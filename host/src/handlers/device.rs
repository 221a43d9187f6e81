//! Device methods: acceptance (route, Session, deadline, reserved id) and
//! `device.connect`, `device.disconnect`, `device.capabilities`,
//! `device.observe`. `device.execute` lives in [`super::execute`].

use std::sync::Arc;

use devicerail_plugin_api::{DeviceCapabilities, DriverError, ObserveRequest};
use devicerail_protocol::{
    ActionDefinition, DeviceDisconnectResult, DeviceExecuteParams, DeviceInfo, ErrorCode, Feature,
    MediaStreamCaptureParams, MethodId, NoParams, Observation, ObservationId, RpcError, RpcId,
    SEMANTIC_ACTIONS, ScreenshotOmissionReason, TestEventPayload,
};
use serde_json::json;

use crate::connection::{ActiveSession, BusyGuard, Connection, Negotiated, Work as SessionWork};
use crate::device_call::{self, Interrupt, Stop};
use crate::dispatch::{Call, feature_not_negotiated};
use crate::event_store::NewEvent;
use crate::handlers::{driver_error, execute, routing, session_required, store_error, streams};
use crate::recorder::{self, Shot, Tree};
use crate::registry::Route;
use crate::state::{Host, ScreenshotPolicy};

/// What an accepted device request will do.
enum Work {
    Connect,
    Disconnect,
    Capabilities,
    Observe,
    Execute(Box<DeviceExecuteParams>),
    Capture(MediaStreamCaptureParams),
}

/// An accepted device request, ready to run concurrently.
pub struct Accepted {
    pub host: Arc<Host>,
    pub conn: Arc<Connection>,
    pub neg: Arc<Negotiated>,
    pub id: RpcId,
    pub route: Route,
    pub stop: Stop,
    pub session: Option<Arc<ActiveSession>>,
    /// The request budget in ms, for error details.
    pub timeout_ms: Option<u64>,
}

impl Accepted {
    /// A driver context for this request with a fresh observation id.
    pub fn context(&self, observation: ObservationId) -> devicerail_plugin_api::CallContext {
        self.stop
            .context()
            .with_observation_id(observation)
            .with_request_id(self.id.to_string())
    }

    pub fn event(&self, payload: TestEventPayload) -> NewEvent {
        let mut e = NewEvent::new(payload);
        e.request_id = Some(self.id.clone());
        e.device_id = Some(self.route.device.clone());
        e
    }
}

/// Accepts a device request inline and runs it on its own task. The task
/// first takes one of the plugin's permits (waiting within the request's
/// deadline), so the memory and threads of a flood of pipelined requests
/// stay bounded.
pub async fn accept(mut call: Call) {
    let id = call.id.clone();
    let conn = call.conn.clone();
    match admit(&mut call) {
        Ok((accepted, work, busy)) => {
            tokio::spawn(async move {
                let frame = match permit(&accepted).await {
                    Ok(_permit) => run(&accepted, work).await,
                    Err(e) => Connection::encode_error(Some(&accepted.id), &e),
                };
                drop(busy);
                accepted.conn.inflight.complete(&accepted.id);
                accepted.conn.send_frame(frame).await;
                accepted.conn.inflight.release(&accepted.id);
            });
        }
        Err(e) => conn.respond_error(Some(&id), e).await,
    }
}

async fn permit(a: &Accepted) -> Result<tokio::sync::OwnedSemaphorePermit, RpcError> {
    tokio::select! {
        p = a.route.permits.clone().acquire_owned() => {
            p.map_err(|_| interrupt_error(Interrupt::Shutdown, a.timeout_ms))
        }
        why = a.stop.wait() => Err(interrupt_error(why, a.timeout_ms)),
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
        Work::Capture(p) => streams::capture_route(&call.conn, &p.stream_id)?,
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

async fn run(a: &Accepted, work: Work) -> Vec<u8> {
    let id = &a.id;
    match work {
        Work::Connect => encode(id, connect(a).await),
        Work::Disconnect => encode(id, disconnect(a).await),
        Work::Capabilities => encode(id, capabilities_method(a).await),
        Work::Observe => encode(id, observe(a).await),
        Work::Execute(p) => encode(id, execute::execute(a, *p).await),
        Work::Capture(p) => encode(id, streams::capture(a, p).await),
    }
}

fn encode<T: serde::Serialize>(id: &RpcId, r: Result<T, RpcError>) -> Vec<u8> {
    match r {
        Ok(v) => Connection::encode_result(id, &v),
        Err(e) => Connection::encode_error(Some(id), &e),
    }
}

/// The error for an interrupted request.
pub fn interrupt_error(why: Interrupt, timeout_ms: Option<u64>) -> RpcError {
    match why {
        Interrupt::TimedOut => ErrorCode::RequestTimedOut.rpc(
            format!(
                "the request exceeded its {} ms budget",
                timeout_ms.unwrap_or(0)
            ),
            json!({ "scope": "request", "timeoutMs": timeout_ms }),
        ),
        Interrupt::Cancelled => ErrorCode::RequestCancelled.rpc(
            "the request was cancelled",
            json!({ "reason": "requested" }),
        ),
        Interrupt::Shutdown => ErrorCode::RequestCancelled
            .rpc("the host is shutting down", json!({ "reason": "shutdown" })),
    }
}

/// Maps a driver error. A driver's own cancellation or deadline report is
/// the interrupt the host caused when one fired; otherwise the driver
/// stopped on its own (`driver_cancelled`, `driver_timed_out`).
pub fn failed_call(a: &Accepted, e: DriverError) -> RpcError {
    if e.is_deadline() || e.is_cancellation() {
        if let Some(why) = a.stop.fired() {
            return interrupt_error(why, a.timeout_ms);
        }
        let code = if e.is_deadline() {
            ErrorCode::DriverTimedOut
        } else {
            ErrorCode::DriverCancelled
        };
        return driver_error(DriverError::new(code, e.message));
    }
    driver_error(e)
}

/// `device_not_connected` unless the device was connected through this host.
pub fn require_connected(a: &Accepted) -> Result<(), RpcError> {
    if a.host.is_connected(&a.route.device) {
        Ok(())
    } else {
        Err(ErrorCode::DeviceNotConnected.rpc(
            format!(
                "device {} is not connected; call device.connect first",
                a.route.device
            ),
            json!({ "deviceId": a.route.device }),
        ))
    }
}

/// Runs one driver call for an accepted request and maps every failure.
pub async fn call_driver<T: Send + 'static>(
    a: &Accepted,
    ctx: devicerail_plugin_api::CallContext,
    f: impl FnOnce(
        &dyn devicerail_plugin_api::Driver,
        &devicerail_plugin_api::CallContext,
    ) -> Result<T, DriverError>
    + Send
    + 'static,
) -> Result<T, RpcError> {
    match device_call::run(&a.route, ctx, &a.stop, f).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(failed_call(a, e)),
        Err(interrupted) => Err(interrupt_error(interrupted.why, a.timeout_ms)),
    }
}

async fn connect(a: &Accepted) -> Result<DeviceInfo, RpcError> {
    let device = a.route.device.clone();
    let info = call_driver(a, a.context(ObservationId::new_v7()), move |d, ctx| {
        d.connect(ctx, &device)
    })
    .await?;
    a.host.registry.update(&info);
    a.host.note_connected(&info.id, true);
    a.host.forget_capabilities(&info.id);
    tracing::info!(device = %info.id, plugin = %a.route.plugin, "device connected");
    Ok(info)
}

async fn disconnect(a: &Accepted) -> Result<DeviceDisconnectResult, RpcError> {
    let device = a.route.device.clone();
    call_driver(a, a.context(ObservationId::new_v7()), move |d, ctx| {
        d.disconnect(ctx, &device)
    })
    .await?;
    a.host.registry.mark_disconnected(&a.route.device);
    a.host.note_connected(&a.route.device, false);
    a.host.forget_capabilities(&a.route.device);
    tracing::info!(device = %a.route.device, "device disconnected");
    Ok(DeviceDisconnectResult { disconnected: true })
}

/// Fetches (and caches) the device's capabilities, keeping only what the
/// contract allows: unique names, semantic Actions only with UI trees.
pub async fn fetch_capabilities(a: &Accepted) -> Result<Arc<DeviceCapabilities>, RpcError> {
    let device = a.route.device.clone();
    let mut caps = call_driver(a, a.context(ObservationId::new_v7()), move |d, ctx| {
        d.capabilities(ctx, &device)
    })
    .await?;
    let mut seen = std::collections::HashSet::new();
    caps.actions.retain(|def| {
        let keep = seen.insert(def.name.clone());
        if !keep {
            tracing::warn!(device = %a.route.device, action = %def.name, "duplicate action name ignored");
        }
        keep
    });
    if !caps.ui_tree {
        let before = caps.actions.len();
        caps.actions
            .retain(|def| !SEMANTIC_ACTIONS.contains(&def.name.as_str()));
        if caps.actions.len() != before {
            tracing::warn!(device = %a.route.device, "semantic actions advertised without UI trees were ignored");
        }
    }
    Ok(a.host.cache_capabilities(&a.route.device, caps))
}

/// Cached capabilities, fetched on first use.
pub async fn capabilities(a: &Accepted) -> Result<Arc<DeviceCapabilities>, RpcError> {
    match a.host.cached_capabilities(&a.route.device) {
        Some(c) => Ok(c),
        None => fetch_capabilities(a).await,
    }
}

/// Whether this connection may see and call `def`.
pub fn visible(neg: &Negotiated, def: &ActionDefinition) -> bool {
    (!def.is_protected() || neg.has(Feature::ActionProtected))
        && (!SEMANTIC_ACTIONS.contains(&def.name.as_str())
            || neg.has(Feature::DeviceSemanticActions))
}

async fn capabilities_method(a: &Accepted) -> Result<Vec<ActionDefinition>, RpcError> {
    let caps = fetch_capabilities(a).await?;
    Ok(caps
        .actions
        .iter()
        .filter(|d| visible(&a.neg, d))
        .cloned()
        .collect())
}

/// The screenshot choice for an observation.
pub fn shot(host: &Host, protected: bool) -> Shot {
    if protected {
        Shot::Omitted(ScreenshotOmissionReason::ProtectedAction)
    } else {
        match host.config.screenshot_policy {
            ScreenshotPolicy::Capture => Shot::Wanted,
            ScreenshotPolicy::Omit => Shot::Omitted(ScreenshotOmissionReason::Policy),
        }
    }
}

async fn observe(a: &Accepted) -> Result<Observation, RpcError> {
    let session = a
        .session
        .clone()
        .ok_or_else(|| session_required("device.observe"))?;
    require_connected(a)?;
    let caps = capabilities(a).await?;
    let tree = match (a.neg.has(Feature::ObservationUiSnapshot), caps.ui_tree) {
        (false, _) => Tree::NotRequested,
        (true, true) => Tree::Wanted,
        (true, false) => {
            Tree::Omitted(devicerail_protocol::UiSnapshotOmissionReason::DriverUnsupported)
        }
    };
    let shot = shot(&a.host, false);
    let request = ObserveRequest {
        screenshot: shot == Shot::Wanted,
        ui_tree: tree == Tree::Wanted,
    };
    let observation_id = ObservationId::new_v7();
    let device = a.route.device.clone();
    let obs = call_driver(a, a.context(observation_id), move |d, ctx| {
        d.observe(ctx, &device, &request)
    })
    .await?;
    let captured =
        recorder::capture(&a.host, observation_id, &a.route.device, obs, shot, tree).await?;
    if let Some(why) = a.stop.fired() {
        return Err(interrupt_error(why, a.timeout_ms));
    }
    let mut event = a.event(TestEventPayload::ObservationCaptured {
        observation: captured.observation.clone(),
    });
    event.evidence = captured.evidence;
    a.host
        .store
        .append_one(session.id, event)
        .await
        .map_err(store_error)?;
    Ok(captured.observation)
}

/// A typed error for an unknown Action.
pub fn unknown_action(name: &str) -> RpcError {
    driver_error(DriverError::unknown_action(name))
}
