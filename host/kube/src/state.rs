//! The device plugin's allocations, kept in one JSON file so they survive
//! a restart: which device the kubelet gave out, for which resource, under
//! which reservation token, and (once the kubelet's PodResources said so)
//! to which pod. The kubelet never calls `Allocate` again for a running
//! pod, so forgetting an allocation would strand its pod's token.
//!
//! The file holds tokens: it is written 0600 in a directory created 0700,
//! atomically (a temporary file renamed over it), and never logged.

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use devicerail_host_protocol::pool::LeaseToken;
use serde::{Deserialize, Serialize};

/// The pod an allocation belongs to, as PodResources names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRef {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub name: String,
    /// The container's name.
    pub container: String,
}

impl std::fmt::Display for PodRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{} ({})", self.namespace, self.name, self.container)
    }
}

/// One device given to a container.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Allocation {
    /// The host's device id.
    pub device_id: String,
    /// The extended resource it was allocated as.
    pub resource: String,
    /// The reservation's token (also in the container's environment).
    pub token: LeaseToken,
    /// When `Allocate` answered, in Unix milliseconds.
    pub allocated_at_ms: u64,
    /// The pod, once PodResources listed the device.
    #[serde(default)]
    pub pod: Option<PodRef>,
    /// Consecutive PodResources polls that did not list the device.
    #[serde(default)]
    pub missed: u32,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    allocations: Vec<Allocation>,
}

const VERSION: u32 = 1;

/// Why the state file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// Reading, writing or renaming the file failed.
    #[error("cannot {what} the allocation state {path}: {source}")]
    Io {
        /// The operation (`read`, `write`, …).
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not the JSON this build writes.
    #[error("the allocation state {path} is not valid: {source}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Where the JSON went wrong.
        source: serde_json::Error,
    },
    /// The file was written by a build with another format version.
    #[error("the allocation state {path} has version {found}; this build reads version {VERSION}")]
    Version {
        /// The file.
        path: PathBuf,
        /// The version it has.
        found: u32,
    },
}

/// The allocations, and the file they live in.
#[derive(Debug)]
pub struct Allocations {
    path: PathBuf,
    list: Vec<Allocation>,
}

impl Allocations {
    /// Reads `path` (a missing file is no allocations).
    pub fn load(path: &Path) -> Result<Self, StateError> {
        let io = |what, source| StateError::Io {
            what,
            path: path.to_path_buf(),
            source,
        };
        let list = match std::fs::read(path) {
            Ok(bytes) => {
                let file: File =
                    serde_json::from_slice(&bytes).map_err(|source| StateError::Parse {
                        path: path.to_path_buf(),
                        source,
                    })?;
                if file.version != VERSION {
                    return Err(StateError::Version {
                        path: path.to_path_buf(),
                        found: file.version,
                    });
                }
                file.allocations
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io("read", e)),
        };
        Ok(Self {
            path: path.to_path_buf(),
            list,
        })
    }

    /// Writes the file: a private temporary file beside it, synced, then
    /// renamed over it.
    pub fn save(&self) -> Result<(), StateError> {
        let io = |what, source| StateError::Io {
            what,
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| io("create the directory of", e))?;
        }
        let file = File {
            version: VERSION,
            allocations: self.list.clone(),
        };
        let bytes = serde_json::to_vec_pretty(&file).map_err(|e| io("encode", e.into()))?;
        let mut tmp = self.path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| io("write", e))?;
        f.write_all(&bytes).map_err(|e| io("write", e))?;
        f.sync_all().map_err(|e| io("sync", e))?;
        drop(f);
        std::fs::rename(&tmp, &self.path).map_err(|e| io("replace", e))?;
        Ok(())
    }

    /// Every allocation.
    pub fn all(&self) -> &[Allocation] {
        &self.list
    }

    /// Every allocation, to update in place (save after).
    pub fn all_mut(&mut self) -> &mut Vec<Allocation> {
        &mut self.list
    }

    /// The allocation of `device`, if any.
    pub fn get(&self, device: &str) -> Option<&Allocation> {
        self.list.iter().find(|a| a.device_id == device)
    }

    /// Records `a`, replacing an allocation of the same device.
    pub fn put(&mut self, a: Allocation) {
        self.list.retain(|o| o.device_id != a.device_id);
        self.list.push(a);
    }

    /// Forgets the allocation of `device`; returns it.
    pub fn remove(&mut self, device: &str) -> Option<Allocation> {
        let i = self.list.iter().position(|a| a.device_id == device)?;
        Some(self.list.remove(i))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn allocations_survive_a_restart_in_a_private_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("state/allocations.json");
        let mut a = Allocations::load(&path).expect("missing is empty");
        assert!(a.all().is_empty());
        let token = crate::token::fresh().expect("token");
        a.put(Allocation {
            device_id: "mock-1".into(),
            resource: "devicerail.dev/mock".into(),
            token: token.clone(),
            allocated_at_ms: 5,
            pod: None,
            missed: 0,
        });
        a.save().expect("save");
        let mode = std::fs::metadata(&path).expect("file").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().expect("dir"))
            .expect("dir")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let back = Allocations::load(&path).expect("load");
        assert_eq!(back.get("mock-1").map(|a| &a.token), Some(&token));
        assert!(format!("{back:?}").contains("redacted"));
        assert!(!format!("{back:?}").contains(token.expose()));
        std::fs::write(&path, br#"{"version":9,"allocations":[]}"#).expect("write");
        assert!(matches!(
            Allocations::load(&path),
            Err(StateError::Version { found: 9, .. })
        ));
    }
}
