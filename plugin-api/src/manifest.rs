//! The manifest a plugin reports before it is initialized.

use devicerail_host_protocol::{ProtocolRange, SERVER_PROTOCOL_RANGES};
use serde::{Deserialize, Serialize};

use crate::driver::PluginIdentity;
use crate::ffi::{ABI_MAJOR, ABI_MINOR};

/// Identity, ABI and protocol range of one plugin library.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginManifest {
    /// The plugin id (`[a-z0-9-]{1,64}`).
    pub id: String,
    /// The plugin crate's version.
    pub version: String,
    /// One line saying what the plugin drives.
    pub description: String,
    /// The plugin-api ABI major the plugin was built against.
    pub abi_major: u32,
    /// The plugin-api ABI minor the plugin was built against.
    pub abi_minor: u32,
    /// Version of the `devicerail-host-plugin-api` crate it was built with.
    pub plugin_api_version: String,
    /// Wire versions whose DTOs the plugin produces.
    pub protocol: Vec<ProtocolRange>,
}

impl PluginManifest {
    /// The manifest of a plugin with `identity`, built with this crate.
    pub fn for_identity(identity: PluginIdentity) -> Self {
        Self {
            id: identity.id,
            version: identity.version,
            description: identity.description,
            abi_major: ABI_MAJOR,
            abi_minor: ABI_MINOR,
            plugin_api_version: env!("CARGO_PKG_VERSION").to_owned(),
            protocol: SERVER_PROTOCOL_RANGES.to_vec(),
        }
    }
}

/// Whether `id` is a valid plugin id: 1–64 of `[a-z0-9-]`, not starting or
/// ending with `-`.
pub fn valid_plugin_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !id.starts_with('-')
        && !id.ends_with('-')
}

/// The library file stem of a plugin crate: `devicerail_plugin_<id>`.
pub fn library_stem(id: &str) -> String {
    format!("devicerail_plugin_{}", id.replace('-', "_"))
}

/// The platform file name of a plugin library (`libdevicerail_plugin_mock.so`).
pub fn library_file_name(id: &str) -> String {
    format!(
        "{}{}{}",
        std::env::consts::DLL_PREFIX,
        library_stem(id),
        std::env::consts::DLL_SUFFIX
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids() {
        assert!(valid_plugin_id("mock"));
        assert!(valid_plugin_id("ios-simulator"));
        assert!(!valid_plugin_id("Mock"));
        assert!(!valid_plugin_id("-x"));
        assert!(!valid_plugin_id(""));
        assert!(!valid_plugin_id("a/b"));
        assert_eq!(
            library_stem("ios-simulator"),
            "devicerail_plugin_ios_simulator"
        );
    }
}
