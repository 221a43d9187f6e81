//! # devicerail-host-core
//!
//! The daemon core: it serves DeviceRail 1.5 to clients. Transports carry
//! frames ([`transport`]: stdio, the shared unix control socket, the event
//! stream's WebSocket); `dispatch` turns one frame into one answer through
//! the method table; `handlers` hold one module per method area; the
//! state they share is in `state` (one host), `connection` (one
//! client), `leases` and `stream_gate`; `recorder` turns what a driver
//! saw into Observations and Evidence. [`serve`] wires a host together and
//! [`in_process`] runs one inside another program (`devicerail mcp`).
//!
//! Only what the command line and the MCP server need is public: starting
//! a host ([`serve`], [`in_process`]), its errors, and the attach preamble
//! of the control socket ([`transport::unix`]), the pool manager's key
//! ([`pool_key`]); everything else is private
//! to the crate.
//!
//! What it must never do: write anything but protocol frames to the
//! protocol's stream, lose or rewrite an acknowledged event, leave a started
//! Action without exactly one terminal event, expose a protected Action's
//! arguments, or depend on the MCP server, the report or the command line.

#![forbid(unsafe_code)]

mod connection;
mod dispatch;
mod handlers;
pub mod in_process;
mod leases;
mod media;
mod outbox;
mod params;
pub mod pool_key;
mod recorder;
pub mod serve;
mod state;
mod stream_gate;
pub mod transport;
mod wire_errors;
