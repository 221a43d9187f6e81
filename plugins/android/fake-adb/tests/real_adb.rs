//! The fake against the real adb server and the real adb client binary:
//! states, shell v2 exit codes, raw exec: with stdin, large outputs.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use devicerail_host_android_fake_adb::{
    AdbServer, Availability, FakeAdbDevice, FakeConfig, adb_available,
};

fn server() -> Option<AdbServer> {
    if !adb_available() {
        eprintln!("adb is not installed; skipping");
        return None;
    }
    Some(AdbServer::start().expect("adb server starts"))
}

#[test]
fn online_device_runs_shell_v2_commands() {
    let Some(server) = server() else { return };
    let fake = FakeAdbDevice::online().expect("fake starts");
    let serial = server.attach(fake.port(), "device").expect("device online");
    let out = server
        .adb(&["-s", &serial, "shell", "getprop ro.product.model"])
        .expect("shell");
    assert_eq!(out.trim(), "Fake Pixel");
    // The adb client reports the v2 exit status as its own.
    let err = server
        .adb(&["-s", &serial, "shell", "nosuchcommand"])
        .expect_err("exit 127 propagates");
    assert!(
        err.to_string().contains("inaccessible or not found"),
        "{err}"
    );
    let calls = fake.calls();
    assert!(calls.iter().all(|c| c.kind == "shell,v2"), "{calls:?}");
    let long = server
        .query(&format!("host-serial:{serial}:features"))
        .expect("features");
    assert!(long.contains("shell_v2"), "{long}");
}

#[test]
fn raw_output_larger_than_the_payload_arrives_intact() {
    let Some(server) = server() else { return };
    let fake = FakeAdbDevice::start(FakeConfig {
        max_payload: 4096,
        ..FakeConfig::default()
    })
    .expect("fake starts");
    let serial = server.attach(fake.port(), "device").expect("device online");
    let out = Command::new(devicerail_host_android_fake_adb::server::adb_binary())
        .args(["-P", &server.port().to_string(), "-s", &serial])
        .args(["exec-out", "screencap"])
        .stdin(Stdio::null())
        .output()
        .expect("exec-out");
    let (w, h) = (720usize, 1280usize);
    assert_eq!(out.stdout.len(), 16 + w * h * 4);
    assert_eq!(&out.stdout[0..4], &720u32.to_le_bytes());
}

#[test]
fn exec_stdin_reaches_the_device() {
    let Some(server) = server() else { return };
    let fake = FakeAdbDevice::online().expect("fake starts");
    let serial = server.attach(fake.port(), "device").expect("device online");
    fake.with_device(|d| d.state.focus = Some(devicerail_host_android_fake_adb::Field::Username));
    let mut child = Command::new(devicerail_host_android_fake_adb::server::adb_binary())
        .args(["-P", &server.port().to_string(), "-s", &serial])
        .args(["exec-in", "sh -c 'while IFS= read -r l; do :; done'"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("exec-in");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"tab%sc\n.\n")
        .expect("write");
    let out = child.wait_with_output().expect("exec-in ends");
    assert!(out.status.success());
    // exec-in returns once stdin is sent; the device may still be typing.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while fake.state().username != "ab c" && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(fake.state().username, "ab c");
    assert_eq!(fake.stdin_received(), b"tab%sc\n.\n");
    assert!(!fake.command_lines().iter().any(|c| c.contains("ab%sc")));
}

#[test]
fn unauthorized_and_offline_devices_are_listed_with_their_state() {
    let Some(server) = server() else { return };
    let unauthorized = FakeAdbDevice::start(FakeConfig {
        availability: Availability::Unauthorized,
        ..FakeConfig::default()
    })
    .expect("fake starts");
    let offline = FakeAdbDevice::start(FakeConfig {
        availability: Availability::Offline,
        ..FakeConfig::default()
    })
    .expect("fake starts");
    let _ = server.connect(unauthorized.port());
    // `adb connect` to a silent device only gives up after 10 s; the
    // server lists it as offline at once.
    server
        .connect_detached(offline.port())
        .expect("adb connect runs");
    server
        .wait_for_state(
            &unauthorized.serial(),
            "unauthorized",
            Duration::from_secs(15),
        )
        .expect("unauthorized");
    server
        .wait_for_state(&offline.serial(), "offline", Duration::from_secs(15))
        .expect("offline");
}

#[test]
fn a_vanished_device_leaves_the_list() {
    let Some(server) = server() else { return };
    let fake = FakeAdbDevice::online().expect("fake starts");
    let serial = server.attach(fake.port(), "device").expect("device online");
    fake.vanish_on("vanish-now");
    let r = server.adb(&["-s", &serial, "shell", "echo vanish-now"]);
    assert!(r.is_err() || r.is_ok_and(|o| !o.contains("vanish-now\n")));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.state_of(&serial).as_deref() == Some("device") {
        assert!(std::time::Instant::now() < deadline, "still listed");
        std::thread::sleep(Duration::from_millis(25));
    }
}
