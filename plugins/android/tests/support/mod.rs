//! Shared rig of the plugin tests: a private real adb server, fake
//! devices attached to it, and the plugin loaded from its cdylib with the
//! server's address in its settings.

#![allow(dead_code)]

use devicerail_host_android_fake_adb::{AdbServer, Availability, FakeAdbDevice, FakeConfig};
use devicerail_host_plugin_api::CallContext;
use devicerail_host_plugin_api::loader::LoadedPlugin;
use devicerail_host_testing::load_workspace_plugin_with;
use serde_json::{Value, json};

/// A private adb server; fails loudly when adb is missing (install the
/// `adb` package), unless `DEVICERAIL_SKIP_ADB_TESTS=1`.
pub(crate) fn server() -> Option<AdbServer> {
    if std::env::var("DEVICERAIL_SKIP_ADB_TESTS").is_ok_and(|v| v == "1") {
        eprintln!("DEVICERAIL_SKIP_ADB_TESTS=1: skipping a test that needs adb");
        return None;
    }
    assert!(
        devicerail_host_android_fake_adb::adb_available(),
        "these tests need the real adb server: apt-get install adb (or set DEVICERAIL_SKIP_ADB_TESTS=1)"
    );
    Some(AdbServer::start().expect("a private adb server starts"))
}

/// Loads the plugin pointed at `server`, with extra settings.
pub(crate) fn plugin_with(server: &AdbServer, extra: Value) -> LoadedPlugin {
    let mut settings = json!({
        "adbServer": server.socket_spec(),
        "startServer": false,
        "commandTimeoutMs": 15000,
    });
    if let (Some(s), Some(e)) = (settings.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    load_workspace_plugin_with(
        "devicerail-host-plugin-android",
        "android",
        settings.as_object().expect("an object"),
    )
}

pub(crate) fn plugin(server: &AdbServer) -> LoadedPlugin {
    plugin_with(server, json!({}))
}

/// Starts a fake and attaches it to the server in the state its
/// availability implies.
pub(crate) fn attach(server: &AdbServer, config: FakeConfig) -> (FakeAdbDevice, String) {
    let availability = config.availability;
    let fake = FakeAdbDevice::start(config).expect("fake device starts");
    let serial = match availability {
        Availability::Online => server.attach(fake.port(), "device"),
        Availability::Unauthorized => server.attach(fake.port(), "unauthorized"),
        Availability::Offline => {
            server
                .connect_detached(fake.port())
                .expect("adb connect runs");
            server
                .wait_for_state(
                    &fake.serial(),
                    "offline",
                    std::time::Duration::from_secs(15),
                )
                .map(|_| fake.serial())
        }
    }
    .expect("the server lists the fake");
    (fake, serial)
}

/// One online fake with the default profile.
pub(crate) fn online(server: &AdbServer) -> (FakeAdbDevice, String) {
    attach(server, FakeConfig::default())
}

/// `base` plus the time a UI dump can take under the fake's latency model
/// from the environment (nothing for the instant model), for tests whose
/// deadlines must leave room for one dump.
pub(crate) fn paced(base: std::time::Duration) -> std::time::Duration {
    match devicerail_host_android_fake_adb::Latency::from_env() {
        devicerail_host_android_fake_adb::Latency::PhoneLike { scale, .. } => {
            base + std::time::Duration::from_secs_f64(4.0 * scale)
        }
        devicerail_host_android_fake_adb::Latency::Instant => base,
    }
}

pub(crate) fn ctx() -> CallContext {
    CallContext::new(Some(
        std::time::Instant::now() + std::time::Duration::from_secs(30),
    ))
}
