//! Shared helpers for the protocol's fixture tests.
#![allow(dead_code)]

use devicerail_protocol::methods::*;
use devicerail_protocol::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Deserializes `value` as `T` and serializes it back.
fn through<T: DeserializeOwned + Serialize>(value: &Value) -> Result<Value, String> {
    let typed: T = serde_json::from_value(value.clone()).map_err(|e| e.to_string())?;
    serde_json::to_value(&typed).map_err(|e| e.to_string())
}

/// Round-trips `value` through the Rust type a manifest `kind` names.
pub fn round_trip(kind: &str, value: &Value) -> Result<Value, String> {
    match kind {
        "helloRequest" | "webSocketHelloRequest" => through::<SystemHelloRequest>(value),
        "helloResponse" | "webSocketHelloResponse" => through::<SystemHelloResponse>(value),
        "systemDescribeRequest" => through::<SystemDescribeRequest>(value),
        "systemDescribeResponse" => through::<SystemDescribeResponse>(value),
        "deviceInfo" => through::<DeviceInfo>(value),
        "observation" => through::<Observation>(value),
        "actionDefinition" => through::<ActionDefinition>(value),
        "actionCall" => through::<ActionCall>(value),
        "manualRecording" => through::<ManualRecording>(value),
        "actionResult" => through::<ActionResult>(value),
        "errorInfo" => through::<ErrorInfo>(value),
        "deviceConnectRequest" => through::<DeviceConnectRequest>(value),
        "deviceConnectResponse" => through::<DeviceConnectResponse>(value),
        "deviceDisconnectRequest" => through::<DeviceDisconnectRequest>(value),
        "deviceDisconnectResponse" => through::<DeviceDisconnectResponse>(value),
        "deviceCapabilitiesRequest" => through::<DeviceCapabilitiesRequest>(value),
        "deviceCapabilitiesResponse" => through::<DeviceCapabilitiesResponse>(value),
        "deviceObserveRequest" => through::<DeviceObserveRequest>(value),
        "deviceObserveResponse" => through::<DeviceObserveResponse>(value),
        "deviceExecuteRequest" => through::<DeviceExecuteRequest>(value),
        "deviceExecuteResponse" => through::<DeviceExecuteResponse>(value),
        "deviceSelectRequest" => through::<DeviceSelectRequest>(value),
        "deviceSelectResponse" => through::<DeviceSelectResponse>(value),
        "devicesListRequest" => through::<DevicesListRequest>(value),
        "devicesListResponse" => through::<DevicesListResponse>(value),
        "requestCancelRequest" => through::<RequestCancelRequest>(value),
        "requestCancelResponse" => through::<RequestCancelResponse>(value),
        "sessionStartRequest" => through::<SessionStartRequest>(value),
        "sessionStartResponse" => through::<SessionStartResponse>(value),
        "sessionCurrentRequest" => through::<SessionCurrentRequest>(value),
        "sessionCurrentResponse" => through::<SessionCurrentResponse>(value),
        "sessionEndRequest" => through::<SessionEndRequest>(value),
        "sessionEndResponse" => through::<SessionEndResponse>(value),
        "sessionsListRequest" => through::<SessionsListRequest>(value),
        "sessionsListResponse" => through::<SessionsListResponse>(value),
        "sessionExportRequest" => through::<SessionExportRequest>(value),
        "sessionExportResponse" => through::<SessionExportResponse>(value),
        "eventsListRequest" => through::<EventsListRequest>(value),
        "eventsListResponse" => through::<EventsListResponse>(value),
        "eventsClearRequest" => through::<EventsClearRequest>(value),
        "eventsClearResponse" => through::<EventsClearResponse>(value),
        "mediaStreamCaptureRequest" => through::<MediaStreamCaptureRequest>(value),
        "mediaStreamCaptureResponse" => through::<MediaStreamCaptureResponse>(value),
        "mediaStreamEndRequest" => through::<MediaStreamEndRequest>(value),
        "mediaStreamEndResponse" => through::<MediaStreamEndResponse>(value),
        "mediaStreamStartRequest" => through::<MediaStreamStartRequest>(value),
        "mediaStreamStartResponse" => through::<MediaStreamStartResponse>(value),
        "rpcFailure" => through::<RpcResponse>(value),
        "testEvent" => through::<TestEvent>(value),
        "eventsStreamOpenRequest" => through::<EventsStreamOpenRequest>(value),
        "eventsStreamOpenResponse" => through::<EventsStreamOpenResponse>(value),
        "eventsSubscribeRequest" => through::<EventsSubscribeRequest>(value),
        "eventsSubscribeResponse" => through::<EventsSubscribeResponse>(value),
        "eventsStreamEventNotification" => through::<EventsStreamEventNotification>(value),
        "eventsStreamTerminalNotification" => through::<EventsStreamTerminalNotification>(value),
        "uiSnapshot" => through::<UiSnapshot>(value),
        "findElementArguments" => through::<FindElementArguments>(value),
        "findElementResult" => through::<FindElementResult>(value),
        "tapElementArguments" => through::<TapElementArguments>(value),
        "tapElementResult" => through::<TapElementResult>(value),
        "clearElementArguments" => through::<ClearElementArguments>(value),
        "clearElementResult" => through::<ClearElementResult>(value),
        "setElementValueArguments" => through::<SetElementValueArguments>(value),
        "setElementValueResult" => through::<SetElementValueResult>(value),
        "waitForElementArguments" => through::<WaitForElementArguments>(value),
        "waitForElementResult" => through::<WaitForElementResult>(value),
        "uiSnapshotGetRequest" => through::<UiSnapshotGetRequest>(value),
        "uiSnapshotGetResponse" => through::<UiSnapshotGetResponse>(value),
        "verdictRecordRequest" => through::<VerdictRecordRequest>(value),
        "verdictRecordResponse" => through::<VerdictRecordResponse>(value),
        other => Err(format!("no Rust type for fixture kind {other:?}")),
    }
}

/// JSON equality where numbers compare by value (`1` equals `1.0`).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_u64(), y.as_u64()) {
            (Some(p), Some(q)) => p == q,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The reference folder, or `None` after printing why the caller skips.
pub fn reference_dir(test: &str) -> Option<std::path::PathBuf> {
    match std::env::var_os("DEVICERAIL_REFERENCE_DIR") {
        Some(dir) => Some(std::path::PathBuf::from(dir)),
        None => {
            println!("{test}: skipped: DEVICERAIL_REFERENCE_DIR is not set");
            None
        }
    }
}
