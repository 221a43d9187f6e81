//! Replay you can trust, measured: the heal-accuracy suite. Five flows a
//! person goes through in real Chromium — sign in, edit a table row,
//! follow an article's link, fill a form with a select, confirm inside a
//! frame — are recorded by coordinates through a shared host, then every
//! page is changed the ways real pages change (moved, resized,
//! relabelled, identifiers renamed, reordered, wrapped, copied,
//! duplicated, covered, below the fold, removed, replaced, hidden) and
//! `devicerail replay --json` runs on each; the mock's changes screen adds
//! its own. The pages report what each click reached, so a test knows
//! whether an Action landed on the right element.
//!
//! Counted: correct heals of the healable (every recorded element reached
//! again, nothing else), false heals (any Action that reached another
//! element — a covering one included — or a replay that claims success
//! where the element is gone) and correct divergences (stopped before
//! acting on anything else). Asserted: at least 100 mutations, 95 %
//! correct heals, no false heal, 95 % correct divergences. The table is
//! printed (`--show-output`) and kept in `docs/HEALING.md`.
//!
//! Four cases have their own test too: a covering element, an id change,
//! an element below the fold and an ambiguous pair.

mod heal;
mod support;

use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use devicerail_host_testing::host_process::HostProcess;
use serde_json::{Value, json};
use support::client::{BlockingHost, LaunchBlocking as _, action};

use heal::pages::{self, Expect, Variant};
use heal::server::Server;

/// One Chromium at a time: the tests of this binary take turns.
static SERIAL: Mutex<()> = Mutex::new(());

const BROWSER: &str = "browser-chromium";

/// A shared host serving the mock and Chromium, and the pages' server.
struct Lab {
    host: HostProcess,
    socket: PathBuf,
    root: tempfile::TempDir,
    server: Server,
}

impl Lab {
    fn start() -> Self {
        devicerail_plugin_browser::binary::find(None).expect(
            "these tests drive a real Chromium (Debian: apt-get install -y chromium, or set CHROME_PATH)",
        );
        let root = tempfile::tempdir().expect("tempdir");
        let plugins = support::plugins_dir_with_mock(root.path());
        let browser = devicerail_host_testing::build_workspace_plugin(
            "devicerail-host-plugin-browser",
            "browser",
        );
        std::fs::copy(&browser, plugins.join("libdevicerail_plugin_browser.so"))
            .expect("copy the browser plugin");
        let socket = root.path().join("run").join("host.sock");
        let mut cmd = HostProcess::serve_command(
            Path::new(env!("CARGO_BIN_EXE_devicerail")),
            &plugins,
            &root.path().join("data"),
        );
        let mut listen = std::ffi::OsString::from("unix:");
        listen.push(&socket);
        cmd.arg("--listen").arg(listen);
        let host = HostProcess::spawn(cmd);
        let deadline = Instant::now() + Duration::from_secs(30);
        while UnixStream::connect(&socket).is_err() {
            assert!(Instant::now() < deadline, "the host never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            host,
            socket,
            root,
            server: Server::start(),
        }
    }

    /// Runs `steps` in a Session on `device` of a client of its own;
    /// returns the Session id.
    fn session(&self, device: &str, steps: impl FnOnce(&BlockingHost)) -> String {
        let c = BlockingHost::attach(&self.socket, "e2e-heal");
        c.ok_json("device.select", Some(json!({ "deviceId": device })));
        let id = c.ready_session();
        steps(&c);
        c.ok_json("session.end", None);
        c.finish_owned();
        id
    }

    /// `devicerail replay SESSION --json ARGS` on the shared host.
    fn replay(&self, session: &str, args: &[&str]) -> (Output, Value) {
        let root = self.root.path();
        let data = root.join("data").display().to_string();
        let html = root.join("replay.html").display().to_string();
        let mut all = vec![
            "replay",
            session,
            "--json",
            "--data-dir",
            &data,
            "--out",
            &html,
        ];
        all.extend(args);
        let o = Command::new(env!("CARGO_BIN_EXE_devicerail"))
            .args(&all)
            .env("RUST_LOG", "warn")
            .env("DEVICERAIL_SOCKET", &self.socket)
            .env_remove("DEVICERAIL_CONFIG")
            .output()
            .expect("run devicerail");
        let summary = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
        (o, summary)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("shared host stderr:\n{}", self.host.stderr());
        }
    }
}

/// The centre of the element whose identifier is `id` on the screen now
/// (as a person sees it), and the Observation it was read from.
fn find(h: &BlockingHost, id: &str) -> ((u32, u32), Value, Value) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let obs = h.ok_json("device.observe", None);
        let tree = h.ok_json(
            "ui.snapshot.get",
            Some(json!({ "observationId": obs["id"] })),
        );
        let node = tree["nodes"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["identifier"] == id))
            .cloned();
        if let Some(node) = node {
            let b = &node["bounds"];
            let x = b["x"].as_f64().unwrap_or(0.0) + b["width"].as_f64().unwrap_or(0.0) / 2.0;
            let y = b["y"].as_f64().unwrap_or(0.0) + b["height"].as_f64().unwrap_or(0.0) / 2.0;
            return ((x.round() as u32, y.round() as u32), obs, node);
        }
        assert!(Instant::now() < deadline, "no element #{id} on the page");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn tap_at(h: &BlockingHost, (x, y): (u32, u32)) {
    h.ok_json(
        "device.execute",
        Some(action("tap", json!({ "x": x, "y": y }))),
    );
}

fn tap_on(h: &BlockingHost, id: &str) {
    let (at, _, _) = find(h, id);
    tap_at(h, at);
}

fn type_text(h: &BlockingHost, text: &str) {
    h.ok_json(
        "device.execute",
        Some(action("inputText", json!({ "text": text }))),
    );
}

fn navigate(h: &BlockingHost, url: &str) {
    h.ok_json(
        "device.execute",
        Some(action("navigate", json!({ "url": url }))),
    );
}

/// One flow: its page(s), and how a person goes through it.
struct Flow {
    name: &'static str,
    path: &'static str,
    /// Sets the flow's pages for a variant.
    pages: fn(&Server, &Variant),
    /// Goes through it on the original page (by coordinates).
    record: fn(&BlockingHost, &str),
}

fn flows() -> Vec<Flow> {
    vec![
        Flow {
            name: "sign-in",
            path: "/signin",
            pages: |s, v| s.set("/signin", pages::sign_in(v)),
            record: |h, url| {
                navigate(h, url);
                tap_on(h, "username");
                type_text(h, "ada");
                tap_on(h, "password");
                type_text(h, "pw-1");
                tap_on(h, "submit");
            },
        },
        Flow {
            name: "table row",
            path: "/table",
            pages: |s, v| s.set("/table", pages::table(v)),
            record: |h, url| {
                navigate(h, url);
                tap_on(h, "edit-12");
                tap_on(h, "name");
                type_text(h, "Zed");
                tap_on(h, "save");
            },
        },
        Flow {
            name: "article link",
            path: "/article",
            pages: |s, v| {
                s.set("/article", pages::article(v));
                for n in 0..18 {
                    s.set(&format!("/ref/{n}"), pages::reference(n));
                }
            },
            record: |h, url| {
                navigate(h, url);
                tap_on(h, "ref-7");
            },
        },
        Flow {
            name: "form with a select",
            path: "/form",
            pages: |s, v| s.set("/form", pages::form(v)),
            record: |h, url| {
                navigate(h, url);
                // Typed into the field by node: one targeted inputText.
                let (_, obs, node) = find(h, "name");
                h.ok_json(
                    "device.execute",
                    Some(action(
                        "inputText",
                        json!({ "text": "Bo", "target": { "kind": "node", "node": {
                            "observationId": obs["id"],
                            "context": obs["uiSnapshot"]["context"],
                            "stableNodeId": node["stableNodeId"],
                        } } }),
                    )),
                );
                let (_, obs, node) = find(h, "country");
                h.ok_json(
                    "device.execute",
                    Some(action(
                        "setElementValue",
                        json!({ "target": { "kind": "node", "node": {
                            "observationId": obs["id"],
                            "context": obs["uiSnapshot"]["context"],
                            "stableNodeId": node["stableNodeId"],
                        } }, "value": "fr" }),
                    )),
                );
                tap_on(h, "agree");
                tap_on(h, "submit");
            },
        },
        Flow {
            name: "frame",
            path: "/checkout",
            pages: |s, v| {
                s.set("/checkout", pages::framed(v));
                s.set("/inner", pages::inner(v));
            },
            record: |h, url| {
                navigate(h, url);
                tap_on(h, "confirm");
            },
        },
    ]
}

/// How one replay went, as counted.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    /// Every recorded element reached again, nothing else.
    Healed,
    /// Stopped (or diverged) before acting on anything else.
    Diverged,
    /// An Action reached another element, or the replay claimed success
    /// where it could not.
    FalseHeal(String),
    /// Diverged where a heal was possible (nothing wrong was done).
    Missed,
}

/// One row of the suite.
#[derive(Debug, Clone)]
struct Case {
    flow: String,
    mutation: String,
    expect: Expect,
    outcome: Outcome,
    note: String,
}

/// Classifies a replay from its summary and the probes it caused against
/// the probes of the recording.
fn classify(expect: Expect, summary: &Value, probes: &[String], recorded: &[String]) -> Outcome {
    let ok = summary["diverged"] == 0 && summary["stopped"].is_null() && summary.is_object();
    let prefix = probes.len() <= recorded.len() && recorded[..probes.len()] == *probes;
    if !prefix {
        return Outcome::FalseHeal(format!("reached {probes:?}, recorded {recorded:?}"));
    }
    match (expect, ok, probes.len() == recorded.len()) {
        (Expect::Heal, true, true) => Outcome::Healed,
        (Expect::Heal, true, false) => {
            Outcome::FalseHeal(format!("claimed success but reached only {probes:?}"))
        }
        (Expect::Heal, false, _) => Outcome::Missed,
        (Expect::Diverge, false, _) => Outcome::Diverged,
        (Expect::Diverge, true, _) => {
            Outcome::FalseHeal(format!("claimed success on a changed page ({probes:?})"))
        }
    }
}

/// The note of the first step that did not match (or the stop reason).
fn note_of(summary: &Value) -> String {
    summary["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|st| st["verdict"] != "matched"))
        .map(|st| {
            format!(
                "step {} {}: {}",
                st["number"],
                st["verdict"].as_str().unwrap_or(""),
                st["note"].as_str().unwrap_or("")
            )
        })
        .unwrap_or_default()
}

/// Records `flow` on its original page; the Session and its probes.
fn record(lab: &Lab, flow: &Flow) -> (String, Vec<String>) {
    (flow.pages)(&lab.server, &Variant::default());
    lab.server.take_probes();
    let url = lab.server.url(flow.path);
    let session = lab.session(BROWSER, |h| (flow.record)(h, &url));
    let probes = lab.server.take_probes();
    assert!(
        !probes.is_empty(),
        "{}: the recording reached nothing",
        flow.name
    );
    (session, probes)
}

/// Replays `session` of `flow` on `variant`.
fn run_case(
    lab: &Lab,
    flow: &Flow,
    session: &str,
    recorded: &[String],
    (mutation, variant, expect): (&str, Variant, Expect),
) -> (Case, Value) {
    (flow.pages)(&lab.server, &variant);
    lab.server.clear();
    let t = Instant::now();
    let (o, summary) = lab.replay(session, &[]);
    let took = t.elapsed();
    assert!(
        summary.is_object(),
        "{} / {mutation}: no summary\n{}",
        flow.name,
        String::from_utf8_lossy(&o.stderr)
    );
    let probes = lab.server.take_probes();
    let outcome = classify(expect, &summary, &probes, recorded);
    let mut summary = summary;
    summary["tookMs"] = json!(took.as_millis() as u64);
    (
        Case {
            flow: flow.name.to_owned(),
            mutation: mutation.to_owned(),
            expect,
            outcome,
            note: note_of(&summary),
        },
        summary,
    )
}

/// A change of the mock's screen: its name, the controls pressed, and
/// what a replay must do.
type MockChange = (&'static str, &'static [(u32, u32)], Expect);

/// The mock's changes screen: Save pressed by coordinates, then changed
/// through the screen's own controls (see the mock's `screens`); what a
/// replay's tap reached is the mock's own answer (`output.hit`).
fn mock_cases(lab: &Lab) -> Vec<Case> {
    let tap = |h: &BlockingHost, x: u32, y: u32| -> Value {
        h.ok_json(
            "device.execute",
            Some(action("tap", json!({ "x": x, "y": y }))),
        )
    };
    let launch = |h: &BlockingHost| {
        h.ok_json(
            "device.execute",
            Some(action("launchApp", json!({ "appId": "changes" }))),
        );
    };
    let recorded = lab.session("mock-1", |h| {
        launch(h);
        h.ok_json("device.observe", None);
        assert_eq!(tap(h, 360, 350)["output"]["hit"], "save");
    });
    // The controls: Remove Save (185, 930), Insert banner (535, 930),
    // Replace Save (185, 1050), Duplicate Save (535, 1050), Reset
    // (185, 1170), Cover Save (535, 1170), Rename Save (185, 1255).
    let changes: &[MockChange] = &[
        ("unchanged", &[], Expect::Heal),
        ("moved by a banner", &[(535, 930)], Expect::Heal),
        (
            "copied below, no id tells them apart",
            &[(535, 1050)],
            Expect::Diverge,
        ),
        ("id added and renamed", &[(185, 1255)], Expect::Heal),
        (
            "moved and id renamed",
            &[(535, 930), (185, 1255)],
            Expect::Heal,
        ),
        ("removed", &[(185, 930)], Expect::Diverge),
        (
            "replaced by another control",
            &[(185, 1050)],
            Expect::Diverge,
        ),
        (
            "removed, banner above",
            &[(185, 930), (535, 930)],
            Expect::Diverge,
        ),
        (
            "covered by a cookie banner",
            &[(535, 1170)],
            Expect::Diverge,
        ),
        (
            "covered, then moved from under the cover",
            &[(535, 1170), (535, 930)],
            Expect::Heal,
        ),
    ];
    let mut out = Vec::new();
    for (name, presses, expect) in changes {
        lab.session("mock-1", |h| {
            launch(h);
            tap(h, 185, 1170); // Reset
            for &(x, y) in *presses {
                tap(h, x, y);
            }
        });
        let (_, summary) = lab.replay(&recorded, &["--from", "2"]);
        // The mock names what a tap hit by its element id, which the
        // rename changes: the renamed Save is still Save.
        let hits: Vec<String> = mock_hits(lab, &summary)
            .into_iter()
            .map(|h| {
                if h == "store-action" {
                    "save".to_owned()
                } else {
                    h
                }
            })
            .collect();
        out.push(Case {
            flow: "mock changes".into(),
            mutation: (*name).to_owned(),
            expect: *expect,
            outcome: classify(*expect, &summary, &hits, &["save".to_owned()]),
            note: note_of(&summary),
        });
    }
    out
}

/// What the taps of a replay on the mock hit (the mock's tap output names
/// the element), read from the replay's Session.
fn mock_hits(lab: &Lab, summary: &Value) -> Vec<String> {
    let Some(session) = summary["session"].as_str() else {
        return Vec::new();
    };
    let c = BlockingHost::attach(&lab.socket, "e2e-heal-read");
    let export = c.ok_json("session.export", Some(json!({ "sessionId": session })));
    c.finish_owned();
    export["events"]
        .as_array()
        .map(|events| {
            events
                .iter()
                .filter(|e| e["payload"]["type"] == "actionCompleted")
                .filter_map(|e| e["payload"]["outcome"]["result"]["output"]["hit"].as_str())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The suite's table, as Markdown.
fn table(cases: &[Case]) -> String {
    let healable: Vec<&Case> = cases.iter().filter(|c| c.expect == Expect::Heal).collect();
    let divergent: Vec<&Case> = cases
        .iter()
        .filter(|c| c.expect == Expect::Diverge)
        .collect();
    let healed = healable
        .iter()
        .filter(|c| c.outcome == Outcome::Healed)
        .count();
    let diverged = divergent
        .iter()
        .filter(|c| c.outcome == Outcome::Diverged)
        .count();
    let false_heals = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::FalseHeal(_)))
        .count();
    let pct = |a: usize, b: usize| {
        if b == 0 {
            100.0
        } else {
            100.0 * a as f64 / b as f64
        }
    };
    let mut out = String::new();
    out.push_str(&format!(
        "| measure | count | share | target |\n|---|---|---|---|\n\
         | mutations | {} | | ≥ 100 |\n\
         | correct heals of the healable | {healed} of {} | {:.1} % | ≥ 95 % |\n\
         | false heals (an Action on another element) | {false_heals} | | 0 |\n\
         | correct divergences | {diverged} of {} | {:.1} % | ≥ 95 % |\n\n",
        cases.len(),
        healable.len(),
        pct(healed, healable.len()),
        divergent.len(),
        pct(diverged, divergent.len()),
    ));
    out.push_str(
        "| flow | change | expected | outcome | first step not matched |\n|---|---|---|---|---|\n",
    );
    for c in cases {
        out.push_str(&format!(
            "| {} | {} | {:?} | {:?} | {} |\n",
            c.flow,
            c.mutation,
            c.expect,
            c.outcome,
            c.note.replace('|', "/")
        ));
    }
    out
}

#[test]
fn heal_accuracy_suite_meets_its_targets() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let lab = Lab::start();
    let mut cases = Vec::new();
    let mut overheads: Vec<u64> = Vec::new();
    let t0 = Instant::now();
    for flow in flows() {
        let (session, recorded) = record(&lab, &flow);
        for m in pages::mutations() {
            let (case, summary) = run_case(&lab, &flow, &session, &recorded, m);
            cases.push(case);
            overheads.extend(
                summary["steps"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|st| {
                        Some(
                            st["stepMs"]
                                .as_u64()?
                                .saturating_sub(st["actionMs"].as_u64()?),
                        )
                    }),
            );
        }
    }
    let chromium = t0.elapsed();
    cases.extend(mock_cases(&lab));
    let text = table(&cases);
    overheads.sort_unstable();
    let at = |q: f64| overheads[((overheads.len() as f64 * q).ceil() as usize).max(1) - 1];
    println!(
        "heal-accuracy suite\n{text}\nreplay overhead per step in Chromium: p50 {} ms, p95 {} ms over {} steps; {} Chromium replays in {:.0} s",
        at(0.5),
        at(0.95),
        overheads.len(),
        cases.len() - 10,
        chromium.as_secs_f64()
    );
    let healable: Vec<&Case> = cases.iter().filter(|c| c.expect == Expect::Heal).collect();
    let divergent: Vec<&Case> = cases
        .iter()
        .filter(|c| c.expect == Expect::Diverge)
        .collect();
    let healed = healable
        .iter()
        .filter(|c| c.outcome == Outcome::Healed)
        .count();
    let diverged = divergent
        .iter()
        .filter(|c| c.outcome == Outcome::Diverged)
        .count();
    let false_heals: Vec<&Case> = cases
        .iter()
        .filter(|c| matches!(c.outcome, Outcome::FalseHeal(_)))
        .collect();
    assert!(cases.len() >= 100, "{} mutations", cases.len());
    assert!(
        false_heals.is_empty(),
        "false heals: {false_heals:#?}\n{text}"
    );
    assert!(
        healed * 100 >= healable.len() * 95,
        "{healed} of {} healed\n{text}",
        healable.len()
    );
    assert!(
        diverged * 100 >= divergent.len() * 95,
        "{diverged} of {} diverged\n{text}",
        divergent.len()
    );
}

/// Runs one flow on one change; its case and the replay's summary.
fn one(flow: &str, mutation: &str) -> (Case, Value) {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let lab = Lab::start();
    let flow = flows().into_iter().find(|f| f.name == flow).expect("flow");
    let m = pages::mutations()
        .into_iter()
        .find(|m| m.0 == mutation)
        .expect("mutation");
    let (session, recorded) = record(&lab, &flow);
    let (case, summary) = run_case(&lab, &flow, &session, &recorded, m);
    let times: Vec<String> = summary["steps"]
        .as_array()
        .map(|s| {
            s.iter()
                .map(|st| {
                    format!(
                        "{}: {} of {} ms",
                        st["action"], st["actionMs"], st["stepMs"]
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    println!(
        "{} / {}: overhead {}; {times:?}; the replay took {} ms",
        case.flow, case.mutation, summary["overhead"], summary["tookMs"]
    );
    (case, summary)
}

#[test]
fn a_covering_cookie_banner_stops_the_replay_and_nothing_reaches_it() {
    let (case, summary) = one("sign-in", "covered by a cookie banner");
    assert_eq!(case.outcome, Outcome::Diverged, "{summary:#}");
    let step = summary["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|st| st["verdict"] == "diverged"))
        .cloned()
        .expect("a diverged step");
    assert!(
        step["coveredBy"]
            .as_str()
            .is_some_and(|b| b.contains("cookie") || b.contains("Accept")),
        "{step:#}"
    );
    assert!(
        step["note"]
            .as_str()
            .is_some_and(|n| n.contains("covered by") && n.contains("nothing was sent")),
        "{step:#}"
    );
}

#[test]
fn renamed_ids_heal_by_what_the_elements_are() {
    let (case, summary) = one("sign-in", "ids renamed");
    assert_eq!(case.outcome, Outcome::Healed, "{summary:#}");
    let healed: Vec<&Value> = summary["steps"]
        .as_array()
        .map(|s| s.iter().filter(|st| st["verdict"] == "healed").collect())
        .unwrap_or_default();
    assert!(!healed.is_empty(), "{summary:#}");
    assert!(
        healed
            .iter()
            .all(|st| st["heal"]["foundBy"] == "score" && st["heal"]["why"].is_string()),
        "{summary:#}"
    );
}

#[test]
fn an_element_below_the_fold_is_scrolled_to() {
    let (case, summary) = one("sign-in", "below the fold");
    assert_eq!(case.outcome, Outcome::Healed, "{summary:#}");
}

#[test]
fn an_ambiguous_pair_diverges_naming_both() {
    let (case, summary) = one("sign-in", "duplicated, same id");
    assert_eq!(case.outcome, Outcome::Diverged, "{summary:#}");
    assert!(summary["stopped"].is_string(), "{summary:#}");
    // The step it stopped at: its last.
    let step = summary["steps"]
        .as_array()
        .and_then(|s| s.last())
        .cloned()
        .expect("a step");
    assert!(
        step["note"]
            .as_str()
            .is_some_and(|n| n.contains("ambiguous")),
        "{step:#}"
    );
    assert!(
        step["candidates"].as_array().is_some_and(|c| c.len() >= 2),
        "{step:#}"
    );
}

/// `devicerail export --script playwright` of recorded Chromium Sessions
/// (a form with a select, a frame), run by `playwright-core` on the same
/// Chromium: the pages report the same elements reached, in the same
/// order, as the recording.
#[test]
fn chromium_sessions_export_to_playwright_and_reach_the_same_elements() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let bench = support::python::workspace_root().join("plugins/browser/bench-playwright");
    let modules = bench.join("node_modules");
    if !modules.join("playwright-core").exists() {
        assert!(
            std::env::var("DEVICERAIL_REQUIRE_PLAYWRIGHT").as_deref() != Ok("1"),
            "run `npm ci` in plugins/browser/bench-playwright"
        );
        println!("playwright export: SKIPPED: `npm ci` in plugins/browser/bench-playwright first");
        return;
    }
    let chromium = devicerail_plugin_browser::binary::find(None).expect("Chromium");
    let lab = Lab::start();
    let dir = tempfile::tempdir().expect("tempdir");
    std::os::unix::fs::symlink(&modules, dir.path().join("node_modules")).expect("link modules");
    for name in ["form with a select", "frame", "sign-in"] {
        let flow = flows().into_iter().find(|f| f.name == name).expect("flow");
        let (session, recorded) = record(&lab, &flow);
        let script = dir.path().join("replay.mjs");
        let data = lab.root.path().join("data").display().to_string();
        let o = Command::new(env!("CARGO_BIN_EXE_devicerail"))
            .args([
                "export",
                &session,
                "--script",
                "playwright",
                "--data-dir",
                &data,
                "--out",
            ])
            .arg(&script)
            .env("RUST_LOG", "warn")
            .output()
            .expect("export");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(&script).expect("script");
        assert!(
            !text.contains("page.mouse.click"),
            "every tap by what it reached:\n{text}"
        );
        lab.server.clear();
        let run = Command::new("node")
            .arg(&script)
            .env("CHROME_PATH", &chromium)
            .output()
            .expect("node");
        assert!(
            run.status.success(),
            "{name}: {}\n{}\n{text}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        );
        let out: Value = serde_json::from_slice(&run.stdout).expect("the script prints JSON");
        assert_eq!(out["replays"], session.as_str());
        assert_eq!(lab.server.take_probes(), recorded, "{name}:\n{text}");
    }
}
