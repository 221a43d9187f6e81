//! # devicerail-host-kube
//!
//! `devicerail kube device-plugin`: a shared host's devices as Kubernetes
//! extended resources (`devicerail.dev/android`, `…/ios-simulator`,
//! `…/browser`) through the kubelet's device-plugin API (v1beta1), so a
//! pod that asks for `devicerail.dev/browser: 1` lands on a node with a
//! free one and gets it to itself.
//!
//! It is a client of the shared host (`devicerail serve --listen unix:…`)
//! over the protocol ([`host_link`]), never part of it:
//!
//! * [`health`] turns the host's view into each resource's device list
//!   (`ListAndWatch`): a device whose plugin worker is down, that a client
//!   outside Kubernetes holds, or that disappeared is `Unhealthy`;
//! * [`plugin`] serves `DevicePlugin`; its `Allocate` reserves the devices
//!   on the host for a fresh secret token (the host's pool extension) and
//!   gives the container the socket, the device id and the token, which
//!   `devicerail attach` presents so the pod's unchanged client takes the
//!   device while every other client gets `device_in_use`;
//! * [`state`] keeps allocations across restarts of this process;
//! * [`release`] frees a reservation once the kubelet's PodResources no
//!   longer list its pod;
//! * [`kubelet`] serves the plugin sockets and registers them, again after
//!   every kubelet restart.
//!
//! The generated gRPC code is in [`api`], from the vendored upstream
//! `.proto` files. `fake_kubelet` (feature `fake-kubelet`) is a fake
//! kubelet for tests, built on the same generated API.
//!
//! What it must never do: log or report a token, offer a device someone
//! else holds, end a `ListAndWatch` stream while it runs, or touch any
//! file of the kubelet's directory but its own sockets.

#![forbid(unsafe_code)]

pub mod api;
pub mod config;
#[cfg(any(test, feature = "fake-kubelet"))]
pub mod fake_kubelet;
pub mod health;
pub mod host_link;
pub mod kubelet;
pub mod plugin;
pub mod pool;
pub mod release;
pub mod state;
pub mod token;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{Mutex, Notify, watch};
use tokio_util::sync::CancellationToken;

use crate::api::deviceplugin::Device;
use crate::config::Config;
use crate::health::Known;
use crate::plugin::{Allocator, ResourcePlugin, reservation_label};
use crate::pool::{Holder, Pool};
use crate::state::Allocations;

/// Why the device plugin cannot run.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    /// The flags name an invalid mapping or setting.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// The allocation state file cannot be read or written.
    #[error(transparent)]
    State(#[from] state::StateError),
}

/// Runs the device plugin for the shared host of `config` until `stop`.
pub async fn run(config: Config, stop: CancellationToken) -> Result<(), KubeError> {
    config.check()?;
    let pool = Arc::new(host_link::HostPool::new(
        &config.host_socket,
        &config.pool_key_file,
    ));
    run_with(config, pool, stop, None).await
}

/// The shared state of one run.
struct Inventory<P: Pool> {
    config: Config,
    pool: Arc<P>,
    state: Arc<Mutex<Allocations>>,
    lists: BTreeMap<String, watch::Sender<Vec<Device>>>,
    known: std::sync::Mutex<Known>,
    reachable: std::sync::atomic::AtomicBool,
}

impl<P: Pool> Inventory<P> {
    /// Reads the host once: restores reservations it lost (it restarted),
    /// and publishes each resource's list if it changed.
    async fn poll(&self) {
        let view = match self.pool.view().await {
            Ok(v) => {
                if !self
                    .reachable
                    .swap(true, std::sync::atomic::Ordering::AcqRel)
                {
                    tracing::info!(socket = %self.config.host_socket.display(), "reading the shared host's devices");
                }
                Some(v)
            }
            Err(e) => {
                if self
                    .reachable
                    .swap(false, std::sync::atomic::Ordering::AcqRel)
                {
                    tracing::warn!("{e}; every device is reported unhealthy until it answers");
                }
                None
            }
        };
        let ours: HashSet<String> = {
            let state = self.state.lock().await;
            if let Some(view) = &view {
                for a in state.all() {
                    let lost = view
                        .devices
                        .iter()
                        .any(|d| d.id == a.device_id && d.holder == Holder::Free);
                    if lost {
                        let label = reservation_label(&a.resource);
                        match self.pool.reserve(&a.device_id, &a.token, &label).await {
                            Ok(()) => {
                                tracing::info!(device = %a.device_id, "reservation restored on the host")
                            }
                            Err(e) => {
                                tracing::warn!(device = %a.device_id, "cannot restore the reservation: {e}")
                            }
                        }
                    }
                }
            }
            state.all().iter().map(|a| a.device_id.clone()).collect()
        };
        let lists = {
            let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
            health::lists(view.as_ref(), &self.config.resources, &ours, &mut known)
        };
        for (resource, devices) in lists {
            let Some(tx) = self.lists.get(&resource) else {
                continue;
            };
            tx.send_if_modified(|current| {
                if *current == devices {
                    return false;
                }
                for d in &devices {
                    let before = current.iter().find(|c| c.id == d.id).map(|c| c.health.as_str());
                    if before != Some(d.health.as_str()) {
                        tracing::info!(resource = %resource, device = %d.id, health = %d.health, "device health");
                    }
                }
                *current = devices;
                true
            });
        }
    }
}

/// [`run`] with any [`Pool`]; `registered` is told when every resource is
/// registered (again after each kubelet restart).
pub async fn run_with<P: Pool>(
    config: Config,
    pool: Arc<P>,
    stop: CancellationToken,
    registered: Option<tokio::sync::mpsc::UnboundedSender<Instant>>,
) -> Result<(), KubeError> {
    let allocations = Allocations::load(&config.state_file)?;
    let mut known = Known::new();
    for a in allocations.all() {
        if config.resources.iter().any(|r| r.name == a.resource) {
            known.insert(a.device_id.clone(), a.resource.clone());
        }
    }
    if !allocations.all().is_empty() {
        tracing::info!(
            allocations = allocations.all().len(),
            "allocations restored from the state file"
        );
    }
    let state = Arc::new(Mutex::new(allocations));
    let changed = Arc::new(Notify::new());
    let mut lists = BTreeMap::new();
    let mut receivers = BTreeMap::new();
    for r in &config.resources {
        let (tx, rx) = watch::channel(Vec::new());
        lists.insert(r.name.clone(), tx);
        receivers.insert(r.name.clone(), rx);
    }
    let inventory = Arc::new(Inventory {
        config: config.clone(),
        pool: pool.clone(),
        state: state.clone(),
        lists,
        known: std::sync::Mutex::new(known),
        reachable: std::sync::atomic::AtomicBool::new(true),
    });
    // The first answer a kubelet gets already lists the devices.
    inventory.poll().await;
    let poller = {
        let inventory = inventory.clone();
        let stop = stop.clone();
        let changed = changed.clone();
        let every = config.poll;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(every) => {}
                    _ = changed.notified() => {}
                }
                inventory.poll().await;
            }
        })
    };
    let releaser = config.pod_resources_socket.clone().map(|socket| {
        let (pool, state, changed, stop) =
            (pool.clone(), state.clone(), changed.clone(), stop.clone());
        let (every, grace) = (config.release_poll, config.release_grace);
        tokio::spawn(async move {
            release::run(&socket, every, grace, pool, state, changed, stop).await
        })
    });
    let allocator = Arc::new(Allocator::new(&config, pool, state, changed));
    let make: kubelet::MakePlugin<P> = Arc::new(move |r, round| ResourcePlugin {
        resource: r.name.clone(),
        devices: receivers
            .get(&r.name)
            .cloned()
            .unwrap_or_else(|| watch::channel(Vec::new()).1),
        allocator: allocator.clone(),
        stop: round,
    });
    kubelet::run(&config, make, stop.clone(), registered).await;
    let _ = poller.await;
    if let Some(r) = releaser {
        let _ = r.await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    //! The whole plugin against the fake kubelet, with the host's pool in
    //! memory (the real host is exercised end to end in the command's
    //! tests).

    use std::collections::HashMap;
    use std::path::Path;
    use std::time::Duration;

    use devicerail_host_protocol::pool::LeaseToken;

    use super::*;
    use crate::api::deviceplugin::{AllocateRequest, ContainerAllocateRequest};
    use crate::fake_kubelet::{FakeKubelet, FakePodResources, PodDevices};
    use crate::pool::{PoolError, ViewDevice};

    /// A host pool in memory: devices, who holds them, and reservations.
    #[derive(Default)]
    struct MemPool {
        devices: std::sync::Mutex<Vec<ViewDevice>>,
        reserved: std::sync::Mutex<HashMap<String, LeaseToken>>,
    }

    impl MemPool {
        fn add(&self, id: &str, platform: &str, holder: Holder) {
            self.devices.lock().expect("lock").push(ViewDevice {
                id: id.into(),
                platform: platform.into(),
                available: true,
                unavailable_reason: None,
                holder,
            });
        }

        fn set_available(&self, id: &str, available: bool) {
            for d in self.devices.lock().expect("lock").iter_mut() {
                if d.id == id {
                    d.available = available;
                }
            }
        }

        fn reserved(&self, id: &str) -> Option<LeaseToken> {
            self.reserved.lock().expect("lock").get(id).cloned()
        }
    }

    impl Pool for MemPool {
        async fn view(&self) -> Result<pool::HostView, PoolError> {
            let reserved = self.reserved.lock().expect("lock").clone();
            let devices = self
                .devices
                .lock()
                .expect("lock")
                .iter()
                .cloned()
                .map(|mut d| {
                    if reserved.contains_key(&d.id) {
                        d.holder = Holder::Reserved {
                            label: "kube".into(),
                            taken: false,
                        };
                    }
                    d
                })
                .collect();
            Ok(pool::HostView { devices })
        }

        async fn reserve(
            &self,
            device: &str,
            token: &LeaseToken,
            _: &str,
        ) -> Result<(), PoolError> {
            let held = self
                .devices
                .lock()
                .expect("lock")
                .iter()
                .any(|d| d.id == device && matches!(d.holder, Holder::Connection { .. }));
            let mut r = self.reserved.lock().expect("lock");
            if held || r.get(device).is_some_and(|t| t != token) {
                return Err(PoolError::Refused {
                    code: "device_in_use".into(),
                    message: "held".into(),
                });
            }
            r.insert(device.into(), token.clone());
            Ok(())
        }

        async fn release(&self, device: &str, token: &LeaseToken) -> Result<bool, PoolError> {
            let mut r = self.reserved.lock().expect("lock");
            if r.get(device) == Some(token) {
                r.remove(device);
                return Ok(true);
            }
            Ok(false)
        }
    }

    fn config(dir: &Path) -> Config {
        Config {
            host_socket: dir.join("run/host.sock"),
            pool_key_file: dir.join("data/pool-manager.key"),
            kubelet_socket: dir.join("device-plugins/kubelet.sock"),
            pod_resources_socket: Some(dir.join("pod-resources.sock")),
            resources: config::resources(&["mock=devicerail.dev/mock".into()]).expect("valid"),
            state_file: dir.join("state/allocations.json"),
            node_socket_dir: "/run/devicerail-node".into(),
            container_socket_dir: "/run/devicerail".into(),
            poll: Duration::from_millis(50),
            release_poll: Duration::from_millis(100),
            release_grace: Duration::from_millis(300),
        }
    }

    const WAIT: Duration = Duration::from_secs(10);

    /// Registrations until every resource of `config` registered; the
    /// mock resource's.
    async fn registered_all(k: &mut FakeKubelet, config: &Config) -> fake_kubelet::Registered {
        let mut mock = None;
        let mut names = Vec::new();
        while names.len() < config.resources.len() {
            let r = k.next_registration(WAIT).await.expect("a registration");
            assert_eq!(r.request.version, "v1beta1");
            assert!(!r.options.pre_start_required);
            names.push(r.request.resource_name.clone());
            if r.request.resource_name == "devicerail.dev/mock" {
                mock = Some(r);
            }
        }
        names.sort();
        assert_eq!(
            names,
            [
                "devicerail.dev/android",
                "devicerail.dev/browser",
                "devicerail.dev/ios-simulator",
                "devicerail.dev/mock"
            ]
        );
        mock.expect("the mock resource registered")
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn registers_lists_allocates_reregisters_and_releases() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let config = config(tmp.path());
        std::fs::create_dir_all(config.plugin_dir()).expect("mkdir");
        let mut kubelet = FakeKubelet::start(config.plugin_dir())
            .await
            .expect("kubelet");
        let pods = FakePodResources::start(config.pod_resources_socket.as_deref().expect("socket"))
            .expect("pod resources");
        let pool = Arc::new(MemPool::default());
        pool.add("mock-1", "mock", Holder::Free);
        pool.add("mock-2", "mock", Holder::Free);
        pool.add("outside", "mock", Holder::Connection { client: None });
        pool.add("phone", "android", Holder::Free);
        let stop = CancellationToken::new();
        let run = tokio::spawn(run_with(config.clone(), pool.clone(), stop.clone(), None));

        let mut mock = registered_all(&mut kubelet, &config).await;
        let first = mock
            .wait_for(WAIT, |l| l.devices.len() == 3)
            .await
            .expect("the devices are listed");
        assert_eq!(first.health("mock-1"), Some("Healthy"));
        assert_eq!(first.health("outside"), Some("Unhealthy"));

        // A device whose driver is down goes unhealthy, and comes back.
        pool.set_available("mock-2", false);
        mock.wait_for(WAIT, |l| l.health("mock-2") == Some("Unhealthy"))
            .await
            .expect("unhealthy");
        pool.set_available("mock-2", true);
        mock.wait_for(WAIT, |l| l.health("mock-2") == Some("Healthy"))
            .await
            .expect("healthy again");

        // Allocate reserves the device for the token it hands out.
        let answer = mock
            .plugin
            .allocate(AllocateRequest {
                container_requests: vec![ContainerAllocateRequest {
                    devices_ids: vec!["mock-1".into()],
                }],
            })
            .await
            .expect("allocated")
            .into_inner();
        let c = &answer.container_responses[0];
        assert_eq!(c.envs["DEVICERAIL_SOCKET"], "/run/devicerail/host.sock");
        assert_eq!(c.envs["DEVICERAIL_DEVICE_ID"], "mock-1");
        let token = LeaseToken::new(c.envs["DEVICERAIL_LEASE_TOKEN"].clone()).expect("a token");
        // The kubelet lists the pod from now on.
        pods.set(vec![PodDevices {
            namespace: "ci".into(),
            pod: "job-1".into(),
            container: "run".into(),
            resource: "devicerail.dev/mock".into(),
            device_ids: vec!["mock-1".into()],
        }]);
        assert_eq!(pool.reserved("mock-1"), Some(token.clone()));
        assert_eq!(c.mounts[0].host_path, "/run/devicerail-node");
        assert_eq!(c.mounts[0].container_path, "/run/devicerail");
        assert!(c.mounts[0].read_only);
        // Reserved for the pod, it stays healthy.
        mock.wait_for(WAIT, |l| l.health("mock-1") == Some("Healthy"))
            .await
            .expect("still healthy");
        // A device held outside cannot be allocated.
        let refused = mock
            .plugin
            .allocate(AllocateRequest {
                container_requests: vec![ContainerAllocateRequest {
                    devices_ids: vec!["outside".into()],
                }],
            })
            .await
            .expect_err("held outside");
        assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
        assert!(!refused.message().contains(token.expose()));

        // The kubelet restarts: registration again, the lists again.
        kubelet.restart().expect("restart");
        let again = std::time::Instant::now();
        let mut mock = registered_all(&mut kubelet, &config).await;
        assert!(
            again.elapsed() < Duration::from_secs(5),
            "{:?}",
            again.elapsed()
        );
        mock.wait_for(WAIT, |l| l.devices.len() == 3)
            .await
            .expect("listed again");

        // The plugin restarts, and the host lost its reservation (as a
        // restarted host does): the allocation is restored from the file.
        stop.cancel();
        run.await.expect("joined").expect("ran");
        pool.reserved.lock().expect("lock").clear();
        let stop = CancellationToken::new();
        let run = tokio::spawn(run_with(config.clone(), pool.clone(), stop.clone(), None));
        let _ = registered_all(&mut kubelet, &config).await;
        let deadline = std::time::Instant::now() + WAIT;
        while pool.reserved("mock-1").as_ref() != Some(&token) {
            assert!(
                std::time::Instant::now() < deadline,
                "reservation not restored"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }

        // The pod runs (kept however long it runs), then ends: the
        // reservation is released.
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(pool.reserved("mock-1").is_some(), "in use: kept");
        pods.set(Vec::new());
        let deadline = std::time::Instant::now() + WAIT;
        while pool.reserved("mock-1").is_some() {
            assert!(std::time::Instant::now() < deadline, "never released");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The state file is rewritten after the release.
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let saved = std::fs::read_to_string(&config.state_file).expect("state");
            if !saved.contains("mock-1") {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{saved}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        stop.cancel();
        run.await.expect("joined").expect("ran");
        // Stopping removed our sockets, and only ours.
        assert!(
            !config
                .plugin_dir()
                .join("devicerail.dev_mock.sock")
                .exists()
        );
        assert!(kubelet.socket().exists());
    }
}
