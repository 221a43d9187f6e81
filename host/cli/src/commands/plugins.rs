//! `devicerail plugins list|install|remove|new`. Installing a driver
//! crate's directory builds and checks it first (`plugin_build`), then
//! installs the library like any file; `new` is `plugin_new`'s.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use devicerail_host_config::{CommandLine, Config, paths};
use devicerail_host_engine::plugin_dir::shipped::{Shipped, install_hint, shipped};
use devicerail_host_engine::plugin_dir::{
    self, DeviceStatus, InspectOptions, PluginFile, Status, Workers,
};
use devicerail_host_plugin_api::library_file_name;
use serde::Serialize;
use serde_json::json;

use super::{CommandError, io, plugin_build, plugin_new};
use crate::args::PluginsCommand;
use crate::logging;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ListedPlugin {
    file: String,
    status: &'static str,
    reason: Option<String>,
    id: Option<String>,
    version: Option<String>,
    description: Option<String>,
    devices: Vec<devicerail_host_protocol::DeviceInfo>,
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

/// How plugins are inspected: each in a short-lived worker of this very
/// binary, never in this process.
pub(crate) fn inspectors(config: &Config) -> Result<Workers, CommandError> {
    Workers::current_exe(&config.log_filter.value).map_err(CommandError::Inspector)
}

/// The plugins of `dir`, inspected as `how` says (each in its own worker).
pub(crate) fn inspect_dir(
    dir: &Path,
    how: impl FnOnce(InspectOptions<'_>) -> InspectOptions<'_>,
    config: &Config,
) -> Result<Vec<PluginFile>, CommandError> {
    let workers = inspectors(config)?;
    let opts = how(InspectOptions::manifest(config.parsed.as_ref(), &workers));
    Ok(plugin_dir::inspect_dir(dir, opts)?)
}

/// `plugins list`.
pub(crate) fn list(config: &Config, as_json: bool) -> Result<(), CommandError> {
    let dir = config.plugins_dir.value.clone();
    let files = inspect_dir(&dir, |o| o.with_devices(), config)?;
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
        let _ = writeln!(
            out,
            "no plugins installed; install drivers with: {}",
            install_hint()
        );
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

/// `plugins install`: inspects the file first in a short-lived worker
/// (layout, ABI, manifest, init with its settings, to inspect: no devices
/// listed, no server started), then copies it atomically as
/// `lib devicerail_plugin_<id>` into the plugins directory.
pub(crate) fn install(file: &Path, config: &Config, force: bool) -> Result<PathBuf, CommandError> {
    let dir = config.plugins_dir.value.clone();
    let file = paths::absolute(file)?;
    let workers = inspectors(config)?;
    let candidate = plugin_dir::inspect(
        &file,
        InspectOptions::init(config.parsed.as_ref(), &workers),
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
    let existing: Vec<PathBuf> = inspect_dir(&dir, |o| o, config)?
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
pub(crate) fn remove(id: &str, config: &Config) -> Result<Vec<PathBuf>, CommandError> {
    let dir = config.plugins_dir.value.clone();
    let conventional = dir.join(library_file_name(id));
    let mut removed = Vec::new();
    for f in inspect_dir(&dir, |o| o, config)? {
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

/// What one `plugins install` argument names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// A library file (given, or shipped under a name).
    File(PathBuf),
    /// A driver crate's directory, built and checked before it installs.
    Crate(PathBuf),
}

/// What one `plugins install` argument names: an existing file, a driver
/// crate's directory, else a shipped plugin's name.
fn resolve(
    arg: &str,
    shipped: &[Shipped],
    shipped_dir: Option<&Path>,
) -> Result<Source, CommandError> {
    let path = Path::new(arg);
    if path.is_file() {
        return Ok(Source::File(path.to_path_buf()));
    }
    if plugin_build::is_crate_dir(path) {
        return Ok(Source::Crate(path.to_path_buf()));
    }
    if let Some(a) = shipped.iter().find(|a| a.name == arg) {
        return Ok(Source::File(a.file.clone()));
    }
    let names: Vec<&str> = shipped.iter().map(|a| a.name.as_str()).collect();
    Err(CommandError::Refused(match (path.exists(), shipped_dir) {
        (true, _) if path.is_dir() => format!(
            "{arg} is a directory without Cargo.toml: give a plugin library file or a driver crate's directory"
        ),
        (true, _) => format!("{arg} is not a plugin library file"),
        (false, Some(dir)) => format!(
            "{arg:?} is neither a file nor a plugin shipped with devicerail (shipped in {}: {})",
            dir.display(),
            if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            }
        ),
        (false, None) => format!(
            "{arg:?} is not a file, and no plugins ship beside this devicerail binary; give the path of a plugin library"
        ),
    }))
}

/// `plugins install NAME|FILE|CRATE_DIR…`: every argument is resolved
/// first (a typo installs nothing), then each is installed in turn; a
/// crate is built and must pass its conformance suite first.
pub(crate) fn install_all(
    args: &[String],
    config: &Config,
    force: bool,
) -> Result<Vec<PathBuf>, CommandError> {
    let (dir, shipped) = shipped();
    let sources = args
        .iter()
        .map(|a| resolve(a, &shipped, dir.as_deref()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut installed = Vec::new();
    for source in sources {
        let file = match source {
            Source::File(file) => file,
            Source::Crate(dir) => plugin_build::build_and_check(&dir, config)?,
        };
        let target = install(&file, config, force)?;
        println!("installed {}", target.display());
        installed.push(target);
    }
    Ok(installed)
}

/// `plugins list --available`.
fn list_available(as_json: bool) -> Result<(), CommandError> {
    let (dir, shipped) = shipped();
    let mut out = std::io::stdout().lock();
    if as_json {
        let doc = json!({ "shippedDir": dir, "available": shipped });
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
        return Ok(());
    }
    match dir {
        None => {
            let _ = writeln!(
                out,
                "no plugins ship beside this devicerail binary; install a plugin library by path"
            );
        }
        Some(dir) => {
            let _ = writeln!(out, "plugins shipped in {}:", dir.display());
            for a in &shipped {
                let _ = writeln!(out, "  {:<14} {}", a.name, a.file.display());
            }
            let _ = writeln!(out, "install with: {}", install_hint());
        }
    }
    Ok(())
}

/// `plugins new`: writes the crate, then says what to do next.
fn new_crate(
    name: &str,
    dir: Option<&Path>,
    platform: crate::args::PlatformArg,
    sdk_path: Option<&Path>,
) -> Result<(), CommandError> {
    let (dir, names) = plugin_new::create(name, dir, platform, sdk_path)?;
    let shown = dir.display();
    let (package, id) = (&names.package, &names.id);
    println!("created {package} (plugin {id}, device {id}-1) in {shown}");
    println!("next:");
    println!("  cd {shown}");
    println!("  cargo test                      # unit tests and the DeviceRail conformance suite");
    println!("  devicerail plugins install .    # release build, conformance, install");
    println!("  devicerail serve                # serves {id}-1 with the other plugins");
    Ok(())
}

/// Runs `plugins list|install|remove|new`.
pub(crate) fn run(command: PluginsCommand, mut line: CommandLine) -> ExitCode {
    // `new` reads no configuration: a broken configuration file must not
    // keep anyone from starting a driver.
    if let PluginsCommand::New {
        name,
        dir,
        platform,
        sdk_path,
    } = &command
    {
        let result = new_crate(name, dir.as_deref(), *platform, sdk_path.as_deref());
        return logging::exit("plugins new", result);
    }
    line.plugins_dir = command.plugins_dir();
    let config = match logging::configure("plugins", &line, "warn") {
        Ok(c) => c,
        Err(code) => return code,
    };
    let result = match command {
        PluginsCommand::List {
            available: true,
            json,
            ..
        } => list_available(json),
        PluginsCommand::List { json, .. } => list(&config, json),
        PluginsCommand::Install { plugins, force, .. } => {
            install_all(&plugins, &config, force).map(|_| ())
        }
        PluginsCommand::Remove { id, .. } => remove(&id, &config).map(|files| {
            files
                .iter()
                .for_each(|f| println!("removed {}", f.display()))
        }),
        PluginsCommand::New { .. } => Ok(()),
    };
    logging::exit("plugins", result)
}
