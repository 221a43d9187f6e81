//! Scanning a plugins directory: which files are candidates, which are
//! refused before they are ever opened (permissions, symlinks), and the
//! outcome of loading each one with its settings (its table of the
//! configuration file) for a purpose (serve, or inspect: then drivers
//! start no external server). A bad file, or a bad table, never stops the
//! others. To serve, a plugin whose isolation is `process` (the default)
//! is started in a supervised worker process (`crate::worker`); the host
//! opens its library only to check it and read its manifest, and never
//! constructs or calls its driver. Inspecting always loads in process.

pub mod shipped;

use std::collections::HashMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use devicerail_host_plugin_api::loader::{self, LoadError, LoadedPlugin};
use devicerail_host_plugin_api::{CallContext, Driver, LoadPurpose, PluginManifest};
use devicerail_host_protocol::DeviceInfo;

use crate::worker::{Backoff, RemoteDriver, StartError, WorkerProbe, WorkerSpec};
use devicerail_host_config::{ConfigFile, Isolation};

/// How long a plugin may take to list its devices while loading.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(15);

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
    /// The plugin loaded in this process (inline, or to inspect).
    pub plugin: Option<Arc<LoadedPlugin>>,
    /// The driver to serve with: `plugin`, or the plugin's worker.
    pub driver: Option<Arc<dyn Driver>>,
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
            plugin: None,
            driver: None,
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
        })
    }
}

/// How to load the plugins of a directory.
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions<'a> {
    /// How `process` plugins are started when serving (`None`: every
    /// plugin loads in this process).
    pub workers: Option<&'a Workers>,
    /// The configuration file, whose `[plugins.<id>]` tables are the
    /// plugins' settings.
    pub config: Option<&'a ConfigFile>,
    /// Serve, or only inspect (then drivers start no external server).
    pub purpose: LoadPurpose,
    /// Whether devices are listed, and what a failure means.
    pub listing: Listing,
}

impl LoadOptions<'_> {
    /// Loading to serve: devices must list.
    pub fn serve<'a>(
        config: Option<&'a ConfigFile>,
        workers: Option<&'a Workers>,
    ) -> LoadOptions<'a> {
        LoadOptions {
            workers,
            config,
            purpose: LoadPurpose::Serve,
            listing: Listing::Require,
        }
    }

    /// Loading to inspect, with `listing`.
    pub fn inspect(config: Option<&ConfigFile>, listing: Listing) -> LoadOptions<'_> {
        LoadOptions {
            workers: None,
            config,
            purpose: LoadPurpose::Inspect,
            listing,
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

/// Opens one file (already checked), initializes it with its settings
/// from `opts.config`, and lists its devices as `opts.listing` says.
pub fn load_file(file: &Path, opts: LoadOptions<'_>) -> PluginFile {
    let opened = match loader::open(file) {
        Ok(p) => p,
        Err(e) => return PluginFile::refused(file.to_path_buf(), e.to_string()),
    };
    let manifest = opened.manifest().clone();
    let refused = |reason: String| PluginFile {
        manifest: Some(manifest.clone()),
        ..PluginFile::refused(file.to_path_buf(), reason)
    };
    let settings = match opts.config.and_then(|c| c.plugins.get(&manifest.id)) {
        None => serde_json::Map::new(),
        Some(table) => match &table.settings {
            Ok(s) => s.clone(),
            Err(e) => return refused(format!("bad configuration table: {e}")),
        },
    };
    let isolation = opts
        .config
        .map(|c| c.isolation(&manifest.id))
        .unwrap_or_default();
    let refused = |reason: String| PluginFile {
        isolation,
        ..refused(reason)
    };
    let mut worker = None;
    let (plugin, driver): (Option<Arc<LoadedPlugin>>, Arc<dyn Driver>) =
        match (opts.workers, isolation, opts.purpose) {
            (Some(workers), Isolation::Process, LoadPurpose::Serve) => {
                drop(opened);
                let spec = WorkerSpec {
                    exe: workers.exe.clone(),
                    plugin_file: file.to_path_buf(),
                    plugin_id: manifest.id.clone(),
                    settings,
                    log_filter: workers.log_filter.clone(),
                    backoff: workers.backoff,
                    grace: workers.grace,
                };
                match RemoteDriver::start(spec) {
                    Ok(d) => {
                        worker = Some(d.probe());
                        (None, Arc::new(d))
                    }
                    Err(StartError::Init {
                        message,
                        setting: Some(setting),
                    }) => {
                        let e = LoadError::SettingRefused { setting, message };
                        return refused(init_refusal(&e, &manifest.id, opts.config));
                    }
                    Err(StartError::Init { message, .. }) => {
                        return refused(LoadError::InitFailed(message).to_string());
                    }
                    Err(e) => return refused(e.to_string()),
                }
            }
            _ => match opened.init(&settings, opts.purpose) {
                Ok(p) => {
                    let p = Arc::new(p);
                    (Some(p.clone()), p)
                }
                Err(e) => return refused(init_refusal(&e, &manifest.id, opts.config)),
            },
        };
    let loaded = |devices, device_status| PluginFile {
        file: file.to_path_buf(),
        status: Status::Loaded,
        manifest: Some(manifest.clone()),
        devices,
        device_status,
        plugin: plugin.clone(),
        driver: Some(driver.clone()),
        isolation,
        worker: worker.clone(),
    };
    match opts.listing {
        Listing::Skip => loaded(Vec::new(), DeviceStatus::NotListed),
        Listing::Report => match list_devices_bounded(&manifest.id, &driver) {
            Ok(devices) => loaded(devices, DeviceStatus::Listed),
            Err(reason) => loaded(Vec::new(), DeviceStatus::Failed(reason.to_string())),
        },
        Listing::Require => match list_devices_bounded(&manifest.id, &driver) {
            Ok(devices) => loaded(devices, DeviceStatus::Listed),
            Err(reason) => refused(reason.to_string()),
        },
    }
}

/// Scans `dir`: every candidate ends `loaded` or `refused: <reason>`.
/// Plugin ids and device ids must be unique; later files lose.
pub fn scan(dir: &Path, opts: LoadOptions<'_>) -> Result<Vec<PluginFile>, DirError> {
    let mut out = Vec::new();
    let mut ids: HashMap<String, PathBuf> = HashMap::new();
    let mut device_owner: HashMap<String, String> = HashMap::new();
    for file in candidates(dir)? {
        let checked = match check_file(dir, &file) {
            Ok(p) => p,
            Err(reason) => {
                tracing::warn!(file = %file.display(), "plugin refused: {reason}");
                out.push(PluginFile::refused(file, reason.to_string()));
                continue;
            }
        };
        let mut entry = load_file(&checked, opts);
        entry.file = file.clone();
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
    Ok(out)
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
