//! # devicerail-host-test-plugin-bad-abi
//!
//! A plugin library that exists only to be refused: its root module has the
//! right layout but declares ABI major 99, so the loader must answer
//! `LoadError::AbiMismatch` before it ever calls `init`. Its driver does
//! nothing; it must never be installed or shipped.

use devicerail_host_plugin_api::PluginConfig;

/// The ABI major this library claims; no host will ever have it.
pub const CLAIMED_ABI_MAJOR: u32 = 99;

devicerail_host_test_plugin_support::refusing_driver!(
    /// A driver that refuses everything (it is never reached: the host
    /// refuses the library first).
    RefusedDriver,
    "the bad-ABI test plugin has no driver"
);

devicerail_host_plugin_api::export_plugin! {
    @with_abi (CLAIMED_ABI_MAJOR, 0),
    id: "test-bad-abi",
    description: "Test-only plugin with ABI major 99; always refused",
    driver: |_config: &PluginConfig| Ok::<_, devicerail_host_plugin_api::PluginInitError>(RefusedDriver),
}
