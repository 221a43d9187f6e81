//! The Evidence store: content-addressed blobs (screenshots, UI trees).
//!
//! Blobs up to [`INLINE_MAX`] bytes travel with the event that references
//! them and are written into the event store in that event's transaction
//! ([`Blob`]): one durable commit covers the Observation, its screenshot
//! and its UI snapshot, shared with everything else committed meanwhile.
//! Larger blobs are files in `<data>/evidence/sha256/<2 hex>/<64 hex>`,
//! written atomically (temp file, fsync, rename, fsync dir) before the
//! event that references them. Either way identical bytes are stored once,
//! and Evidence is durable no later than the first event that references
//! it.

use std::fs::{self, File};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use devicerail_host_protocol::AssetRef;
use sha2::{Digest, Sha256};

/// Lower-case hex of a SHA-256 digest.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
    }
    out
}

/// Whether `s` is 64 lower-case hex digits.
pub fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Where the blob `sha` (64 hex digits) lives under an Evidence root
/// (`<data>/evidence`).
pub(crate) fn blob_path(evidence_root: &Path, sha: &str) -> PathBuf {
    evidence_root
        .join("sha256")
        .join(sha.get(..2).unwrap_or("__"))
        .join(sha)
}

/// Largest blob stored in the event store with its event.
pub const INLINE_MAX: usize = 1024 * 1024;

/// Evidence bytes bound for the event store, with their content address.
#[derive(Debug, Clone)]
pub struct Blob {
    /// Lower-case hex SHA-256 of `bytes`: the blob's address.
    pub sha256: String,
    /// The MIME type of the bytes (`image/png`, `application/json`).
    pub media_type: String,
    /// The blob's bytes, shared with whoever produced them.
    pub bytes: std::sync::Arc<Vec<u8>>,
    /// Set for a UI snapshot: it is stored with its Observation's row
    /// (unique to it, so never shared with another event).
    pub observation: Option<devicerail_host_protocol::ObservationId>,
    /// For a UI snapshot: its LZ4 form ([`crate::snapshot_codec`]), when
    /// compressing pays. Computed off the writer thread.
    pub packed: Option<Vec<u8>>,
}

/// The content-addressed blob store.
#[derive(Debug, Clone)]
pub struct EvidenceStore {
    root: PathBuf,
    /// Digests of the last few blobs: a device whose screen did not change
    /// sends the same bytes again, which compare faster than they hash.
    recent: std::sync::Arc<std::sync::Mutex<Vec<RecentDigest>>>,
}

/// Bytes recently hashed, with their hex SHA-256.
type RecentDigest = (std::sync::Arc<Vec<u8>>, String);

/// Digests remembered by [`EvidenceStore::digest`].
const RECENT_DIGESTS: usize = 8;

impl EvidenceStore {
    /// Opens (creating) the store under `data_dir/evidence`.
    pub fn open(data_dir: &Path) -> io::Result<Self> {
        let root = data_dir.join("evidence");
        for dir in [&root, &root.join("sha256"), &root.join("tmp")] {
            crate::private_file::private_dir(dir)?;
        }
        // Leftovers of writes interrupted by a crash.
        if let Ok(entries) = fs::read_dir(root.join("tmp")) {
            for e in entries.flatten() {
                let _ = fs::remove_file(e.path());
            }
        }
        Ok(Self {
            root,
            recent: std::sync::Arc::default(),
        })
    }

    fn path_of(&self, sha: &str) -> PathBuf {
        blob_path(&self.root, sha)
    }

    /// Stores `bytes` (once) and returns its canonical reference.
    pub fn put(&self, bytes: &[u8], media_type: &str) -> io::Result<AssetRef> {
        let sha = sha256_hex(bytes);
        let path = self.path_of(&sha);
        let exists = fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64);
        if !exists {
            let dir = path.parent().unwrap_or(&self.root);
            crate::private_file::private_dir(dir)?;
            let tmp = self
                .root
                .join("tmp")
                .join(uuid::Uuid::new_v4().simple().to_string());
            let written = (|| {
                let mut f = fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&tmp)?;
                f.write_all(bytes)?;
                f.sync_all()?;
                fs::rename(&tmp, &path)
            })();
            if let Err(e) = written {
                // A failed write (a full disk) leaves no partial file.
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
            File::open(dir)?.sync_all()?;
        }
        Ok(AssetRef::content_addressed(&sha, media_type))
    }

    /// The content address of `bytes`: a blob to store with its event when
    /// small, else written as a file now (blocking I/O).
    pub fn store(&self, bytes: Vec<u8>, media_type: &str) -> io::Result<(AssetRef, Option<Blob>)> {
        if bytes.len() > INLINE_MAX {
            return self.put(&bytes, media_type).map(|a| (a, None));
        }
        let sha = self.digest(&bytes);
        let asset = AssetRef::content_addressed(&sha, media_type);
        let blob = Blob {
            sha256: sha,
            media_type: media_type.to_owned(),
            bytes: std::sync::Arc::new(bytes),
            observation: None,
            packed: None,
        };
        Ok((asset, Some(blob)))
    }

    /// The SHA-256 of `bytes`, remembered for the next identical bytes.
    pub fn digest(&self, bytes: &[u8]) -> String {
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(pos) = recent.iter().position(|(b, _)| b.as_slice() == bytes) {
            let hit = recent.remove(pos);
            let sha = hit.1.clone();
            recent.insert(0, hit);
            return sha;
        }
        drop(recent);
        let sha = sha256_hex(bytes);
        let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
        recent.insert(0, (std::sync::Arc::new(bytes.to_vec()), sha.clone()));
        recent.truncate(RECENT_DIGESTS);
        sha
    }

    /// The bytes of one file blob.
    pub fn get(&self, sha: &str) -> io::Result<Vec<u8>> {
        if !is_sha256_hex(sha) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a sha256 digest",
            ));
        }
        fs::read(self.path_of(sha))
    }

    /// Removes a blob no session references any more.
    pub fn remove(&self, sha: &str) -> io::Result<()> {
        if !is_sha256_hex(sha) {
            return Ok(());
        }
        match fs::remove_file(self.path_of(sha)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedupes_and_reads_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = EvidenceStore::open(dir.path()).expect("open");
        let a = store.put(b"hello", "text/plain").expect("put");
        let b = store.put(b"hello", "text/plain").expect("put");
        assert_eq!(a, b);
        assert_eq!(
            a.sha256.as_deref(),
            Some("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824")
        );
        assert_eq!(
            store
                .get(a.sha256.as_deref().unwrap_or_default())
                .expect("get"),
            b"hello"
        );
        assert!(a.id.starts_with("sha256:"));
    }
}
