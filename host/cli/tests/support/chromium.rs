//! A page in a real headless Chromium, driven over the DevTools protocol
//! (the browser driver's own CDP client): the report's and the console's
//! end-to-end tests open their pages here. Each `open` starts its own
//! browser (its own cookie jar).

use std::sync::Arc;
use std::time::{Duration, Instant};

use devicerail_plugin_browser::cdp::{CdpClient, CdpEvent, CdpSession};
use devicerail_plugin_browser::launch::{self, LaunchOptions, LaunchedBrowser, Spawner};
use serde_json::{Value, json};
use tokio::sync::broadcast;

pub(crate) struct Page {
    pub page: CdpSession,
    pub events: broadcast::Receiver<Arc<CdpEvent>>,
    _browser: LaunchedBrowser,
    _spawner: Spawner,
}

pub(crate) async fn open(url: &str, window: (u32, u32)) -> Page {
    let binary = devicerail_plugin_browser::binary::find(None).expect("Chromium is installed");
    let spawner = Spawner::new().expect("spawner");
    let opts = LaunchOptions {
        binary,
        headless: true,
        window,
        extra_args: vec!["--force-device-scale-factor=1".into()],
    };
    let browser = launch::launch(
        &spawner,
        &opts,
        Instant::now() + Duration::from_secs(30),
        &|| false,
    )
    .expect("launch Chromium");
    let client = CdpClient::connect(browser.ws_url(), Duration::from_secs(10))
        .await
        .expect("connect");
    let events = client.subscribe();
    let root = CdpSession::browser(client.clone()).with_timeout(Some(Duration::from_secs(30)));
    let target = root.create_target("about:blank").await.expect("target");
    let sid = root.attach_to_target(&target).await.expect("attach");
    let page = CdpSession::attached(client, sid).with_timeout(Some(Duration::from_secs(30)));
    for m in [
        "Runtime.enable",
        "Network.enable",
        "Log.enable",
        "Page.enable",
    ] {
        page.run(m, json!({})).await.expect(m);
    }
    page.run(
        "Emulation.setDeviceMetricsOverride",
        json!({ "width": window.0, "height": window.1, "deviceScaleFactor": 1, "mobile": false }),
    )
    .await
    .expect("metrics");
    page.run("Page.navigate", json!({ "url": url }))
        .await
        .expect("navigate");
    let p = Page {
        page,
        events,
        _browser: browser,
        _spawner: spawner,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while p
        .eval("document.body && document.body.dataset.ready === 'true'")
        .await
        != json!(true)
    {
        assert!(
            Instant::now() < deadline,
            "the page never set body.dataset.ready"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    p
}

impl Page {
    pub(crate) async fn eval(&self, expr: &str) -> Value {
        self.page
            .evaluate::<Value>(expr)
            .await
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
    }

    /// Waits until `expr` is true.
    pub(crate) async fn wait_for(&self, expr: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.eval(expr).await != json!(true) {
            assert!(Instant::now() < deadline, "never true: {expr}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub(crate) async fn mouse(&self, kind: &str, x: f64, y: f64) {
        let mut p = json!({ "type": kind, "x": x, "y": y, "button": "none" });
        if kind != "mouseMoved" {
            p["button"] = json!("left");
            p["clickCount"] = json!(1);
        }
        self.page
            .run("Input.dispatchMouseEvent", p)
            .await
            .expect("mouse");
    }

    /// A real click at the centre of the element `selector`.
    pub(crate) async fn click(&self, selector: &str) {
        let (x, y) = self.center(selector).await;
        self.mouse("mouseMoved", x, y).await;
        self.mouse("mousePressed", x, y).await;
        self.mouse("mouseReleased", x, y).await;
    }

    pub(crate) async fn center(&self, selector: &str) -> (f64, f64) {
        let r = self
            .eval(&format!(
                "(() => {{ const e = document.querySelector({sel}); e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()",
                sel = serde_json::to_string(selector).unwrap_or_default()
            ))
            .await;
        (r[0].as_f64().unwrap_or(0.0), r[1].as_f64().unwrap_or(0.0))
    }

    pub(crate) async fn key(&self, key: &str, code: &str, key_code: i64) {
        for kind in ["keyDown", "keyUp"] {
            let mut p = json!({ "type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code });
            if kind == "keyDown" && key.chars().count() == 1 {
                p["text"] = json!(key);
            }
            self.page
                .run("Input.dispatchKeyEvent", p)
                .await
                .expect("key");
        }
    }

    pub(crate) async fn screenshot(&self) -> Vec<u8> {
        let r: Value = self
            .page
            .send("Page.captureScreenshot", json!({ "format": "png" }))
            .await
            .expect("screenshot");
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap_or_default())
            .expect("base64")
    }

    /// Every event received so far.
    pub(crate) fn drain(&mut self) -> Vec<Arc<CdpEvent>> {
        let mut out = Vec::new();
        loop {
            match self.events.try_recv() {
                Ok(e) => out.push(e),
                Err(broadcast::error::TryRecvError::Lagged(_)) => continue,
                Err(_) => break,
            }
        }
        out
    }
}
