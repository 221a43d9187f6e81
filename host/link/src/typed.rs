//! Typed answers: the methods tools call most, answered in this
//! project's protocol types (`devicerail-host-protocol`) rather than JSON.
//! The official client decodes and checks each result in its own types;
//! this is the one place they become ours (both serialize to the same
//! wire shape).

use devicerail_client::DeviceRailClient;
use devicerail_client::methods::{ControlMethod, DeviceExecute, DeviceObserve, UiSnapshotGet};
use devicerail_host_protocol::{ActionResult, Observation, UiSnapshot};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::{LinkError, call, call0};

/// Calls `M` with JSON params; its result in our type `T`.
pub async fn call_as<M, T>(
    client: &DeviceRailClient,
    params: Value,
    timeout_ms: Option<u64>,
) -> Result<T, LinkError>
where
    M: ControlMethod,
    M::Params: DeserializeOwned,
    M::Result: Serialize,
    T: DeserializeOwned,
{
    Ok(serde_json::from_value(
        call::<M>(client, params, timeout_ms).await?,
    )?)
}

/// Calls `M`, which takes no params; its result in our type `T`.
pub async fn call0_as<M, T>(
    client: &DeviceRailClient,
    timeout_ms: Option<u64>,
) -> Result<T, LinkError>
where
    M: ControlMethod<Params = devicerail_client::methods::NoParams>,
    M::Result: Serialize,
    T: DeserializeOwned,
{
    Ok(serde_json::from_value(
        call0::<M>(client, timeout_ms).await?,
    )?)
}

/// `device.observe`: the Observation the host recorded.
pub async fn observe(
    client: &DeviceRailClient,
    timeout_ms: Option<u64>,
) -> Result<Observation, LinkError> {
    Ok(serde_json::from_value(
        call0::<DeviceObserve>(client, timeout_ms).await?,
    )?)
}

/// `ui.snapshot.get` of Observation `observation_id`.
pub async fn ui_snapshot(
    client: &DeviceRailClient,
    observation_id: &str,
    timeout_ms: Option<u64>,
) -> Result<UiSnapshot, LinkError> {
    call_as::<UiSnapshotGet, UiSnapshot>(
        client,
        json!({ "observationId": observation_id }),
        timeout_ms,
    )
    .await
}

/// `device.execute` of Action `name` with `arguments` under call id `id`.
pub async fn execute(
    client: &DeviceRailClient,
    id: &str,
    name: &str,
    arguments: Value,
    timeout_ms: Option<u64>,
) -> Result<ActionResult, LinkError> {
    call_as::<DeviceExecute, ActionResult>(
        client,
        json!({ "id": id, "name": name, "arguments": arguments }),
        timeout_ms,
    )
    .await
}
