//! JSON shapes that cross a process or ABI boundary beside the protocol
//! DTOs: the stable ABI's observation JSON, and the host's plugin-worker
//! frames, carry the same shape (PNG bytes travel beside it).

use devicerail_host_protocol::Viewport;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The JSON half of an observation (everything but the PNG).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObservationWire {
    /// Size and scale of the screen, in screenshot pixels.
    pub viewport: Viewport,
    /// Driver-specific facts about the device state.
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// The normalized UI tree, when one was requested.
    #[serde(default)]
    pub ui_tree: Option<crate::driver::UiTree>,
}

impl ObservationWire {
    /// Splits an observation into its JSON half and its PNG.
    pub fn split(obs: crate::driver::DriverObservation) -> (Self, Option<Vec<u8>>) {
        (
            Self {
                viewport: obs.viewport,
                metadata: obs.metadata,
                ui_tree: obs.ui_tree,
            },
            obs.png,
        )
    }

    /// Joins the JSON half with its PNG again.
    pub fn into_observation(self, png: Option<Vec<u8>>) -> crate::driver::DriverObservation {
        crate::driver::DriverObservation {
            viewport: self.viewport,
            png,
            ui_tree: self.ui_tree,
            metadata: self.metadata,
        }
    }
}
