//! The persistent state of the fake simulators: a JSON file shared by the
//! `fake-xcrun` binary (one process per call) and the fake WebDriverAgent
//! (which reads the app in front and whether the simulator is booted),
//! plus an append-only log of every `xcrun` invocation.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Environment variable naming the state file.
pub(crate) const STATE_ENV: &str = "FAKE_XCRUN_STATE";
/// File name the fake looks for next to the invoked `xcrun` path when
/// [`STATE_ENV`] is not set (lets parallel tests use one symlink each).
pub(crate) const SIBLING_STATE_FILE: &str = "fake-simctl-state.json";

/// The booted iPhone SE every scenario test drives.
pub const SE_UDID: &str = "6C1F3E0A-6B5E-4E0F-9A51-3D1E5B8C2A01";
/// A shut-down iPhone 15 (boots in `boot_ms`).
pub const IPHONE15_UDID: &str = "9F2B7D4C-1A3E-4C5B-8D6F-0E1A2B3C4D02";
/// An iPad whose runtime is missing (unavailable).
pub const IPAD_UDID: &str = "1D3C5B7A-2E4F-4A6B-9C8D-7E6F5A4B3C03";
/// A booted Apple Watch (another platform; never listed as iOS).
pub const WATCH_UDID: &str = "8E7D6C5B-4A3F-4E2D-8C1B-0A9F8E7D6C04";

/// The fake login app's bundle id.
pub const FAKE_APP: &str = "com.devicerail.fakeapp";
/// Safari's bundle id.
pub const SAFARI: &str = "com.apple.mobilesafari";
/// Settings' bundle id.
pub const SETTINGS: &str = "com.apple.Preferences";
/// The home screen's bundle id.
pub const SPRINGBOARD: &str = "com.apple.springboard";

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// One fake simulator.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FakeSimDevice {
    /// The simulator's UDID.
    pub udid: String,
    /// Its display name (`iPhone SE (3rd generation)`).
    pub name: String,
    /// `com.apple.CoreSimulator.SimRuntime.iOS-17-4`.
    pub runtime: String,
    /// Listed as `deviceTypeIdentifier`.
    pub device_type: String,
    /// `Booted`, `Booting`, `Shutdown`.
    pub state: String,
    /// Listed as `isAvailable`; an unavailable simulator refuses to boot.
    pub is_available: bool,
    /// Listed as `availabilityError` when set.
    #[serde(default)]
    pub availability_error: Option<String>,
    /// How long a boot takes.
    pub boot_ms: u64,
    /// When a `Booting` simulator becomes `Booted` (Unix ms).
    #[serde(default)]
    pub boot_done_at_ms: Option<u64>,
    /// Screen width in pixels (`simctl io screenshot`'s size).
    pub screen_width: u32,
    /// Screen height in pixels.
    pub screen_height: u32,
    /// Bundle ids `simctl launch` accepts; others fail like an app that is
    /// not installed.
    pub installed_apps: Vec<String>,
    /// Bundle id of the app in front, if any (SpringBoard after a boot).
    #[serde(default)]
    pub foreground_app: Option<String>,
    /// The last URL `simctl openurl` opened (Safari shows it).
    #[serde(default)]
    pub last_url: Option<String>,
    /// Bumped on every change of what the screen shows.
    #[serde(default)]
    pub revision: u64,
}

impl FakeSimDevice {
    /// Applies the passage of time: a finished boot becomes `Booted`.
    pub(crate) fn settle(&mut self) {
        if self.state == "Booting" && self.boot_done_at_ms.is_some_and(|t| now_ms() >= t) {
            self.state = "Booted".into();
            self.boot_done_at_ms = None;
            self.foreground_app = Some(SPRINGBOARD.into());
            self.revision += 1;
        }
    }

    /// Whether the state is `Booted`.
    pub fn is_booted(&self) -> bool {
        self.state == "Booted"
    }
}

/// The whole fake CoreSimulator state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FakeSimState {
    /// Every simulator, in `simctl list` order.
    pub devices: Vec<FakeSimDevice>,
    /// simctl subcommands that fail on purpose (`io`, `launch`, `list`, ...).
    #[serde(default)]
    pub fail: Vec<String>,
}

impl FakeSimState {
    /// Four simulators: a booted iPhone SE running the fake app, a shut-down
    /// iPhone 15, an unavailable iPad and a booted Apple Watch.
    pub fn scenario() -> Self {
        let apps = vec![FAKE_APP.to_owned(), SAFARI.to_owned(), SETTINGS.to_owned()];
        let device =
            |udid: &str, name: &str, runtime: &str, kind: &str, state: &str| FakeSimDevice {
                udid: udid.into(),
                name: name.into(),
                runtime: format!("com.apple.CoreSimulator.SimRuntime.{runtime}"),
                device_type: format!("com.apple.CoreSimulator.SimDeviceType.{kind}"),
                state: state.into(),
                is_available: true,
                availability_error: None,
                boot_ms: 300,
                boot_done_at_ms: None,
                screen_width: 750,
                screen_height: 1334,
                installed_apps: apps.clone(),
                foreground_app: (state == "Booted").then(|| FAKE_APP.to_owned()),
                last_url: None,
                revision: 1,
            };
        let se = device(
            SE_UDID,
            "iPhone SE (3rd generation)",
            "iOS-17-4",
            "iPhone-SE-3rd-generation",
            "Booted",
        );
        let mut iphone15 = device(
            IPHONE15_UDID,
            "iPhone 15",
            "iOS-17-4",
            "iPhone-15",
            "Shutdown",
        );
        iphone15.screen_width = 1179;
        iphone15.screen_height = 2556;
        let mut ipad = device(
            IPAD_UDID,
            "iPad Air (5th generation)",
            "iOS-16-4",
            "iPad-Air--5th-generation-",
            "Shutdown",
        );
        ipad.is_available = false;
        ipad.availability_error =
            Some("runtime profile not found using \"System\" match policy".into());
        let mut watch = device(
            WATCH_UDID,
            "Apple Watch Series 9 (45mm)",
            "watchOS-10-4",
            "Apple-Watch-Series-9-45mm",
            "Booted",
        );
        watch.screen_width = 396;
        watch.screen_height = 484;
        watch.installed_apps.clear();
        watch.foreground_app = None;
        Self {
            devices: vec![se, iphone15, ipad, watch],
            fail: Vec::new(),
        }
    }

    /// Reads the state (settled); a missing file is an empty state.
    pub fn load(path: &Path) -> std::io::Result<Self> {
        let text = match std::fs::read(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self {
                    devices: Vec::new(),
                    fail: Vec::new(),
                });
            }
            Err(e) => return Err(e),
        };
        let mut state: Self = serde_json::from_slice(&text)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        for d in &mut state.devices {
            d.settle();
        }
        Ok(state)
    }

    /// Writes the state atomically (temporary file + rename).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let text = serde_json::to_vec_pretty(self)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, path)
    }

    /// Loads, changes and saves the state.
    pub fn update<T>(path: &Path, f: impl FnOnce(&mut Self) -> T) -> std::io::Result<T> {
        let mut state = Self::load(path)?;
        let out = f(&mut state);
        state.save(path)?;
        Ok(out)
    }

    /// The simulator with this UDID.
    pub fn device(&self, udid: &str) -> Option<&FakeSimDevice> {
        self.devices.iter().find(|d| d.udid == udid)
    }

    /// The simulator with this UDID, to change it.
    pub fn device_mut(&mut self, udid: &str) -> Option<&mut FakeSimDevice> {
        self.devices.iter_mut().find(|d| d.udid == udid)
    }
}

/// The call log next to a state file.
pub(crate) fn calls_path(state: &Path) -> PathBuf {
    let mut name = state.file_name().unwrap_or_default().to_os_string();
    name.push(".calls");
    state.with_file_name(name)
}

/// Appends one invocation (its arguments) to the call log.
pub(crate) fn record_call(state: &Path, args: &[String]) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(args)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    line.push(b'\n');
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(calls_path(state))?;
    file.write_all(&line)
}

/// Every recorded invocation, oldest first.
pub(crate) fn calls(state: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(calls_path(state))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
