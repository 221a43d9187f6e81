//! Writing a file the user asked for (a report, a bundle) so that it is
//! readable by its owner only, and complete or absent: bytes go to a
//! temporary file in the same directory (created mode 0600), which is
//! synced and renamed over the target.
//!
//! Why 0600 rather than the umask: a report or bundle holds screenshots
//! and UI trees of whatever the device showed (names, mail, tokens on
//! screen), which the user may not mean to share with other accounts on
//! the machine; sharing one is a deliberate `chmod` or upload away.
//! Protected Action arguments are never in them either way.
//!
//! It must never follow the target if it is a symlink into somewhere
//! else (the rename replaces the link itself), nor leave a partial file.
//!
//! The same rule holds inside the data directory, whatever the umask:
//! [`private_dir`] makes a directory 0700 (tightening one that is open),
//! [`create_private`] a file 0600 and [`tighten`] an existing one.

use std::fs::{self, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// Creates `dir` (and missing parents) mode 0700, or makes an existing one
/// 0700 if others may enter it; returns its old mode when it was tightened.
pub fn private_dir(dir: &Path) -> std::io::Result<Option<u32>> {
    if !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mode = fs::metadata(dir)?.permissions().mode() & 0o777;
    if mode & 0o077 == 0 {
        return Ok(None);
    }
    fs::set_permissions(dir, fs::Permissions::from_mode(mode & 0o700))?;
    Ok(Some(mode))
}

/// Makes the existing file `path` readable by its owner only (0600 at
/// most); a missing file is fine. Returns its old mode when it changed.
pub fn tighten(path: &Path) -> std::io::Result<Option<u32>> {
    let mode = match fs::metadata(path) {
        Ok(m) => m.permissions().mode() & 0o777,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if mode & 0o077 == 0 {
        return Ok(None);
    }
    fs::set_permissions(path, fs::Permissions::from_mode(mode & 0o600))?;
    Ok(Some(mode))
}

/// Opens `path` for writing, creating it mode 0600 when missing (an
/// existing file is tightened).
pub fn create_private(path: &Path) -> std::io::Result<fs::File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)?;
    tighten(path)?;
    Ok(file)
}

/// Writes `out` through `write` (owner-only, atomically); returns the
/// number of bytes written.
pub fn write_with(
    out: &Path,
    write: impl FnOnce(&mut BufWriter<fs::File>) -> std::io::Result<()>,
) -> std::io::Result<u64> {
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = out
        .file_name()
        .ok_or_else(|| std::io::Error::other("the output path names no file"))?;
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        let mut w = BufWriter::new(file);
        write(&mut w)?;
        w.flush()?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        let len = file.metadata()?.len();
        fs::rename(&tmp, out)?;
        Ok(len)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Writes `bytes` to `out` (owner-only, atomically).
pub fn write(out: &Path, bytes: &[u8]) -> std::io::Result<u64> {
    write_with(out, |w| w.write_all(bytes))
}
