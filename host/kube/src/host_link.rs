//! [`HostPool`]: the [`Pool`] of a shared host, reached over its control
//! socket the one way this project's tools reach a host
//! (`devicerail-host-link`: the attach preamble, then the protocol). Two
//! connections:
//!
//! * the protocol's own `devices.list` goes through the official Rust
//!   client, like every tool of this project;
//! * the host's pool extension (`devicerailHost.pool.*`, which the official
//!   client cannot express: its method set is closed) goes over a second
//!   connection, the link's `Extension` (same introduction, hello and
//!   error mapping), typed with the host's own protocol crate.
//!
//! A broken connection is dropped and both are made again on the next
//! call. Tokens travel only inside requests on these private sockets;
//! errors and logs never carry them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use devicerail_host_core::pool_key;
use devicerail_host_link::methods::{DevicesList, NoParams};
use devicerail_host_link::protocol::Platform;
use devicerail_host_link::{DeviceRailClient, Extension, Intro, LinkError, Reach};
use devicerail_host_protocol::DeviceId;
use devicerail_host_protocol::pool::{
    LeaseToken, POOL_FEATURE, POOL_RELEASE, POOL_RESERVE, POOL_STATUS, PoolReleaseParams,
    PoolReleaseResult, PoolReserveParams, PoolStatusResult,
};
use serde_json::{Value, json};

use crate::pool::{Holder, HostView, Pool, PoolError, ViewDevice};

/// How long one call to the host may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// The client name the host's log and listings show.
const CLIENT_NAME: &str = "devicerail-kube-device-plugin";

/// The platform kind a resource is chosen by (`devices.list`'s
/// `platform.kind`; a platform outside the list by its name).
pub fn platform_key(p: &Platform) -> String {
    match p {
        Platform::Web => "web".into(),
        Platform::Android => "android".into(),
        Platform::Ios => "ios".into(),
        Platform::HarmonyOs => "harmonyOs".into(),
        Platform::MacOs => "macOs".into(),
        Platform::Windows => "windows".into(),
        Platform::Linux => "linux".into(),
        Platform::Rdp => "rdp".into(),
        Platform::Mock => "mock".into(),
        Platform::Other(name) => name.clone(),
    }
}

fn unreachable(e: impl std::fmt::Display) -> PoolError {
    PoolError::Unreachable(e.to_string())
}

/// A host's answer as the pool sees it: a refusal keeps its code and
/// message; anything else means the host is unreachable.
fn link_error(e: LinkError) -> PoolError {
    match e {
        LinkError::Remote { code, message, .. } => PoolError::Refused { code, message },
        other => unreachable(other),
    }
}

/// The pool extension's connection, through the link: introduced with
/// the pool manager's key (read at every connection: the host writes a
/// fresh key whenever it starts).
async fn open_extension(socket: &Path, key_file: &Path) -> Result<Extension, PoolError> {
    let key = pool_key::read(key_file).map_err(unreachable)?;
    let intro = Intro::new("kube-device-plugin pool").pool_key(key);
    Extension::open(
        &Reach::shared(socket),
        &intro,
        CLIENT_NAME,
        POOL_FEATURE,
        CALL_TIMEOUT,
    )
    .await
    .map_err(link_error)
}

/// Both connections.
struct Links {
    client: DeviceRailClient,
    ext: Extension,
}

impl Links {
    async fn open(socket: &Path, key_file: &Path) -> Result<Self, PoolError> {
        let client = tokio::time::timeout(
            CALL_TIMEOUT,
            Reach::shared(socket).client(&Intro::new("kube-device-plugin"), CLIENT_NAME),
        )
        .await
        .map_err(|_| unreachable("the host did not answer hello in time"))?
        .map_err(link_error)?;
        let ext = open_extension(socket, key_file).await?;
        Ok(Self { client, ext })
    }
}

/// A shared host's pool over its control socket.
pub struct HostPool {
    socket: PathBuf,
    key_file: PathBuf,
    links: tokio::sync::Mutex<Option<Links>>,
}

impl HostPool {
    /// The host listening on `socket`, whose pool manager's key is in
    /// `key_file` (connected on first use).
    pub fn new(socket: &Path, key_file: &Path) -> Self {
        Self {
            socket: socket.to_path_buf(),
            key_file: key_file.to_path_buf(),
            links: tokio::sync::Mutex::new(None),
        }
    }

    /// Runs `f` on the connections, opening them first if needed; a
    /// failure that is not the host's answer drops them.
    async fn with<T>(
        &self,
        f: impl AsyncFnOnce(&mut Links) -> Result<T, PoolError>,
    ) -> Result<T, PoolError> {
        let mut guard = self.links.lock().await;
        if guard.is_none() {
            *guard = Some(Links::open(&self.socket, &self.key_file).await?);
        }
        let Some(links) = guard.as_mut() else {
            return Err(unreachable("no connection"));
        };
        let r = f(links).await;
        if matches!(r, Err(PoolError::Unreachable(_))) {
            *guard = None;
        }
        r
    }
}

fn merge(
    list: devicerail_host_link::protocol::DevicesListResult,
    status: PoolStatusResult,
) -> HostView {
    let devices = list
        .devices
        .into_iter()
        .map(|d| {
            let id = d.id.0;
            let s = status.devices.iter().find(|s| s.device_id.as_str() == id);
            let holder = match s {
                Some(s) => match (&s.reservation, &s.lease) {
                    (Some(r), lease) => Holder::Reserved {
                        label: r.label.clone(),
                        taken: lease.as_ref().is_some_and(|l| l.by_reservation),
                    },
                    (None, Some(l)) => Holder::Connection {
                        client: l
                            .client
                            .as_ref()
                            .map(|c| format!("{} {}", c.name, c.version)),
                    },
                    (None, None) => Holder::Free,
                },
                // Listed between the two calls: not offered until the
                // next poll shows it.
                None => Holder::Connection { client: None },
            };
            ViewDevice {
                platform: platform_key(&d.platform),
                available: s.is_some_and(|s| s.available),
                unavailable_reason: s.and_then(|s| s.unavailable_reason.clone()),
                holder,
                id,
            }
        })
        .collect();
    HostView { devices }
}

impl Pool for HostPool {
    async fn view(&self) -> Result<HostView, PoolError> {
        self.with(async |l: &mut Links| {
            let list = tokio::time::timeout(
                CALL_TIMEOUT,
                l.client.call::<DevicesList>(
                    NoParams,
                    devicerail_host_link::options::<DevicesList>(None),
                ),
            )
            .await
            .map_err(|_| unreachable("devices.list got no answer in time"))?
            .map_err(|e| link_error(devicerail_host_link::remote("devices.list", e)))?;
            let status: PoolStatusResult = l
                .ext
                .request(POOL_STATUS, json!({}))
                .await
                .map_err(link_error)?;
            Ok(merge(list, status))
        })
        .await
    }

    async fn reserve(
        &self,
        device: &str,
        token: &LeaseToken,
        label: &str,
    ) -> Result<(), PoolError> {
        let params = PoolReserveParams {
            device_id: DeviceId::from(device),
            token: token.clone(),
            label: label.to_owned(),
        };
        self.with(async |l: &mut Links| {
            l.ext
                .request::<Value>(POOL_RESERVE, &params)
                .await
                .map(|_| ())
                .map_err(link_error)
        })
        .await
    }

    async fn release(&self, device: &str, token: &LeaseToken) -> Result<bool, PoolError> {
        let params = PoolReleaseParams {
            device_id: DeviceId::from(device),
            token: token.clone(),
        };
        self.with(async |l: &mut Links| {
            l.ext
                .request::<PoolReleaseResult>(POOL_RELEASE, &params)
                .await
                .map(|r| r.released)
                .map_err(link_error)
        })
        .await
    }
}
