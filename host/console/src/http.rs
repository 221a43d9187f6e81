//! The console's HTTP side, on axum: the page and its embedded files,
//! an ended Session's report, a screenshot by digest, and the WebSocket
//! upgrade. Every response carries the same strict headers (a
//! Content-Security-Policy admitting only this origin's own files, no
//! framing, no sniffing, no caching, no referrer).
//!
//! Every route checks the `Host` header (loopback names only) and, but
//! for the token exchange, the viewer's cookie; the WebSocket also checks
//! its `Origin`. It must never serve a file outside the embedded assets
//! nor a blob that is not named by its full digest.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use axum::routing::get;
use include_dir::{Dir, include_dir};

use crate::auth::{self, Gate, Viewer};
use crate::lab::Lab;

/// The page's files, embedded at build time.
static ASSETS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/assets");

/// The console page's policy: its own script, style and images only, and
/// a WebSocket back to where it came from.
pub const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// What every request handler shares.
pub(crate) struct App {
    pub(crate) gate: Gate,
    pub(crate) lab: Arc<Lab>,
    pub(crate) data_dir: PathBuf,
    pub(crate) mode: &'static str,
}

/// The router.
pub(crate) fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/assets/{file}", get(asset))
        .route("/sessions/{id}/report", get(report))
        .route("/evidence/{sha}", get(evidence))
        .route("/ws", get(crate::ws::upgrade))
        .fallback(not_found)
        .with_state(app)
}

/// A response with the console's headers.
pub(crate) fn respond(
    status: StatusCode,
    content_type: &str,
    body: impl Into<Body>,
) -> Response<Body> {
    respond_with(status, content_type, PAGE_POLICY, body)
}

fn respond_with(
    status: StatusCode,
    content_type: &str,
    policy: &str,
    body: impl Into<Body>,
) -> Response<Body> {
    let mut r = Response::new(body.into());
    *r.status_mut() = status;
    let h = r.headers_mut();
    let put = |h: &mut HeaderMap, k: header::HeaderName, v: &str| {
        if let Ok(v) = HeaderValue::from_str(v) {
            h.insert(k, v);
        }
    };
    put(h, header::CONTENT_TYPE, content_type);
    put(h, header::CONTENT_SECURITY_POLICY, policy);
    put(h, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    put(h, header::X_FRAME_OPTIONS, "DENY");
    put(h, header::REFERRER_POLICY, "no-referrer");
    put(h, header::CACHE_CONTROL, "no-store");
    put(
        h,
        header::HeaderName::from_static("cross-origin-opener-policy"),
        "same-origin",
    );
    put(
        h,
        header::HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
    r
}

fn refused(status: StatusCode, why: &str) -> Response<Body> {
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>DeviceRail console</title><p>{}</p>\n",
        why.replace('&', "&amp;").replace('<', "&lt;")
    );
    respond(status, "text/html; charset=utf-8", body)
}

fn misdirected() -> Response<Body> {
    refused(
        StatusCode::MISDIRECTED_REQUEST,
        "The console answers only on 127.0.0.1 or localhost.",
    )
}

/// The `Host` header, when it names loopback.
pub(crate) fn loopback(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| auth::loopback_host(h))
}

/// Why a request was refused before any route's own work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its `Host` is not a loopback name.
    Misdirected,
    /// It carries no viewer's cookie.
    NoViewer,
}

impl Refusal {
    /// The answer.
    pub(crate) fn response(self) -> Response<Body> {
        match self {
            Refusal::Misdirected => misdirected(),
            Refusal::NoViewer => refused(
                StatusCode::FORBIDDEN,
                "Open the console with the link `devicerail console` printed (or an invite from a viewer). Each link works once.",
            ),
        }
    }
}

/// The viewer of a request from a loopback host, or the refusal.
pub(crate) fn viewer_of(app: &App, headers: &HeaderMap) -> Result<Viewer, Refusal> {
    if loopback(headers).is_none() {
        return Err(Refusal::Misdirected);
    }
    let cookie = headers.get(header::COOKIE).and_then(|c| c.to_str().ok());
    app.gate.viewer(cookie).ok_or(Refusal::NoViewer)
}

fn token_of(req: &Request) -> Option<&str> {
    req.uri()
        .query()?
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == "token")
        .map(|(_, v)| v)
}

async fn index(State(app): State<Arc<App>>, req: Request) -> Response<Body> {
    if loopback(req.headers()).is_none() {
        return misdirected();
    }
    if let Some(token) = token_of(&req) {
        return match app.gate.redeem(token) {
            Ok(Some((viewer, cookie))) => {
                tracing::info!(viewer = %viewer.name, "a viewer opened the console");
                let mut r = respond(StatusCode::SEE_OTHER, "text/plain; charset=utf-8", "");
                if let (Ok(c), Ok(l)) = (
                    HeaderValue::from_str(&auth::set_cookie(&cookie)),
                    HeaderValue::from_str("/"),
                ) {
                    r.headers_mut().insert(header::SET_COOKIE, c);
                    r.headers_mut().insert(header::LOCATION, l);
                }
                r
            }
            Ok(None) => refused(
                StatusCode::FORBIDDEN,
                "This link was used already or has expired. Ask for a new invite, or restart `devicerail console`.",
            ),
            Err(e) => refused(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
        };
    }
    match viewer_of(&app, req.headers()) {
        Ok(_) => match ASSETS.get_file("index.html") {
            Some(f) => respond(StatusCode::OK, "text/html; charset=utf-8", f.contents()),
            None => not_found_page(),
        },
        Err(r) => r.response(),
    }
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, e)| e) {
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("html") => "text/html; charset=utf-8",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

async fn asset(
    State(app): State<Arc<App>>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response<Body> {
    if let Err(r) = viewer_of(&app, &headers) {
        return r.response();
    }
    // One level of plain names: nothing outside the embedded folder.
    if file.contains('/') || file.contains("..") {
        return not_found_page();
    }
    match ASSETS.get_file(&file) {
        Some(f) => respond(StatusCode::OK, content_type(&file), f.contents()),
        None => not_found_page(),
    }
}

async fn report(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Response<Body> {
    if let Err(r) = viewer_of(&app, &headers) {
        return r.response();
    }
    let Ok(session) = id.parse::<devicerail_host_protocol::SessionId>() else {
        return refused(StatusCode::NOT_FOUND, "No such Session.");
    };
    let data_dir = app.data_dir.clone();
    let rendered = tokio::task::spawn_blocking(move || {
        use devicerail_host_report::report;
        let source = report::Source::Store {
            data_dir,
            session: Some(session),
        };
        let data = report::load(&source)?;
        let recorded = report::recorded_for(&source, &data);
        report::render(&data, recorded.as_ref())
    })
    .await;
    match rendered {
        Ok(Ok(html)) => respond_with(
            StatusCode::OK,
            "text/html; charset=utf-8",
            &devicerail_host_report::report::policy(),
            html,
        ),
        Ok(Err(e)) => refused(StatusCode::NOT_FOUND, &format!("No report: {e}")),
        Err(e) => refused(StatusCode::INTERNAL_SERVER_ERROR, &e.to_string()),
    }
}

async fn evidence(
    State(app): State<Arc<App>>,
    Path(sha): Path<String>,
    headers: HeaderMap,
) -> Response<Body> {
    if let Err(r) = viewer_of(&app, &headers) {
        return r.response();
    }
    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return not_found_page();
    }
    let data_dir = app.data_dir.clone();
    let blob = tokio::task::spawn_blocking(move || {
        devicerail_host_store::event_store::ReadOnlyStore::open(&data_dir)
            .and_then(|s| s.blob(&sha.to_ascii_lowercase()))
    })
    .await;
    match blob {
        Ok(Ok(Some(bytes))) => {
            let kind = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
                "image/png"
            } else {
                "application/octet-stream"
            };
            respond(StatusCode::OK, kind, bytes)
        }
        _ => not_found_page(),
    }
}

fn not_found_page() -> Response<Body> {
    refused(StatusCode::NOT_FOUND, "Not found.")
}

async fn not_found(State(app): State<Arc<App>>, headers: HeaderMap) -> Response<Body> {
    match viewer_of(&app, &headers) {
        Ok(_) => not_found_page(),
        Err(r) => r.response(),
    }
}
