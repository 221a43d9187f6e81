//! Observe latency of the Android driver against a FakeAdbDevice behind a
//! real adb server, split into screenshot (raw framebuffer + host PNG
//! encoding vs `screencap -p`), UI dump and parsing.
//!
//! `cargo bench -p devicerail-host-plugin-android --bench observe`
//! (needs the `adb` package).

use std::time::Duration;

use criterion::{Criterion, criterion_main};
use devicerail_host_android_fake_adb::{AdbServer, DeviceProfile, FakeAdbDevice, FakeConfig};
use devicerail_host_plugin_api::protocol::{ActionCall, CallId, DeviceId};
use devicerail_host_plugin_api::{CallContext, Driver, ObserveRequest};
use devicerail_plugin_android::config::{Config, ScreenshotMode, ScreenshotPreference};
use devicerail_plugin_android::{AndroidDriver, observe, screen, uitree};

/// A dump the size of a busy app screen: a list of 60 rows of 6 views.
fn busy_dump() -> String {
    let row = |i: usize| {
        let y = 200 + i * 40;
        format!(
            r#"<node index="{i}" text="" resource-id="com.example:id/row" class="android.widget.LinearLayout" package="com.example" content-desc="" checkable="false" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,{y}][1080,{y2}]"><node index="0" text="" resource-id="com.example:id/avatar" class="android.widget.ImageView" package="com.example" content-desc="Avatar of user {i}" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,{y}][40,{y2}]" /><node index="1" text="User number {i}" resource-id="com.example:id/name" class="android.widget.TextView" package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[40,{y}][600,{y2}]" /><node index="2" text="Last message preview for row {i} &amp; more" resource-id="com.example:id/preview" class="android.widget.TextView" package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[40,{y}][900,{y2}]" /><node index="3" text="12:0{d}" resource-id="com.example:id/time" class="android.widget.TextView" package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[900,{y}][1000,{y2}]" /><node index="4" text="" resource-id="com.example:id/star" class="android.widget.CheckBox" package="com.example" content-desc="Star" checkable="true" checked="false" clickable="true" enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[1000,{y}][1080,{y2}]" /></node>"#,
            y2 = y + 40,
            d = i % 10
        )
    };
    let rows: String = (0..60).map(row).collect();
    format!(
        r#"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,0][1080,2400]"><node index="0" text="" resource-id="com.example:id/list" class="androidx.recyclerview.widget.RecyclerView" package="com.example" content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="true" focused="false" scrollable="true" long-clickable="false" password="false" selected="false" visible-to-user="true" bounds="[0,200][1080,2400]">{rows}</node></node></hierarchy>"#
    )
}

fn bench(c: &mut Criterion) {
    let server = AdbServer::start().expect("adb server (install the adb package)");
    let fake = FakeAdbDevice::start(FakeConfig {
        profile: DeviceProfile {
            width: 1080,
            height: 2400,
            density: 420,
            textured: true,
            ..DeviceProfile::default()
        },
        ..FakeConfig::default()
    })
    .expect("fake device");
    let serial = server.attach(fake.port(), "device").expect("attached");
    let config = Config {
        server: server.address().parse().expect("address"),
        start_server: false,
        screenshot: ScreenshotPreference::Fixed(ScreenshotMode::Raw),
        ..Config::default()
    };
    let driver = AndroidDriver::with_config(config.clone());
    let png_driver = AndroidDriver::with_config(Config {
        screenshot: ScreenshotPreference::Fixed(ScreenshotMode::Png),
        ..config.clone()
    });
    let auto_driver = AndroidDriver::with_config(Config {
        screenshot: ScreenshotPreference::Auto,
        ..config
    });
    let device = DeviceId::new(serial.clone());
    let ctx = CallContext::unbounded();
    driver.connect(&ctx, &device).expect("connect");
    png_driver.connect(&ctx, &device).expect("connect");
    auto_driver.connect(&ctx, &device).expect("connect");
    let adb = driver.adb();

    let raw = adb.shell(&ctx, &serial, "screencap").expect("raw").stdout;
    let frame = screen::decode_raw(&raw).expect("decodes");
    let png = screen::encode_png(&frame).expect("encodes");
    let device_png = observe::screenshot_png(adb, &ctx, &serial, true).expect("png");
    eprintln!(
        "frame {}x{}: raw {} bytes, host PNG {} bytes, screencap -p PNG {} bytes",
        frame.width,
        frame.height,
        raw.len(),
        png.len(),
        device_png.png.len()
    );

    let mut g = c.benchmark_group("screenshot");
    g.sample_size(20).measurement_time(Duration::from_secs(6));
    g.bench_function("raw: screencap transfer", |b| {
        b.iter(|| adb.shell(&ctx, &serial, "screencap").expect("raw"))
    });
    g.bench_function("raw: decode", |b| {
        b.iter(|| screen::decode_raw(&raw).expect("decodes"))
    });
    g.bench_function("raw: PNG encode on the host", |b| {
        b.iter(|| screen::encode_png(&frame).expect("encodes"))
    });
    g.bench_function("raw: total", |b| {
        b.iter(|| observe::screenshot_raw(adb, &ctx, &serial, true).expect("shot"))
    });
    g.bench_function("png: screencap -p transfer (fake encodes once)", |b| {
        b.iter(|| observe::screenshot_png(adb, &ctx, &serial, true).expect("shot"))
    });
    g.bench_function("png: what the fake device spends encoding", |b| {
        b.iter(|| {
            fake.with_device(|d| {
                d.state.touch();
                d.screencap_png().len()
            })
        })
    });
    g.finish();

    let dump = observe::dump(adb, &ctx, &serial).expect("dump");
    let busy = busy_dump();
    eprintln!(
        "dump: fake app {} bytes / {} nodes; busy screen {} bytes / {} nodes",
        dump.xml.len(),
        uitree::parse(&dump.xml).expect("parses").nodes.len(),
        busy.len(),
        uitree::parse(&busy).expect("parses").nodes.len()
    );
    let mut g = c.benchmark_group("ui");
    g.sample_size(30).measurement_time(Duration::from_secs(4));
    g.bench_function("dump round trip (focus + uiautomator + cat)", |b| {
        b.iter(|| observe::dump(adb, &ctx, &serial).expect("dump"))
    });
    g.bench_function("parse: fake app", |b| {
        b.iter(|| uitree::parse(&dump.xml).expect("parses"))
    });
    g.bench_function("parse: busy screen (362 nodes)", |b| {
        b.iter(|| uitree::parse(&busy).expect("parses"))
    });
    g.finish();

    let mut g = c.benchmark_group("observe");
    g.sample_size(20).measurement_time(Duration::from_secs(6));
    for (name, d, req) in [
        (
            "screenshot+tree (raw)",
            &driver,
            ObserveRequest {
                screenshot: true,
                ui_tree: true,
                live: None,
            },
        ),
        (
            "screenshot+tree (png)",
            &png_driver,
            ObserveRequest {
                screenshot: true,
                ui_tree: true,
                live: None,
            },
        ),
        (
            "screenshot+tree (auto)",
            &auto_driver,
            ObserveRequest {
                screenshot: true,
                ui_tree: true,
                live: None,
            },
        ),
        (
            "screenshot only (raw)",
            &driver,
            ObserveRequest {
                screenshot: true,
                ui_tree: false,
                live: None,
            },
        ),
        (
            "screenshot only (png)",
            &png_driver,
            ObserveRequest {
                screenshot: true,
                ui_tree: false,
                live: None,
            },
        ),
        (
            "tree only",
            &driver,
            ObserveRequest {
                screenshot: false,
                ui_tree: true,
                live: None,
            },
        ),
        ("viewport only", &driver, ObserveRequest::default()),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| d.observe(&ctx, &device, &req).expect("observes"))
        });
    }
    let tap = ActionCall::new(
        CallId::new_v4(),
        "tap",
        serde_json::json!({ "x": 5, "y": 5 }),
    );
    g.bench_function("tap round trip", |b| {
        b.iter(|| driver.execute(&ctx, &device, &tap).expect("taps"))
    });
    g.finish();
    drop(fake);
    drop(server);
}

// criterion_group! generates a `pub fn benches` that cannot carry a doc
// comment, and rustc ignores `#[allow]` on a macro call, so the generated
// function lives in a module of its own with the lint allowed there only.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
criterion_main!(group::benches);
