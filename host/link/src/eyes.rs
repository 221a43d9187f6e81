//! [`Eyes`]: how this project's tools look at a device through a host —
//! `device.observe` (recorded in the connection's Session) or an
//! Observation the host already answered, its tree through
//! `ui.snapshot.get`, and (where the tool reads pixels) its screenshot's
//! digest from the data directory's Evidence — as the agent crate's typed
//! [`Screen`]. It is the [`settle::Eyes`] of the one settle loop
//! ([`settle::settle`]) that `devicerail mcp` and replay both run.
//!
//! Reads only: it never acts on a device.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use devicerail_client::DeviceRailClient;
use devicerail_host_agent::Screen;
use devicerail_host_agent::pixels::{PixelCache, PixelDigest};
use devicerail_host_agent::settle;
use devicerail_host_protocol::Observation;
use devicerail_host_store::event_store::ReadOnlyStore;

use crate::LinkError;
use crate::typed::{observe, ui_snapshot};

/// Why a screenshot's bytes could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ShotError {
    /// The data directory could not be read.
    #[error("{0}")]
    Store(#[from] devicerail_host_store::event_store::StoreError),
    /// The Evidence is not there.
    #[error("the screenshot {0} is not in the data directory's Evidence")]
    Missing(String),
    /// The Evidence's bytes do not hash to its name.
    #[error("the stored screenshot does not match its sha256")]
    Digest,
    /// The reading thread failed.
    #[error("reading it failed: {0}")]
    Join(#[from] tokio::task::JoinError),
}

/// The bytes of screenshot `sha` from `data_dir`'s Evidence, checked
/// against their sha256.
pub async fn screenshot_bytes(data_dir: &Path, sha: &str) -> Result<Vec<u8>, ShotError> {
    let data_dir = data_dir.to_path_buf();
    let sha = sha.to_owned();
    tokio::task::spawn_blocking(move || {
        let store = ReadOnlyStore::open(&data_dir)?;
        let bytes = store
            .blob(&sha)?
            .ok_or_else(|| ShotError::Missing(sha.clone()))?;
        if devicerail_host_store::evidence::sha256_hex(&bytes) != sha {
            return Err(ShotError::Digest);
        }
        Ok(bytes)
    })
    .await?
}

/// Where screenshots are read for their pixel digests, and the digests
/// already computed.
#[derive(Debug, Clone)]
pub struct Pixels {
    /// The host's data directory.
    pub data_dir: PathBuf,
    /// Digests by screenshot sha256.
    pub cache: Arc<Mutex<PixelCache>>,
}

impl Pixels {
    /// The digest of screenshot `sha` (computed once; `None`, logged, when
    /// it cannot be read or decoded).
    pub async fn digest(&self, sha: &str) -> Option<PixelDigest> {
        if let Some(d) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(sha)
        {
            return Some(d);
        }
        let bytes = screenshot_bytes(&self.data_dir, sha)
            .await
            .inspect_err(|e| tracing::warn!("no pixel digest for screenshot {sha}: {e}"))
            .ok()?;
        let digest = tokio::task::spawn_blocking(move || PixelDigest::from_image(&bytes))
            .await
            .ok()?
            .inspect_err(|e| tracing::warn!("no pixel digest for screenshot {sha}: {e}"))
            .ok()?;
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .put(digest.clone());
        Some(digest)
    }
}

/// Looks at the device of one connection.
pub struct Eyes<'a> {
    client: &'a DeviceRailClient,
    started: Instant,
    timeout_ms: Option<u64>,
    pixels: Option<Pixels>,
}

impl<'a> Eyes<'a> {
    /// Eyes on `client`'s device, each call bounded by `timeout_ms`.
    pub fn new(client: &'a DeviceRailClient, timeout_ms: Option<u64>) -> Self {
        Self {
            client,
            started: Instant::now(),
            timeout_ms,
            pixels: None,
        }
    }

    /// The same eyes, reading each screenshot's pixel digest too.
    pub fn with_pixels(mut self, pixels: Pixels) -> Self {
        self.pixels = Some(pixels);
        self
    }

    /// Milliseconds since these eyes opened (the screens' clock).
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The screen an Observation the host answered shows: its tree read
    /// and identified, its pixels digested where these eyes read them.
    pub async fn screen(&self, obs: Observation) -> Result<Screen, LinkError> {
        // The pixels are digested while the tree is fetched and identified.
        let sha = devicerail_host_agent::screen::shot_of(&obs);
        let pixels = async {
            match (&self.pixels, &sha) {
                (Some(p), Some(sha)) => p.digest(sha).await,
                _ => None,
            }
        };
        let screen = async move {
            let snapshot = match &obs.ui_snapshot {
                Some(_) => {
                    Some(ui_snapshot(self.client, &obs.id.to_string(), self.timeout_ms).await?)
                }
                None => None,
            };
            let at_ms = self.now_ms();
            // Identifying a large tree takes milliseconds: off the runtime.
            tokio::task::spawn_blocking(move || Screen::of(&obs, snapshot, at_ms))
                .await
                .map_err(|e| LinkError::Io(std::io::Error::other(e)))
        };
        let (screen, pixels) = tokio::join!(screen, pixels);
        Ok(screen?.with_pixels(pixels))
    }
}

impl settle::Eyes for Eyes<'_> {
    type Error = LinkError;

    async fn look(&mut self) -> Result<Screen, LinkError> {
        let obs = observe(self.client, self.timeout_ms).await?;
        self.screen(obs).await
    }

    async fn pause(&mut self, ms: u32) {
        tokio::time::sleep(Duration::from_millis(u64::from(ms))).await;
    }
}
