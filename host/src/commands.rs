//! `devicerail plugins list|install|remove`, `devicerail config show`,
//! `devicerail doctor`, `devicerail report` and `devicerail bundle
//! export|validate` (the last two only resolve paths and print;
//! [`crate::report`] and [`crate::bundle`] do the work). Plugin commands
//! load plugins only to inspect them: with their settings from the
//! configuration file, but starting no external server
//! (`LoadPurpose::Inspect`); `install` does not list devices, and `list`
//! shows a listing failure as the plugin's device status.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use devicerail_plugin_api::{CheckStatus, DoctorCheck, Driver, library_file_name};
use serde::Serialize;
use serde_json::json;

use crate::config::{self, Config, ConfigError};
use crate::paths;
use crate::plugin_dir::{self, DeviceStatus, Listing, LoadOptions, PluginFile, Status};

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Paths(#[from] paths::PathError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Dir(#[from] plugin_dir::DirError),
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    #[error(transparent)]
    Bundle(#[from] crate::bundle::BundleError),
    #[error("{0:?} is neither a session id nor a bundle file")]
    BadSource(String),
    #[error("name a session id, a bundle file or --last")]
    NoSource,
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> CommandError {
    let path = path.to_path_buf();
    move |source| CommandError::Io { what, path, source }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedPlugin {
    file: String,
    status: &'static str,
    reason: Option<String>,
    id: Option<String>,
    version: Option<String>,
    description: Option<String>,
    devices: Vec<devicerail_protocol::DeviceInfo>,
    /// `listed`, `notListed` or `failed`.
    device_status: &'static str,
    /// Why listing failed.
    devices_error: Option<String>,
    /// How `serve` runs the plugin: `process` (a supervised worker) or
    /// `inline` (in the host process).
    isolation: &'static str,
}

fn listed(f: &PluginFile) -> ListedPlugin {
    let (status, reason) = match &f.status {
        Status::Loaded => ("loaded", None),
        Status::Refused(r) => ("refused", Some(r.clone())),
    };
    ListedPlugin {
        file: f
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        status,
        reason,
        id: f.manifest.as_ref().map(|m| m.id.clone()),
        version: f.manifest.as_ref().map(|m| m.version.clone()),
        description: f.manifest.as_ref().map(|m| m.description.clone()),
        devices: f.devices.clone(),
        device_status: match &f.device_status {
            DeviceStatus::Listed => "listed",
            DeviceStatus::NotListed => "notListed",
            DeviceStatus::Failed(_) => "failed",
        },
        devices_error: match &f.device_status {
            DeviceStatus::Failed(reason) => Some(reason.clone()),
            _ => None,
        },
        isolation: f.isolation.as_str(),
    }
}

/// The plugins of `dir`, loaded to be inspected.
fn inspect(dir: &Path, config: &Config, listing: Listing) -> Result<Vec<PluginFile>, CommandError> {
    Ok(plugin_dir::scan(
        dir,
        LoadOptions::inspect(config.parsed.as_ref(), listing),
    )?)
}

/// `plugins list`.
pub fn list(config: &Config, as_json: bool) -> Result<(), CommandError> {
    let dir = config.plugins_dir.value.clone();
    let files = inspect(&dir, config, Listing::Report)?;
    let plugins: Vec<ListedPlugin> = files.iter().map(listed).collect();
    let mut out = std::io::stdout().lock();
    if as_json {
        let doc = json!({ "pluginsDir": dir, "plugins": plugins });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
        return Ok(());
    }
    let _ = writeln!(out, "plugins directory: {}", dir.display());
    if plugins.is_empty() {
        let _ = writeln!(out, "no plugins installed");
    }
    for p in &plugins {
        match &p.reason {
            None => {
                let devices: Vec<&str> = p.devices.iter().map(|d| d.id.as_str()).collect();
                let _ = writeln!(
                    out,
                    "{:<14} {:<8} loaded   {}  isolation: {}  devices: {}",
                    p.id.as_deref().unwrap_or("?"),
                    p.version.as_deref().unwrap_or("?"),
                    p.file,
                    p.isolation,
                    match (&p.devices_error, devices.is_empty()) {
                        (Some(e), _) => format!("unavailable ({e})"),
                        (None, true) => "none".to_owned(),
                        (None, false) => devices.join(", "),
                    }
                );
            }
            Some(reason) => {
                let _ = writeln!(
                    out,
                    "{:<14} {:<8} refused  {}  reason: {reason}",
                    p.id.as_deref().unwrap_or("-"),
                    p.version.as_deref().unwrap_or("-"),
                    p.file
                );
            }
        }
    }
    Ok(())
}

/// `plugins install`: loads the file first (layout, ABI, manifest, init with
/// its settings, to inspect: no devices listed, no server started), then
/// copies it atomically as `lib devicerail_plugin_<id>` into the plugins
/// directory.
pub fn install(file: &Path, config: &Config, force: bool) -> Result<PathBuf, CommandError> {
    let dir = config.plugins_dir.value.clone();
    let file = paths::absolute(file)?;
    let candidate = plugin_dir::load_file(
        &file,
        LoadOptions::inspect(config.parsed.as_ref(), Listing::Skip),
    );
    let manifest = match (&candidate.status, &candidate.manifest) {
        (Status::Loaded, Some(m)) => m.clone(),
        (Status::Refused(reason), _) => {
            return Err(CommandError::Refused(format!(
                "{} is not an installable plugin: {reason}",
                file.display()
            )));
        }
        (Status::Loaded, None) => {
            return Err(CommandError::Refused("the plugin has no manifest".into()));
        }
    };
    if dir.exists() {
        // Never loosen or tighten a directory we did not create; refuse one
        // that others could write instead.
        plugin_dir::check_dir(&dir)?;
    } else {
        fs::create_dir_all(&dir).map_err(io("cannot create", &dir))?;
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755))
            .map_err(io("cannot set permissions of", &dir))?;
    }
    let target = dir.join(library_file_name(&manifest.id));
    // Files already providing this id (under any name), or at the target.
    let existing: Vec<PathBuf> = inspect(&dir, config, Listing::Skip)?
        .into_iter()
        .filter(|f| f.manifest.as_ref().is_some_and(|m| m.id == manifest.id) || f.file == target)
        .map(|f| f.file)
        .collect();
    if let (false, Some(first)) = (force, existing.first()) {
        return Err(CommandError::Refused(format!(
            "plugin {:?} is already installed as {} (use --force to replace it)",
            manifest.id,
            first.display()
        )));
    }
    let tmp = dir.join(format!(".install-{}.tmp", uuid::Uuid::new_v4().simple()));
    let copy = || -> std::io::Result<()> {
        fs::copy(&file, &tmp)?;
        fs::set_permissions(&tmp, fs::Permissions::from_mode(0o755))?;
        fs::File::open(&tmp)?.sync_all()?;
        fs::rename(&tmp, &target)?;
        fs::File::open(&dir)?.sync_all()
    };
    if let Err(e) = copy() {
        let _ = fs::remove_file(&tmp);
        return Err(CommandError::Io {
            what: "cannot install into",
            path: dir,
            source: e,
        });
    }
    // --force: the new file replaces every other file with the same id, so
    // the scan cannot keep serving the old one.
    for old in existing.iter().filter(|f| **f != target) {
        fs::remove_file(old).map_err(io("cannot remove the replaced", old))?;
    }
    Ok(target)
}

/// `plugins remove`: deletes every file whose plugin id is `id` (or that
/// carries the conventional file name of `id`).
pub fn remove(id: &str, config: &Config) -> Result<Vec<PathBuf>, CommandError> {
    let dir = config.plugins_dir.value.clone();
    let conventional = dir.join(library_file_name(id));
    let mut removed = Vec::new();
    for f in inspect(&dir, config, Listing::Skip)? {
        if f.manifest.as_ref().is_some_and(|m| m.id == id) || f.file == conventional {
            fs::remove_file(&f.file).map_err(io("cannot remove", &f.file))?;
            removed.push(f.file);
        }
    }
    if removed.is_empty() {
        return Err(CommandError::Refused(format!(
            "no plugin {id:?} is installed in {}",
            dir.display()
        )));
    }
    Ok(removed)
}

/// `config show`.
pub fn config_show(config: &Config, as_json: bool) {
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&config::show::json(config)).unwrap_or_default()
        );
    } else {
        let _ = write!(out, "{}", config::show::text(config));
    }
}

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
pub fn doctor(
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
    match fs::create_dir_all(&data_dir).and_then(|_| {
        let probe = data_dir.join(".doctor-probe");
        fs::write(&probe, b"ok")?;
        fs::remove_file(probe)
    }) {
        Ok(()) => checks.push(host(DoctorCheck::ok(
            "data directory",
            format!("{} is writable", data_dir.display()),
        ))),
        Err(e) => checks.push(host(DoctorCheck::fail(
            "data directory",
            format!("{}: {e}", data_dir.display()),
        ))),
    }
    // A directory-level error was already reported by the check above.
    let files = inspect(&plugins_dir, &config, Listing::Report).unwrap_or_default();
    let dir_ok = plugin_dir::check_dir(&plugins_dir).is_ok();
    if files.is_empty() && dir_ok {
        checks.push(host(DoctorCheck::warn(
            "plugins",
            "no plugins are installed; the host will serve no devices",
        )));
    }
    for f in &files {
        let name = f
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match (&f.status, &f.plugin) {
            (Status::Loaded, Some(p)) => {
                checks.push(host(match &f.device_status {
                    DeviceStatus::Failed(reason) => DoctorCheck::warn(
                        format!("plugin {}", p.id()),
                        format!(
                            "{name} loaded; devices unavailable: {reason} (isolation {})",
                            f.isolation
                        ),
                    ),
                    _ => DoctorCheck::ok(
                        format!("plugin {}", p.id()),
                        format!(
                            "{name} loaded, {} device(s), isolation {}",
                            f.devices.len(),
                            f.isolation
                        ),
                    ),
                }));
                for c in p.doctor() {
                    checks.push((p.id().to_owned(), c));
                }
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
            };
            let _ = writeln!(out, "[{mark}] {source}: {}: {}", c.name, c.detail);
        }
    }
    Ok(ok)
}

/// Human-readable byte count.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// What `report` or `bundle export` names: a session id, a bundle file,
/// or (`None`) the last session.
fn session_or_bundle(
    source: Option<&str>,
    last: bool,
    data_dir: Option<&Path>,
) -> Result<crate::report::Source, CommandError> {
    let data_dir = || paths::data_dir(data_dir);
    match (source, last) {
        (None, false) => Err(CommandError::NoSource),
        (None, true) => Ok(crate::report::Source::Store {
            data_dir: data_dir()?,
            session: None,
        }),
        (Some(s), _) => {
            if let Ok(id) = s.parse::<devicerail_protocol::SessionId>() {
                return Ok(crate::report::Source::Store {
                    data_dir: data_dir()?,
                    session: Some(id),
                });
            }
            let path = Path::new(s);
            if path.is_file() {
                Ok(crate::report::Source::Bundle(path.to_path_buf()))
            } else {
                Err(CommandError::BadSource(s.to_owned()))
            }
        }
    }
}

/// `report [SESSION_ID | BUNDLE] [--last] [--out FILE]`.
pub fn report(
    source: Option<&str>,
    last: bool,
    out: Option<&Path>,
    data_dir: Option<&Path>,
) -> Result<(), CommandError> {
    let source = session_or_bundle(source, last, data_dir)?;
    let started = std::time::Instant::now();
    let data = crate::report::load(&source)?;
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("devicerail-report-{}.html", data.session.id)));
    let w = crate::report::write(&data, &out)?;
    println!(
        "wrote {} ({}): session {}, {} events, {} screenshots, in {} ms",
        out.display(),
        human_bytes(w.bytes),
        w.session,
        w.events,
        w.screenshots,
        started.elapsed().as_millis()
    );
    Ok(())
}

/// `bundle export [SESSION_ID] [--last] --out FILE`.
pub fn bundle_export(
    session: Option<&str>,
    last: bool,
    out: &Path,
    data_dir: Option<&Path>,
) -> Result<(), CommandError> {
    let session = match (session, last) {
        (None, false) => return Err(CommandError::NoSource),
        (None, true) => None,
        (Some(s), _) => Some(
            s.parse::<devicerail_protocol::SessionId>()
                .map_err(|_| CommandError::BadSource(s.to_owned()))?,
        ),
    };
    let e = crate::bundle::export(&paths::data_dir(data_dir)?, session, out)?;
    println!(
        "wrote {} ({}): session {}, {} events, {} blobs",
        out.display(),
        human_bytes(e.bytes),
        e.session.id,
        e.events,
        e.blobs
    );
    Ok(())
}

/// `bundle validate FILE`.
pub fn bundle_validate(file: &Path) -> Result<(), CommandError> {
    let started = std::time::Instant::now();
    let data = crate::bundle::validate(file)?;
    println!(
        "valid: session {}, {} events (sequences 1..{} contiguous), {} blobs, every digest and reference checked, in {} ms",
        data.session.id,
        data.events.len(),
        data.events.len(),
        data.blobs.len(),
        started.elapsed().as_millis()
    );
    Ok(())
}
