//! State shared by every connection of one host process.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use devicerail_host_plugin_api::DeviceCapabilities;
use devicerail_host_protocol::{DeviceId, FeatureSet, PeerInfo, StreamEpoch};
use tokio_util::sync::CancellationToken;

use devicerail_host_config::ScreenshotPolicy;
use devicerail_host_engine::registry::Registry;
use devicerail_host_store::event_store::EventStore;
use devicerail_host_store::evidence::EvidenceStore;

/// Why stored Evidence could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    #[error(transparent)]
    Store(#[from] devicerail_host_store::event_store::StoreError),
    #[error("reading the Evidence file failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Limits and policies of one host.
#[derive(Debug, Clone)]
pub(crate) struct HostConfig {
    pub screenshot_policy: ScreenshotPolicy,
    /// Device requests one connection may have in flight.
    pub max_inflight: usize,
    /// How long an interrupted driver call may take to return before the
    /// terminal event is recorded anyway.
    pub cleanup_grace: Duration,
    /// Budget of host-initiated driver calls without a request deadline
    /// (after-Action observations, capability lookups).
    pub internal_call_timeout: Duration,
    /// Whether after-Action observations record the UI tree (when the
    /// connection negotiated UI snapshots and the device has trees).
    pub after_action_tree: bool,
    /// Features served on stdio connections.
    pub stdio_features: FeatureSet,
    pub server: PeerInfo,
}

impl HostConfig {
    pub(crate) fn new(screenshot_policy: ScreenshotPolicy) -> Self {
        Self {
            screenshot_policy,
            max_inflight: 1024,
            cleanup_grace: devicerail_host_engine::device_call::CLEANUP_GRACE,
            internal_call_timeout: Duration::from_secs(30),
            after_action_tree: true,
            stdio_features: FeatureSet::stdio(),
            server: PeerInfo {
                name: "devicerail-host".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
        }
    }
}

/// Everything connections share.
pub(crate) struct Host {
    pub config: HostConfig,
    pub registry: Arc<Registry>,
    pub store: EventStore,
    pub evidence: EvidenceStore,
    /// Cancelled when the host shuts down.
    pub shutdown: CancellationToken,
    /// Identifies this daemon lifetime for stream cursors.
    pub epoch: StreamEpoch,
    capabilities: Mutex<HashMap<DeviceId, Arc<DeviceCapabilities>>>,
    /// Devices this host connected (disconnected at shutdown).
    connected: Mutex<HashSet<DeviceId>>,
    /// The event stream's capabilities, subscribers and listener.
    pub streams: crate::stream_gate::StreamGate,
    /// Which connection holds each device.
    pub leases: crate::leases::Leases,
    /// The digest of the pool manager's key (`crate::pool_key`): only a
    /// connection presenting it may negotiate the pool extension. `None`:
    /// nobody may (a host without a shared socket).
    pub pool_key: Option<crate::leases::TokenDigest>,
    /// Frame numbers of live views (`devicerailHost.lab.frame`).
    pub live_screens: crate::handlers::lab::LiveScreens,
}

impl Host {
    pub(crate) fn new(
        config: HostConfig,
        registry: Arc<Registry>,
        store: EventStore,
        evidence: EvidenceStore,
    ) -> Arc<Self> {
        Self::with_pool_key(config, registry, store, evidence, None)
    }

    /// A host whose pool manager presents the key with digest `pool_key`.
    pub(crate) fn with_pool_key(
        config: HostConfig,
        registry: Arc<Registry>,
        store: EventStore,
        evidence: EvidenceStore,
        pool_key: Option<crate::leases::TokenDigest>,
    ) -> Arc<Self> {
        Arc::new(Self {
            config,
            registry,
            store,
            evidence,
            shutdown: CancellationToken::new(),
            epoch: StreamEpoch::new_v4(),
            capabilities: Mutex::default(),
            live_screens: Default::default(),
            connected: Mutex::default(),
            streams: Default::default(),
            leases: Default::default(),
            pool_key,
        })
    }

    /// Whether `presented` is the pool manager's key.
    pub(crate) fn is_pool_key(&self, presented: Option<&crate::leases::TokenDigest>) -> bool {
        match (&self.pool_key, presented) {
            (Some(ours), Some(theirs)) => ours.matches(theirs),
            _ => false,
        }
    }

    pub(crate) fn cached_capabilities(&self, device: &DeviceId) -> Option<Arc<DeviceCapabilities>> {
        self.capabilities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(device)
            .cloned()
    }

    pub(crate) fn cache_capabilities(
        &self,
        device: &DeviceId,
        caps: DeviceCapabilities,
    ) -> Arc<DeviceCapabilities> {
        let caps = Arc::new(caps);
        self.capabilities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(device.clone(), caps.clone());
        caps
    }

    pub(crate) fn forget_capabilities(&self, device: &DeviceId) {
        self.capabilities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(device);
    }

    pub(crate) fn note_connected(&self, device: &DeviceId, connected: bool) {
        let mut set = self.connected.lock().unwrap_or_else(|p| p.into_inner());
        if connected {
            set.insert(device.clone());
        } else {
            set.remove(device);
        }
    }

    /// The bytes of stored Evidence: from the event store when it was
    /// stored with its event, else from its file.
    pub(crate) async fn evidence_bytes(&self, sha256: &str) -> Result<Option<Vec<u8>>, ReadError> {
        if let Some(b) = self.store.blob(sha256.to_owned()).await? {
            return Ok(Some(b));
        }
        let evidence = self.evidence.clone();
        let sha = sha256.to_owned();
        match tokio::task::spawn_blocking(move || evidence.get(&sha)).await {
            Ok(Ok(bytes)) => Ok(Some(bytes)),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Ok(Err(e)) => Err(ReadError::Io(e)),
            Err(e) => Err(ReadError::Io(std::io::Error::other(e))),
        }
    }

    /// Whether a device was connected through this host and not since
    /// disconnected.
    pub(crate) fn is_connected(&self, device: &DeviceId) -> bool {
        self.connected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(device)
    }

    pub(crate) fn connected_devices(&self) -> Vec<DeviceId> {
        self.connected
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}
