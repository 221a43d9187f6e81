//! Device leases: which connection a device belongs to right now.
//!
//! A connection takes a device's lease with `device.connect` or
//! `session.start` on it and keeps it until `device.disconnect` or until
//! the connection closes. While one connection holds it, every other
//! connection's `device.connect`, `device.disconnect` and `session.start`
//! on that device answer -32014 `device_in_use` naming the holder and
//! since when. This module only keeps the table; it never talks to
//! drivers or the store.

use std::collections::HashMap;
use std::sync::Mutex;

use devicerail_host_protocol::{
    ConnectionId, DeviceId, DeviceLease, ErrorCode, LeaseHolder, PeerInfo, RpcError, SafeU64,
};
use serde_json::json;

/// One held lease.
#[derive(Debug, Clone)]
pub(crate) struct Lease {
    /// The connection that holds the device.
    pub holder: ConnectionId,
    /// The holder's client, as its `system.hello` named it.
    pub client: Option<PeerInfo>,
    /// When the lease was taken, in Unix milliseconds.
    pub since_ms: u64,
}

/// Whether [`Leases::acquire`] took a new lease or found this connection's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acquired {
    /// The device was free; it is now this connection's.
    New,
    /// This connection already held it.
    Held,
}

/// The lease table of one host.
#[derive(Debug, Default)]
pub(crate) struct Leases {
    table: Mutex<HashMap<DeviceId, Lease>>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Leases {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<DeviceId, Lease>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `device` for `conn`, or fails with `device_in_use` when another
    /// connection holds it.
    pub(crate) fn acquire(
        &self,
        device: &DeviceId,
        conn: ConnectionId,
        client: Option<PeerInfo>,
    ) -> Result<Acquired, RpcError> {
        let mut t = self.lock();
        match t.get(device) {
            Some(l) if l.holder == conn => Ok(Acquired::Held),
            Some(l) => Err(in_use(device, l)),
            None => {
                t.insert(
                    device.clone(),
                    Lease {
                        holder: conn,
                        client,
                        since_ms: now_ms(),
                    },
                );
                Ok(Acquired::New)
            }
        }
    }

    /// `device_in_use` when a connection other than `conn` holds `device`.
    pub(crate) fn check(&self, device: &DeviceId, conn: ConnectionId) -> Result<(), RpcError> {
        match self.lock().get(device) {
            Some(l) if l.holder != conn => Err(in_use(device, l)),
            _ => Ok(()),
        }
    }

    /// Ends `conn`'s lease of `device` (nothing if another holds it).
    pub(crate) fn release(&self, device: &DeviceId, conn: ConnectionId) -> bool {
        let mut t = self.lock();
        if t.get(device).is_some_and(|l| l.holder == conn) {
            t.remove(device);
            return true;
        }
        false
    }

    /// Ends every lease `conn` holds; returns the devices it held.
    pub(crate) fn release_all(&self, conn: ConnectionId) -> Vec<DeviceId> {
        let mut t = self.lock();
        let held: Vec<DeviceId> = t
            .iter()
            .filter(|(_, l)| l.holder == conn)
            .map(|(d, _)| d.clone())
            .collect();
        for d in &held {
            t.remove(d);
        }
        held
    }

    /// The lease of `device` as `conn` sees it.
    pub(crate) fn view(&self, device: &DeviceId, conn: ConnectionId) -> Option<DeviceLease> {
        self.lock().get(device).map(|l| DeviceLease {
            holder: if l.holder == conn {
                LeaseHolder::ThisConnection
            } else {
                LeaseHolder::AnotherConnection
            },
            since_ms: SafeU64::new(l.since_ms).unwrap_or(SafeU64::MIN),
        })
    }
}

/// The catalog's `device_in_use` (-32014, retryable), with who holds the
/// device and since when.
fn in_use(device: &DeviceId, lease: &Lease) -> RpcError {
    let client = lease
        .client
        .as_ref()
        .map(|c| format!(" ({} {})", c.name, c.version))
        .unwrap_or_default();
    ErrorCode::DeviceInUse.rpc(
        format!(
            "device {device} is leased by connection {}{client}; it is free again when that connection disconnects the device or closes",
            lease.holder
        ),
        json!({
            "deviceId": device,
            "holderConnectionId": lease.holder,
            "holderClient": lease.client,
            "leasedSinceMs": lease.since_ms,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time() {
        let leases = Leases::default();
        let dev = DeviceId::from("mock-1");
        let (a, b) = (ConnectionId::new_v4(), ConnectionId::new_v4());
        assert_eq!(leases.acquire(&dev, a, None).expect("free"), Acquired::New);
        assert_eq!(leases.acquire(&dev, a, None).expect("own"), Acquired::Held);
        let err = leases.acquire(&dev, b, None).expect_err("held by a");
        assert_eq!(err.data.code, "device_in_use");
        assert!(err.data.retryable);
        let details = err.data.details;
        assert_eq!(details["deviceId"], "mock-1");
        assert_eq!(details["holderConnectionId"], a.to_string());
        assert!(details["leasedSinceMs"].as_u64().is_some());
        assert!(leases.check(&dev, a).is_ok());
        assert!(leases.check(&dev, b).is_err());
        assert_eq!(
            leases.view(&dev, b).map(|l| l.holder),
            Some(LeaseHolder::AnotherConnection)
        );
        assert!(!leases.release(&dev, b), "only the holder releases");
        assert_eq!(leases.release_all(a), vec![dev.clone()]);
        assert!(leases.view(&dev, a).is_none());
        assert_eq!(leases.acquire(&dev, b, None).expect("free"), Acquired::New);
    }
}
