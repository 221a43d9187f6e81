//! # devicerail-host-test-plugin-load-abort
//!
//! A plugin library whose load-time code crashes: an `.init_array`
//! constructor, which the dynamic loader runs inside `dlopen` before any
//! plugin function is looked up, aborts the process (or, with
//! `DEVICERAIL_TEST_LOAD_HANG` set, sleeps forever). Everything else is a
//! well-formed plugin, so nothing but loading it can tell. The host must
//! never load it in its own process: inspecting or serving it happens in a
//! short-lived worker, which dies instead, and the file is refused with
//! that reason. It must never be installed or shipped.

use devicerail_host_plugin_api::{PluginConfig, PluginInitError};

/// Environment variable: when set, the constructor hangs instead of
/// aborting.
pub const HANG_ENV: &str = "DEVICERAIL_TEST_LOAD_HANG";

/// Runs when the library is loaded, before `dlopen` returns.
extern "C" fn on_load() {
    if std::env::var_os(HANG_ENV).is_some() {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        }
    }
    eprintln!("test-load-abort: aborting while the library loads");
    std::process::abort()
}

#[used]
#[unsafe(link_section = ".init_array")]
static ON_LOAD: extern "C" fn() = on_load;

devicerail_host_test_plugin_support::refusing_driver!(
    /// The driver type the constructor would build; never reached.
    NeverLoaded,
    "the load-abort test plugin never loads"
);

fn construct(_config: &PluginConfig) -> Result<NeverLoaded, PluginInitError> {
    Ok(NeverLoaded)
}

devicerail_host_plugin_api::export_plugin! {
    id: "test-load-abort",
    description: "Test-only plugin whose load-time constructor aborts; always refused",
    driver: construct,
}
