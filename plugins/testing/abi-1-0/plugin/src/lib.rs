//! # devicerail-host-test-plugin-abi-1-0
//!
//! A plugin as a driver built with plugin ABI 1.0 looks to the host: its
//! root module has `abi_minor: 0` and no `init_for`, so the host must
//! initialize it through `init` (as for serving), whatever it loads it for.
//! It lists no devices, refuses every device call, and reports the settings
//! it was given as its one doctor check, so a test can see that its table
//! of the configuration file arrived. Never installed or shipped.

// `#[sabi_trait]` impls and root-module statics trip this lint.
#![allow(non_local_definitions)]

use abi_stable::export_root_module;
use abi_stable::prefix_type::PrefixTypeTrait;
use abi_stable::sabi_trait::TD_Opaque;
use abi_stable::std_types::{RResult, RStr, RString};
use devicerail_host_plugin_api::ffi::{
    FfiActionOutput, FfiCallContext, FfiDriver, FfiDriver_TO, FfiDriverBox, FfiError, FfiInit,
    FfiObservation, FfiResult, FfiUuid, PluginMod, PluginModRef,
};

/// The driver: remembers its settings text.
struct OldDriver {
    settings: String,
}

fn refused<T>() -> FfiResult<T> {
    RResult::RErr(FfiError {
        code: "device_not_found".into(),
        message: "the ABI 1.0 test plugin has no devices".into(),
        retryable: false,
        details: RString::new(),
    })
}

impl FfiDriver for OldDriver {
    fn list_devices(&self, _ctx: &FfiCallContext) -> FfiResult<RString> {
        RResult::ROk("[]".into())
    }

    fn connect(&self, _ctx: &FfiCallContext, _device: RStr<'_>) -> FfiResult<RString> {
        refused()
    }

    fn disconnect(&self, _ctx: &FfiCallContext, _device: RStr<'_>) -> FfiResult<()> {
        RResult::ROk(())
    }

    fn health(&self, _ctx: &FfiCallContext, _device: RStr<'_>) -> FfiResult<RString> {
        refused()
    }

    fn capabilities(&self, _ctx: &FfiCallContext, _device: RStr<'_>) -> FfiResult<RString> {
        refused()
    }

    fn observe(
        &self,
        _ctx: &FfiCallContext,
        _device: RStr<'_>,
        _request: RStr<'_>,
    ) -> FfiResult<FfiObservation> {
        refused()
    }

    fn execute(
        &self,
        _ctx: &FfiCallContext,
        _device: RStr<'_>,
        _call_id: FfiUuid,
        _name: RStr<'_>,
        _arguments: RStr<'_>,
    ) -> FfiResult<FfiActionOutput> {
        refused()
    }

    fn doctor(&self) -> RString {
        // The settings are a JSON object; embed them as a JSON string.
        let detail: String = self
            .settings
            .chars()
            .flat_map(|c| match c {
                '"' => vec!['\\', '"'],
                '\\' => vec!['\\', '\\'],
                c => vec![c],
            })
            .collect();
        format!(r#"[{{"name":"settings","status":"ok","detail":"{detail}"}}]"#).into()
    }
}

extern "C" fn manifest() -> RString {
    r#"{"id":"test-abi-1-0","version":"0.1.0","description":"Test-only plugin built against plugin ABI 1.0","abiMajor":1,"abiMinor":0,"pluginApiVersion":"0.1.0","protocol":[{"major":1,"minMinor":0,"maxMinor":5}]}"#.into()
}

extern "C" fn init(init: FfiInit) -> RResult<FfiDriverBox, RString> {
    let driver = OldDriver {
        settings: init.settings.into(),
    };
    RResult::ROk(FfiDriver_TO::from_value(driver, TD_Opaque))
}

#[export_root_module]
fn root_module() -> PluginModRef {
    PluginMod {
        abi_major: 1,
        abi_minor: 0,
        manifest,
        init,
    }
    .leak_into_prefix()
}
