//! Shared helpers for the protocol's fixture tests.
#![allow(dead_code)]

pub(crate) use devicerail_host_fixtures::{json_equal, round_trip};

/// The reference folder, or `None` after printing why the caller skips.
pub(crate) fn reference_dir(test: &str) -> Option<std::path::PathBuf> {
    match std::env::var_os("DEVICERAIL_REFERENCE_DIR") {
        Some(dir) => Some(std::path::PathBuf::from(dir)),
        None => {
            println!("{test}: skipped: DEVICERAIL_REFERENCE_DIR is not set");
            None
        }
    }
}
