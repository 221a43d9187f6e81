//! The host's device-pool extension (`devicerailHost.pool.v1`, see
//! `devicerail_host_protocol::pool`): every device's availability, lease
//! and reservation, and reserving a device for a token or releasing it.
//! Only connections that negotiated the extension reach these handlers.
//!
//! Tokens never reach a log or an error: params errors are reported
//! without the values, and the lease table keeps only a token's digest.

use std::collections::HashSet;
use std::time::Duration;

use devicerail_host_protocol::methods::invalid_params;
use devicerail_host_protocol::pool::{
    POOL_RELEASE, POOL_RESERVE, PoolDevice, PoolLease, PoolReleaseParams, PoolReleaseResult,
    PoolReservation, PoolReserveParams, PoolStatusResult,
};
use devicerail_host_protocol::{DeviceId, ErrorCode, RpcError, RpcParams, SafeU64};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::connection::Connection;
use crate::leases::{Reservation, Reserved, TokenDigest};
use crate::state::Host;

/// `pool.status` refreshes the device list first when it is older than
/// this, so a device that disappeared shows within a poll or two.
const STATUS_MAX_AGE: Duration = Duration::from_millis(1000);
/// How long `pool.status` waits for a plugin that lists slowly (it then
/// keeps its previous devices).
const STATUS_REFRESH_WAIT: Duration = Duration::from_millis(500);
/// Longest reservation label, in characters.
const LABEL_MAX: usize = 256;

fn safe(ms: u64) -> SafeU64 {
    SafeU64::new(ms).unwrap_or(SafeU64::MIN)
}

fn listed(device: &DeviceId, r: &Reservation) -> PoolReservation {
    PoolReservation {
        device_id: device.clone(),
        label: r.label.clone(),
        since_ms: safe(r.since_ms),
    }
}

/// Decodes an object of params; errors never include a value (the token
/// is one).
fn decode<P: DeserializeOwned>(method: &str, params: Option<RpcParams>) -> Result<P, RpcError> {
    let Some(RpcParams::Object(map)) = params else {
        return Err(invalid_params(method, "params must be an object"));
    };
    serde_json::from_value(serde_json::Value::Object(map)).map_err(|e| {
        // serde names the field and what it expected; a value it quotes is
        // cut off so nothing the client sent comes back.
        let text = e.to_string();
        let text = text.split(['"', '`']).next().unwrap_or("").trim_end();
        invalid_params(method, text)
    })
}

/// `devicerailHost.pool.status`.
pub(crate) async fn status(host: &Host) -> PoolStatusResult {
    if host.registry.age() > STATUS_MAX_AGE {
        host.registry.refresh_within(STATUS_REFRESH_WAIT).await;
    }
    let mut seen = HashSet::new();
    let devices = host
        .registry
        .devices()
        .into_iter()
        .map(|d| {
            let availability = host.registry.availability(&d.id).unwrap_or(Ok(()));
            let (lease, reservation) = host.leases.status(&d.id);
            seen.insert(d.id.clone());
            PoolDevice {
                available: availability.is_ok(),
                unavailable_reason: availability.err().map(str::to_owned),
                lease: lease.map(|l| PoolLease {
                    connection_id: l.holder,
                    client: l.client,
                    since_ms: safe(l.since_ms),
                    by_reservation: l.by_reservation,
                }),
                reservation: reservation.map(|r| listed(&d.id, &r)),
                device_id: d.id,
            }
        })
        .collect();
    let orphaned = host
        .leases
        .reservations()
        .into_iter()
        .filter(|(d, _)| !seen.contains(d))
        .map(|(d, r)| listed(&d, &r))
        .collect();
    PoolStatusResult { devices, orphaned }
}

/// `devicerailHost.pool.reserve`.
pub(crate) fn reserve(
    host: &Host,
    conn: &Connection,
    params: Option<RpcParams>,
) -> Result<PoolReservation, RpcError> {
    let p: PoolReserveParams = decode(POOL_RESERVE, params)?;
    if p.label.chars().count() > LABEL_MAX || p.label.chars().any(char::is_control) {
        return Err(invalid_params(
            POOL_RESERVE,
            format!("label must be at most {LABEL_MAX} characters, without control characters"),
        ));
    }
    if host.registry.device(&p.device_id).is_none() {
        return Err(ErrorCode::DeviceNotFound.rpc(
            format!("no registered device {}", p.device_id),
            json!({ "deviceId": p.device_id }),
        ));
    }
    let digest = TokenDigest::of(&p.token);
    let (how, r) = host.leases.reserve(&p.device_id, &digest, &p.label)?;
    match how {
        Reserved::New => {
            tracing::info!(device = %p.device_id, label = %p.label, by = %conn.id, "device reserved")
        }
        Reserved::Again => {
            tracing::debug!(device = %p.device_id, label = %p.label, "device reserved again")
        }
    }
    Ok(listed(&p.device_id, &r))
}

/// `devicerailHost.pool.release`.
pub(crate) fn release(
    host: &Host,
    params: Option<RpcParams>,
) -> Result<PoolReleaseResult, RpcError> {
    let p: PoolReleaseParams = decode(POOL_RELEASE, params)?;
    let released = host
        .leases
        .unreserve(&p.device_id, &TokenDigest::of(&p.token));
    if released {
        tracing::info!(device = %p.device_id, "device reservation released");
    }
    Ok(PoolReleaseResult { released })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_errors_never_quote_a_value() {
        let secret = "x".repeat(20);
        let params = json!({ "deviceId": "d", "token": secret, "label": "l" });
        let Some(serde_json::Value::Object(map)) = Some(params) else {
            unreachable!()
        };
        let e = decode::<PoolReserveParams>(POOL_RESERVE, Some(RpcParams::Object(map)))
            .expect_err("short token");
        assert!(!e.message.contains(&secret), "{}", e.message);
        let params = json!({ "deviceId": "d", "token": 7, "label": secret.clone() , "extra": secret.clone() });
        let Some(serde_json::Value::Object(map)) = Some(params) else {
            unreachable!()
        };
        let e = decode::<PoolReserveParams>(POOL_RESERVE, Some(RpcParams::Object(map)))
            .expect_err("bad");
        assert!(!e.message.contains(&secret), "{}", e.message);
    }
}
