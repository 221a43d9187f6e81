//! Shared test helpers: a tiny HTTP server on 127.0.0.1 serving the test
//! pages, and loading the real plugin cdylib with settings.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use devicerail_host_plugin_api::loader::{self, LoadedPlugin};
use devicerail_host_plugin_api::protocol::DeviceId;
use devicerail_host_plugin_api::{ActionOutput, CallContext, Driver, DriverResult};
use devicerail_host_testing::{build_workspace_plugin, call};
use serde_json::{Map, Value, json};

pub(crate) const DEVICE: &str = "browser-chromium";

/// Tests in one binary share two cores: one browser at a time.
static SERIAL: Mutex<()> = Mutex::new(());

pub(crate) fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Fails the test with a clear message when no browser is installed.
pub(crate) fn require_browser() {
    if let Err(e) = devicerail_plugin_browser::binary::find(None) {
        panic!(
            "these tests drive a real Chromium: {e}. Install one (Debian: apt-get install -y chromium) or set CHROME_PATH."
        );
    }
}

/// How long a `/slow/...` path takes to answer.
pub(crate) const SLOW: Duration = Duration::from_millis(800);

/// Serves fixed pages on 127.0.0.1 until dropped; a path under `/slow/`
/// answers after [`SLOW`].
pub(crate) struct TestServer {
    port: u16,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    pub(crate) fn start(pages: &[(&str, &str)]) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("addr").port();
        let pages: Arc<HashMap<String, String>> = Arc::new(
            pages
                .iter()
                .map(|(p, b)| ((*p).to_owned(), (*b).to_owned()))
                .collect(),
        );
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stop2.load(Ordering::Acquire) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let pages = pages.clone();
                std::thread::spawn(move || serve(stream, &pages));
            }
        });
        Self { port, stop }
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(mut stream: TcpStream, pages: &HashMap<String, String>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 64 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let path = head
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("/")
        .split(['?', '#'])
        .next()
        .unwrap_or("/")
        .to_owned();
    // `/slow/...` answers after a while: a request still in flight.
    if path.starts_with("/slow/") {
        std::thread::sleep(SLOW);
    }
    let (status, body) = match pages.get(&path) {
        Some(b) => ("200 OK", b.as_str()),
        None => (
            "404 Not Found",
            "<!doctype html><title>404</title><p>not found</p>",
        ),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes());
}

/// Builds and loads the real plugin library with `settings`.
pub(crate) fn load(settings: Value) -> LoadedPlugin {
    require_browser();
    // Build once per test binary: cargo's up-to-date check is not free.
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let path =
        PATH.get_or_init(|| build_workspace_plugin("devicerail-host-plugin-browser", "browser"));
    let settings: Map<String, Value> = match settings {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    loader::load(path, &settings).unwrap_or_else(|e| panic!("{} did not load: {e}", path.display()))
}

/// A loaded plugin with its device connected; disconnects on drop.
pub(crate) struct Browser {
    pub(crate) plugin: LoadedPlugin,
    pub(crate) device: DeviceId,
}

impl Browser {
    pub(crate) fn connect(settings: Value) -> Self {
        let id = settings
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or(DEVICE)
            .to_owned();
        let plugin = load(settings);
        let device = DeviceId::new(&id);
        plugin
            .connect(&ctx(30), &device)
            .unwrap_or_else(|e| panic!("connect failed: {e}"));
        Self { plugin, device }
    }

    pub(crate) fn run(&self, name: &str, arguments: Value) -> DriverResult<ActionOutput> {
        self.run_with(&ctx(30), name, arguments)
    }

    pub(crate) fn run_with(
        &self,
        ctx: &CallContext,
        name: &str,
        arguments: Value,
    ) -> DriverResult<ActionOutput> {
        self.plugin
            .execute(ctx, &self.device, &call(name, arguments))
    }

    pub(crate) fn ok(&self, name: &str, arguments: Value) -> ActionOutput {
        self.run(name, arguments.clone())
            .unwrap_or_else(|e| panic!("{name} {arguments} failed: {e}"))
    }

    pub(crate) fn goto(&self, url: &str) -> ActionOutput {
        self.ok("navigate", json!({ "url": url }))
    }

    pub(crate) fn observe(
        &self,
        screenshot: bool,
        ui_tree: bool,
    ) -> devicerail_host_plugin_api::DriverObservation {
        self.plugin
            .observe(
                &ctx(30),
                &self.device,
                &devicerail_host_plugin_api::ObserveRequest {
                    screenshot,
                    ui_tree,
                    live: None,
                },
            )
            .unwrap_or_else(|e| panic!("observe failed: {e}"))
    }

    pub(crate) fn tree(&self) -> devicerail_host_plugin_api::UiTree {
        self.observe(false, true).ui_tree.expect("a UI tree")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self
            .plugin
            .disconnect(&CallContext::unbounded(), &self.device);
    }
}

/// A context with a deadline `secs` from now.
pub(crate) fn ctx(secs: u64) -> CallContext {
    CallContext::new(Some(Instant::now() + Duration::from_secs(secs)))
}

/// The node matching `pred` in a tree, or a panic listing the tree.
pub(crate) fn node(
    tree: &devicerail_host_plugin_api::UiTree,
    pred: impl Fn(&devicerail_host_plugin_api::protocol::UiNode) -> bool,
) -> &devicerail_host_plugin_api::protocol::UiNode {
    tree.nodes.iter().find(|n| pred(n)).unwrap_or_else(|| {
        panic!(
            "no such node in {:#?}",
            tree.nodes
                .iter()
                .map(|n| format!(
                    "{} {} name={:?} text={:?} value={:?} id={:?}",
                    n.stable_node_id, n.role, n.name, n.text, n.value, n.identifier
                ))
                .collect::<Vec<_>>()
        )
    })
}
