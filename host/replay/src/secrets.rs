//! Secrets of protected steps. The record holds none (a protected
//! Action's arguments are redacted), so a replay takes each from its own
//! environment by name: `DEVICERAIL_SECRET_<NAME>`, where the name comes
//! from the field the recording typed into (the element the step before
//! it was aimed at: its identifier, else its label, upper-cased, other
//! characters as `_`), else the step's number (`STEP_4`).
//!
//! A [`Secret`] never prints its value. Naming is pure; only
//! [`resolve`] reads the environment.

use devicerail_host_agent::Keyed;

/// Prefix of the environment variables that hold secrets (the same as
/// `devicerail mcp`'s).
pub const ENV_PREFIX: &str = "DEVICERAIL_SECRET_";

/// A secret value; `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The value, for the one place that sends it to the device.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[secret]")
    }
}

/// `Password field` → `PASSWORD_FIELD`.
pub fn name_of(s: &str) -> Option<String> {
    let mut out = String::new();
    for c in s.trim().chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_uppercase());
        } else if !out.ends_with('_') && !out.is_empty() {
            out.push('_');
        }
    }
    while out.ends_with('_') {
        out.pop();
    }
    out.truncate(64);
    (!out.is_empty()).then_some(out)
}

/// The names a protected step's secret is looked up by, in order: the
/// field (node `field` of `tree`), then the step number.
pub fn names_for(step: usize, field: Option<(&Keyed, usize)>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some((k, i)) = field {
        let n = &k.view.nodes[i];
        for s in [n.identifier.as_deref(), n.name.as_deref()]
            .into_iter()
            .flatten()
        {
            if let Some(name) = name_of(s)
                && !out.contains(&name)
            {
                out.push(name);
            }
        }
    }
    out.push(format!("STEP_{step}"));
    out
}

/// The environment variable of `name`.
pub fn variable(name: &str) -> String {
    format!("{ENV_PREFIX}{name}")
}

/// The first of `names` set (non-empty) in `env`, with its name.
pub fn resolve(names: &[String], env: &dyn Fn(&str) -> Option<String>) -> Option<(String, Secret)> {
    names.iter().find_map(|n| {
        env(&variable(n))
            .filter(|v| !v.is_empty())
            .map(|v| (n.clone(), Secret(v)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_field_then_the_step() {
        assert_eq!(name_of("sign-in field").as_deref(), Some("SIGN_IN_FIELD"));
        assert_eq!(name_of("  "), None);
        let k = crate::testing::tree(vec![crate::testing::button(
            "password", "Password", 0.0, 0.0,
        )]);
        assert_eq!(names_for(4, Some((&k, 1))), vec!["PASSWORD", "STEP_4"]);
        assert_eq!(names_for(2, None), vec!["STEP_2"]);
    }

    #[test]
    fn values_resolve_by_name_and_never_print() {
        let env = |k: &str| (k == "DEVICERAIL_SECRET_STEP_4").then(|| "hunter2".to_owned());
        let (name, s) = resolve(&["PASSWORD".into(), "STEP_4".into()], &env).expect("found");
        assert_eq!(name, "STEP_4");
        assert_eq!(s.expose(), "hunter2");
        assert_eq!(format!("{s:?}"), "[secret]");
        assert!(resolve(&["OTHER".into()], &env).is_none());
    }
}
