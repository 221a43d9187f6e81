//! # devicerail-host-android-fake-adb
//!
//! Test support for the DeviceRail Android plugin, never shipped: a
//! [`FakeAdbDevice`] that speaks the device side of the ADB transport
//! protocol over TCP (CNXN/AUTH/OPEN/OKAY/WRTE/CLSE with checksums, magic
//! and max-payload negotiation; `shell:`, `shell,v2,...:` and `exec:`
//! streams) to a real adb server, behind which a small stateful app runs
//! scripted versions of the programs the driver uses; and [`AdbServer`],
//! a private real adb server per test.
//!
//! The fake must never be mistaken for a device emulator: it only knows
//! the commands the driver sends and records everything it receives so
//! tests can assert exact command lines and what arrived on stdin.

#![forbid(unsafe_code)]

mod app;
mod device;
pub mod latency;
pub mod packet;
pub mod server;
mod shell;

pub use app::{
    AppState, Device, DeviceProfile, Field, InputCall, InputSource, Screen, Touchscreen,
};
pub use device::{Availability, FakeAdbDevice, FakeConfig, ServiceCall};
pub use latency::{LATENCY_ENV, Latency};
pub use server::{AdbServer, adb_available};
