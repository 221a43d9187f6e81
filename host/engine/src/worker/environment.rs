//! The environment a plugin worker runs with: built, never inherited
//! whole. A worker runs plugin code, and so does everything it starts
//! (Chromium, adb, `xcrun`); the host's own credentials (the values behind
//! `DEVICERAIL_SECRET_*`, a `DEVICERAIL_LEASE_TOKEN`) must never be in it.
//!
//! The worker's process starts with the variables of [`ALLOWED`] and
//! [`ALLOWED_PREFIXES`] that the host has, minus every credential
//! ([`is_credential`]); the plugin's `env` table of the configuration file
//! adds what one driver really needs, sent in the worker's init message
//! and set before its driver is constructed.
//!
//! Nothing here does I/O or reads the process environment itself: callers
//! pass the variables in, so the rules are tested as plain functions.

use std::ffi::{OsStr, OsString};

/// Variables a worker gets when the host has them: where programs and
/// libraries are, who and where the user is, locale and time zone, the
/// display the drivers' tools may need, and a backtrace switch.
pub const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TZ",
    "LANG",
    "LANGUAGE",
    "TERM",
    "LD_LIBRARY_PATH",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "DBUS_SESSION_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    // The browser driver's Chromium and the iOS driver's Xcode.
    "CHROME_PATH",
    "DEVELOPER_DIR",
    "RUST_BACKTRACE",
    "RUST_LIB_BACKTRACE",
];

/// Prefixes of variables a worker gets: locale categories, the Android
/// SDK's and adb's variables, and the drivers' own settings fallbacks
/// (`DEVICERAIL_<DRIVER>_*`), credentials excluded.
pub const ALLOWED_PREFIXES: &[&str] = &["LC_", "ANDROID_", "ADB_", "DEVICERAIL_"];

/// Words that make a `DEVICERAIL_` variable a credential whatever else its
/// name says.
const CREDENTIAL_WORDS: &[&str] = &["SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL"];

/// Whether `name` holds one of the host's credentials: a secret an agent
/// or replay types (`DEVICERAIL_SECRET_*`), a reservation token
/// (`DEVICERAIL_LEASE_TOKEN`), or any `DEVICERAIL_` variable whose name
/// says secret, token or password. A worker never gets one, not even
/// through a plugin's `env` table.
pub fn is_credential(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("DEVICERAIL_") else {
        return false;
    };
    let rest = rest.to_ascii_uppercase();
    CREDENTIAL_WORDS.iter().any(|c| rest.contains(c))
}

/// Whether a worker gets the host's variable `name`.
pub fn is_allowed(name: &str) -> bool {
    !is_credential(name)
        && (ALLOWED.contains(&name)
            || ALLOWED_PREFIXES
                .iter()
                .any(|p| name.len() > p.len() && name.starts_with(p)))
}

/// A worker's environment from the host's `vars` (pass
/// `std::env::vars_os()`): the allowed ones, in the order given.
pub fn for_worker(
    vars: impl IntoIterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    vars.into_iter()
        .filter(|(k, _)| k.to_str().is_some_and(is_allowed))
        .collect()
}

/// Why a plugin's `env` entry cannot be given to its worker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// Not a portable variable name (`[A-Za-z_][A-Za-z0-9_]*`).
    #[error(
        "{0:?} is not an environment variable name (letters, digits and _, not starting with a digit)"
    )]
    BadName(String),
    /// One of the host's credentials.
    #[error("{0} is one of the host's credentials and never reaches a plugin")]
    Credential(String),
    /// A value with a NUL byte (cannot be in an environment).
    #[error("the value of {0} contains a NUL byte")]
    Nul(String),
}

/// Checks one entry of a plugin's `env` table.
pub fn check_entry(name: &str, value: &str) -> Result<(), EnvError> {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    if !first_ok || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(EnvError::BadName(name.to_owned()));
    }
    if is_credential(name) {
        return Err(EnvError::Credential(name.to_owned()));
    }
    if value.contains('\0') {
        return Err(EnvError::Nul(name.to_owned()));
    }
    Ok(())
}

/// Whether the variable named `name` is in `env`.
pub fn contains(env: &[(OsString, OsString)], name: &str) -> bool {
    env.iter().any(|(k, _)| k.as_os_str() == OsStr::new(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(names: &[&str]) -> Vec<(OsString, OsString)> {
        names
            .iter()
            .map(|n| (OsString::from(n), OsString::from("v")))
            .collect()
    }

    #[test]
    fn credentials_never_pass() {
        for name in [
            "DEVICERAIL_SECRET_PASSWORD",
            "DEVICERAIL_SECRET_STEP_4",
            "DEVICERAIL_LEASE_TOKEN",
            "DEVICERAIL_POOL_TOKEN",
            "DEVICERAIL_LOGIN_PASSWORD",
            "DEVICERAIL_API_SECRETS",
            "DEVICERAIL_GITHUB_CREDENTIALS",
        ] {
            assert!(is_credential(name), "{name}");
            assert!(!is_allowed(name), "{name}");
            assert!(matches!(
                check_entry(name, "x"),
                Err(EnvError::Credential(_))
            ));
        }
    }

    #[test]
    fn the_allow_list_keeps_what_drivers_use_and_drops_the_rest() {
        let host = vars(&[
            "PATH",
            "HOME",
            "LC_ALL",
            "ANDROID_HOME",
            "ADB_SERVER_SOCKET",
            "DEVICERAIL_BROWSER_HEADLESS",
            "DEVICERAIL_MOCK_FAULTS",
            "CHROME_PATH",
            "DEVICERAIL_SECRET_PW",
            "DEVICERAIL_LEASE_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "HTTPS_PROXY",
            "LD_PRELOAD",
            "DEVICERAIL_",
            "LC_",
        ]);
        let kept: Vec<String> = for_worker(host)
            .into_iter()
            .map(|(k, _)| k.into_string().expect("utf-8"))
            .collect();
        assert_eq!(
            kept,
            [
                "PATH",
                "HOME",
                "LC_ALL",
                "ANDROID_HOME",
                "ADB_SERVER_SOCKET",
                "DEVICERAIL_BROWSER_HEADLESS",
                "DEVICERAIL_MOCK_FAULTS",
                "CHROME_PATH",
            ]
        );
    }

    #[test]
    fn env_entries_are_checked() {
        assert_eq!(check_entry("HTTPS_PROXY", "http://p:3128"), Ok(()));
        assert_eq!(check_entry("_X1", ""), Ok(()));
        assert!(matches!(check_entry("1X", "v"), Err(EnvError::BadName(_))));
        assert!(matches!(check_entry("A-B", "v"), Err(EnvError::BadName(_))));
        assert!(matches!(check_entry("", "v"), Err(EnvError::BadName(_))));
        assert!(matches!(check_entry("A", "a\0b"), Err(EnvError::Nul(_))));
        assert!(contains(&vars(&["A", "B"]), "B"));
        assert!(!contains(&vars(&["A"]), "B"));
    }
}
