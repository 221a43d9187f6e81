//! The host configuration: the command line, the environment and one TOML
//! file, in that order of precedence, over the defaults.
//!
//! * The file is `--config FILE`, else `$DEVICERAIL_CONFIG`, else
//!   `config.toml` in the platform's configuration directory
//!   (`$XDG_CONFIG_HOME/devicerail/config.toml`, i.e.
//!   `~/.config/devicerail/config.toml` on Linux; `~/Library/Application
//!   Support/devicerail/config.toml` on macOS). A file named by the flag or
//!   the variable must exist; the default one may be absent. A file only at
//!   the old default location (beside the data directory,
//!   `~/.local/share/devicerail/config.toml`) is still read, and
//!   [`FileChoice::move_to`] says so, for a one-line notice.
//! * Host settings: `pluginsDir` (`--plugins-dir`,
//!   `DEVICERAIL_PLUGINS_DIR`), `dataDir` (`--data-dir`,
//!   `DEVICERAIL_DATA_DIR`), `screenshotPolicy` (`--screenshot-policy`,
//!   `DEVICERAIL_SCREENSHOT_POLICY`), `logFilter` (`--log-filter`,
//!   `RUST_LOG`). Relative paths in the file are relative to the file's
//!   directory; elsewhere, to the working directory.
//! * `[plugins.<id>]` tables are handed to the plugin with that id at load
//!   as its settings (a [`PluginTable`] each).
//!
//! What it must never do: parse the command line (the CLI crate owns
//! `clap` and hands over a [`CommandLine`]), load a plugin, or start
//! logging before the filter is known.
//!
//! Every value keeps its [`Source`], for `devicerail config show` and
//! `doctor`. A file problem is a [`FileError`] naming file, line and
//! key; the host refuses to start with it.

#![forbid(unsafe_code)]

mod file;
pub mod paths;
mod policy;
pub mod show;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use file::{ConfigFile, FileError, HostSection, Isolation, PluginTable};
pub use policy::{ScreenshotPolicy, UnknownPolicy};

/// Environment variable naming the configuration file.
pub(crate) const CONFIG_ENV: &str = "DEVICERAIL_CONFIG";
/// Environment variable setting the screenshot policy.
pub(crate) const SCREENSHOT_POLICY_ENV: &str = "DEVICERAIL_SCREENSHOT_POLICY";
/// Environment variable setting the log filter.
pub(crate) const LOG_FILTER_ENV: &str = "RUST_LOG";
/// The file's name in the default location.
pub(crate) const FILE_NAME: &str = "config.toml";

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Source {
    /// A command-line flag.
    CommandLine {
        /// The flag, e.g. `--data-dir`.
        flag: &'static str,
    },
    /// An environment variable.
    Environment {
        /// The variable's name.
        var: &'static str,
    },
    /// The configuration file.
    File {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
    },
    /// Nothing set it.
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::CommandLine { flag } => write!(f, "command line {flag}"),
            Self::Environment { var } => write!(f, "environment {var}"),
            Self::File { path, line } => write!(f, "file {}:{line}", path.display()),
            Self::Default => f.write_str("default"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sourced<T> {
    /// The effective value.
    pub value: T,
    /// Where it came from.
    pub source: Source,
}

/// What the command line set.
#[derive(Debug, Clone, Default)]
pub struct CommandLine {
    /// `--config FILE`.
    pub config: Option<PathBuf>,
    /// `--plugins-dir DIR`.
    pub plugins_dir: Option<PathBuf>,
    /// `--data-dir DIR`.
    pub data_dir: Option<PathBuf>,
    /// `--screenshot-policy`.
    pub screenshot_policy: Option<ScreenshotPolicy>,
    /// `--log-filter`.
    pub log_filter: Option<String>,
}

/// Which file is the configuration file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileChoice {
    /// The file, when one could be named (the default location needs a
    /// home directory).
    pub path: Option<PathBuf>,
    /// What named it (`Default`: the default location).
    pub chosen_by: Source,
    /// Whether it exists (and so was read).
    pub present: bool,
    /// Set when the default file was found only at its old location
    /// (beside the data directory): where it should move to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub move_to: Option<PathBuf>,
}

impl FileChoice {
    /// The one-line notice for a file read from its old location.
    pub fn notice(&self) -> Option<String> {
        let (Some(old), Some(new)) = (&self.path, &self.move_to) else {
            return None;
        };
        Some(format!(
            "reading the configuration from its old location {}; move it to {}",
            old.display(),
            new.display()
        ))
    }
}

/// A configuration the host cannot start with.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A problem in the file, at a line and key.
    #[error("{0}")]
    File(#[from] FileError),
    /// The file named by the flag or the variable cannot be read.
    #[error("cannot read the configuration file {} (named by {chosen_by}): {error}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What named it.
        chosen_by: Source,
        /// Why it cannot be read.
        #[source]
        error: std::io::Error,
    },
    /// An environment variable's value cannot be used.
    #[error("environment variable {var}: {message}")]
    Env {
        /// The variable.
        var: &'static str,
        /// Why.
        message: String,
    },
    /// The log filter does not parse.
    #[error("log filter {filter:?} from {origin}: {message}")]
    LogFilter {
        /// The filter text.
        filter: String,
        /// Where it came from.
        origin: Source,
        /// The parser's complaint.
        message: String,
    },
    /// A directory cannot be determined or resolved.
    #[error(transparent)]
    Paths(#[from] paths::PathError),
}

/// The effective configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// The configuration file and how it was chosen.
    pub file: FileChoice,
    /// The parsed file, when there is one.
    pub parsed: Option<ConfigFile>,
    /// Where plugins are loaded from.
    pub plugins_dir: Sourced<PathBuf>,
    /// Sessions, events and Evidence.
    pub data_dir: Sourced<PathBuf>,
    /// Whether observations capture screenshots.
    pub screenshot_policy: Sourced<ScreenshotPolicy>,
    /// The `tracing` filter of stderr diagnostics.
    pub log_filter: Sourced<String>,
    /// Whether after-Action observations record the UI tree.
    pub after_action_tree: Sourced<bool>,
}

/// The process environment (unset and empty are the same).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Config {
    /// Reads the configuration from `cli`, the process environment and
    /// the file; `default_log` is the filter when nothing sets one.
    pub fn load(cli: &CommandLine, default_log: &str) -> Result<Self, ConfigError> {
        Self::load_with(cli, &process_env, default_log)
    }

    /// [`Config::load`] with `env` as the environment.
    pub(crate) fn load_with(
        cli: &CommandLine,
        env: &dyn Fn(&str) -> Option<String>,
        default_log: &str,
    ) -> Result<Self, ConfigError> {
        let (choice, parsed) = read_file(cli, env)?;
        Self::resolve(cli, env, choice, parsed, default_log)
    }

    /// The configuration without the file's settings (for `doctor` when
    /// the file is broken: it reports the error and checks the rest).
    pub fn without_file(
        cli: &CommandLine,
        env: &dyn Fn(&str) -> Option<String>,
        default_log: &str,
    ) -> Result<Self, ConfigError> {
        let choice = choose_file(cli, env)?;
        Self::resolve(cli, env, choice, None, default_log)
    }

    fn resolve(
        cli: &CommandLine,
        env: &dyn Fn(&str) -> Option<String>,
        file: FileChoice,
        parsed: Option<ConfigFile>,
        default_log: &str,
    ) -> Result<Self, ConfigError> {
        let host = parsed.as_ref().map(|f| (f, &f.host));
        let from_file = |key: &str| -> Option<Source> {
            let (f, _) = host?;
            Some(Source::File {
                path: f.path.clone(),
                line: f.line_of(&format!("host.{key}")).unwrap_or(1),
            })
        };
        let base_of_file = parsed
            .as_ref()
            .and_then(|f| f.path.parent().map(Path::to_path_buf))
            .unwrap_or_default();
        let dir = |flag: &'static str,
                   flag_value: &Option<PathBuf>,
                   var: &'static str,
                   key: &str,
                   file_value: Option<&PathBuf>,
                   leaf: &'static str|
         -> Result<Sourced<PathBuf>, ConfigError> {
            if let Some(p) = flag_value {
                return Ok(Sourced {
                    value: paths::absolute(p)?,
                    source: Source::CommandLine { flag },
                });
            }
            if let Some(v) = env(var) {
                return Ok(Sourced {
                    value: paths::absolute(Path::new(&v))?,
                    source: Source::Environment { var },
                });
            }
            if let (Some(p), Some(source)) = (file_value, from_file(key)) {
                return Ok(Sourced {
                    value: paths::absolute(&base_of_file.join(p))?,
                    source,
                });
            }
            Ok(Sourced {
                value: paths::platform_base_with(env)
                    .map(|b| b.join(leaf))
                    .ok_or(paths::PathError::NoHome { what: leaf })?,
                source: Source::Default,
            })
        };
        let section = parsed.as_ref().map(|f| &f.host);
        let plugins_dir = dir(
            "--plugins-dir",
            &cli.plugins_dir,
            paths::PLUGINS_DIR_ENV,
            "pluginsDir",
            section.and_then(|h| h.plugins_dir.as_ref()),
            "plugins",
        )?;
        let data_dir = dir(
            "--data-dir",
            &cli.data_dir,
            paths::DATA_DIR_ENV,
            "dataDir",
            section.and_then(|h| h.data_dir.as_ref()),
            "data",
        )?;
        let screenshot_policy = if let Some(p) = cli.screenshot_policy {
            Sourced {
                value: p,
                source: Source::CommandLine {
                    flag: "--screenshot-policy",
                },
            }
        } else if let Some(v) = env(SCREENSHOT_POLICY_ENV) {
            let value = v
                .trim()
                .to_ascii_lowercase()
                .parse::<ScreenshotPolicy>()
                .map_err(|_| ConfigError::Env {
                    var: SCREENSHOT_POLICY_ENV,
                    message: format!("must be capture or omit, not {v:?}"),
                })?;
            Sourced {
                value,
                source: Source::Environment {
                    var: SCREENSHOT_POLICY_ENV,
                },
            }
        } else if let (Some(p), Some(source)) = (
            section.and_then(|h| h.screenshot_policy),
            from_file("screenshotPolicy"),
        ) {
            Sourced { value: p, source }
        } else {
            Sourced {
                value: ScreenshotPolicy::Capture,
                source: Source::Default,
            }
        };
        let log_filter = if let Some(f) = &cli.log_filter {
            Sourced {
                value: f.clone(),
                source: Source::CommandLine {
                    flag: "--log-filter",
                },
            }
        } else if let Some(v) = env(LOG_FILTER_ENV) {
            Sourced {
                value: v,
                source: Source::Environment {
                    var: LOG_FILTER_ENV,
                },
            }
        } else if let (Some(f), Some(source)) = (
            section.and_then(|h| h.log_filter.clone()),
            from_file("logFilter"),
        ) {
            Sourced { value: f, source }
        } else {
            Sourced {
                value: default_log.to_owned(),
                source: Source::Default,
            }
        };
        if let Err(e) = tracing_subscriber::EnvFilter::builder().parse(&log_filter.value) {
            let message = e.to_string();
            return Err(match (&log_filter.source, &parsed) {
                (Source::File { .. }, Some(f)) => {
                    ConfigError::File(f.error_at("host.logFilter", message))
                }
                _ => ConfigError::LogFilter {
                    filter: log_filter.value.clone(),
                    origin: log_filter.source.clone(),
                    message,
                },
            });
        }
        let after_action_tree = match (
            section.and_then(|h| h.after_action_tree),
            from_file("afterActionTree"),
        ) {
            (Some(v), Some(source)) => Sourced { value: v, source },
            _ => Sourced {
                value: true,
                source: Source::Default,
            },
        };
        Ok(Self {
            file,
            parsed,
            plugins_dir,
            data_dir,
            screenshot_policy,
            log_filter,
            after_action_tree,
        })
    }

    /// The table of plugin `id` in the file, if it has one.
    pub fn plugin_table(&self, id: &str) -> Option<&PluginTable> {
        self.parsed.as_ref()?.plugins.get(id)
    }

    /// Plugin tables whose id no loaded plugin has (likely typos).
    pub fn unused_plugin_tables<'a>(
        &'a self,
        loaded: &'a [String],
    ) -> impl Iterator<Item = (&'a str, &'a PluginTable)> + 'a {
        self.parsed
            .iter()
            .flat_map(|f| f.plugins.iter())
            .filter(move |(id, _)| !loaded.iter().any(|l| l == *id))
            .map(|(id, t)| (id.as_str(), t))
    }
}

/// Which file to read: the flag, the variable, else the default location.
fn choose_file(
    cli: &CommandLine,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<FileChoice, ConfigError> {
    let (path, chosen_by) = if let Some(p) = &cli.config {
        (
            Some(paths::absolute(p)?),
            Source::CommandLine { flag: "--config" },
        )
    } else if let Some(v) = env(CONFIG_ENV) {
        (
            Some(paths::absolute(Path::new(&v))?),
            Source::Environment { var: CONFIG_ENV },
        )
    } else {
        let current = paths::config_base_with(env).map(|b| b.join(FILE_NAME));
        let old = paths::platform_base_with(env).map(|b| b.join(FILE_NAME));
        match (current, old) {
            (Some(current), Some(old)) if current != old && !current.exists() && old.exists() => {
                return Ok(FileChoice {
                    path: Some(old),
                    chosen_by: Source::Default,
                    present: true,
                    move_to: Some(current),
                });
            }
            (current, _) => (current, Source::Default),
        }
    };
    let present = path.as_ref().is_some_and(|p| p.exists());
    Ok(FileChoice {
        path,
        chosen_by,
        present,
        move_to: None,
    })
}

/// Chooses and parses the file. A named file must be readable; the
/// default one may be missing.
fn read_file(
    cli: &CommandLine,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(FileChoice, Option<ConfigFile>), ConfigError> {
    let choice = choose_file(cli, env)?;
    let Some(path) = &choice.path else {
        return Ok((choice, None));
    };
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound && choice.chosen_by == Source::Default =>
        {
            return Ok((choice, None));
        }
        Err(error) => {
            return Err(ConfigError::Read {
                path: path.clone(),
                chosen_by: choice.chosen_by.clone(),
                error,
            });
        }
    };
    let parsed = ConfigFile::parse(path, &text)?;
    Ok((choice, Some(parsed)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| map.get(k).cloned()
    }

    #[test]
    fn command_line_then_environment_then_file_then_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("c.toml");
        std::fs::write(
            &file,
            "[host]\npluginsDir = \"p\"\ndataDir = \"d\"\nscreenshotPolicy = \"omit\"\nlogFilter = \"debug\"\n",
        )
        .expect("write");
        let home = dir.path().display().to_string();
        let env = env_of(&[
            ("HOME", &home),
            ("XDG_DATA_HOME", ""),
            (paths::DATA_DIR_ENV, "/env/data"),
        ]);
        let cli = CommandLine {
            config: Some(file.clone()),
            screenshot_policy: Some(ScreenshotPolicy::Capture),
            ..CommandLine::default()
        };
        let c = Config::load_with(&cli, &env, "info").expect("valid");
        assert_eq!(c.file.chosen_by, Source::CommandLine { flag: "--config" });
        assert_eq!(c.plugins_dir.value, dir.path().join("p"));
        assert_eq!(
            c.plugins_dir.source,
            Source::File {
                path: file.clone(),
                line: 2
            }
        );
        assert_eq!(c.data_dir.value, PathBuf::from("/env/data"));
        assert_eq!(
            c.screenshot_policy.source,
            Source::CommandLine {
                flag: "--screenshot-policy"
            }
        );
        assert_eq!(c.log_filter.value, "debug");

        let bare = Config::load_with(&CommandLine::default(), &env, "info").expect("no file");
        assert_eq!(bare.file.chosen_by, Source::Default);
        assert!(!bare.file.present);
        assert_eq!(bare.log_filter.source, Source::Default);
        assert_eq!(bare.screenshot_policy.value, ScreenshotPolicy::Capture);
    }

    #[test]
    #[cfg(not(target_os = "macos"))]
    fn the_default_file_is_in_the_config_dir_and_the_old_one_is_still_read() {
        let home = tempfile::tempdir().expect("tempdir");
        let h = home.path().display().to_string();
        let env = env_of(&[("HOME", &h)]);
        let current = home.path().join(".config/devicerail/config.toml");
        let old = home.path().join(".local/share/devicerail/config.toml");
        // Nothing anywhere: the default is the config dir, absent.
        let c = Config::load_with(&CommandLine::default(), &env, "info").expect("no file");
        assert_eq!(c.file.path.as_deref(), Some(current.as_path()));
        assert!(!c.file.present && c.file.notice().is_none());
        // Only the old file: read, with a notice naming both places.
        std::fs::create_dir_all(old.parent().expect("dir")).expect("mkdir");
        std::fs::write(&old, "[host]\nlogFilter = \"debug\"\n").expect("write");
        let c = Config::load_with(&CommandLine::default(), &env, "info").expect("old file");
        assert_eq!(c.file.path.as_deref(), Some(old.as_path()));
        assert_eq!(c.log_filter.value, "debug");
        let notice = c.file.notice().expect("a notice");
        assert!(notice.contains(&old.display().to_string()), "{notice}");
        assert!(notice.contains(&current.display().to_string()), "{notice}");
        // Both: the config dir's wins, silently.
        std::fs::create_dir_all(current.parent().expect("dir")).expect("mkdir");
        std::fs::write(&current, "[host]\nlogFilter = \"warn\"\n").expect("write");
        let c = Config::load_with(&CommandLine::default(), &env, "info").expect("new file");
        assert_eq!(c.file.path.as_deref(), Some(current.as_path()));
        assert_eq!(c.log_filter.value, "warn");
        assert!(c.file.notice().is_none());
        // XDG_CONFIG_HOME moves where it belongs (the old file is still
        // read until it is moved there).
        let xdg = home.path().join("xdg");
        let x = xdg.display().to_string();
        let c = Config::load_with(
            &CommandLine::default(),
            &env_of(&[("HOME", &h), ("XDG_CONFIG_HOME", &x)]),
            "info",
        )
        .expect("xdg");
        assert_eq!(
            c.file.move_to.as_deref(),
            Some(xdg.join("devicerail/config.toml").as_path())
        );
        std::fs::remove_file(&old).expect("rm old");
        let c = Config::load_with(
            &CommandLine::default(),
            &env_of(&[("HOME", &h), ("XDG_CONFIG_HOME", &x)]),
            "info",
        )
        .expect("xdg");
        assert_eq!(
            c.file.path.as_deref(),
            Some(xdg.join("devicerail/config.toml").as_path())
        );
        assert!(c.file.move_to.is_none());
    }

    #[test]
    fn a_named_file_must_exist_and_bad_values_are_refused() {
        let env = env_of(&[(CONFIG_ENV, "/nonexistent/devicerail.toml"), ("HOME", "/h")]);
        let e = Config::load_with(&CommandLine::default(), &env, "info").expect_err("missing");
        assert!(
            e.to_string()
                .contains("named by environment DEVICERAIL_CONFIG"),
            "{e}"
        );
        let env = env_of(&[(SCREENSHOT_POLICY_ENV, "sometimes"), ("HOME", "/h")]);
        let e = Config::load_with(&CommandLine::default(), &env, "info").expect_err("bad");
        assert!(e.to_string().contains(SCREENSHOT_POLICY_ENV), "{e}");

        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("c.toml");
        std::fs::write(&file, "[host]\n\nlogFilter = \"info,[\"\n").expect("write");
        let cli = CommandLine {
            config: Some(file),
            ..CommandLine::default()
        };
        let e = Config::load_with(&cli, &env_of(&[("HOME", "/h")]), "info").expect_err("filter");
        let ConfigError::File(e) = e else {
            panic!("expected a file error, got {e}");
        };
        assert_eq!((e.line, e.key.as_deref()), (3, Some("host.logFilter")));
    }
}
