//! `devicerail console` end to end: the real binary beside a real shared
//! host (the mock and a real Chromium device), opened in real headless
//! Chromium over the DevTools protocol, and spoken to raw over HTTP and
//! WebSocket for what a browser would never send (a wrong `Host`, another
//! site's `Origin`, a used token).

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use devicerail_host_testing::client::hello_named;
use devicerail_host_testing::host_process::HostProcess;
use serde_json::json;
use support::client::{ClientHost, Launch as _, hello as client_hello};

const BIN: &str = env!("CARGO_BIN_EXE_devicerail");

/// A shared host (mock and Chromium) and a console beside it.
struct Lab {
    _host: HostProcess,
    console: Child,
    socket: PathBuf,
    /// `http://127.0.0.1:PORT/?token=…`, unused.
    url: String,
    /// `127.0.0.1:PORT`.
    addr: String,
    _root: tempfile::TempDir,
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = self.console.kill();
        let _ = self.console.wait();
    }
}

impl Lab {
    fn start(with_browser: bool) -> Self {
        let root = tempfile::tempdir().expect("tempdir");
        let plugins = support::plugins_dir_with_mock(root.path());
        if with_browser {
            devicerail_plugin_browser::binary::find(None).expect(
                "these tests drive a real Chromium (Debian: apt-get install -y chromium, or set CHROME_PATH)",
            );
            let browser = devicerail_host_testing::build_workspace_plugin(
                "devicerail-host-plugin-browser",
                "browser",
            );
            std::fs::copy(&browser, plugins.join("libdevicerail_plugin_browser.so"))
                .expect("copy the browser plugin");
        }
        let socket = root.path().join("run").join("host.sock");
        let data = root.path().join("data");
        let mut cmd = HostProcess::serve_command(Path::new(BIN), &plugins, &data);
        let mut listen = std::ffi::OsString::from("unix:");
        listen.push(&socket);
        cmd.arg("--listen")
            .arg(listen)
            .env("DEVICERAIL_MOCK_DEVICES", "2");
        let host = HostProcess::spawn(cmd);
        let deadline = Instant::now() + Duration::from_secs(30);
        while UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "the host never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        let mut console = Command::new(BIN)
            .arg("console")
            .arg("--socket")
            .arg(&socket)
            .arg("--data-dir")
            .arg(&data)
            .arg("--listen")
            .arg("127.0.0.1:0")
            .env_remove("DEVICERAIL_CONFIG")
            .env("XDG_DATA_HOME", root.path().join("xdg"))
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("devicerail console");
        let mut line = String::new();
        BufReader::new(console.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("the console prints its URL");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .to_owned();
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .expect("host:port")
            .to_owned();
        Self {
            _host: host,
            console,
            socket,
            url,
            addr,
            _root: root,
        }
    }
}

/// One HTTP/1.1 exchange: the status, the headers (lower-case names) and
/// the body.
fn http(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, Vec<(String, String)>, String) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut req = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("write");
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn path_of(url: &str) -> String {
    let rest = url.trim_start_matches("http://");
    rest.find('/').map_or("/".into(), |i| rest[i..].to_owned())
}

/// A WebSocket handshake on `/ws` with `headers`; the status answered.
fn ws_status(addr: &str, headers: &[(&str, &str)]) -> u16 {
    let mut all = vec![
        ("Upgrade", "websocket"),
        ("Connection", "Upgrade"),
        ("Sec-WebSocket-Version", "13"),
        ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];
    all.extend_from_slice(headers);
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .expect("timeout");
    let mut req = format!("GET /ws HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in &all {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).expect("write");
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).expect("status line");
    line.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

#[test]
fn the_console_admits_only_its_token_holder_on_loopback_from_its_own_page() {
    let lab = Lab::start(false);
    let addr = lab.addr.as_str();
    // Without the token: refused, every route.
    for path in ["/", "/assets/console.js", "/ws", "/evidence/00", "/nothing"] {
        let (status, headers, _) = http(addr, path, &[]);
        assert_eq!(status, 403, "{path} without a cookie");
        assert!(
            header(&headers, "content-security-policy").is_some(),
            "{path}: every answer carries the policy"
        );
    }
    // A page under another name (DNS rebinding) is refused, token or not.
    let (status, _, _) = http(addr, &path_of(&lab.url), &[("Host", "evil.example")]);
    assert_eq!(status, 421);
    // The token: once, for a cookie that is HttpOnly and SameSite=Strict.
    let (status, headers, _) = http(addr, &path_of(&lab.url), &[]);
    assert_eq!(status, 303);
    assert_eq!(header(&headers, "location"), Some("/"));
    let cookie = header(&headers, "set-cookie").expect("a cookie").to_owned();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    let pair = cookie.split(';').next().expect("name=value").to_owned();
    let (status, _, _) = http(addr, &path_of(&lab.url), &[]);
    assert_eq!(status, 403, "a used token is refused");
    // With the cookie: the page, its files, under a strict policy.
    let (status, headers, body) = http(addr, "/", &[("Cookie", &pair)]);
    assert_eq!(status, 200);
    assert!(body.contains("DeviceRail console"));
    let csp = header(&headers, "content-security-policy").expect("CSP");
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(header(&headers, "x-frame-options"), Some("DENY"));
    assert_eq!(header(&headers, "x-content-type-options"), Some("nosniff"));
    let (status, headers, _) = http(addr, "/assets/console.js", &[("Cookie", &pair)]);
    assert_eq!(status, 200);
    assert!(header(&headers, "content-type").is_some_and(|t| t.starts_with("text/javascript")));
    let (status, _, _) = http(addr, "/assets/..%2fCargo.toml", &[("Cookie", &pair)]);
    assert_eq!(status, 404, "nothing outside the embedded files");
    // The socket: only from the page's own origin.
    let own = format!("http://{addr}");
    assert_eq!(ws_status(addr, &[("Cookie", &pair), ("Origin", &own)]), 101);
    assert_eq!(
        ws_status(
            addr,
            &[("Cookie", &pair), ("Origin", "http://evil.example")]
        ),
        403
    );
    assert_eq!(ws_status(addr, &[("Cookie", &pair)]), 403, "no Origin");
    assert_eq!(ws_status(addr, &[("Origin", &own)]), 403, "no cookie");
    // Nothing else listens: loopback only.
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    let o = Command::new(BIN)
        .args(["console", "--listen", "0.0.0.0:0", "--socket"])
        .arg(&lab.socket)
        .output()
        .expect("run");
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("loopback only"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// An animated page for the browser device: it repaints every frame.
const ANIMATED: &str = "data:text/html,<!doctype html><title>spin</title><style>body{margin:0}%23b{width:120px;height:120px;background:%23c33;animation:s 1s linear infinite}@keyframes s{to{transform:rotate(360deg)}}</style><div id=b></div><button id=go onclick=\"this.textContent='pressed'\">Go</button>";

fn pictures() -> Option<PathBuf> {
    std::env::var_os("DEVICERAIL_CONSOLE_PICTURES").map(PathBuf::from)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_devices_live_screens_control_and_sessions_in_chromium() {
    use support::chromium;
    let lab = Lab::start(true);
    let one = chromium::open(&lab.url, (1400, 900)).await;
    // Devices with their health, without a reload.
    for device in ["mock-1", "browser-chromium"] {
        one.wait_for(&format!(
            "document.querySelector('li.device[data-device=\"{device}\"] .health')?.textContent === 'up'"
        ))
        .await;
    }
    assert_eq!(
        one.eval("document.body.dataset.mode").await,
        json!("shared")
    );
    for (device, platform) in [("mock-1", "mock"), ("browser-chromium", "web")] {
        assert_eq!(
            one.eval(&format!(
                "document.querySelector('li.device[data-device=\"{device}\"] .platform').textContent"
            ))
            .await,
            json!(platform)
        );
    }

    // Take the mock, see its screen, tap on it: an Action of the console's
    // own Session.
    one.click("li.device[data-device='mock-1'] button").await;
    one.wait_for("document.body.dataset.control === 'free'")
        .await;
    one.click("#take").await;
    one.wait_for("document.body.dataset.control === 'yours'")
        .await;
    one.wait_for("Number(document.body.dataset.frames) >= 1")
        .await;
    one.click("#screen-canvas").await;
    // The console's Session, live: follow it and see the tap.
    one.wait_for("!!document.querySelector('#sessions li[data-state=\"active\"] .session-device')?.textContent.includes('mock-1')").await;
    one.click("#sessions li[data-state='active'] button.follow")
        .await;
    one.wait_for("[...document.querySelectorAll('#events li[data-type=\"actionStarted\"]')].some(li => li.textContent.includes('tap'))").await;
    one.wait_for("!!document.querySelector('#events li[data-type=\"actionCompleted\"]')")
        .await;
    one.wait_for("!!document.querySelector('#events .effect')")
        .await;
    // Typing into the mock's username field, and a secret into its
    // password field through the masked input: recorded, redacted.
    let tap_at = async |fy: f64| {
        let (x, y) = one
            .eval(&format!("(() => {{ const r = document.getElementById('screen-canvas').getBoundingClientRect(); return [r.x + r.width * 0.5, r.y + r.height * {fy}]; }})()"))
            .await
            .as_array()
            .map(|p| (p[0].as_f64().unwrap_or(0.0), p[1].as_f64().unwrap_or(0.0)))
            .expect("a point");
        one.mouse("mouseMoved", x, y).await;
        one.mouse("mousePressed", x, y).await;
        one.mouse("mouseReleased", x, y).await;
    };
    tap_at(0.255).await;
    one.eval("document.getElementById('text-input').value = 'hello'")
        .await;
    one.click("#send-text").await;
    one.wait_for("[...document.querySelectorAll('#events li[data-type=\"actionStarted\"]')].some(li => li.textContent.includes('inputText'))").await;
    tap_at(0.365).await;
    one.eval("document.getElementById('secret-input').value = 'sesame-71'")
        .await;
    one.click("#send-secret").await;
    one.wait_for("[...document.querySelectorAll('#events li[data-type=\"actionStarted\"]')].some(li => li.textContent.includes('inputSecret'))").await;
    let shown = one
        .eval("document.getElementById('events').textContent")
        .await;
    assert!(
        !shown.to_string().contains("sesame-71"),
        "the secret is never shown"
    );

    println!(
        "console: the mock's frames, frame-to-paint p50 {} ms over {} frames",
        one.eval("document.body.dataset.latencyP50").await,
        one.eval("document.body.dataset.frames").await
    );
    // A screen that keeps changing: another client launches the mock's
    // moving screen again and again on mock-2 while the console watches.
    let mover = ClientHost::attach_owned(&lab.socket, hello_named("e2e-console-mover"))
        .await
        .expect("a client moving mock-2's screen");
    mover
        .ok("device.select", Some(json!({ "deviceId": "mock-2" })))
        .await;
    support::client::ready(&mover).await;
    one.click("li.device[data-device='mock-2'] button").await;
    one.wait_for("document.body.dataset.control === 'held'")
        .await;
    let moving = async {
        let until = Instant::now() + Duration::from_secs(5);
        let mut n = 0u32;
        while Instant::now() < until {
            n += 1;
            mover
                .ok(
                    "device.execute",
                    Some(json!({
                        "id": format!("00000000-0000-4000-8000-{n:012}"),
                        "name": "launchApp",
                        "arguments": { "appId": "moving" }
                    })),
                )
                .await;
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
    };
    let watching = async {
        one.wait_for("Number(document.body.dataset.frames) >= 2")
            .await;
        let frames = async || {
            one.eval("Number(document.body.dataset.frames)")
                .await
                .as_f64()
                .unwrap_or(0.0)
        };
        let f0 = frames().await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let f1 = frames().await;
        (f0, f1)
    };
    let ((), (f0, f1)) = tokio::join!(moving, watching);
    println!(
        "console: the mock's moving screen {:.1} frames/s painted over 3 s, frame-to-paint p50 {} ms",
        (f1 - f0) / 3.0,
        one.eval("document.body.dataset.latencyP50").await
    );
    assert!(f1 > f0, "a moving mock screen keeps sending frames");
    mover.close().await;

    // Another client drives the browser device; the console watches it and
    // follows its Session as it happens.
    let other = ClientHost::attach_owned(&lab.socket, hello_named("e2e-console-other"))
        .await
        .expect("another client");
    other
        .ok(
            "device.select",
            Some(json!({ "deviceId": "browser-chromium" })),
        )
        .await;
    let theirs = support::client::ready(&other).await;
    other
        .ok(
            "device.execute",
            Some(json!({ "id": "00000000-0000-4000-8000-000000000001", "name": "navigate", "arguments": { "url": ANIMATED } })),
        )
        .await;
    one.click("li.device[data-device='browser-chromium'] button")
        .await;
    one.wait_for("document.body.dataset.control === 'held'")
        .await;
    one.wait_for("Number(document.body.dataset.frames) >= 5")
        .await;
    let f0 = one
        .eval("Number(document.body.dataset.frames)")
        .await
        .as_f64()
        .unwrap_or(0.0);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let f1 = one
        .eval("Number(document.body.dataset.frames)")
        .await
        .as_f64()
        .unwrap_or(0.0);
    let fps = one.eval("document.body.dataset.fps").await;
    let p50 = one.eval("document.body.dataset.latencyP50").await;
    println!(
        "console: Chromium screencast {:.1} frames/s painted over 3 s (page's own figure {fps}), frame-to-paint p50 {p50} ms",
        (f1 - f0) / 3.0
    );
    assert!(f1 > f0, "an animated page keeps sending frames");
    one.wait_for(&format!(
        "!!document.querySelector('#sessions li[data-session=\"{theirs}\"]')"
    ))
    .await;
    one.click(&format!(
        "#sessions li[data-session='{theirs}'] button.follow"
    ))
    .await;
    one.wait_for("[...document.querySelectorAll('#events li[data-type=\"actionStarted\"]')].some(li => li.textContent.includes('navigate'))").await;
    // An Action taken now appears live.
    other
        .ok(
            "device.execute",
            Some(json!({ "id": "00000000-0000-4000-8000-000000000002", "name": "tapElement", "arguments": { "target": { "kind": "selector", "selector": { "css": "#go" } } } })),
        )
        .await;
    one.wait_for("[...document.querySelectorAll('#events li[data-type=\"actionStarted\"]')].some(li => li.textContent.includes('tapElement'))").await;

    // A second viewer through an invite: watches the mock the first one
    // holds, sees its frames, cannot act.
    one.click("#share").await;
    one.wait_for("document.getElementById('invite-url').value.startsWith('http://')")
        .await;
    let invite = one
        .eval("document.getElementById('invite-url').value")
        .await
        .as_str()
        .expect("invite")
        .to_owned();
    let two = chromium::open(&invite, (1400, 900)).await;
    assert_ne!(
        two.eval("document.body.dataset.viewer").await,
        one.eval("document.body.dataset.viewer").await
    );
    two.click("li.device[data-device='mock-1'] button").await;
    two.wait_for("document.body.dataset.control === 'held'")
        .await;
    two.wait_for("document.getElementById('take').disabled === true")
        .await;
    two.wait_for("Number(document.body.dataset.frames) >= 1")
        .await;
    let refused = two
        .eval(
            "new Promise(done => { const ws = new WebSocket(`ws://${location.host}/ws`); \
             ws.onmessage = m => { const v = JSON.parse(m.data); if (v.type === 'hello') ws.send(JSON.stringify({type:'tap', id: 7, x: 5, y: 5})); \
             if (v.type === 'result' && v.id === 7) { ws.close(); done(v.error && v.error.code); } }; })",
        )
        .await;
    assert_eq!(refused, json!("not_in_control"));
    if let Some(dir) = pictures() {
        std::fs::create_dir_all(&dir).expect("pictures dir");
        std::fs::write(dir.join("console-control.png"), one.screenshot().await).expect("write");
        std::fs::write(dir.join("console-viewer.png"), two.screenshot().await).expect("write");
    }

    // The other client ends its Session: its report opens from the list.
    other.ok("session.end", None).await;
    one.wait_for(&format!(
        "document.querySelector('#sessions li[data-session=\"{theirs}\"]')?.dataset.state === 'ended'"
    ))
    .await;
    let report = one
        .eval(&format!(
            "fetch(document.querySelector('#sessions li[data-session=\"{theirs}\"] a.report').href).then(r => r.text().then(t => [r.status, t.includes('DeviceRail session'), r.headers.get('content-security-policy')]))"
        ))
        .await;
    assert_eq!(report[0], json!(200), "{report}");
    assert_eq!(report[1], json!(true), "{report}");
    assert!(
        report[2].as_str().is_some_and(|c| c.contains("sha256-")),
        "{report}"
    );
    other.close().await;

    // Release: the device is free again and the console's Session ended.
    one.click("li.device[data-device='mock-1'] button").await;
    one.wait_for("document.body.dataset.control === 'yours'")
        .await;
    one.click("#release").await;
    one.wait_for("document.body.dataset.control === 'free'")
        .await;
    two.wait_for("document.body.dataset.control === 'free'")
        .await;
    // Its export, as a script.
    let ended_mock = "[...document.querySelectorAll('#sessions li[data-state=\"ended\"]')].find(li => li.querySelector('.session-device').textContent.includes('mock-1'))";
    one.wait_for(&format!("!!{ended_mock}")).await;
    let ours = one.eval(&format!("{ended_mock}.dataset.session")).await;
    let ours = ours.as_str().expect("the console's Session").to_owned();
    one.click(&format!(
        "#sessions li[data-session='{ours}'] button.export"
    ))
    .await;
    one.wait_for("document.getElementById('export-text').textContent.includes('tap')")
        .await;
    // And replayed on its device: a new Session with a verdict per step
    // (its secret step stops it: the console never holds secrets).
    one.click(&format!(
        "#sessions li[data-session='{ours}'] button.replay"
    ))
    .await;
    let result = format!("#sessions li[data-session='{ours}'] .replay-result");
    one.wait_for(&format!(
        "!document.querySelector(\"{result}\").textContent.includes('running')"
    ))
    .await;
    let shown = one
        .eval(&format!("document.querySelector(\"{result}\").textContent"))
        .await;
    // The recorded Session typed a secret: the replay says which step
    // needs one and where to give it, and never guesses.
    assert!(
        shown
            .as_str()
            .is_some_and(|t| t.contains("inputSecret") && t.contains("DEVICERAIL_SECRET_")),
        "{shown}"
    );
}

/// A plugin whose worker crashed and cannot start again: the lab (what the
/// console's device list shows) says so with the reason, the other
/// plugin's devices stay up, and it is up again once it can start.
#[test]
fn the_lab_shows_a_crashed_workers_health_until_it_is_back() {
    use support::{ALL_FEATURES, Options, TestHost};
    const LAB: &str = "devicerailHost.lab.v1";
    let root = support::root_with_hostile();
    let down = root.path().join("hostile-down");
    let mut h = TestHost::with(Options {
        root: Some(root.path().to_path_buf()),
        config: Some(format!(
            "[plugins.test-hostile]\ninit_fails_while = \"{}\"\n",
            down.display()
        )),
        ..Options::default()
    });
    let mut offer = ALL_FEATURES.to_vec();
    offer.push(LAB);
    h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &offer,
    );
    let health = |h: &mut TestHost, device: &str| -> (String, Option<String>) {
        let status = h.ok("devicerailHost.lab.status", None);
        let d = status["devices"]
            .as_array()
            .and_then(|all| all.iter().find(|d| d["device"]["id"] == device))
            .unwrap_or_else(|| panic!("{device} listed: {status}"))
            .clone();
        (
            d["health"].as_str().unwrap_or_default().to_owned(),
            d["reason"].as_str().map(str::to_owned),
        )
    };
    assert_eq!(health(&mut h, "hostile-1").0, "up");
    h.ok("device.select", Some(json!({ "deviceId": "hostile-1" })));
    h.ok("device.connect", None);
    h.ok("session.start", None);
    std::fs::write(&down, b"").expect("keep it down");
    let r = h.call("device.execute", Some(TestHost::action("abort", json!({}))));
    assert!(r.get("error").is_some(), "{r}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let (state, reason) = loop {
        let (state, reason) = health(&mut h, "hostile-1");
        if state != "up" {
            break (state, reason);
        }
        assert!(
            Instant::now() < deadline,
            "the lab never saw the crash: {}",
            h.ok("devicerailHost.lab.status", None)
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        state == "crashed" || state == "restarting",
        "{state} {reason:?}"
    );
    assert!(
        reason.as_deref().is_some_and(|r| !r.is_empty()),
        "a reason is shown: {reason:?}"
    );
    assert_eq!(health(&mut h, "mock-1").0, "up", "the mock is untouched");
    std::fs::remove_file(&down).expect("let it start");
    let deadline = Instant::now() + Duration::from_secs(30);
    while health(&mut h, "hostile-1").0 != "up" {
        assert!(Instant::now() < deadline, "the worker never came back");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A real OpenSSH server on loopback, for the test only: its own host key,
/// one authorized key, no PAM, nothing read from the machine's own files.
struct Sshd {
    child: Child,
    port: u16,
    key: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Sshd {
    /// `None` (said once) where OpenSSH is not installed, unless
    /// `DEVICERAIL_REQUIRE_SSH=1` (set by `.ci/run`, which installs it).
    fn start() -> Option<Self> {
        let sshd = Path::new("/usr/sbin/sshd");
        let have = sshd.exists() && Command::new("ssh").arg("-V").output().is_ok();
        if !have {
            assert!(
                std::env::var_os("DEVICERAIL_REQUIRE_SSH").is_none(),
                "OpenSSH is required here (Debian: apt-get install -y openssh-server openssh-client)"
            );
            println!(
                "ssh: SKIPPED (no /usr/sbin/sshd or ssh; Debian: openssh-server openssh-client)"
            );
            return None;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let keygen = |path: &Path| {
            let o = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path)
                .output()
                .expect("ssh-keygen");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        };
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).expect("keys");
        // The privilege-separation directory sshd insists on.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        let config = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {hk}\nAuthorizedKeysFile {ak}\nPidFile {pid}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\nPermitRootLogin prohibit-password\nAllowTcpForwarding yes\nPermitUserEnvironment no\nLogLevel ERROR\n",
            hk = d.join("host_key").display(),
            ak = d.join("authorized_keys").display(),
            pid = d.join("sshd.pid").display(),
        );
        std::fs::write(d.join("sshd_config"), config).expect("config");
        let child = Command::new(sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(d.join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("sshd");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(Self {
            child,
            port,
            key: d.join("client_key"),
            _dir: dir,
        })
    }

    /// The `-o` options of a client of this server.
    fn options(&self) -> Vec<String> {
        vec![
            format!("Port={}", self.port),
            format!("IdentityFile={}", self.key.display()),
            "IdentitiesOnly=yes".into(),
            "StrictHostKeyChecking=no".into(),
            "UserKnownHostsFile=/dev/null".into(),
        ]
    }
}

fn user() -> String {
    let o = Command::new("id").arg("-un").output().expect("id");
    String::from_utf8_lossy(&o.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_laptop_reaches_a_lab_host_and_its_console_through_ssh() {
    let Some(sshd) = Sshd::start() else {
        return;
    };
    let lab = Lab::start(false);
    // A test runner on "the laptop": the official client spawning
    // `devicerail attach --ssh`, which runs `devicerail attach` on the lab.
    let destination = format!("{}@127.0.0.1", user());
    let mut args: Vec<String> = vec!["attach".into(), "--ssh".into(), destination.clone()];
    for o in sshd.options() {
        args.push("--ssh-option".into());
        args.push(o);
    }
    args.extend([
        "--remote-devicerail".into(),
        BIN.into(),
        "--socket".into(),
        lab.socket.display().to_string(),
    ]);
    let config = devicerail_client::SpawnConfig::new(BIN, client_hello()).args(args);
    let c = ClientHost::start_config(config)
        .await
        .expect("hello through SSH");
    c.ok("device.select", Some(json!({ "deviceId": "mock-1" })))
        .await;
    let session = support::client::ready(&c).await;
    let observed = c.ok("device.observe", None).await;
    assert!(observed["screenshot"].is_object(), "{observed}");
    assert!(!session.is_empty());
    c.ok("session.end", None).await;
    c.close().await;

    // The console through a forwarded port (`ssh -L`): the same token
    // link, opened on the laptop's own port.
    let local = free_port();
    let mut tunnel = Command::new("ssh");
    tunnel.args([
        "-N",
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        "ExitOnForwardFailure=yes",
    ]);
    for o in sshd.options() {
        tunnel.arg("-o").arg(o);
    }
    let mut tunnel = tunnel
        .arg("-L")
        .arg(format!("{local}:{}", lab.addr))
        .arg(&destination)
        .stdout(Stdio::null())
        .spawn()
        .expect("ssh -L");
    let forwarded = format!("127.0.0.1:{local}");
    let deadline = Instant::now() + Duration::from_secs(10);
    let (status, headers, _) = loop {
        if TcpStream::connect(&forwarded).is_ok() {
            let r = http(
                &forwarded,
                &path_of(&lab.url),
                &[("Host", &format!("localhost:{local}"))],
            );
            if r.0 != 0 {
                break r;
            }
        }
        assert!(Instant::now() < deadline, "the tunnel never opened");
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = tunnel.kill();
    let _ = tunnel.wait();
    assert_eq!(status, 303, "the token works through the tunnel");
    assert!(header(&headers, "set-cookie").is_some());
}

/// The host's lab extension, spoken raw over a real pipe: answered only
/// to a connection that negotiated it; reads devices, holders, frames and
/// any Session's events without taking or recording anything.
#[test]
fn the_lab_extension_reads_without_taking_and_only_when_negotiated() {
    use base64::Engine as _;
    use support::{ALL_FEATURES, TestHost, error_code};
    const LAB: &str = "devicerailHost.lab.v1";
    let mut plain = TestHost::start();
    plain.hello();
    let r = plain.call("devicerailHost.lab.status", None);
    assert_eq!(error_code(&r).as_deref(), Some("method_not_found"), "{r}");

    let mut h = TestHost::start();
    let mut offer = ALL_FEATURES.to_vec();
    offer.push(LAB);
    let hello = h.hello_with(
        json!([{ "major": 1, "minMinor": 0, "maxMinor": 5 }]),
        &[],
        &offer,
    );
    assert!(
        hello["features"]["enabled"]
            .as_array()
            .is_some_and(|f| f.iter().any(|f| f == LAB)),
        "{hello}"
    );
    let status = h.ok("devicerailHost.lab.status", None);
    let mock = &status["devices"][0];
    assert_eq!(mock["device"]["id"], "mock-1");
    assert_eq!(mock["plugin"], "mock");
    assert_eq!(mock["health"], "up");
    assert!(mock.get("lease").is_none(), "{status}");
    // Nobody uses it: no screen to show.
    let r = h.call(
        "devicerailHost.lab.frame",
        Some(json!({ "deviceId": "mock-1" })),
    );
    assert_eq!(
        error_code(&r).as_deref(),
        Some("device_not_connected"),
        "{r}"
    );
    let r = h.call(
        "devicerailHost.lab.frame",
        Some(json!({ "deviceId": "nope" })),
    );
    assert_eq!(error_code(&r).as_deref(), Some("device_not_found"), "{r}");

    h.ok("device.connect", None);
    let session = h.ok("session.start", None)["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let status = h.ok("devicerailHost.lab.status", None);
    assert_eq!(
        status["devices"][0]["lease"]["client"]["name"], "e2e-tests",
        "{status}"
    );
    let f = h.ok(
        "devicerailHost.lab.frame",
        Some(json!({ "deviceId": "mock-1", "afterSeq": 0 })),
    );
    let seq = f["seq"].as_u64().expect("seq");
    assert!(seq >= 1, "{f}");
    assert_eq!(f["frame"]["mediaType"], "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(f["frame"]["data"].as_str().expect("data"))
        .expect("base64");
    assert!(png.starts_with(b"\x89PNG"), "a PNG frame");
    // The same screen: its number again, no bytes.
    let again = h.ok(
        "devicerailHost.lab.frame",
        Some(json!({ "deviceId": "mock-1", "afterSeq": seq, "waitMs": 200 })),
    );
    assert_eq!(again["seq"], json!(seq), "{again}");
    assert!(again.get("frame").is_none(), "{again}");
    // Frames are never recorded: the Session has only its start.
    let events = h.ok(
        "devicerailHost.lab.events",
        Some(json!({ "sessionId": session, "afterSequence": 0 })),
    );
    let listed = events["events"].as_array().expect("events");
    assert_eq!(listed.len(), 1, "{events}");
    assert_eq!(listed[0]["payload"]["type"], "sessionStarted");
    assert_eq!(events["ended"], false);
    h.ok("session.end", None);
    let tail = h.ok(
        "devicerailHost.lab.events",
        Some(json!({ "sessionId": session, "afterSequence": 1 })),
    );
    assert_eq!(
        tail["events"][0]["payload"]["type"], "sessionEnded",
        "{tail}"
    );
    assert_eq!(tail["ended"], true, "{tail}");
}
