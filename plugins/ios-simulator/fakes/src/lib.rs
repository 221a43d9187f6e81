//! # devicerail-host-ios-simulator-fakes
//!
//! Protocol-faithful fakes for testing the iOS Simulator driver on any
//! machine, named as fakes and never shipped:
//!
//! * `fake-xcrun` (binary, logic in [`xcrun`]): `xcrun simctl list devices
//!   --json`, `boot`, `bootstatus`, `shutdown`, `io screenshot`, `launch`
//!   and `openurl` with real output shapes and exit codes, over a JSON
//!   state file ([`sim_state`]) and an invocation log;
//! * [`wda::FakeWda`]: a WebDriverAgent HTTP server on a random loopback
//!   port serving a small stateful login UI with WDA's real envelopes.
//!
//! [`FakeSimulators`] sets both up in a scratch directory. The driver under
//! test runs exactly the code it runs against real simulators.
//!
//! These fakes must never be used by production code, and never listen on
//! anything but 127.0.0.1.

#![forbid(unsafe_code)]

mod render;
pub mod sim_state;
pub mod wda;
pub mod xcrun;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub use sim_state::FakeSimState;
pub use wda::{FakeWda, FakeWdaOptions};

/// Builds the `fake-xcrun` binary (a no-op when up to date) into the
/// running test's profile directory and returns its path.
pub fn fake_xcrun_binary() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            // target/<profile>/deps/<test binary>
            let exe = std::env::current_exe().unwrap_or_default();
            let dir = exe
                .parent()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
            cmd.args([
                "build",
                "--quiet",
                "-p",
                "devicerail-host-ios-simulator-fakes",
                "--bin",
                "fake-xcrun",
            ]);
            if dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let status = cmd
                .status()
                .unwrap_or_else(|e| panic!("could not run cargo build for fake-xcrun: {e}"));
            assert!(status.success(), "cargo build of fake-xcrun failed");
            let path = dir.join(format!("fake-xcrun{}", std::env::consts::EXE_SUFFIX));
            assert!(path.exists(), "{} was not built", path.display());
            path
        })
        .clone()
}

/// A scratch directory with a fake simulator state and an `xcrun` link to
/// `fake-xcrun` that finds that state next to itself.
pub struct FakeSimulators {
    dir: tempfile::TempDir,
    xcrun: PathBuf,
    state: PathBuf,
}

impl FakeSimulators {
    /// Sets up [`FakeSimState::scenario`].
    pub fn new() -> std::io::Result<Self> {
        Self::with_state(&FakeSimState::scenario())
    }

    /// Sets up the given state.
    pub fn with_state(state: &FakeSimState) -> std::io::Result<Self> {
        let dir = tempfile::Builder::new().prefix("fake-sims-").tempdir()?;
        let state_path = dir.path().join(sim_state::SIBLING_STATE_FILE);
        state.save(&state_path)?;
        let xcrun = dir.path().join("xcrun");
        link(&fake_xcrun_binary(), &xcrun)?;
        Ok(Self {
            dir,
            xcrun,
            state: state_path,
        })
    }

    /// The `xcrun` to configure the driver with.
    pub fn xcrun(&self) -> &Path {
        &self.xcrun
    }

    /// The state file.
    pub fn state_path(&self) -> &Path {
        &self.state
    }

    /// The scratch directory holding the state, the call log and the
    /// `xcrun` link; removed when this value drops.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The current state.
    pub fn state(&self) -> FakeSimState {
        FakeSimState::load(&self.state).unwrap_or_else(|e| panic!("fake state unreadable: {e}"))
    }

    /// Changes the state.
    pub fn update(&self, f: impl FnOnce(&mut FakeSimState)) {
        FakeSimState::update(&self.state, f)
            .unwrap_or_else(|e| panic!("fake state unwritable: {e}"));
    }

    /// Every `xcrun` invocation so far (arguments after `xcrun`).
    pub fn calls(&self) -> Vec<Vec<String>> {
        sim_state::calls(&self.state)
    }

    /// A fake WebDriverAgent attached to the simulator `udid`.
    pub fn wda(&self, udid: &str, mut opts: FakeWdaOptions) -> std::io::Result<FakeWda> {
        opts.sim = Some((self.state.clone(), udid.to_owned()));
        FakeWda::start(opts)
    }
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
fn link(target: &Path, at: &Path) -> std::io::Result<()> {
    std::fs::copy(target, at).map(drop)
}
