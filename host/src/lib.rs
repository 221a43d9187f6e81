//! # devicerail-host
//!
//! The DeviceRail daemon (`devicerail`): serves DeviceRail 1.5 over NDJSON
//! on stdio, loads driver plugins (`cdylib`s) from a plugins directory and
//! routes each connection's device calls to the plugin that owns the
//! selected device. Sessions, events and Evidence are durable in the data
//! directory.
//!
//! What it must never do: write anything but protocol frames to stdout,
//! lose or rewrite an acknowledged event, let a plugin's failure (panic,
//! garbage, hang) take it down, or expose a protected Action's arguments in
//! events, logs or Evidence.

pub mod attach;
pub mod bundle;
pub mod commands;
pub mod config;
pub mod connection;
pub mod device_call;
pub mod dispatch;
pub mod event_store;
pub mod evidence;
pub mod executor;
pub mod handlers;
pub mod in_process;
pub mod leases;
pub mod lockfile;
pub mod mcp;
pub mod media;
pub mod outbox;
pub mod params;
pub mod paths;
pub mod plugin_dir;
pub mod private_file;
pub mod recorder;
pub mod registry;
pub mod report;
pub mod serve;
pub mod snapshot_codec;
pub mod state;
pub mod stream_gate;
pub mod transport;
pub mod wire_errors;
pub mod worker;
