//! The plugin's configuration: host-provided settings (the
//! `[plugins.hello]` table of the host's configuration file, as
//! `PluginConfig.settings`) win over environment variables, which win over
//! the defaults. Read once, when the host initializes the plugin, with the
//! SDK's reader (`devicerail_host_plugin_api::config`), whose errors name the
//! setting and where the bad value came from.

use devicerail_host_plugin_api::config::{ConfigError, ConfigReader};
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
            greeting: "Hi".into(),
            width: 360,
            height: 640,
        }
    }
}

impl Config {
    /// Reads `settings`, then `env` (a lookup such as `std::env::var`).
    pub fn load(
        settings: &Map<String, Value>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let read = ConfigReader::with_env(settings, &env);
        // A key the plugin does not read is most likely a typo: refuse it.
        read.deny_unknown(&[GREETING_KEY, SIZE_KEY])?;
        let mut config = Self::default();
        let greeting = read.get(GREETING_KEY).env(GREETING_ENV);
        let expected = "1 to 64 characters of text";
        if let Some(g) =
            greeting.parse_raw(expected, |raw| raw.as_str().and_then(valid_greeting))?
        {
            config.greeting = g;
        }
        let size = read.get(SIZE_KEY).env(SIZE_ENV);
        let expected = "WIDTHxHEIGHT with each side from 16 to 4096";
        if let Some((width, height)) = size.parse(expected, parse_size)? {
            (config.width, config.height) = (width, height);
        }
        Ok(config)
    }
}

/// `text` when it is a usable greeting.
fn valid_greeting(text: &str) -> Option<String> {
    let usable = !text.trim().is_empty() && text.chars().count() <= MAX_GREETING_CHARS;
    usable.then(|| text.to_owned())
}

/// Parses `WIDTHxHEIGHT`.
fn parse_size(text: &str) -> Option<(u32, u32)> {
    let (w, h) = text.split_once(['x', 'X'])?;
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
        for bad in ["100", "0x100", "100x99999", "axb", "100x200x3"] {
            let env = |k: &str| (k == SIZE_ENV).then(|| bad.to_owned());
            let e = Config::load(&Map::new(), env).expect_err(bad);
            assert_eq!(e.key(), Some(SIZE_KEY), "{bad:?}");
        }
    }

    #[test]
    fn bad_values_name_their_source() {
        let e = Config::load(&settings(json!({ "greeting": 3 })), |_| None);
        assert_eq!(
            e.map_err(|e| e.to_string()),
            Err("setting \"greeting\" must be 1 to 64 characters of text, not 3".to_owned())
        );
        let env = |k: &str| (k == SIZE_ENV).then(|| "tiny".to_owned());
        let e = Config::load(&Map::new(), env).map_err(|e| e.to_string());
        assert_eq!(
            e,
            Err(format!(
                "environment variable {SIZE_ENV} (for setting \"size\") must be WIDTHxHEIGHT with each side from 16 to 4096, not \"tiny\""
            ))
        );
    }
}
