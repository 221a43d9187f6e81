//! The Evidence store: content-addressed blobs (screenshots, UI trees) in
//! `<data>/evidence/sha256/<2 hex>/<64 hex>`. Writes are atomic (temp file,
//! fsync, rename, fsync dir) and de-duplicated: identical bytes are stored
//! once. An Evidence file is durable before any event references it.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use devicerail_protocol::AssetRef;
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

/// The content-addressed blob store.
#[derive(Debug, Clone)]
pub struct EvidenceStore {
    root: PathBuf,
}

impl EvidenceStore {
    /// Opens (creating) the store under `data_dir/evidence`.
    pub fn open(data_dir: &Path) -> io::Result<Self> {
        let root = data_dir.join("evidence");
        fs::create_dir_all(root.join("sha256"))?;
        fs::create_dir_all(root.join("tmp"))?;
        // Leftovers of writes interrupted by a crash.
        if let Ok(entries) = fs::read_dir(root.join("tmp")) {
            for e in entries.flatten() {
                let _ = fs::remove_file(e.path());
            }
        }
        Ok(Self { root })
    }

    fn path_of(&self, sha: &str) -> PathBuf {
        self.root.join("sha256").join(&sha[..2]).join(sha)
    }

    /// Stores `bytes` (once) and returns its canonical reference.
    pub fn put(&self, bytes: &[u8], media_type: &str) -> io::Result<AssetRef> {
        let sha = sha256_hex(bytes);
        let path = self.path_of(&sha);
        let exists = fs::metadata(&path).is_ok_and(|m| m.len() == bytes.len() as u64);
        if !exists {
            let dir = path.parent().unwrap_or(&self.root);
            fs::create_dir_all(dir)?;
            let tmp = self
                .root
                .join("tmp")
                .join(uuid::Uuid::new_v4().simple().to_string());
            let written = (|| {
                let mut f = File::create(&tmp)?;
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

    /// The bytes of one blob.
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
