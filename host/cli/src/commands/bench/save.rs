//! `devicerail bench --save`: the chosen methods appended to the
//! configuration file as one `[[plugins.<id>.devices]]` table, only when
//! the file has no entry for that device yet and still parses, with the
//! entry in place, afterwards. The file is replaced atomically and kept
//! private (0600).

use std::path::{Path, PathBuf};

use devicerail_host_config::ConfigFile;

/// Why the choice was not saved.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SaveError {
    /// No configuration file can be named (no home directory).
    #[error("no configuration file can be named; pass --config FILE")]
    NoFile,
    /// Reading or writing the file failed.
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file does not parse now.
    #[error("{0} does not parse now; fix it first: {1}")]
    Unparsable(PathBuf, String),
    /// The file chooses methods for this device already.
    #[error(
        "{path} already has a [[plugins.{plugin}.devices]] entry for {serial:?}; edit or remove it, then save again"
    )]
    Present {
        path: PathBuf,
        plugin: String,
        serial: String,
    },
    /// Appending the table would not give a file with the entry.
    #[error("appending to {0} would not give a valid entry ({1}); add this by hand:\n{2}")]
    WouldBreak(PathBuf, String, String),
}

/// Whether `file`'s `plugin` table has a `devices` entry for `serial`.
fn has_entry(file: &ConfigFile, plugin: &str, serial: &str) -> bool {
    file.plugins
        .get(plugin)
        .and_then(|t| t.settings.as_ref().ok())
        .and_then(|s| s.get("devices"))
        .and_then(|d| d.as_array())
        .is_some_and(|entries| {
            entries
                .iter()
                .any(|e| e.get("serial").and_then(|s| s.as_str()) == Some(serial))
        })
}

/// Appends `snippet` (the entry of `serial` for `plugin`) to the file at
/// `path` (created, with a private directory, when missing).
pub(crate) fn append(
    path: Option<&Path>,
    plugin: &str,
    serial: &str,
    snippet: &str,
) -> Result<PathBuf, SaveError> {
    let path = path.ok_or(SaveError::NoFile)?.to_path_buf();
    let io = |what| {
        let path = path.clone();
        move |source| SaveError::Io { what, path, source }
    };
    let old = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io("reading")(e)),
    };
    let now = ConfigFile::parse(&path, &old)
        .map_err(|e| SaveError::Unparsable(path.clone(), e.to_string()))?;
    if has_entry(&now, plugin, serial) {
        return Err(SaveError::Present {
            path,
            plugin: plugin.to_owned(),
            serial: serial.to_owned(),
        });
    }
    let mut text = old;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(snippet);
    match ConfigFile::parse(&path, &text) {
        Ok(f) if has_entry(&f, plugin, serial) => {}
        Ok(_) => {
            return Err(SaveError::WouldBreak(
                path,
                "the entry would not be read".into(),
                snippet.to_owned(),
            ));
        }
        Err(e) => {
            return Err(SaveError::WouldBreak(
                path,
                e.to_string(),
                snippet.to_owned(),
            ));
        }
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        devicerail_host_store::private_file::private_dir(dir)
            .map_err(io("creating the directory of"))?;
    }
    devicerail_host_store::private_file::write(&path, text.as_bytes()).map_err(io("writing"))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: &str =
        "\n[[plugins.android.devices]]\nserial = \"emu-1\"\ninputMethod = \"touch\"\n";

    #[test]
    fn appends_once_keeps_the_file_and_refuses_what_would_break_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("conf").join("config.toml");
        // A missing file is created in a private directory.
        append(Some(&path), "android", "emu-1", ENTRY).expect("saved");
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.contains("serial = \"emu-1\""));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A second save for the same device is refused, the file unchanged.
        let e = append(Some(&path), "android", "emu-1", ENTRY).expect_err("present");
        assert!(matches!(e, SaveError::Present { .. }), "{e}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
        // A file whose `devices` is an inline array cannot take a table.
        let inline = dir.path().join("inline.toml");
        let before = "[plugins.android]\ndevices = [{ serial = \"other\" }]\n";
        std::fs::write(&inline, before).expect("write");
        let e = append(Some(&inline), "android", "emu-1", ENTRY).expect_err("refused");
        assert!(matches!(e, SaveError::WouldBreak(..)), "{e}");
        assert!(e.to_string().contains("by hand"));
        assert_eq!(std::fs::read_to_string(&inline).expect("read"), before);
        // An existing file keeps its text and gains the table.
        let kept = dir.path().join("kept.toml");
        std::fs::write(&kept, "[host]\nscreenshotPolicy = \"capture\"").expect("write");
        append(Some(&kept), "android", "emu-1", ENTRY).expect("saved");
        let text = std::fs::read_to_string(&kept).expect("read");
        assert!(text.starts_with("[host]\nscreenshotPolicy = \"capture\"\n"));
        assert!(matches!(
            append(None, "android", "x", ENTRY),
            Err(SaveError::NoFile)
        ));
    }
}
