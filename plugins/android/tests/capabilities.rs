//! The Android action space, byte for byte as clients see it.

#[test]
fn the_action_space_is_stable() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/capabilities.json");
    devicerail_host_testing::assert_golden(
        &path,
        &devicerail_plugin_android::actions::definitions(),
    );
}
