//! What the device plugin needs from a shared host, as a trait
//! ([`Pool`]): a view of every device (platform, availability, who holds
//! it) and reserving or releasing a device for a token. [`crate::host_link`]
//! implements it over the host's control socket; tests may implement it
//! in memory. Nothing here does I/O.

use std::future::Future;

use devicerail_host_protocol::pool::LeaseToken;

/// Who holds a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// Nobody.
    Free,
    /// A reservation (no connection has taken it yet, or `taken`: a
    /// connection presenting its token has).
    Reserved {
        /// The reservation's label (who reserved it).
        label: String,
        /// Whether a connection presenting the token holds it now.
        taken: bool,
    },
    /// A connection that took it without a reservation: a client outside
    /// Kubernetes.
    Connection {
        /// The client's name and version from its hello, if it said.
        client: Option<String>,
    },
}

/// One device of the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewDevice {
    /// The device id the host routes by.
    pub id: String,
    /// The platform kind (`android`, `ios`, `web`, `mock`, …).
    pub platform: String,
    /// Whether its driver can serve it now.
    pub available: bool,
    /// Why not, in a few words.
    pub unavailable_reason: Option<String>,
    /// Who holds it.
    pub holder: Holder,
}

/// The host's devices at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostView {
    /// Every device the host lists.
    pub devices: Vec<ViewDevice>,
}

/// Why the host could not be asked or refused.
#[derive(Debug, Clone, thiserror::Error)]
pub enum PoolError {
    /// No answer (no host, a broken connection, a timeout).
    #[error("the shared host is unreachable: {0}")]
    Unreachable(String),
    /// The host answered with an error.
    #[error("the shared host refused: {message} ({code})")]
    Refused {
        /// The error's code name.
        code: String,
        /// The error's message.
        message: String,
    },
}

/// A shared host's device pool.
pub trait Pool: Send + Sync + 'static {
    /// Every device, its availability and holder.
    fn view(&self) -> impl Future<Output = Result<HostView, PoolError>> + Send;
    /// Reserves `device` for `token` (again for the same token is fine).
    fn reserve(
        &self,
        device: &str,
        token: &LeaseToken,
        label: &str,
    ) -> impl Future<Output = Result<(), PoolError>> + Send;
    /// Ends the reservation of `device` made for `token`; `false` when
    /// there was none.
    fn release(
        &self,
        device: &str,
        token: &LeaseToken,
    ) -> impl Future<Output = Result<bool, PoolError>> + Send;
}
