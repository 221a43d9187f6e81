//! Typed calls with JSON in and out ([`call`], [`call0`]) on a connection
//! of the official client, each bounded by a timeout where the method
//! takes one, and [`remote`]: the one mapping of the client's errors to
//! [`LinkError`].

use devicerail_client::methods::{ControlMethod, NoParams};
use devicerail_client::protocol::RequestTimeoutMs;
use devicerail_client::{CallOptions, ClientError, DeviceRailClient};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::LinkError;

/// Call options with `timeout_ms` where method `M` takes one.
pub fn options<M: ControlMethod>(timeout_ms: Option<u64>) -> CallOptions {
    CallOptions {
        timeout_ms: timeout_ms
            .filter(|_| M::DESCRIPTOR.supports_timeout)
            .and_then(RequestTimeoutMs::new),
    }
}

/// The client's error `e` of a call to `method`: a wire error becomes
/// [`LinkError::Remote`] with its code (`data.code`, else the numeric
/// code), message and data; anything else stays the client's.
pub fn remote(method: &'static str, e: ClientError) -> LinkError {
    match e {
        ClientError::RemoteRpc { error, .. } => {
            wire_error(method, &serde_json::to_value(&error).unwrap_or(Value::Null))
        }
        other => LinkError::Client(other),
    }
}

/// The one mapping of a JSON-RPC `error` object of a call to `method`.
pub(crate) fn wire_error(method: &'static str, error: &Value) -> LinkError {
    let code = error["data"]["code"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| error["code"].to_string());
    LinkError::Remote {
        method,
        code,
        message: error["message"].as_str().unwrap_or("").to_owned(),
        data: error["data"].clone(),
    }
}

/// Calls `M` with params given as JSON; the result as JSON.
pub async fn call<M>(
    client: &DeviceRailClient,
    params: Value,
    timeout_ms: Option<u64>,
) -> Result<Value, LinkError>
where
    M: ControlMethod,
    M::Params: DeserializeOwned,
    M::Result: Serialize,
{
    let params: M::Params = serde_json::from_value(params)?;
    let result = client
        .call::<M>(params, options::<M>(timeout_ms))
        .await
        .map_err(|e| remote(M::DESCRIPTOR.name, e))?;
    Ok(serde_json::to_value(result)?)
}

/// Calls `M`, which takes no params; the result as JSON.
pub async fn call0<M>(
    client: &DeviceRailClient,
    timeout_ms: Option<u64>,
) -> Result<Value, LinkError>
where
    M: ControlMethod<Params = NoParams>,
    M::Result: Serialize,
{
    let result = client
        .call::<M>(NoParams, options::<M>(timeout_ms))
        .await
        .map_err(|e| remote(M::DESCRIPTOR.name, e))?;
    Ok(serde_json::to_value(result)?)
}
