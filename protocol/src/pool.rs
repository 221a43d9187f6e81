//! The device-pool extension of this host (not part of DeviceRail 1.5):
//! reservations that hold a device for whoever presents a secret token,
//! and each device's availability and lease, for a pool manager such as
//! the Kubernetes device plugin (`devicerail kube device-plugin`).
//!
//! A connection that offers [`POOL_FEATURE`] in `system.hello` (the host
//! then lists it in `features.enabled`) may call the three methods below.
//! A client that does not offer it sees no difference at all: the methods
//! stay unknown to it, and a reserved device answers `device_in_use` like
//! a leased one.
//!
//! A reservation belongs to no connection: it survives the connection
//! that made it and ends only with [`POOL_RELEASE`] (or the host's exit).
//! A connection presenting the reservation's token (`devicerail attach`
//! sends it from `DEVICERAIL_LEASE_TOKEN`) takes the device's lease like
//! a free device's; when it lets go, the device is reserved again.
//!
//! The token is a secret: [`LeaseToken`] never prints it (its `Debug` is
//! redacted and it has no `Display`), and the host keeps only its digest.

use serde::{Deserialize, Deserializer, Serialize};

use crate::bounded::SafeU64;
use crate::handshake::PeerInfo;
use crate::ids::{ConnectionId, DeviceId};

/// The feature a client offers (optionally or required) to use the pool
/// methods.
pub const POOL_FEATURE: &str = "devicerailHost.pool.v1";
/// `devicerailHost.pool.status`: every device's availability, lease and
/// reservation.
pub const POOL_STATUS: &str = "devicerailHost.pool.status";
/// `devicerailHost.pool.reserve`: reserves a device for a token.
pub const POOL_RESERVE: &str = "devicerailHost.pool.reserve";
/// `devicerailHost.pool.release`: ends a reservation.
pub const POOL_RELEASE: &str = "devicerailHost.pool.release";
/// The pool methods.
pub const POOL_METHODS: &[&str] = &[POOL_STATUS, POOL_RESERVE, POOL_RELEASE];

/// Shortest token accepted (characters).
pub const TOKEN_MIN: usize = 32;
/// Longest token accepted (characters).
pub const TOKEN_MAX: usize = 128;

/// A reservation's secret: 32 to 128 characters of `A-Z a-z 0-9 - _`
/// (so it fits a preamble word and an environment variable unquoted).
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct LeaseToken(String);

/// Why a string is not a [`LeaseToken`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Shorter or longer than allowed.
    #[error("a lease token has {TOKEN_MIN} to {TOKEN_MAX} characters, not {0}")]
    Length(usize),
    /// A character outside `A-Z a-z 0-9 - _`.
    #[error("a lease token has only the characters A-Z a-z 0-9 - _")]
    Charset,
}

impl LeaseToken {
    /// Checks `text` (which is never echoed in the error).
    pub fn new(text: impl Into<String>) -> Result<Self, TokenError> {
        let text = text.into();
        let len = text.chars().count();
        if !(TOKEN_MIN..=TOKEN_MAX).contains(&len) {
            return Err(TokenError::Length(len));
        }
        if !text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(TokenError::Charset);
        }
        Ok(Self(text))
    }

    /// The secret itself, for whoever must hand it on (an environment
    /// variable, a preamble). Never log it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for LeaseToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LeaseToken(<redacted>)")
    }
}

impl<'de> Deserialize<'de> for LeaseToken {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        LeaseToken::new(s).map_err(serde::de::Error::custom)
    }
}

/// Params of [`POOL_RESERVE`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolReserveParams {
    /// The device to reserve.
    pub device_id: DeviceId,
    /// The secret a connection presents to take the device.
    pub token: LeaseToken,
    /// Who the reservation is for, shown in listings and `device_in_use`
    /// (never a secret), at most 256 characters.
    pub label: String,
}

/// Params of [`POOL_RELEASE`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolReleaseParams {
    /// The reserved device.
    pub device_id: DeviceId,
    /// The reservation's token (only its holder may end it).
    pub token: LeaseToken,
}

/// Result of [`POOL_RELEASE`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolReleaseResult {
    /// `false` when the device had no reservation with that token.
    pub released: bool,
}

/// One reservation, as listings show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolReservation {
    /// The reserved device.
    pub device_id: DeviceId,
    /// Who it is for (the label given to `reserve`).
    pub label: String,
    /// When it was made, in Unix milliseconds.
    pub since_ms: SafeU64,
}

/// A connection's lease, as [`POOL_STATUS`] shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolLease {
    /// The holding connection.
    pub connection_id: ConnectionId,
    /// Its client, as its hello named it.
    #[serde(default)]
    pub client: Option<PeerInfo>,
    /// When the lease was taken, in Unix milliseconds.
    pub since_ms: SafeU64,
    /// Whether the connection took it by presenting the device's
    /// reservation token.
    pub by_reservation: bool,
}

/// One device of [`POOL_STATUS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolDevice {
    /// The device.
    pub device_id: DeviceId,
    /// Whether its driver can serve it now (`false` while its plugin's
    /// worker is down).
    pub available: bool,
    /// Why it is not available, in a few words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
    /// The connection holding it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<PoolLease>,
    /// Its reservation, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservation: Option<PoolReservation>,
}

/// Result of [`POOL_STATUS`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PoolStatusResult {
    /// Every registered device, in `devices.list` order.
    pub devices: Vec<PoolDevice>,
    /// Reservations of devices no plugin lists right now.
    pub orphaned: Vec<PoolReservation>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_checked_and_never_printed() {
        let t = LeaseToken::new("a".repeat(32)).expect("valid");
        assert_eq!(format!("{t:?}"), "LeaseToken(<redacted>)");
        assert_eq!(
            LeaseToken::new("short").expect_err("short"),
            TokenError::Length(5)
        );
        assert_eq!(
            LeaseToken::new(format!("{} x", "a".repeat(32))).expect_err("space"),
            TokenError::Charset
        );
        let e = serde_json::from_value::<PoolReleaseParams>(serde_json::json!({
            "deviceId": "d", "token": "secret-but-short"
        }))
        .expect_err("a short token");
        assert!(!e.to_string().contains("secret"), "{e}");
    }
}
