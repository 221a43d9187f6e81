//! `devices.list`, `device.select`, and resolving a request's route.

use std::sync::Arc;

use devicerail_host_protocol::errors::Context;
use devicerail_host_protocol::{
    DeviceId, DeviceSelectParams, DeviceSelectResult, DevicesListResult, ErrorCode, Feature,
    ListedDevice, RpcError,
};
use serde_json::json;

use crate::connection::Connection;
use crate::handlers::call::Call;
use crate::state::Host;
use devicerail_host_engine::registry::Route;

/// The device this connection routes to right now, if any: its active
/// Session's device, else its selection, else the sole registered device.
pub(crate) fn current_device(host: &Host, conn: &Connection) -> Option<DeviceId> {
    conn.session()
        .map(|s| s.device.clone())
        .or_else(|| conn.selected())
        .or_else(|| host.registry.sole_device())
}

/// The route a device request captures when accepted: the active Session's
/// device, else the selection, else the sole registered device.
pub(crate) fn resolve(host: &Host, conn: &Connection) -> Result<Route, RpcError> {
    if let Some(device) = conn
        .session()
        .map(|s| s.device.clone())
        .or_else(|| conn.selected())
    {
        return host
            .registry
            .route(&device)
            .ok_or_else(|| not_registered(&device));
    }
    match host.registry.sole_device() {
        Some(only) => host
            .registry
            .route(&only)
            .ok_or_else(|| not_registered(&only)),
        None if host.registry.device_count() == 0 => Err(ErrorCode::DeviceNotFound.rpc_in(
            Context::NoDevices,
            "no device is registered",
            json!({ "reason": "noRegisteredDevices" }),
        )),
        None => {
            let ids: Vec<DeviceId> = host.registry.devices().into_iter().map(|d| d.id).collect();
            Err(ErrorCode::DeviceSelectionRequired.rpc(
                "several devices are registered; select one with device.select",
                json!({
                    "deviceCount": ids.len(),
                    "availableDeviceIds": ids,
                    "requiredMethod": "device.select",
                    "requiredFeature": Feature::DeviceRouting.name(),
                }),
            ))
        }
    }
}

fn not_registered(id: &DeviceId) -> RpcError {
    ErrorCode::DeviceNotFound.rpc(
        format!("no registered device {id}"),
        json!({ "deviceId": id }),
    )
}

/// `devices.list`.
pub(crate) fn devices_list(call: &Call) -> DevicesListResult {
    let selected = call
        .neg
        .has(Feature::DeviceRouting)
        .then(|| call.conn.selected());
    let leases = &call.host.leases;
    DevicesListResult {
        devices: call
            .host
            .registry
            .devices()
            .into_iter()
            .map(|device| {
                let lease = leases.view(&device.id, call.conn.id);
                ListedDevice { device, lease }
            })
            .collect(),
        selected_device_id: selected,
    }
}

/// `device.select`: an unknown id keeps the previous selection.
pub(crate) async fn device_select(call: &mut Call) -> Result<DeviceSelectResult, RpcError> {
    if let Some(active) = call.conn.session() {
        return Err(ErrorCode::DeviceLeaseActive.rpc(
            format!(
                "session {} holds device {}; end it before selecting another device",
                active.id, active.device
            ),
            json!({ "sessionId": active.id }),
        ));
    }
    let p: DeviceSelectParams = call.params()?;
    let registry = call.host.registry.clone();
    if registry.device(&p.device_id).is_none() {
        // The device may have appeared since the last background refresh;
        // a plugin that does not answer within a second is not waited for.
        registry
            .refresh_within(std::time::Duration::from_secs(1))
            .await;
    }
    let info = registry
        .device(&p.device_id)
        .ok_or_else(|| not_registered(&p.device_id))?;
    call.conn.select(p.device_id);
    Ok(DeviceSelectResult { device: info })
}

/// Keeps the cached device list fresh.
pub(crate) fn spawn_refresher(host: Arc<Host>, every: std::time::Duration) {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tokio::select! {
                _ = host.shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            host.registry.refresh().await;
        }
    });
}
