//! # devicerail-host-test-plugin-bad-layout
//!
//! A library that exists only to be refused: it exports a root module under
//! exactly the root-module name and version strings of the real plugin root
//! module (`devicerail_host_plugin_api::ffi::PluginModRef`), but with another
//! type layout (a 64-bit ABI major, no minor, a differently typed `init`).
//! abi_stable's layout check must catch it before anything is called, so
//! the loader answers `LoadError::IncompatibleLayout`. (abi_stable reports
//! the first difference it meets: the root module type is defined by
//! another package than `devicerail-host-plugin-api`; its field list differs
//! too.) Nothing here may be called by a host; it must never be installed
//! or shipped.

// `StableAbi` derives expand to impls the non-local-definitions lint flags.
#![allow(non_local_definitions)]

use abi_stable::library::RootModule;
use abi_stable::sabi_types::VersionStrings;
use abi_stable::std_types::{RStr, RString};
use abi_stable::{StableAbi, declare_root_module_statics, export_root_module};
use devicerail_host_plugin_api::ffi;

/// A root module shaped unlike the real one. The names match the real
/// types so the difference is in the layout, not only in the name.
#[repr(C)]
#[derive(StableAbi)]
#[sabi(kind(Prefix(prefix_ref = PluginModRef)))]
#[sabi(missing_field(panic))]
pub struct PluginMod {
    /// 64 bits where the real module has a `u32`.
    pub abi_major: u64,
    /// Answers text that is not a manifest; never reached, the layout
    /// check refuses the module first.
    pub manifest: extern "C" fn() -> RString,
    /// Takes plain text where the real `init` takes `FfiInit`.
    #[sabi(last_prefix_field)]
    pub init: extern "C" fn(settings: RStr<'_>) -> RString,
}

impl RootModule for PluginModRef {
    declare_root_module_statics! {PluginModRef}
    const BASE_NAME: &'static str = <ffi::PluginModRef as RootModule>::BASE_NAME;
    const NAME: &'static str = <ffi::PluginModRef as RootModule>::NAME;
    const VERSION_STRINGS: VersionStrings = <ffi::PluginModRef as RootModule>::VERSION_STRINGS;
}

extern "C" fn manifest() -> RString {
    RString::from("this is not a manifest")
}

extern "C" fn init(_settings: RStr<'_>) -> RString {
    RString::from("this is not a driver")
}

#[export_root_module]
fn root_module() -> PluginModRef {
    use abi_stable::prefix_type::PrefixTypeTrait;
    PluginMod {
        abi_major: u64::from(ffi::ABI_MAJOR),
        manifest,
        init,
    }
    .leak_into_prefix()
}
