//! Plugin configuration: `PluginConfig.settings` first, then environment
//! variables, then defaults (see the README for the table).

use std::net::{Ipv4Addr, SocketAddrV4, ToSocketAddrs};
use std::time::Duration;

use serde_json::{Map, Value};

/// The adb server's default address.
pub const DEFAULT_SERVER: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 5037);
/// Budget of one adb operation when the call itself has no deadline.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Environment variable names.
pub mod env {
    /// adb's own: `tcp:host:port`.
    pub const ADB_SERVER_SOCKET: &str = "ADB_SERVER_SOCKET";
    /// adb's own: the server port on 127.0.0.1.
    pub const ANDROID_ADB_SERVER_PORT: &str = "ANDROID_ADB_SERVER_PORT";
    pub const START_SERVER: &str = "DEVICERAIL_ANDROID_START_SERVER";
    pub const ADB_PATH: &str = "DEVICERAIL_ANDROID_ADB";
    pub const SCREENSHOT: &str = "DEVICERAIL_ANDROID_SCREENSHOT";
    pub const COMMAND_TIMEOUT_MS: &str = "DEVICERAIL_ANDROID_COMMAND_TIMEOUT_MS";
}

/// Which screenshot method to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenshotPreference {
    /// Per device: try each method once, then keep the faster one (the
    /// link speed and the device's CPU decide, so it is measured).
    Auto,
    /// Always this method first; the other one only as the fallback.
    Fixed(ScreenshotMode),
}

impl ScreenshotPreference {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Fixed(m) => m.as_str(),
        }
    }
}

/// A way to take a screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenshotMode {
    /// `screencap` raw framebuffer, PNG-encoded on the host.
    Raw,
    /// `screencap -p`, PNG-encoded on the device.
    Png,
}

impl ScreenshotMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Raw => "raw",
            Self::Png => "png",
        }
    }
}

/// The resolved configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The adb server.
    pub server: SocketAddrV4,
    /// Run `adb -P <port> start-server` when a loopback server refuses
    /// connections.
    pub start_server: bool,
    /// The adb binary used for `start-server`.
    pub adb_path: String,
    pub screenshot: ScreenshotPreference,
    /// Budget of one adb operation when the call has no deadline.
    pub command_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            server: DEFAULT_SERVER,
            start_server: true,
            adb_path: "adb".into(),
            screenshot: ScreenshotPreference::Auto,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
        }
    }
}

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {name}: {reason}")]
pub struct ConfigError {
    pub name: String,
    pub reason: String,
}

fn bad(name: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        name: name.to_owned(),
        reason: reason.into(),
    }
}

/// Parses `tcp:host:port`, `host:port` or a bare port (on 127.0.0.1).
pub fn parse_server(spec: &str) -> Result<SocketAddrV4, String> {
    let spec = spec.trim();
    let rest = spec.strip_prefix("tcp:").unwrap_or(spec);
    if let Ok(port) = rest.parse::<u16>() {
        return Ok(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    }
    let (host, port) = rest
        .rsplit_once(':')
        .ok_or_else(|| format!("{spec:?} is not tcp:host:port"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("{port:?} is not a port number"))?;
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Ok(SocketAddrV4::new(ip, port));
    }
    // adb_client talks IPv4 only; resolve names such as "localhost".
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host:?}: {e}"))?
        .find_map(|a| match a {
            std::net::SocketAddr::V4(v4) => Some(v4),
            std::net::SocketAddr::V6(_) => None,
        })
        .ok_or_else(|| format!("{host:?} has no IPv4 address"))
}

fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// A setting as text (strings, numbers and booleans are accepted).
fn setting(settings: &Map<String, Value>, key: &str) -> Option<String> {
    match settings.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => Some(String::new()),
    }
}

impl Config {
    /// Reads settings, then the process environment.
    pub fn load(settings: &Map<String, Value>) -> Result<Self, ConfigError> {
        Self::from_sources(settings, |k| std::env::var(k).ok())
    }

    /// Reads settings, then `env`.
    pub fn from_sources(
        settings: &Map<String, Value>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut c = Config::default();
        let pick = |key: &str, var: &str| setting(settings, key).or_else(|| env(var));
        if let Some(spec) = setting(settings, "adbServer").or_else(|| env(env::ADB_SERVER_SOCKET)) {
            c.server = parse_server(&spec).map_err(|r| bad("adbServer", r))?;
        } else if let Some(port) = env(env::ANDROID_ADB_SERVER_PORT) {
            let port = port
                .trim()
                .parse()
                .map_err(|_| bad(env::ANDROID_ADB_SERVER_PORT, "not a port number"))?;
            c.server = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        }
        if let Some(v) = pick("startServer", env::START_SERVER) {
            c.start_server =
                parse_bool(&v).ok_or_else(|| bad("startServer", "expected true or false"))?;
        }
        if let Some(v) = pick("adbPath", env::ADB_PATH)
            && !v.trim().is_empty()
        {
            c.adb_path = v;
        }
        if let Some(v) = pick("screenshotMode", env::SCREENSHOT) {
            c.screenshot = match v.trim().to_ascii_lowercase().as_str() {
                "auto" => ScreenshotPreference::Auto,
                "raw" => ScreenshotPreference::Fixed(ScreenshotMode::Raw),
                "png" => ScreenshotPreference::Fixed(ScreenshotMode::Png),
                _ => return Err(bad("screenshotMode", "expected auto, raw or png")),
            };
        }
        if let Some(v) = pick("commandTimeoutMs", env::COMMAND_TIMEOUT_MS) {
            let ms: u64 = v
                .trim()
                .parse()
                .ok()
                .filter(|ms| (1..=3_600_000).contains(ms))
                .ok_or_else(|| bad("commandTimeoutMs", "expected 1..=3600000"))?;
            c.command_timeout = Duration::from_millis(ms);
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn server_specs() {
        assert_eq!(
            parse_server("tcp:127.0.0.1:6000"),
            Ok(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 6000))
        );
        assert_eq!(
            parse_server("10.0.0.2:5037"),
            Ok(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 5037))
        );
        assert_eq!(
            parse_server("7000"),
            Ok(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 7000))
        );
        assert!(parse_server("tcp:host").is_err());
        assert!(parse_server("tcp:127.0.0.1:99999").is_err());
    }

    #[test]
    fn settings_win_over_environment() {
        let env = |k: &str| match k {
            env::ADB_SERVER_SOCKET => Some("tcp:127.0.0.1:6001".to_owned()),
            env::SCREENSHOT => Some("png".to_owned()),
            _ => None,
        };
        let c = Config::from_sources(&map(json!({})), env).expect("valid");
        assert_eq!(c.server.port(), 6001);
        assert_eq!(
            c.screenshot,
            ScreenshotPreference::Fixed(ScreenshotMode::Png)
        );
        let c = Config::from_sources(
            &map(json!({ "adbServer": "tcp:127.0.0.1:6002", "screenshotMode": "raw", "startServer": false, "commandTimeoutMs": 500 })),
            env,
        )
        .expect("valid");
        assert_eq!(c.server.port(), 6002);
        assert_eq!(
            c.screenshot,
            ScreenshotPreference::Fixed(ScreenshotMode::Raw)
        );
        assert!(!c.start_server);
        assert_eq!(c.command_timeout, Duration::from_millis(500));
        let d = Config::from_sources(&Map::new(), |_| None).expect("defaults");
        assert_eq!(d, Config::default());
        assert_eq!(d.screenshot, ScreenshotPreference::Auto);
    }

    #[test]
    fn adb_port_variable_and_errors() {
        let c = Config::from_sources(&Map::new(), |k| {
            (k == env::ANDROID_ADB_SERVER_PORT).then(|| "5099".to_owned())
        })
        .expect("valid");
        assert_eq!(c.server, SocketAddrV4::new(Ipv4Addr::LOCALHOST, 5099));
        let e = Config::from_sources(&map(json!({ "screenshotMode": "jpeg" })), |_| None);
        assert!(e.is_err());
        let e = Config::from_sources(&map(json!({ "commandTimeoutMs": 0 })), |_| None);
        assert!(e.is_err());
    }
}
