//! Behaviour of the loaded browser plugin against real headless Chromium,
//! with pages served from 127.0.0.1 by the test itself.

mod common;

use std::time::{Duration, Instant};

use common::{Browser, TestServer, ctx, node};
use devicerail_host_plugin_api::protocol::{ActionExecution, ErrorCode, UiContextKind};
use devicerail_host_plugin_api::{CallContext, Driver};
use serde_json::{Value, json};

const COUNTER: &str = r#"<!doctype html><html><head><title>Counter</title></head><body>
<h1>Counter</h1>
<p id="status">Clicked 0 times</p>
<button id="inc" onclick="n++; document.getElementById('status').textContent = 'Clicked ' + n + ' times'">Add one</button>
<button disabled>Disabled</button>
<div style="position:relative;width:200px"><button id="covered">Behind</button><div style="position:absolute;left:0;top:0;right:0;bottom:0;background:white"></div></div>
<script>let n = 0;</script>
</body></html>"#;

const FORM: &str = r#"<!doctype html><html><head><title>Form</title></head><body>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('result').textContent = 'submitted ' + document.getElementById('email').value">
<label for="email">Email</label> <input id="email" data-testid="email-field">
<label for="pw">Password</label> <input id="pw" type="password">
<textarea id="notes" aria-label="Notes"></textarea>
<input id="ro" aria-label="Fixed" value="fixed" readonly>
<button type="submit" id="send">Send</button>
</form>
<p id="echo"></p><p id="result"></p>
<script>document.getElementById('email').addEventListener('input', e => { document.getElementById('echo').textContent = 'typed:' + e.target.value; });</script>
</body></html>"#;

const DELAYED: &str = r#"<!doctype html><html><head><title>Delayed</title></head><body>
<p>Waiting</p>
<script>setTimeout(() => { const b = document.createElement('button'); b.textContent = 'Ready'; document.body.appendChild(b); }, 700);</script>
</body></html>"#;

const FETCHES: &str = r#"<!doctype html><html><head><title>Fetches</title></head><body>
<p id="status">idle</p>
<button id="load" onclick="fetch('/slow/data').then(r => r.text()).then(() => { document.getElementById('status').textContent = 'loaded'; })">Load</button>
</body></html>"#;

const OTHER: &str = r#"<!doctype html><html><head><title>Other</title></head><body><h1>Other page</h1><a href="/counter">Back to counter</a></body></html>"#;

/// Each tap of the button turns the page's background from white to black
/// or back, in the click handler.
const FLIP: &str = r#"<!doctype html><html><head><title>Flip</title>
<style>html, body { margin: 0; height: 100% }</style></head><body style="background: rgb(255, 255, 255)">
<button id="flip" style="position: fixed; left: 20px; top: 20px; width: 60px; height: 30px"
  onclick="const s = document.body.style; s.background = s.background === 'rgb(0, 0, 0)' ? 'rgb(255, 255, 255)' : 'rgb(0, 0, 0)'">Flip</button>
</body></html>"#;

fn long_page() -> String {
    let mut rows = String::new();
    for i in 0..200 {
        rows.push_str(&format!("<p style=\"height:40px;margin:0\">Row {i}</p>"));
    }
    format!(
        "<!doctype html><html><head><title>Long</title></head><body style=\"margin:0\">{rows}</body></html>"
    )
}

fn server() -> TestServer {
    let long = Box::leak(long_page().into_boxed_str());
    TestServer::start(&[
        ("/counter", COUNTER),
        ("/form", FORM),
        ("/delayed", DELAYED),
        ("/other", OTHER),
        ("/fetches", FETCHES),
        ("/slow/data", "data"),
        ("/long", long),
        ("/flip", FLIP),
    ])
}

fn selector(v: Value) -> Value {
    json!({ "kind": "selector", "selector": v })
}

fn code_of(
    r: Result<devicerail_host_plugin_api::ActionOutput, devicerail_host_plugin_api::DriverError>,
) -> String {
    match r {
        Ok(o) => panic!("expected an error, got {}", o.output),
        Err(e) => e.code.into(),
    }
}

#[test]
fn find_a_button_by_role_and_name_tap_it_and_see_the_page_change() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({}));
    let nav = b.goto(&web.url("/counter"));
    assert_eq!(nav.output["title"], "Counter");

    let found = b.ok(
        "findElement",
        json!({ "selector": { "role": "button", "name": "Add one" } }),
    );
    let element = found.output["element"].clone();
    assert_eq!(element["context"]["contextKind"], "web");
    let resolved = found.resolved.expect("the resolved UI state");
    let tree = resolved.ui_tree.expect("tree");
    let button = node(&tree, |n| {
        n.role.as_str() == "button" && n.name.as_deref() == Some("Add one")
    });
    assert_eq!(button.identifier.as_deref(), Some("inc"));
    assert!(
        !tree
            .nodes
            .iter()
            .any(|n| n.role.as_str() == "staticText" && n.text.as_deref() == Some("Add one")),
        "the label is folded into the button"
    );
    assert_eq!(button.enabled, Some(true));
    assert_eq!(element["stableNodeId"], button.stable_node_id.as_str());

    let tapped = b.ok(
        "tapElement",
        json!({ "target": { "kind": "node", "node": element } }),
    );
    assert!(
        matches!(
            tapped.execution,
            Some(ActionExecution::CoordinateFallback { .. })
        ),
        "{:?}",
        tapped.execution
    );
    let after = b.tree();
    node(&after, |n| n.text.as_deref() == Some("Clicked 1 times"));

    // By text and by css too.
    b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "text": { "value": "add ONE" } })) }),
    );
    b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "css": "#inc" })) }),
    );
    node(&b.tree(), |n| n.text.as_deref() == Some("Clicked 3 times"));

    let disabled = b.run(
        "tapElement",
        json!({ "target": selector(json!({ "role": "button", "name": "Disabled" })) }),
    );
    let e = disabled.expect_err("a disabled button is not actionable");
    assert_eq!(e.code, ErrorCode::ElementNotInteractable.as_str());
    assert_eq!(e.details["reason"], "disabled");

    let covered = b.run(
        "tapElement",
        json!({ "target": selector(json!({ "identifier": "covered" })) }),
    );
    let e = covered.expect_err("a covered button is not actionable");
    assert_eq!(e.code, ErrorCode::ElementNotInteractable.as_str());
    assert_eq!(e.details["reason"], "covered");

    assert_eq!(
        code_of(b.run("findElement", json!({ "selector": { "role": "button" } }))),
        ErrorCode::ElementAmbiguous.as_str()
    );
    assert_eq!(
        code_of(b.run(
            "findElement",
            json!({ "selector": { "name": "No such thing" } })
        )),
        ErrorCode::ElementNotFound.as_str()
    );
    assert_eq!(
        code_of(b.run("findElement", json!({ "selector": { "css": "button[" } }))),
        ErrorCode::InvalidArguments.as_str()
    );
}

#[test]
fn set_element_value_then_read_it_back_from_the_snapshot() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/form"));

    let set = b.ok(
        "setElementValue",
        json!({ "target": selector(json!({ "identifier": "email-field" })), "value": "ada@example.com" }),
    );
    assert!(
        matches!(set.execution, Some(ActionExecution::WebSemantic { .. })),
        "{:?}",
        set.execution
    );
    let tree = b.tree();
    let field = node(&tree, |n| n.identifier.as_deref() == Some("email-field"));
    assert_eq!(field.role.as_str(), "textbox");
    assert_eq!(field.name.as_deref(), Some("Email"));
    assert_eq!(field.value.as_deref(), Some("ada@example.com"));
    node(&tree, |n| {
        n.text.as_deref() == Some("typed:ada@example.com")
    });

    b.ok(
        "setElementValue",
        json!({ "target": selector(json!({ "css": "textarea" })), "value": "line" }),
    );
    let notes = b.tree();
    assert_eq!(
        node(&notes, |n| n.name.as_deref() == Some("Notes"))
            .value
            .as_deref(),
        Some("line")
    );

    b.ok(
        "clearElement",
        json!({ "target": selector(json!({ "identifier": "email-field" })) }),
    );
    let cleared = b.tree();
    let field = node(&cleared, |n| n.identifier.as_deref() == Some("email-field"));
    assert!(
        field.value.as_deref().unwrap_or_default().is_empty(),
        "{:?}",
        field.value
    );

    let ro = b.run(
        "setElementValue",
        json!({ "target": selector(json!({ "identifier": "ro" })), "value": "x" }),
    );
    let e = ro.expect_err("read-only fields are not editable");
    assert_eq!(e.code, ErrorCode::ElementNotInteractable.as_str());

    // The password field never shows its value.
    b.ok(
        "setElementValue",
        json!({ "target": selector(json!({ "identifier": "pw" })), "value": "hunter2" }),
    );
    let tree = b.tree();
    let pw = node(&tree, |n| n.identifier.as_deref() == Some("pw"));
    assert_ne!(pw.value.as_deref(), Some("hunter2"));
    assert!(
        !serde_json::to_string(&tree)
            .expect("json")
            .contains("hunter2")
    );
}

/// `inputText` with a `target` types into that element in one Action:
/// focused first, after its current content, with the input events a user
/// causes; a label stands for its control; a field that takes no text is
/// refused and left as it was; `inputSecret` never takes a target.
#[test]
fn input_text_with_a_target_types_into_that_element() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/form"));
    let value = |id: &str| {
        node(&b.tree(), |n| n.identifier.as_deref() == Some(id))
            .value
            .as_deref()
            .unwrap_or_default()
            .to_owned()
    };

    let typed = b.ok(
        "inputText",
        json!({ "text": "ada", "target": selector(json!({ "identifier": "email-field" })) }),
    );
    assert_eq!(typed.output["typedChars"], json!(3));
    assert!(
        typed.output["element"]["stableNodeId"].is_string(),
        "{}",
        typed.output
    );
    assert!(
        typed.resolved.is_some(),
        "the observation it resolved against"
    );
    b.ok(
        "inputText",
        json!({ "text": "@example.com", "target": selector(json!({ "identifier": "email-field" })) }),
    );
    assert_eq!(value("email-field"), "ada@example.com");
    node(&b.tree(), |n| {
        n.text.as_deref() == Some("typed:ada@example.com")
    });

    // A label stands for its control.
    b.ok(
        "inputText",
        json!({ "text": "!", "target": selector(json!({ "css": "label[for=email]" })) }),
    );
    assert_eq!(value("email-field"), "ada@example.com!");

    // Focus moved to the element: untargeted text follows it there.
    b.ok(
        "inputText",
        json!({ "text": "note", "target": selector(json!({ "css": "textarea" })) }),
    );
    b.ok("inputText", json!({ "text": "s" }));
    let tree = b.tree();
    let notes = node(&tree, |n| n.name.as_deref() == Some("Notes"));
    assert_eq!(notes.value.as_deref(), Some("notes"));

    let ro = b
        .run(
            "inputText",
            json!({ "text": "x", "target": selector(json!({ "identifier": "ro" })) }),
        )
        .expect_err("a read-only field takes no text");
    assert_eq!(ro.code, ErrorCode::ElementNotInteractable.as_str());
    assert_eq!(value("ro"), "fixed");
    let gone = b
        .run(
            "inputText",
            json!({ "text": "x", "target": selector(json!({ "identifier": "nowhere" })) }),
        )
        .expect_err("no such element");
    assert_eq!(gone.code, ErrorCode::ElementNotFound.as_str());

    let secret = b
        .run(
            "inputSecret",
            json!({ "text": "hunter2", "target": selector(json!({ "identifier": "pw" })) }),
        )
        .expect_err("inputSecret takes no target");
    assert_eq!(secret.code, ErrorCode::InvalidArguments.as_str());
    assert!(!secret.message.contains("hunter2"), "{}", secret.message);
    assert!(value("pw").is_empty());
}

/// Observations say how many requests the page has in flight
/// (`idle.inflightRequests`): one while a fetch a tap started is running,
/// none once it answered — what tools settling after an Action wait on.
#[test]
fn observations_count_the_requests_in_flight() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/fetches"));
    let in_flight = || {
        b.observe(false, true).metadata["idle"]["inflightRequests"]
            .as_u64()
            .expect("idle.inflightRequests")
    };
    // The page's own requests count for a moment after they ended.
    let loaded = Instant::now();
    while in_flight() > 0 {
        assert!(
            loaded.elapsed() < Duration::from_secs(2),
            "the page's own requests never stopped counting"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let started = Instant::now();
    b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "identifier": "load" })) }),
    );
    assert_eq!(in_flight(), 1, "the fetch is still running");
    while in_flight() > 0 {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the fetch never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        started.elapsed() >= common::SLOW,
        "it ended when the answer came"
    );
    node(&b.tree(), |n| n.text.as_deref() == Some("loaded"));
}

#[test]
fn wait_for_element_sees_a_late_element_and_times_out_with_a_typed_error() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/delayed"));
    let started = Instant::now();
    let waited = b.ok(
        "waitForElement",
        json!({ "selector": { "role": "button", "name": "Ready" }, "condition": "visible" }),
    );
    assert_eq!(waited.output["matched"], true);
    assert!(waited.output["element"]["stableNodeId"].is_string());
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "it waited for the element"
    );

    let absent = b.ok(
        "waitForElement",
        json!({ "selector": { "text": { "value": "Waiting" } }, "condition": "present" }),
    );
    assert_eq!(absent.output["matched"], true);

    let short = CallContext::new(Some(Instant::now() + Duration::from_millis(800)));
    let started = Instant::now();
    let timed_out = b.run_with(
        &short,
        "waitForElement",
        json!({ "selector": { "name": "Never there" } }),
    );
    let e = timed_out.expect_err("the deadline passes");
    assert_eq!(e.code, ErrorCode::RequestTimedOut.as_str(), "{e}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn screenshots_match_the_viewport_and_bounds_are_screenshot_pixels() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(
        json!({ "viewportWidth": 500, "viewportHeight": 400, "deviceScaleFactor": 2.0 }),
    );
    b.goto(&web.url("/counter"));
    let obs = b.observe(true, true);
    assert_eq!((obs.viewport.width, obs.viewport.height), (1000, 800));
    assert_eq!(obs.viewport.scale_factor, 2.0);
    let img = image::load_from_memory(obs.png.as_deref().expect("png")).expect("decodes");
    assert_eq!((img.width(), img.height()), (1000, 800));
    assert_eq!(obs.metadata["title"], "Counter");
    assert_eq!(obs.metadata["url"], web.url("/counter"));
    let tree = obs.ui_tree.expect("tree");
    let root = &tree.nodes[0];
    assert_eq!(root.role.as_str(), "rootWebArea");
    let rb = root.bounds.expect("root bounds");
    assert_eq!((rb.width.get(), rb.height.get()), (1000.0, 800.0));
    let button = node(&tree, |n| n.identifier.as_deref() == Some("inc"));
    let bb = button.bounds.expect("bounds");
    // Tap in screenshot pixels at the button's center works.
    let (x, y) = bb.center();
    assert!(x > 0.0 && x < 1000.0 && y > 0.0 && y < 800.0);
    b.ok("tap", json!({ "x": x, "y": y }));
    node(&b.tree(), |n| n.text.as_deref() == Some("Clicked 1 times"));
    assert_eq!(
        code_of(b.run("tap", json!({ "x": 1000, "y": 10 }))),
        ErrorCode::InvalidArguments.as_str()
    );
}

/// A screenshot never shows the screen from before the input that came
/// before it: after every tap (semantic, with the capture started as soon
/// as the input is acknowledged, and by coordinates, captured when the
/// observation asks), the background the tap just set is what the
/// screenshot shows.
#[test]
fn every_screenshot_shows_the_screen_after_the_tap_before_it() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({ "viewportWidth": 400, "viewportHeight": 300 }));
    b.goto(&web.url("/flip"));
    b.observe(true, false);
    for i in 0..24 {
        if i % 4 < 2 {
            b.ok(
                "tapElement",
                json!({ "target": selector(json!({ "identifier": "flip" })) }),
            );
        } else {
            b.ok("tap", json!({ "x": 50, "y": 35 }));
        }
        let obs = b.observe(true, i % 3 == 0);
        let img = image::load_from_memory(obs.png.as_deref().expect("png"))
            .expect("decodes")
            .to_rgb8();
        let want = if i % 2 == 0 {
            [0, 0, 0]
        } else {
            [255, 255, 255]
        };
        for (x, y) in [(5, 5), (200, 150), (395, 295)] {
            assert_eq!(
                img.get_pixel(x, y).0,
                want,
                "screenshot {i} at ({x}, {y}) shows the screen from before its tap"
            );
        }
    }
}

#[test]
fn navigation_moves_the_epoch_and_old_references_go_stale() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/counter"));
    let first = b.tree();
    let second = b.tree();
    assert_eq!(first.context, second.context, "same document, same epoch");
    let ids = |t: &devicerail_host_plugin_api::UiTree| {
        t.nodes
            .iter()
            .map(|n| n.stable_node_id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&first), ids(&second), "stable ids are stable");
    assert_eq!(first.context.context_kind, UiContextKind::Web);

    let found = b.ok(
        "findElement",
        json!({ "selector": { "identifier": "inc" } }),
    );
    let old_ref = found.output["element"].clone();

    b.goto(&web.url("/other"));
    let other = b.tree();
    assert_ne!(other.context.document_epoch, first.context.document_epoch);
    let stale = b.run(
        "tapElement",
        json!({ "target": { "kind": "node", "node": old_ref.clone() } }),
    );
    assert_eq!(code_of(stale), ErrorCode::ElementStale.as_str());

    // History and reload are navigations too.
    let back = b.ok("back", json!({}));
    assert_eq!(back.output["title"], "Counter");
    let again = b.tree();
    assert_ne!(again.context.document_epoch, first.context.document_epoch);
    assert_ne!(again.context.document_epoch, other.context.document_epoch);
    assert_eq!(
        code_of(b.run(
            "tapElement",
            json!({ "target": { "kind": "node", "node": old_ref } })
        )),
        ErrorCode::ElementStale.as_str()
    );
    let forward = b.ok("forward", json!({}));
    assert_eq!(forward.output["title"], "Other");
    let before_reload = b.tree();
    b.ok("reload", json!({}));
    assert_ne!(
        b.tree().context.document_epoch,
        before_reload.context.document_epoch
    );
    assert_eq!(
        code_of(b.run("forward", json!({}))),
        ErrorCode::PlatformError.as_str()
    );

    assert_eq!(
        code_of(b.run("navigate", json!({ "url": "not a url" }))),
        ErrorCode::InvalidArguments.as_str()
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let refused = b.run(
        "navigate",
        json!({ "url": format!("http://127.0.0.1:{port}/") }),
    );
    assert_eq!(code_of(refused), ErrorCode::PlatformError.as_str());
}

#[test]
fn keyboard_typing_and_scrolling() {
    let _serial = common::serial();
    let web = server();
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/form"));
    assert_eq!(
        code_of(b.run("inputText", json!({ "text": "nobody listens" }))),
        ErrorCode::PlatformError.as_str(),
        "nothing has focus yet"
    );
    let tree = b.tree();
    let field = node(&tree, |n| n.identifier.as_deref() == Some("email-field"));
    let (x, y) = field.bounds.expect("bounds").center();
    b.ok("tap", json!({ "x": x, "y": y }));
    let typed = b.ok("inputText", json!({ "text": "bob@x.org!" }));
    assert_eq!(typed.output["typedChars"], 10);
    b.ok("pressKey", json!({ "key": "Backspace" }));
    b.ok("pressKey", json!({ "key": "Z" }));
    let tree = b.tree();
    assert_eq!(
        node(&tree, |n| n.identifier.as_deref() == Some("email-field"))
            .value
            .as_deref(),
        Some("bob@x.orgZ")
    );
    b.ok("pressKey", json!({ "key": "Enter" }));
    node(&b.tree(), |n| {
        n.text.as_deref() == Some("submitted bob@x.orgZ")
    });
    assert_eq!(
        code_of(b.run("pressKey", json!({ "key": "Hyper" }))),
        ErrorCode::InvalidArguments.as_str()
    );

    b.goto(&web.url("/long"));
    let before = b.tree();
    let row = |t: &devicerail_host_plugin_api::UiTree| {
        node(t, |n| n.text.as_deref() == Some("Row 20"))
            .bounds
            .expect("bounds")
            .y
    };
    let scrolled = b.ok("scroll", json!({ "deltaX": 0, "deltaY": 400 }));
    assert_eq!(scrolled.output["scrollY"], 400.0, "{}", scrolled.output);
    let after = b.tree();
    assert!(
        (row(&before) - row(&after) - 400.0).abs() < 1.0,
        "bounds follow the scroll"
    );
    assert_eq!(
        before.context, after.context,
        "scrolling keeps the document"
    );
}

#[test]
fn attaching_to_a_running_browser_leaves_it_running() {
    let _serial = common::serial();
    let web = server();
    common::require_browser();
    let spawner = devicerail_plugin_browser::launch::Spawner::new().expect("spawner");
    let binary = devicerail_plugin_browser::binary::find(None).expect("browser");
    let mut running = devicerail_plugin_browser::launch::launch(
        &spawner,
        &devicerail_plugin_browser::launch::LaunchOptions {
            binary,
            headless: true,
            window: (800, 600),
            extra_args: vec![],
        },
        Instant::now() + Duration::from_secs(30),
        &|| false,
    )
    .expect("launch");
    let port = running
        .ws_url()
        .trim_start_matches("ws://127.0.0.1:")
        .split('/')
        .next()
        .expect("port")
        .to_owned();
    let plugin = common::load(
        json!({ "id": "browser-chromium", "endpoint": format!("http://127.0.0.1:{port}") }),
    );
    let device = devicerail_host_plugin_api::protocol::DeviceId::new(common::DEVICE);
    plugin.connect(&ctx(30), &device).expect("attach");
    let b = Browser { plugin, device };
    b.goto(&web.url("/other"));
    assert_eq!(b.observe(false, false).metadata["title"], "Other");
    b.plugin
        .disconnect(&ctx(30), &b.device)
        .expect("disconnect");
    assert!(
        running.is_running(),
        "disconnect left the attached browser running"
    );
    assert!(
        running.profile_dir().is_some_and(|p| p.exists()),
        "the attached browser's profile is untouched"
    );
    drop(b);
    running.shutdown(Duration::from_secs(3));
    assert!(!running.is_running());
}

#[test]
fn launched_browsers_stop_and_lose_their_profile_on_disconnect() {
    let _serial = common::serial();
    // Profiles other processes left or hold are not this browser's.
    let others = profiles();
    let b = Browser::connect(json!({}));
    let before: Vec<_> = profiles()
        .into_iter()
        .filter(|p| !others.contains(p))
        .collect();
    assert!(
        !before.is_empty(),
        "a temporary profile exists while connected"
    );
    let health = b.plugin.health(&ctx(10), &b.device).expect("health");
    assert!(health.healthy, "{}", health.detail);
    b.plugin
        .disconnect(&ctx(30), &b.device)
        .expect("disconnect");
    let after = profiles();
    assert!(
        before.iter().all(|p| !after.contains(p)),
        "the profile was removed: {before:?} {after:?}"
    );
    let health = b.plugin.health(&ctx(10), &b.device).expect("health");
    assert!(!health.healthy, "a disconnected device is not healthy");
    let observed = b.plugin.observe(
        &ctx(5),
        &b.device,
        &devicerail_host_plugin_api::ObserveRequest::default(),
    );
    assert_eq!(
        observed.err().map(|e| e.code.into()),
        Some(ErrorCode::DeviceNotConnected.as_str().to_owned())
    );
}

fn profiles() -> Vec<std::path::PathBuf> {
    std::fs::read_dir(std::env::temp_dir())
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("devicerail-browser-"))
                })
                .collect()
        })
        .unwrap_or_default()
}
