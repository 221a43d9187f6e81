//! The DeviceRail conformance suite on this crate's library, built by cargo
//! and loaded through the host's own loader: every check a host relies on
//! (manifest, action space and argument schemas, semantic actions,
//! UI-snapshot bounds, cancellation and deadlines, typed errors, nothing
//! on stdout), each failure reported with its fix.
//!
//! Keep this test alone in this file: the suite watches stdout while the
//! driver runs, and the test harness prints there when other tests end.

#[test]
fn passes_the_devicerail_conformance_suite() {
    devicerail_host_plugin_api::conformance::assert_crate(env!("CARGO_MANIFEST_DIR"));
}
