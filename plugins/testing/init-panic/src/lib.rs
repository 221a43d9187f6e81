//! # devicerail-host-test-plugin-init-panic
//!
//! A plugin library that exists only to be refused: layout, ABI and
//! manifest are correct, but the driver constructor panics. The export
//! layer catches the panic, so the loader must answer
//! `LoadError::InitFailed` (mentioning the panic) and the host must keep
//! running. It must never be installed or shipped.

use devicerail_host_plugin_api::{PluginConfig, PluginInitError};

/// The panic message of the constructor.
pub const PANIC_MESSAGE: &str = "test-init-panic: the constructor always panics";

devicerail_host_test_plugin_support::refusing_driver!(
    /// The driver type the constructor claims to build; never constructed.
    NeverBuilt,
    "the init-panic test plugin has no driver"
);

fn construct(_config: &PluginConfig) -> Result<NeverBuilt, PluginInitError> {
    panic!("{PANIC_MESSAGE}");
}

devicerail_host_plugin_api::export_plugin! {
    id: "test-init-panic",
    description: "Test-only plugin whose constructor panics; always refused",
    driver: construct,
}
