//! `devicerail doctor`: the configuration, host checks, then every plugin
//! (loaded to inspect) with its own checks.

use std::fs;
use std::io::Write;
use std::process::ExitCode;

use devicerail_host_config::{self as config, CommandLine, Config, ConfigError};
use devicerail_host_engine::plugin_dir::{self, DeviceStatus, InspectOptions, Status};
use devicerail_host_plugin_api::{CheckStatus, DoctorCheck};
use serde_json::json;

use super::CommandError;
use super::plugins::{inspect_dir, inspectors};
use crate::args::DoctorArgs;
use crate::logging;

/// The configuration's checks: the file, every host setting with its
/// source, every plugin table.
fn config_checks(config: &Config, error: Option<&ConfigError>) -> Vec<DoctorCheck> {
    let mut checks = Vec::new();
    match error {
        Some(e) => checks.push(DoctorCheck::fail(
            "configuration file",
            format!("{e} (the checks below use the command line, the environment and defaults)"),
        )),
        None => checks.push(DoctorCheck::ok(
            "configuration file",
            config::show::file_line(config),
        )),
    }
    for line in config::show::lines(config)
        .into_iter()
        .filter(|l| l.key.starts_with("host."))
    {
        checks.push(DoctorCheck::ok(
            format!("setting {}", line.key),
            format!("{} ({})", line.value, line.source),
        ));
    }
    checks
}

/// Every plugin table of the file: unusable (that plugin is refused), for
/// no installed plugin (a typo?), or fine.
fn table_checks(config: &Config, installed: &[String]) -> Vec<DoctorCheck> {
    let mut checks = Vec::new();
    let Some(file) = &config.parsed else {
        return checks;
    };
    for (id, table) in &file.plugins {
        let name = format!("settings plugins.{id}");
        checks.push(match &table.settings {
            Err(e) => DoctorCheck::fail(
                name,
                format!("{e}; plugin {id:?} is refused, the others load"),
            ),
            Ok(_) if !installed.iter().any(|i| i == id) => DoctorCheck::warn(
                name,
                format!(
                    "no installed plugin has the id {id:?} ({}:{})",
                    file.path.display(),
                    table.line
                ),
            ),
            Ok(settings) => DoctorCheck::ok(
                name,
                format!(
                    "{} setting(s) at {}:{}",
                    settings.len(),
                    file.path.display(),
                    table.line
                ),
            ),
        });
    }
    checks
}

/// `doctor`: the configuration, host checks, then every plugin (loaded to
/// inspect) with its own checks. `config` is the configuration, or why the
/// file cannot be used together with the configuration without it.
/// Returns whether nothing failed.
pub(crate) fn doctor(
    config: Result<Config, (ConfigError, Config)>,
    as_json: bool,
) -> Result<bool, CommandError> {
    let mut checks: Vec<(String, DoctorCheck)> = Vec::new();
    let host = |c| ("host".to_owned(), c);
    let (config, error) = match config {
        Ok(c) => (c, None),
        Err((e, c)) => (c, Some(e)),
    };
    checks.extend(config_checks(&config, error.as_ref()).into_iter().map(host));
    let plugins_dir = config.plugins_dir.value.clone();
    let data_dir = config.data_dir.value.clone();
    match plugin_dir::check_dir(&plugins_dir) {
        Ok(()) => checks.push(host(DoctorCheck::ok(
            "plugins directory",
            plugins_dir.display().to_string(),
        ))),
        Err(plugin_dir::DirError::Read { .. }) => checks.push(host(DoctorCheck::warn(
            "plugins directory",
            format!(
                "{} does not exist yet (install a plugin)",
                plugins_dir.display()
            ),
        ))),
        Err(e) => checks.push(host(DoctorCheck::fail("plugins directory", e.to_string()))),
    }
    let created = if data_dir.exists() {
        Ok(())
    } else {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&data_dir)
    };
    match created.and_then(|_| {
        let probe = data_dir.join(".doctor-probe");
        fs::write(&probe, b"ok")?;
        fs::remove_file(probe)?;
        use std::os::unix::fs::PermissionsExt;
        Ok(fs::metadata(&data_dir)?.permissions().mode() & 0o777)
    }) {
        Ok(mode) if mode & 0o077 != 0 => checks.push(host(DoctorCheck::warn(
            "data directory",
            format!(
                "{} is writable but open to other users (mode {mode:o}); the host makes it private (0700) when it starts",
                data_dir.display()
            ),
        ))),
        Ok(_) => checks.push(host(DoctorCheck::ok(
            "data directory",
            format!("{} is writable and private", data_dir.display()),
        ))),
        Err(e) => checks.push(host(DoctorCheck::fail(
            "data directory",
            format!("{}: {e}", data_dir.display()),
        ))),
    }
    // A directory-level error was already reported by the check above.
    // Each plugin is inspected in its own short-lived worker: one that
    // crashes while loading is a failed check, not the end of doctor.
    let files = match inspect_dir(&plugins_dir, |o| o.with_devices().with_doctor(), &config) {
        Ok(files) => files,
        Err(CommandError::Dir(_)) => Vec::new(),
        Err(e) => {
            checks.push(host(DoctorCheck::fail("plugins", e.to_string())));
            Vec::new()
        }
    };
    let dir_ok = plugin_dir::check_dir(&plugins_dir).is_ok();
    if files.is_empty() && dir_ok {
        checks.push(host(DoctorCheck::warn(
            "plugins",
            plugin_dir::shipped::no_plugins_line(&plugins_dir),
        )));
    }
    for f in &files {
        let name = f
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match (&f.status, &f.manifest) {
            (Status::Loaded, Some(m)) => {
                let own = f.doctor.clone();
                if let Some(why) = cannot_apply(&own) {
                    checks.push(host(DoctorCheck::skip(
                        format!("plugin {}", m.id),
                        format!("{name} loaded, but cannot work on this host: {why}"),
                    )));
                    checks.extend(own.into_iter().map(|c| (m.id.clone(), c)));
                    continue;
                }
                checks.push(host(match &f.device_status {
                    DeviceStatus::Failed(reason) => DoctorCheck::warn(
                        format!("plugin {}", m.id),
                        format!(
                            "{name} loaded; devices unavailable: {reason} (isolation {})",
                            f.isolation
                        ),
                    ),
                    _ => DoctorCheck::ok(
                        format!("plugin {}", m.id),
                        format!(
                            "{name} loaded, {} device(s), isolation {}",
                            f.devices.len(),
                            f.isolation
                        ),
                    ),
                }));
                checks.extend(own.into_iter().map(|c| (m.id.clone(), c)));
            }
            (Status::Refused(reason), _) => checks.push(host(DoctorCheck::fail(
                format!("plugin file {name}"),
                reason.clone(),
            ))),
            _ => {}
        }
    }
    let installed: Vec<String> = files
        .iter()
        .filter_map(|f| f.manifest.as_ref().map(|m| m.id.clone()))
        .collect();
    checks.extend(table_checks(&config, &installed).into_iter().map(host));
    checks.extend(not_installed(&config, &installed).into_iter().map(host));
    let ok = !checks.iter().any(|(_, c)| c.status == CheckStatus::Fail);
    let mut out = std::io::stdout().lock();
    if as_json {
        let doc: Vec<_> = checks
            .iter()
            .map(|(source, c)| json!({ "source": source, "name": c.name, "status": c.status, "detail": c.detail }))
            .collect();
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&json!({ "ok": ok, "checks": doc })).unwrap_or_default()
        );
    } else {
        for (source, c) in &checks {
            let mark = match c.status {
                CheckStatus::Ok => "ok  ",
                CheckStatus::Warn => "warn",
                CheckStatus::Fail => "FAIL",
                CheckStatus::Skip => "skip",
            };
            let _ = writeln!(out, "[{mark}] {source}: {}: {}", c.name, c.detail);
        }
    }
    Ok(ok)
}

/// Why a plugin cannot work on this host, when every one of its own
/// checks says it does not apply.
fn cannot_apply(own: &[DoctorCheck]) -> Option<String> {
    (!own.is_empty() && own.iter().all(|c| c.status == CheckStatus::Skip)).then(|| {
        own.iter()
            .map(|c| c.detail.as_str())
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// One line per plugin shipped with this `devicerail` but not installed:
/// what it would need, never a failure (nobody asked for it yet).
fn not_installed(config: &Config, installed: &[String]) -> Vec<DoctorCheck> {
    let (_, shipped) = plugin_dir::shipped::shipped();
    let missing: Vec<_> = shipped
        .iter()
        .filter(|s| !installed.contains(&s.name))
        .collect();
    if missing.is_empty() {
        return Vec::new();
    }
    // Each shipped library is inspected in its own short-lived worker,
    // never in this process.
    let workers = inspectors(config);
    let mut out = Vec::new();
    for s in missing {
        let name = format!("plugin {} (not installed)", s.name);
        let candidate = match &workers {
            Ok(w) => plugin_dir::inspect(
                &s.file,
                InspectOptions::manifest(config.parsed.as_ref(), w).with_doctor(),
            ),
            Err(e) => {
                out.push(DoctorCheck::skip(name, format!("shipped, but {e}")));
                continue;
            }
        };
        let detail = match &candidate.status {
            Status::Loaded => match cannot_apply(&candidate.doctor) {
                Some(why) => why,
                None => format!("available: devicerail plugins install {}", s.name),
            },
            Status::Refused(reason) => format!("shipped, but refused: {reason}"),
        };
        out.push(DoctorCheck::skip(name, detail));
    }
    out
}

/// Runs `doctor`: exits 0 when no check failed, 1 otherwise.
pub(crate) fn run(a: DoctorArgs, mut line: CommandLine) -> ExitCode {
    a.dirs.apply(&mut line);
    // A broken file is reported as a check; the rest still runs.
    let config = match Config::load(&line, "warn") {
        Ok(c) => Ok(c),
        Err(e) => match Config::without_file(&line, &config::process_env, "warn") {
            Ok(c) => Err((e, c)),
            Err(e2) => return logging::exit("doctor", Err::<(), ConfigError>(e2)),
        },
    };
    let filter = match &config {
        Ok(c) | Err((_, c)) => c.log_filter.value.clone(),
    };
    logging::init(&filter);
    match doctor(config, a.json) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("devicerail doctor: {e}");
            ExitCode::FAILURE
        }
    }
}
