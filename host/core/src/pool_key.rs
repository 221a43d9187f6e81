//! The pool manager's key: what makes one connection of a shared host the
//! **pool manager**, the only one that may see and change reservations
//! (`devicerailHost.pool.*`). Every client of the socket can reach the
//! host; only the device plugin that allocates devices to pods may
//! reserve them.
//!
//! A shared host (`serve --listen`) writes a fresh random key (32 bytes,
//! hex) at every start to `<data dir>/pool-manager.key`, mode 0600, and
//! keeps only its digest. The data directory is never the socket
//! directory that pods mount (a host whose socket lives in its data
//! directory offers the pool to nobody); the manager reads the file and
//! presents the key in its attach preamble (`pool-key=KEY`).
//!
//! The key never reaches a log, an error or a plugin worker.

use std::path::{Path, PathBuf};

use devicerail_host_protocol::pool::{LeaseToken, TokenError};

use crate::leases::TokenDigest;

/// The key file's name in the data directory.
pub const KEY_FILE: &str = "pool-manager.key";

/// The attach preamble word (`pool-key=KEY`) that presents the key.
pub const PREAMBLE_KEY: &str = "pool-key";

/// The key file of the host whose data directory is `data_dir`.
pub fn key_file(data_dir: &Path) -> PathBuf {
    data_dir.join(KEY_FILE)
}

/// Why the key could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum PoolKeyError {
    /// The operating system gave no random bytes.
    #[error("no random bytes for the pool manager's key: {0}")]
    Random(getrandom::Error),
    /// The file could not be written or read.
    #[error("the pool manager's key file {path}: {source}")]
    Io {
        /// The key file.
        path: PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// The file does not hold a key.
    #[error("the pool manager's key file {path} does not hold a key: {source}")]
    Malformed {
        /// The key file.
        path: PathBuf,
        /// What is wrong with its text (never the text).
        source: TokenError,
    },
}

/// A fresh key.
fn fresh() -> Result<LeaseToken, PoolKeyError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(PoolKeyError::Random)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    // 64 characters of [0-9a-f]: always a valid token.
    LeaseToken::new(hex).map_err(|source| PoolKeyError::Malformed {
        path: PathBuf::new(),
        source,
    })
}

/// Writes a fresh key to `file` (owner-only, atomically) and returns its
/// digest.
pub(crate) fn create(file: &Path) -> Result<TokenDigest, PoolKeyError> {
    let key = fresh()?;
    devicerail_host_store::private_file::write(file, key.expose().as_bytes()).map_err(
        |source| PoolKeyError::Io {
            path: file.to_path_buf(),
            source,
        },
    )?;
    Ok(TokenDigest::of(&key))
}

/// Reads the key in `file` (the manager's side).
pub fn read(file: &Path) -> Result<LeaseToken, PoolKeyError> {
    let text = std::fs::read_to_string(file).map_err(|source| PoolKeyError::Io {
        path: file.to_path_buf(),
        source,
    })?;
    LeaseToken::new(text.trim()).map_err(|source| PoolKeyError::Malformed {
        path: file.to_path_buf(),
        source,
    })
}

/// Where a shared host keeps its key, or `None` when clients of the socket
/// could read it: the key file must not be inside the socket's directory.
pub(crate) fn location(data_dir: &Path, socket: &Path) -> Option<PathBuf> {
    let file = key_file(data_dir);
    let socket_dir = socket.parent()?;
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (dir, sockets) = (canonical(data_dir), canonical(socket_dir));
    (!dir.starts_with(&sockets)).then_some(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_key_is_written_private_read_back_and_matches_its_digest() {
        let dir = tempfile::tempdir().expect("tmp");
        let file = key_file(dir.path());
        let digest = create(&file).expect("create");
        let mode = std::fs::metadata(&file).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let key = read(&file).expect("read");
        assert_eq!(key.expose().len(), 64);
        assert!(TokenDigest::of(&key).matches(&digest));
        let again = create(&file).expect("again");
        assert!(!again.matches(&digest), "a fresh key at every start");
        std::fs::write(&file, "not a key!").expect("write");
        let e = read(&file).expect_err("malformed");
        assert!(!e.to_string().contains("not a key"), "{e}");
    }

    #[test]
    fn no_key_where_socket_clients_could_read_it() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = dir.path().join("data");
        let run = dir.path().join("run");
        assert_eq!(
            location(&data, &run.join("host.sock")),
            Some(key_file(&data))
        );
        assert_eq!(location(&data, &data.join("host.sock")), None);
        assert_eq!(location(&data.join("inner"), &data.join("host.sock")), None);
    }
}
