//! `fake-xcrun`: a fake of Xcode's `xcrun simctl` for tests (see the
//! crate docs). State: `$FAKE_XCRUN_STATE`, or `fake-simctl-state.json`
//! next to the path it is invoked as.

use std::io::Write as _;
use std::path::PathBuf;

fn main() {
    let mut args = std::env::args_os();
    let argv0 = args.next().map(PathBuf::from).unwrap_or_default();
    let args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
    let out = devicerail_ios_simulator_fakes::xcrun::main_with(&argv0, &args);
    let _ = std::io::stdout().write_all(&out.stdout);
    let _ = std::io::stderr().write_all(&out.stderr);
    std::process::exit(out.code);
}
