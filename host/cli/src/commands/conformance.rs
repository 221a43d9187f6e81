//! `devicerail plugin-conformance` (internal): the DeviceRail conformance
//! suite of the SDK this devicerail was built with, run on one plugin
//! library in a short-lived process of its own. `plugins install
//! CRATE_DIR` starts it on the library it just built, so a driver is
//! installed only if it passes *this* suite, whatever the crate's own
//! tests say; the plugin's code runs here, never in the installing
//! process.
//!
//! The plugin is initialized with its table of the configuration file (its
//! settings and its `env` variables), as `serve` would. The report goes to
//! stderr; the exit code is 0 only when every check passed.

use std::process::ExitCode;

use devicerail_host_config::{CommandLine, Config};
use devicerail_host_engine::worker::environment;
use devicerail_host_plugin_api::LoadPurpose;
use devicerail_host_plugin_api::conformance::{Report, Suite};
use devicerail_host_plugin_api::loader;

use crate::args::ConformanceArgs;

/// Runs the suite on `a.library`.
pub(crate) fn run(a: &ConformanceArgs, line: CommandLine) -> ExitCode {
    let config = match Config::load(&line, "warn") {
        Ok(c) => c,
        Err(e) => {
            eprintln!("conformance: {e}");
            return ExitCode::FAILURE;
        }
    };
    let opened = match loader::open(&a.library) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("conformance: {} does not load: {e}", a.library.display());
            return ExitCode::FAILURE;
        }
    };
    let id = opened.manifest().id.clone();
    let table = config.parsed.as_ref().and_then(|f| f.plugins.get(&id));
    let settings = match table.map(|t| &t.settings) {
        None => Default::default(),
        Some(Ok(s)) => s.clone(),
        Some(Err(e)) => {
            eprintln!("conformance: the configuration's table for {id} is unusable: {e}");
            return ExitCode::FAILURE;
        }
    };
    let env = table.map(|t| t.env.clone()).unwrap_or_default();
    if let Some((name, e)) = env
        .iter()
        .find_map(|(k, v)| environment::check_entry(k, v).err().map(|e| (k, e)))
    {
        eprintln!("conformance: plugins.{id}.env.{name}: {e}");
        return ExitCode::FAILURE;
    }
    if let Err(e) = devicerail_host_sys::set_env_single_threaded(&env) {
        eprintln!("conformance: cannot set plugins.{id}.env: {e}");
        return ExitCode::FAILURE;
    }
    let plugin = match opened.init(&settings, LoadPurpose::Serve) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("conformance: {id} refused to start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let report = Suite::owned(plugin).watch_stdout().run();
    eprintln!("{}", summary(&report));
    if report.failures().is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `conformance: N/M checks passed` and every check.
fn summary(report: &Report) -> String {
    format!(
        "conformance: {}/{} checks passed\n{}",
        report.passed(),
        report.checks.len(),
        report.text()
    )
}
