//! Where `devicerail mcp` gets its DeviceRail connections: through
//! `devicerail-host-link`, the shared host listening on the control socket
//! when there is one, else a host inside this process on the same
//! configuration. Every connection reads lease holders out of the
//! `devices.list` answers that cross it (for the `devices` tool).
//!
//! It never writes to stdout and never serves the protocol to anyone but
//! this process.

pub(crate) use devicerail_host_link::{
    DeviceRailClient, LeaseView, LinkError as BackendError, Reach as Backend, call, call0,
};
use devicerail_host_link::{Intro, LeaseTap, attach};

/// A new protocol connection (hello done) to `backend`, recording the
/// leases its `devices.list` answers show into `leases`.
pub(crate) async fn connect(
    backend: &Backend,
    leases: &LeaseView,
) -> Result<DeviceRailClient, BackendError> {
    let (read, write) = backend.stream(&Intro::new("mcp")).await?.into_split();
    attach(LeaseTap::new(read, leases.clone()), write, "devicerail-mcp").await
}
