//! The configuration file: TOML syntax, the `[host]` table read through
//! serde (unknown keys and wrong types refused), one `[plugins.<id>]`
//! table per plugin turned into that plugin's JSON settings, and an index
//! from every key path (`plugins.browser.browsers[1].id`) to its line, so
//! every error names the file, the line and the key.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use devicerail_host_plugin_api::{ffi, valid_plugin_id};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::ScreenshotPolicy;

/// A problem at one place of the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{}:{line}: {}{message}",
    path.display(),
    key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default()
)]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// The key path (`host.dataDir`), when one is concerned.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// The `[host]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HostSection {
    /// Sessions, events and Evidence (relative: to the file's directory).
    pub data_dir: Option<PathBuf>,
    /// Where plugins are loaded from (relative: to the file's directory).
    pub plugins_dir: Option<PathBuf>,
    /// Whether observations capture screenshots.
    pub screenshot_policy: Option<ScreenshotPolicy>,
    /// A `tracing` filter (`RUST_LOG` syntax), e.g. `info,devicerail_host=debug`.
    pub log_filter: Option<String>,
    /// Whether the observation after each Action records the UI tree too
    /// (default true), so an Action's effect can be read from its record.
    pub after_action_tree: Option<bool>,
}

/// The whole file as serde sees it; plugin tables stay untyped (each
/// plugin checks its own).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    #[serde(default)]
    host: HostSection,
    #[serde(default)]
    plugins: BTreeMap<String, toml::Value>,
}

/// The key of a plugin's table the host keeps for itself: how the plugin
/// is isolated. It is never handed to the plugin.
pub(crate) const ISOLATION_KEY: &str = "isolation";

/// The key of a plugin's table the host keeps for itself: variables added
/// to the plugin worker's environment (a table of strings). Never handed
/// to the plugin as a setting.
pub(crate) const ENV_KEY: &str = "env";

/// Where a plugin's driver runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Isolation {
    /// In a supervised worker process: a crash or hang of the plugin kills
    /// only the worker (the default).
    #[default]
    Process,
    /// In the host process (trusted drivers only): panics are contained,
    /// but an abort, a segfault, `exit` or a stack overflow kills the host.
    Inline,
}

impl Isolation {
    /// `process` or `inline`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Process => "process",
            Self::Inline => "inline",
        }
    }

    /// The isolation named `text`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "process" => Some(Self::Process),
            "inline" => Some(Self::Inline),
            _ => None,
        }
    }
}

impl std::fmt::Display for Isolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One plugin's table.
#[derive(Debug, Clone, PartialEq)]
pub struct PluginTable {
    /// The line of its `[plugins.<id>]` header (or key).
    pub line: usize,
    /// Its `isolation` key (stripped from the settings), if it has one.
    pub isolation: Option<Isolation>,
    /// Its `env` table (stripped from the settings): variables added to
    /// the plugin worker's environment, as written (the engine refuses
    /// credentials among them).
    pub env: Vec<(String, String)>,
    /// The settings handed to the plugin, or why the table is unusable
    /// (which refuses that plugin only).
    pub settings: Result<Map<String, Value>, FileError>,
}

/// Where one key and its value are in the text.
#[derive(Debug, Clone)]
struct Located {
    path: String,
    key: Range<usize>,
    value: Range<usize>,
}

/// A parsed configuration file.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// The file.
    pub path: PathBuf,
    /// The `[host]` table.
    pub host: HostSection,
    /// `[plugins.<id>]` tables by plugin id.
    pub plugins: BTreeMap<String, PluginTable>,
    keys: Vec<Located>,
    text: String,
}

impl ConfigFile {
    /// Parses `text`, the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<Self, FileError> {
        let mut file = Self {
            path: path.to_path_buf(),
            host: HostSection::default(),
            plugins: BTreeMap::new(),
            keys: Vec::new(),
            text: text.to_owned(),
        };
        let tree = toml::de::DeTable::parse(text).map_err(|e| file.toml_error(&e))?;
        index_table(tree.get_ref(), "", &mut file.keys);
        let doc: Document = toml::from_str(text).map_err(|e| file.toml_error(&e))?;
        file.host = doc.host;
        for (id, value) in doc.plugins {
            let key = format!("plugins.{id}");
            let line = file.line_of(&key).unwrap_or(1);
            if !valid_plugin_id(&id) {
                return Err(file.error(
                    line,
                    Some(key),
                    "not a plugin id (1-64 of a-z, 0-9 and -, not starting or ending with -)",
                ));
            }
            let mut isolation = None;
            let mut env = Vec::new();
            let settings = match &value {
                toml::Value::Table(t) if t.contains_key(ffi::HOST_MEMBER) => {
                    let member = format!("{key}.\"{}\"", ffi::HOST_MEMBER);
                    Err(file.error_at(&member, "is reserved for the host's messages to the plugin"))
                }
                toml::Value::Table(t) => {
                    let mut rest = t.clone();
                    let host_keys = (|| {
                        if let Some(v) = rest.remove(ISOLATION_KEY) {
                            isolation =
                                Some(v.as_str().and_then(Isolation::parse).ok_or_else(|| {
                                    file.error_at(
                                        &format!("{key}.{ISOLATION_KEY}"),
                                        "must be \"process\" (the default) or \"inline\"",
                                    )
                                })?);
                        }
                        if let Some(v) = rest.remove(ENV_KEY) {
                            env = file.env_table(&format!("{key}.{ENV_KEY}"), &v)?;
                        }
                        Ok(())
                    })();
                    host_keys.and_then(|()| file.table_to_json(&key, &rest))
                }
                other => Err(file.error(
                    line,
                    Some(key.clone()),
                    format!(
                        "must be a table of the plugin's settings, not {}",
                        type_name(other)
                    ),
                )),
            };
            file.plugins.insert(
                id,
                PluginTable {
                    line,
                    isolation,
                    env,
                    settings,
                },
            );
        }
        Ok(file)
    }

    /// How plugin `id` is isolated: its table's `isolation`, else
    /// [`Isolation::Process`].
    pub fn isolation(&self, id: &str) -> Isolation {
        self.plugins
            .get(id)
            .and_then(|t| t.isolation)
            .unwrap_or_default()
    }

    /// The line of key path `key`, if the file has that key.
    pub(crate) fn line_of(&self, key: &str) -> Option<usize> {
        self.keys
            .iter()
            .find(|k| k.path == key)
            .map(|k| self.line_at(k.key.start))
    }

    /// The line of `key`, else of its nearest enclosing key that the file
    /// has (a missing member is reported where its table is).
    pub fn nearest_line(&self, key: &str) -> Option<(usize, String)> {
        let mut path = key.to_owned();
        loop {
            if let Some(line) = self.line_of(&path) {
                return Some((line, path));
            }
            let cut = path.rfind(['.', '['])?;
            path.truncate(cut);
        }
    }

    /// An error about key path `key` (located at it, or at the nearest
    /// enclosing key).
    pub(crate) fn error_at(&self, key: &str, message: impl Into<String>) -> FileError {
        let line = self.nearest_line(key).map(|(l, _)| l).unwrap_or(1);
        self.error(line, Some(key.to_owned()), message)
    }

    fn error(&self, line: usize, key: Option<String>, message: impl Into<String>) -> FileError {
        FileError {
            path: self.path.clone(),
            line,
            key,
            message: message.into(),
        }
    }

    fn line_at(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }

    /// The deepest key whose key or value covers `offset`.
    fn key_at(&self, offset: usize) -> Option<&str> {
        self.keys
            .iter()
            .filter(|k| k.key.contains(&offset) || k.value.contains(&offset))
            .max_by_key(|k| k.path.len())
            .map(|k| k.path.as_str())
    }

    fn toml_error(&self, e: &toml::de::Error) -> FileError {
        let offset = e.span().map(|s| s.start).unwrap_or(0);
        let message = e.message().trim().replace('\n', "; ");
        // The index names the unknown key, or the key whose value has the
        // wrong type.
        let key = self.key_at(offset).map(str::to_owned);
        self.error(self.line_at(offset), key, message)
    }

    /// A plugin's `env` table: names and string values.
    fn env_table(
        &self,
        key: &str,
        value: &toml::Value,
    ) -> Result<Vec<(String, String)>, FileError> {
        let toml::Value::Table(t) = value else {
            return Err(self.error_at(
                key,
                format!(
                    "must be a table of environment variables (NAME = \"value\"), not {}",
                    type_name(value)
                ),
            ));
        };
        t.iter()
            .map(|(name, v)| match v {
                toml::Value::String(s) => Ok((name.clone(), s.clone())),
                other => Err(self.error_at(
                    &format!("{key}.{name}"),
                    format!("must be a string, not {}", type_name(other)),
                )),
            })
            .collect()
    }

    fn table_to_json(
        &self,
        key: &str,
        table: &toml::map::Map<String, toml::Value>,
    ) -> Result<Map<String, Value>, FileError> {
        table
            .iter()
            .map(|(k, v)| {
                let path = format!("{key}.{k}");
                Ok((k.clone(), self.value_to_json(&path, v)?))
            })
            .collect()
    }

    fn value_to_json(&self, key: &str, value: &toml::Value) -> Result<Value, FileError> {
        Ok(match value {
            toml::Value::String(s) => Value::String(s.clone()),
            toml::Value::Integer(i) => Value::from(*i),
            toml::Value::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .ok_or_else(|| self.error_at(key, "must be a finite number"))?,
            toml::Value::Boolean(b) => Value::Bool(*b),
            toml::Value::Datetime(d) => Value::String(d.to_string()),
            toml::Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.value_to_json(&format!("{key}[{i}]"), v))
                    .collect::<Result<_, _>>()?,
            ),
            toml::Value::Table(t) => Value::Object(self.table_to_json(key, t)?),
        })
    }
}

fn type_name(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a date-time",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

fn index_table(table: &toml::de::DeTable<'_>, prefix: &str, out: &mut Vec<Located>) {
    for (k, v) in table.iter() {
        let path = if prefix.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{prefix}.{}", k.get_ref())
        };
        out.push(Located {
            path: path.clone(),
            key: k.span(),
            value: v.span(),
        });
        index_value(v.get_ref(), &path, out);
    }
}

fn index_value(value: &toml::de::DeValue<'_>, path: &str, out: &mut Vec<Located>) {
    match value {
        toml::de::DeValue::Table(t) => index_table(t, path, out),
        toml::de::DeValue::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let item_path = format!("{path}[{i}]");
                out.push(Located {
                    path: item_path.clone(),
                    key: item.span(),
                    value: item.span(),
                });
                index_value(item.get_ref(), &item_path, out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile, FileError> {
        ConfigFile::parse(Path::new("devicerail.toml"), text)
    }

    #[test]
    fn host_and_plugin_tables() {
        let f = parse(
            "[host]\ndataDir = \"d\"\nscreenshotPolicy = \"omit\"\n\n\
             [plugins.android]\nadbServer = \"tcp:127.0.0.1:6000\"\nstartServer = false\n\n\
             [[plugins.browser.browsers]]\nid = \"a\"\n[[plugins.browser.browsers]]\nid = \"b\"\nviewportWidth = 800\n",
        )
        .expect("valid");
        assert_eq!(f.host.data_dir, Some(PathBuf::from("d")));
        assert_eq!(f.host.screenshot_policy, Some(ScreenshotPolicy::Omit));
        let android = f.plugins["android"].settings.as_ref().expect("table");
        assert_eq!(android["startServer"], Value::Bool(false));
        assert_eq!(f.plugins["android"].line, 5);
        let browser = f.plugins["browser"].settings.as_ref().expect("table");
        assert_eq!(browser["browsers"][1]["viewportWidth"], Value::from(800));
        assert_eq!(
            f.line_of("plugins.browser.browsers[1].viewportWidth"),
            Some(13)
        );
        assert_eq!(f.line_of("plugins.android.startServer"), Some(7));
        assert_eq!(
            f.nearest_line("plugins.browser.browsers[1].missing"),
            Some((11, "plugins.browser.browsers[1]".to_owned()))
        );
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let e = parse("[host]\ndataDir = \"d\"\nplugnsDir = \"p\"\n").expect_err("unknown");
        assert_eq!(e.line, 3);
        assert_eq!(e.key.as_deref(), Some("host.plugnsDir"));
        assert!(e.message.contains("unknown field `plugnsDir`"), "{e}");
        assert!(
            e.to_string()
                .starts_with("devicerail.toml:3: host.plugnsDir: unknown field"),
            "{e}"
        );

        let e = parse("\n[host]\nscreenshotPolicy = 3\n").expect_err("type");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (3, Some("host.screenshotPolicy"))
        );

        let e = parse("[host]\nscreenshotPolicy = \"sometimes\"\n").expect_err("variant");
        assert_eq!(e.key.as_deref(), Some("host.screenshotPolicy"));
        assert!(e.message.contains("sometimes"), "{e}");

        let e = parse("[hots]\nx = 1\n").expect_err("unknown table");
        assert_eq!(e.line, 1);
        assert!(e.message.contains("`hots`"), "{e}");

        let e = parse("[host\n").expect_err("syntax");
        assert_eq!(e.line, 1);

        let e = parse("[plugins.Bad_Id]\n").expect_err("id");
        assert_eq!(e.key.as_deref(), Some("plugins.Bad_Id"));
    }

    /// The README's complete example file.
    pub(crate) fn readme_example() -> &'static str {
        let readme = include_str!("../../../README.md");
        let start = readme
            .find("```toml\n[host]")
            .map(|i| i + "```toml\n".len())
            .expect("README has an example file");
        let len = readme[start..].find("```").expect("the block ends");
        &readme[start..start + len]
    }

    #[test]
    fn the_readme_example_parses() {
        let f = parse(readme_example()).expect("the README example is valid");
        assert_eq!(f.host.screenshot_policy, Some(ScreenshotPolicy::Capture));
        for id in ["android", "browser", "ios-simulator", "mock"] {
            assert!(f.plugins[id].settings.is_ok(), "{id}");
        }
    }

    #[test]
    fn isolation_is_the_hosts_key_and_is_checked() {
        let f = parse(
            "[plugins.mock]\nisolation = \"inline\"\nscreens = 2\n[plugins.android]\nisolation = \"thread\"\n",
        )
        .expect("the host still starts");
        assert_eq!(f.isolation("mock"), Isolation::Inline);
        let mock = f.plugins["mock"].settings.as_ref().expect("table");
        assert!(!mock.contains_key(ISOLATION_KEY), "stripped: {mock:?}");
        assert_eq!(mock["screens"], Value::from(2));
        let e = f.plugins["android"].settings.as_ref().expect_err("refused");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (5, Some("plugins.android.isolation"))
        );
        assert_eq!(f.isolation("browser"), Isolation::Process);
    }

    #[test]
    fn env_is_the_hosts_key_and_is_checked() {
        let f = parse(
            "[plugins.mock]\nscreens = 2\nenv = { HTTPS_PROXY = \"http://p:3128\" }\n[plugins.android]\nenv = { A = 1 }\n[plugins.browser]\nenv = \"x\"\n",
        )
        .expect("the host still starts");
        let mock = f.plugins["mock"].settings.as_ref().expect("table");
        assert!(!mock.contains_key(ENV_KEY), "stripped: {mock:?}");
        assert_eq!(
            f.plugins["mock"].env,
            [("HTTPS_PROXY".to_owned(), "http://p:3128".to_owned())]
        );
        let e = f.plugins["android"].settings.as_ref().expect_err("refused");
        assert_eq!(
            (e.line, e.key.as_deref()),
            (5, Some("plugins.android.env.A"))
        );
        let e = f.plugins["browser"].settings.as_ref().expect_err("refused");
        assert_eq!(e.key.as_deref(), Some("plugins.browser.env"));
        assert!(e.message.contains("table of environment variables"), "{e}");
    }

    #[test]
    fn a_plugin_value_that_is_not_a_table_refuses_only_that_plugin() {
        let f = parse("[plugins]\nmock = 3\n[plugins.android]\nstartServer = true\n")
            .expect("the host still starts");
        let e = f.plugins["mock"].settings.as_ref().expect_err("refused");
        assert_eq!((e.line, e.key.as_deref()), (2, Some("plugins.mock")));
        assert!(e.message.contains("not an integer"), "{e}");
        assert!(f.plugins["android"].settings.is_ok());
    }
}
