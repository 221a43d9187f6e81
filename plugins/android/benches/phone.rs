//! The Android driver at a real phone's pace: the fake device behind a
//! real adb server runs the phone-like latency model
//! (`devicerail_host_android_fake_adb::latency`: every command's cost drawn
//! from published figures, a 1440×3120 textured screen, a touchscreen),
//! and each path is timed end to end, p50 and p95 of N samples:
//!
//! * observe (screenshot + UI tree) the old way, one after the other
//!   (`screencap`, then `uiautomator dump`), and as the driver does it
//!   (both at once) after an Action;
//! * an unchanged screen observed again (same frame, same focused window:
//!   answered from the last tree);
//! * a tap with `input tap` and as touch events on the persistent shell;
//! * each screenshot method and the dump alone.
//!
//! Figures are measured against the model, not a phone: they say what
//! the driver's structure saves, given the model's costs.
//!
//! `cargo bench -p devicerail-host-plugin-android --bench phone` (needs
//! the `adb` package; `-- samples=N scale=S` to change the defaults 15
//! and 1.0).

use std::time::{Duration, Instant};

use devicerail_host_android_fake_adb::{AdbServer, DeviceProfile, FakeAdbDevice, FakeConfig};
use devicerail_host_plugin_api::protocol::{ActionCall, CallId, DeviceId};
use devicerail_host_plugin_api::{CallContext, Driver, ObserveRequest};
use devicerail_plugin_android::config::{
    Config, InputMethod, ScreenshotMode, ScreenshotPreference,
};
use devicerail_plugin_android::{AndroidDriver, observe};

const BOTH: ObserveRequest = ObserveRequest {
    screenshot: true,
    ui_tree: true,
    live: None,
};

fn ctx() -> CallContext {
    CallContext::new(Some(Instant::now() + Duration::from_secs(120)))
}

/// p50 and p95 of `samples`, in milliseconds.
fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e3
    };
    (at(0.5), at(0.95))
}

fn time(n: usize, mut f: impl FnMut()) -> (f64, f64) {
    let samples = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    percentiles(samples)
}

fn tap(name: &str, x: u32, y: u32) -> ActionCall {
    ActionCall {
        id: CallId::new_v4(),
        name: name.into(),
        arguments: serde_json::json!({ "x": x, "y": y }),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().find_map(|a| a.strip_prefix(&format!("{k}=")));
    let n: usize = arg("samples")
        .and_then(|v| v.parse().ok())
        .unwrap_or(15)
        .max(2);
    let scale: f64 = arg("scale").and_then(|v| v.parse().ok()).unwrap_or(1.0);
    let server = AdbServer::start().expect("adb server (install the adb package)");
    let fake = FakeAdbDevice::start(FakeConfig {
        profile: DeviceProfile::phone(scale),
        ..FakeConfig::default()
    })
    .expect("fake device");
    let serial = server.attach(fake.port(), "device").expect("attached");
    let base = Config {
        server: server.address().parse().expect("address"),
        start_server: false,
        screenshot: ScreenshotPreference::Fixed(ScreenshotMode::Raw),
        ..Config::default()
    };
    let device = DeviceId::new(serial.clone());
    let driver = AndroidDriver::with_config(base.clone());
    let input_driver = AndroidDriver::with_config(Config {
        input: InputMethod::Input,
        ..base.clone()
    });
    driver.connect(&ctx(), &device).expect("connects");
    input_driver.connect(&ctx(), &device).expect("connects");
    let adb = driver.adb();
    println!("phone-like model at scale {scale}, 1440x3120, {n} samples each (p50 / p95, ms)");
    let mut rows: Vec<(String, (f64, f64))> = Vec::new();
    rows.push((
        "screenshot: screencap (raw, PNG encoded here)".into(),
        time(n, || {
            observe::screenshot_raw(adb, &ctx(), &serial, true).expect("raw");
        }),
    ));
    rows.push((
        "screenshot: screencap -p (PNG encoded on the device)".into(),
        time(n, || {
            observe::screenshot_png(adb, &ctx(), &serial, true).expect("png");
        }),
    ));
    rows.push((
        "UI tree: uiautomator dump".into(),
        time(n, || {
            observe::dump(adb, &ctx(), &serial).expect("dump");
        }),
    ));
    let sequential = time(n, || {
        observe::screenshot_raw(adb, &ctx(), &serial, true).expect("raw");
        observe::dump(adb, &ctx(), &serial).expect("dump");
    });
    rows.push((
        "observe, one after the other (screencap, then dump)".into(),
        sequential,
    ));
    // After an Action the tree is always dumped: a key that changes
    // nothing marks one.
    let key = ActionCall {
        id: CallId::new_v4(),
        name: "pressKey".into(),
        arguments: serde_json::json!({ "key": "volume_up" }),
    };
    let mut parallel = Vec::new();
    for _ in 0..n {
        let _ = driver.execute(&ctx(), &device, &key);
        let t = Instant::now();
        driver.observe(&ctx(), &device, &BOTH).expect("observes");
        parallel.push(t.elapsed());
    }
    let parallel = percentiles(parallel);
    rows.push((
        "observe after an Action (screenshot and dump at once)".into(),
        parallel,
    ));
    driver.observe(&ctx(), &device, &BOTH).expect("observes");
    let unchanged = time(n, || {
        let obs = driver.observe(&ctx(), &device, &BOTH).expect("observes");
        assert_eq!(obs.metadata["uiTreeReused"], serde_json::json!(true));
    });
    rows.push((
        "observe of an unchanged screen (last tree reused)".into(),
        unchanged,
    ));
    // Taps on an empty spot of the sign-in screen.
    let input = time(n, || {
        input_driver
            .execute(&ctx(), &device, &tap("tap", 1400, 60))
            .expect("tap");
    });
    rows.push(("tap: input tap".into(), input));
    driver
        .execute(&ctx(), &device, &tap("tap", 1400, 60))
        .expect("first tap probes the touchscreen");
    let touch = time(n, || {
        driver
            .execute(&ctx(), &device, &tap("tap", 1400, 60))
            .expect("tap");
    });
    rows.push(("tap: touch events on the persistent shell".into(), touch));
    println!();
    println!("| path | p50 ms | p95 ms |");
    println!("| --- | --- | --- |");
    for (name, (p50, p95)) in &rows {
        println!("| {name} | {p50:.0} | {p95:.0} |");
    }
    println!();
    println!(
        "observe after an Action / one after the other: {:.0} % (p50); unchanged screen: {:.0} ms; tap by touch events: {:.0} ms",
        100.0 * parallel.0 / sequential.0,
        unchanged.0,
        touch.0
    );
}
