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

use std::fs::{self, OpenOptions};
use std::io::{BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

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
