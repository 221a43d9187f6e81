//! The JSON headers of the worker channel and how driver values cross it:
//! observations travel as JSON with their PNG as the frame's raw bytes
//! (never base64). Both ends use these types; nothing here does I/O.

use devicerail_host_plugin_api::ObservationWire;
use devicerail_host_plugin_api::driver::{ActionOutput, DriverError, ObserveRequest};
use devicerail_host_protocol::{ActionCall, ActionExecution, DeviceId, ObservationId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Host → worker, the first frame: the plugin's own settings (its table
/// of the configuration file, nothing else) and the load purpose.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Init {
    /// The plugin id the host expects the library to declare.
    pub plugin_id: String,
    pub settings: Map<String, Value>,
    /// `serve` or `inspect`.
    pub purpose: String,
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
pub(super) enum Method {
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

/// Worker → host: the outcome of call `id`. The frame's bytes are the PNG
/// of the observation in `ok`, if it has one.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Reply {
    pub id: u64,
    pub outcome: Outcome,
}

/// A call's JSON result, or the driver's typed error.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) enum Outcome {
    Ok(Value),
    Err(DriverError),
}

/// An Action's result, its resolved observation's PNG in the frame bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct OutputJson {
    pub output: Value,
    #[serde(default)]
    pub execution: Option<ActionExecution>,
    #[serde(default)]
    pub resolved: Option<ObservationWire>,
}

/// Splits an Action's output into its JSON and the resolved PNG.
pub(super) fn split_output(out: ActionOutput) -> (OutputJson, Option<Vec<u8>>) {
    let (resolved, png) = match out.resolved.map(ObservationWire::split) {
        Some((json, png)) => (Some(json), png),
        None => (None, None),
    };
    (
        OutputJson {
            output: out.output,
            execution: out.execution,
            resolved,
        },
        png,
    )
}

/// Joins an Action's output JSON and the resolved PNG.
pub(super) fn join_output(json: OutputJson, png: Option<Vec<u8>>) -> ActionOutput {
    ActionOutput {
        output: json.output,
        execution: json.execution,
        resolved: json.resolved.map(|r| r.into_observation(png)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use devicerail_host_plugin_api::DriverObservation;
    use devicerail_host_protocol::CallId;
    use devicerail_host_protocol::Viewport;
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
    }

    #[test]
    fn observations_keep_their_png_apart() {
        let mut obs = DriverObservation::new(Viewport {
            width: 2,
            height: 3,
            scale_factor: 1.0,
        });
        obs.png = Some(vec![1, 2, 3]);
        obs.metadata.insert("k".into(), json!(1));
        let (j, png) = ObservationWire::split(obs.clone());
        let text = serde_json::to_string(&j).expect("json");
        assert!(!text.contains("png"), "{text}");
        let j: ObservationWire = serde_json::from_str(&text).expect("parse");
        assert_eq!(j.into_observation(png), obs);
    }
}
