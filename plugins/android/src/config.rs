//! Plugin configuration: `PluginConfig.settings` first, then environment
//! variables, then defaults (see the README for the table).

use std::net::{Ipv4Addr, SocketAddrV4, ToSocketAddrs};
use std::time::Duration;

use devicerail_host_plugin_api::config::{ConfigError, ConfigReader};
use serde_json::{Map, Value};

/// The adb server's default address.
pub(crate) const DEFAULT_SERVER: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 5037);
/// Budget of one adb operation when the call itself has no deadline.
pub(crate) const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// Environment variable names.
pub(crate) mod env {
    /// adb's own: `tcp:host:port`.
    pub(crate) const ADB_SERVER_SOCKET: &str = "ADB_SERVER_SOCKET";
    /// adb's own: the server port on 127.0.0.1.
    pub(crate) const ANDROID_ADB_SERVER_PORT: &str = "ANDROID_ADB_SERVER_PORT";
    /// `startServer`: `true` or `false`.
    pub(crate) const START_SERVER: &str = "DEVICERAIL_ANDROID_START_SERVER";
    /// `adbPath`: the adb binary used for `start-server`.
    pub(crate) const ADB_PATH: &str = "DEVICERAIL_ANDROID_ADB";
    /// `screenshotMode`: `auto`, `raw` or `png`.
    pub(crate) const SCREENSHOT: &str = "DEVICERAIL_ANDROID_SCREENSHOT";
    /// `commandTimeoutMs`: milliseconds.
    pub(crate) const COMMAND_TIMEOUT_MS: &str = "DEVICERAIL_ANDROID_COMMAND_TIMEOUT_MS";
    /// `inputMethod`: `auto`, `touch` or `input`.
    pub(crate) const INPUT_METHOD: &str = "DEVICERAIL_ANDROID_INPUT";
    /// `uiTreeReuseMs`: milliseconds (0: never reuse).
    pub(crate) const UI_TREE_REUSE_MS: &str = "DEVICERAIL_ANDROID_UI_TREE_REUSE_MS";
}

/// Every setting the plugin reads; any other key is refused.
pub(crate) const SETTINGS: &[&str] = &[
    "adbServer",
    "startServer",
    "adbPath",
    "screenshotMode",
    "commandTimeoutMs",
    "inputMethod",
    "uiTreeReuseMs",
    "devices",
];

/// Every key of one `devices` entry.
const DEVICE_SETTINGS: &[&str] = &["serial", "screenshotMode", "inputMethod"];

/// How taps, long presses and swipes reach the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputMethod {
    /// Touch events where the device lets the shell write them (found with
    /// `getevent -lp`), else `input`.
    Auto,
    /// Touch events only: a device without a writable touchscreen fails
    /// the Action.
    Touch,
    /// `input tap` / `input swipe` (a Java VM per command, ~250 ms).
    Input,
}

impl InputMethod {
    /// The setting's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Touch => "touch",
            Self::Input => "input",
        }
    }
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
    /// The `screenshotMode` setting value: `auto`, `raw` or `png`.
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
    /// The method's name in settings, logs and doctor output: `raw` or
    /// `png`.
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
    /// Which screenshot method each device tries first (`screenshotMode`).
    pub screenshot: ScreenshotPreference,
    /// Budget of one adb operation when the call has no deadline.
    pub command_timeout: Duration,
    /// How gestures reach the device (`inputMethod`).
    pub input: InputMethod,
    /// How old a UI tree may be to answer an observation of an unchanged
    /// screen (same frame, same focused window, no Action since);
    /// `ZERO`: always dump.
    pub ui_tree_reuse: Duration,
    /// Per-device choices (`devices`, e.g. what `devicerail bench --save`
    /// measured), which win over `screenshotMode` and `inputMethod`.
    pub devices: Vec<DeviceTuning>,
}

/// One entry of `devices`: methods chosen for one serial.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceTuning {
    /// The device's adb serial.
    pub serial: String,
    /// Its screenshot method, if chosen.
    pub screenshot: Option<ScreenshotPreference>,
    /// Its input method, if chosen.
    pub input: Option<InputMethod>,
}

impl Config {
    /// The screenshot method `serial` uses.
    pub fn screenshot_for(&self, serial: &str) -> ScreenshotPreference {
        self.tuning(serial)
            .and_then(|t| t.screenshot)
            .unwrap_or(self.screenshot)
    }

    /// The input method `serial` uses.
    pub fn input_for(&self, serial: &str) -> InputMethod {
        self.tuning(serial)
            .and_then(|t| t.input)
            .unwrap_or(self.input)
    }

    fn tuning(&self, serial: &str) -> Option<&DeviceTuning> {
        self.devices.iter().find(|t| t.serial == serial)
    }
}

/// The longest `uiTreeReuseMs` by default.
pub const DEFAULT_UI_TREE_REUSE: Duration = Duration::from_secs(10);

impl Default for Config {
    fn default() -> Self {
        Self {
            server: DEFAULT_SERVER,
            start_server: true,
            adb_path: "adb".into(),
            screenshot: ScreenshotPreference::Auto,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            input: InputMethod::Auto,
            ui_tree_reuse: DEFAULT_UI_TREE_REUSE,
            devices: Vec::new(),
        }
    }
}

/// Why an adb server address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ServerSpecError {
    /// Neither a port nor `host:port`.
    #[error("{0:?} is not tcp:host:port")]
    NotHostPort(String),
    /// The port is not a number from 0 to 65535.
    #[error("{0:?} is not a port number")]
    BadPort(String),
    /// The host name does not resolve.
    #[error("cannot resolve {host:?}: {reason}")]
    Unresolved {
        /// The host name.
        host: String,
        /// The resolver's error.
        reason: String,
    },
    /// The host has no IPv4 address (adb_client talks IPv4 only).
    #[error("{0:?} has no IPv4 address")]
    NoIpv4(String),
}

/// Parses `tcp:host:port`, `host:port` or a bare port (on 127.0.0.1).
pub(crate) fn parse_server(spec: &str) -> Result<SocketAddrV4, ServerSpecError> {
    let spec = spec.trim();
    let rest = spec.strip_prefix("tcp:").unwrap_or(spec);
    if let Ok(port) = rest.parse::<u16>() {
        return Ok(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    }
    let (host, port) = rest
        .rsplit_once(':')
        .ok_or_else(|| ServerSpecError::NotHostPort(spec.to_owned()))?;
    let port: u16 = port
        .parse()
        .map_err(|_| ServerSpecError::BadPort(port.to_owned()))?;
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Ok(SocketAddrV4::new(ip, port));
    }
    // adb_client talks IPv4 only; resolve names such as "localhost".
    (host, port)
        .to_socket_addrs()
        .map_err(|e| ServerSpecError::Unresolved {
            host: host.to_owned(),
            reason: e.to_string(),
        })?
        .find_map(|a| match a {
            std::net::SocketAddr::V4(v4) => Some(v4),
            std::net::SocketAddr::V6(_) => None,
        })
        .ok_or_else(|| ServerSpecError::NoIpv4(host.to_owned()))
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
        let read = ConfigReader::with_env(settings, &env);
        read.deny_unknown(SETTINGS)?;
        let mut c = Config::default();
        let server = read.get("adbServer").env(env::ADB_SERVER_SOCKET);
        if let Some(server) = server.try_parse(parse_server)? {
            c.server = server;
        } else if let Some(port) = read
            .env(env::ANDROID_ADB_SERVER_PORT)
            .integer(0..=u16::MAX)?
        {
            c.server = SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        }
        let start_server = read.get("startServer").env(env::START_SERVER).bool()?;
        c.start_server = start_server.unwrap_or(c.start_server);
        if let Some(path) = read.get("adbPath").env(env::ADB_PATH).string()?
            && !path.trim().is_empty()
        {
            c.adb_path = path;
        }
        let screenshot = read.get("screenshotMode").env(env::SCREENSHOT);
        c.screenshot = screenshot.one_of(&MODES)?.unwrap_or(c.screenshot);
        let timeout = read.get("commandTimeoutMs").env(env::COMMAND_TIMEOUT_MS);
        c.command_timeout = timeout.millis(1..=3_600_000)?.unwrap_or(c.command_timeout);
        let input = read.get("inputMethod").env(env::INPUT_METHOD);
        c.input = input.one_of(&METHODS)?.unwrap_or(c.input);
        let reuse = read.get("uiTreeReuseMs").env(env::UI_TREE_REUSE_MS);
        c.ui_tree_reuse = reuse.millis(0..=600_000)?.unwrap_or(c.ui_tree_reuse);
        for table in read.tables("devices")?.unwrap_or_default() {
            let entry = table.reader();
            entry.deny_unknown(DEVICE_SETTINGS)?;
            let serial = entry
                .get("serial")
                .string()?
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| {
                    ConfigError::refused(entry.origin_of("serial"), "every entry names a serial")
                })?;
            if c.tuning(&serial).is_some() {
                return Err(ConfigError::refused(
                    entry.origin_of("serial"),
                    format!("{serial:?} has an entry already"),
                ));
            }
            let screenshot = entry.get("screenshotMode").one_of(&MODES)?;
            let input = entry.get("inputMethod").one_of(&METHODS)?;
            c.devices.push(DeviceTuning {
                serial,
                screenshot,
                input,
            });
        }
        Ok(c)
    }
}

/// `screenshotMode`'s values.
const MODES: [(&str, ScreenshotPreference); 3] = [
    ("auto", ScreenshotPreference::Auto),
    ("raw", ScreenshotPreference::Fixed(ScreenshotMode::Raw)),
    ("png", ScreenshotPreference::Fixed(ScreenshotMode::Png)),
];

/// `inputMethod`'s values.
const METHODS: [(&str, InputMethod); 3] = [
    ("auto", InputMethod::Auto),
    ("touch", InputMethod::Touch),
    ("input", InputMethod::Input),
];

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

    #[test]
    fn per_device_choices_win_for_their_serial_only() {
        let c = Config::from_sources(
            &map(json!({
                "screenshotMode": "png",
                "devices": [
                    { "serial": "emulator-5554", "screenshotMode": "raw", "inputMethod": "touch" },
                    { "serial": "R58M", "inputMethod": "input" },
                ],
            })),
            |k| (k == env::INPUT_METHOD).then(|| "auto".to_owned()),
        )
        .expect("valid");
        let raw = ScreenshotPreference::Fixed(ScreenshotMode::Raw);
        let png = ScreenshotPreference::Fixed(ScreenshotMode::Png);
        assert_eq!(c.screenshot_for("emulator-5554"), raw);
        assert_eq!(c.input_for("emulator-5554"), InputMethod::Touch);
        assert_eq!(c.screenshot_for("R58M"), png);
        assert_eq!(c.input_for("R58M"), InputMethod::Input);
        assert_eq!(c.screenshot_for("other"), png);
        assert_eq!(c.input_for("other"), InputMethod::Auto);
        for bad in [
            json!({ "devices": [{ "screenshotMode": "raw" }] }),
            json!({ "devices": [{ "serial": "a" }, { "serial": "a" }] }),
            json!({ "devices": [{ "serial": "a", "inputMethod": "mouse" }] }),
            json!({ "devices": [{ "serial": "a", "speed": 1 }] }),
            json!({ "devices": { "serial": "a" } }),
        ] {
            let e = Config::from_sources(&map(bad.clone()), |_| None).expect_err("refused");
            assert!(e.to_string().contains("devices"), "{bad}: {e}");
        }
    }
}
