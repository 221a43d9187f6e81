//! Plugin configuration: `PluginConfig.settings` first, then the
//! documented `DEVICERAIL_*` environment variables, then defaults.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use devicerail_host_plugin_api::config::{ConfigError, ConfigReader, Raw};
use serde_json::{Map, Value};

/// Every setting the plugin reads; any other key is refused.
pub(crate) const SETTINGS: &[&str] = &[
    "xcrun",
    "wdaUrl",
    "wdaUrls",
    "boot",
    "screenshot",
    "wdaBundleId",
    "httpTimeoutMs",
    "bootTimeoutMs",
    "wdaWaitMs",
];

/// Environment variable naming the `xcrun` binary.
pub(crate) const ENV_XCRUN: &str = "DEVICERAIL_XCRUN";
/// Environment variable with the default WebDriverAgent URL.
pub(crate) const ENV_WDA_URL: &str = "DEVICERAIL_IOS_WDA_URL";
/// Environment variable with per-simulator WebDriverAgent URLs
/// (`UDID=URL,UDID=URL`).
pub(crate) const ENV_WDA_URLS: &str = "DEVICERAIL_IOS_WDA_URLS";
/// Environment variable: `1` lists shut-down simulators and boots on connect.
pub(crate) const ENV_BOOT: &str = "DEVICERAIL_IOS_BOOT";
/// Environment variable: default screenshot source, `wda` or `simctl`.
pub(crate) const ENV_SCREENSHOT: &str = "DEVICERAIL_IOS_SCREENSHOT";
/// Environment variable: bundle id of an installed WebDriverAgent runner
/// that connect launches with `simctl launch` when WDA is not up.
pub(crate) const ENV_WDA_BUNDLE_ID: &str = "DEVICERAIL_IOS_WDA_BUNDLE_ID";
/// Environment variable: upper bound of one WebDriverAgent request (ms).
pub(crate) const ENV_HTTP_TIMEOUT_MS: &str = "DEVICERAIL_IOS_HTTP_TIMEOUT_MS";
/// Environment variable: how long connect may wait for a boot (ms) when the
/// call has no deadline.
pub(crate) const ENV_BOOT_TIMEOUT_MS: &str = "DEVICERAIL_IOS_BOOT_TIMEOUT_MS";
/// Environment variable: how long connect waits for WebDriverAgent to report
/// ready (ms); bounded by the call's deadline.
pub(crate) const ENV_WDA_WAIT_MS: &str = "DEVICERAIL_IOS_WDA_WAIT_MS";

/// Default WebDriverAgent URL.
pub(crate) const DEFAULT_WDA_URL: &str = "http://127.0.0.1:8100";

/// Where screenshots come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenshotSource {
    /// `GET /screenshot` on WebDriverAgent (base64 PNG).
    Wda,
    /// `xcrun simctl io <udid> screenshot --type=png <file>`.
    Simctl,
}

impl ScreenshotSource {
    /// The `screenshot` setting value, also reported as the observation's
    /// `screenshotSource`: `wda` or `simctl`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Wda => "wda",
            Self::Simctl => "simctl",
        }
    }

    /// The other source, used as fallback.
    pub(crate) fn other(self) -> Self {
        match self {
            Self::Wda => Self::Simctl,
            Self::Simctl => Self::Wda,
        }
    }
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

impl Config {
    /// Reads `settings` (camelCase keys) and the process environment.
    pub(crate) fn from_sources(settings: &Map<String, Value>) -> Result<Self, ConfigError> {
        Self::resolve(settings, |name| std::env::var(name).ok())
    }

    /// Reads `settings` and an environment given as a lookup function.
    pub(crate) fn resolve(
        settings: &Map<String, Value>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let read = ConfigReader::with_env(settings, &env);
        read.deny_unknown(SETTINGS)?;
        let mut config = Self::default();
        if let Some(xcrun) = read.get("xcrun").env(ENV_XCRUN).path()? {
            config.xcrun = xcrun;
            config.xcrun_explicit = true;
        }
        if let Some(url) = read.get("wdaUrl").env(ENV_WDA_URL).try_parse(base_url)? {
            config.wda_url = url;
        }
        if let Some(urls) = read.get("wdaUrls").env(ENV_WDA_URLS).map(url_map)? {
            config.wda_urls = urls;
        }
        config.boot = read
            .get("boot")
            .env(ENV_BOOT)
            .bool()?
            .unwrap_or(config.boot);
        let sources = [
            ("wda", ScreenshotSource::Wda),
            ("simctl", ScreenshotSource::Simctl),
        ];
        let screenshot = read.get("screenshot").env(ENV_SCREENSHOT);
        config.screenshot = screenshot.one_of(&sources)?.unwrap_or(config.screenshot);
        let bundle_id = read.get("wdaBundleId").env(ENV_WDA_BUNDLE_ID);
        config.wda_bundle_id = bundle_id.parse("a bundle id", |id| {
            crate::actions::valid_bundle_id(id).then(|| id.to_owned())
        })?;
        let millis = |key: &str, var: &str| read.get(key).env(var).millis(1..=86_400_000);
        if let Some(t) = millis("httpTimeoutMs", ENV_HTTP_TIMEOUT_MS)? {
            config.http_timeout = t;
        }
        if let Some(t) = millis("bootTimeoutMs", ENV_BOOT_TIMEOUT_MS)? {
            config.boot_timeout = t;
        }
        config.wda_wait = millis("wdaWaitMs", ENV_WDA_WAIT_MS)?;
        Ok(config)
    }

    /// How long connect waits for WebDriverAgent readiness.
    pub(crate) fn effective_wda_wait(&self) -> Duration {
        self.wda_wait.unwrap_or(if self.wda_bundle_id.is_some() {
            Duration::from_secs(60)
        } else {
            Duration::ZERO
        })
    }

    /// The WebDriverAgent base URL of one simulator.
    pub(crate) fn wda_url_for(&self, udid: &str) -> &str {
        self.wda_urls
            .get(udid)
            .map(String::as_str)
            .unwrap_or(&self.wda_url)
    }
}

/// Why a WebDriverAgent URL setting is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum WdaUrlError {
    /// Not plain HTTP.
    #[error("{0:?} must be an http:// URL (WebDriverAgent speaks plain HTTP)")]
    NotHttp(String),
    /// No host, or whitespace, a query or a fragment.
    #[error("{0:?} is not a usable base URL")]
    Unusable(String),
    /// A `wdaUrls` entry whose URL is not a string.
    #[error("the URL of {0} is not a string")]
    NotAString(String),
    /// A `wdaUrls` text entry that is not `UDID=URL`.
    #[error("{0:?} is not UDID=URL")]
    NotAPair(String),
    /// `wdaUrls` is neither an object nor text.
    #[error("expected an object or UDID=URL,... text")]
    Shape,
}

/// Validates a WebDriverAgent base URL and strips trailing slashes.
fn base_url(url: &str) -> Result<String, WdaUrlError> {
    let trimmed = url.trim_end_matches('/');
    let rest = trimmed
        .strip_prefix("http://")
        .ok_or_else(|| WdaUrlError::NotHttp(url.to_owned()))?;
    if rest.is_empty() || rest.contains(char::is_whitespace) || rest.contains(['?', '#']) {
        return Err(WdaUrlError::Unusable(url.to_owned()));
    }
    Ok(trimmed.to_owned())
}

/// Per-simulator URLs: a JSON object `{UDID: URL}` or `UDID=URL,...` text.
fn url_map(raw: Raw<'_>) -> Result<BTreeMap<String, String>, WdaUrlError> {
    let mut out = BTreeMap::new();
    match raw {
        Raw::Json(Value::Object(map)) => {
            for (udid, url) in map {
                let Value::String(url) = url else {
                    return Err(WdaUrlError::NotAString(udid.clone()));
                };
                out.insert(udid.clone(), base_url(url)?);
            }
        }
        other => {
            let text = other.as_str().ok_or(WdaUrlError::Shape)?;
            for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                let (udid, url) = pair
                    .split_once('=')
                    .ok_or_else(|| WdaUrlError::NotAPair(pair.to_owned()))?;
                out.insert(udid.trim().to_owned(), base_url(url.trim())?);
            }
        }
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
