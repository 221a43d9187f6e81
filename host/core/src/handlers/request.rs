//! An accepted device request (route, Session, deadline, reserved id) and
//! what every device handler does with one: run a driver call on the
//! plugin's executor and map its failures, look up capabilities, check the
//! device is connected.

use std::sync::Arc;

use devicerail_host_plugin_api::{DeviceCapabilities, DriverError};
use devicerail_host_protocol::{
    ActionDefinition, ErrorCode, Feature, ObservationId, RpcError, RpcId, SEMANTIC_ACTIONS,
    ScreenshotOmissionReason, TestEventPayload,
};
use serde_json::json;

use crate::connection::{ActiveSession, Connection, Negotiated};
use crate::recorder::Shot;
use crate::state::Host;
use crate::wire_errors::driver_error;
use devicerail_host_config::ScreenshotPolicy;
use devicerail_host_engine::device_call::{self, Interrupt, Stop};
use devicerail_host_engine::observation::HostObservation;
use devicerail_host_engine::registry::Route;
use devicerail_host_store::event_store::NewEvent;

/// An accepted device request, ready to run concurrently.
pub(crate) struct Accepted {
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
    pub(crate) fn context(
        &self,
        observation: ObservationId,
    ) -> devicerail_host_plugin_api::CallContext {
        self.stop
            .context()
            .with_observation_id(observation)
            .with_request_id(self.id.to_string())
    }

    pub(crate) fn event(&self, payload: TestEventPayload) -> NewEvent {
        let mut e = NewEvent::new(payload);
        e.request_id = Some(self.id.clone());
        e.device_id = Some(self.route.device.clone());
        e
    }
}

/// Takes one of the plugin's request permits, within the request's
/// deadline.
pub(crate) async fn permit(a: &Accepted) -> Result<tokio::sync::OwnedSemaphorePermit, RpcError> {
    tokio::select! {
        p = a.route.permits.clone().acquire_owned() => {
            p.map_err(|_| interrupt_error(Interrupt::Shutdown, a.timeout_ms))
        }
        why = a.stop.wait() => Err(interrupt_error(why, a.timeout_ms)),
    }
}

/// The error for an interrupted request.
pub(crate) fn interrupt_error(why: Interrupt, timeout_ms: Option<u64>) -> RpcError {
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
pub(crate) fn failed_call(a: &Accepted, e: DriverError) -> RpcError {
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
pub(crate) fn require_connected(a: &Accepted) -> Result<(), RpcError> {
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

/// Maps how a driver call ended for an accepted request.
pub(crate) fn settled<T: Send + 'static>(
    a: &Accepted,
    r: Result<Result<T, DriverError>, device_call::Interrupted<T>>,
) -> Result<T, RpcError> {
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(failed_call(a, e)),
        Err(interrupted) => Err(interrupt_error(interrupted.why, a.timeout_ms)),
    }
}

/// Observes the device for an accepted request (the observation in the
/// form the host stores it) and maps every failure.
pub(crate) async fn observe_device(
    a: &Accepted,
    ctx: devicerail_host_plugin_api::CallContext,
    request: devicerail_host_plugin_api::ObserveRequest,
) -> Result<HostObservation, RpcError> {
    settled(
        a,
        device_call::observe(&a.route, ctx, &a.stop, request).await,
    )
}

/// Runs one driver call for an accepted request and maps every failure.
pub(crate) async fn call_driver<T: Send + 'static>(
    a: &Accepted,
    ctx: devicerail_host_plugin_api::CallContext,
    f: impl FnOnce(
        &dyn devicerail_host_plugin_api::Driver,
        &devicerail_host_plugin_api::CallContext,
    ) -> Result<T, DriverError>
    + Send
    + 'static,
) -> Result<T, RpcError> {
    settled(a, device_call::run(&a.route, ctx, &a.stop, f).await)
}

/// Fetches (and caches) the device's capabilities, keeping only what the
/// contract allows: unique names, semantic Actions only with UI trees.
pub(crate) async fn fetch_capabilities(a: &Accepted) -> Result<Arc<DeviceCapabilities>, RpcError> {
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
pub(crate) async fn capabilities(a: &Accepted) -> Result<Arc<DeviceCapabilities>, RpcError> {
    match a.host.cached_capabilities(&a.route.device) {
        Some(c) => Ok(c),
        None => fetch_capabilities(a).await,
    }
}

/// Whether this connection may see and call `def`.
pub(crate) fn visible(neg: &Negotiated, def: &ActionDefinition) -> bool {
    (!def.is_protected() || neg.has(Feature::ActionProtected))
        && (!SEMANTIC_ACTIONS.contains(&def.name.as_str())
            || neg.has(Feature::DeviceSemanticActions))
}

/// The screenshot choice for an observation.
pub(crate) fn shot(host: &Host, protected: bool) -> Shot {
    if protected {
        Shot::Omitted(ScreenshotOmissionReason::ProtectedAction)
    } else {
        match host.config.screenshot_policy {
            ScreenshotPolicy::Capture => Shot::Wanted,
            ScreenshotPolicy::Omit => Shot::Omitted(ScreenshotOmissionReason::Policy),
        }
    }
}
