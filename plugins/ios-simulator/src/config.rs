//! Plugin configuration: `PluginConfig.settings` first, then the
//! documented `DEVICERAIL_*` environment variables, then defaults.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

/// Environment variable naming the `xcrun` binary.
pub const ENV_XCRUN: &str = "DEVICERAIL_XCRUN";
/// Environment variable with the default WebDriverAgent URL.
pub const ENV_WDA_URL: &str = "DEVICERAIL_IOS_WDA_URL";
/// Environment variable with per-simulator WebDriverAgent URLs
/// (`UDID=URL,UDID=URL`).
pub const ENV_WDA_URLS: &str = "DEVICERAIL_IOS_WDA_URLS";
/// Environment variable: `1` lists shut-down simulators and boots on connect.
pub const ENV_BOOT: &str = "DEVICERAIL_IOS_BOOT";
/// Environment variable: default screenshot source, `wda` or `simctl`.
pub const ENV_SCREENSHOT: &str = "DEVICERAIL_IOS_SCREENSHOT";
/// Environment variable: bundle id of an installed WebDriverAgent runner
/// that connect launches with `simctl launch` when WDA is not up.
pub const ENV_WDA_BUNDLE_ID: &str = "DEVICERAIL_IOS_WDA_BUNDLE_ID";
/// Environment variable: upper bound of one WebDriverAgent request (ms).
pub const ENV_HTTP_TIMEOUT_MS: &str = "DEVICERAIL_IOS_HTTP_TIMEOUT_MS";
/// Environment variable: how long connect may wait for a boot (ms) when the
/// call has no deadline.
pub const ENV_BOOT_TIMEOUT_MS: &str = "DEVICERAIL_IOS_BOOT_TIMEOUT_MS";
/// Environment variable: how long connect waits for WebDriverAgent to report
/// ready (ms); bounded by the call's deadline.
pub const ENV_WDA_WAIT_MS: &str = "DEVICERAIL_IOS_WDA_WAIT_MS";

/// Default WebDriverAgent URL.
pub const DEFAULT_WDA_URL: &str = "http://127.0.0.1:8100";

/// Where screenshots come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenshotSource {
    /// `GET /screenshot` on WebDriverAgent (base64 PNG).
    Wda,
    /// `xcrun simctl io <udid> screenshot --type=png <file>`.
    Simctl,
}

impl ScreenshotSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Wda => "wda",
            Self::Simctl => "simctl",
        }
    }

    /// The other source, used as fallback.
    pub fn other(self) -> Self {
        match self {
            Self::Wda => Self::Simctl,
            Self::Simctl => Self::Wda,
        }
    }
}

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid configuration {key}: {reason}")]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
}

/// The resolved configuration of one driver instance.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The `xcrun` program (a name looked up on `PATH`, or a path).
    pub xcrun: PathBuf,
    /// Whether `xcrun` was configured explicitly (then a missing binary is
    /// an error instead of "no simulators here").
    pub xcrun_explicit: bool,
    /// WebDriverAgent base URL for simulators without an entry in `wda_urls`.
    pub wda_url: String,
    /// WebDriverAgent base URL per simulator UDID.
    pub wda_urls: BTreeMap<String, String>,
    /// List shut-down simulators and boot them on connect.
    pub boot: bool,
    /// Preferred screenshot source; the other one is the fallback.
    pub screenshot: ScreenshotSource,
    /// WebDriverAgent runner bundle id to launch when WDA is down.
    pub wda_bundle_id: Option<String>,
    /// Upper bound of a single WebDriverAgent request.
    pub http_timeout: Duration,
    /// Upper bound of a boot when the call has no deadline.
    pub boot_timeout: Duration,
    /// How long connect waits for WDA to become ready (bounded by the
    /// call's deadline); `None`: 60 s when `wda_bundle_id` is set (connect
    /// launches WDA), otherwise no wait (one probe).
    pub wda_wait: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            xcrun: PathBuf::from("xcrun"),
            xcrun_explicit: false,
            wda_url: DEFAULT_WDA_URL.to_owned(),
            wda_urls: BTreeMap::new(),
            boot: false,
            screenshot: ScreenshotSource::Wda,
            wda_bundle_id: None,
            http_timeout: Duration::from_secs(30),
            boot_timeout: Duration::from_secs(180),
            wda_wait: None,
        }
    }
}

/// One raw value: from settings (JSON) or the environment (text).
enum Raw {
    Json(Value),
    Text(String),
}

fn err(key: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        key: key.to_owned(),
        reason: reason.into(),
    }
}

impl Config {
    /// Reads `settings` (camelCase keys) and the process environment.
    pub fn from_sources(settings: &Map<String, Value>) -> Result<Self, ConfigError> {
        Self::resolve(settings, |name| std::env::var(name).ok())
    }

    /// Reads `settings` and an environment given as a lookup function.
    pub fn resolve(
        settings: &Map<String, Value>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let raw = |key: &str, var: &str| -> Option<Raw> {
            match settings.get(key) {
                Some(Value::Null) | None => env(var)
                    .filter(|v| !v.trim().is_empty())
                    .map(|v| Raw::Text(v.trim().to_owned())),
                Some(v) => Some(Raw::Json(v.clone())),
            }
        };
        let mut config = Self::default();
        if let Some(v) = raw("xcrun", ENV_XCRUN) {
            config.xcrun = PathBuf::from(text("xcrun", v)?);
            config.xcrun_explicit = true;
        }
        if let Some(v) = raw("wdaUrl", ENV_WDA_URL) {
            config.wda_url = base_url("wdaUrl", &text("wdaUrl", v)?)?;
        }
        if let Some(v) = raw("wdaUrls", ENV_WDA_URLS) {
            config.wda_urls = url_map(v)?;
        }
        if let Some(v) = raw("boot", ENV_BOOT) {
            config.boot = flag("boot", v)?;
        }
        if let Some(v) = raw("screenshot", ENV_SCREENSHOT) {
            config.screenshot = match text("screenshot", v)?.as_str() {
                "wda" => ScreenshotSource::Wda,
                "simctl" => ScreenshotSource::Simctl,
                other => {
                    return Err(err(
                        "screenshot",
                        format!("{other:?} is neither \"wda\" nor \"simctl\""),
                    ));
                }
            };
        }
        if let Some(v) = raw("wdaBundleId", ENV_WDA_BUNDLE_ID) {
            let id = text("wdaBundleId", v)?;
            if !crate::actions::valid_bundle_id(&id) {
                return Err(err("wdaBundleId", format!("{id:?} is not a bundle id")));
            }
            config.wda_bundle_id = Some(id);
        }
        if let Some(v) = raw("httpTimeoutMs", ENV_HTTP_TIMEOUT_MS) {
            config.http_timeout = millis("httpTimeoutMs", v)?;
        }
        if let Some(v) = raw("bootTimeoutMs", ENV_BOOT_TIMEOUT_MS) {
            config.boot_timeout = millis("bootTimeoutMs", v)?;
        }
        if let Some(v) = raw("wdaWaitMs", ENV_WDA_WAIT_MS) {
            config.wda_wait = Some(millis("wdaWaitMs", v)?);
        }
        Ok(config)
    }

    /// How long connect waits for WebDriverAgent readiness.
    pub fn effective_wda_wait(&self) -> Duration {
        self.wda_wait.unwrap_or(if self.wda_bundle_id.is_some() {
            Duration::from_secs(60)
        } else {
            Duration::ZERO
        })
    }

    /// The WebDriverAgent base URL of one simulator.
    pub fn wda_url_for(&self, udid: &str) -> &str {
        self.wda_urls
            .get(udid)
            .map(String::as_str)
            .unwrap_or(&self.wda_url)
    }
}

fn text(key: &str, raw: Raw) -> Result<String, ConfigError> {
    match raw {
        Raw::Text(s) | Raw::Json(Value::String(s)) if !s.trim().is_empty() => {
            Ok(s.trim().to_owned())
        }
        _ => Err(err(key, "expected a non-empty string")),
    }
}

fn flag(key: &str, raw: Raw) -> Result<bool, ConfigError> {
    match raw {
        Raw::Json(Value::Bool(b)) => Ok(b),
        Raw::Json(Value::String(s)) | Raw::Text(s) => match s.as_str() {
            "1" | "true" | "yes" | "on" => Ok(true),
            "0" | "false" | "no" | "off" => Ok(false),
            other => Err(err(key, format!("{other:?} is not a boolean"))),
        },
        Raw::Json(_) => Err(err(key, "expected a boolean")),
    }
}

fn millis(key: &str, raw: Raw) -> Result<Duration, ConfigError> {
    let n = match raw {
        Raw::Json(Value::Number(n)) => n.as_u64(),
        Raw::Json(Value::String(s)) | Raw::Text(s) => s.parse::<u64>().ok(),
        Raw::Json(_) => None,
    };
    match n {
        Some(ms) if (1..=86_400_000).contains(&ms) => Ok(Duration::from_millis(ms)),
        _ => Err(err(
            key,
            "expected a whole number of milliseconds in 1..=86400000",
        )),
    }
}

/// Validates a WebDriverAgent base URL and strips trailing slashes.
fn base_url(key: &str, url: &str) -> Result<String, ConfigError> {
    let trimmed = url.trim_end_matches('/');
    let rest = trimmed.strip_prefix("http://").ok_or_else(|| {
        err(
            key,
            format!("{url:?} must be an http:// URL (WebDriverAgent speaks plain HTTP)"),
        )
    })?;
    if rest.is_empty() || rest.contains(char::is_whitespace) || rest.contains(['?', '#']) {
        return Err(err(key, format!("{url:?} is not a usable base URL")));
    }
    Ok(trimmed.to_owned())
}

fn url_map(raw: Raw) -> Result<BTreeMap<String, String>, ConfigError> {
    const KEY: &str = "wdaUrls";
    let mut out = BTreeMap::new();
    match raw {
        Raw::Json(Value::Object(map)) => {
            for (udid, url) in map {
                let Value::String(url) = url else {
                    return Err(err(KEY, format!("the URL of {udid} is not a string")));
                };
                out.insert(udid, base_url(KEY, &url)?);
            }
        }
        Raw::Json(Value::String(s)) | Raw::Text(s) => {
            for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let (udid, url) = pair
                    .split_once('=')
                    .ok_or_else(|| err(KEY, format!("{pair:?} is not UDID=URL")))?;
                out.insert(udid.trim().to_owned(), base_url(KEY, url.trim())?);
            }
        }
        Raw::Json(_) => return Err(err(KEY, "expected an object or UDID=URL,... text")),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn defaults_without_sources() {
        let c = Config::resolve(&Map::new(), |_| None).expect("defaults resolve");
        assert_eq!(c, Config::default());
        assert_eq!(c.wda_url_for("X"), DEFAULT_WDA_URL);
    }

    #[test]
    fn settings_win_over_environment() {
        let c = Config::resolve(
            &settings(json!({ "wdaUrl": "http://127.0.0.1:9000/", "boot": true })),
            |name| match name {
                ENV_WDA_URL => Some("http://127.0.0.1:1".into()),
                ENV_BOOT => Some("0".into()),
                ENV_SCREENSHOT => Some("simctl".into()),
                _ => None,
            },
        )
        .expect("config resolves");
        assert_eq!(c.wda_url, "http://127.0.0.1:9000");
        assert!(c.boot);
        assert_eq!(c.screenshot, ScreenshotSource::Simctl);
    }

    #[test]
    fn url_maps_from_text_and_json() {
        let c = Config::resolve(&Map::new(), |name| {
            (name == ENV_WDA_URLS).then(|| "A=http://h:1, B=http://h:2/".to_owned())
        })
        .expect("config resolves");
        assert_eq!(c.wda_url_for("A"), "http://h:1");
        assert_eq!(c.wda_url_for("B"), "http://h:2");
        let c = Config::resolve(
            &settings(json!({ "wdaUrls": { "C": "http://h:3" } })),
            |_| None,
        )
        .expect("config resolves");
        assert_eq!(c.wda_url_for("C"), "http://h:3");
    }

    #[test]
    fn bad_values_are_refused() {
        for bad in [
            json!({ "wdaUrl": "https://h:1" }),
            json!({ "wdaUrl": "" }),
            json!({ "boot": "maybe" }),
            json!({ "screenshot": "camera" }),
            json!({ "httpTimeoutMs": 0 }),
            json!({ "wdaUrls": { "A": 3 } }),
            json!({ "wdaBundleId": "-x" }),
        ] {
            assert!(
                Config::resolve(&settings(bad.clone()), |_| None).is_err(),
                "{bad} was accepted"
            );
        }
    }
}
