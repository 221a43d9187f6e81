//! # devicerail-host-engine
//!
//! How the host runs driver plugins: scanning and checking the plugins
//! directory and loading each plugin with its settings ([`plugin_dir`]);
//! running a plugin in a supervised worker process ([`worker`], which is
//! also the `devicerail plugin-worker` side); one executor per plugin so a
//! wedged plugin never delays another ([`executor`]); the registry of
//! plugins, devices and routes ([`registry`]); one device call with its
//! deadline and cancellation ([`device_call`]); and observations in the
//! form the host stores them, encoded where the driver runs
//! ([`observation`]).
//!
//! What it must never do: speak the protocol to clients, touch the event
//! store, or let a plugin's panic, crash, garbage or hang reach its caller
//! as anything but a typed error.

#![forbid(unsafe_code)]

pub mod device_call;
pub mod executor;
pub mod observation;
pub mod plugin_dir;
pub mod registry;
pub mod worker;
