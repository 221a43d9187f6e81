//! # devicerail-host-test-plugin-not-a-plugin
//!
//! An ordinary shared library that exists only to be refused: it loads
//! fine with `dlopen` and exports one plain C function, but no DeviceRail
//! root module, so the loader must answer `LoadError::NotAPlugin`. It must
//! never depend on the plugin API (that would defeat its purpose).

/// A plain C function, so the library exports something.
#[unsafe(no_mangle)]
pub extern "C" fn devicerail_test_not_a_plugin_answer() -> u32 {
    42
}
