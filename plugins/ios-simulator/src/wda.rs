//! A small blocking WebDriverAgent client over `ureq`: the `{"value": ...,
//! "sessionId": ...}` envelope, W3C error bodies, and the handful of
//! endpoints the driver uses. Request bodies are never logged (they carry
//! typed text, including secrets); only method and path are.

use std::time::Duration;

use base64::Engine as _;
use devicerail_host_plugin_api::CallContext;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::normalize::{WdaElement, WdaRect};
pub(crate) use crate::pixels::WdaSize;

/// Largest response body read (base64 screenshots of large iPads are ~15 MB).
const MAX_BODY: u64 = 128 * 1024 * 1024;

/// Why a WebDriverAgent request failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WdaError {
    /// Nothing answered (connection refused/reset, WDA not running).
    #[error("WebDriverAgent at {url} is not reachable: {reason}")]
    Unreachable {
        /// WDA's base URL.
        url: String,
        /// The transport error, for the message.
        reason: String,
    },
    /// The request ran into its timeout.
    #[error("WebDriverAgent did not answer {path} within {timeout_ms} ms")]
    TimedOut {
        /// The request path, such as `/source`.
        path: String,
        /// The time allowed, in milliseconds: the HTTP timeout, or what was
        /// left of the call's deadline if less.
        timeout_ms: u128,
    },
    /// WDA answered with an error (W3C `error` code and message).
    #[error("WebDriverAgent refused {path}: {error}: {message}")]
    Refused {
        /// The request path.
        path: String,
        /// The HTTP status of the answer.
        status: u16,
        /// The W3C error code (`no such element`, `invalid session id`,
        /// ...; `status N` for the legacy JSON wire protocol).
        error: String,
        /// WDA's message.
        message: String,
    },
    /// The answer was not the JSON WDA sends.
    #[error("WebDriverAgent sent an unexpected answer to {path}: {reason}")]
    BadResponse {
        /// The request path.
        path: String,
        /// What was wrong with the answer.
        reason: String,
    },
    /// The call was cancelled before the request was sent.
    #[error("the call was cancelled")]
    Cancelled,
    /// The call's deadline passed before the request was sent.
    #[error("the call's deadline passed")]
    DeadlinePassed,
}

impl WdaError {
    /// The W3C error code of a refusal.
    pub(crate) fn w3c_code(&self) -> Option<&str> {
        match self {
            Self::Refused { error, .. } => Some(error),
            _ => None,
        }
    }

    /// Whether WDA forgot the session (restarted): a new one is needed.
    pub(crate) fn is_invalid_session(&self) -> bool {
        self.w3c_code() == Some("invalid session id")
    }

    /// Whether WDA has no such endpoint (an older or trimmed build):
    /// W3C `unknown command` / `unknown method`, or the JSON wire
    /// protocol's status 9 of old builds.
    pub(crate) fn is_unknown_command(&self) -> bool {
        matches!(
            self.w3c_code(),
            Some("unknown command" | "unknown method" | "status 9")
        )
    }

    /// Whether the failure means WDA is down rather than refusing.
    pub(crate) fn is_transport(&self) -> bool {
        matches!(self, Self::Unreachable { .. } | Self::TimedOut { .. })
    }
}

#[derive(Deserialize)]
struct Envelope<T> {
    value: T,
}

#[derive(Deserialize)]
struct LegacyEnvelope {
    #[serde(default)]
    status: Option<i64>,
    #[serde(default)]
    value: Value,
}

#[derive(Deserialize)]
struct W3cError {
    error: String,
    #[serde(default)]
    message: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SessionValue {
    session_id: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ActiveApp {
    #[serde(default)]
    bundle_id: Option<String>,
}

#[derive(Deserialize)]
struct ScreenInfo {
    #[serde(default)]
    scale: Option<f64>,
}

#[derive(Deserialize)]
struct ElementRef {
    #[serde(rename = "element-6066-11e4-a52e-4f735466cecf", default)]
    w3c: Option<String>,
    #[serde(rename = "ELEMENT", default)]
    legacy: Option<String>,
}

/// What `GET /status` says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WdaStatus {
    /// Whether WDA can take sessions.
    pub(crate) ready: bool,
    /// WDA's explanation, when it gives one.
    pub(crate) message: Option<String>,
}

enum Method<'a> {
    Get,
    Post(&'a Value),
    Delete,
}

impl Method<'_> {
    fn name(&self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post(_) => "POST",
            Self::Delete => "DELETE",
        }
    }
}

/// A client for one WebDriverAgent base URL.
#[derive(Clone)]
pub struct Wda {
    base: String,
    agent: ureq::Agent,
    http_timeout: Duration,
}

impl std::fmt::Debug for Wda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wda").field("base", &self.base).finish()
    }
}

fn bad(path: &str, reason: impl std::fmt::Display) -> WdaError {
    WdaError::BadResponse {
        path: path.to_owned(),
        reason: reason.to_string(),
    }
}

impl Wda {
    /// A client for `base` (e.g. `http://127.0.0.1:8100`); every request is
    /// bounded by `http_timeout` and the call's deadline.
    pub(crate) fn new(base: &str, http_timeout: Duration) -> Self {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // WDA is a local endpoint: never route it through a proxy from
            // the environment.
            .proxy(None)
            .max_idle_connections_per_host(4)
            .build()
            .into();
        Self {
            base: base.trim_end_matches('/').to_owned(),
            agent,
            http_timeout,
        }
    }

    /// The base URL requests go to.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    fn timeout(&self, ctx: &CallContext) -> Result<Duration, WdaError> {
        if ctx.is_cancelled() {
            return Err(WdaError::Cancelled);
        }
        match ctx.remaining() {
            Some(left) if left.is_zero() => Err(WdaError::DeadlinePassed),
            Some(left) => Ok(left.min(self.http_timeout)),
            None => Ok(self.http_timeout),
        }
    }

    fn transport(&self, path: &str, timeout: Duration, e: ureq::Error) -> WdaError {
        match e {
            ureq::Error::Timeout(_) => WdaError::TimedOut {
                path: path.to_owned(),
                timeout_ms: timeout.as_millis(),
            },
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                WdaError::TimedOut {
                    path: path.to_owned(),
                    timeout_ms: timeout.as_millis(),
                }
            }
            ureq::Error::BodyExceedsLimit(n) => bad(path, format!("the body exceeds {n} bytes")),
            other => WdaError::Unreachable {
                url: self.base.clone(),
                reason: other.to_string(),
            },
        }
    }

    /// One request; returns the HTTP status and the body.
    fn exchange(
        &self,
        ctx: &CallContext,
        method: Method<'_>,
        path: &str,
    ) -> Result<(u16, Vec<u8>), WdaError> {
        let timeout = self.timeout(ctx)?;
        let url = format!("{}{path}", self.base);
        tracing::trace!(method = method.name(), path, "WebDriverAgent request");
        let sent = match method {
            Method::Get => self
                .agent
                .get(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
            Method::Delete => self
                .agent
                .delete(&url)
                .config()
                .timeout_global(Some(timeout))
                .build()
                .call(),
            Method::Post(body) => {
                let bytes = serde_json::to_vec(body).map_err(|e| bad(path, e))?;
                self.agent
                    .post(&url)
                    .header("content-type", "application/json")
                    .config()
                    .timeout_global(Some(timeout))
                    .build()
                    .send(&bytes[..])
            }
        };
        let mut response = sent.map_err(|e| self.transport(path, timeout, e))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(|e| self.transport(path, timeout, e))?;
        Ok((status, body))
    }

    /// One request whose `value` is parsed as `T`.
    fn call<T: DeserializeOwned>(
        &self,
        ctx: &CallContext,
        method: Method<'_>,
        path: &str,
    ) -> Result<T, WdaError> {
        let (status, body) = self.exchange(ctx, method, path)?;
        if status >= 400 {
            return Err(match serde_json::from_slice::<Envelope<W3cError>>(&body) {
                Ok(e) => WdaError::Refused {
                    path: path.to_owned(),
                    status,
                    error: e.value.error,
                    message: e.value.message,
                },
                Err(_) => WdaError::Refused {
                    path: path.to_owned(),
                    status,
                    error: "unknown error".into(),
                    message: format!("HTTP {status}"),
                },
            });
        }
        match serde_json::from_slice::<Envelope<T>>(&body) {
            Ok(e) => Ok(e.value),
            Err(parse) => {
                // Old WDA builds answer errors with HTTP 200 and a JSON wire
                // protocol `status`.
                if let Ok(legacy) = serde_json::from_slice::<LegacyEnvelope>(&body)
                    && let Some(code) = legacy.status.filter(|s| *s != 0)
                {
                    return Err(WdaError::Refused {
                        path: path.to_owned(),
                        status,
                        error: format!("status {code}"),
                        message: legacy
                            .value
                            .as_str()
                            .map(str::to_owned)
                            .unwrap_or_else(|| legacy.value.to_string()),
                    });
                }
                Err(bad(path, parse))
            }
        }
    }

    fn post_unit(&self, ctx: &CallContext, path: &str, body: &Value) -> Result<(), WdaError> {
        self.call::<Value>(ctx, Method::Post(body), path).map(drop)
    }

    /// `GET /status`.
    pub(crate) fn status(&self, ctx: &CallContext) -> Result<WdaStatus, WdaError> {
        let v: Value = self.call(ctx, Method::Get, "/status")?;
        Ok(WdaStatus {
            // Builds without `ready` answer /status only once they are.
            ready: v.get("ready").and_then(Value::as_bool).unwrap_or(true),
            message: v.get("message").and_then(Value::as_str).map(str::to_owned),
        })
    }

    /// `POST /session` attached to whatever app is in front.
    pub(crate) fn create_session(&self, ctx: &CallContext) -> Result<String, WdaError> {
        let body = json!({ "capabilities": { "alwaysMatch": {}, "firstMatch": [{}] } });
        let v: SessionValue = self.call(ctx, Method::Post(&body), "/session")?;
        Ok(v.session_id)
    }

    /// `DELETE /session/{id}`.
    pub(crate) fn delete_session(&self, ctx: &CallContext, session: &str) -> Result<(), WdaError> {
        self.call::<Value>(ctx, Method::Delete, &format!("/session/{session}"))
            .map(drop)
    }

    /// `GET /session/{id}/window/size`, in points.
    pub(crate) fn window_size(
        &self,
        ctx: &CallContext,
        session: &str,
    ) -> Result<WdaSize, WdaError> {
        self.call(ctx, Method::Get, &format!("/session/{session}/window/size"))
    }

    /// `GET /session/{id}/wda/screen`: pixels per point, when reported.
    pub(crate) fn screen_scale(
        &self,
        ctx: &CallContext,
        session: &str,
    ) -> Result<Option<f64>, WdaError> {
        let v: ScreenInfo =
            self.call(ctx, Method::Get, &format!("/session/{session}/wda/screen"))?;
        Ok(v.scale.filter(|s| s.is_finite() && *s > 0.0))
    }

    /// `GET /wda/activeAppInfo`: the bundle id of the app in front.
    pub(crate) fn active_bundle_id(&self, ctx: &CallContext) -> Result<Option<String>, WdaError> {
        let v: ActiveApp = self.call(ctx, Method::Get, "/wda/activeAppInfo")?;
        Ok(v.bundle_id.filter(|b| !b.is_empty()))
    }

    /// `GET /source?format=json`: the accessibility tree of the app in front.
    pub fn source(&self, ctx: &CallContext) -> Result<WdaElement, WdaError> {
        self.call(ctx, Method::Get, "/source?format=json")
    }

    /// `GET /screenshot`: PNG bytes.
    pub(crate) fn screenshot(&self, ctx: &CallContext) -> Result<Vec<u8>, WdaError> {
        let path = "/screenshot";
        let b64: String = self.call(ctx, Method::Get, path)?;
        let engine = base64::engine::general_purpose::STANDARD;
        match engine.decode(b64.as_bytes()) {
            Ok(png) => Ok(png),
            Err(_) => {
                // Some builds wrap the base64 text in lines.
                let compact: Vec<u8> = b64.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
                engine.decode(compact).map_err(|e| bad(path, e))
            }
        }
    }

    /// `POST /session/{id}/wda/tap` at a point in points; builds that
    /// only know the older `/wda/tap/0` route get that one.
    pub(crate) fn tap(
        &self,
        ctx: &CallContext,
        session: &str,
        x: f64,
        y: f64,
    ) -> Result<(), WdaError> {
        let body = json!({ "x": x, "y": y });
        match self.post_unit(ctx, &format!("/session/{session}/wda/tap"), &body) {
            Err(e) if e.w3c_code() == Some("unknown command") => {
                self.post_unit(ctx, &format!("/session/{session}/wda/tap/0"), &body)
            }
            other => other,
        }
    }

    /// A one-finger swipe as W3C pointer actions, in points.
    pub(crate) fn swipe(
        &self,
        ctx: &CallContext,
        session: &str,
        from: (f64, f64),
        to: (f64, f64),
        duration_ms: u64,
    ) -> Result<(), WdaError> {
        let body = json!({
            "actions": [{
                "type": "pointer",
                "id": "finger1",
                "parameters": { "pointerType": "touch" },
                "actions": [
                    { "type": "pointerMove", "duration": 0, "x": from.0, "y": from.1 },
                    { "type": "pointerDown", "button": 0 },
                    { "type": "pointerMove", "duration": duration_ms, "x": to.0, "y": to.1 },
                    { "type": "pointerUp", "button": 0 }
                ]
            }]
        });
        self.post_unit(ctx, &format!("/session/{session}/actions"), &body)
    }

    /// `POST /session/{id}/wda/keys`: types into the focused element. The
    /// text travels only in this request body.
    pub(crate) fn keys(
        &self,
        ctx: &CallContext,
        session: &str,
        text: &str,
    ) -> Result<(), WdaError> {
        self.post_unit(
            ctx,
            &format!("/session/{session}/wda/keys"),
            &json!({ "value": [text] }),
        )
    }

    /// `POST /session/{id}/wda/pressButton`.
    pub(crate) fn press_button(
        &self,
        ctx: &CallContext,
        session: &str,
        name: &str,
    ) -> Result<(), WdaError> {
        self.post_unit(
            ctx,
            &format!("/session/{session}/wda/pressButton"),
            &json!({ "name": name }),
        )
    }

    /// `POST /wda/homescreen`.
    pub(crate) fn homescreen(&self, ctx: &CallContext) -> Result<(), WdaError> {
        self.post_unit(ctx, "/wda/homescreen", &json!({}))
    }

    /// `POST /session/{id}/elements`: the element ids matching a locator.
    pub(crate) fn find_elements(
        &self,
        ctx: &CallContext,
        session: &str,
        locator: &Locator,
    ) -> Result<Vec<String>, WdaError> {
        let (using, value) = locator.parts();
        let refs: Vec<ElementRef> = self.call(
            ctx,
            Method::Post(&json!({ "using": using, "value": value })),
            &format!("/session/{session}/elements"),
        )?;
        Ok(refs
            .into_iter()
            .filter_map(|r| r.w3c.or(r.legacy))
            .collect())
    }

    /// `GET /session/{id}/element/{el}/rect`, in points.
    pub(crate) fn element_rect(
        &self,
        ctx: &CallContext,
        session: &str,
        element: &str,
    ) -> Result<WdaRect, WdaError> {
        self.call(
            ctx,
            Method::Get,
            &format!("/session/{session}/element/{element}/rect"),
        )
    }

    /// `POST /session/{id}/element/{el}/click`.
    pub(crate) fn click(
        &self,
        ctx: &CallContext,
        session: &str,
        element: &str,
    ) -> Result<(), WdaError> {
        self.post_unit(
            ctx,
            &format!("/session/{session}/element/{element}/click"),
            &json!({}),
        )
    }

    /// `POST /session/{id}/element/{el}/clear`.
    pub(crate) fn clear(
        &self,
        ctx: &CallContext,
        session: &str,
        element: &str,
    ) -> Result<(), WdaError> {
        self.post_unit(
            ctx,
            &format!("/session/{session}/element/{element}/clear"),
            &json!({}),
        )
    }

    /// `POST /session/{id}/element/{el}/value`: types `text` into the element.
    pub(crate) fn set_value(
        &self,
        ctx: &CallContext,
        session: &str,
        element: &str,
        text: &str,
    ) -> Result<(), WdaError> {
        self.post_unit(
            ctx,
            &format!("/session/{session}/element/{element}/value"),
            &json!({ "value": [text], "text": text }),
        )
    }
}

/// A WebDriverAgent element locator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Locator {
    /// By accessibility identifier (WDA matches `name`).
    AccessibilityId(String),
    /// An `NSPredicate` string over element attributes.
    Predicate(String),
    /// An XCUITest class chain query.
    ClassChain(String),
}

impl Locator {
    /// The W3C `using` strategy and the `value` of the find request.
    pub(crate) fn parts(&self) -> (&'static str, &str) {
        match self {
            Self::AccessibilityId(v) => ("accessibility id", v),
            Self::Predicate(v) => ("predicate string", v),
            Self::ClassChain(v) => ("class chain", v),
        }
    }
}

/// Quotes a string for an NSPredicate / class chain literal.
pub(crate) fn predicate_literal(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_escaped() {
        assert_eq!(predicate_literal(r#"a"b\c"#), r#""a\"b\\c""#);
    }

    /// A loopback URL nothing listens on.
    fn closed_url() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("an address").port();
        drop(listener);
        format!("http://127.0.0.1:{port}")
    }

    #[test]
    fn an_unreachable_wda_is_a_transport_error() {
        let wda = Wda::new(&closed_url(), Duration::from_secs(2));
        let e = wda
            .status(&CallContext::unbounded())
            .expect_err("nothing listens");
        assert!(e.is_transport(), "{e:?}");
    }

    #[test]
    fn a_cancelled_call_sends_nothing() {
        let wda = Wda::new(&closed_url(), Duration::from_secs(2));
        let ctx = CallContext::unbounded();
        ctx.cancel();
        assert_eq!(wda.status(&ctx), Err(WdaError::Cancelled));
    }
}
