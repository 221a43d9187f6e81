//! Plugin configuration: one reader for every plugin. A value is taken
//! from the host-provided settings table (`PluginConfig.settings`) first,
//! then from the plugin's documented environment variable, else the
//! plugin keeps its default.
//!
//! ```
//! # use devicerail_host_plugin_api::config::{ConfigError, ConfigReader};
//! # fn main() -> Result<(), ConfigError> {
//! let settings = serde_json::json!({ "startServer": "off" });
//! let settings = settings.as_object().cloned().unwrap_or_default();
//! let env = |name: &str| (name == "EXAMPLE_TIMEOUT_MS").then(|| "2500".to_owned());
//! let read = ConfigReader::with_env(&settings, &env);
//! let start = read.get("startServer").env("EXAMPLE_START_SERVER").bool()?;
//! let timeout = read.get("timeoutMs").env("EXAMPLE_TIMEOUT_MS").millis(1..=60_000)?;
//! assert_eq!(start, Some(false));
//! assert_eq!(timeout, Some(std::time::Duration::from_millis(2500)));
//! # Ok(())
//! # }
//! ```
//!
//! The rules, the same for every plugin:
//! * a setting that is absent or `null` is not set; an environment
//!   variable that is unset, empty or only whitespace is not set;
//! * booleans are JSON booleans, `0`/`1`, or the (case-insensitive,
//!   trimmed) words `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`;
//! * numbers are JSON numbers or their decimal text;
//! * a value that cannot be used is a [`ConfigError`] naming the setting
//!   and where the value came from; a plugin refuses to initialize with it.

use std::fmt;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};

/// Where a configuration value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The settings table, under `key`.
    Setting {
        /// The setting's key (nested tables: `list[index].key`).
        key: String,
    },
    /// An environment variable.
    Env {
        /// The variable's name.
        var: String,
        /// The setting it is the fallback of (`None`: an environment-only
        /// variable).
        key: Option<String>,
    },
}

impl Origin {
    /// The setting `key`.
    pub fn setting(key: impl Into<String>) -> Self {
        Self::Setting { key: key.into() }
    }

    /// The setting the value belongs to, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            Self::Setting { key } => Some(key),
            Self::Env { key, .. } => key.as_deref(),
        }
    }

    /// The environment variable the value came from, if it did.
    pub fn var(&self) -> Option<&str> {
        match self {
            Self::Setting { .. } => None,
            Self::Env { var, .. } => Some(var),
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Setting { key } => write!(f, "setting {key:?}"),
            Self::Env {
                var,
                key: Some(key),
            } => write!(f, "environment variable {var} (for setting {key:?})"),
            Self::Env { var, key: None } => write!(f, "environment variable {var}"),
        }
    }
}

/// What is wrong with a configuration value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The value does not have the expected form.
    #[error("must be {expected}, not {found}")]
    Invalid {
        /// What the value must be.
        expected: String,
        /// The value as found (shortened).
        found: String,
    },
    /// The value has the right form but cannot be used.
    #[error("is invalid: {reason}")]
    Refused {
        /// Why.
        reason: String,
    },
    /// The settings table has a key the plugin does not read.
    #[error("is not a known setting (known: {known})")]
    Unknown {
        /// The keys the plugin reads, comma-separated.
        known: String,
    },
}

/// A configuration value that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin} {problem}")]
pub struct ConfigError {
    /// Where the value came from.
    pub origin: Origin,
    /// What is wrong with it.
    pub problem: Problem,
}

impl ConfigError {
    /// The value from `origin` cannot be used, because of `reason`.
    pub fn refused(origin: Origin, reason: impl fmt::Display) -> Self {
        Self {
            origin,
            problem: Problem::Refused {
                reason: reason.to_string(),
            },
        }
    }

    /// The setting the error is about, if any.
    pub fn key(&self) -> Option<&str> {
        self.origin.key()
    }
}

/// Longest quoted value in an error message, in characters.
const MAX_FOUND_CHARS: usize = 64;

/// One value as found: a settings member (JSON) or an environment
/// variable's text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Raw<'v> {
    /// A member of the settings table.
    Json(&'v Value),
    /// The text of an environment variable (set and not blank).
    Text(&'v str),
}

impl<'v> Raw<'v> {
    /// The value when it is a JSON string or environment text, as is.
    pub fn as_str(&self) -> Option<&'v str> {
        match self {
            Self::Json(Value::String(s)) => Some(s),
            Self::Json(_) => None,
            Self::Text(s) => Some(s),
        }
    }

    /// The value as trimmed text: strings, numbers and booleans.
    pub fn to_text(&self) -> Option<String> {
        match self {
            Self::Json(Value::Number(n)) => Some(n.to_string()),
            Self::Json(Value::Bool(b)) => Some(b.to_string()),
            other => other.as_str().map(|s| s.trim().to_owned()),
        }
    }

    /// The value quoted for an error message (JSON text, shortened).
    pub fn quoted(&self) -> String {
        let text = match self {
            Self::Json(v) => v.to_string(),
            Self::Text(s) => Value::String((*s).to_owned()).to_string(),
        };
        if text.chars().count() > MAX_FOUND_CHARS {
            let cut: String = text.chars().take(MAX_FOUND_CHARS).collect();
            format!("{cut}…")
        } else {
            text
        }
    }
}

/// The process environment.
fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Reads settings with environment fallbacks. Build one per settings table
/// and ask it for each value with [`ConfigReader::get`].
#[derive(Clone, Copy)]
pub struct ConfigReader<'a> {
    settings: &'a Map<String, Value>,
    env: &'a dyn Fn(&str) -> Option<String>,
    prefix: &'a str,
}

impl fmt::Debug for ConfigReader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigReader")
            .field("keys", &self.settings.keys().collect::<Vec<_>>())
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl<'a> ConfigReader<'a> {
    /// `settings` with the process environment as fallback.
    pub fn new(settings: &'a Map<String, Value>) -> Self {
        Self::with_env(settings, &process_env)
    }

    /// `settings` with `env` (a lookup such as `std::env::var`) as fallback.
    pub fn with_env(
        settings: &'a Map<String, Value>,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> Self {
        Self {
            settings,
            env,
            prefix: "",
        }
    }

    /// The value of setting `key`; add its environment variable with
    /// [`Item::env`].
    pub fn get(&self, key: &str) -> Item<'a> {
        Item {
            reader: *self,
            key: Some(key.to_owned()),
            var: None,
        }
    }

    /// The value of environment variable `var`, which no setting names.
    pub fn env(&self, var: &str) -> Item<'a> {
        Item {
            reader: *self,
            key: None,
            var: Some(var.to_owned()),
        }
    }

    /// The keys present in the settings table.
    pub fn keys(&self) -> impl Iterator<Item = &'a str> + 'a {
        self.settings.keys().map(String::as_str)
    }

    /// Refuses a settings table with a key not in `known`.
    pub fn deny_unknown(&self, known: &[&str]) -> Result<(), ConfigError> {
        match self.keys().find(|k| !known.contains(k)) {
            None => Ok(()),
            Some(key) => Err(ConfigError {
                origin: self.origin_of(key),
                problem: Problem::Unknown {
                    known: known.join(", "),
                },
            }),
        }
    }

    /// Setting `key` as a list of settings tables, each with its own
    /// reader (same environment; keys reported as `key[index].member`).
    /// `None` when the setting is absent.
    pub fn tables(&self, key: &str) -> Result<Option<Vec<Table<'a>>>, ConfigError> {
        let origin = self.origin_of(key);
        let items = match self.settings.get(key) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Array(items)) => items,
            Some(other) => return Err(invalid(origin, "a list of tables", Raw::Json(other))),
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::Object(map) => Ok(Table {
                    settings: map,
                    env: self.env,
                    prefix: format!("{}[{i}].", origin.key().unwrap_or(key)),
                }),
                other => Err(invalid(
                    Origin::setting(format!("{}[{i}]", origin.key().unwrap_or(key))),
                    "a table (JSON object)",
                    Raw::Json(other),
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The origin of setting `key` of this table.
    pub fn origin_of(&self, key: &str) -> Origin {
        Origin::setting(format!("{}{key}", self.prefix))
    }
}

/// A settings table inside a list (see [`ConfigReader::tables`]).
#[derive(Clone)]
pub struct Table<'a> {
    settings: &'a Map<String, Value>,
    env: &'a dyn Fn(&str) -> Option<String>,
    prefix: String,
}

impl fmt::Debug for Table<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Table")
            .field("keys", &self.settings.keys().collect::<Vec<_>>())
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Table<'_> {
    /// A reader of this table.
    pub fn reader(&self) -> ConfigReader<'_> {
        ConfigReader {
            settings: self.settings,
            env: self.env,
            prefix: &self.prefix,
        }
    }
}

fn invalid(origin: Origin, expected: impl Into<String>, found: Raw<'_>) -> ConfigError {
    ConfigError {
        origin,
        problem: Problem::Invalid {
            expected: expected.into(),
            found: found.quoted(),
        },
    }
}

/// One value being read: a setting, its environment fallback, or both.
/// The typed getters return `Ok(None)` when neither is set.
#[derive(Debug, Clone)]
pub struct Item<'a> {
    reader: ConfigReader<'a>,
    key: Option<String>,
    var: Option<String>,
}

/// A found value with its origin (environment text is owned).
enum Found<'a> {
    Json(Origin, &'a Value),
    Text(Origin, String),
}

impl Found<'_> {
    fn split(&self) -> (&Origin, Raw<'_>) {
        match self {
            Self::Json(origin, v) => (origin, Raw::Json(v)),
            Self::Text(origin, s) => (origin, Raw::Text(s)),
        }
    }
}

impl<'a> Item<'a> {
    /// Falls back to environment variable `var` when the setting is absent.
    #[must_use]
    pub fn env(mut self, var: &str) -> Self {
        self.var = Some(var.to_owned());
        self
    }

    fn find(&self) -> Option<Found<'a>> {
        let full_key = self
            .key
            .as_ref()
            .map(|k| format!("{}{k}", self.reader.prefix));
        if let Some(key) = &self.key
            && let Some(v) = self.reader.settings.get(key)
            && !v.is_null()
        {
            return Some(Found::Json(Origin::setting(full_key?), v));
        }
        let var = self.var.as_ref()?;
        let text = (self.reader.env)(var).filter(|t| !t.trim().is_empty())?;
        Some(Found::Text(
            Origin::Env {
                var: var.clone(),
                key: full_key,
            },
            text,
        ))
    }

    /// Whether the setting or its variable is set.
    pub fn is_set(&self) -> bool {
        self.find().is_some()
    }

    /// The value through `convert`, which sees it as found; a `None`
    /// refuses it as not being `expected`.
    pub fn parse_raw<T>(
        self,
        expected: &str,
        convert: impl FnOnce(Raw<'_>) -> Option<T>,
    ) -> Result<Option<T>, ConfigError> {
        let Some(found) = self.find() else {
            return Ok(None);
        };
        let (origin, raw) = found.split();
        convert(raw)
            .map(Some)
            .ok_or_else(|| invalid(origin.clone(), expected, raw))
    }

    /// The value through `f`, which sees it as found; an `Err` refuses it
    /// with that reason.
    pub fn map<T, E: fmt::Display>(
        self,
        f: impl FnOnce(Raw<'_>) -> Result<T, E>,
    ) -> Result<Option<T>, ConfigError> {
        let Some(found) = self.find() else {
            return Ok(None);
        };
        let (origin, raw) = found.split();
        f(raw)
            .map(Some)
            .map_err(|e| ConfigError::refused(origin.clone(), e))
    }

    /// The text (strings, numbers and booleans; trimmed) through `f`; an
    /// `Err` refuses it with that reason.
    pub fn try_parse<T, E: fmt::Display>(
        self,
        f: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Option<T>, ConfigError> {
        let Some(found) = self.find() else {
            return Ok(None);
        };
        let (origin, raw) = found.split();
        let text = raw
            .to_text()
            .ok_or_else(|| invalid(origin.clone(), "text", raw))?;
        f(&text)
            .map(Some)
            .map_err(|e| ConfigError::refused(origin.clone(), e))
    }

    /// The text (strings, numbers and booleans; trimmed) through `f`; a
    /// `None` refuses it as not being `expected`.
    pub fn parse<T>(
        self,
        expected: &str,
        f: impl FnOnce(&str) -> Option<T>,
    ) -> Result<Option<T>, ConfigError> {
        self.parse_raw(expected, |raw| raw.to_text().and_then(|t| f(&t)))
    }

    /// A string, exactly as given.
    pub fn string(self) -> Result<Option<String>, ConfigError> {
        self.parse_raw("a string", |raw| raw.as_str().map(str::to_owned))
    }

    /// A string, trimmed; it must not be empty.
    pub fn text(self) -> Result<Option<String>, ConfigError> {
        self.parse_raw("a non-empty string", |raw| {
            raw.as_str()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        })
    }

    /// A path (a non-empty string, trimmed).
    pub fn path(self) -> Result<Option<PathBuf>, ConfigError> {
        self.text().map(|t| t.map(PathBuf::from))
    }

    /// A boolean: a JSON boolean, `0`/`1`, or `true`/`false`, `yes`/`no`,
    /// `on`/`off`.
    pub fn bool(self) -> Result<Option<bool>, ConfigError> {
        self.parse_raw("true or false", |raw| {
            let text = match raw {
                Raw::Json(Value::Bool(b)) => return Some(*b),
                other => other.to_text()?.to_ascii_lowercase(),
            };
            match text.as_str() {
                "1" | "true" | "yes" | "on" => Some(true),
                "0" | "false" | "no" | "off" => Some(false),
                _ => None,
            }
        })
    }

    /// A whole number in `range`.
    pub fn integer<T>(self, range: RangeInclusive<T>) -> Result<Option<T>, ConfigError>
    where
        T: Copy + PartialOrd + fmt::Display + std::str::FromStr + TryFrom<u64> + TryFrom<i64>,
    {
        let expected = format!("a whole number from {} to {}", range.start(), range.end());
        self.parse_raw(&expected, |raw| {
            let n: Option<T> = match raw {
                Raw::Json(Value::Number(n)) => n
                    .as_u64()
                    .and_then(|v| T::try_from(v).ok())
                    .or_else(|| n.as_i64().and_then(|v| T::try_from(v).ok())),
                other => other.as_str().and_then(|s| s.trim().parse().ok()),
            };
            n.filter(|n| range.contains(n))
        })
    }

    /// A number (fractions allowed) in `range`.
    pub fn number(self, range: RangeInclusive<f64>) -> Result<Option<f64>, ConfigError> {
        let expected = format!("a number from {} to {}", range.start(), range.end());
        self.parse_raw(&expected, |raw| {
            let n = match raw {
                Raw::Json(Value::Number(n)) => n.as_f64(),
                other => other.as_str().and_then(|s| s.trim().parse::<f64>().ok()),
            };
            n.filter(|n| range.contains(n))
        })
    }

    /// A duration given in whole milliseconds, in `range`.
    pub fn millis(self, range: RangeInclusive<u64>) -> Result<Option<Duration>, ConfigError> {
        let expected = format!(
            "a whole number of milliseconds from {} to {}",
            range.start(),
            range.end()
        );
        self.parse_raw(&expected, |raw| {
            let n: Option<u64> = match raw {
                Raw::Json(Value::Number(n)) => n.as_u64(),
                other => other.as_str().and_then(|s| s.trim().parse().ok()),
            };
            n.filter(|n| range.contains(n)).map(Duration::from_millis)
        })
    }

    /// A list of strings: a JSON array of strings, or whitespace-separated
    /// text.
    pub fn list(self) -> Result<Option<Vec<String>>, ConfigError> {
        self.parse_raw("a list of strings", |raw| match raw {
            Raw::Json(Value::Array(items)) => items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>(),
            other => other
                .as_str()
                .map(|s| s.split_whitespace().map(str::to_owned).collect()),
        })
    }

    /// One of `choices`, by name (trimmed, ASCII case-insensitive).
    pub fn one_of<T: Copy>(self, choices: &[(&str, T)]) -> Result<Option<T>, ConfigError> {
        let expected = format!(
            "one of {}",
            choices
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        );
        self.parse_raw(&expected, |raw| {
            let text = raw.to_text()?;
            choices
                .iter()
                .find(|(name, _)| name.eq_ignore_ascii_case(&text))
                .map(|(_, v)| *v)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn settings_win_over_the_environment_which_wins_over_nothing() {
        let settings = map(json!({ "a": 1, "n": null }));
        let env = |k: &str| match k {
            "A" => Some("2".to_owned()),
            "N" => Some("3".to_owned()),
            "BLANK" => Some("  ".to_owned()),
            _ => None,
        };
        let r = ConfigReader::with_env(&settings, &env);
        assert_eq!(r.get("a").env("A").integer(0..=9u8), Ok(Some(1)));
        assert_eq!(r.get("n").env("N").integer(0..=9u8), Ok(Some(3)));
        assert_eq!(r.get("b").env("B").integer(0..=9u8), Ok(None));
        assert_eq!(r.get("b").env("BLANK").string(), Ok(None));
        assert_eq!(r.env("A").integer(0..=9u8), Ok(Some(2)));
        assert!(!r.get("missing").is_set());
    }

    #[test]
    fn errors_name_the_setting_and_the_source() {
        let settings = map(json!({ "flag": "maybe" }));
        let env = |k: &str| (k == "LIMIT").then(|| "99".to_owned());
        let r = ConfigReader::with_env(&settings, &env);
        let e = r.get("flag").env("FLAG").bool().expect_err("refused");
        assert_eq!(e.key(), Some("flag"));
        assert_eq!(
            e.to_string(),
            "setting \"flag\" must be true or false, not \"maybe\""
        );
        let e = r
            .get("limit")
            .env("LIMIT")
            .integer(1..=10u32)
            .expect_err("refused");
        assert_eq!(e.origin.var(), Some("LIMIT"));
        assert_eq!(
            e.to_string(),
            "environment variable LIMIT (for setting \"limit\") must be a whole number from 1 to 10, not \"99\""
        );
    }

    #[test]
    fn typed_getters() {
        let settings = map(json!({
            "t": true, "one": 1, "word": " Off ", "ms": 250, "msText": "250",
            "f": 1.5, "list": ["a", "b"], "mode": "PNG", "s": " x ", "empty": "",
        }));
        let r = ConfigReader::with_env(&settings, &no_env);
        assert_eq!(r.get("t").bool(), Ok(Some(true)));
        assert_eq!(r.get("one").bool(), Ok(Some(true)));
        assert_eq!(r.get("word").bool(), Ok(Some(false)));
        assert_eq!(
            r.get("ms").millis(1..=1000),
            Ok(Some(Duration::from_millis(250)))
        );
        assert_eq!(
            r.get("msText").millis(1..=1000),
            Ok(Some(Duration::from_millis(250)))
        );
        assert!(r.get("ms").millis(1..=100).is_err());
        assert!(r.get("f").integer(0..=9u8).is_err());
        assert_eq!(r.get("f").number(0.25..=5.0), Ok(Some(1.5)));
        assert_eq!(
            r.get("list").list(),
            Ok(Some(vec!["a".to_owned(), "b".to_owned()]))
        );
        assert_eq!(r.get("mode").one_of(&[("raw", 0), ("png", 1)]), Ok(Some(1)));
        assert!(r.get("mode").one_of(&[("raw", 0)]).is_err());
        assert_eq!(r.get("s").string(), Ok(Some(" x ".to_owned())));
        assert_eq!(r.get("s").text(), Ok(Some("x".to_owned())));
        assert!(r.get("empty").text().is_err());
        assert!(r.get("t").string().is_err());
        assert_eq!(
            r.get("one").parse("a digit", |t| t.parse::<u8>().ok()),
            Ok(Some(1))
        );
        let e = r
            .get("s")
            .try_parse(|t| t.parse::<u8>())
            .expect_err("refused");
        assert!(matches!(e.problem, Problem::Refused { .. }), "{e}");
    }

    #[test]
    fn environment_lists_split_on_whitespace() {
        let settings = Map::new();
        let env = |k: &str| (k == "ARGS").then(|| " --a  --b ".to_owned());
        let r = ConfigReader::with_env(&settings, &env);
        assert_eq!(
            r.get("args").env("ARGS").list(),
            Ok(Some(vec!["--a".to_owned(), "--b".to_owned()]))
        );
    }

    #[test]
    fn nested_tables_and_unknown_keys() {
        let settings = map(json!({ "items": [{ "id": "a" }, { "id": 3, "x": 1 }] }));
        let r = ConfigReader::with_env(&settings, &no_env);
        assert!(r.deny_unknown(&["items"]).is_ok());
        let tables = r.tables("items").expect("a list").expect("present");
        assert_eq!(tables[0].reader().get("id").string(), Ok(Some("a".into())));
        let e = tables[1]
            .reader()
            .get("id")
            .string()
            .expect_err("not a string");
        assert_eq!(e.key(), Some("items[1].id"));
        let e = tables[1].reader().deny_unknown(&["id"]).expect_err("x");
        assert_eq!(
            e.to_string(),
            "setting \"items[1].x\" is not a known setting (known: id)"
        );
        assert!(r.tables("missing").is_ok_and(|t| t.is_none()));
        let bad = map(json!({ "items": [1] }));
        assert!(
            ConfigReader::with_env(&bad, &no_env)
                .tables("items")
                .is_err()
        );
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        let settings = map(json!({ "flag": "x".repeat(500) }));
        let e = ConfigReader::with_env(&settings, &no_env)
            .get("flag")
            .bool()
            .expect_err("refused");
        assert!(e.to_string().len() < 200, "{e}");
    }
}
