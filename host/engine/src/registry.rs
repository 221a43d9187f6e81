//! The device registry: loaded plugins (each with its own executor), the
//! cached device list, and which plugin owns each device id. Listing is
//! cached (refreshed in the background, each plugin on its own threads and
//! with its own timeout) so `devices.list` never waits on a driver, and a
//! plugin that hangs keeps its last known devices.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::{CallContext, Driver, DriverResult, ObserveRequest};

use crate::executor::{Executor, Limits};
use crate::observation::{HostActionOutput, HostObservation};
use crate::worker::{RemoteDriver, WorkerProbe};
use devicerail_host_protocol::{ActionCall, DeviceId, DeviceInfo};

/// How long one background listing of a plugin may take.
const REFRESH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long past its deadline a listing is still awaited.
const REFRESH_GRACE: Duration = Duration::from_secs(2);
/// Driver calls one plugin may have running at once; further calls wait
/// (still bounded by their deadlines). This bounds threads and memory when
/// a client pipelines thousands of device requests.
pub(crate) const PLUGIN_CONCURRENCY: usize = 16;

/// A plugin's driver as the host holds it: loaded in this process, or
/// served by its supervised worker.
#[derive(Clone)]
pub enum Backend {
    /// Loaded in this process (`inline`).
    Inline(Arc<dyn Driver>),
    /// Served by a worker process (`process`).
    Worker(Arc<RemoteDriver>),
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Inline(_) => f.write_str("Inline"),
            Self::Worker(r) => f.debug_tuple("Worker").field(r).finish(),
        }
    }
}

impl Backend {
    /// The driver, for any call.
    pub fn driver(&self) -> Arc<dyn Driver> {
        match self {
            Self::Inline(d) => d.clone(),
            Self::Worker(r) => r.clone(),
        }
    }

    /// Observes `device` in the form the host stores observations (the
    /// tree encoded as Observation `ctx.observation_id()`). Blocking: run
    /// it on the plugin's executor.
    pub fn observe(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        request: &ObserveRequest,
    ) -> DriverResult<HostObservation> {
        match self {
            Self::Inline(d) => d
                .observe(ctx, device, request)
                .map(|o| HostObservation::encode(o, ctx.observation_id(), request.ui_tree)),
            Self::Worker(r) => r.observe_host(ctx, device, request),
        }
    }

    /// Executes one Action, its resolved observation in the form the host
    /// stores it. Blocking: run it on the plugin's executor.
    pub fn execute(
        &self,
        ctx: &CallContext,
        device: &DeviceId,
        call: &ActionCall,
    ) -> DriverResult<HostActionOutput> {
        match self {
            Self::Inline(d) => d
                .execute(ctx, device, call)
                .map(|o| HostActionOutput::encode(o, ctx.observation_id())),
            Self::Worker(r) => r.execute_host(ctx, device, call),
        }
    }
}

/// One loaded driver.
pub struct PluginSlot {
    /// The plugin's id, as its manifest declares it.
    pub id: String,
    /// How the plugin is held: loaded in this process, or served by its
    /// worker ([`RemoteDriver`]).
    pub backend: Backend,
    /// `backend`'s driver, for any call.
    pub driver: Arc<dyn Driver>,
    /// Driver calls it may have running at once (`PLUGIN_CONCURRENCY`
    /// permits); further calls wait for one.
    pub permits: Arc<tokio::sync::Semaphore>,
    /// The threads its driver calls run on.
    pub executor: Executor,
    /// Whether its worker is up, when it runs in one.
    pub worker: Option<WorkerProbe>,
}

impl PluginSlot {
    /// A slot for `backend` with its own executor and a fresh set of call
    /// permits.
    pub fn new(id: String, backend: Backend) -> Self {
        let executor = Executor::new(&id, Limits::default());
        Self {
            id,
            driver: backend.driver(),
            backend,
            permits: Arc::new(tokio::sync::Semaphore::new(PLUGIN_CONCURRENCY)),
            executor,
            worker: None,
        }
    }

    /// The same slot, its availability read from `worker`.
    pub fn with_worker(mut self, worker: Option<WorkerProbe>) -> Self {
        self.worker = worker;
        self
    }
}

/// A resolved route: the device and the driver that owns it.
#[derive(Clone)]
pub struct Route {
    /// The device the call is for.
    pub device: DeviceId,
    /// The id of the plugin that owns the device.
    pub plugin: String,
    /// The owning plugin's driver.
    pub driver: Arc<dyn Driver>,
    /// How the owning plugin is held (observations and Actions go through
    /// it).
    pub backend: Backend,
    /// The owning plugin's request permits.
    pub permits: Arc<tokio::sync::Semaphore>,
    /// The owning plugin's threads.
    pub executor: Executor,
}

impl std::fmt::Debug for Route {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Route")
            .field("device", &self.device)
            .field("plugin", &self.plugin)
            .finish()
    }
}

#[derive(Default)]
struct Cache {
    devices: Vec<DeviceInfo>,
    owner: HashMap<DeviceId, usize>,
}

/// Plugins plus the cached, de-duplicated device list.
pub struct Registry {
    plugins: Vec<PluginSlot>,
    cache: RwLock<Cache>,
    /// When the cache was last installed.
    refreshed: Mutex<Instant>,
}

impl Registry {
    /// A registry over `plugins` with their initial device lists.
    pub fn new(plugins: Vec<(PluginSlot, Vec<DeviceInfo>)>) -> Self {
        let lists: Vec<Option<Vec<DeviceInfo>>> =
            plugins.iter().map(|(_, d)| Some(d.clone())).collect();
        let plugins: Vec<PluginSlot> = plugins.into_iter().map(|(p, _)| p).collect();
        let registry = Self {
            plugins,
            cache: RwLock::new(Cache::default()),
            refreshed: Mutex::new(Instant::now()),
        };
        registry.install(lists);
        registry
    }

    /// The loaded plugins, in load order.
    pub fn plugins(&self) -> &[PluginSlot] {
        &self.plugins
    }

    fn install(&self, lists: Vec<Option<Vec<DeviceInfo>>>) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        // A plugin whose listing failed keeps its previous devices.
        let previous: Vec<Vec<DeviceInfo>> = (0..self.plugins.len())
            .map(|i| {
                cache
                    .devices
                    .iter()
                    .filter(|d| cache.owner.get(&d.id) == Some(&i))
                    .cloned()
                    .collect()
            })
            .collect();
        let mut devices = Vec::new();
        let mut owner: HashMap<DeviceId, usize> = HashMap::new();
        for (i, list) in lists.into_iter().enumerate() {
            let list = list.unwrap_or_else(|| previous.get(i).cloned().unwrap_or_default());
            for d in list {
                if let Some(&first) = owner.get(&d.id) {
                    tracing::warn!(
                        device = %d.id,
                        plugin = %self.plugins[i].id,
                        owner = %self.plugins[first].id,
                        "device id already provided by another plugin; ignoring the duplicate"
                    );
                    continue;
                }
                owner.insert(d.id.clone(), i);
                devices.push(d);
            }
        }
        *cache = Cache { devices, owner };
        drop(cache);
        *self.refreshed.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// How long ago the device list was last refreshed.
    pub fn age(&self) -> Duration {
        self.refreshed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .elapsed()
    }

    /// Whether the driver of `id` can serve it now: `None` for an unknown
    /// device, `Some(Err(why))` while its plugin's worker is down.
    pub fn availability(&self, id: &DeviceId) -> Option<Result<(), &'static str>> {
        let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
        let slot = &self.plugins[*cache.owner.get(id)?];
        Some(match slot.worker.as_ref().and_then(WorkerProbe::down) {
            None => Ok(()),
            Some(why) => Err(why),
        })
    }

    /// The health of the plugin serving `id` (an inline plugin is always
    /// up) and why it cannot serve when it cannot: `None` for an unknown
    /// device.
    pub fn health(
        &self,
        id: &DeviceId,
    ) -> Option<(
        devicerail_host_protocol::lab::WorkerHealth,
        Option<&'static str>,
    )> {
        let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
        let slot = &self.plugins[*cache.owner.get(id)?];
        Some(match slot.worker.as_ref() {
            None => (devicerail_host_protocol::lab::WorkerHealth::Up, None),
            Some(w) => w.health(),
        })
    }

    /// Re-lists every plugin concurrently, each on its own executor and
    /// within `REFRESH_TIMEOUT` (10 s); a plugin that fails or hangs keeps its
    /// previous devices.
    pub async fn refresh(&self) {
        self.refresh_within(REFRESH_TIMEOUT + REFRESH_GRACE).await;
    }

    /// [`Registry::refresh`], waiting at most `wait` for each plugin (a
    /// plugin slower than that keeps its previous devices; its call is
    /// written off only past `REFRESH_TIMEOUT`).
    pub async fn refresh_within(&self, wait: Duration) {
        let mut pending = Vec::with_capacity(self.plugins.len());
        for p in &self.plugins {
            let ctx = CallContext::new(Some(Instant::now() + REFRESH_TIMEOUT));
            let driver = p.driver.clone();
            let flag = ctx.clone();
            let submitted = p.executor.submit(move || driver.list_devices(&ctx));
            pending.push((p, flag, submitted));
        }
        let mut lists = Vec::with_capacity(pending.len());
        for (p, flag, submitted) in pending {
            let list = match submitted {
                Ok((ticket, rx)) => {
                    let wait = wait.min(REFRESH_TIMEOUT + REFRESH_GRACE);
                    match tokio::time::timeout(wait, rx).await {
                        Ok(Ok(Ok(list))) => Some(list),
                        Ok(Ok(Err(e))) => {
                            tracing::warn!(plugin = %p.id, "listing devices failed: {e}");
                            None
                        }
                        Ok(Err(_)) => {
                            tracing::warn!(plugin = %p.id, "listing devices failed: the call was dropped");
                            None
                        }
                        Err(_) if wait >= REFRESH_TIMEOUT => {
                            flag.cancel();
                            ticket.abandon();
                            tracing::warn!(plugin = %p.id, "listing devices did not return in time");
                            None
                        }
                        Err(_) => None,
                    }
                }
                Err(e) => {
                    tracing::warn!(plugin = %p.id, "listing devices refused: {e}");
                    None
                }
            };
            lists.push(list);
        }
        self.install(lists);
    }

    /// The cached device list, in plugin order.
    pub fn devices(&self) -> Vec<DeviceInfo> {
        self.cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .devices
            .clone()
    }

    /// Number of cached devices.
    pub fn device_count(&self) -> usize {
        self.cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .devices
            .len()
    }

    /// The cached info of one device.
    pub fn device(&self, id: &DeviceId) -> Option<DeviceInfo> {
        self.cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .devices
            .iter()
            .find(|d| &d.id == id)
            .cloned()
    }

    /// The sole device, when exactly one is registered.
    pub fn sole_device(&self) -> Option<DeviceId> {
        let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
        match cache.devices.as_slice() {
            [only] => Some(only.id.clone()),
            _ => None,
        }
    }

    /// The route to a device id.
    pub fn route(&self, id: &DeviceId) -> Option<Route> {
        let cache = self.cache.read().unwrap_or_else(|p| p.into_inner());
        cache.owner.get(id).map(|&i| Route {
            device: id.clone(),
            plugin: self.plugins[i].id.clone(),
            driver: self.plugins[i].driver.clone(),
            backend: self.plugins[i].backend.clone(),
            permits: self.plugins[i].permits.clone(),
            executor: self.plugins[i].executor.clone(),
        })
    }

    /// Records a device's fresh info (after connect/disconnect).
    pub fn update(&self, info: &DeviceInfo) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = cache.devices.iter_mut().find(|d| d.id == info.id) {
            *d = info.clone();
        }
    }

    /// Marks a device as disconnected in the cache.
    pub fn mark_disconnected(&self, id: &DeviceId) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = cache.devices.iter_mut().find(|d| &d.id == id) {
            d.connected = false;
        }
    }
}
