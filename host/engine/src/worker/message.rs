//! The JSON headers of the worker channel and how driver values cross it:
//! results as typed JSON text (never an intermediate `Value` tree), and
//! observations in the form the host stores them (`crate::observation`):
//! their PNG and UI snapshot bytes travel as the frame's parts (never
//! base64, never re-encoded). Both ends use these types; nothing here does
//! I/O.

use devicerail_host_plugin_api::PluginManifest;
use devicerail_host_plugin_api::driver::{DriverError, ObserveRequest};
use devicerail_host_protocol::{
    ActionCall, ActionExecution, DeviceId, ObservationId, UiContextRef, Viewport,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::observation::{EncodedUi, HostActionOutput, HostObservation, UiViolation};

/// Worker → host, the first frame: the worker opened the plugin library
/// (running its load-time code, in the worker) and checked it, or why not.
/// The host chooses settings and isolation by the manifest's id; a host
/// that only wanted the manifest closes the channel instead of sending
/// [`Init`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Opened {
    /// The library passed every check before init.
    Ok { manifest: PluginManifest },
    /// The loader refused the library (the refusal, as text).
    Refused { reason: String },
}

/// Host → worker, after [`Opened`]: the plugin's own settings (its table
/// of the configuration file, nothing else) and the load purpose.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Init {
    /// The plugin id the host expects the library to declare.
    pub plugin_id: String,
    pub settings: Map<String, Value>,
    /// `serve` or `inspect`.
    pub purpose: String,
    /// Variables the plugin's `env` table adds to the worker's
    /// environment, set before the driver is constructed.
    #[serde(default)]
    pub env: Vec<(String, String)>,
}

/// Worker → host: the driver is constructed, or why not.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum Ready {
    /// Constructed; the worker serves calls from now on.
    Ok {
        /// The worker's process id (for the supervisor's logs).
        pid: u32,
    },
    /// Opening or initializing the library failed.
    Failed {
        message: String,
        /// The setting the driver refused, when it named one.
        setting: Option<String>,
    },
}

/// One driver method with its arguments.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "method", rename_all = "camelCase")]
pub(crate) enum Method {
    ListDevices,
    Connect {
        device: DeviceId,
    },
    Disconnect {
        device: DeviceId,
    },
    Health {
        device: DeviceId,
    },
    Capabilities {
        device: DeviceId,
    },
    Observe {
        device: DeviceId,
        request: ObserveRequest,
    },
    Execute {
        device: DeviceId,
        call: ActionCall,
    },
    Doctor,
}

impl Method {
    /// The device the call is about, if any.
    pub(crate) fn device(&self) -> Option<&DeviceId> {
        match self {
            Self::Connect { device }
            | Self::Disconnect { device }
            | Self::Health { device }
            | Self::Capabilities { device }
            | Self::Observe { device, .. }
            | Self::Execute { device, .. } => Some(device),
            Self::ListDevices | Self::Doctor => None,
        }
    }

    /// A small index per method (for per-method reply-time estimates).
    pub(super) fn slot(&self) -> usize {
        match self {
            Self::ListDevices => 0,
            Self::Connect { .. } => 1,
            Self::Disconnect { .. } => 2,
            Self::Health { .. } => 3,
            Self::Capabilities { .. } => 4,
            Self::Observe { .. } => 5,
            Self::Execute { .. } => 6,
            Self::Doctor => 7,
        }
    }

    /// How many distinct [`Method::slot`]s there are.
    pub(super) const SLOTS: usize = 8;

    /// The method's name, for logs and errors.
    pub(super) fn name(&self) -> &'static str {
        match self {
            Self::ListDevices => "list_devices",
            Self::Connect { .. } => "connect",
            Self::Disconnect { .. } => "disconnect",
            Self::Health { .. } => "health",
            Self::Capabilities { .. } => "capabilities",
            Self::Observe { .. } => "observe",
            Self::Execute { .. } => "execute",
            Self::Doctor => "doctor",
        }
    }
}

/// Host → worker: one call.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Call {
    pub id: u64,
    /// Time left before the call's deadline, in microseconds (`None`:
    /// unbounded).
    pub budget_us: Option<u64>,
    pub observation_id: ObservationId,
    pub request_id: String,
    #[serde(flatten)]
    pub method: Method,
}

/// Host → worker: cancel call `id`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(super) struct Cancel {
    pub id: u64,
}

/// Worker → host: the outcome of call `id`. The frame's parts are the
/// bytes the outcome's JSON refers to (an observation's PNG and UI
/// snapshot), in order.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Reply {
    pub id: u64,
    pub outcome: Outcome,
}

/// A call's result as JSON text (its type is the method's), or the
/// driver's typed error.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Outcome {
    Ok(Box<RawValue>),
    Err(DriverError),
}

/// How an observation's UI tree crosses: as its snapshot bytes (the next
/// frame part), or why it cannot be stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", rename_all_fields = "camelCase")]
pub(crate) enum UiWire {
    Encoded {
        context: UiContextRef,
        node_count: usize,
    },
    Invalid {
        message: String,
    },
}

/// The JSON of an observation; its PNG (when `png`) and then its UI
/// snapshot (when `ui` is `Encoded`) are the frame's next parts.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObservedWire {
    pub viewport: Viewport,
    #[serde(default)]
    pub metadata: Map<String, Value>,
    #[serde(default)]
    pub png: bool,
    #[serde(default)]
    pub ui: Option<UiWire>,
}

/// The JSON of an Action's result; its resolved observation's parts are
/// the frame's parts.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ActedWire {
    pub output: Value,
    #[serde(default)]
    pub execution: Option<ActionExecution>,
    #[serde(default)]
    pub resolved: Option<ObservedWire>,
}

/// Why a reply's parts do not match its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the reply's byte parts do not match its observation")]
pub(crate) struct PartsMismatch;

impl ObservedWire {
    /// Splits `obs` into its JSON and its parts (appended to `parts`).
    pub(crate) fn split(obs: HostObservation, parts: &mut Vec<Vec<u8>>) -> Self {
        let png = match obs.png {
            Some(bytes) => {
                parts.push(bytes);
                true
            }
            None => false,
        };
        let ui = obs.ui.map(|ui| match ui {
            Ok(EncodedUi {
                context,
                node_count,
                bytes,
            }) => {
                parts.push(bytes);
                UiWire::Encoded {
                    context,
                    node_count,
                }
            }
            Err(UiViolation(message)) => UiWire::Invalid { message },
        });
        Self {
            viewport: obs.viewport,
            metadata: obs.metadata,
            png,
            ui,
        }
    }

    /// Joins the JSON with its parts, taken in order from `parts`, on the
    /// host: a UI snapshot part is checked ([`EncodedUi::check`]) as the
    /// tree of Observation `id` before it is kept (a worker runs plugin
    /// code; what it sends is untrusted input).
    pub(crate) fn join(
        self,
        parts: &mut impl Iterator<Item = Vec<u8>>,
        id: ObservationId,
    ) -> Result<HostObservation, PartsMismatch> {
        let png = if self.png {
            Some(parts.next().ok_or(PartsMismatch)?)
        } else {
            None
        };
        let ui = match self.ui {
            None => None,
            Some(UiWire::Encoded {
                context,
                node_count,
            }) => Some(EncodedUi::check(
                context,
                node_count,
                parts.next().ok_or(PartsMismatch)?,
                id,
            )),
            Some(UiWire::Invalid { message }) => Some(Err(UiViolation(message))),
        };
        Ok(HostObservation {
            viewport: self.viewport,
            png,
            ui,
            metadata: self.metadata,
        })
    }
}

impl ActedWire {
    /// Splits `out` into its JSON and its parts (appended to `parts`).
    pub(crate) fn split(out: HostActionOutput, parts: &mut Vec<Vec<u8>>) -> Self {
        Self {
            output: out.output,
            execution: out.execution,
            resolved: out.resolved.map(|o| ObservedWire::split(o, parts)),
        }
    }

    /// Joins the JSON with its parts, taken in order from `parts` (the
    /// resolved observation checked as Observation `id`).
    pub(crate) fn join(
        self,
        parts: &mut impl Iterator<Item = Vec<u8>>,
        id: ObservationId,
    ) -> Result<HostActionOutput, PartsMismatch> {
        Ok(HostActionOutput {
            output: self.output,
            execution: self.execution,
            resolved: self.resolved.map(|r| r.join(parts, id)).transpose()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_protocol::CallId;
    use serde_json::json;

    #[test]
    fn calls_and_replies_round_trip() {
        let call = Call {
            id: 7,
            budget_us: Some(1500),
            observation_id: ObservationId::new_v7(),
            request_id: "r1".into(),
            method: Method::Execute {
                device: DeviceId::new("mock-1"),
                call: ActionCall {
                    id: CallId::new_v7(),
                    name: "tap".into(),
                    arguments: json!({ "x": 1 }),
                },
            },
        };
        let text = serde_json::to_vec(&call).expect("json");
        let back: Call = serde_json::from_slice(&text).expect("parse");
        assert_eq!(back.id, 7);
        assert_eq!(back.method.name(), "execute");
        let reply = Reply {
            id: 7,
            outcome: Outcome::Err(DriverError::crashed("x", "gone")),
        };
        let back: Reply =
            serde_json::from_slice(&serde_json::to_vec(&reply).expect("json")).expect("parse");
        match back.outcome {
            Outcome::Err(e) => assert_eq!(e.code_str(), "driver_crashed"),
            Outcome::Ok(v) => panic!("unexpected {v}"),
        }
        let ok = Reply {
            id: 8,
            outcome: Outcome::Ok(RawValue::from_string("[1,2]".into()).expect("raw")),
        };
        let back: Reply =
            serde_json::from_slice(&serde_json::to_vec(&ok).expect("json")).expect("parse");
        match back.outcome {
            Outcome::Ok(v) => assert_eq!(v.get(), "[1,2]"),
            Outcome::Err(e) => panic!("unexpected {e}"),
        }
    }

    #[test]
    fn observations_keep_their_bytes_apart() {
        let obs = HostObservation {
            viewport: Viewport {
                width: 2,
                height: 3,
                scale_factor: 1.0,
            },
            png: Some(vec![1, 2, 3]),
            ui: Some(Err(UiViolation("a UI tree: bad".into()))),
            metadata: Map::from_iter([("k".to_owned(), json!(1))]),
        };
        let mut parts = Vec::new();
        let wire = ObservedWire::split(obs.clone(), &mut parts);
        let text = serde_json::to_string(&wire).expect("json");
        assert!(!text.contains("[1,2,3]"), "{text}");
        assert_eq!(parts, [vec![1, 2, 3]]);
        let wire: ObservedWire = serde_json::from_str(&text).expect("parse");
        let mut it = parts.clone().into_iter();
        let id = ObservationId::new_v7();
        assert_eq!(wire.clone().join(&mut it, id).expect("join"), obs);
        assert_eq!(wire.join(&mut std::iter::empty(), id), Err(PartsMismatch));
    }
}
