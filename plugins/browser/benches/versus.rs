//! The browser driver side by side with Playwright, on the same pages and
//! the same Chromium, alternating blocks of runs, medians reported.
//!
//! * Ours: through the real host binary, as a client would (the official
//!   Rust client over stdio): `device.observe` (screenshot + UI tree,
//!   stored durably) and `tapElement`.
//! * Playwright: `playwright-core` (pinned in `bench-playwright/`,
//!   installed with `npm ci`) launched on the same binary with the same
//!   flags and viewport.
//! * Equal work, each pair named: observe against `page.screenshot()` +
//!   `ariaSnapshot()` (the frames page in Playwright's `ai` mode, the one
//!   that includes frames' contents); a tap without evidence (a host
//!   with `screenshotPolicy = "omit"` and `afterActionTree = false`)
//!   against `page.click()`; a tap with its after-Action screenshot and
//!   tree against `page.click()` + `page.screenshot()` +
//!   `ariaSnapshot()`. Both sides are timed at the same boundary: here,
//!   around the request to the host or to the Playwright process and its
//!   answer.
//! * Reachability: every row of a 1,000-row table and every link of a
//!   3,000-word article, by selector and by tapping.
//!
//! Run: `cargo bench -p devicerail-host-plugin-browser --bench versus`
//! (needs Chromium and node; `npm ci` in `plugins/browser/bench-playwright`
//! first). `VERSUS_ROUNDS` (default 6) and `VERSUS_BLOCK` (default 5) set
//! the rounds of alternating blocks and the runs per block.
//!
//! Observe is measured twice: back to back, and with a pause before each
//! call (`VERSUS_PAUSE_MS`, default 100: a client's think time between
//! looks). Chromium answers a screenshot after its next compositor frame;
//! a capture asked for right after the last one waits about a frame
//! longer than one asked for after a pause, on both sides.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/pages/mod.rs"]
mod pages;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

use common::TestServer;
use devicerail_client::methods::{DeviceConnect, DeviceObserve, SessionStart};
use devicerail_host_testing::build_workspace_plugin;
use devicerail_host_testing::client::{HostClient, wire};
use serde_json::{Value, json};

const ROWS: usize = 1_000;
const LINKS: usize = 70;

/// The Playwright side: `run.mjs` over JSON lines.
struct Playwright {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Playwright {
    fn start(dir: &Path) -> Self {
        assert!(
            dir.join("node_modules/playwright-core").exists(),
            "run `npm ci` in {} first",
            dir.display()
        );
        let mut child = Command::new("node")
            .arg("run.mjs")
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("node: {e}"));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut p = Self {
            child,
            stdin,
            stdout,
        };
        let ready = p.read();
        eprintln!("playwright-core on Chromium {}", ready["version"]);
        p
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read from node");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    fn ask(&mut self, req: Value) -> Value {
        writeln!(self.stdin, "{req}").expect("write to node");
        let v = self.read();
        assert!(v.get("error").is_none(), "{req} -> {v}");
        v
    }

    fn ms(&mut self, req: Value) -> f64 {
        self.ask(req)["ms"].as_f64().expect("ms")
    }

    /// `req` timed here, around the request and its answer (the boundary
    /// our side is timed at).
    fn wall(&mut self, req: Value) -> f64 {
        let t = Instant::now();
        self.ask(req);
        ms_since(t)
    }
}

impl Drop for Playwright {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "{}", json!({ "op": "quit" }));
        let _ = self.child.wait();
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

struct Ours {
    host: HostClient,
}

impl Ours {
    fn execute(&self, name: &str, args: Value) -> Value {
        wire(self.host.execute(name, args))
    }

    fn try_execute(&self, name: &str, args: Value) -> bool {
        self.host.execute(name, args).is_ok()
    }

    fn goto(&self, url: &str) {
        self.execute("navigate", json!({ "url": url }));
    }

    /// One observe: ms, tree nodes.
    fn observe(&self) -> (f64, usize) {
        let t = Instant::now();
        let obs = wire(Ok(self.host.ok0::<DeviceObserve>()));
        let ms = ms_since(t);
        let nodes = obs["uiSnapshot"]["nodeCount"].as_u64().unwrap_or(0) as usize;
        (ms, nodes)
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        // `cargo bench -- --list` asks for benchmark names.
        println!("versus: bench");
        return;
    }
    let rounds = env_usize("VERSUS_ROUNDS", 6);
    let block = env_usize("VERSUS_BLOCK", 5);
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-playwright");
    common::require_browser();

    let other = TestServer::start(&[("/pay", &pages::pay())]);
    let other_port = other
        .url("/")
        .rsplit(':')
        .next()
        .map(|p| p.trim_end_matches('/').to_owned())
        .expect("a port");
    let frames = pages::frames(
        &format!("http://127.0.0.1:{other_port}/pay"),
        &format!("http://localhost:{other_port}/pay"),
    );
    let web = TestServer::start(&[
        ("/login", &pages::login()),
        ("/table", &pages::table(ROWS)),
        ("/article", &pages::article(3_000, LINKS)),
        ("/frames", &frames),
        ("/inner", &pages::inner()),
    ]);

    let lib = build_workspace_plugin("devicerail-host-plugin-browser", "browser");
    let bare_config = tempfile::tempdir().expect("tempdir");
    let bare_file = bare_config.path().join("devicerail.toml");
    std::fs::write(
        &bare_file,
        "[host]\nscreenshotPolicy = \"omit\"\nafterActionTree = false\n",
    )
    .expect("write the configuration");
    let bare_file = bare_file.to_string_lossy().into_owned();
    let start = |source: &str, extra: &[(&str, &str)]| {
        let mut env = vec![
            ("DEVICERAIL_BROWSER_VIEWPORT", "1280x800"),
            ("DEVICERAIL_BROWSER_TREE_SOURCE", source),
        ];
        env.extend_from_slice(extra);
        let host = HostClient::start(std::slice::from_ref(&lib), &env);
        host.ok0::<DeviceConnect>();
        host.ok0::<SessionStart>();
        Ours { host }
    };
    // The in-page walk (the default), the accessibility tree path measured
    // beside it, and a host that keeps no evidence.
    let ours = start("walk", &[]);
    let ours_ax = start("ax", &[]);
    let ours_bare = start("walk", &[("DEVICERAIL_CONFIG", bare_file.as_str())]);
    let mut pw = Playwright::start(&dir);
    let load_before = load_average();

    println!(
        "| page | pause before each (ms) | our observe, walk (ms) | our observe, AX tree (ms) | Playwright screenshot + ariaSnapshot (ms) | ratio walk / Playwright | our tree nodes | aria chars | aria mode |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    let pause_ms = env_usize("VERSUS_PAUSE_MS", 100) as u64;
    for (page, pause) in ["/login", "/table", "/article", "/frames"]
        .into_iter()
        .flat_map(|page| [(page, 0), (page, pause_ms)])
    {
        let think = || std::thread::sleep(std::time::Duration::from_millis(pause));
        let url = web.url(page);
        ours.goto(&url);
        ours_ax.goto(&url);
        pw.ms(json!({ "op": "goto", "url": url }));
        if page == "/frames" {
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
        // Playwright's default outline leaves frames' contents out; `ai`
        // includes them.
        let mode = if page == "/frames" { "ai" } else { "default" };
        let observe = json!({ "op": "observe", "mode": mode });
        // Warm all three.
        let (_, nodes) = ours.observe();
        ours_ax.observe();
        let chars = pw.ask(observe.clone())["chars"].as_u64().unwrap_or(0);
        let (mut a, mut x, mut b) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            for _ in 0..block {
                think();
                a.push(ours.observe().0);
            }
            for _ in 0..block {
                think();
                b.push(pw.wall(observe.clone()));
            }
            for _ in 0..block {
                think();
                x.push(ours_ax.observe().0);
            }
        }
        let (ma, mx, mb) = (median(&mut a), median(&mut x), median(&mut b));
        println!(
            "| {page} | {pause} | {ma:.1} | {mx:.1} | {mb:.1} | {:.2} | {nodes} | {chars} | {mode} |",
            ma / mb
        );
    }

    // Taps: the login form's button, and the last row's button of the
    // table (beyond the snapshot's bounds: found on the live page and
    // scrolled to), as two equal-work pairs.
    println!();
    println!(
        "| tap | ours: tapElement, no evidence (ms) | Playwright page.click (ms) | ratio | ours: tapElement + after screenshot and tree (ms) | Playwright click + screenshot + ariaSnapshot (ms) | ratio |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let last_row = format!("#people tbody tr:nth-child({ROWS}) button");
    for (page, css) in [("/login", "#sign-in"), ("/table", last_row.as_str())] {
        let url = web.url(page);
        ours.goto(&url);
        ours_bare.goto(&url);
        pw.ms(json!({ "op": "goto", "url": url }));
        let target = json!({ "target": { "kind": "selector", "selector": { "css": css } } });
        let tap = |host: &Ours, evidence: bool| {
            let t = Instant::now();
            let r = host.execute("tapElement", target.clone());
            let ms = ms_since(t);
            assert_eq!(
                r["after"]["screenshot"].is_object(),
                evidence,
                "the after-Action screenshot: {r}"
            );
            assert_eq!(
                r["after"]["uiSnapshot"].is_object(),
                evidence,
                "the after-Action tree: {r}"
            );
            ms
        };
        let click = json!({ "op": "click", "sel": css });
        let click_seen = json!({ "op": "clickSeen", "sel": css });
        tap(&ours_bare, false);
        tap(&ours, true);
        pw.wall(click.clone());
        pw.wall(click_seen.clone());
        let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..rounds {
            for _ in 0..block {
                a.push(tap(&ours_bare, false));
            }
            for _ in 0..block {
                b.push(pw.wall(click.clone()));
            }
            for _ in 0..block {
                c.push(tap(&ours, true));
            }
            for _ in 0..block {
                d.push(pw.wall(click_seen.clone()));
            }
        }
        let (ma, mb, mc, md) = (
            median(&mut a),
            median(&mut b),
            median(&mut c),
            median(&mut d),
        );
        println!(
            "| {page} `{css}` | {ma:.1} | {mb:.1} | {:.2} | {mc:.1} | {md:.1} | {:.2} |",
            ma / mb,
            mc / md
        );
    }

    // Reachability.
    let url = web.url("/table");
    ours.goto(&url);
    pw.ms(json!({ "op": "goto", "url": url }));
    let q = ours.execute(
        "queryElements",
        json!({ "selector": { "role": "cell", "text": { "value": "Person ", "mode": "contains" } }, "limit": 1 }),
    );
    let our_rows = q["output"]["total"].as_u64().unwrap_or(0);
    let mut our_found = 0;
    for i in (9..ROWS).step_by(10) {
        if ours.try_execute(
            "findElement",
            json!({ "selector": { "role": "cell", "name": pages::person(i) } }),
        ) {
            our_found += 1;
        }
    }
    let sample = [0usize, 499, 887, 998, 999];
    let mut our_taps = 0;
    let mut pw_taps = 0;
    for i in sample {
        let css = format!("#people tbody tr:nth-child({}) button", i + 1);
        if ours.try_execute(
            "tapElement",
            json!({ "target": { "kind": "selector", "selector": { "css": css } } }),
        ) {
            our_taps += 1;
        }
        if pw
            .ask(json!({ "op": "click", "sel": css }))
            .get("ms")
            .is_some()
        {
            pw_taps += 1;
        }
    }
    let pw_rows = pw.ask(json!({ "op": "count", "sel": "#people tbody tr" }))["count"]
        .as_u64()
        .unwrap_or(0);
    let url = web.url("/article");
    ours.goto(&url);
    pw.ms(json!({ "op": "goto", "url": url }));
    let q = ours.execute(
        "queryElements",
        json!({ "selector": { "role": "link", "text": { "value": "Reference", "mode": "contains" } }, "limit": 1 }),
    );
    let our_links = q["output"]["total"].as_u64().unwrap_or(0);
    let mut our_link_found = 0;
    for i in 0..LINKS {
        if ours.try_execute(
            "findElement",
            json!({ "selector": { "role": "link", "name": pages::link_title(i) } }),
        ) {
            our_link_found += 1;
        }
    }
    let pw_links = pw.ask(json!({ "op": "count", "sel": "article a" }))["count"]
        .as_u64()
        .unwrap_or(0);
    // The last link, tapped (it navigates).
    let last = pages::link_title(LINKS - 1);
    let our_link_tap = ours.try_execute(
        "tapElement",
        json!({ "target": { "kind": "selector", "selector": { "role": "link", "name": last } } }),
    );
    let pw_link_tap = pw
        .ask(json!({ "op": "clickRole", "role": "link", "name": last }))
        .get("ms")
        .is_some();
    println!();
    println!("| reachability | ours | Playwright |");
    println!("| --- | --- | --- |");
    println!(
        "| table rows found (of {ROWS}) | {our_rows} (queryElements) | {pw_rows} (locator count) |"
    );
    println!(
        "| every 10th row by findElement {{role: cell, name}} | {our_found}/{} | - |",
        ROWS / 10
    );
    println!("| rows 1, 500, 888, 999, 1000 tapped by css | {our_taps}/5 | {pw_taps}/5 |");
    println!(
        "| article links found (of {LINKS}) | {our_links} (queryElements) | {pw_links} (locator count) |"
    );
    println!("| each link by findElement {{role: link, name}} | {our_link_found}/{LINKS} | - |");
    println!("| last link tapped | {our_link_tap} | {pw_link_tap} |");
    println!();
    println!(
        "rounds {rounds} x blocks of {block}, alternating; load average before {load_before}, after {}",
        load_average()
    );
}
