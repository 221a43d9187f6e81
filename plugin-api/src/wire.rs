//! JSON shapes that cross the boundary beside the protocol DTOs.

use devicerail_protocol::Viewport;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The JSON half of an observation.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ObservationWire {
    pub viewport: Viewport,
    #[serde(default)]
    pub metadata: Map<String, Value>,
    #[serde(default)]
    pub ui_tree: Option<crate::driver::UiTree>,
}

#[cfg(feature = "loader")]
impl ObservationWire {
    pub fn into_observation(self, png: Option<Vec<u8>>) -> crate::driver::DriverObservation {
        crate::driver::DriverObservation {
            viewport: self.viewport,
            png,
            ui_tree: self.ui_tree,
            metadata: self.metadata,
        }
    }
}
