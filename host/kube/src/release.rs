//! Ending allocations whose pods are gone. The device-plugin API has no
//! "deallocate": the kubelet's PodResources `List` is polled instead, and
//! an allocation its device no longer appears in (for [`MISSES`] polls in
//! a row, and never within the grace after `Allocate`, before the kubelet
//! has recorded it; 10 s by default) has its reservation released on the
//! host. So a device is free again at most `MISSES` × the poll interval
//! after the kubelet stops listing its pod (4 s at the default 2 s).
//!
//! Without a PodResources socket nothing is released here; an allocation
//! then ends when the kubelet allocates its device again.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::api::podresources::ListPodResourcesRequest;
use crate::api::podresources::pod_resources_lister_client::PodResourcesListerClient;
use crate::pool::{Pool, PoolError};
use crate::state::{Allocation, Allocations, PodRef};

/// Polls in a row that must miss a device before it is released.
pub const MISSES: u32 = 2;
/// How long one `List` may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// Which pod holds each (resource, device), as PodResources lists them.
pub type InUse = HashMap<(String, String), PodRef>;

/// Why the kubelet's PodResources could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    /// The socket could not be dialled.
    #[error("{0}")]
    Dial(String),
    /// `List` got no answer within its bound.
    #[error("no answer in time")]
    Timeout,
    /// `List` was refused (the status message).
    #[error("{0}")]
    Refused(String),
}

/// Reads the kubelet's PodResources.
pub async fn in_use(socket: &Path) -> Result<InUse, ListError> {
    let channel = crate::kubelet::dial(socket)
        .await
        .map_err(|e| ListError::Dial(e.message))?;
    let mut client = PodResourcesListerClient::new(channel);
    let list = tokio::time::timeout(LIST_TIMEOUT, client.list(ListPodResourcesRequest {}))
        .await
        .map_err(|_| ListError::Timeout)?
        .map_err(|s| ListError::Refused(s.message().to_owned()))?
        .into_inner();
    let mut out = InUse::new();
    for pod in list.pod_resources {
        for c in pod.containers {
            for d in c.devices {
                for id in d.device_ids {
                    out.insert(
                        (d.resource_name.clone(), id),
                        PodRef {
                            namespace: pod.namespace.clone(),
                            name: pod.name.clone(),
                            container: c.name.clone(),
                        },
                    );
                }
            }
        }
    }
    Ok(out)
}

/// Updates `allocs` from one `List` answer taken at `now_ms`: the pod of a
/// listed device is recorded, a missing one counted. Returns the devices
/// to release and whether anything changed.
pub fn decide(
    allocs: &mut [Allocation],
    in_use: &InUse,
    now_ms: u64,
    grace: Duration,
) -> (Vec<String>, bool) {
    let mut release = Vec::new();
    let mut changed = false;
    for a in allocs.iter_mut() {
        match in_use.get(&(a.resource.clone(), a.device_id.clone())) {
            Some(pod) => {
                if a.pod.as_ref() != Some(pod) || a.missed != 0 {
                    if a.pod.as_ref() != Some(pod) {
                        tracing::info!(device = %a.device_id, pod = %pod, "allocation in use by a pod");
                    }
                    a.pod = Some(pod.clone());
                    a.missed = 0;
                    changed = true;
                }
            }
            None if now_ms.saturating_sub(a.allocated_at_ms) < grace.as_millis() as u64 => {}
            None => {
                a.missed += 1;
                changed = true;
                if a.missed >= MISSES {
                    release.push(a.device_id.clone());
                }
            }
        }
    }
    (release, changed)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Polls PodResources at `socket` every `every` until `stop`, releasing
/// what [`decide`] says; `changed` is woken after a release.
pub async fn run<P: Pool>(
    socket: &Path,
    every: Duration,
    grace: Duration,
    pool: Arc<P>,
    state: Arc<Mutex<Allocations>>,
    changed: Arc<tokio::sync::Notify>,
    stop: CancellationToken,
) {
    let mut last_error: Option<ListError> = None;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        let listed = match in_use(socket).await {
            Ok(l) => {
                if last_error.take().is_some() {
                    tracing::info!(socket = %socket.display(), "the kubelet's PodResources answer again");
                }
                l
            }
            Err(e) => {
                if last_error.as_ref() != Some(&e) {
                    tracing::warn!(socket = %socket.display(), "cannot read the kubelet's PodResources (allocations are kept meanwhile): {e}");
                    last_error = Some(e);
                }
                continue;
            }
        };
        let mut state = state.lock().await;
        let (release, mut changed_state) = decide(state.all_mut(), &listed, now_ms(), grace);
        let mut released_any = false;
        for id in release {
            let Some(a) = state.get(&id).cloned() else {
                continue;
            };
            match pool.release(&id, &a.token).await {
                Ok(_) | Err(PoolError::Refused { .. }) => {
                    state.remove(&id);
                    changed_state = true;
                    released_any = true;
                    let pod = a
                        .pod
                        .map(|p| p.to_string())
                        .unwrap_or_else(|| "a pod that never started".into());
                    tracing::info!(device = %id, resource = %a.resource, %pod, "the pod's allocation ended; device released");
                }
                Err(e) => {
                    tracing::warn!(device = %id, "releasing the device failed (trying again): {e}");
                }
            }
        }
        if changed_state && let Err(e) = state.save() {
            tracing::error!("{e}");
        }
        drop(state);
        if released_any {
            changed.notify_one();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(id: &str, at: u64) -> Allocation {
        Allocation {
            device_id: id.into(),
            resource: "devicerail.dev/mock".into(),
            token: crate::token::fresh().expect("token"),
            allocated_at_ms: at,
            pod: None,
            missed: 0,
        }
    }

    const GRACE: Duration = Duration::from_secs(10);

    #[test]
    fn a_device_is_released_after_two_polls_without_its_pod() {
        let pod = PodRef {
            namespace: "ci".into(),
            name: "job-1".into(),
            container: "run".into(),
        };
        let mut allocs = vec![alloc("a", 0), alloc("b", 0), alloc("young", 95_000)];
        let mut listed = InUse::new();
        listed.insert(("devicerail.dev/mock".into(), "a".into()), pod.clone());
        let (release, changed) = decide(&mut allocs, &listed, 100_000, GRACE);
        assert!(release.is_empty() && changed);
        assert_eq!(allocs[0].pod.as_ref(), Some(&pod));
        assert_eq!((allocs[1].missed, allocs[2].missed), (1, 0));
        // The pod of `a` ends: a listing without it.
        let (release, _) = decide(&mut allocs, &InUse::new(), 102_000, GRACE);
        assert_eq!(release, ["b"]);
        let (release, _) = decide(&mut allocs, &InUse::new(), 104_000, GRACE);
        assert_eq!(
            release,
            ["a", "b"],
            "young is still within the grace: {allocs:?}"
        );
        // Listed again before the second miss: counting starts over.
        let mut allocs = vec![alloc("c", 0)];
        decide(&mut allocs, &InUse::new(), 100_000, GRACE);
        let mut listed = InUse::new();
        listed.insert(("devicerail.dev/mock".into(), "c".into()), pod);
        decide(&mut allocs, &listed, 102_000, GRACE);
        assert_eq!(allocs[0].missed, 0);
        // Another resource's device of the same id is not ours.
        let mut other = InUse::new();
        other.insert(
            ("example.com/x".into(), "c".into()),
            allocs[0].pod.clone().expect("pod"),
        );
        decide(&mut allocs, &other, 104_000, GRACE);
        assert_eq!(allocs[0].missed, 1);
    }
}
