//! Secrets for protected input: an agent names a secret (`"secret":
//! "LOGIN_PASSWORD"`), the server reads its value from its own environment
//! (`DEVICERAIL_SECRET_LOGIN_PASSWORD`), so the value never passes through
//! the agent, its transcript or tool arguments.
//!
//! A [`Secret`] never prints its value (`Debug` and `Display` are
//! redacted), and [`scrub`] removes known values from any text before it
//! leaves the server. This module must never log a value.

/// Prefix of the environment variables that hold secrets.
pub(crate) const ENV_PREFIX: &str = "DEVICERAIL_SECRET_";
/// What a scrubbed value is replaced with.
pub(crate) const REDACTED: &str = "[secret]";

/// Why a secret cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum SecretError {
    #[error(
        "invalid secret name {0:?}: use 1-64 letters, digits or underscores (the value is read from {ENV_PREFIX}<NAME>)"
    )]
    BadName(String),
    #[error("no secret {name:?}: set {ENV_PREFIX}{upper} in the environment of `devicerail mcp`")]
    Missing { name: String, upper: String },
}

/// A secret value; never printed.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Secret(String);

impl Secret {
    /// The value, for the one place that types it into a device.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(REDACTED)
    }
}

/// The environment variable holding secret `name`.
pub(crate) fn env_name(name: &str) -> Result<String, SecretError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !ok {
        return Err(SecretError::BadName(name.to_owned()));
    }
    Ok(format!("{ENV_PREFIX}{}", name.to_ascii_uppercase()))
}

/// Resolves secret `name` with `env` (the process environment in use).
pub(crate) fn resolve_with(
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Secret, SecretError> {
    let var = env_name(name)?;
    match env(&var).filter(|v| !v.is_empty()) {
        Some(v) => Ok(Secret(v)),
        None => Err(SecretError::Missing {
            name: name.to_owned(),
            upper: name.to_ascii_uppercase(),
        }),
    }
}

/// Resolves secret `name` from the process environment.
pub(crate) fn resolve(name: &str) -> Result<Secret, SecretError> {
    resolve_with(name, &|k| std::env::var(k).ok())
}

/// `text` with every occurrence of each secret replaced by [`REDACTED`].
pub(crate) fn scrub(text: &str, secrets: &[Secret]) -> String {
    let mut out = text.to_owned();
    for s in secrets {
        if !s.0.is_empty() && out.contains(&s.0) {
            out = out.replace(&s.0, REDACTED);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_to_prefixed_upper_case_variables() {
        assert_eq!(
            env_name("login_password").as_deref(),
            Ok("DEVICERAIL_SECRET_LOGIN_PASSWORD")
        );
        assert!(matches!(env_name("a b"), Err(SecretError::BadName(_))));
        assert!(matches!(env_name(""), Err(SecretError::BadName(_))));
    }

    #[test]
    fn values_are_resolved_redacted_and_scrubbed() {
        let env = |k: &str| (k == "DEVICERAIL_SECRET_PW").then(|| "hunter2".to_owned());
        let s = resolve_with("pw", &env).expect("resolved");
        assert_eq!(s.expose(), "hunter2");
        assert_eq!(format!("{s} {s:?}"), "[secret] [secret]");
        assert_eq!(scrub("typed hunter2!", &[s]), "typed [secret]!");
        let missing = resolve_with("other", &env).expect_err("missing");
        assert!(!missing.to_string().contains("hunter2"));
        assert!(missing.to_string().contains("DEVICERAIL_SECRET_OTHER"));
    }
}
