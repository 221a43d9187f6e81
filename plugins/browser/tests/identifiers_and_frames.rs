//! What a tester points at that has no accessible name or role (elements
//! with only an `id` or `data-testid`: a banner that appears after sign-in,
//! a toast, a status `<span>`), and content inside same-origin and
//! cross-origin `<iframe>`s, against real headless Chromium. The
//! cross-origin frame is served by a second server and addressed as
//! `localhost`, so Chromium runs it in a process of its own.

mod common;

use std::time::{Duration, Instant};

use common::{Browser, TestServer, node};
use devicerail_host_plugin_api::CallContext;
use devicerail_host_plugin_api::UiTree;
use devicerail_host_plugin_api::protocol::{ActionExecution, ErrorCode, UiNode};
use serde_json::{Value, json};

/// Sign-in page: the banner, the toast and the spinner have no accessible
/// name or role; only identifiers.
const SIGN_IN: &str = r#"<!doctype html><html><head><title>Sign in</title>
<style>.toast { position: fixed; right: 10px; bottom: 10px; } #spinner { width: 24px; height: 24px; background: #08f; border-radius: 12px; }</style>
</head><body>
<button id="signin">Sign in</button>
<p>Status: <span id="status-word">idle</span></p>
<div data-testid="spinner" id="spinner"></div>
<p id="taps">banner taps: 0</p>
<script>
let taps = 0;
document.getElementById('signin').addEventListener('click', () => {
  document.getElementById('status-word').textContent = 'signing in';
  setTimeout(() => {
    const banner = document.createElement('div');
    banner.setAttribute('data-testid', 'welcome');
    banner.textContent = 'Welcome back, Ada';
    banner.addEventListener('click', () => { taps++; document.getElementById('taps').textContent = 'banner taps: ' + taps; });
    document.body.appendChild(banner);
    const toast = document.createElement('span');
    toast.id = 'toast';
    toast.className = 'toast';
    toast.textContent = 'Saved';
    document.body.appendChild(toast);
    document.getElementById('status-word').textContent = 'signed in';
  }, 600);
});
</script>
</body></html>"#;

const INNER: &str = r#"<!doctype html><html><head><title>Inner</title></head><body style="margin:0">
<div data-testid="inner-banner">Embedded login</div>
<input id="user" data-testid="user-field" aria-label="User">
<button id="go" onclick="document.getElementById('hello').textContent = 'hello ' + document.getElementById('user').value">Log in</button>
<span id="hello"></span>
<a href="/inner?again">Start over</a>
</body></html>"#;

const PAY: &str = r#"<!doctype html><html><head><title>Pay</title></head><body style="margin:0">
<form onsubmit="event.preventDefault(); document.querySelector('[data-testid=pay-status]').textContent = 'paid ' + document.getElementById('card').value.slice(-4)">
<label for="card">Card number</label> <input id="card" data-testid="card">
<button id="pay">Pay now</button>
<span data-testid="pay-status">unpaid</span>
</form>
</body></html>"#;

fn frames_page(cross_origin_pay: &str) -> String {
    format!(
        r#"<!doctype html><html><head><title>Checkout</title></head><body style="margin:0">
<h1 style="margin:0;height:40px">Checkout</h1>
<iframe id="login" src="/inner" style="position:absolute;left:30px;top:60px;width:400px;height:200px;border:5px solid #ccc;padding:3px"></iframe>
<div style="height:1200px"></div>
<iframe id="payment" data-testid="payment-frame" src="{cross_origin_pay}" style="display:block;margin-left:100px;width:500px;height:300px;border:0"></iframe>
</body></html>"#
    )
}

fn selector(v: Value) -> Value {
    json!({ "kind": "selector", "selector": v })
}

fn ctx_ms(ms: u64) -> CallContext {
    CallContext::new(Some(Instant::now() + Duration::from_millis(ms)))
}

fn by_id<'t>(tree: &'t UiTree, id: &str) -> &'t UiNode {
    tree.nodes
        .iter()
        .find(|n| n.stable_node_id.as_str() == id)
        .unwrap_or_else(|| panic!("no node {id}"))
}

fn summary(tree: &UiTree) -> Vec<String> {
    tree.nodes
        .iter()
        .map(|n| {
            format!(
                "{} {} name={:?} text={:?} id={:?} bounds={:?}",
                n.stable_node_id, n.role, n.name, n.text, n.identifier, n.bounds
            )
        })
        .collect()
}

#[test]
fn elements_with_only_an_identifier_are_found_waited_for_and_tapped() {
    let _serial = common::serial();
    let web = TestServer::start(&[("/signin", SIGN_IN)]);
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/signin"));

    let tree = b.tree();
    eprintln!(
        "sign-in page: {} nodes: {:#?}",
        tree.nodes.len(),
        summary(&tree)
    );
    // A status <span> inside a paragraph and an empty <div> drawn by CSS.
    let status = node(&tree, |n| n.identifier.as_deref() == Some("status-word"));
    assert!(status.bounds.is_some_and(|r| !r.is_empty()), "{status:?}");
    let spinner = node(&tree, |n| n.identifier.as_deref() == Some("spinner"));
    let sb = spinner.bounds.expect("the spinner is drawn");
    assert_eq!((sb.width.get(), sb.height.get()), (24.0, 24.0));
    b.ok(
        "findElement",
        json!({ "selector": { "identifier": "spinner" } }),
    );
    b.ok("findElement", json!({ "selector": { "css": "#spinner" } }));

    // Not there yet: a typed timeout at the call's deadline.
    let e = b
        .run_with(
            &ctx_ms(400),
            "waitForElement",
            json!({ "selector": { "identifier": "welcome" } }),
        )
        .expect_err("the banner is not there yet");
    assert_eq!(e.code, ErrorCode::RequestTimedOut.as_str(), "{e}");

    b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "role": "button", "name": "Sign in" })) }),
    );
    let started = Instant::now();
    let waited = b.ok(
        "waitForElement",
        json!({ "selector": { "identifier": "welcome" }, "condition": "visible" }),
    );
    assert_eq!(waited.output["matched"], true, "{}", waited.output);
    assert!(started.elapsed() < Duration::from_secs(10));
    let by_css = b.ok(
        "waitForElement",
        json!({ "selector": { "css": "[data-testid=welcome]" }, "condition": "present" }),
    );
    assert_eq!(by_css.output["matched"], true);
    assert_eq!(
        by_css.output["element"]["stableNodeId"], waited.output["element"]["stableNodeId"],
        "identifier and css reach the same node"
    );

    let tree = b.tree();
    let banner = node(&tree, |n| n.identifier.as_deref() == Some("welcome"));
    assert_eq!(banner.role.as_str(), "generic");
    assert!(banner.name.is_none(), "no accessible name: {banner:?}");
    assert!(
        tree.nodes.iter().any(
            |n| n.parent_stable_node_id.as_ref() == Some(&banner.stable_node_id)
                && n.text.as_deref() == Some("Welcome back, Ada")
        ),
        "the banner's text hangs under it: {:#?}",
        summary(&tree)
    );
    let toast = b.ok(
        "findElement",
        json!({ "selector": { "identifier": "toast" } }),
    );
    let toast_id = toast.output["element"]["stableNodeId"]
        .as_str()
        .expect("id");
    assert!(by_id(&tree, toast_id).bounds.is_some());
    b.ok(
        "findElement",
        json!({ "selector": { "css": "span.toast" } }),
    );
    node(&tree, |n| n.text.as_deref() == Some("signed in"));

    // Acting on an element that has only an identifier.
    let tapped = b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "identifier": "welcome" })) }),
    );
    assert!(matches!(
        tapped.execution,
        Some(ActionExecution::CoordinateFallback { .. })
    ));
    node(&b.tree(), |n| n.text.as_deref() == Some("banner taps: 1"));

    // Without a deadline, a selector that never matches answers
    // `matched: false`; one that matches answers at once.
    let at_once = b.run_with(
        &CallContext::unbounded(),
        "waitForElement",
        json!({ "selector": { "identifier": "toast" } }),
    );
    assert_eq!(at_once.expect("matched").output["matched"], true);
}

#[test]
fn same_origin_and_cross_origin_iframes_are_read_and_acted_in() {
    let _serial = common::serial();
    let pay = TestServer::start(&[("/pay", PAY)]);
    let cross = pay.url("/pay").replace("127.0.0.1", "localhost");
    let page: &'static str = Box::leak(frames_page(&cross).into_boxed_str());
    let web = TestServer::start(&[("/checkout", page), ("/inner", INNER)]);
    let b = Browser::connect(json!({ "deviceScaleFactor": 2.0 }));
    b.goto(&web.url("/checkout"));
    // The cross-origin frame loads on its own.
    b.ok(
        "waitForElement",
        json!({ "selector": { "identifier": "card" } }),
    );

    let obs = b.observe(true, true);
    let frames = obs.metadata["frames"].as_array().expect("metadata.frames");
    assert_eq!(frames.len(), 3, "{frames:#?}");
    assert_eq!(frames[0]["key"], 0);
    let same = frames
        .iter()
        .find(|f| f["url"] == web.url("/inner"))
        .expect("the same-origin frame");
    let other = frames
        .iter()
        .find(|f| f["url"] == cross)
        .expect("the cross-origin frame");
    assert_eq!(same["outOfProcess"], false);
    assert_eq!(other["outOfProcess"], true);
    let tree = obs.ui_tree.expect("tree");
    eprintln!(
        "nodes: {} in all; per frame: {}",
        tree.nodes.len(),
        frames
            .iter()
            .map(|f| format!("{}={}", f["url"], f["nodes"]))
            .collect::<Vec<_>>()
            .join(", ")
    );

    // The cross-origin form: frame-scoped ids, under the <iframe> node,
    // bounds in page pixels (the frame sits 100 CSS px in, below 1240 px).
    let card = node(&tree, |n| n.identifier.as_deref() == Some("card"));
    let prefix = other["stableNodeIdPrefix"].as_str().expect("prefix");
    assert!(!prefix.is_empty());
    assert!(card.stable_node_id.as_str().starts_with(prefix));
    let owner = by_id(&tree, other["iframeStableNodeId"].as_str().expect("owner"));
    assert_eq!(owner.identifier.as_deref(), Some("payment-frame"));
    let ob = owner.bounds.expect("iframe bounds");
    let cb = card.bounds.expect("card bounds");
    assert!(
        cb.x >= ob.x && cb.y >= ob.y && cb.x + cb.width.get() <= ob.x + ob.width.get(),
        "the card field lies inside its iframe: {cb:?} in {ob:?}"
    );
    assert!(
        cb.x >= 200.0 && cb.y >= 2480.0,
        "page pixels at scale 2: {cb:?}"
    );
    let mut ancestor = card.parent_stable_node_id.clone();
    let mut under_owner = false;
    while let Some(p) = ancestor {
        if p == owner.stable_node_id {
            under_owner = true;
            break;
        }
        ancestor = by_id(&tree, p.as_str()).parent_stable_node_id.clone();
    }
    assert!(under_owner, "{:#?}", summary(&tree));

    // The same-origin login: content box at (30 + 5 + 3, 60 + 5 + 3).
    let banner = node(&tree, |n| n.identifier.as_deref() == Some("inner-banner"));
    let bb = banner.bounds.expect("banner bounds");
    assert_eq!((bb.x, bb.y), (76.0, 136.0), "{banner:?}");
    assert!(
        banner
            .stable_node_id
            .as_str()
            .starts_with(same["stableNodeIdPrefix"].as_str().expect("prefix"))
    );

    // Semantic Actions inside the same-origin frame.
    b.ok(
        "setElementValue",
        json!({ "target": selector(json!({ "identifier": "user-field" })), "value": "ada" }),
    );
    let log_in = b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "role": "button", "name": "Log in" })) }),
    );
    node(&b.tree(), |n| n.text.as_deref() == Some("hello ada"));

    // The frame navigates: references into its old document go stale, the
    // page's own epoch stays.
    let before = b.tree();
    let r = b.run(
        "tapElement",
        json!({ "target": selector(json!({ "role": "link", "name": "Start over" })) }),
    );
    // The link wraps over two lines: its box's center is between them.
    r.unwrap_or_else(|e| panic!("tap the link: {e} {}", e.details));
    b.ok(
        "waitForElement",
        json!({ "selector": { "text": { "value": "hello ada" } }, "condition": "absent" }),
    );
    let stale = b
        .run(
            "tapElement",
            json!({ "target": { "kind": "node", "node": log_in.output["element"].clone() } }),
        )
        .expect_err("the old login document is gone");
    assert_eq!(stale.code, ErrorCode::ElementStale.as_str(), "{stale}");
    let reloaded = b.tree();
    assert_eq!(reloaded.context, before.context, "only the frame navigated");
    let button = node(&reloaded, |n| n.name.as_deref() == Some("Log in"));
    assert_ne!(
        button.stable_node_id.as_str(),
        log_in.output["element"]["stableNodeId"]
            .as_str()
            .expect("id"),
        "a new document of the frame, a new frame key"
    );

    // ... and inside the cross-origin one, scrolled into view first.
    let found = b.ok(
        "findElement",
        json!({ "selector": { "css": "[data-testid=card]" } }),
    );
    assert_eq!(
        found.output["element"]["stableNodeId"],
        card.stable_node_id.as_str()
    );
    let set = b.ok(
        "setElementValue",
        json!({ "target": { "kind": "node", "node": found.output["element"].clone() }, "value": "4111111111114242" }),
    );
    assert!(matches!(
        set.execution,
        Some(ActionExecution::WebSemantic { .. })
    ));
    b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "role": "button", "name": "Pay now" })) }),
    );
    let after = b.tree();
    node(&after, |n| n.text.as_deref() == Some("paid 4242"));
    assert_eq!(
        node(&after, |n| n.identifier.as_deref() == Some("card"))
            .value
            .as_deref(),
        Some("4111111111114242")
    );

    // Coordinates: the page-space bounds of a node inside the cross-origin
    // frame are where a plain tap lands.
    let field = node(&after, |n| n.identifier.as_deref() == Some("card"));
    let (x, y) = field.bounds.expect("bounds").center();
    assert!(y > 0.0 && y < 1600.0, "scrolled into view: {y}");
    b.ok("tap", json!({ "x": x, "y": y }));
    b.ok("pressKey", json!({ "key": "End" }));
    b.ok("inputText", json!({ "text": "9" }));
    assert_eq!(
        node(&b.tree(), |n| n.identifier.as_deref() == Some("card"))
            .value
            .as_deref(),
        Some("41111111111142429")
    );

    // A css selector reaches every frame; each match is one node.
    let e = b
        .run("findElement", json!({ "selector": { "css": "button" } }))
        .expect_err("two buttons, one per frame");
    assert_eq!(e.code, ErrorCode::ElementAmbiguous.as_str());
    assert_eq!(e.details["count"], 2);
}
