//! Device leases: which connection a device belongs to right now, and
//! which devices the device pool has reserved.
//!
//! A connection takes a device's lease with `device.connect` or
//! `session.start` on it and keeps it until `device.disconnect` or until
//! the connection closes. While one connection holds it, every other
//! connection's `device.connect`, `device.disconnect` and `session.start`
//! on that device answer -32014 `device_in_use` naming the holder and
//! since when.
//!
//! A reservation (the pool extension, `devicerail_host_protocol::pool`)
//! holds a device for no connection: only a connection that presented the
//! reservation's token takes its lease, and when that connection lets go
//! the device is reserved again, until the reservation is released. The
//! table keeps only the token's SHA-256 digest, never the token.
//!
//! This module only keeps the table; it never talks to drivers or the
//! store.

use std::collections::HashMap;
use std::sync::Mutex;

use devicerail_host_protocol::pool::LeaseToken;
use devicerail_host_protocol::{
    ConnectionId, DeviceId, DeviceLease, ErrorCode, LeaseHolder, PeerInfo, RpcError, SafeU64,
};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The SHA-256 digest of a reservation token: what the host keeps and
/// compares instead of the token.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenDigest([u8; 32]);

impl TokenDigest {
    /// The digest of `token`.
    pub fn of(token: &LeaseToken) -> Self {
        Self(Sha256::digest(token.expose().as_bytes()).into())
    }

    /// Compares in time independent of where the digests differ.
    pub(crate) fn matches(&self, other: &TokenDigest) -> bool {
        self.0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

impl std::fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenDigest(..)")
    }
}

/// One held lease.
#[derive(Debug, Clone)]
pub(crate) struct Lease {
    /// The connection that holds the device.
    pub holder: ConnectionId,
    /// The holder's client, as its `system.hello` named it.
    pub client: Option<PeerInfo>,
    /// When the lease was taken, in Unix milliseconds.
    pub since_ms: u64,
    /// Whether the holder took it by presenting the reservation's token.
    pub by_reservation: bool,
}

/// One reservation.
#[derive(Debug, Clone)]
pub(crate) struct Reservation {
    digest: TokenDigest,
    /// Who it is for (never a secret).
    pub label: String,
    /// When it was made, in Unix milliseconds.
    pub since_ms: u64,
}

/// Whether [`Leases::acquire`] took a new lease or found this connection's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Acquired {
    /// The device was free (or reserved for this connection's token); it is
    /// now this connection's.
    New,
    /// This connection already held it.
    Held,
}

/// Whether [`Leases::reserve`] made a new reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reserved {
    /// The device was free; it is now reserved.
    New,
    /// The device was already reserved for the same token.
    Again,
}

/// Who asks for a device: a connection, and the digest of the reservation
/// token it presented when it attached, if any.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Claimant<'a> {
    pub conn: ConnectionId,
    pub token: Option<&'a TokenDigest>,
}

impl Claimant<'_> {
    fn holds(&self, r: &Reservation) -> bool {
        self.token.is_some_and(|t| t.matches(&r.digest))
    }
}

#[derive(Debug, Default)]
struct Table {
    leases: HashMap<DeviceId, Lease>,
    reservations: HashMap<DeviceId, Reservation>,
}

/// The lease table of one host.
#[derive(Debug, Default)]
pub(crate) struct Leases {
    table: Mutex<Table>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Leases {
    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes `device` for `who`, or fails with `device_in_use` when another
    /// connection holds it or a reservation `who` has no token for does.
    pub(crate) fn acquire(
        &self,
        device: &DeviceId,
        who: Claimant<'_>,
        client: Option<PeerInfo>,
    ) -> Result<Acquired, RpcError> {
        let mut t = self.lock();
        let reservation = t.reservations.get(device);
        match t.leases.get(device) {
            Some(l) if l.holder == who.conn => return Ok(Acquired::Held),
            Some(l) => return Err(in_use(device, Some(l), reservation)),
            None => {}
        }
        let by_reservation = match reservation {
            Some(r) if who.holds(r) => true,
            Some(r) => return Err(in_use(device, None, Some(r))),
            None => false,
        };
        t.leases.insert(
            device.clone(),
            Lease {
                holder: who.conn,
                client,
                since_ms: now_ms(),
                by_reservation,
            },
        );
        Ok(Acquired::New)
    }

    /// `device_in_use` when a connection other than `who` holds `device`,
    /// or a reservation `who` has no token for.
    pub(crate) fn check(&self, device: &DeviceId, who: Claimant<'_>) -> Result<(), RpcError> {
        let t = self.lock();
        let reservation = t.reservations.get(device);
        match t.leases.get(device) {
            Some(l) if l.holder != who.conn => Err(in_use(device, Some(l), reservation)),
            Some(_) => Ok(()),
            None => match reservation {
                Some(r) if !who.holds(r) => Err(in_use(device, None, Some(r))),
                _ => Ok(()),
            },
        }
    }

    /// Ends `conn`'s lease of `device` (nothing if another holds it). A
    /// reservation stays.
    pub(crate) fn release(&self, device: &DeviceId, conn: ConnectionId) -> bool {
        let mut t = self.lock();
        if t.leases.get(device).is_some_and(|l| l.holder == conn) {
            t.leases.remove(device);
            return true;
        }
        false
    }

    /// Ends every lease `conn` holds; returns the devices it held.
    pub(crate) fn release_all(&self, conn: ConnectionId) -> Vec<DeviceId> {
        let mut t = self.lock();
        let held: Vec<DeviceId> = t
            .leases
            .iter()
            .filter(|(_, l)| l.holder == conn)
            .map(|(d, _)| d.clone())
            .collect();
        for d in &held {
            t.leases.remove(d);
        }
        held
    }

    /// The lease of `device` as `conn` sees it: a connection's lease, else
    /// the reservation.
    pub(crate) fn view(&self, device: &DeviceId, conn: ConnectionId) -> Option<DeviceLease> {
        let t = self.lock();
        let safe = |ms: u64| SafeU64::new(ms).unwrap_or(SafeU64::MIN);
        if let Some(l) = t.leases.get(device) {
            return Some(DeviceLease {
                holder: if l.holder == conn {
                    LeaseHolder::ThisConnection
                } else {
                    LeaseHolder::AnotherConnection
                },
                since_ms: safe(l.since_ms),
            });
        }
        t.reservations.get(device).map(|r| DeviceLease {
            holder: LeaseHolder::Reservation,
            since_ms: safe(r.since_ms),
        })
    }

    /// Reserves `device` for `token`: again for the same token is a no-op
    /// (so a pool manager can restore its reservations after a restart);
    /// `device_in_use` when a connection holds the device or another token
    /// reserved it.
    pub(crate) fn reserve(
        &self,
        device: &DeviceId,
        token: &TokenDigest,
        label: &str,
    ) -> Result<(Reserved, Reservation), RpcError> {
        let mut t = self.lock();
        let lease = t.leases.get(device);
        if let Some(r) = t.reservations.get(device) {
            if r.digest.matches(token) {
                return Ok((Reserved::Again, r.clone()));
            }
            return Err(in_use(device, lease, Some(r)));
        }
        if let Some(l) = lease {
            return Err(in_use(device, Some(l), None));
        }
        let r = Reservation {
            digest: *token,
            label: label.to_owned(),
            since_ms: now_ms(),
        };
        t.reservations.insert(device.clone(), r.clone());
        Ok((Reserved::New, r))
    }

    /// Ends the reservation of `device` made for `token`; `false` when
    /// there is none. A connection that took the device with the token
    /// keeps its lease (as an ordinary one) until it lets go.
    pub(crate) fn unreserve(&self, device: &DeviceId, token: &TokenDigest) -> bool {
        let mut t = self.lock();
        if !t
            .reservations
            .get(device)
            .is_some_and(|r| r.digest.matches(token))
        {
            return false;
        }
        t.reservations.remove(device);
        if let Some(l) = t.leases.get_mut(device) {
            l.by_reservation = false;
        }
        true
    }

    /// The lease and the reservation of `device`.
    pub(crate) fn status(&self, device: &DeviceId) -> (Option<Lease>, Option<Reservation>) {
        let t = self.lock();
        (
            t.leases.get(device).cloned(),
            t.reservations.get(device).cloned(),
        )
    }

    /// Every reservation, by device.
    pub(crate) fn reservations(&self) -> Vec<(DeviceId, Reservation)> {
        self.lock()
            .reservations
            .iter()
            .map(|(d, r)| (d.clone(), r.clone()))
            .collect()
    }
}

/// The catalog's `device_in_use` (-32014, retryable), with who holds the
/// device and since when: the connection holding the lease, else the
/// reservation.
fn in_use(device: &DeviceId, lease: Option<&Lease>, reservation: Option<&Reservation>) -> RpcError {
    let reserved = reservation.map(|r| json!({ "label": r.label, "sinceMs": r.since_ms }));
    match lease {
        Some(lease) => {
            let client = lease
                .client
                .as_ref()
                .map(|c| format!(" ({} {})", c.name, c.version))
                .unwrap_or_default();
            let mut details = json!({
                "deviceId": device,
                "holderConnectionId": lease.holder,
                "holderClient": lease.client,
                "leasedSinceMs": lease.since_ms,
            });
            if let Some(r) = reserved {
                details["holderReservation"] = r;
            }
            ErrorCode::DeviceInUse.rpc(
                format!(
                    "device {device} is leased by connection {}{client}; it is free again when that connection disconnects the device or closes",
                    lease.holder
                ),
                details,
            )
        }
        None => {
            let (label, since_ms) = reservation
                .map(|r| (r.label.as_str(), r.since_ms))
                .unwrap_or(("", 0));
            ErrorCode::DeviceInUse.rpc(
                format!(
                    "device {device} is reserved for {label}; only a connection presenting that reservation's token can take it"
                ),
                json!({
                    "deviceId": device,
                    "holderConnectionId": null,
                    "holderClient": null,
                    "leasedSinceMs": since_ms,
                    "holderReservation": reserved,
                }),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(conn: ConnectionId) -> Claimant<'static> {
        Claimant { conn, token: None }
    }

    fn digest(c: char) -> TokenDigest {
        TokenDigest::of(&LeaseToken::new(c.to_string().repeat(40)).expect("token"))
    }

    #[test]
    fn one_holder_at_a_time() {
        let leases = Leases::default();
        let dev = DeviceId::from("mock-1");
        let (a, b) = (ConnectionId::new_v4(), ConnectionId::new_v4());
        assert_eq!(
            leases.acquire(&dev, who(a), None).expect("free"),
            Acquired::New
        );
        assert_eq!(
            leases.acquire(&dev, who(a), None).expect("own"),
            Acquired::Held
        );
        let err = leases.acquire(&dev, who(b), None).expect_err("held by a");
        assert_eq!(err.data.code, "device_in_use");
        assert!(err.data.retryable);
        let details = err.data.details;
        assert_eq!(details["deviceId"], "mock-1");
        assert_eq!(details["holderConnectionId"], a.to_string());
        assert!(details["leasedSinceMs"].as_u64().is_some());
        assert!(details.get("holderReservation").is_none(), "{details}");
        assert!(leases.check(&dev, who(a)).is_ok());
        assert!(leases.check(&dev, who(b)).is_err());
        assert_eq!(
            leases.view(&dev, b).map(|l| l.holder),
            Some(LeaseHolder::AnotherConnection)
        );
        assert!(!leases.release(&dev, b), "only the holder releases");
        assert_eq!(leases.release_all(a), vec![dev.clone()]);
        assert!(leases.view(&dev, a).is_none());
        assert_eq!(
            leases.acquire(&dev, who(b), None).expect("free"),
            Acquired::New
        );
    }

    #[test]
    fn a_reservation_admits_only_its_token() {
        let leases = Leases::default();
        let dev = DeviceId::from("mock-1");
        let (t, other) = (digest('t'), digest('o'));
        let (pod, stranger) = (ConnectionId::new_v4(), ConnectionId::new_v4());
        assert_eq!(
            leases.reserve(&dev, &t, "kube pod-a").expect("free").0,
            Reserved::New
        );
        assert_eq!(
            leases
                .reserve(&dev, &t, "kube pod-a")
                .expect("same token")
                .0,
            Reserved::Again
        );
        assert!(leases.reserve(&dev, &other, "else").is_err());
        assert_eq!(
            leases.view(&dev, stranger).map(|l| l.holder),
            Some(LeaseHolder::Reservation)
        );
        // A connection without the token (or with another) is refused.
        let err = leases
            .acquire(&dev, who(stranger), None)
            .expect_err("reserved");
        assert_eq!(err.data.code, "device_in_use");
        assert_eq!(err.data.details["holderConnectionId"], json!(null));
        assert_eq!(err.data.details["holderReservation"]["label"], "kube pod-a");
        let wrong = Claimant {
            conn: stranger,
            token: Some(&other),
        };
        assert!(leases.acquire(&dev, wrong, None).is_err());
        assert!(leases.check(&dev, wrong).is_err());
        // The token's connection takes it; the device is then its lease.
        let holder = Claimant {
            conn: pod,
            token: Some(&t),
        };
        assert!(leases.check(&dev, holder).is_ok());
        assert_eq!(
            leases.acquire(&dev, holder, None).expect("token"),
            Acquired::New
        );
        assert!(leases.status(&dev).0.is_some_and(|l| l.by_reservation));
        let err = leases
            .acquire(&dev, who(stranger), None)
            .expect_err("leased");
        assert_eq!(err.data.details["holderConnectionId"], pod.to_string());
        // Letting go leaves it reserved, not free.
        assert_eq!(leases.release_all(pod), vec![dev.clone()]);
        assert!(leases.acquire(&dev, who(stranger), None).is_err());
        // Only the token ends the reservation.
        assert!(!leases.unreserve(&dev, &other));
        assert!(leases.unreserve(&dev, &t));
        assert!(leases.view(&dev, stranger).is_none());
        assert_eq!(
            leases.acquire(&dev, who(stranger), None).expect("free"),
            Acquired::New
        );
        // A leased device cannot be reserved.
        assert!(leases.reserve(&dev, &t, "late").is_err());
    }

    #[test]
    fn releasing_a_reservation_keeps_the_connection_that_took_it() {
        let leases = Leases::default();
        let dev = DeviceId::from("mock-2");
        let t = digest('t');
        let pod = ConnectionId::new_v4();
        leases.reserve(&dev, &t, "kube").expect("free");
        let holder = Claimant {
            conn: pod,
            token: Some(&t),
        };
        leases.acquire(&dev, holder, None).expect("token");
        assert!(leases.unreserve(&dev, &t));
        let (lease, reservation) = leases.status(&dev);
        assert!(reservation.is_none());
        assert!(lease.is_some_and(|l| l.holder == pod && !l.by_reservation));
        assert_eq!(leases.release_all(pod), vec![dev.clone()]);
        assert!(leases.status(&dev).0.is_none());
    }

    #[test]
    fn digests_never_show_the_token() {
        assert_eq!(format!("{:?}", digest('s')), "TokenDigest(..)");
    }
}
