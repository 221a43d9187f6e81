//! The plugin's configuration: host-provided settings
//! (`PluginConfig.settings`) win over environment variables, which win over
//! the defaults. Read once, when the host initializes the plugin.

use serde_json::{Map, Value};

/// Environment variable with the greeting text.
pub const GREETING_ENV: &str = "DEVICERAIL_HELLO_GREETING";
/// Environment variable with the screen size, `WIDTHxHEIGHT` in pixels.
pub const SIZE_ENV: &str = "DEVICERAIL_HELLO_SIZE";

/// Settings key with the greeting text.
pub const GREETING_KEY: &str = "greeting";
/// Settings key with the screen size, `WIDTHxHEIGHT`.
pub const SIZE_KEY: &str = "size";

/// Longest greeting, in characters.
pub const MAX_GREETING_CHARS: usize = 64;
/// Smallest and largest screen side, in pixels.
pub const SIDE_RANGE: std::ops::RangeInclusive<u32> = 16..=4096;

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{source_name} must be 1 to {MAX_GREETING_CHARS} characters of text")]
    BadGreeting { source_name: String },
    #[error(
        "{source_name} must be WIDTHxHEIGHT with each side from {} to {}, not {value:?}",
        SIDE_RANGE.start(),
        SIDE_RANGE.end()
    )]
    BadSize { source_name: String, value: String },
}

/// The validated configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// What `greet` says before the name.
    pub greeting: String,
    /// Screen width in pixels (the screenshot's width).
    pub width: u32,
    /// Screen height in pixels (the screenshot's height).
    pub height: u32,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            greeting: "Hello".into(),
            width: 360,
            height: 640,
        }
    }
}

/// Where one value came from, for error messages.
fn source_name(key: &str, env: &str, from_settings: bool) -> String {
    if from_settings {
        format!("setting {key:?}")
    } else {
        env.to_owned()
    }
}

impl Config {
    /// Reads `settings`, then `env` (a lookup such as `std::env::var`).
    pub fn load(
        settings: &Map<String, Value>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut config = Self::default();
        let pick = |key: &str, var: &str| -> Option<(Option<String>, String)> {
            match settings.get(key) {
                Some(v) => Some((v.as_str().map(str::to_owned), source_name(key, var, true))),
                None => env(var).map(|v| (Some(v), source_name(key, var, false))),
            }
        };
        if let Some((value, source_name)) = pick(GREETING_KEY, GREETING_ENV) {
            config.greeting = match value {
                Some(g) if !g.trim().is_empty() && g.chars().count() <= MAX_GREETING_CHARS => g,
                _ => return Err(ConfigError::BadGreeting { source_name }),
            };
        }
        if let Some((value, source_name)) = pick(SIZE_KEY, SIZE_ENV) {
            let text = value.unwrap_or_default();
            let (width, height) = parse_size(&text).ok_or(ConfigError::BadSize {
                source_name,
                value: text,
            })?;
            config.width = width;
            config.height = height;
        }
        Ok(config)
    }
}

/// Parses `WIDTHxHEIGHT`.
fn parse_size(text: &str) -> Option<(u32, u32)> {
    let (w, h) = text.trim().split_once(['x', 'X'])?;
    let (w, h) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    (SIDE_RANGE.contains(&w) && SIDE_RANGE.contains(&h)).then_some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn defaults_without_settings_or_environment() {
        assert_eq!(Config::load(&Map::new(), |_| None), Ok(Config::default()));
    }

    #[test]
    fn settings_win_over_the_environment() {
        let env = |k: &str| (k == GREETING_ENV).then(|| "Hi from env".to_owned());
        let c = Config::load(&settings(json!({ "greeting": "Hi" })), env);
        assert_eq!(c.map(|c| c.greeting), Ok("Hi".to_owned()));
        let c = Config::load(&Map::new(), env);
        assert_eq!(c.map(|c| c.greeting), Ok("Hi from env".to_owned()));
    }

    #[test]
    fn sizes_are_parsed_and_bounded() {
        let env = |k: &str| (k == SIZE_ENV).then(|| "100x200".to_owned());
        let c = Config::load(&Map::new(), env).map(|c| (c.width, c.height));
        assert_eq!(c, Ok((100, 200)));
        for bad in ["", "100", "0x100", "100x99999", "axb", "100x200x3"] {
            let env = |k: &str| (k == SIZE_ENV).then(|| bad.to_owned());
            assert!(
                matches!(
                    Config::load(&Map::new(), env),
                    Err(ConfigError::BadSize { .. })
                ),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn bad_values_name_their_source() {
        let e = Config::load(&settings(json!({ "greeting": 3 })), |_| None);
        assert_eq!(
            e.map_err(|e| e.to_string()),
            Err("setting \"greeting\" must be 1 to 64 characters of text".to_owned())
        );
        let env = |k: &str| (k == SIZE_ENV).then(|| "tiny".to_owned());
        let e = Config::load(&Map::new(), env).map_err(|e| e.to_string());
        assert_eq!(
            e,
            Err(format!(
                "{SIZE_ENV} must be WIDTHxHEIGHT with each side from 16 to 4096, not \"tiny\""
            ))
        );
    }
}
