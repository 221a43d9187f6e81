//! A fake kubelet for tests (feature `fake-kubelet`), written against the
//! same generated API as the device plugin: it serves `Registration` on
//! `kubelet.sock` in a directory of its own and, like the real kubelet,
//! checks the version and resource name, dials the plugin's socket in that
//! directory, asks for its options before answering, then watches
//! `ListAndWatch`, stamping every list with when it arrived. A restart
//! removes every socket in the directory and listens on a new
//! `kubelet.sock`, as a restarted kubelet does. [`FakePodResources`]
//! serves PodResources `List` with pods the test sets.
//!
//! Test support only: never part of a production path.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use tonic::transport::{Channel, Server};
use tonic::{Request, Response, Status};

use crate::api::deviceplugin::device_plugin_client::DevicePluginClient;
use crate::api::deviceplugin::registration_server::{Registration, RegistrationServer};
use crate::api::deviceplugin::{Device, DevicePluginOptions, Empty, RegisterRequest};
use crate::api::podresources::pod_resources_lister_server::{
    PodResourcesLister, PodResourcesListerServer,
};
use crate::api::podresources::{
    AllocatableResourcesRequest, AllocatableResourcesResponse, ContainerDevices,
    ContainerResources, GetPodResourcesRequest, GetPodResourcesResponse, ListPodResourcesRequest,
    ListPodResourcesResponse, PodResources,
};
use crate::config::{API_VERSION, valid_resource_name};

/// One list `ListAndWatch` sent, and when it arrived.
#[derive(Debug, Clone)]
pub struct Listing {
    /// The devices of the list, with their health.
    pub devices: Vec<Device>,
    /// When the list arrived.
    pub at: Instant,
    /// 1 for the first list of this registration.
    pub seq: u64,
}

impl Listing {
    /// The health of `id`, if listed.
    pub fn health(&self, id: &str) -> Option<&str> {
        self.devices
            .iter()
            .find(|d| d.id == id)
            .map(|d| d.health.as_str())
    }
}

/// A device plugin's refusal of `Allocate`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Refusal {
    /// The gRPC status code's name (`FailedPrecondition`, …).
    pub code: String,
    /// The status message.
    pub message: String,
}

/// One accepted registration.
pub struct Registered {
    /// What the plugin sent in `Register`.
    pub request: RegisterRequest,
    /// When `Register` arrived.
    pub at: Instant,
    /// What `GetDevicePluginOptions` answered.
    pub options: DevicePluginOptions,
    /// The plugin, dialled back (to call `Allocate`).
    pub plugin: DevicePluginClient<Channel>,
    /// The latest list (`None` before the first).
    pub listings: watch::Receiver<Option<Listing>>,
}

impl Registered {
    /// Waits until the latest list satisfies `f` (within `within`).
    pub async fn wait_for(
        &mut self,
        within: Duration,
        f: impl Fn(&Listing) -> bool,
    ) -> Option<Listing> {
        let wait = self.listings.wait_for(|l| l.as_ref().is_some_and(&f));
        match tokio::time::timeout(within, wait).await {
            Ok(Ok(l)) => l.clone(),
            _ => None,
        }
    }

    /// `Allocate` of `devices` for one container: its environment, or the
    /// plugin's refusal.
    pub async fn allocate_one(
        &mut self,
        devices: &[&str],
    ) -> Result<std::collections::HashMap<String, String>, Refusal> {
        let request = crate::api::deviceplugin::AllocateRequest {
            container_requests: vec![crate::api::deviceplugin::ContainerAllocateRequest {
                devices_ids: devices.iter().map(|d| (*d).to_owned()).collect(),
            }],
        };
        match self.plugin.allocate(request).await {
            Ok(a) => Ok(a
                .into_inner()
                .container_responses
                .into_iter()
                .next()
                .map(|c| c.envs.into_iter().collect())
                .unwrap_or_default()),
            Err(s) => Err(Refusal {
                code: format!("{:?}", s.code()),
                message: s.message().to_owned(),
            }),
        }
    }
}

struct Kubelet {
    dir: PathBuf,
    tx: mpsc::UnboundedSender<Registered>,
    watchers: CancellationToken,
}

#[tonic::async_trait]
impl Registration for Kubelet {
    async fn register(&self, request: Request<RegisterRequest>) -> Result<Response<Empty>, Status> {
        let at = Instant::now();
        let request = request.into_inner();
        if request.version != API_VERSION {
            return Err(Status::invalid_argument(format!(
                "unsupported API version {}",
                request.version
            )));
        }
        if !valid_resource_name(&request.resource_name) {
            return Err(Status::invalid_argument(format!(
                "invalid extended resource name {}",
                request.resource_name
            )));
        }
        let channel = crate::kubelet::dial(&self.dir.join(&request.endpoint))
            .await
            .map_err(|e| Status::unavailable(format!("cannot dial the plugin: {e}")))?;
        let mut plugin = DevicePluginClient::new(channel);
        let options = plugin
            .get_device_plugin_options(Empty {})
            .await?
            .into_inner();
        let (list_tx, listings) = watch::channel(None);
        let mut watcher = plugin.clone();
        let stop = self.watchers.clone();
        tokio::spawn(async move {
            let Ok(stream) = watcher.list_and_watch(Empty {}).await else {
                return;
            };
            let mut stream = std::pin::pin!(stream.into_inner().take_until(stop.cancelled_owned()));
            let mut seq = 0;
            while let Some(Ok(msg)) = stream.next().await {
                seq += 1;
                let _ = list_tx.send(Some(Listing {
                    devices: msg.devices,
                    at: Instant::now(),
                    seq,
                }));
            }
        });
        let _ = self.tx.send(Registered {
            request,
            at,
            options,
            plugin,
            listings,
        });
        Ok(Response::new(Empty {}))
    }
}

/// The fake kubelet.
pub struct FakeKubelet {
    dir: PathBuf,
    tx: mpsc::UnboundedSender<Registered>,
    rx: mpsc::UnboundedReceiver<Registered>,
    server: CancellationToken,
    watchers: CancellationToken,
}

impl FakeKubelet {
    /// Serves `Registration` on `dir/kubelet.sock`.
    pub async fn start(dir: &Path) -> std::io::Result<Self> {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut k = Self {
            dir: dir.to_path_buf(),
            tx,
            rx,
            server: CancellationToken::new(),
            watchers: CancellationToken::new(),
        };
        k.listen()?;
        Ok(k)
    }

    fn listen(&mut self) -> std::io::Result<()> {
        let socket = self.socket();
        let _ = std::fs::remove_file(&socket);
        let listener = tokio::net::UnixListener::bind(&socket)?;
        let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
        self.server = CancellationToken::new();
        self.watchers = CancellationToken::new();
        let service = Kubelet {
            dir: self.dir.clone(),
            tx: self.tx.clone(),
            watchers: self.watchers.clone(),
        };
        let stop = self.server.clone();
        tokio::spawn(async move {
            let _ = Server::builder()
                .add_service(RegistrationServer::new(service))
                .serve_with_incoming_shutdown(incoming, stop.cancelled_owned())
                .await;
        });
        Ok(())
    }

    /// The registration socket.
    pub fn socket(&self) -> PathBuf {
        self.dir.join("kubelet.sock")
    }

    /// The next registration, if one arrives within `within`.
    pub async fn next_registration(&mut self, within: Duration) -> Option<Registered> {
        tokio::time::timeout(within, self.rx.recv())
            .await
            .ok()
            .flatten()
    }

    /// Stops, removes every socket in the directory (as a starting kubelet
    /// does) and listens on a new `kubelet.sock`.
    pub fn restart(&mut self) -> std::io::Result<()> {
        self.server.cancel();
        self.watchers.cancel();
        for entry in std::fs::read_dir(&self.dir)?.flatten() {
            use std::os::unix::fs::FileTypeExt;
            if entry.file_type().is_ok_and(|t| t.is_socket()) {
                std::fs::remove_file(entry.path())?;
            }
        }
        self.listen()
    }

    /// Stops and listens again on a new `kubelet.sock` at once, leaving
    /// the plugins' sockets alone (the file system usually hands the new
    /// socket the old one's inode number). Returns whether the inode
    /// number came back.
    pub fn replace_socket(&mut self) -> std::io::Result<bool> {
        use std::os::unix::fs::MetadataExt;
        let before = std::fs::metadata(self.socket())?.ino();
        self.server.cancel();
        self.watchers.cancel();
        std::fs::remove_file(self.socket())?;
        self.listen()?;
        Ok(std::fs::metadata(self.socket())?.ino() == before)
    }
}

impl Drop for FakeKubelet {
    fn drop(&mut self) {
        self.server.cancel();
        self.watchers.cancel();
    }
}

/// One container's devices, as the test sets them.
#[derive(Debug, Clone)]
pub struct PodDevices {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The container's name.
    pub container: String,
    /// The extended resource the devices are of.
    pub resource: String,
    /// The device ids PodResources lists for the container.
    pub device_ids: Vec<String>,
}

#[derive(Clone, Default)]
struct Lister {
    pods: Arc<Mutex<Vec<PodDevices>>>,
}

#[tonic::async_trait]
impl PodResourcesLister for Lister {
    async fn list(
        &self,
        _: Request<ListPodResourcesRequest>,
    ) -> Result<Response<ListPodResourcesResponse>, Status> {
        let pods = self.pods.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let pod_resources = pods
            .into_iter()
            .map(|p| PodResources {
                name: p.pod,
                namespace: p.namespace,
                containers: vec![ContainerResources {
                    name: p.container,
                    devices: vec![ContainerDevices {
                        resource_name: p.resource,
                        device_ids: p.device_ids,
                        topology: None,
                    }],
                    cpu_ids: Vec::new(),
                    memory: Vec::new(),
                    dynamic_resources: Vec::new(),
                }],
            })
            .collect();
        Ok(Response::new(ListPodResourcesResponse { pod_resources }))
    }

    async fn get_allocatable_resources(
        &self,
        _: Request<AllocatableResourcesRequest>,
    ) -> Result<Response<AllocatableResourcesResponse>, Status> {
        Err(Status::unimplemented("not faked"))
    }

    async fn get(
        &self,
        _: Request<GetPodResourcesRequest>,
    ) -> Result<Response<GetPodResourcesResponse>, Status> {
        Err(Status::unimplemented("not faked"))
    }
}

/// A fake PodResources server whose pods the test sets.
pub struct FakePodResources {
    lister: Lister,
    stop: CancellationToken,
}

impl FakePodResources {
    /// Serves `List` on `socket` (no pods at first).
    pub fn start(socket: &Path) -> std::io::Result<Self> {
        let _ = std::fs::remove_file(socket);
        let listener = tokio::net::UnixListener::bind(socket)?;
        let incoming = tokio_stream::wrappers::UnixListenerStream::new(listener);
        let lister = Lister::default();
        let stop = CancellationToken::new();
        let (service, until) = (lister.clone(), stop.clone());
        tokio::spawn(async move {
            let _ = Server::builder()
                .add_service(PodResourcesListerServer::new(service))
                .serve_with_incoming_shutdown(incoming, until.cancelled_owned())
                .await;
        });
        Ok(Self { lister, stop })
    }

    /// What `List` answers from now on.
    pub fn set(&self, pods: Vec<PodDevices>) {
        *self.lister.pods.lock().unwrap_or_else(|p| p.into_inner()) = pods;
    }
}

impl Drop for FakePodResources {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
