//! # devicerail-host-plugin-api
//!
//! How DeviceRail device backends ship as separate `cdylib` plugins.
//!
//! * Driver authors implement [`Driver`] (plain Rust: `DeviceInfo`,
//!   `ActionCall`, PNG bytes, [`CallContext`] with deadline and
//!   cancellation) and invoke [`export_plugin!`] once.
//! * The macro builds the stable-ABI side ([`ffi`]): an `abi_stable`
//!   prefix-type root module and a `#[sabi_trait]` driver object that carry
//!   JSON text and raw image bytes. Every call is wrapped in `catch_unwind`,
//!   so a driver panic becomes a contained `internal_error` (`cause: driverPanicked`).
//! * The host (feature `loader`) opens a library with [`loader::load`],
//!   which checks layout, ABI major, manifest and protocol range, and gets a
//!   [`loader::LoadedPlugin`] that itself implements [`Driver`], validating
//!   every value against `devicerail-host-protocol`.
//! * The host passes each plugin its table of the host's configuration
//!   file as [`PluginConfig::settings`], and says why it loads it
//!   ([`PluginConfig::purpose`]: serve, or only inspect for `plugins
//!   install|list` and `doctor`, when a driver must start no external
//!   server). Plugins built against ABI 1.0 still load (see
//!   [`ffi::ABI_MINOR`]).
//! * Feature `conformance` adds the suite every driver's tests run
//!   ([`conformance::assert_crate`]: one call from a driver crate's
//!   `tests/conformance.rs`); feature `loader` also has [`cargo_build`],
//!   which builds a driver crate's library with the user's cargo.
//!
//! Shared by every driver: [`actions`] (the native action vocabulary:
//! argument types, input schemas, limits, the URL check and the always
//! protected `inputSecret`), [`config`] (settings, then environment
//! variables, then defaults) and [`semantic`] (the five semantic Actions
//! over a UI tree).
//!
//! This crate must never depend on the host, and nothing async crosses the
//! boundary: calls are blocking on the plugin side; the host runs them off
//! its async workers, and a plugin may run its own runtime inside.

#![warn(missing_docs)]

pub mod actions;
pub mod config;
pub mod context;
pub mod driver;
pub mod error;
pub mod export;
pub mod ffi;
mod logging;
pub mod manifest;
pub mod semantic;
pub mod typing;
mod wire;

#[cfg(feature = "loader")]
pub mod cargo_build;
#[cfg(feature = "loader")]
pub mod loader;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use config::{ConfigError, ConfigReader};
pub use context::CallContext;
pub use driver::{
    ActionOutput, CheckStatus, CustomCode, DeviceCapabilities, DeviceHealth, DoctorCheck, Driver,
    DriverCode, DriverError, DriverObservation, DriverResult, InvalidCode, LiveFrame, LiveRequest,
    LoadPurpose, ObserveRequest, PluginConfig, PluginIdentity, UiTree,
};
pub use export::PluginInitError;
pub use manifest::{PluginManifest, library_file_name, library_stem, valid_plugin_id};
pub use wire::ObservationWire;

/// The version of this SDK crate: what a driver crate's dependency on
/// `devicerail-host-plugin-api` names (`devicerail plugins new` writes it).
pub const SDK_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The oldest Rust this SDK builds with (its `rust-version`), which a
/// driver crate declares too.
pub const SDK_RUST_VERSION: &str = env!("CARGO_PKG_RUST_VERSION");

/// The protocol crate, re-exported so plugins use the host's exact version.
pub use devicerail_host_protocol as protocol;

/// Re-exports the export macro's expansion needs.
#[doc(hidden)]
pub mod __private {
    pub use abi_stable;
}

#[cfg(test)]
mod tests {
    #[test]
    fn root_module_symbol_name_matches_abi_stable() {
        assert_eq!(
            crate::__root_module_loader_name!(),
            abi_stable::library::ROOT_MODULE_LOADER_NAME
        );
    }
}
