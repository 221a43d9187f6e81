//! [`RemoteDriver`]: the host's [`Driver`] for a plugin that runs in a
//! worker process. Each call is one request frame and one reply; the
//! caller waits on its own channel, forwards its cancellation, and kills
//! the worker when it stays silent past the call's deadline (or
//! cancellation) plus grace. While the worker is down, calls fail at once
//! with retryable errors (`device_unavailable`, or `driver_crashed` for a
//! call the dead worker had). This module never blocks an async worker:
//! blocking callers run on the plugin's executor threads, async callers
//! (observations and Actions on the serving path) use
//! [`RemoteDriver::start_async`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::driver::{
    ActionOutput, DeviceCapabilities, DeviceHealth, DoctorCheck, DriverObservation, ObserveRequest,
};
use devicerail_host_plugin_api::{CallContext, Driver, DriverError, DriverResult};
use devicerail_host_protocol::{ActionCall, DeviceId, DeviceInfo, ErrorCode, ObservationId};
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::message::{ActedWire, Method, ObservedWire, violation};
use super::shared::{AsyncCall, Shared};
use super::spec::{StartError, WorkerSpec};
use super::supervisor::Opening;
use crate::observation::{HostActionOutput, HostObservation, UiViolation};

/// A plugin's driver served by a supervised worker process.
pub struct RemoteDriver {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RemoteDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteDriver")
            .field("plugin", &self.shared.spec().plugin_id)
            .finish()
    }
}

fn decode<T: DeserializeOwned>(what: &str, v: &RawValue) -> DriverResult<T> {
    serde_json::from_str(v.get()).map_err(|e| violation(what, e))
}

/// A UI tree the plain `Driver` interface cannot return.
fn ui_violation(e: UiViolation) -> DriverError {
    DriverError::new(ErrorCode::ProtocolError, format!("the driver returned {e}"))
}

impl RemoteDriver {
    /// Starts the plugin's worker and waits until its driver is
    /// constructed.
    pub fn start(spec: WorkerSpec) -> Result<Self, StartError> {
        let opening = Opening::open(&spec.exe, &spec.plugin_file, &spec.log_filter)?;
        Self::serve(opening, spec)
    }

    /// Serves `spec` with the worker that already opened its library (the
    /// host read the manifest from it to choose `spec`'s settings), and
    /// waits until its driver is constructed.
    pub fn serve(opening: Opening, spec: WorkerSpec) -> Result<Self, StartError> {
        let shared = Arc::new(Shared::new(spec));
        opening.serve(shared.clone())?;
        Ok(Self { shared })
    }

    /// The plugin id.
    pub fn plugin_id(&self) -> &str {
        &self.shared.spec().plugin_id
    }

    /// The live worker's process id, if one is up.
    pub fn worker_pid(&self) -> Option<u32> {
        self.shared.current().ok().map(|l| l.pid())
    }

    /// How often the worker was restarted.
    pub fn restarts(&self) -> u64 {
        self.shared.restarts()
    }

    /// Observes `device` as the host stores observations: the driver's
    /// JSON text and PNG cross as the driver encoded them, and are decoded
    /// here, the tree encoded as `ctx`'s observation's snapshot.
    pub fn observe_host(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<HostObservation> {
        let (v, parts) = self.shared.call(
            ctx,
            Method::Observe {
                device: device.clone(),
                request: *request,
            },
        )?;
        observation(&v, parts, ctx.observation_id(), request.ui_tree)
    }

    /// Executes one Action, its resolved observation as the host stores
    /// it.
    pub fn execute_host(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<HostActionOutput> {
        let (v, parts) = self.shared.call(
            ctx,
            Method::Execute {
                device: device.clone(),
                call: call.clone(),
            },
        )?;
        action_output(&v, parts, ctx.observation_id())
    }

    /// Sends one call for an async caller (see [`AsyncCall`]).
    pub(crate) async fn start_async(
        &self,
        ctx: &CallContext,
        method: Method,
    ) -> DriverResult<AsyncCall> {
        self.shared.start_async(ctx, method).await
    }

    /// A handle that tells whether the worker is up, for the registry.
    pub fn probe(&self) -> WorkerProbe {
        WorkerProbe(self.shared.clone())
    }
}

/// Whether a plugin's worker is up right now (cheap: no call is made).
#[derive(Clone)]
pub struct WorkerProbe(Arc<Shared>);

impl WorkerProbe {
    /// `None` while the worker is up, else why it is not, in a few words.
    pub fn down(&self) -> Option<&'static str> {
        self.0.current().err().map(|d| d.summary())
    }

    /// The worker's health, and why it is down when it is.
    pub fn health(
        &self,
    ) -> (
        devicerail_host_protocol::lab::WorkerHealth,
        Option<&'static str>,
    ) {
        match self.0.current() {
            Ok(_) => (devicerail_host_protocol::lab::WorkerHealth::Up, None),
            Err(d) => (d.health(), Some(d.summary())),
        }
    }
}

impl std::fmt::Debug for WorkerProbe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerProbe")
            .field("plugin", &self.0.spec().plugin_id)
            .field("down", &self.down())
            .finish()
    }
}

/// An observation reply as the host stores it (its UI tree kept when
/// `ui_tree` was asked for).
pub(crate) fn observation(
    v: &RawValue,
    parts: Vec<Vec<u8>>,
    id: ObservationId,
    ui_tree: bool,
) -> DriverResult<HostObservation> {
    let wire: ObservedWire = decode("observation", v)?;
    wire.join(&mut parts.into_iter(), id, "observation", ui_tree)
}

/// An Action's reply, its resolved observation as the host stores it.
pub(crate) fn action_output(
    v: &RawValue,
    parts: Vec<Vec<u8>>,
    id: ObservationId,
) -> DriverResult<HostActionOutput> {
    let wire: ActedWire = decode("action output", v)?;
    wire.join(&mut parts.into_iter(), id)
}

impl Driver for RemoteDriver {
    fn list_devices(&self, ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        let (v, _) = self.shared.call(ctx, Method::ListDevices)?;
        decode("device list", &v)
    }

    fn connect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceInfo> {
        let (v, _) = self.shared.call(
            ctx,
            Method::Connect {
                device: device.clone(),
            },
        )?;
        let info: DeviceInfo = decode("device info", &v)?;
        self.shared.note_connected(device, true);
        Ok(info)
    }

    fn disconnect(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<()> {
        self.shared.note_connected(device, false);
        self.shared.call(
            ctx,
            Method::Disconnect {
                device: device.clone(),
            },
        )?;
        Ok(())
    }

    fn health(&self, ctx: &CallContext, device: &DeviceId) -> DriverResult<DeviceHealth> {
        let (v, _) = self.shared.call(
            ctx,
            Method::Health {
                device: device.clone(),
            },
        )?;
        decode("health report", &v)
    }

    fn capabilities(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        let (v, _) = self.shared.call(
            ctx,
            Method::Capabilities {
                device: device.clone(),
            },
        )?;
        decode("capabilities", &v)
    }

    fn observe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        self.observe_host(ctx, device, request)?
            .into_driver_observation()
            .map_err(ui_violation)
    }

    fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        self.execute_host(ctx, device, call)?
            .into_action_output()
            .map_err(ui_violation)
    }

    fn doctor(&self) -> Vec<DoctorCheck> {
        let ctx = CallContext::new(Some(Instant::now() + Duration::from_secs(30)));
        match self
            .shared
            .call(&ctx, Method::Doctor)
            .and_then(|(v, _)| decode::<Vec<DoctorCheck>>("doctor report", &v))
        {
            Ok(checks) => checks,
            Err(e) => vec![DoctorCheck::fail(
                format!("{} doctor", self.shared.spec().plugin_id),
                e.message,
            )],
        }
    }
}

impl Drop for RemoteDriver {
    fn drop(&mut self) {
        self.shared.stop();
    }
}
