//! Selectors, semantic Actions and `queryElements` act on the live page,
//! not on the bounded snapshot; the snapshot is filled by priority and
//! says what it left out; and the in-page walk agrees with the
//! accessibility tree. Against real headless Chromium.

mod common;
mod pages;

use std::collections::BTreeSet;

use common::{Browser, TestServer};
use devicerail_host_plugin_api::UiTree;
use devicerail_host_plugin_api::protocol::{ErrorCode, UiNode};
use serde_json::{Value, json};

const ROWS: usize = 1_000;

fn selector(v: Value) -> Value {
    json!({ "kind": "selector", "selector": v })
}

fn has(tree: &UiTree, pred: impl Fn(&UiNode) -> bool) -> Option<&UiNode> {
    tree.nodes.iter().find(|n| pred(n))
}

fn named(tree: &UiTree, name: &str) -> bool {
    has(tree, |n| {
        n.name.as_deref() == Some(name) || n.text.as_deref() == Some(name)
    })
    .is_some()
}

#[test]
fn the_last_row_of_a_1000_row_table_is_found_scrolled_to_and_tapped_by_selector() {
    let _serial = common::serial();
    let web = TestServer::start(&[("/table", &pages::table(ROWS))]);
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/table"));

    let obs = b.observe(false, true);
    let tree = obs.ui_tree.as_ref().expect("a tree");
    assert_eq!(obs.metadata["uiTreeSource"], "walk", "{:?}", obs.metadata);
    // The page is larger than one snapshot: the last row is left out of
    // it, and the snapshot says so.
    let last = pages::person(ROWS - 1);
    assert!(
        !named(tree, &last),
        "the last row is beyond the snapshot's bounds ({} nodes)",
        tree.nodes.len()
    );
    let omitted = &obs.metadata["uiTreeOmitted"];
    assert!(
        omitted["nodes"].as_u64().is_some_and(|n| n > 0),
        "{omitted}"
    );

    // Found by selector all the same.
    let found = b.ok(
        "findElement",
        json!({ "selector": { "role": "cell", "name": last } }),
    );
    let resolved = found.resolved.as_ref().expect("resolved against");
    assert_eq!(resolved.metadata["uiTreeScope"], "query");
    let cell = found.output["element"]["stableNodeId"]
        .as_str()
        .expect("an id")
        .to_owned();

    // Tapped by selector: scrolled into view, clicked.
    let tapped = b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "css": format!("#people tbody tr:nth-child({ROWS}) button") })) }),
    );
    assert!(tapped.output["element"]["stableNodeId"].is_string());
    let waited = b.ok(
        "waitForElement",
        json!({ "selector": { "text": { "value": format!("Editing {last}") } }, "condition": "visible" }),
    );
    assert_eq!(waited.output["matched"], true, "{}", waited.output);

    // The row is on screen now: its cell is in the next snapshot with
    // bounds inside the viewport.
    let obs = b.observe(false, true);
    let tree = obs.ui_tree.as_ref().expect("a tree");
    let cell_now = has(tree, |n| n.stable_node_id.as_str() == cell)
        .unwrap_or_else(|| panic!("the scrolled-to row's cell {cell} is in the snapshot"));
    let r = cell_now.bounds.expect("bounds");
    assert!(
        r.y >= 0.0 && r.y + r.height.get() <= f64::from(obs.viewport.height),
        "{r:?} is on screen"
    );

    // A node reference beyond the first snapshot resolves too.
    let element = found.output["element"].clone();
    let by_ref = b.ok(
        "tapElement",
        json!({ "target": { "kind": "node", "node": element } }),
    );
    assert_eq!(by_ref.output["element"]["stableNodeId"], cell);

    // Ambiguity and absence are judged on the whole page.
    let e = b
        .run(
            "findElement",
            json!({ "selector": { "role": "button", "name": "Edit" } }),
        )
        .expect_err("a thousand buttons");
    assert_eq!(e.code, ErrorCode::ElementAmbiguous.as_str(), "{e}");
    assert_eq!(e.details["count"], ROWS, "{}", e.details);
    let e = b
        .run(
            "findElement",
            json!({ "selector": { "role": "cell", "name": pages::person(ROWS) } }),
        )
        .expect_err("no such row");
    assert_eq!(e.code, ErrorCode::ElementNotFound.as_str(), "{e}");

    // Every row is reachable by queryElements.
    let q = b.ok(
        "queryElements",
        json!({ "selector": { "role": "cell", "text": { "value": "Person ", "mode": "contains" } }, "limit": 200 }),
    );
    assert_eq!(q.output["total"], ROWS, "{}", q.output["total"]);
    assert_eq!(q.output["returned"], 200);
    let q = b.ok(
        "queryElements",
        json!({ "selector": { "role": "cell", "text": { "value": "Person 09", "mode": "contains" } }, "limit": 200 }),
    );
    assert_eq!(q.output["total"], 100);
    let names: BTreeSet<String> = q.output["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["name"].as_str().map(str::to_owned))
        .collect();
    assert!(names.contains(&pages::person(900)) && names.contains(&last));
}

#[test]
fn every_link_of_the_article_is_found_with_its_target() {
    let _serial = common::serial();
    let web = TestServer::start(&[("/article", &pages::article(3_000, 70))]);
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/article"));

    let q = b.ok(
        "queryElements",
        json!({ "selector": { "role": "link", "text": { "value": "Reference", "mode": "contains" } }, "limit": 200 }),
    );
    assert_eq!(q.output["total"], 70, "{}", q.output);
    let nodes = q.output["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 70);
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["name"], pages::link_title(i), "{n}");
        assert_eq!(
            n["value"],
            web.url(&format!("/doc/{i}")),
            "a link's value is its target"
        );
    }
    // Each by its own selector.
    for i in 0..70 {
        b.ok(
            "findElement",
            json!({ "selector": { "role": "link", "name": pages::link_title(i) } }),
        );
    }
    // Within a node: the links of the article, not of the navigation.
    let tree = b.tree();
    let article = has(&tree, |n| n.role.as_str() == "article").expect("the article");
    let q = b.ok(
        "queryElements",
        json!({ "selector": { "role": "link" }, "within": article.stable_node_id, "limit": 200 }),
    );
    assert_eq!(q.output["total"], 70);
    let q = b.ok(
        "queryElements",
        json!({ "within": article.stable_node_id, "limit": 5 }),
    );
    assert!(q.output["total"].as_u64().is_some_and(|n| n > 70));
    assert_eq!(q.output["returned"], 5);
}

#[test]
fn a_button_far_below_is_scrolled_into_view_and_tapped() {
    let _serial = common::serial();
    const PAGE: &str = r#"<!doctype html><html><head><title>Far</title></head><body style="margin:0">
<p id="out">untouched</p><div style="height:4000px"></div>
<button id="far" onclick="document.getElementById('out').textContent='tapped at ' + Math.round(scrollY)">Far away</button>
<div style="height:2000px"></div></body></html>"#;
    let web = TestServer::start(&[("/far", PAGE)]);
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/far"));
    let before = b.tree();
    let button = has(&before, |n| n.identifier.as_deref() == Some("far")).expect("the button");
    let y = button.bounds.expect("bounds").y;
    assert!(y > 3_000.0, "below the viewport: {y}");
    b.ok(
        "tapElement",
        json!({ "target": selector(json!({ "role": "button", "name": "Far away" })) }),
    );
    let after = b.tree();
    let out = has(&after, |n| n.identifier.as_deref() == Some("out"));
    // The paragraph scrolled out of view, but the tree keeps it.
    let text = after
        .nodes
        .iter()
        .filter(|n| n.parent_stable_node_id == out.map(|o| o.stable_node_id.clone()))
        .find_map(|n| n.text.as_deref().map(str::to_owned))
        .or_else(|| out.and_then(|o| o.name.as_deref().map(str::to_owned)))
        .unwrap_or_default();
    assert!(text.starts_with("tapped at "), "{text:?}");
    let scrolled: f64 = text["tapped at ".len()..].parse().expect("a number");
    assert!(
        scrolled > 2_000.0,
        "the page scrolled to the button: {scrolled}"
    );
    let button = has(&after, |n| n.identifier.as_deref() == Some("far")).expect("the button");
    let r = button.bounds.expect("bounds");
    assert!(r.y >= 0.0 && r.y < 800.0, "on screen now: {r:?}");
}

#[test]
fn the_snapshot_is_filled_by_priority_and_says_what_it_left_out() {
    let _serial = common::serial();
    let web = TestServer::start(&[("/table", &pages::table(ROWS))]);
    let b = Browser::connect(json!({}));
    b.goto(&web.url("/table"));
    // Scroll to the middle of the table.
    b.ok("scroll", json!({ "deltaX": 0, "deltaY": 12_000 }));
    let obs = b.observe(false, true);
    let tree = obs.ui_tree.as_ref().expect("a tree");
    let height = f64::from(obs.viewport.height);
    let on_screen = |n: &UiNode| {
        n.bounds
            .is_some_and(|r| r.y + r.height.get() > 0.0 && r.y < height && r.height.get() > 0.0)
    };
    // The rows on screen are there with their text.
    let visible: Vec<&UiNode> = tree
        .nodes
        .iter()
        .filter(|n| n.role.as_str() == "cell" && on_screen(n))
        .collect();
    assert!(visible.len() > 40, "{} cells on screen", visible.len());
    assert!(
        visible
            .iter()
            .any(|n| n.name.as_deref().is_some_and(|s| s.starts_with("Person "))),
        "names on screen"
    );
    // Every interactive node of the page is there, far ones included.
    let buttons = tree
        .nodes
        .iter()
        .filter(|n| n.role.as_str() == "button")
        .count();
    assert_eq!(buttons, ROWS, "every button comes before further text");
    // Text far from the screen is what was left out, and it is counted.
    assert!(!named(tree, &pages::person(0)) || !named(tree, &pages::person(ROWS - 1)));
    let omitted = &obs.metadata["uiTreeOmitted"];
    assert_eq!(omitted["interactive"], 0, "{omitted}");
    assert_eq!(omitted["onScreen"], 0, "{omitted}");
    assert!(omitted["text"].as_u64().is_some_and(|n| n > 0), "{omitted}");
    let regions = omitted["regions"].as_array().expect("regions");
    assert!(!regions.is_empty());
    assert!(
        regions
            .iter()
            .all(|r| tree.nodes.iter().any(
                |n| n.stable_node_id.as_str() == r["stableNodeId"].as_str().unwrap_or_default()
            )),
        "regions name kept nodes"
    );
    // Within the protocol's bounds.
    assert!(tree.nodes.len() <= 10_000);
    let bytes = serde_json::to_vec(&tree.nodes).expect("json").len();
    assert!(bytes <= 768 * 1024, "{bytes} bytes");
}

/// (role, name, identifier) of the interactive and labelled nodes of a
/// tree (texts aside).
fn facts(tree: &UiTree) -> BTreeSet<(String, String, String)> {
    tree.nodes
        .iter()
        .filter(|n| n.role.as_str() != "staticText")
        .filter(|n| n.enabled.is_some() || n.name.as_deref().is_some_and(|s| !s.is_empty()))
        // The page's root: focusable in one path, named in both.
        .filter(|n| n.parent_stable_node_id.is_some())
        .map(|n| {
            (
                n.role.as_str().to_owned(),
                n.name.as_deref().unwrap_or_default().to_owned(),
                n.identifier.as_deref().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// Differences the two paths are allowed: the accessibility tree's own
/// nodes without a DOM element (list markers, a select's popup).
fn allowed(fact: &(String, String, String)) -> bool {
    matches!(fact.0.as_str(), "listMarker" | "menuListPopup")
}

/// A page of many kinds of elements.
const KINDS: &str = r#"<!doctype html><html><head><title>Kinds</title></head><body>
<header><nav aria-label="Main"><a href="/a">Alpha</a> <a href="/b" id="beta">Beta</a></nav></header>
<main><h1>Heading one</h1><h2 id="h2">Heading two</h2>
<p>Some <strong>strong</strong> and <em>emphasis</em> text with <a href="/c">a link</a>.</p>
<ul><li>one</li><li>two <a href="/d">Delta</a></li></ul>
<form aria-label="Profile"><label for="n">Name</label><input id="n" value="Ada">
<label>Mail <input type="email" data-testid="mail"></label>
<input type="checkbox" id="cb" aria-label="Agree"> <input type="radio" name="r" aria-label="Yes">
<input type="search" placeholder="Search here"> <input type="range" aria-label="Volume"> <input type="number" aria-label="Count">
<textarea aria-label="Notes"></textarea>
<select aria-label="Color"><option>Red</option><option>Green</option></select>
<button type="button">Save</button> <input type="submit" value="Send"> <button disabled>Off</button>
<fieldset><legend>Options</legend><input type="checkbox" aria-label="Opt"></fieldset></form>
<table><caption>Scores</caption><tr><th>Who</th><th>Score</th></tr><tr><td>Ann</td><td>3</td></tr></table>
<img alt="Logo" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" width="10" height="10">
<section aria-label="Extra"><div role="button" tabindex="0">Custom</div><span data-testid="tag">tag</span></section>
<details open><summary>More</summary>hidden details</details>
<div aria-hidden="true"><button>Ghost</button></div>
<div style="display:none"><button>Gone</button></div>
</main><footer><a href="/f">Footer link</a></footer></body></html>"#;

#[test]
fn the_walk_and_the_accessibility_tree_agree_on_what_can_be_acted_on() {
    let _serial = common::serial();
    let other = TestServer::start(&[("/pay", &pages::pay())]);
    let port = other
        .url("/")
        .split(':')
        .nth(2)
        .map(|p| p.trim_end_matches('/').to_owned());
    let port = port.expect("a port");
    let frames = pages::frames(
        &format!("http://127.0.0.1:{port}/pay"),
        &format!("http://localhost:{port}/pay"),
    );
    let web = TestServer::start(&[
        ("/kinds", KINDS),
        ("/login", &pages::login()),
        ("/table", &pages::table(40)),
        ("/article", &pages::article(600, 20)),
        ("/frames", &frames),
        ("/inner", &pages::inner()),
    ]);
    let walk = Browser::connect(json!({ "treeSource": "walk" }));
    let ax = Browser::connect(json!({ "treeSource": "ax", "id": "browser-ax" }));
    for page in ["/kinds", "/login", "/table", "/article", "/frames"] {
        walk.goto(&web.url(page));
        ax.goto(&web.url(page));
        if page == "/frames" {
            // Frames load after the page.
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        let w_obs = walk.observe(false, true);
        let a_obs = ax.observe(false, true);
        assert_eq!(w_obs.metadata["uiTreeSource"], "walk");
        assert_eq!(a_obs.metadata["uiTreeSource"], "accessibility");
        let (w, a) = (
            facts(w_obs.ui_tree.as_ref().expect("walked")),
            facts(a_obs.ui_tree.as_ref().expect("read")),
        );
        let only_walk: Vec<_> = w.difference(&a).filter(|f| !allowed(f)).collect();
        let only_ax: Vec<_> = a.difference(&w).filter(|f| !allowed(f)).collect();
        assert!(
            only_walk.is_empty() && only_ax.is_empty(),
            "{page}: only in the walk: {only_walk:#?}\nonly in the accessibility tree: {only_ax:#?}"
        );
        assert!(w.len() > 3, "{page}: {w:?}");
    }
    // The frames' content is in the walked tree, in all three frames
    // (frames load after the page: read until all are there).
    walk.goto(&web.url("/frames"));
    let cards_in = |tree: &UiTree| {
        tree.nodes
            .iter()
            .filter(|n| n.identifier.as_deref() == Some("card"))
            .count()
    };
    let since = std::time::Instant::now();
    let obs = loop {
        let obs = walk.observe(false, true);
        let tree = obs.ui_tree.as_ref().expect("tree");
        let complete = ["inner-banner", "user-field"]
            .iter()
            .all(|id| has(tree, |n| n.identifier.as_deref() == Some(*id)).is_some())
            && cards_in(tree) == 2;
        if complete {
            break obs;
        }
        assert!(
            since.elapsed() < std::time::Duration::from_secs(10),
            "the frames' content in {:#?}\nframes: {}",
            tree.nodes
                .iter()
                .map(|n| (&n.stable_node_id, &n.role, &n.identifier))
                .collect::<Vec<_>>(),
            obs.metadata["frames"]
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    let frames_meta = obs.metadata["frames"].as_array().expect("frames metadata");
    assert_eq!(frames_meta.len(), 4, "{frames_meta:?}");
    assert!(frames_meta.iter().any(|f| f["outOfProcess"] == true));
    // Acting inside each kind of frame, through selectors.
    walk.ok(
        "setElementValue",
        json!({ "target": selector(json!({ "identifier": "user-field" })), "value": "ada" }),
    );
    walk.ok(
        "tapElement",
        json!({ "target": selector(json!({ "role": "button", "name": "Log in" })) }),
    );
    let q = walk.ok(
        "queryElements",
        json!({ "selector": { "identifier": "card" } }),
    );
    assert_eq!(q.output["total"], 2, "{}", q.output);
    let nodes = q.output["nodes"].as_array().expect("nodes");
    // Each card field by a reference built from the search's answer.
    for n in nodes {
        let node = json!({
            "observationId": q.output["observationId"],
            "context": q.output["context"],
            "stableNodeId": n["stableNodeId"],
        });
        walk.ok(
            "setElementValue",
            json!({ "target": { "kind": "node", "node": node }, "value": "4242" }),
        );
    }
    let q = walk.ok(
        "queryElements",
        json!({ "selector": { "identifier": "card", "value": "4242" } }),
    );
    assert_eq!(q.output["total"], 2, "{}", q.output);
    let waited = walk.ok(
        "waitForElement",
        // The page scrolled to the cards: the login frame is off screen.
        json!({ "selector": { "text": { "value": "hello ada" } }, "condition": "present" }),
    );
    assert_eq!(waited.output["matched"], true);
}

/// Where the walk goes its own way: shadow roots with slots (an assigned
/// child, an unassigned one, fallback content), hidden, invisible and
/// `aria-hidden` subtrees, `display: contents`, a `<select>` with an
/// `<optgroup>`, leaves, and a frame.
const SHADOWS: &str = r#"<!doctype html><html><head><title>Shadows</title></head><body>
<main>
<button class="b" id="plain">Plain</button>
<div hidden><button class="b" id="gone">Gone</button></div>
<div style="visibility:hidden"><button class="b" id="invisible">Invisible</button></div>
<div aria-hidden="true"><button class="b" id="muted">Muted</button><span class="b">muted text</span></div>
<x-card id="card"><button class="b" slot="action" id="slotted">Slotted</button><button class="b" id="unassigned">Unassigned</button></x-card>
<x-empty id="empty"></x-empty>
<div style="display:contents"><button class="b" id="contents">Contents</button></div>
<select id="pick" class="b"><option class="o">One</option><optgroup label="g"><option class="o">Two</option></optgroup></select>
<label class="b">Agree <input type="checkbox" class="b" id="agree"></label>
<svg class="b" width="10" height="10"><rect class="b" width="10" height="10"/></svg>
<div class="b" style="cursor:pointer">Clickable</div>
<iframe srcdoc="<button class='b' id='framed'>In frame</button>"></iframe>
</main>
<script>
customElements.define('x-card', class extends HTMLElement { constructor() { super(); const r = this.attachShadow({ mode: 'open' }); r.innerHTML = '<section><button class="b" id="inner">Inner</button><slot name="action"></slot></section>'; } });
customElements.define('x-empty', class extends HTMLElement { constructor() { super(); const r = this.attachShadow({ mode: 'open' }); r.innerHTML = '<slot><button class="b" id="fallback">Fallback</button></slot>'; } });
</script>
</body></html>"#;

/// A css selector is answered by the browser's own query, reading only
/// its matches and their ancestors: the answer is the whole walk's (the
/// same nodes, fields, parents and order), checked against a search
/// `within` the document's root, which walks it all.
#[test]
fn a_css_query_reads_only_its_matches_and_answers_as_the_whole_walk() {
    let _serial = common::serial();
    let web = TestServer::start(&[("/shadows", SHADOWS), ("/table", &pages::table(200))]);
    let b = Browser::connect(json!({ "treeSource": "walk" }));
    for (page, selectors) in [
        (
            "/shadows",
            &[
                ".b",
                "button",
                "option",
                "#inner",
                "x-card button",
                "section > button",
                "slot button",
                "svg, rect",
                "#gone",
                "main *",
            ][..],
        ),
        (
            "/table",
            &[
                "#people tbody tr:nth-child(200) button",
                "td",
                "tr:nth-child(2n) button",
            ][..],
        ),
    ] {
        b.goto(&web.url(page));
        std::thread::sleep(std::time::Duration::from_millis(300));
        let root = b.tree().nodes[0].stable_node_id.clone();
        for css in selectors {
            let query = |within: Option<&str>| {
                let mut args = json!({ "selector": { "css": css }, "limit": 200 });
                if let Some(w) = within {
                    args["within"] = json!(w);
                }
                let out = b.ok("queryElements", args);
                let tree = out
                    .resolved
                    .and_then(|o| o.ui_tree)
                    .expect("the partial tree");
                (out.output, tree.nodes)
            };
            let (fast, fast_tree) = query(None);
            let (whole, whole_tree) = query(Some(root.as_str()));
            // A search within a node stays in its frame; without one, the
            // frames are searched too (their nodes' ids start with `f`).
            let main_frame = |v: &Value| -> Vec<Value> {
                v["nodes"]
                    .as_array()
                    .expect("nodes")
                    .iter()
                    .filter(|n| {
                        !n["stableNodeId"]
                            .as_str()
                            .is_some_and(|i| i.starts_with('f'))
                    })
                    .cloned()
                    .collect()
            };
            let (fast_main, whole_main) = (main_frame(&fast), main_frame(&whole));
            let framed = fast["nodes"].as_array().map_or(0, Vec::len) - fast_main.len();
            assert_eq!(
                fast["total"].as_u64(),
                whole["total"].as_u64().map(|t| t + framed as u64),
                "{page} {css}"
            );
            assert_eq!(fast_main, whole_main, "{page} {css}");
            // The matches' ancestors as the walk has them (the partial tree
            // searched within the root holds the same chains).
            let chain = |nodes: &[UiNode], id: &str| {
                let mut out = Vec::new();
                let mut at = nodes.iter().find(|n| n.stable_node_id.as_str() == id);
                while let Some(n) = at {
                    out.push((
                        n.stable_node_id.clone(),
                        n.role.clone(),
                        n.name.clone(),
                        n.bounds,
                    ));
                    at = n
                        .parent_stable_node_id
                        .as_ref()
                        .and_then(|p| nodes.iter().find(|m| &m.stable_node_id == p));
                }
                out
            };
            for n in &fast_main {
                let id = n["stableNodeId"].as_str().expect("an id");
                assert_eq!(
                    chain(&fast_tree, id),
                    chain(&whole_tree, id),
                    "{page} {css} {id}"
                );
            }
            if *css == ".b" {
                // Shadow content, slotted and fallback elements are found;
                // what the walk never reaches is not.
                let ids: BTreeSet<&str> = fast["nodes"]
                    .as_array()
                    .expect("nodes")
                    .iter()
                    .filter_map(|n| n["identifier"].as_str())
                    .collect();
                for id in [
                    "plain", "inner", "slotted", "fallback", "contents", "agree", "framed",
                ] {
                    assert!(ids.contains(id), "{id} in {ids:?}");
                }
                for id in ["gone", "unassigned"] {
                    assert!(!ids.contains(id), "{id} in {ids:?}");
                }
            }
        }
    }
}
