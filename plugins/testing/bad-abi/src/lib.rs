//! # devicerail-host-test-plugin-bad-abi
//!
//! A plugin library that exists only to be refused: its root module has the
//! right layout but declares ABI major 99, so the loader must answer
//! `LoadError::AbiMismatch` before it ever calls `init`. Its driver does
//! nothing; it must never be installed or shipped.

use devicerail_host_plugin_api::protocol::{ActionCall, DeviceId, DeviceInfo};
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, DeviceCapabilities, Driver, DriverError, DriverObservation,
    DriverResult, ObserveRequest, PluginConfig,
};

/// The ABI major this library claims; no host will ever have it.
pub const CLAIMED_ABI_MAJOR: u32 = 99;

/// A driver that refuses everything (it is never reached: the host
/// refuses the library first).
pub struct RefusedDriver;

fn never() -> DriverError {
    DriverError::failure("the bad-ABI test plugin has no driver")
}

impl Driver for RefusedDriver {
    fn list_devices(&self, _ctx: &CallContext) -> DriverResult<Vec<DeviceInfo>> {
        Err(never())
    }

    fn connect(&self, _ctx: &CallContext, _device: &DeviceId) -> DriverResult<DeviceInfo> {
        Err(never())
    }

    fn disconnect(&self, _ctx: &CallContext, _device: &DeviceId) -> DriverResult<()> {
        Err(never())
    }

    fn capabilities(
        &self,
        _ctx: &CallContext,
        _device: &DeviceId,
    ) -> DriverResult<DeviceCapabilities> {
        Err(never())
    }

    fn observe(
        &self,
        _ctx: &CallContext,
        _device: &DeviceId,
        _request: &ObserveRequest,
    ) -> DriverResult<DriverObservation> {
        Err(never())
    }

    fn execute(
        &self,
        _ctx: &CallContext,
        _device: &DeviceId,
        _call: &ActionCall,
    ) -> DriverResult<ActionOutput> {
        Err(never())
    }
}

devicerail_host_plugin_api::export_plugin! {
    @with_abi (CLAIMED_ABI_MAJOR, 0),
    id: "test-bad-abi",
    description: "Test-only plugin with ABI major 99; always refused",
    driver: |_config: &PluginConfig| Ok::<_, devicerail_host_plugin_api::PluginInitError>(RefusedDriver),
}
