//! What the server keeps of an observation ([`Seen`]: its UI tree with
//! element identities, its screenshot's pixel digest, the driver's idle
//! hint) and the pixel digests it already computed ([`Digests`]). Plain
//! data: the server's state holds them, `seen` makes them.

use std::collections::HashMap;
use std::time::Instant;

use devicerail_host_agent::Keyed;
use devicerail_host_agent::pixels::PixelDigest;
use devicerail_host_agent::settle::{IdleHint, Sample};
use devicerail_host_protocol::UiContextKind;

/// Pixel digests kept by screenshot digest.
const DIGESTS_KEPT: usize = 256;

/// One observation as the server keeps it.
#[derive(Debug)]
pub(crate) struct Seen {
    /// The Observation's id.
    pub(crate) observation_id: String,
    /// Its UI tree, keyed; `None` when it has none.
    pub(crate) keyed: Option<Keyed>,
    /// Why there is no tree.
    pub(crate) no_tree: Option<String>,
    /// The screenshot's sha256.
    pub(crate) screenshot: Option<String>,
    /// Why there is no screenshot.
    pub(crate) no_screenshot: Option<String>,
    /// The screenshot's pixel digest, when it could be read.
    pub(crate) pixels: Option<PixelDigest>,
    /// The driver's idle hint.
    pub(crate) idle: Option<IdleHint>,
    /// When the server had it.
    pub(crate) at: Instant,
}

impl Seen {
    /// Whether the tree is of a web document.
    pub(crate) fn web(&self) -> bool {
        self.keyed
            .as_ref()
            .and_then(|k| k.view.context.as_ref())
            .is_some_and(|c| c.context_kind == UiContextKind::Web)
    }

    /// The settling sample of this observation, `at_ms` after `t0`.
    pub(crate) fn sample(&self, t0: Instant) -> Sample {
        Sample {
            at_ms: self.at.saturating_duration_since(t0).as_millis() as u64,
            tree: self.keyed.as_ref().map(|k| k.digest),
            pixels: self.pixels.clone(),
            idle: self.idle,
        }
    }
}

/// Pixel digests by screenshot sha256 (an unchanged screen is decoded once).
#[derive(Default)]
pub(crate) struct Digests {
    map: HashMap<String, PixelDigest>,
    order: std::collections::VecDeque<String>,
}

impl Digests {
    pub(crate) fn get(&self, sha: &str) -> Option<PixelDigest> {
        self.map.get(sha).cloned()
    }

    pub(crate) fn put(&mut self, d: PixelDigest) {
        if self.map.contains_key(&d.sha256) {
            return;
        }
        self.order.push_back(d.sha256.clone());
        self.map.insert(d.sha256.clone(), d);
        while self.order.len() > DIGESTS_KEPT {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}
