//! Plugin configuration: `PluginConfig.settings` first, then environment
//! variables, then defaults. See the crate README for the full table.

use std::path::PathBuf;
use std::time::Duration;

use devicerail_host_plugin_api::config::{ConfigError, ConfigReader, Raw};
use serde_json::{Map, Value};

/// Environment variables read as defaults under the settings.
pub(crate) const ENDPOINT_ENV: &str = "DEVICERAIL_BROWSER_ENDPOINT";
pub(crate) const HEADLESS_ENV: &str = "DEVICERAIL_BROWSER_HEADLESS";
pub(crate) const VIEWPORT_ENV: &str = "DEVICERAIL_BROWSER_VIEWPORT";
pub(crate) const SCALE_ENV: &str = "DEVICERAIL_BROWSER_SCALE";
pub(crate) const ARGS_ENV: &str = "DEVICERAIL_BROWSER_ARGS";
pub(crate) const LAUNCH_TIMEOUT_ENV: &str = "DEVICERAIL_BROWSER_LAUNCH_TIMEOUT_MS";
pub(crate) const TREE_SOURCE_ENV: &str = "DEVICERAIL_BROWSER_TREE_SOURCE";

pub(crate) const DEFAULT_WIDTH: u32 = 1280;
pub(crate) const DEFAULT_HEIGHT: u32 = 800;
pub(crate) const DEFAULT_SCALE: f64 = 1.0;
pub(crate) const DEFAULT_LAUNCH_TIMEOUT: Duration = Duration::from_secs(30);
pub(crate) const DEFAULT_LAUNCHED_ID: &str = "browser-chromium";
pub(crate) const DEFAULT_ATTACHED_ID: &str = "browser-remote";

/// Where a device's browser comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// Start a browser (binary found at connect time when `None`).
    Launch {
        /// The executable (`binary` setting); `None`: `CHROME_PATH`, else
        /// the first Chromium/Chrome on `PATH`.
        binary: Option<PathBuf>,
        /// Launch without a window (the default).
        headless: bool,
        /// Extra command-line flags, appended after the driver's own.
        args: Vec<String>,
    },
    /// Use a running browser at a DevTools endpoint (`ws://...` or
    /// `http://host:port`); disconnect leaves it running.
    Attach {
        /// The endpoint, `ws://...` or `http://host:port`.
        endpoint: String,
    },
}

/// How the UI tree is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TreeSource {
    /// One walk of each frame's document by the driver's in-page library
    /// (an isolated world), falling back to the accessibility tree where
    /// script cannot run (the default).
    #[default]
    Auto,
    /// The in-page walk only: an observation fails where it cannot run.
    Walk,
    /// Chromium's accessibility tree (`Accessibility.getFullAXTree`)
    /// joined with a DOM snapshot; selectors then resolve against the
    /// bounded snapshot.
    Ax,
}

/// One configured browser = one device.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserSpec {
    /// The device id, 1-64 of `[a-z0-9-]`, unique among the browsers.
    pub id: String,
    /// The device name clients show.
    pub name: String,
    /// Whether the browser is launched or attached to.
    pub source: Source,
    /// Viewport width in CSS pixels (1..=10000).
    pub width: u32,
    /// Viewport height in CSS pixels (1..=10000).
    pub height: u32,
    /// Device pixels per CSS pixel (0.25..=5); screenshots and bounds are
    /// `width x scale` by `height x scale`.
    pub scale: f64,
    /// How long starting a launched browser may take at connect (the
    /// call's own deadline still applies when it is sooner).
    pub launch_timeout: Duration,
    /// How the UI tree is read.
    pub tree_source: TreeSource,
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct DriverConfig {
    /// The configured browsers, one device each, never empty once loaded.
    pub browsers: Vec<BrowserSpec>,
}

/// The settings of one browser (the whole table, or each entry of
/// `browsers`).
const BROWSER_KEYS: &[&str] = &[
    "id",
    "name",
    "binary",
    "endpoint",
    "headless",
    "viewportWidth",
    "viewportHeight",
    "deviceScaleFactor",
    "args",
    "launchTimeoutMs",
    "treeSource",
];

/// Whether `id` is a usable device id: 1-64 of `[a-z0-9-]`.
fn valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}

impl DriverConfig {
    /// Builds the configuration from host settings and the process
    /// environment.
    pub(crate) fn load(settings: &Map<String, Value>) -> Result<Self, ConfigError> {
        Self::from_sources(settings, |name| std::env::var(name).ok())
    }

    /// Builds the configuration from host settings and `env`: the
    /// variables are defaults under every browser's settings.
    pub(crate) fn from_sources(
        settings: &Map<String, Value>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let read = ConfigReader::with_env(settings, &env);
        let browsers = match read.tables("browsers")? {
            None => vec![spec(&read, true, 0)?],
            Some(tables) => {
                if let Some(other) = read.keys().find(|k| *k != "browsers") {
                    return Err(ConfigError::refused(
                        read.origin_of(other),
                        "with \"browsers\", give every other setting per browser",
                    ));
                }
                if tables.is_empty() {
                    return Err(ConfigError::refused(
                        read.origin_of("browsers"),
                        "the list is empty",
                    ));
                }
                tables
                    .iter()
                    .enumerate()
                    .map(|(i, table)| spec(&table.reader(), false, i))
                    .collect::<Result<Vec<_>, _>>()?
            }
        };
        let mut ids: Vec<&str> = browsers.iter().map(|b| b.id.as_str()).collect();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(ConfigError::refused(
                read.origin_of("browsers"),
                format!("the id {:?} is used twice", w[0]),
            ));
        }
        Ok(Self { browsers })
    }
}

/// Why a DevTools endpoint is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EndpointError {
    /// Not a string.
    #[error("expected a ws://... or http://host:port string")]
    NotAString,
    /// Neither WebSocket nor HTTP.
    #[error("{0:?} is neither ws://... nor http://host:port")]
    Scheme(String),
}

fn endpoint(raw: Raw<'_>) -> Result<String, EndpointError> {
    let endpoint = raw.as_str().ok_or(EndpointError::NotAString)?;
    if endpoint.starts_with("ws://") || endpoint.starts_with("http://") {
        Ok(endpoint.to_owned())
    } else {
        Err(EndpointError::Scheme(endpoint.to_owned()))
    }
}

/// `WIDTHxHEIGHT`, each side within 1..=10000.
fn viewport(text: &str) -> Option<(u32, u32)> {
    let (w, h) = text.split_once(['x', 'X'])?;
    let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    let side = 1..=10_000;
    (side.contains(&w) && side.contains(&h)).then_some((w, h))
}

/// One browser from its settings (`single`: the whole table is one
/// browser, so the endpoint variable applies).
fn spec(read: &ConfigReader<'_>, single: bool, index: usize) -> Result<BrowserSpec, ConfigError> {
    read.deny_unknown(BROWSER_KEYS)?;
    let binary = read.get("binary").path()?;
    let headless = read.get("headless").env(HEADLESS_ENV).bool()?;
    let args = read.get("args").env(ARGS_ENV).list()?;
    // The endpoint variable only applies to the default single browser.
    let mut attach = read.get("endpoint");
    if single && binary.is_none() {
        attach = attach.env(ENDPOINT_ENV);
    }
    let source = match (attach.map(endpoint)?, binary) {
        (Some(_), Some(_)) => {
            return Err(ConfigError::refused(
                read.origin_of("binary"),
                "give either \"endpoint\" or \"binary\", not both",
            ));
        }
        (Some(endpoint), None) => Source::Attach { endpoint },
        (None, binary) => Source::Launch {
            binary,
            headless: headless.unwrap_or(true),
            args: args.unwrap_or_default(),
        },
    };
    let default_id = match (&source, index) {
        (Source::Launch { .. }, 0) => DEFAULT_LAUNCHED_ID.to_owned(),
        (Source::Attach { .. }, 0) => DEFAULT_ATTACHED_ID.to_owned(),
        (_, i) => format!("browser-{}", i + 1),
    };
    let id = read
        .get("id")
        .parse("1-64 characters of [a-z0-9-]", |id| {
            valid_id(id).then(|| id.to_owned())
        })?
        .unwrap_or(default_id);
    let sizes = read
        .env(VIEWPORT_ENV)
        .parse("WIDTHxHEIGHT with each side from 1 to 10000", viewport)?;
    let (env_w, env_h) = sizes.unzip();
    let side = |key: &str| read.get(key).integer(1..=10_000u32);
    let width = side("viewportWidth")?.or(env_w).unwrap_or(DEFAULT_WIDTH);
    let height = side("viewportHeight")?.or(env_h).unwrap_or(DEFAULT_HEIGHT);
    let scale = read
        .get("deviceScaleFactor")
        .env(SCALE_ENV)
        .number(0.25..=5.0)?
        .unwrap_or(DEFAULT_SCALE);
    let name = read.get("name").string()?.unwrap_or_else(|| match &source {
        Source::Launch { headless: true, .. } => "Chromium (headless)".into(),
        Source::Launch {
            headless: false, ..
        } => "Chromium".into(),
        Source::Attach { endpoint } => format!("Browser at {endpoint}"),
    });
    let launch_timeout = read
        .get("launchTimeoutMs")
        .env(LAUNCH_TIMEOUT_ENV)
        .millis(0..=u64::MAX)?
        .unwrap_or(DEFAULT_LAUNCH_TIMEOUT);
    let tree_source = read
        .get("treeSource")
        .env(TREE_SOURCE_ENV)
        .one_of(&[
            ("auto", TreeSource::Auto),
            ("walk", TreeSource::Walk),
            ("ax", TreeSource::Ax),
        ])?
        .unwrap_or_default();
    Ok(BrowserSpec {
        id,
        name,
        source,
        width,
        height,
        scale,
        launch_timeout,
        tree_source,
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
        let c = DriverConfig::from_sources(&Map::new(), |_| None).expect("config");
        assert_eq!(c.browsers.len(), 1);
        let b = &c.browsers[0];
        assert_eq!(b.id, "browser-chromium");
        assert_eq!((b.width, b.height, b.scale), (1280, 800, 1.0));
        assert_eq!(b.tree_source, TreeSource::Auto);
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
        let env = |n: &str| match n {
            VIEWPORT_ENV => Some("800x600".into()),
            SCALE_ENV => Some("2".into()),
            HEADLESS_ENV => Some("0".into()),
            _ => None,
        };
        let c = DriverConfig::from_sources(&settings(json!({ "viewportWidth": 1024 })), env)
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
        let c = DriverConfig::from_sources(
            &settings(json!({ "browsers": [
                { "id": "chrome-a" },
                { "id": "remote", "endpoint": "http://127.0.0.1:9222" }
            ]})),
            |_| None,
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
        for bad in [
            json!({ "unknownKey": 1 }),
            json!({ "viewportWidth": 0 }),
            json!({ "deviceScaleFactor": 9.0 }),
            json!({ "id": "Bad Id" }),
            json!({ "endpoint": "ftp://x" }),
            json!({ "endpoint": "ws://x", "binary": "/bin/chromium" }),
            json!({ "browsers": [{ "id": "a" }, { "id": "a" }] }),
            json!({ "browsers": [] }),
            json!({ "treeSource": "dom" }),
        ] {
            assert!(
                DriverConfig::from_sources(&settings(bad.clone()), |_| None).is_err(),
                "{bad} was accepted"
            );
        }
        let big = |n: &str| (n == VIEWPORT_ENV).then(|| "big".to_owned());
        assert!(DriverConfig::from_sources(&Map::new(), big).is_err());
    }
}
