//! `FakeWda`: a fake WebDriverAgent HTTP server on a random 127.0.0.1
//! port. It speaks WDA's wire format (`{"value": ..., "sessionId": ...}`
//! envelopes, W3C error bodies and status codes, element references, the
//! JSON source tree, base64 PNG screenshots) over a small stateful UI, and
//! records every request so tests can check what crossed the wire.

pub mod app;
mod http;

use std::collections::{HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::render;
use crate::sim_state::{FAKE_APP, FakeSimState, SAFARI, SPRINGBOARD};
use app::{AppState, Behavior, El, Field};
use http::{Request, Response, Server};

/// The W3C element reference key.
pub(crate) const ELEMENT_KEY: &str = "element-6066-11e4-a52e-4f735466cecf";
/// Most requests kept in the log.
const MAX_LOG: usize = 20_000;

/// How a fake is set up.
#[derive(Debug, Clone)]
pub struct FakeWdaOptions {
    /// Window size in points.
    pub window: (f64, f64),
    /// Pixels per point.
    pub scale: f64,
    /// Share the app in front and the boot state with a fake simulator:
    /// (state file, UDID). When that simulator is not booted the fake
    /// drops every connection, as WDA dies with its simulator.
    pub sim: Option<(PathBuf, String)>,
    /// Extra table rows on the login screen (large trees for benches).
    pub extra_rows: usize,
    /// Report `XCUIElementTypeButton` instead of `Button` and serve taps
    /// only on the old `/wda/tap/0` route (older WDA builds).
    pub long_types: bool,
    /// Pixels per point of `GET /screenshot` when they differ from
    /// `scale` (a WDA that downscales captures, or reports a wrong scale).
    pub screenshot_scale: Option<f64>,
    /// Answer `GET /wda/activeAppInfo` as a build without it does: 404
    /// `unknown command`.
    pub no_active_app_info: bool,
}

impl Default for FakeWdaOptions {
    fn default() -> Self {
        Self {
            window: (375.0, 667.0),
            scale: 2.0,
            sim: None,
            extra_rows: 0,
            long_types: false,
            screenshot_scale: None,
            no_active_app_info: false,
        }
    }
}

/// One request as it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The HTTP method (`GET`, `POST`, `DELETE`).
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The request body as text (lossy UTF-8).
    pub body: String,
}

struct Inner {
    app: AppState,
    /// The app in front when no fake simulator is attached.
    foreground: String,
    sessions: HashSet<String>,
    next_session: u64,
    /// Bumped when the screen changes: older element ids become stale.
    generation: u64,
    last_screen: (String, String),
    /// Bumped on every visible change (keys the screenshot cache).
    revision: u64,
    ready: bool,
    screenshots_broken: bool,
    log: VecDeque<Recorded>,
    shot_cache: Option<(String, Value)>,
    swipes: Vec<Value>,
}

struct Shared {
    opts: FakeWdaOptions,
    inner: Mutex<Inner>,
}

/// A running fake WebDriverAgent.
pub struct FakeWda {
    server: Server,
    shared: Arc<Shared>,
}

fn ok(value: Value, session: Option<&str>) -> Option<Response> {
    Some(Response {
        status: 200,
        body: serde_json::to_vec(&json!({ "value": value, "sessionId": session }))
            .unwrap_or_default(),
    })
}

fn err(status: u16, error: &str, message: &str, session: Option<&str>) -> Option<Response> {
    Some(Response {
        status,
        body: serde_json::to_vec(&json!({
            "value": { "error": error, "message": message, "traceback": "" },
            "sessionId": session,
        }))
        .unwrap_or_default(),
    })
}

impl FakeWda {
    /// Starts a fake on a random loopback port.
    pub fn start(opts: FakeWdaOptions) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            inner: Mutex::new(Inner {
                app: AppState::new(opts.extra_rows),
                foreground: FAKE_APP.to_owned(),
                sessions: HashSet::new(),
                next_session: 1,
                generation: 1,
                last_screen: (String::new(), String::new()),
                revision: 1,
                ready: true,
                screenshots_broken: false,
                log: VecDeque::new(),
                shot_cache: None,
                swipes: Vec::new(),
            }),
            opts,
        });
        let handler_shared = shared.clone();
        let server = Server::start(Arc::new(move |req: &Request| handle(&handler_shared, req)))?;
        Ok(Self { server, shared })
    }

    /// The base URL, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.shared.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Stops serving: the port closes and open connections are cut.
    pub fn stop(&mut self) {
        self.server.stop();
    }

    /// Whether `/status` reports ready.
    pub fn set_ready(&self, ready: bool) {
        self.inner().ready = ready;
    }

    /// Forgets every session, as a restarted WDA does.
    pub fn forget_sessions(&self) {
        self.inner().sessions.clear();
    }

    /// Makes `GET /screenshot` fail with a WDA error.
    pub fn break_screenshots(&self, broken: bool) {
        self.inner().screenshots_broken = broken;
    }

    /// Every request so far, oldest first.
    pub fn requests(&self) -> Vec<Recorded> {
        self.inner().log.iter().cloned().collect()
    }

    /// Clears the request log.
    pub fn clear_requests(&self) {
        self.inner().log.clear();
    }

    /// The app state (fields, focus, sign-in).
    pub fn app(&self) -> AppState {
        self.inner().app.clone()
    }

    /// Open sessions.
    pub fn session_count(&self) -> usize {
        self.inner().sessions.len()
    }

    /// The W3C pointer action bodies received, oldest first.
    pub fn swipes(&self) -> Vec<Value> {
        self.inner().swipes.clone()
    }
}

/// What the simulator shows right now: the app in front and Safari's URL;
/// `None` when the attached simulator is not booted.
fn front(shared: &Shared, inner: &Inner) -> Option<(String, Option<String>)> {
    match &shared.opts.sim {
        None => Some((inner.foreground.clone(), None)),
        Some((path, udid)) => {
            let state = FakeSimState::load(path).ok()?;
            let d = state.device(udid)?;
            if !d.is_booted() {
                return None;
            }
            Some((
                d.foreground_app
                    .clone()
                    .unwrap_or_else(|| SPRINGBOARD.to_owned()),
                d.last_url.clone(),
            ))
        }
    }
}

fn sync_generation(inner: &mut Inner, bundle: &str) {
    let screen = (bundle.to_owned(), inner.app.screen(bundle));
    if screen != inner.last_screen {
        inner.generation += 1;
        inner.last_screen = screen;
        inner.app.focus = None;
    }
}

fn set_foreground(shared: &Shared, inner: &mut Inner, bundle: &str) {
    match &shared.opts.sim {
        None => inner.foreground = bundle.to_owned(),
        Some((path, udid)) => {
            let _ = FakeSimState::update(path, |s| {
                if let Some(d) = s.device_mut(udid) {
                    d.foreground_app = Some(bundle.to_owned());
                    d.revision += 1;
                }
            });
        }
    }
    inner.revision += 1;
    sync_generation(inner, bundle);
}

fn apply(shared: &Shared, inner: &mut Inner, bundle: &str, el: &El) {
    if !el.enabled {
        return;
    }
    let app = &mut inner.app;
    match &el.on {
        Behavior::Nothing => return,
        Behavior::Focus(f) => app.focus = Some(*f),
        Behavior::SignIn => {
            if app.username.is_empty() || app.password.is_empty() {
                app.error = true;
            } else {
                app.signed_in = Some(app.username.clone());
                app.error = false;
                app.focus = None;
            }
        }
        Behavior::SignOut => {
            let rows = app.extra_rows;
            *app = AppState::new(rows);
        }
        Behavior::ToggleRemember => app.remember = !app.remember,
        Behavior::ShowTerms => app.terms = true,
        Behavior::Open(target) => {
            let target = *target;
            set_foreground(shared, inner, target);
            return;
        }
    }
    inner.revision += 1;
    sync_generation(inner, bundle);
}

fn field_text(app: &mut AppState, f: Field) -> &mut String {
    match f {
        Field::Username => &mut app.username,
        Field::Password => &mut app.password,
        Field::Address => &mut app.address,
    }
}

fn field_of(bundle: &str, el: &El) -> Option<Field> {
    match (&el.on, bundle) {
        (Behavior::Focus(f @ (Field::Username | Field::Password)), FAKE_APP) => Some(*f),
        (Behavior::Focus(Field::Address), SAFARI) => Some(Field::Address),
        _ => None,
    }
}

fn short(ty: &str) -> &str {
    ty.strip_prefix("XCUIElementType").unwrap_or(ty)
}

/// One `attr == literal` comparison of a predicate.
fn compare(el: &El, attr: &str, literal: &str) -> Option<bool> {
    Some(match attr {
        "type" | "elementType" => short(literal) == el.ty,
        "label" => el.label.as_deref() == Some(literal),
        "name" => el.wda_name() == Some(literal),
        "identifier" | "rawIdentifier" => el.identifier.as_deref() == Some(literal),
        "value" => el.value.as_deref() == Some(literal),
        "enabled" | "isEnabled" => matches!(literal, "1" | "true" | "YES") == el.enabled,
        "visible" | "isVisible" => matches!(literal, "1" | "true" | "YES") == el.visible,
        _ => return None,
    })
}

/// Parses a literal: `"..."` / `'...'` with backslash escapes, or a bare word.
fn literal(s: &str) -> Option<String> {
    let s = s.trim();
    let mut chars = s.chars();
    match chars.next()? {
        q @ ('"' | '\'') => {
            let mut out = String::new();
            let mut escaped = false;
            for c in chars {
                if escaped {
                    out.push(c);
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    return Some(out);
                } else {
                    out.push(c);
                }
            }
            None
        }
        _ => Some(s.to_owned()),
    }
}

/// Splits a predicate at top-level ` AND ` (outside quotes).
fn conjuncts(p: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let chars: Vec<char> = p.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            cur.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
            cur.push(c);
        } else {
            let rest: String = chars[i..].iter().take(5).collect();
            if rest.eq_ignore_ascii_case(" and ") {
                out.push(std::mem::take(&mut cur));
                i += 5;
                continue;
            }
            cur.push(c);
        }
        i += 1;
    }
    out.push(cur);
    out
}

/// A tiny NSPredicate subset: `attr == literal [AND ...]`.
fn predicate_matches(el: &El, predicate: &str) -> Option<bool> {
    let mut all = true;
    for part in conjuncts(predicate) {
        let (attr, lit) = part.split_once("==").or_else(|| part.split_once('='))?;
        all &= compare(el, attr.trim(), &literal(lit)?)?;
    }
    Some(all)
}

/// Class chain subset: `**/Type`, `**/Type[`predicate`]`, `**/Type[n]`.
fn class_chain<'e>(all: &[&'e El], chain: &str) -> Option<Vec<&'e El>> {
    let rest = chain.strip_prefix("**/")?;
    let (ty, filter) = match rest.split_once('[') {
        Some((t, f)) => (t, Some(f.strip_suffix(']')?)),
        None => (rest, None),
    };
    let mut found: Vec<&El> = all
        .iter()
        .copied()
        .filter(|e| ty == "*" || short(ty) == e.ty)
        .collect();
    match filter {
        None => {}
        Some(f) if f.starts_with('`') => {
            let p = f.strip_prefix('`')?.strip_suffix('`')?;
            let mut kept = Vec::new();
            for e in found {
                if predicate_matches(e, p)? {
                    kept.push(e);
                }
            }
            found = kept;
        }
        Some(n) => {
            let n: usize = n.parse().ok()?;
            found = found.get(n.checked_sub(1)?).copied().into_iter().collect();
        }
    }
    Some(found)
}

fn element_id(generation: u64, key: &str) -> String {
    format!("FAKE-{generation}-{key}")
}

fn handle(shared: &Shared, req: &Request) -> Option<Response> {
    let mut guard = shared.inner.lock().unwrap_or_else(|p| p.into_inner());
    let inner = &mut *guard;
    if inner.log.len() >= MAX_LOG {
        inner.log.pop_front();
    }
    inner.log.push_back(Recorded {
        method: req.method.clone(),
        path: if req.query.is_empty() {
            req.path.clone()
        } else {
            format!("{}?{}", req.path, req.query)
        },
        body: String::from_utf8_lossy(&req.body).into_owned(),
    });
    let (bundle, last_url) = front(shared, inner)?;
    sync_generation(inner, &bundle);
    let body: Value = if req.body.is_empty() {
        json!({})
    } else {
        match serde_json::from_slice(&req.body) {
            Ok(v) => v,
            Err(e) => {
                return err(
                    400,
                    "invalid argument",
                    &format!("the body is not JSON: {e}"),
                    None,
                );
            }
        }
    };
    let segs: Vec<&str> = req.path.split('/').filter(|s| !s.is_empty()).collect();
    let method = req.method.as_str();
    // Session-scoped routes carry the session; check it first.
    let (session, rest): (Option<String>, &[&str]) = match segs.as_slice() {
        ["session", sid, rest @ ..] => {
            if !inner.sessions.contains(*sid) {
                return err(
                    404,
                    "invalid session id",
                    "Session does not exist",
                    Some(sid),
                );
            }
            (Some((*sid).to_owned()), rest)
        }
        other => (None, other),
    };
    let sid = session.as_deref();
    let (w, h) = shared.opts.window;
    macro_rules! view {
        () => {
            inner_view(inner, &bundle, shared, last_url.as_deref())
        };
    }
    match (method, session.is_some(), rest) {
        ("GET", false, ["status"]) => {
            let ready = inner.ready;
            ok(
                json!({
                    "message": if ready { "WebDriverAgent is ready to accept commands" } else { "WebDriverAgent is starting" },
                    "state": "success",
                    "os": { "testmanagerdVersion": 28, "name": "iOS", "sdkVersion": "17.4", "version": "17.4" },
                    "ios": { "ip": "127.0.0.1" },
                    "ready": ready,
                    "build": { "time": "Mar 20 2024 10:11:12", "productBundleIdentifier": "com.facebook.WebDriverAgentRunner" }
                }),
                inner.sessions.iter().next().map(String::as_str),
            )
        }
        ("POST", false, ["session"]) => {
            if !body.is_object() {
                return err(
                    400,
                    "invalid argument",
                    "capabilities must be an object",
                    None,
                );
            }
            let id = format!(
                "{:08X}-FA4E-4D0A-8E11-{:012X}",
                inner.next_session,
                std::process::id()
            );
            inner.next_session += 1;
            inner.sessions.insert(id.clone());
            ok(
                json!({
                    "sessionId": id,
                    "capabilities": { "device": "iphone", "browserName": "FakeLogin", "sdkVersion": "17.4", "CFBundleIdentifier": bundle }
                }),
                Some(&id),
            )
        }
        ("DELETE", true, []) => {
            if let Some(s) = sid {
                inner.sessions.remove(s);
            }
            ok(Value::Null, sid)
        }
        ("GET", true, ["window", "size"]) => ok(json!({ "width": w, "height": h }), sid),
        ("GET", true, ["wda", "screen"]) => ok(
            json!({
                "statusBarSize": { "width": w, "height": 20 },
                "scale": shared.opts.scale,
                "screenSize": { "width": w, "height": h }
            }),
            sid,
        ),
        ("GET", _, ["wda", "activeAppInfo"]) if shared.opts.no_active_app_info => err(
            404,
            "unknown command",
            &format!("Unhandled endpoint: {} -- {}", req.path, method),
            sid,
        ),
        ("GET", _, ["wda", "activeAppInfo"]) => ok(
            json!({ "processArguments": { "env": {}, "args": [] }, "name": "", "pid": 4242, "bundleId": bundle }),
            sid,
        ),
        ("GET", _, ["source"]) => {
            if !req.query.split('&').any(|q| q == "format=json") {
                return err(
                    400,
                    "invalid argument",
                    "the fake serves format=json only",
                    sid,
                );
            }
            ok(view!().to_json(shared.opts.long_types), sid)
        }
        ("GET", _, ["screenshot"]) => {
            if inner.screenshots_broken {
                return err(
                    500,
                    "unknown error",
                    "Cannot take a screenshot of the main screen",
                    sid,
                );
            }
            let key = format!(
                "{bundle}|{}|{}|{last_url:?}",
                inner.revision, inner.generation
            );
            if let Some((k, v)) = &inner.shot_cache
                && *k == key
            {
                return ok(v.clone(), sid);
            }
            let root = view!();
            let scale = shared.opts.screenshot_scale.unwrap_or(shared.opts.scale);
            let png = render::png(
                (w * scale).round() as u32,
                (h * scale).round() as u32,
                &app::fills(&root, scale),
            );
            let b64 = Value::String(base64::engine::general_purpose::STANDARD.encode(png));
            inner.shot_cache = Some((key, b64.clone()));
            ok(b64, sid)
        }
        ("POST", true, ["wda", "tap"]) if shared.opts.long_types => err(
            404,
            "unknown command",
            &format!("Unhandled endpoint: {} -- {}", req.path, method),
            sid,
        ),
        ("POST", true, ["wda", "tap"] | ["wda", "tap", "0"]) => {
            let (Some(x), Some(y)) = (body["x"].as_f64(), body["y"].as_f64()) else {
                return err(400, "invalid argument", "x and y are required", sid);
            };
            let root = view!();
            let hit = root
                .flatten()
                .into_iter()
                .rev()
                .find(|e| e.visible && e.contains(x, y))
                .cloned();
            if let Some(el) = hit {
                apply(shared, inner, &bundle, &el);
            }
            ok(Value::Null, sid)
        }
        ("POST", true, ["actions"]) => {
            let valid = body["actions"].as_array().is_some_and(|sources| {
                !sources.is_empty()
                    && sources.iter().all(|s| {
                        s["type"] == "pointer"
                            && s["actions"].as_array().is_some_and(|a| !a.is_empty())
                    })
            });
            if !valid {
                return err(
                    400,
                    "invalid argument",
                    "actions must be a non-empty list of pointer sources",
                    sid,
                );
            }
            inner.swipes.push(body.clone());
            ok(Value::Null, sid)
        }
        ("POST", true, ["wda", "keys"]) => {
            let Some(parts) = body["value"].as_array() else {
                return err(
                    400,
                    "invalid argument",
                    "value must be an array of strings",
                    sid,
                );
            };
            let text: String = parts.iter().filter_map(Value::as_str).collect();
            type_text(shared, inner, &bundle, &text, sid)
        }
        ("POST", true, ["wda", "pressButton"]) => match body["name"].as_str() {
            Some("home") => {
                set_foreground(shared, inner, SPRINGBOARD);
                ok(Value::Null, sid)
            }
            Some("volumeUp" | "volumeDown") => ok(Value::Null, sid),
            other => err(
                400,
                "invalid argument",
                &format!("The button '{}' is unknown", other.unwrap_or("")),
                sid,
            ),
        },
        ("POST", false, ["wda", "homescreen"]) => {
            set_foreground(shared, inner, SPRINGBOARD);
            ok(Value::Null, sid)
        }
        ("POST", true, ["elements"]) => {
            let (Some(using), Some(value)) = (body["using"].as_str(), body["value"].as_str())
            else {
                return err(400, "invalid argument", "using and value are required", sid);
            };
            let root = view!();
            let all: Vec<&El> = root.flatten().into_iter().filter(|e| e.queryable).collect();
            let found: Option<Vec<&El>> = match using {
                "accessibility id" | "id" | "name" => Some(
                    all.iter()
                        .copied()
                        .filter(|e| e.wda_name() == Some(value))
                        .collect(),
                ),
                "class name" => Some(
                    all.iter()
                        .copied()
                        .filter(|e| short(value) == e.ty)
                        .collect(),
                ),
                "predicate string" => {
                    let mut out = Vec::new();
                    let mut parsed = true;
                    for e in &all {
                        match predicate_matches(e, value) {
                            Some(true) => out.push(*e),
                            Some(false) => {}
                            None => {
                                parsed = false;
                                break;
                            }
                        }
                    }
                    parsed.then_some(out)
                }
                "class chain" => class_chain(&all, value),
                other => {
                    return err(
                        400,
                        "invalid argument",
                        &format!("unsupported locator strategy '{other}'"),
                        sid,
                    );
                }
            };
            let Some(found) = found else {
                return err(
                    400,
                    "invalid selector",
                    &format!("cannot parse '{value}'"),
                    sid,
                );
            };
            let generation = inner.generation;
            let refs: Vec<Value> = found
                .iter()
                .map(|e| {
                    let id = element_id(generation, &e.key);
                    json!({ "ELEMENT": id, ELEMENT_KEY: id })
                })
                .collect();
            ok(Value::Array(refs), sid)
        }
        (m, true, ["element", id, op]) => {
            let current = id
                .strip_prefix("FAKE-")
                .and_then(|r| r.split_once('-'))
                .and_then(|(g, k)| Some((g.parse::<u64>().ok()?, k.to_owned())));
            let Some((generation, key)) = current else {
                return err(
                    404,
                    "no such element",
                    &format!("The element '{id}' is not cached"),
                    sid,
                );
            };
            if generation != inner.generation {
                return err(
                    404,
                    "stale element reference",
                    &format!(
                        "The previously found element \"{key}\" is not present in the current view anymore"
                    ),
                    sid,
                );
            }
            let root = view!();
            let Some(el) = root.flatten().into_iter().find(|e| e.key == key).cloned() else {
                return err(404, "stale element reference", "The element is gone", sid);
            };
            element_op(shared, inner, &bundle, &el, m, op, &body, sid)
        }
        _ => err(
            404,
            "unknown command",
            &format!("Unhandled endpoint: {} -- {}", req.path, method),
            sid,
        ),
    }
}

fn inner_view(inner: &Inner, bundle: &str, shared: &Shared, last_url: Option<&str>) -> El {
    inner.app.view(bundle, shared.opts.window, last_url)
}

fn type_text(
    shared: &Shared,
    inner: &mut Inner,
    bundle: &str,
    text: &str,
    sid: Option<&str>,
) -> Option<Response> {
    let focus_ok = match inner.app.focus {
        Some(Field::Username | Field::Password) => bundle == FAKE_APP,
        Some(Field::Address) => bundle == SAFARI,
        None => false,
    };
    let Some(field) = inner.app.focus.filter(|_| focus_ok) else {
        return err(
            400,
            "invalid element state",
            "Keyboard is not present: neither the element nor any of its descendants have keyboard focus",
            sid,
        );
    };
    for c in text.chars() {
        match c {
            '\n' => inner.app.focus = None,
            '\u{8}' => {
                field_text(&mut inner.app, field).pop();
            }
            c => field_text(&mut inner.app, field).push(c),
        }
        if inner.app.focus.is_none() {
            break;
        }
    }
    inner.revision += 1;
    sync_generation(inner, bundle);
    let _ = shared;
    ok(Value::Null, sid)
}

#[allow(clippy::too_many_arguments)]
fn element_op(
    shared: &Shared,
    inner: &mut Inner,
    bundle: &str,
    el: &El,
    method: &str,
    op: &str,
    body: &Value,
    sid: Option<&str>,
) -> Option<Response> {
    match (method, op) {
        ("GET", "rect") => {
            let [x, y, w, h] = el.rect;
            ok(json!({ "x": x, "y": y, "width": w, "height": h }), sid)
        }
        ("POST", "click") => {
            apply(shared, inner, bundle, el);
            ok(Value::Null, sid)
        }
        ("POST", "clear") => match field_of(bundle, el) {
            Some(f) => {
                field_text(&mut inner.app, f).clear();
                inner.app.focus = Some(f);
                inner.revision += 1;
                ok(Value::Null, sid)
            }
            None => err(
                400,
                "invalid element state",
                &format!("Cannot clear the value of '{}'", el.ty),
                sid,
            ),
        },
        ("POST", "value") => match field_of(bundle, el) {
            Some(f) => {
                let text: String = match (&body["value"], &body["text"]) {
                    (Value::Array(parts), _) => parts.iter().filter_map(Value::as_str).collect(),
                    (_, Value::String(t)) => t.clone(),
                    _ => return err(400, "invalid argument", "value or text is required", sid),
                };
                inner.app.focus = Some(f);
                field_text(&mut inner.app, f).push_str(&text);
                inner.revision += 1;
                ok(Value::Null, sid)
            }
            None => err(
                400,
                "invalid element state",
                &format!("Cannot set the value of '{}'", el.ty),
                sid,
            ),
        },
        _ => err(
            404,
            "unknown command",
            &format!("Unhandled endpoint: element/{op}"),
            sid,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(ty: &'static str, label: &str) -> El {
        let mut e = El::new("k", ty, [0.0, 0.0, 1.0, 1.0]);
        e.label = Some(label.into());
        e
    }

    #[test]
    fn predicates_and_chains() {
        let b = el("Button", "Say \"hi\"");
        assert_eq!(
            predicate_matches(
                &b,
                r#"type == "XCUIElementTypeButton" AND label == "Say \"hi\"""#
            ),
            Some(true)
        );
        assert_eq!(predicate_matches(&b, "label == 'nope'"), Some(false));
        assert_eq!(predicate_matches(&b, "bogus"), None);
        let t = el("StaticText", "x");
        let all = vec![&b, &t];
        assert_eq!(
            class_chain(&all, "**/XCUIElementTypeButton").map(|v| v.len()),
            Some(1)
        );
        assert_eq!(
            class_chain(&all, "**/XCUIElementTypeStaticText[`label == \"x\"`]").map(|v| v.len()),
            Some(1)
        );
        assert_eq!(class_chain(&all, "**/*[2]").map(|v| v.len()), Some(1));
        assert!(class_chain(&all, "Button").is_none());
    }
}
