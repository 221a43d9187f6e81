//! Scanning a plugins directory: which files are candidates, which are
//! refused before they are ever opened (permissions, symlinks), and the
//! outcome of loading each one with its settings (its table of the
//! configuration file) to serve ([`scan`], [`load_file`]) or to inspect it
//! for the command line ([`inspect`], [`inspect_dir`]: then drivers start
//! no external server). A bad file, or a bad table, never stops the others.
//!
//! Every library is first opened by a worker process of this binary
//! (`crate::worker`), which reports its manifest: a library whose
//! load-time code crashes or hangs is refused with that reason and costs
//! only the worker. To serve, a plugin whose isolation is `process` (the
//! default) is then served by that same worker, supervised; the host never
//! opens its library. Only an `inline` plugin is then loaded in the host
//! itself. Inspecting never loads a library in the host.

pub mod shipped;

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use devicerail_host_plugin_api::loader::{self, LoadError};
use devicerail_host_plugin_api::{CallContext, DoctorCheck, Driver, LoadPurpose, PluginManifest};
use devicerail_host_protocol::DeviceInfo;
use serde_json::{Map, Value};

use crate::registry::Backend;
use crate::worker::environment;
use crate::worker::message::Method;
use crate::worker::{
    Backoff, InspectError, Inspection, Opening, RemoteDriver, StartError, WorkerProbe, WorkerSpec,
};
use devicerail_host_config::{ConfigFile, FileError, Isolation};

/// How long a plugin may take to list its devices while loading.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a plugin's doctor checks may take when inspected.
pub(crate) const DOCTOR_TIMEOUT: Duration = Duration::from_secs(30);

/// The outcome for one file.
#[derive(Debug, Clone)]
pub enum Status {
    /// The plugin loaded (and, if asked, listed its devices).
    Loaded,
    /// The file or plugin was refused; the text says why, for `plugins
    /// list`, `doctor` and the log.
    Refused(String),
}

/// One scanned file.
#[derive(Clone)]
pub struct PluginFile {
    /// The file as found in the plugins directory.
    pub file: PathBuf,
    /// Whether it loaded, or why not.
    pub status: Status,
    /// The manifest the library declared, once it could be read.
    pub manifest: Option<PluginManifest>,
    /// The devices it listed while loading (empty unless
    /// `device_status` is [`DeviceStatus::Listed`]).
    pub devices: Vec<DeviceInfo>,
    /// Whether its devices were listed, and how that went.
    pub device_status: DeviceStatus,
    /// The plugin's own doctor checks (when inspected with them).
    pub doctor: Vec<DoctorCheck>,
    /// The driver to serve with (serving only): the plugin's worker, or the
    /// plugin loaded in this process (`inline`).
    pub backend: Option<Backend>,
    /// How the plugin is (or would be, when serving) isolated.
    pub isolation: Isolation,
    /// Whether its worker is up, when it runs in one.
    pub worker: Option<WorkerProbe>,
}

impl std::fmt::Debug for PluginFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginFile")
            .field("file", &self.file)
            .field("status", &self.status)
            .finish()
    }
}

impl PluginFile {
    fn refused(file: PathBuf, reason: impl Into<String>) -> Self {
        Self {
            file,
            status: Status::Refused(reason.into()),
            manifest: None,
            devices: Vec::new(),
            device_status: DeviceStatus::NotListed,
            doctor: Vec::new(),
            backend: None,
            isolation: Isolation::default(),
            worker: None,
        }
    }

    /// Whether the plugin loaded (its status is [`Status::Loaded`]).
    pub fn is_loaded(&self) -> bool {
        matches!(self.status, Status::Loaded)
    }
}

/// A directory-level problem: nothing in it is loaded.
#[derive(Debug, thiserror::Error)]
pub enum DirError {
    /// The directory is writable by group or others, so anyone could
    /// plant a library in it.
    #[error(
        "plugins directory {0} is writable by group or others; refusing to load anything from it"
    )]
    Insecure(PathBuf),
    /// The directory exists but cannot be read or examined.
    #[error("cannot read plugins directory {path}: {source}")]
    Read {
        /// The plugins directory.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
}

/// Whether a file name looks like a plugin library.
pub(crate) fn is_library_name(name: &str) -> bool {
    !name.starts_with('.')
        && [".so", ".dylib", ".dll"]
            .iter()
            .any(|ext| name.ends_with(ext))
}

/// Why a candidate plugin file is refused before it is opened.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileRefusal {
    #[error("cannot stat: {0}")]
    Stat(std::io::Error),
    #[error("broken symlink: {0}")]
    BrokenSymlink(std::io::Error),
    #[error("cannot resolve the plugins directory: {0}")]
    Directory(std::io::Error),
    #[error("symlink leads outside the plugins directory (to {})", .0.display())]
    OutsideSymlink(PathBuf),
    #[error("not a regular file")]
    NotAFile,
    #[error("writable by group or others (mode {0:o})")]
    Writable(u32),
    #[error("owned by uid {owner}, not by the daemon's user ({euid}) or root")]
    ForeignOwner { owner: u32, euid: u32 },
}

/// Checks a candidate before it is opened: regular file (symlinks must
/// resolve inside `dir`), not writable by group or others, owned by this
/// user or root.
pub(crate) fn check_file(dir: &Path, file: &Path) -> Result<PathBuf, FileRefusal> {
    let link_meta = fs::symlink_metadata(file).map_err(FileRefusal::Stat)?;
    let target = if link_meta.file_type().is_symlink() {
        let target = fs::canonicalize(file).map_err(FileRefusal::BrokenSymlink)?;
        let canon_dir = fs::canonicalize(dir).map_err(FileRefusal::Directory)?;
        if !target.starts_with(&canon_dir) {
            return Err(FileRefusal::OutsideSymlink(target));
        }
        target
    } else {
        file.to_path_buf()
    };
    let meta = fs::metadata(&target).map_err(FileRefusal::Stat)?;
    if !meta.is_file() {
        return Err(FileRefusal::NotAFile);
    }
    check_owner_and_mode(&meta)?;
    Ok(target)
}

fn check_owner_and_mode(meta: &fs::Metadata) -> Result<(), FileRefusal> {
    let mode = meta.mode();
    if mode & 0o022 != 0 {
        return Err(FileRefusal::Writable(mode & 0o7777));
    }
    let euid = devicerail_host_sys::effective_uid();
    if meta.uid() != euid && meta.uid() != 0 {
        return Err(FileRefusal::ForeignOwner {
            owner: meta.uid(),
            euid,
        });
    }
    Ok(())
}

/// Checks the directory itself.
pub fn check_dir(dir: &Path) -> Result<(), DirError> {
    let meta = fs::metadata(dir).map_err(|source| DirError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    if meta.mode() & 0o022 != 0 {
        return Err(DirError::Insecure(dir.to_path_buf()));
    }
    Ok(())
}

/// The candidate files of `dir`, sorted by name. A missing directory has
/// none.
pub fn candidates(dir: &Path) -> Result<Vec<PathBuf>, DirError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(DirError::Read {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    check_dir(dir)?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(is_library_name))
        .map(|e| e.path())
        .collect();
    files.sort();
    Ok(files)
}

/// Why a plugin's devices could not be listed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ListError {
    /// No helper thread could be started.
    #[error("cannot spawn a thread: {0}")]
    Spawn(std::io::Error),
    /// The plugin answered with an error.
    #[error("listing devices failed: {0}")]
    Failed(devicerail_host_plugin_api::DriverError),
    /// The plugin did not answer in time.
    #[error("did not list its devices within {secs}s")]
    Timeout {
        /// The bound, in seconds.
        secs: u64,
    },
}

/// Lists a plugin's devices on a helper thread, bounded by `LIST_TIMEOUT`,
/// so a hanging plugin is refused instead of hanging the host.
pub(crate) fn list_devices_bounded(
    id: &str,
    plugin: &Arc<dyn Driver>,
) -> Result<Vec<DeviceInfo>, ListError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let p = plugin.clone();
    std::thread::Builder::new()
        .name(format!("list-{id}"))
        .spawn(move || {
            let ctx = CallContext::new(Some(std::time::Instant::now() + LIST_TIMEOUT));
            let _ = tx.send(p.list_devices(&ctx));
        })
        .map_err(ListError::Spawn)?;
    match rx.recv_timeout(LIST_TIMEOUT + Duration::from_secs(1)) {
        Ok(Ok(devices)) => Ok(devices),
        Ok(Err(e)) => Err(ListError::Failed(e)),
        Err(_) => Err(ListError::Timeout {
            secs: LIST_TIMEOUT.as_secs(),
        }),
    }
}

/// How a load treats the plugin's device list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// Not listed (`plugins install`: a driver installs without devices).
    Skip,
    /// Listed; a failure is the plugin's device status (`plugins list`,
    /// `doctor`).
    Report,
    /// Listed; a failure refuses the plugin (`serve`).
    Require,
}

/// What is known of a plugin's devices.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceStatus {
    /// Not asked.
    NotListed,
    /// Listed (the devices are in [`PluginFile::devices`]).
    Listed,
    /// Listing failed, with this reason.
    Failed(String),
}

/// How worker processes are started (serving only).
#[derive(Debug, Clone)]
pub struct Workers {
    /// The `devicerail` binary the workers run.
    pub exe: PathBuf,
    /// The workers' log filter.
    pub log_filter: String,
    /// Spacing of restarts.
    pub backoff: Backoff,
    /// How long past a call's deadline a silent worker is killed.
    pub grace: Duration,
    /// The serving runtime: workers' replies are read by its reactor and
    /// awaited by its tasks (see [`WorkerSpec::runtime`]).
    pub runtime: Option<tokio::runtime::Handle>,
}

/// How long past its deadline (or cancellation) a call may stay
/// unanswered before its worker is killed and restarted.
pub(crate) const WORKER_GRACE: Duration = Duration::from_secs(2);

impl Workers {
    /// Workers running this very binary, with the default back-off.
    pub fn current_exe(log_filter: &str) -> std::io::Result<Self> {
        Ok(Self {
            exe: std::env::current_exe()?,
            log_filter: log_filter.to_owned(),
            backoff: Backoff::default(),
            grace: WORKER_GRACE,
            runtime: None,
        })
    }

    /// The same, serving on `runtime`.
    #[must_use]
    pub fn on_runtime(self, runtime: tokio::runtime::Handle) -> Self {
        Self {
            runtime: Some(runtime),
            ..self
        }
    }
}

/// How to load the plugins of a directory to serve.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions<'a> {
    /// How workers are started (every library is opened by one first).
    pub workers: &'a Workers,
    /// The configuration file, whose `[plugins.<id>]` tables are the
    /// plugins' settings.
    pub config: Option<&'a ConfigFile>,
}

impl LoadOptions<'_> {
    /// Loading to serve: devices must list.
    pub fn serve<'a>(config: Option<&'a ConfigFile>, workers: &'a Workers) -> LoadOptions<'a> {
        LoadOptions { workers, config }
    }
}

/// What inspecting a plugin asks of it beyond its manifest.
#[derive(Debug, Clone, Copy)]
pub struct InspectOptions<'a> {
    /// The binary the inspecting worker runs, and its log filter.
    pub workers: &'a Workers,
    /// The configuration file (the plugins' settings and isolation).
    pub config: Option<&'a ConfigFile>,
    /// Construct the driver (to inspect) with its settings; implied by
    /// listing devices or running doctor checks.
    pub init: bool,
    /// Whether devices are listed ([`Listing::Require`] reads as
    /// [`Listing::Report`]: inspecting refuses no plugin for its devices).
    pub listing: Listing,
    /// Run the plugin's doctor checks.
    pub doctor: bool,
}

impl InspectOptions<'_> {
    /// The manifest only (the driver is not constructed).
    pub fn manifest<'a>(
        config: Option<&'a ConfigFile>,
        workers: &'a Workers,
    ) -> InspectOptions<'a> {
        InspectOptions {
            workers,
            config,
            init: false,
            listing: Listing::Skip,
            doctor: false,
        }
    }

    /// The manifest and the driver constructed with its settings
    /// (`plugins install`).
    pub fn init<'a>(config: Option<&'a ConfigFile>, workers: &'a Workers) -> InspectOptions<'a> {
        InspectOptions {
            init: true,
            ..InspectOptions::manifest(config, workers)
        }
    }

    /// Also the devices (`plugins list`).
    #[must_use]
    pub fn with_devices(self) -> Self {
        Self {
            init: true,
            listing: Listing::Report,
            ..self
        }
    }

    /// Also the plugin's doctor checks (`doctor`).
    #[must_use]
    pub fn with_doctor(self) -> Self {
        Self {
            init: true,
            doctor: true,
            ..self
        }
    }
}

/// Why a plugin's settings refused it, located in the configuration file
/// when the setting came from there.
fn init_refusal(e: &LoadError, id: &str, config: Option<&ConfigFile>) -> String {
    match (e, config) {
        (LoadError::SettingRefused { setting, .. }, Some(file))
            if file.plugins.contains_key(id) =>
        {
            let key = format!("plugins.{id}.{setting}");
            match file.nearest_line(&key) {
                Some((line, _)) => format!("{e} (at {}:{line}, key {key})", file.path.display()),
                None => e.to_string(),
            }
        }
        _ => e.to_string(),
    }
}

/// Why a worker's driver could not be constructed, as a refusal.
fn start_refusal(e: StartError, id: &str, config: Option<&ConfigFile>) -> String {
    match e {
        StartError::Init {
            message,
            setting: Some(setting),
        } => init_refusal(&LoadError::SettingRefused { setting, message }, id, config),
        // The worker's loader error, already in its words.
        StartError::Init { message, .. } => message,
        other => other.to_string(),
    }
}

/// Why a plugin's table of the configuration file refuses that plugin.
#[derive(Debug, Clone, thiserror::Error)]
#[error("bad configuration table: {0}")]
struct TableRefused(FileError);

/// What the configuration file says of one plugin: its settings, the
/// variables its `env` table adds to its worker's environment.
#[derive(Debug, Clone, Default)]
struct PluginSetup {
    settings: Map<String, Value>,
    env: Vec<(String, String)>,
}

/// The plugin's settings and `env` (its table of the configuration file)
/// and isolation, or why its table is unusable (located in the file).
fn settings_for(
    id: &str,
    config: Option<&ConfigFile>,
) -> (Result<PluginSetup, TableRefused>, Isolation) {
    let isolation = config.map(|c| c.isolation(id)).unwrap_or_default();
    let setup = match (config, config.and_then(|c| c.plugins.get(id))) {
        (Some(file), Some(table)) => match &table.settings {
            Ok(s) => table
                .env
                .iter()
                .find_map(|(name, value)| {
                    let refusal = match (environment::check_entry(name, value), isolation) {
                        (Err(e), _) => e.to_string(),
                        (Ok(()), Isolation::Inline) => "applies to a plugin's worker process; an inline plugin runs in the host and shares its environment".to_owned(),
                        (Ok(()), Isolation::Process) => return None,
                    };
                    let key = format!("plugins.{id}.env.{name}");
                    let line = file.nearest_line(&key).map(|(l, _)| l).unwrap_or(table.line);
                    Some(TableRefused(FileError {
                        path: file.path.clone(),
                        line,
                        key: Some(key),
                        message: refusal,
                    }))
                })
                .map_or_else(
                    || {
                        Ok(PluginSetup {
                            settings: s.clone(),
                            env: table.env.clone(),
                        })
                    },
                    Err,
                ),
            Err(e) => Err(TableRefused(e.clone())),
        },
        _ => Ok(PluginSetup::default()),
    };
    (setup, isolation)
}

/// Loads one file (already checked) to serve: a worker opens it and
/// reports its manifest; the plugin is then served by that worker
/// (isolation `process`) or loaded in this process (`inline`), initialized
/// with its settings from `opts.config`, and must list its devices.
pub fn load_file(file: &Path, opts: LoadOptions<'_>) -> PluginFile {
    let workers = opts.workers;
    let opening = match Opening::open(&workers.exe, file, &workers.log_filter) {
        Ok(o) => o,
        Err(e) => return PluginFile::refused(file.to_path_buf(), e.to_string()),
    };
    let manifest = opening.manifest().clone();
    let (settings, isolation) = settings_for(&manifest.id, opts.config);
    let refused = |reason: String| PluginFile {
        manifest: Some(manifest.clone()),
        isolation,
        ..PluginFile::refused(file.to_path_buf(), reason)
    };
    let PluginSetup { settings, env } = match settings {
        Ok(s) => s,
        Err(reason) => return refused(reason.to_string()),
    };
    let backend = match isolation {
        Isolation::Process => {
            let spec = WorkerSpec {
                exe: workers.exe.clone(),
                plugin_file: file.to_path_buf(),
                plugin_id: manifest.id.clone(),
                settings,
                env,
                log_filter: workers.log_filter.clone(),
                backoff: workers.backoff,
                grace: workers.grace,
                runtime: workers.runtime.clone(),
            };
            match RemoteDriver::serve(opening, spec) {
                Ok(d) => Backend::Worker(Arc::new(d)),
                Err(e) => return refused(start_refusal(e, &manifest.id, opts.config)),
            }
        }
        Isolation::Inline => {
            // The worker loaded the library without crashing; now this
            // process loads it too, as configured.
            drop(opening);
            match loader::open(file).and_then(|o| o.init(&settings, LoadPurpose::Serve)) {
                Ok(p) => Backend::Inline(Arc::new(p)),
                Err(e) => return refused(init_refusal(&e, &manifest.id, opts.config)),
            }
        }
    };
    let worker = match &backend {
        Backend::Worker(remote) => Some(remote.probe()),
        Backend::Inline(_) => None,
    };
    match list_devices_bounded(&manifest.id, &backend.driver()) {
        Ok(devices) => PluginFile {
            file: file.to_path_buf(),
            status: Status::Loaded,
            manifest: Some(manifest),
            devices,
            device_status: DeviceStatus::Listed,
            doctor: Vec::new(),
            backend: Some(backend),
            isolation,
            worker,
        },
        Err(reason) => refused(reason.to_string()),
    }
}

/// Inspects one file in a short-lived worker (the host never loads it):
/// its manifest, and as `opts` asks, its driver constructed to inspect with
/// its settings, its devices and its doctor checks. A library the loader
/// refuses, or that crashes or hangs while loading or constructing its
/// driver, is refused with that reason; a failure listing devices or
/// running doctor checks is reported, not a refusal.
pub fn inspect(file: &Path, opts: InspectOptions<'_>) -> PluginFile {
    let workers = opts.workers;
    let mut worker = match Inspection::open(&workers.exe, file, &workers.log_filter) {
        Ok(w) => w,
        Err(e) => return PluginFile::refused(file.to_path_buf(), e.to_string()),
    };
    let manifest = worker.manifest().clone();
    let (settings, isolation) = settings_for(&manifest.id, opts.config);
    let mut entry = PluginFile {
        status: Status::Loaded,
        manifest: Some(manifest.clone()),
        isolation,
        ..PluginFile::refused(file.to_path_buf(), String::new())
    };
    let setup = match settings {
        Ok(s) => s,
        Err(reason) => {
            entry.status = Status::Refused(reason.to_string());
            return entry;
        }
    };
    let listing = opts.listing != Listing::Skip;
    if !(opts.init || listing || opts.doctor) {
        return entry;
    }
    if let Err(e) = worker.init(&setup.settings, &setup.env) {
        entry.status = Status::Refused(start_refusal(e, &manifest.id, opts.config));
        return entry;
    }
    if listing {
        match worker.call::<Vec<DeviceInfo>>(Method::ListDevices, LIST_TIMEOUT) {
            Ok(devices) => {
                entry.devices = devices;
                entry.device_status = DeviceStatus::Listed;
            }
            Err(InspectError::Driver(e)) => {
                entry.device_status = DeviceStatus::Failed(ListError::Failed(e).to_string());
            }
            Err(e) => entry.device_status = DeviceStatus::Failed(e.to_string()),
        }
    }
    if opts.doctor {
        entry.doctor = match worker.call::<Vec<DoctorCheck>>(Method::Doctor, DOCTOR_TIMEOUT) {
            Ok(checks) => checks,
            Err(e) => vec![DoctorCheck::fail(
                format!("{} doctor", manifest.id),
                e.to_string(),
            )],
        };
    }
    entry
}

/// A candidate file with the path to open, or why it is refused unopened.
type Checked = (PathBuf, Result<PathBuf, FileRefusal>);

/// The checked candidates of `dir`: each file's path to open, or why it is
/// refused unopened.
fn checked_candidates(dir: &Path) -> Result<Vec<Checked>, DirError> {
    Ok(candidates(dir)?
        .into_iter()
        .map(|file| {
            let checked = check_file(dir, &file);
            (file, checked)
        })
        .collect())
}

/// Scans `dir` to serve: every candidate ends `loaded` or `refused:
/// <reason>`. Plugin ids and device ids must be unique; later files lose.
pub fn scan(dir: &Path, opts: LoadOptions<'_>) -> Result<Vec<PluginFile>, DirError> {
    let entries = checked_candidates(dir)?
        .into_iter()
        .map(|(file, checked)| match checked {
            Ok(path) => PluginFile {
                file: file.clone(),
                ..load_file(&path, opts)
            },
            Err(reason) => PluginFile::refused(file, reason.to_string()),
        })
        .collect();
    Ok(settle(entries))
}

/// Inspects every candidate of `dir` (each in its own short-lived worker,
/// all at once), as [`inspect`] does; duplicates are refused as in
/// [`scan`].
pub fn inspect_dir(dir: &Path, opts: InspectOptions<'_>) -> Result<Vec<PluginFile>, DirError> {
    let candidates = checked_candidates(dir)?;
    let entries = std::thread::scope(|scope| {
        let running: Vec<_> = candidates
            .into_iter()
            .map(|(file, checked)| match checked {
                Ok(path) => {
                    // Each worker lives and dies with the thread that
                    // started it (its parent-death signal).
                    let spawned = std::thread::Builder::new()
                        .name("inspect-plugin".into())
                        .spawn_scoped(scope, move || inspect(&path, opts));
                    (file, Ok(spawned))
                }
                Err(reason) => (file, Err(reason)),
            })
            .collect();
        running
            .into_iter()
            .map(|(file, outcome)| match outcome {
                Ok(Ok(handle)) => match handle.join() {
                    Ok(entry) => PluginFile {
                        file: file.clone(),
                        ..entry
                    },
                    Err(_) => PluginFile::refused(file, "inspecting it failed on the host side"),
                },
                Ok(Err(e)) => {
                    PluginFile::refused(file, format!("cannot start a thread to inspect it: {e}"))
                }
                Err(reason) => PluginFile::refused(file, reason.to_string()),
            })
            .collect()
    });
    Ok(settle(entries))
}

/// Refuses later duplicates (plugin id, device id) and logs each outcome.
fn settle(entries: Vec<PluginFile>) -> Vec<PluginFile> {
    let mut out = Vec::with_capacity(entries.len());
    let mut ids: HashMap<String, PathBuf> = HashMap::new();
    let mut device_owner: HashMap<String, String> = HashMap::new();
    for mut entry in entries {
        let file = entry.file.clone();
        if let (Status::Loaded, Some(m)) = (&entry.status, &entry.manifest) {
            if let Some(first) = ids.get(&m.id) {
                entry = PluginFile {
                    manifest: entry.manifest.clone(),
                    ..PluginFile::refused(
                        file.clone(),
                        format!(
                            "duplicate plugin id {:?} (already loaded from {})",
                            m.id,
                            first.display()
                        ),
                    )
                };
            } else if let Some((dev, owner)) = entry.devices.iter().find_map(|d| {
                device_owner
                    .get(d.id.as_str())
                    .map(|o| (d.id.clone(), o.clone()))
            }) {
                entry = PluginFile {
                    manifest: entry.manifest.clone(),
                    ..PluginFile::refused(
                        file.clone(),
                        format!("device id {dev} is already provided by plugin {owner:?}"),
                    )
                };
            } else {
                ids.insert(m.id.clone(), file.clone());
                for d in &entry.devices {
                    device_owner.insert(d.id.to_string(), m.id.clone());
                }
            }
        }
        match &entry.status {
            Status::Loaded => tracing::info!(
                file = %file.display(),
                plugin = entry.manifest.as_ref().map(|m| m.id.as_str()).unwrap_or(""),
                devices = entry.devices.len(),
                isolation = %entry.isolation,
                "plugin loaded"
            ),
            Status::Refused(reason) => {
                tracing::warn!(file = %file.display(), "plugin refused: {reason}")
            }
        }
        out.push(entry);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn library_names() {
        assert!(is_library_name("libdevicerail_plugin_mock.so"));
        assert!(is_library_name("x.dylib"));
        assert!(!is_library_name(".tmp-install.so"));
        assert!(!is_library_name("README.md"));
    }

    #[test]
    fn refuses_writable_and_outside_symlinks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let outside = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("a.so");
        fs::write(&f, b"x").expect("write");
        fs::set_permissions(&f, fs::Permissions::from_mode(0o666)).expect("chmod");
        assert!(check_file(dir.path(), &f).is_err_and(|e| matches!(e, FileRefusal::Writable(_))));
        fs::set_permissions(&f, fs::Permissions::from_mode(0o644)).expect("chmod");
        assert!(check_file(dir.path(), &f).is_ok());
        let target = outside.path().join("b.so");
        fs::write(&target, b"x").expect("write");
        let link = dir.path().join("b.so");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        assert!(
            check_file(dir.path(), &link)
                .is_err_and(|e| matches!(e, FileRefusal::OutsideSymlink(_)))
        );
        let inside = dir.path().join("c.so");
        std::os::unix::fs::symlink(&f, &inside).expect("symlink");
        assert!(check_file(dir.path(), &inside).is_ok());
    }
}
