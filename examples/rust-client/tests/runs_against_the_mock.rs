//! The example runs against this workspace's `devicerail serve` with the
//! mock plugin, the host found through `DEVICERAIL_BIN` as a user would
//! set it.

use std::process::Command;

#[test]
fn the_example_signs_in_follows_the_stream_and_exports() {
    let host = devicerail_host_testing::host_process::host_binary();
    let mock =
        devicerail_host_testing::build_workspace_plugin("devicerail-host-plugin-mock", "mock");
    let tmp = tempfile::tempdir().expect("tempdir");
    let plugins = tmp.path().join("plugins");
    std::fs::create_dir_all(&plugins).expect("mkdir");
    std::fs::copy(&mock, plugins.join(mock.file_name().expect("file name"))).expect("copy");
    let out = Command::new(env!("CARGO_BIN_EXE_devicerail-rust-client-example"))
        .arg(&plugins)
        .arg(tmp.path().join("data"))
        .env("DEVICERAIL_BIN", &host)
        .env("RUST_LOG", "warn")
        .output()
        .expect("run the example");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{stdout}");
    assert!(out.status.success(), "the example failed:\n{stderr}");
    for line in [
        "signed in",
        "stream reached the end of the session",
        "exported 11 events in 3 pages",
    ] {
        assert!(stdout.contains(line), "{line:?} missing from:\n{stdout}");
    }
}
