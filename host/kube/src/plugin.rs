//! The `DevicePlugin` service of one resource: `ListAndWatch` streams the
//! resource's devices with their health (the current list at once, then
//! every change), and `Allocate` reserves the kubelet's chosen devices on
//! the shared host for a fresh token and tells the container how to reach
//! them (environment, and a read-only mount of the host's socket
//! directory).
//!
//! The token goes to the host, the state file and the container's
//! environment; never to a log line or an error message.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::Arc;

use futures_util::{Stream, StreamExt};
use tokio::sync::{Mutex, watch};
use tokio_stream::wrappers::WatchStream;
use tonic::{Request, Response, Status};

use crate::api::deviceplugin::device_plugin_server::DevicePlugin;
use crate::api::deviceplugin::{
    AllocateRequest, AllocateResponse, ContainerAllocateResponse, Device, DevicePluginOptions,
    Empty, ListAndWatchResponse, Mount, PreStartContainerRequest, PreStartContainerResponse,
    PreferredAllocationRequest, PreferredAllocationResponse,
};
use crate::config::Config;
use crate::pool::{Holder, Pool, PoolError};
use crate::state::{Allocation, Allocations};

/// The environment variable naming the host's socket in the container.
pub const ENV_SOCKET: &str = "DEVICERAIL_SOCKET";
/// The environment variable naming the allocated device (several: comma
/// separated).
pub const ENV_DEVICE: &str = "DEVICERAIL_DEVICE_ID";
/// The environment variable carrying the reservation token
/// (`devicerail attach` presents it).
pub const ENV_TOKEN: &str = "DEVICERAIL_LEASE_TOKEN";

/// The label of our reservations, as the host lists them.
pub fn reservation_label(resource: &str) -> String {
    format!("kubernetes {resource}")
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What every resource's `Allocate` shares: the host, the allocations,
/// and what a container is given.
pub struct Allocator<P: Pool> {
    pool: Arc<P>,
    state: Arc<Mutex<Allocations>>,
    socket: String,
    node_dir: String,
    container_dir: String,
    /// Woken after an allocation so the device lists are read again.
    changed: Arc<tokio::sync::Notify>,
}

impl<P: Pool> Allocator<P> {
    /// An allocator reserving from `pool`, recording into `state`, and
    /// waking `changed` after each allocation.
    pub fn new(
        config: &Config,
        pool: Arc<P>,
        state: Arc<Mutex<Allocations>>,
        changed: Arc<tokio::sync::Notify>,
    ) -> Self {
        Self {
            pool,
            state,
            socket: config.container_socket().display().to_string(),
            node_dir: config.node_socket_dir.display().to_string(),
            container_dir: config.container_socket_dir.display().to_string(),
            changed,
        }
    }

    /// Reserves `devices` of `resource` for one container and records the
    /// allocation. A refusal leaves everything as it was: reservations
    /// this call made are released, reservations of earlier allocations
    /// it replaced are made again, and the state file is untouched.
    async fn allocate_container(
        &self,
        resource: &str,
        devices: &[String],
    ) -> Result<ContainerAllocateResponse, Status> {
        if devices.is_empty() {
            return Err(Status::invalid_argument("no device ids to allocate"));
        }
        let token = crate::token::fresh().map_err(|e| Status::internal(e.to_string()))?;
        let label = reservation_label(resource);
        let mut state = self.state.lock().await;
        // Earlier allocations of these devices. The kubelet gives a device
        // out again only once its pod is gone, so they are stale, unless a
        // client still holds the device with the earlier token: then the
        // earlier pod runs and nothing may be touched.
        let earlier: Vec<Allocation> = devices
            .iter()
            .filter_map(|id| state.get(id).cloned())
            .collect();
        if !earlier.is_empty() {
            let view = self
                .pool
                .view()
                .await
                .map_err(|e| refusal(e, &earlier[0].device_id))?;
            if let Some(held) = earlier.iter().find(|a| {
                view.devices.iter().any(|d| {
                    d.id == a.device_id && matches!(d.holder, Holder::Reserved { taken: true, .. })
                })
            }) {
                tracing::warn!(
                    device = %held.device_id,
                    "allocation refused: the device is in use by the pod it was allocated to"
                );
                return Err(Status::failed_precondition(format!(
                    "device {} is in use by the pod it was allocated to",
                    held.device_id
                )));
            }
        }
        let mut undo = Undo::default();
        for id in devices {
            if let Some(old) = earlier.iter().find(|a| &a.device_id == id) {
                match self.pool.release(id, &old.token).await {
                    Ok(_) => undo.released.push(old.clone()),
                    Err(e) => return Err(self.undo(undo, &token, e, id).await),
                }
            }
            if let Err(e) = self.pool.reserve(id, &token, &label).await {
                return Err(self.undo(undo, &token, e, id).await);
            }
            undo.reserved.push(id.clone());
        }
        let before: Vec<Allocation> = earlier.clone();
        for id in devices {
            state.put(Allocation {
                device_id: id.clone(),
                resource: resource.to_owned(),
                token: token.clone(),
                allocated_at_ms: now_ms(),
                pod: None,
                missed: 0,
            });
        }
        if let Err(e) = state.save() {
            for id in devices {
                state.remove(id);
            }
            for a in before {
                state.put(a);
            }
            drop(state);
            let status = Status::internal(format!("the allocation could not be recorded: {e}"));
            tracing::error!(resource, "allocation refused: {e}");
            self.restore(undo, &token).await;
            return Err(status);
        }
        drop(state);
        self.changed.notify_one();
        tracing::info!(resource, devices = ?devices, "devices allocated and reserved");
        let envs = HashMap::from([
            (ENV_SOCKET.to_owned(), self.socket.clone()),
            (ENV_DEVICE.to_owned(), devices.join(",")),
            (ENV_TOKEN.to_owned(), token.expose().to_owned()),
        ]);
        Ok(ContainerAllocateResponse {
            envs,
            mounts: vec![Mount {
                container_path: self.container_dir.clone(),
                host_path: self.node_dir.clone(),
                // Connecting to a socket needs no write access to the
                // file system it is on.
                read_only: true,
            }],
            devices: Vec::new(),
            annotations: HashMap::new(),
            cdi_devices: Vec::new(),
        })
    }

    /// Puts back what an allocation changed on the host (see [`Undo`]).
    async fn restore(&self, undo: Undo, token: &devicerail_host_protocol::pool::LeaseToken) {
        for d in &undo.reserved {
            let _ = self.pool.release(d, token).await;
        }
        for old in &undo.released {
            let label = reservation_label(&old.resource);
            if let Err(e) = self.pool.reserve(&old.device_id, &old.token, &label).await {
                tracing::error!(device = %old.device_id, "could not restore an earlier reservation: {e}");
            }
        }
    }

    /// Puts back what this call changed and describes the refusal.
    async fn undo(
        &self,
        undo: Undo,
        token: &devicerail_host_protocol::pool::LeaseToken,
        e: PoolError,
        id: &str,
    ) -> Status {
        self.restore(undo, token).await;
        tracing::warn!(device = id, "allocation refused: {e}");
        refusal(e, id)
    }
}

/// What one allocation changed on the host so far.
#[derive(Default)]
struct Undo {
    /// Devices reserved for the new token.
    reserved: Vec<String>,
    /// Earlier allocations whose reservations were released.
    released: Vec<Allocation>,
}

/// The kubelet's status for a refusal of the host about device `id`.
fn refusal(e: PoolError, id: &str) -> Status {
    match e {
        PoolError::Unreachable(_) => Status::unavailable(format!("device {id}: {e}")),
        PoolError::Refused { .. } => Status::failed_precondition(format!("device {id}: {e}")),
    }
}

/// The `DevicePlugin` service of one resource.
pub struct ResourcePlugin<P: Pool> {
    /// The extended resource name it serves.
    pub resource: String,
    /// The current device list (ids and health) of the resource.
    pub devices: watch::Receiver<Vec<Device>>,
    /// Answers `Allocate` for it.
    pub allocator: Arc<Allocator<P>>,
    /// Ends every `ListAndWatch` stream (the server is being stopped).
    pub stop: tokio_util::sync::CancellationToken,
}

type ListStream = Pin<Box<dyn Stream<Item = Result<ListAndWatchResponse, Status>> + Send>>;

#[tonic::async_trait]
impl<P: Pool> DevicePlugin for ResourcePlugin<P> {
    async fn get_device_plugin_options(
        &self,
        _: Request<Empty>,
    ) -> Result<Response<DevicePluginOptions>, Status> {
        Ok(Response::new(DevicePluginOptions {
            pre_start_required: false,
            get_preferred_allocation_available: false,
        }))
    }

    type ListAndWatchStream = ListStream;

    async fn list_and_watch(
        &self,
        _: Request<Empty>,
    ) -> Result<Response<Self::ListAndWatchStream>, Status> {
        tracing::info!(resource = %self.resource, "the kubelet is watching the devices");
        let stream = WatchStream::new(self.devices.clone())
            .map(|devices| Ok(ListAndWatchResponse { devices }))
            .take_until(self.stop.clone().cancelled_owned());
        Ok(Response::new(Box::pin(stream)))
    }

    async fn get_preferred_allocation(
        &self,
        _: Request<PreferredAllocationRequest>,
    ) -> Result<Response<PreferredAllocationResponse>, Status> {
        Err(Status::unimplemented(
            "no preferred allocation: any free device will do",
        ))
    }

    async fn allocate(
        &self,
        request: Request<AllocateRequest>,
    ) -> Result<Response<AllocateResponse>, Status> {
        let request = request.into_inner();
        // The kubelet allocates only devices this resource listed; any
        // other id (another resource's device, an unknown one) is refused
        // before anything is reserved.
        {
            let listed = self.devices.borrow();
            for id in request
                .container_requests
                .iter()
                .flat_map(|c| &c.devices_ids)
            {
                if !listed.iter().any(|d| &d.id == id) {
                    tracing::warn!(resource = %self.resource, device = %id, "allocation refused: not a device of this resource");
                    return Err(Status::invalid_argument(format!(
                        "{id} is not a device of {}",
                        self.resource
                    )));
                }
            }
        }
        let mut container_responses = Vec::new();
        for c in request.container_requests {
            container_responses.push(
                self.allocator
                    .allocate_container(&self.resource, &c.devices_ids)
                    .await?,
            );
        }
        Ok(Response::new(AllocateResponse {
            container_responses,
        }))
    }

    async fn pre_start_container(
        &self,
        _: Request<PreStartContainerRequest>,
    ) -> Result<Response<PreStartContainerResponse>, Status> {
        Ok(Response::new(PreStartContainerResponse {}))
    }
}
