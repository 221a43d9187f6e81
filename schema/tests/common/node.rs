//! Node.js and the TypeScript package's pinned compiler, for the tests that
//! run `tsc`. (host/cli/tests/support/node.rs is the host crate's copy: the
//! host does not depend on this crate.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use serde_json::Value;

const INSTALL_HINT: &str = "the TypeScript checks need Node.js and npm: install them \
     (Debian/Ubuntu: `sudo apt-get install nodejs npm`) and run the tests again";

fn runs(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The devDependencies whose installed version differs from the pinned one.
fn outdated(dir: &Path) -> Vec<String> {
    let manifest = super::read_json(&dir.join("package.json"));
    let Some(pinned) = manifest["devDependencies"].as_object() else {
        return Vec::new();
    };
    pinned
        .iter()
        .filter(|(name, version)| {
            let installed =
                std::fs::read_to_string(dir.join("node_modules").join(name).join("package.json"))
                    .ok()
                    .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                    .and_then(|v| v["version"].as_str().map(str::to_owned));
            installed.as_deref() != version.as_str()
        })
        .map(|(name, _)| name.clone())
        .collect()
}

/// The package folder, with `npm ci` run first when its `node_modules` is
/// missing or holds other versions than `package.json` pins. Panics with
/// an install hint when node or npm is missing.
pub(crate) fn typescript_package() -> PathBuf {
    static READY: OnceLock<PathBuf> = OnceLock::new();
    READY
        .get_or_init(|| {
            let dir = devicerail_host_schema_gen::typescript::typescript_dir();
            assert!(runs("node"), "`node` is not installed: {INSTALL_HINT}");
            let missing = outdated(&dir);
            if !missing.is_empty() {
                assert!(runs("npm"), "`npm` is not installed: {INSTALL_HINT}");
                println!(
                    "typescript: running `npm ci` in {} ({} not installed at the pinned version)",
                    devicerail_host_schema_gen::typescript::TYPESCRIPT_DIR,
                    missing.join(", ")
                );
                let status = Command::new("npm")
                    .args(["ci", "--no-audit", "--no-fund"])
                    .current_dir(&dir)
                    .status()
                    .unwrap_or_else(|e| panic!("npm ci: {e}"));
                assert!(status.success(), "`npm ci` failed in {}", dir.display());
                let still = outdated(&dir);
                assert!(still.is_empty(), "`npm ci` did not install {still:?}");
            }
            dir
        })
        .clone()
}

/// Runs the package's pinned `tsc` in `cwd` with `args`.
pub(crate) fn tsc(cwd: &Path, args: &[&str]) -> Output {
    let compiler = typescript_package().join("node_modules/typescript/bin/tsc");
    Command::new("node")
        .arg(compiler)
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("node tsc: {e}"))
}
