//! `devicerail config show [--json]`: the effective configuration, each
//! value with where it came from. `doctor` prints the same lines as checks.
//! It only formats a loaded [`Config`]; it never reads the
//! environment or a file itself.

use serde_json::{Value, json};

use super::{Config, Source};

/// One displayed setting: its key, its value as text and its source.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// `host.dataDir`, `plugins.android.adbServer`.
    pub key: String,
    /// The value (paths and words as they are, other values as JSON).
    pub value: String,
    /// Where it came from.
    pub source: Source,
}

/// Every host setting, then every plugin setting of the file.
pub fn lines(config: &Config) -> Vec<Line> {
    let mut out = vec![
        Line {
            key: "host.pluginsDir".into(),
            value: config.plugins_dir.value.display().to_string(),
            source: config.plugins_dir.source.clone(),
        },
        Line {
            key: "host.dataDir".into(),
            value: config.data_dir.value.display().to_string(),
            source: config.data_dir.source.clone(),
        },
        Line {
            key: "host.screenshotPolicy".into(),
            value: policy_name(config).into(),
            source: config.screenshot_policy.source.clone(),
        },
        Line {
            key: "host.logFilter".into(),
            value: config.log_filter.value.clone(),
            source: config.log_filter.source.clone(),
        },
        Line {
            key: "host.afterActionTree".into(),
            value: config.after_action_tree.value.to_string(),
            source: config.after_action_tree.source.clone(),
        },
    ];
    if let Some(file) = &config.parsed {
        for (id, table) in &file.plugins {
            let Ok(settings) = &table.settings else {
                continue;
            };
            if let Some(isolation) = table.isolation {
                let path = format!("plugins.{id}.{}", super::file::ISOLATION_KEY);
                out.push(Line {
                    source: Source::File {
                        path: file.path.clone(),
                        line: file.line_of(&path).unwrap_or(table.line),
                    },
                    key: path,
                    value: isolation.as_str().into(),
                });
            }
            for (name, value) in &table.env {
                let path = format!("plugins.{id}.{}.{name}", super::file::ENV_KEY);
                out.push(Line {
                    source: Source::File {
                        path: file.path.clone(),
                        line: file.line_of(&path).unwrap_or(table.line),
                    },
                    key: path,
                    value: Value::String(value.clone()).to_string(),
                });
            }
            for (key, value) in settings {
                let path = format!("plugins.{id}.{key}");
                out.push(Line {
                    source: Source::File {
                        path: file.path.clone(),
                        line: file.line_of(&path).unwrap_or(table.line),
                    },
                    key: path,
                    value: value.to_string(),
                });
            }
        }
    }
    out
}

fn policy_name(config: &Config) -> &'static str {
    config.screenshot_policy.value.as_str()
}

/// The file line of `config show`.
pub fn file_line(config: &Config) -> String {
    let how = match &config.file.chosen_by {
        Source::Default => "default location".to_owned(),
        other => format!("named by {other}"),
    };
    match (&config.file.path, config.file.present) {
        (Some(p), true) => format!("{} ({how})", p.display()),
        (Some(p), false) => format!("{} ({how}; not present, so none is read)", p.display()),
        (None, _) => "none (no home directory for the default location)".into(),
    }
}

/// The text form.
pub fn text(config: &Config) -> String {
    let mut out = format!("configuration file: {}\n", file_line(config));
    let lines = lines(config);
    let width = lines.iter().map(|l| l.key.len()).max().unwrap_or(0);
    for l in &lines {
        out.push_str(&format!("{:<width$}  {}  ({})\n", l.key, l.value, l.source));
    }
    if let Some(file) = &config.parsed {
        for (id, table) in &file.plugins {
            if let Err(e) = &table.settings {
                out.push_str(&format!(
                    "plugins.{id}: refused, the plugin will not load: {e}\n"
                ));
            }
        }
    }
    out.push_str(
        "plugins without an isolation key run in a supervised worker process (isolation = \"process\")\n",
    );
    out.push_str(
        "plugins read their own environment variables under their settings (see each plugin's README); a plugin's worker gets only the allow-listed variables and its env table, never DEVICERAIL_SECRET_* or DEVICERAIL_LEASE_TOKEN\n",
    );
    out
}

/// The JSON form.
pub fn json(config: &Config) -> Value {
    let host = |l: &Line| json!({ "value": l.value, "source": l.source });
    let all = lines(config);
    let mut host_doc = serde_json::Map::new();
    for l in all.iter().filter(|l| l.key.starts_with("host.")) {
        host_doc.insert(l.key["host.".len()..].to_owned(), host(l));
    }
    let mut plugins = serde_json::Map::new();
    if let Some(file) = &config.parsed {
        for (id, table) in &file.plugins {
            let doc = match &table.settings {
                Ok(settings) => {
                    let members: serde_json::Map<String, Value> = settings
                        .iter()
                        .map(|(key, value)| {
                            let path = format!("plugins.{id}.{key}");
                            let source = Source::File {
                                path: file.path.clone(),
                                line: file.line_of(&path).unwrap_or(table.line),
                            };
                            (key.clone(), json!({ "value": value, "source": source }))
                        })
                        .collect();
                    let isolation = table.isolation.unwrap_or_default();
                    let source = match table.isolation {
                        Some(_) => {
                            let path = format!("plugins.{id}.{}", super::file::ISOLATION_KEY);
                            Source::File {
                                path: file.path.clone(),
                                line: file.line_of(&path).unwrap_or(table.line),
                            }
                        }
                        None => Source::Default,
                    };
                    let env: serde_json::Map<String, Value> = table
                        .env
                        .iter()
                        .map(|(name, value)| {
                            let path = format!("plugins.{id}.{}.{name}", super::file::ENV_KEY);
                            let source = Source::File {
                                path: file.path.clone(),
                                line: file.line_of(&path).unwrap_or(table.line),
                            };
                            (name.clone(), json!({ "value": value, "source": source }))
                        })
                        .collect();
                    json!({
                        "line": table.line,
                        "isolation": { "value": isolation, "source": source },
                        "env": env,
                        "settings": members,
                        "error": null,
                    })
                }
                Err(e) => json!({ "line": table.line, "settings": null, "error": e.to_string() }),
            };
            plugins.insert(id.clone(), doc);
        }
    }
    json!({
        "file": config.file,
        "host": host_doc,
        "plugins": plugins,
        "defaultIsolation": super::Isolation::default(),
    })
}
