//! # devicerail-host-link
//!
//! One way for this project's own tools to reach a DeviceRail host as a
//! client: `devicerail mcp`, `replay`, `kube device-plugin`, `devices` and
//! `attach` all go through it.
//!
//! * [`Reach`]: where the host is: the shared host listening on the
//!   control socket, or a host started inside this process on the same
//!   configuration when none listens (`core`'s in-process host, served by
//!   the same connection code as the socket).
//! * [`Intro`]: the attach preamble a connection starts with (who it is,
//!   a reservation's lease token, the pool manager's key).
//! * [`Reach::client`]: a connection with `system.hello` done, through the
//!   official Rust client (`devicerail-client`, re-exported here: this is
//!   the only crate that depends on it).
//! * [`call`], [`call0`]: typed calls with JSON in and out, and the one
//!   mapping of wire errors to [`LinkError`].
//! * [`typed`]: the methods tools call most, answered in this project's
//!   protocol types; [`eyes::Eyes`]: a device's screens as the agent
//!   crate's typed `Screen`, for the one settle loop.
//! * [`Extension`]: this host's own extension methods (the device pool),
//!   with the same introduction, hello and error mapping.
//! * [`LeaseTap`]: reads lease holders (this host's extension field,
//!   which the official client's types drop) from `devices.list`
//!   answers as they pass.
//!
//! What it must never do: serve the protocol, write to stdout, or log a
//! lease token or the pool manager's key.

#![forbid(unsafe_code)]

mod call;
mod error;
mod extension;
pub mod eyes;
mod intro;
mod leases;
mod reach;
pub mod typed;

pub use call::{call, call0, options, remote};
pub use devicerail_client::{ClientError, ClientState, DeviceRailClient, methods, protocol};
pub use error::LinkError;
pub use extension::Extension;
pub use eyes::{Eyes, Pixels};
pub use intro::Intro;
pub use leases::{LeaseTap, LeaseView, devices_with_leases};
pub use reach::{Reach, attach, listening};
