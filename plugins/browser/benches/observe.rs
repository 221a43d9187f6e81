//! Observe cost on a 1,000-row page, and the plugin's overhead over the
//! raw DevTools calls it makes.
//!
//! * `raw_cdp_calls`: `Page.captureScreenshot`, `Accessibility.getFullAXTree`
//!   and `DOMSnapshot.captureSnapshot`, issued concurrently with the
//!   plugin's own CDP client to a browser launched with the plugin's flags,
//!   showing the same page (answers parsed as JSON, nothing else).
//! * `plugin_in_process`: `Driver::observe` (screenshot + UI tree) of the
//!   driver called directly: typed decoding, base64, tree building.
//! * `plugin_loaded_cdylib`: the same through the real loaded library and
//!   the host-side loader (FFI, JSON round trip, validation).
//! * `plugin_cpu_only`: the plugin's own work on answers captured once
//!   (typed decoding of the AX tree and DOM snapshot from their text, base64
//!   of the PNG, building the UI tree), without browser noise. The raw side
//!   pays for parsing the same text into `serde_json::Value`
//!   (`raw_cpu_only`).
//!
//! Run: `cargo bench -p devicerail-host-plugin-browser` (needs Chromium; set
//! CHROME_PATH if it is not on PATH).

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_main};
use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{CallContext, Driver, ObserveRequest};
use devicerail_plugin_browser::BrowserDriver;
use devicerail_plugin_browser::cdp::{CdpClient, CdpSession};
use devicerail_plugin_browser::config::{BrowserSpec, DriverConfig, Source, TreeSource};
use devicerail_plugin_browser::launch::{self, LaunchOptions, Spawner};
use serde_json::{Value, json};

const ROWS: usize = 1_000;
const WIDTH: u32 = 1280;
const HEIGHT: u32 = 800;

fn page() -> String {
    let mut body = String::from(
        "<!doctype html><html><head><title>Rows</title></head><body><h1>1,000 rows</h1><table>",
    );
    for i in 0..ROWS {
        body.push_str(&format!(
            "<tr><td>Row {i}</td><td><button data-testid=\"open-{i}\">Open {i}</button></td></tr>"
        ));
    }
    body.push_str("</table></body></html>");
    body
}

/// Serves the page on 127.0.0.1 for the life of the process.
fn serve(body: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes());
        }
    });
    port
}

use devicerail_host_testing::call;

fn bench(c: &mut Criterion) {
    let binary = devicerail_plugin_browser::binary::find(None)
        .unwrap_or_else(|e| panic!("the bench drives a real Chromium: {e}"));
    let url = format!("http://127.0.0.1:{}/", serve(page()));
    let spawner = Spawner::new().expect("spawner");
    let browser = launch::launch(
        &spawner,
        &LaunchOptions {
            binary,
            headless: true,
            window: (WIDTH, HEIGHT),
            extra_args: vec![],
        },
        Instant::now() + Duration::from_secs(60),
        &|| false,
    )
    .expect("launch");
    let ws = browser.ws_url().to_owned();

    // The raw side: our CDP client on a tab of its own.
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let raw = rt.block_on(async {
        let t = Some(Duration::from_secs(30));
        let client = CdpClient::connect(&ws, Duration::from_secs(10))
            .await
            .expect("connect");
        let b = CdpSession::browser(client.clone()).with_timeout(t);
        let target = b
            .get_targets()
            .await
            .expect("targets")
            .into_iter()
            .find(|t| t.kind == "page")
            .expect("the initial tab")
            .target_id;
        let session = b.attach_to_target(&target).await.expect("attach");
        let p = CdpSession::attached(client, session).with_timeout(t);
        p.page_enable().await.expect("enable");
        p.bring_to_front().await.expect("front");
        p.accessibility_enable().await.expect("ax");
        p.set_focus_emulation(true).await.expect("focus");
        p.set_device_metrics(WIDTH, HEIGHT, 1.0)
            .await
            .expect("metrics");
        p.navigate(&url).await.expect("navigate");
        tokio::time::sleep(Duration::from_millis(500)).await;
        p
    });

    // The plugin side: browsers of its own, launched the same way.
    let spec = BrowserSpec {
        id: "browser-bench".into(),
        name: "bench".into(),
        source: Source::Launch {
            binary: None,
            headless: true,
            args: vec![],
        },
        width: WIDTH,
        height: HEIGHT,
        scale: 1.0,
        launch_timeout: Duration::from_secs(60),
        tree_source: TreeSource::Auto,
    };
    let settings = json!({ "id": "browser-bench" });
    let driver = BrowserDriver::with_config(DriverConfig {
        browsers: vec![spec],
    })
    .expect("driver");
    let device = DeviceId::new("browser-bench");
    let ctx = CallContext::unbounded();
    driver.connect(&ctx, &device).expect("plugin connect");
    driver
        .execute(&ctx, &device, &call("navigate", json!({ "url": url })))
        .expect("plugin navigate");

    let path = devicerail_host_testing::build_workspace_plugin(
        "devicerail-host-plugin-browser",
        "browser",
    );
    let settings = match settings {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let loaded = devicerail_host_plugin_api::loader::load(&path, &settings).expect("load");
    loaded.connect(&ctx, &device).expect("loaded connect");
    loaded
        .execute(&ctx, &device, &call("navigate", json!({ "url": url })))
        .expect("loaded navigate");

    let full = ObserveRequest {
        screenshot: true,
        ui_tree: true,
        live: None,
    };
    let obs = driver.observe(&ctx, &device, &full).expect("observe");
    let tree = obs.ui_tree.as_ref().expect("tree");
    eprintln!(
        "1,000-row page: {} UI nodes, {} bytes of nodes JSON, PNG {} bytes, truncated: {}",
        tree.nodes.len(),
        serde_json::to_vec(&tree.nodes)
            .map(|v| v.len())
            .unwrap_or(0),
        obs.png.as_ref().map_or(0, Vec::len),
        obs.metadata.contains_key("uiTreeTruncated")
    );

    let mut g = c.benchmark_group("observe_1000_rows");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(3))
        .measurement_time(Duration::from_secs(15));
    g.bench_function("raw_cdp_calls", |b| {
        b.iter(|| {
            rt.block_on(async {
                let r = tokio::try_join!(
                    raw.capture_screenshot_base64(),
                    raw.client().call_raw(
                        raw.session_id(),
                        "Accessibility.getFullAXTree",
                        json!({}),
                        raw.timeout()
                    ),
                    raw.client().call_raw(
                        raw.session_id(),
                        "DOMSnapshot.captureSnapshot",
                        json!({ "computedStyles": [], "includeDOMRects": false, "includePaintOrder": false }),
                        raw.timeout()
                    ),
                );
                r.expect("raw calls")
            })
        })
    });
    g.bench_function("plugin_in_process", |b| {
        b.iter(|| driver.observe(&ctx, &device, &full).expect("observe"))
    });
    g.bench_function("plugin_loaded_cdylib", |b| {
        b.iter(|| loaded.observe(&ctx, &device, &full).expect("observe"))
    });
    let (shot, ax, dom) = rt.block_on(async {
        tokio::try_join!(
            raw.capture_screenshot_base64(),
            raw.client().call_raw(raw.session_id(), "Accessibility.getFullAXTree", json!({}), raw.timeout()),
            raw.client().call_raw(
                raw.session_id(),
                "DOMSnapshot.captureSnapshot",
                json!({ "computedStyles": [], "includeDOMRects": false, "includePaintOrder": false }),
                raw.timeout()
            ),
        )
        .expect("raw calls")
    });
    // As text, the way the answers arrive.
    let ax_nodes = serde_json::value::to_raw_value(&ax["nodes"]).expect("ax text");
    let dom = dom.to_string();
    let ax_text = ax.to_string();
    g.bench_function("raw_cpu_only", |b| {
        b.iter(|| {
            let a: Value = serde_json::from_str(&ax_text).expect("ax");
            let d: Value = serde_json::from_str(&dom).expect("dom");
            (a.is_object(), d.is_object())
        })
    });
    g.bench_function("plugin_cpu_only", |b| {
        b.iter(|| {
            use base64::Engine as _;
            let png = base64::engine::general_purpose::STANDARD
                .decode(shot.as_bytes())
                .expect("base64");
            let nodes: Vec<devicerail_plugin_browser::cdp::accessibility::AxNode> =
                serde_json::from_str(ax_nodes.get()).expect("ax");
            let snapshot: devicerail_plugin_browser::cdp::dom::DomSnapshot =
                serde_json::from_str(&dom).expect("dom");
            let tree = devicerail_plugin_browser::ui_tree::build(
                &nodes,
                &snapshot,
                devicerail_plugin_browser::ui_tree::Viewport {
                    css_width: WIDTH,
                    css_height: HEIGHT,
                    scale: 1.0,
                },
            );
            (png.len(), tree.nodes.len())
        })
    });
    g.finish();

    let _ = driver.disconnect(&ctx, &device);
    let _ = loaded.disconnect(&ctx, &device);
    drop(browser);
}

// criterion_group! generates a `pub fn benches` that cannot carry a doc
// comment, and rustc ignores `#[allow]` on a macro call, so the generated
// function lives in a module of its own with the lint allowed there only.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::bench);
}
criterion_main!(group::benches);
