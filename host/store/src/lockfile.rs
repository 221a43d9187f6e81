//! One host per data directory: an exclusive `flock` on `<data>/host.lock`
//! held for the process lifetime. A second host fails at start.
//!
//! It never waits for the lock and never deletes `host.lock`: the kernel
//! releases the lock when its holder dies, so a stale file is harmless.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Why a host could not take its data directory.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another live process holds the lock; the host must not start.
    #[error("data directory {dir} is already in use by another DeviceRail host{pid}")]
    Busy {
        /// The data directory asked for.
        dir: PathBuf,
        /// ` (pid N)` with the holder's recorded pid, or empty when it
        /// wrote none: a hint for the message only.
        pid: String,
    },
    /// The directory or `host.lock` could not be created, opened or
    /// locked.
    #[error("cannot lock data directory {dir}: {source}")]
    Io {
        /// The data directory asked for.
        dir: PathBuf,
        /// The failing system call's error.
        source: std::io::Error,
    },
}

/// Held while the host runs; the lock is released when dropped or when the
/// process dies.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
}

/// Creates `dir` if needed and takes `<dir>/host.lock` without waiting,
/// recording this process's pid in it; fails with [`LockError::Busy`] when
/// another host holds it.
pub fn lock(dir: &Path) -> Result<DataDirLock, LockError> {
    let io = |source| LockError::Io {
        dir: dir.to_path_buf(),
        source,
    };
    if let Some(old) = crate::private_file::private_dir(dir).map_err(io)? {
        tracing::warn!(
            dir = %dir.display(),
            "the data directory was open to other users (mode {old:o}); it is now private (0700)"
        );
    }
    let mut file = crate::private_file::create_private(&dir.join("host.lock")).map_err(io)?;
    if devicerail_host_sys::lock_exclusive(&file).map_err(io)? == devicerail_host_sys::Locked::Busy
    {
        let mut text = String::new();
        let _ = file.read_to_string(&mut text);
        let pid = text.trim();
        let pid = if pid.is_empty() {
            String::new()
        } else {
            format!(" (pid {pid})")
        };
        return Err(LockError::Busy {
            dir: dir.to_path_buf(),
            pid,
        });
    }
    // The pid is only a hint for the message above; a full disk must not
    // stop the host from starting (read-only) over it.
    let pid = (|| {
        file.set_len(0)?;
        file.seek(SeekFrom::Start(0))?;
        write!(file, "{}", std::process::id())?;
        file.sync_all()
    })();
    if let Err(e) = pid {
        tracing::warn!(
            "could not record the pid in {}: {e}",
            dir.join("host.lock").display()
        );
    }
    Ok(DataDirLock { _file: file })
}
