//! Plugin configuration: `PluginConfig.settings` first, then environment
//! variables, then defaults. See the crate README for the full table.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value};

/// Environment variables read as defaults under the settings.
pub const ENDPOINT_ENV: &str = "DEVICERAIL_BROWSER_ENDPOINT";
pub const HEADLESS_ENV: &str = "DEVICERAIL_BROWSER_HEADLESS";
pub const VIEWPORT_ENV: &str = "DEVICERAIL_BROWSER_VIEWPORT";
pub const SCALE_ENV: &str = "DEVICERAIL_BROWSER_SCALE";
pub const ARGS_ENV: &str = "DEVICERAIL_BROWSER_ARGS";
pub const LAUNCH_TIMEOUT_ENV: &str = "DEVICERAIL_BROWSER_LAUNCH_TIMEOUT_MS";

pub const DEFAULT_WIDTH: u32 = 1280;
pub const DEFAULT_HEIGHT: u32 = 800;
pub const DEFAULT_SCALE: f64 = 1.0;
pub const DEFAULT_LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_LAUNCHED_ID: &str = "browser-chromium";
pub const DEFAULT_ATTACHED_ID: &str = "browser-remote";

/// A configuration defect; the plugin refuses to initialize with it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    #[error("invalid browser settings: {0}")]
    Settings(String),
    #[error("invalid {name}={value:?}: {reason}")]
    Env {
        name: &'static str,
        value: String,
        reason: String,
    },
    #[error("browser {id:?}: {reason}")]
    Browser { id: String, reason: String },
}

/// Where a device's browser comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Start a browser (binary found at connect time when `None`).
    Launch {
        binary: Option<PathBuf>,
        headless: bool,
        args: Vec<String>,
    },
    /// Use a running browser at a DevTools endpoint (`ws://...` or
    /// `http://host:port`); disconnect leaves it running.
    Attach { endpoint: String },
}

/// One configured browser = one device.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserSpec {
    pub id: String,
    pub name: String,
    pub source: Source,
    /// Viewport in CSS pixels and device pixels per CSS pixel.
    pub width: u32,
    pub height: u32,
    pub scale: f64,
    pub launch_timeout: Duration,
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverConfig {
    pub browsers: Vec<BrowserSpec>,
}

/// The settings of one browser, as JSON.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BrowserSettings {
    id: Option<String>,
    name: Option<String>,
    binary: Option<PathBuf>,
    endpoint: Option<String>,
    headless: Option<bool>,
    viewport_width: Option<u32>,
    viewport_height: Option<u32>,
    device_scale_factor: Option<f64>,
    args: Option<Vec<String>>,
    launch_timeout_ms: Option<u64>,
}

/// Environment defaults.
#[derive(Debug, Clone, Default)]
pub struct EnvDefaults {
    pub endpoint: Option<String>,
    pub headless: Option<bool>,
    pub viewport: Option<(u32, u32)>,
    pub scale: Option<f64>,
    pub args: Option<Vec<String>>,
    pub launch_timeout_ms: Option<u64>,
}

impl EnvDefaults {
    /// Reads the `DEVICERAIL_BROWSER_*` variables.
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
    }

    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, ConfigError> {
        let bad = |name: &'static str, value: &str, reason: &str| ConfigError::Env {
            name,
            value: value.to_owned(),
            reason: reason.to_owned(),
        };
        let headless = match get(HEADLESS_ENV) {
            None => None,
            Some(v) => Some(match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" => true,
                "0" | "false" | "no" => false,
                _ => return Err(bad(HEADLESS_ENV, &v, "expected 1 or 0")),
            }),
        };
        let viewport = match get(VIEWPORT_ENV) {
            None => None,
            Some(v) => {
                let parsed = v
                    .split_once(['x', 'X'])
                    .and_then(|(w, h)| Some((w.trim().parse().ok()?, h.trim().parse().ok()?)));
                Some(parsed.ok_or_else(|| bad(VIEWPORT_ENV, &v, "expected WIDTHxHEIGHT"))?)
            }
        };
        let scale = match get(SCALE_ENV) {
            None => None,
            Some(v) => Some(
                v.trim()
                    .parse::<f64>()
                    .map_err(|_| bad(SCALE_ENV, &v, "expected a number"))?,
            ),
        };
        let launch_timeout_ms = match get(LAUNCH_TIMEOUT_ENV) {
            None => None,
            Some(v) => Some(
                v.trim()
                    .parse::<u64>()
                    .map_err(|_| bad(LAUNCH_TIMEOUT_ENV, &v, "expected milliseconds"))?,
            ),
        };
        Ok(Self {
            endpoint: get(ENDPOINT_ENV),
            headless,
            viewport,
            scale,
            args: get(ARGS_ENV).map(|v| v.split_whitespace().map(str::to_owned).collect()),
            launch_timeout_ms,
        })
    }
}

/// Whether `id` is a usable device id: 1-64 of `[a-z0-9-]`.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

impl DriverConfig {
    /// Builds the configuration from host settings and the environment.
    pub fn from_settings(
        settings: &Map<String, Value>,
        env: &EnvDefaults,
    ) -> Result<Self, ConfigError> {
        let list: Vec<BrowserSettings> = match settings.get("browsers") {
            Some(browsers) => {
                if settings.len() > 1 {
                    return Err(ConfigError::Settings(
                        "with \"browsers\", give every other setting per browser".into(),
                    ));
                }
                serde_json::from_value(browsers.clone())
                    .map_err(|e| ConfigError::Settings(e.to_string()))?
            }
            None => vec![
                serde_json::from_value(Value::Object(settings.clone()))
                    .map_err(|e| ConfigError::Settings(e.to_string()))?,
            ],
        };
        if list.is_empty() {
            return Err(ConfigError::Settings("\"browsers\" is empty".into()));
        }
        let single = list.len() == 1 && !settings.contains_key("browsers");
        let mut browsers = Vec::with_capacity(list.len());
        for (i, b) in list.into_iter().enumerate() {
            browsers.push(spec(b, env, single, i)?);
        }
        let mut ids: Vec<&str> = browsers.iter().map(|b| b.id.as_str()).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(ConfigError::Browser {
                id: w[0].to_owned(),
                reason: "the id is used twice".into(),
            });
        }
        Ok(Self { browsers })
    }
}

fn spec(
    b: BrowserSettings,
    env: &EnvDefaults,
    single: bool,
    index: usize,
) -> Result<BrowserSpec, ConfigError> {
    // The endpoint variable only applies to the default single browser.
    let endpoint = b.endpoint.clone().or_else(|| {
        (single && b.binary.is_none())
            .then(|| env.endpoint.clone())
            .flatten()
    });
    let source = match (endpoint, b.binary) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::Browser {
                id: b.id.unwrap_or_default(),
                reason: "give either \"endpoint\" or \"binary\", not both".into(),
            });
        }
        (Some(endpoint), None) => Source::Attach { endpoint },
        (None, binary) => Source::Launch {
            binary,
            headless: b.headless.or(env.headless).unwrap_or(true),
            args: b.args.or_else(|| env.args.clone()).unwrap_or_default(),
        },
    };
    let default_id = match (&source, index) {
        (Source::Launch { .. }, 0) => DEFAULT_LAUNCHED_ID.to_owned(),
        (Source::Attach { .. }, 0) => DEFAULT_ATTACHED_ID.to_owned(),
        (_, i) => format!("browser-{}", i + 1),
    };
    let id = b.id.unwrap_or(default_id);
    let fail = |reason: String| ConfigError::Browser {
        id: id.clone(),
        reason,
    };
    if !valid_id(&id) {
        return Err(fail("ids are 1-64 characters of [a-z0-9-]".into()));
    }
    if let Source::Attach { endpoint } = &source
        && !(endpoint.starts_with("ws://") || endpoint.starts_with("http://"))
    {
        return Err(fail(format!(
            "endpoint {endpoint:?} is neither ws://... nor http://host:port"
        )));
    }
    let (env_w, env_h) = env.viewport.unzip();
    let width = b.viewport_width.or(env_w).unwrap_or(DEFAULT_WIDTH);
    let height = b.viewport_height.or(env_h).unwrap_or(DEFAULT_HEIGHT);
    if !(1..=10_000).contains(&width) || !(1..=10_000).contains(&height) {
        return Err(fail(format!(
            "viewport {width}x{height} is outside 1..=10000"
        )));
    }
    let scale = b.device_scale_factor.or(env.scale).unwrap_or(DEFAULT_SCALE);
    if !(0.25..=5.0).contains(&scale) {
        return Err(fail(format!(
            "deviceScaleFactor {scale} is outside 0.25..=5"
        )));
    }
    let name = b.name.unwrap_or_else(|| match &source {
        Source::Launch { headless: true, .. } => "Chromium (headless)".into(),
        Source::Launch {
            headless: false, ..
        } => "Chromium".into(),
        Source::Attach { endpoint } => format!("Browser at {endpoint}"),
    });
    Ok(BrowserSpec {
        id,
        name,
        source,
        width,
        height,
        scale,
        launch_timeout: b
            .launch_timeout_ms
            .or(env.launch_timeout_ms)
            .map_or(DEFAULT_LAUNCH_TIMEOUT, Duration::from_millis),
    })
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
    fn defaults() {
        let c = DriverConfig::from_settings(&Map::new(), &EnvDefaults::default()).expect("config");
        assert_eq!(c.browsers.len(), 1);
        let b = &c.browsers[0];
        assert_eq!(b.id, "browser-chromium");
        assert_eq!((b.width, b.height, b.scale), (1280, 800, 1.0));
        assert_eq!(
            b.source,
            Source::Launch {
                binary: None,
                headless: true,
                args: vec![]
            }
        );
    }

    #[test]
    fn env_defaults_apply_under_settings() {
        let env = EnvDefaults::from_lookup(|n| match n {
            VIEWPORT_ENV => Some("800x600".into()),
            SCALE_ENV => Some("2".into()),
            HEADLESS_ENV => Some("0".into()),
            _ => None,
        })
        .expect("env");
        let c = DriverConfig::from_settings(&settings(json!({ "viewportWidth": 1024 })), &env)
            .expect("config");
        let b = &c.browsers[0];
        assert_eq!((b.width, b.height, b.scale), (1024, 600, 2.0));
        assert!(matches!(
            b.source,
            Source::Launch {
                headless: false,
                ..
            }
        ));
    }

    #[test]
    fn several_browsers_and_attach() {
        let c = DriverConfig::from_settings(
            &settings(json!({ "browsers": [
                { "id": "chrome-a" },
                { "id": "remote", "endpoint": "http://127.0.0.1:9222" }
            ]})),
            &EnvDefaults::default(),
        )
        .expect("config");
        assert_eq!(c.browsers.len(), 2);
        assert_eq!(
            c.browsers[1].source,
            Source::Attach {
                endpoint: "http://127.0.0.1:9222".into()
            }
        );
    }

    #[test]
    fn defects_are_refused() {
        let env = EnvDefaults::default();
        for bad in [
            json!({ "unknownKey": 1 }),
            json!({ "viewportWidth": 0 }),
            json!({ "deviceScaleFactor": 9.0 }),
            json!({ "id": "Bad Id" }),
            json!({ "endpoint": "ftp://x" }),
            json!({ "endpoint": "ws://x", "binary": "/bin/chromium" }),
            json!({ "browsers": [{ "id": "a" }, { "id": "a" }] }),
            json!({ "browsers": [] }),
        ] {
            assert!(
                DriverConfig::from_settings(&settings(bad.clone()), &env).is_err(),
                "{bad} was accepted"
            );
        }
        assert!(EnvDefaults::from_lookup(|n| (n == VIEWPORT_ENV).then(|| "big".into())).is_err());
    }
}
