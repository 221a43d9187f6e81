//! The JSON headers of the worker channel and how driver values cross it:
//! results as typed JSON text (never an intermediate `Value` tree), and
//! observations as the driver encoded them: their JSON text and PNG travel
//! as the frame's parts straight from the driver's buffers (never base64,
//! never read in the worker), and the host decodes the JSON once, with the
//! code that decodes an inline plugin's. Both ends use these types;
//! nothing here does I/O.

use std::rc::Rc;

use devicerail_host_plugin_api::PluginManifest;
use devicerail_host_plugin_api::driver::{DriverError, ObserveRequest};
use devicerail_host_plugin_api::loader::{EncodedActionOutput, EncodedObservation};
use devicerail_host_protocol::{ActionCall, ActionExecution, DeviceId, ErrorCode, ObservationId};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::observation::{HostActionOutput, HostObservation};

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

/// One driver method with its arguments (externally tagged: the worker
/// reads a call straight into its types; an internal tag beside flattened
/// fields made serde buffer the whole call first).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
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

/// An observation's header: the driver's JSON text (viewport, metadata,
/// UI tree) is the frame's next part, unread by the worker, and its PNG
/// (when `png`) the one after. The host refuses the text unread over a
/// bound, else decodes it once with every bound of the protocol's types
/// and encodes the tree as the snapshot it stores, as it does for an
/// inline plugin ([`HostObservation::from_driver_json`]).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ObservedWire {
    #[serde(default)]
    pub png: bool,
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

/// A driver's answer the protocol's types refuse, worded as the loader
/// words it for an inline plugin.
pub(crate) fn violation(what: &str, e: impl std::fmt::Display) -> DriverError {
    DriverError::new(
        ErrorCode::ProtocolError,
        format!("the driver returned an invalid {what}: {e}"),
    )
}

/// One byte part of a reply, held in the buffer the driver filled.
pub(crate) enum Part {
    /// An observation's PNG.
    Png(Rc<EncodedObservation>),
    /// An observation's JSON text.
    Json(Rc<EncodedObservation>),
}

impl Part {
    /// The part's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Self::Png(obs) => obs.png().unwrap_or_default(),
            Self::Json(obs) => obs.json().as_bytes(),
        }
    }
}

impl ObservedWire {
    /// In the worker: the header of the driver's observation `obs`, its
    /// JSON text and then its PNG appended to `parts` (neither read).
    pub(crate) fn split(obs: EncodedObservation, parts: &mut Vec<Part>) -> Self {
        let obs = Rc::new(obs);
        let png = obs.png().is_some();
        parts.push(Part::Json(obs.clone()));
        if png {
            parts.push(Part::Png(obs));
        }
        Self { png }
    }

    /// In the host: joins the header with its parts, taken in order from
    /// `parts`, as Observation `id` (its UI tree kept when `ui_tree` was
    /// asked for). A worker runs plugin code, and what it sends is
    /// untrusted input: [`HostObservation::from_driver_json`] bounds it
    /// before reading it.
    pub(crate) fn join(
        self,
        parts: &mut impl Iterator<Item = Vec<u8>>,
        id: ObservationId,
        what: &str,
        ui_tree: bool,
    ) -> Result<HostObservation, DriverError> {
        let mut next = || parts.next().ok_or_else(|| violation(what, PartsMismatch));
        let text = next()?;
        let png = if self.png { Some(next()?) } else { None };
        HostObservation::from_driver_json(&text, png, id, ui_tree).map_err(|e| violation(what, e))
    }
}

impl ActedWire {
    /// In the worker: the JSON of `out` and its resolved observation's
    /// parts (appended to `parts`).
    pub(crate) fn split(out: EncodedActionOutput, parts: &mut Vec<Part>) -> Self {
        Self {
            output: out.output,
            execution: out.execution,
            resolved: out.resolved.map(|o| ObservedWire::split(o, parts)),
        }
    }

    /// In the host: joins the JSON with its parts, taken in order from
    /// `parts` (the resolved observation as Observation `id`).
    pub(crate) fn join(
        self,
        parts: &mut impl Iterator<Item = Vec<u8>>,
        id: ObservationId,
    ) -> Result<HostActionOutput, DriverError> {
        Ok(HostActionOutput {
            output: self.output,
            execution: self.execution,
            resolved: self
                .resolved
                .map(|r| r.join(parts, id, "resolved observation", true))
                .transpose()?,
        })
    }
}

/// Why a reply's parts do not match its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the reply's byte parts do not match its observation")]
pub(crate) struct PartsMismatch;

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
    fn observations_cross_as_the_driver_wrote_them() {
        let id = ObservationId::new_v7();
        let tree = json!({
            "context": { "contextKind": "native", "contextId": "app", "documentEpoch": "1" },
            "rootStableNodeIds": ["a"],
            "nodes": [{ "stableNodeId": "a", "role": "text" }],
        });
        let text = json!({
            "viewport": { "width": 2, "height": 3, "scaleFactor": 1.0 },
            "metadata": { "k": 1 },
            "uiTree": tree,
        })
        .to_string();
        let driver = || EncodedObservation::new(&text, Some(vec![1, 2, 3]));
        let mut parts = Vec::new();
        let wire = ObservedWire::split(driver(), &mut parts);
        let header = serde_json::to_string(&wire).expect("json");
        assert!(
            !header.contains("[1,2,3]") && !header.contains("stableNodeId"),
            "{header}"
        );
        let bytes: Vec<Vec<u8>> = parts.iter().map(|p| p.bytes().to_vec()).collect();
        assert_eq!(bytes[0], text.as_bytes());
        assert_eq!(bytes[1], [1, 2, 3]);
        // The host decodes and encodes it as it would inline.
        let wire: ObservedWire = serde_json::from_str(&header).expect("parse");
        let host = wire
            .join(&mut bytes.clone().into_iter(), id, "observation", true)
            .expect("join");
        let inline =
            HostObservation::encode(decode_for_tests(&text, Some(vec![1, 2, 3])), id, true);
        assert_eq!(host, inline);
        let e = wire
            .join(&mut std::iter::empty(), id, "observation", true)
            .expect_err("no parts");
        assert_eq!(e.code_str(), "protocol_error");
        // A tree nobody asked for is dropped, as inline.
        let host = wire
            .join(&mut bytes.into_iter(), id, "observation", false)
            .expect("join");
        assert!(!host.has_ui());
        // What the loader refuses, the host refuses alike, worded alike.
        let extra = text.replacen('{', "{\"extra\":1,", 1);
        let mut parts = Vec::new();
        let wire = ObservedWire::split(EncodedObservation::new(&extra, None), &mut parts);
        let mut bytes = parts.iter().map(|p| p.bytes().to_vec());
        let e = wire
            .join(&mut bytes, id, "observation", true)
            .expect_err("unknown field");
        assert!(e.message.contains("invalid observation"), "{e}");
    }

    /// The plain observation the loader decodes from the same text.
    fn decode_for_tests(
        text: &str,
        png: Option<Vec<u8>>,
    ) -> devicerail_host_plugin_api::DriverObservation {
        let wire: devicerail_host_plugin_api::ObservationWire =
            serde_json::from_str(text).expect("wire");
        wire.into_observation(png)
    }
}
