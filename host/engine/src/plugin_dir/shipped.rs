//! The plugins that ship with this `devicerail` binary and install by
//! name (`devicerail plugins install android browser …`): the libraries in
//! `../lib/devicerail/plugins` beside a release archive's `bin/`, or next
//! to the binary in a cargo build directory.

use std::fs;
use std::path::PathBuf;

use devicerail_host_config::paths;
use serde::Serialize;

/// A plugin shipped with this `devicerail`, installable by name.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Shipped {
    /// The plugin id, as `plugins install` takes it.
    pub name: String,
    /// The library file.
    pub file: PathBuf,
}

/// The plugins shipped beside the running binary (see
/// [`paths::shipped_plugins_dir`]), sorted by name, with their directory.
/// Libraries of the workspace's own test plugins (`test-…`), which exist
/// only to be refused, are left out.
pub fn shipped() -> (Option<PathBuf>, Vec<Shipped>) {
    let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| paths::shipped_plugins_dir(&exe))
    else {
        return (None, Vec::new());
    };
    let mut out: Vec<Shipped> = fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let file_name = e.file_name();
            let id = id_of_library(file_name.to_str()?)?;
            (!id.starts_with("test-")).then(|| Shipped {
                name: id,
                file: e.path(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    (Some(dir), out)
}

/// The plugin id a library file name carries by convention
/// (`libdevicerail_plugin_ios_simulator.so` → `ios-simulator`).
pub fn id_of_library(file_name: &str) -> Option<String> {
    let id = file_name
        .strip_prefix(std::env::consts::DLL_PREFIX)?
        .strip_suffix(std::env::consts::DLL_SUFFIX)?
        .strip_prefix("devicerail_plugin_")?
        .replace('_', "-");
    devicerail_host_plugin_api::valid_plugin_id(&id).then_some(id)
}

/// The command that installs the shipped plugins, for hints.
pub fn install_hint() -> String {
    let (_, shipped) = shipped();
    if shipped.is_empty() {
        "devicerail plugins install PATH/TO/libdevicerail_plugin_<id>.so".to_owned()
    } else {
        let names: Vec<&str> = shipped.iter().map(|a| a.name.as_str()).collect();
        format!("devicerail plugins install {}", names.join(" "))
    }
}

/// The one line every command says when `dir` holds no plugin.
pub fn no_plugins_line(dir: &std::path::Path) -> String {
    format!(
        "no plugins are installed in {}, so there are no devices; install drivers with: {}",
        dir.display(),
        install_hint()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_library_naming_convention() {
        let name = |stem: &str| {
            format!(
                "{}{stem}{}",
                std::env::consts::DLL_PREFIX,
                std::env::consts::DLL_SUFFIX
            )
        };
        assert_eq!(
            id_of_library(&name("devicerail_plugin_ios_simulator")).as_deref(),
            Some("ios-simulator")
        );
        assert_eq!(
            id_of_library(&name("devicerail_plugin_mock")).as_deref(),
            Some("mock")
        );
        assert_eq!(id_of_library(&name("something_else")), None);
        assert_eq!(id_of_library("devicerail_plugin_mock.txt"), None);
    }
}
