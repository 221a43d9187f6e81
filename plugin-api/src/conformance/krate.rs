//! The suite run from a driver crate's own tests with one call
//! ([`assert_crate`]): build the crate's library with cargo (the profile
//! and target directory of the running test), load it through the host's
//! loader, run every check with stdout watched, and fail the test with the
//! report.
//!
//! `devicerail plugins install ./crate` sets [`LIBRARY_ENV`] to the file
//! it built and is about to install, so the checks run on exactly that
//! file instead of a fresh build.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Report, Suite, load_failure, load_success};
use crate::cargo_build::{LIBRARY_ENV, LibraryBuild};
use crate::driver::LoadPurpose;
use crate::loader;

/// The feature the test build of a driver crate enables on the SDK (its
/// dev-dependency); building the library with it reuses what the test
/// build compiled.
const TEST_FEATURE: &str = "devicerail-host-plugin-api/conformance";

/// Builds the driver crate in `manifest_dir` (pass
/// `env!("CARGO_MANIFEST_DIR")`), loads its library as the host does and
/// runs the whole suite on its first device; panics listing each failure
/// with what was found and how to fix it.
pub fn assert_crate(manifest_dir: impl AsRef<Path>) {
    for_crate(manifest_dir).assert_passed();
}

/// The suite for the driver crate in `manifest_dir`, to configure before
/// it runs ([`CrateCheck::settings`], [`CrateCheck::device`]).
pub fn for_crate(manifest_dir: impl AsRef<Path>) -> CrateCheck {
    CrateCheck {
        manifest_dir: manifest_dir.as_ref().to_path_buf(),
        settings: Map::new(),
        device: None,
    }
}

/// A conformance run on a driver crate's library.
#[derive(Debug, Clone)]
pub struct CrateCheck {
    manifest_dir: PathBuf,
    settings: Map<String, Value>,
    device: Option<String>,
}

impl CrateCheck {
    /// The settings the plugin is initialized with (its table of the
    /// host's configuration file; default: none).
    #[must_use]
    pub fn settings(mut self, settings: Map<String, Value>) -> Self {
        self.settings = settings;
        self
    }

    /// The device to exercise (default: the first listed).
    #[must_use]
    pub fn device(mut self, id: &str) -> Self {
        self.device = Some(id.to_owned());
        self
    }

    /// The library to check: [`LIBRARY_ENV`] when set, else the crate's
    /// library built by cargo with the running test's profile into its
    /// target directory. Panics when cargo fails (its errors are above).
    pub fn library(&self) -> PathBuf {
        if let Some(file) = std::env::var_os(LIBRARY_ENV).filter(|f| !f.is_empty()) {
            return PathBuf::from(file);
        }
        let manifest = self.manifest_dir.join("Cargo.toml");
        let mut build = LibraryBuild::new(&manifest);
        let (profile, target_dir) = test_build_location();
        if let Some(profile) = profile {
            build = build.profile(profile);
        }
        if let Some(dir) = target_dir {
            build = build.target_dir(dir);
        }
        // The test build's features first (nothing to recompile); a crate
        // that names the SDK differently gets a plain build.
        match build.clone().feature(TEST_FEATURE).quiet().run() {
            Ok(file) => file,
            Err(_) => build.run().unwrap_or_else(|e| panic!("conformance: {e}")),
        }
    }

    /// Builds (or takes) the library, loads it and runs every check.
    pub fn run(&self) -> Report {
        let file = self.library();
        let plugin = match loader::open(&file)
            .and_then(|opened| opened.init(&self.settings, LoadPurpose::Serve))
        {
            Ok(p) => p,
            Err(e) => return load_failure(&file, e),
        };
        let mut suite = Suite::owned(plugin).watch_stdout();
        if let Some(device) = &self.device {
            suite = suite.device(device);
        }
        let mut report = suite.run();
        load_success(&mut report);
        report
    }

    /// [`CrateCheck::run`], then [`Report::assert_passed`].
    pub fn assert_passed(&self) {
        self.run().assert_passed();
    }
}

/// The cargo profile and target directory of the running test binary
/// (`<target>/<profile dir>/deps/<test>`), so the library is built where
/// the test build already compiled its dependencies.
fn test_build_location() -> (Option<String>, Option<PathBuf>) {
    let Ok(exe) = std::env::current_exe() else {
        return (None, None);
    };
    let Some(profile_dir) = exe.parent().and_then(Path::parent) else {
        return (None, None);
    };
    let profile = profile_dir
        .file_name()
        .and_then(|n| n.to_str())
        .map(|n| if n == "debug" { "dev" } else { n }.to_owned());
    // Cargo marks its target directories with CACHEDIR.TAG; anything else
    // (a cross-compilation layout) keeps cargo's own choice.
    let target = profile_dir
        .parent()
        .filter(|t| t.join("CACHEDIR.TAG").is_file())
        .map(Path::to_path_buf);
    (profile.filter(|_| target.is_some()), target)
}
