//! # devicerail-host-test-plugin-init-panic
//!
//! A plugin library that exists only to be refused: layout, ABI and
//! manifest are correct, but the driver constructor panics. The export
//! layer catches the panic, so the loader must answer
//! `LoadError::InitFailed` (mentioning the panic) and the host must keep
//! running. It must never be installed or shipped.

use devicerail_host_plugin_api::protocol::{ActionCall, DeviceId, DeviceInfo};
use devicerail_host_plugin_api::{
    ActionOutput, CallContext, DeviceCapabilities, Driver, DriverError, DriverObservation,
    DriverResult, ObserveRequest, PluginConfig, PluginInitError,
};

/// The panic message of the constructor.
pub const PANIC_MESSAGE: &str = "test-init-panic: the constructor always panics";

/// The driver type the constructor claims to build; never constructed.
pub struct NeverBuilt;

fn never() -> DriverError {
    DriverError::failure("the init-panic test plugin has no driver")
}

impl Driver for NeverBuilt {
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

fn construct(_config: &PluginConfig) -> Result<NeverBuilt, PluginInitError> {
    panic!("{PANIC_MESSAGE}");
}

devicerail_host_plugin_api::export_plugin! {
    id: "test-init-panic",
    description: "Test-only plugin whose constructor panics; always refused",
    driver: construct,
}
