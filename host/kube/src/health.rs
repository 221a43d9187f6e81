//! What each resource's `ListAndWatch` reports: the devices of its
//! platform, each `Healthy` or `Unhealthy`. Pure functions of the host's
//! view and our allocations, so the rules are tested here:
//!
//! * a device its driver cannot serve (its plugin's worker is down) is
//!   unhealthy;
//! * a device held by a connection outside Kubernetes, or reserved by
//!   someone else, is unhealthy (so it is not offered; capacity stays);
//! * a device we reserved for a pod stays healthy, taken or not (the
//!   kubelet counts it as allocated);
//! * a device seen before that the host no longer lists, or every device
//!   while the host is unreachable, is unhealthy.

use std::collections::{BTreeMap, HashSet};

use crate::api::deviceplugin::Device;
use crate::config::Resource;
use crate::pool::{Holder, HostView, ViewDevice};

/// The kubelet's health strings.
pub const HEALTHY: &str = "Healthy";
/// See [`HEALTHY`].
pub const UNHEALTHY: &str = "Unhealthy";

/// Whether `d` may be offered (or stays allocated); `ours` when our
/// allocations include it.
pub fn healthy(d: &ViewDevice, ours: bool) -> bool {
    d.available
        && match &d.holder {
            Holder::Free => true,
            Holder::Reserved { .. } => ours,
            Holder::Connection { .. } => false,
        }
}

/// Devices seen so far, by id, with their resource: they stay listed
/// (unhealthy) when they disappear.
pub type Known = BTreeMap<String, String>;

/// Each resource's device list for `view` (`None`: the host is
/// unreachable), sorted by id. `known` is updated with what `view` shows.
pub fn lists(
    view: Option<&HostView>,
    resources: &[Resource],
    ours: &HashSet<String>,
    known: &mut Known,
) -> BTreeMap<String, Vec<Device>> {
    let mut out: BTreeMap<String, BTreeMap<String, bool>> = resources
        .iter()
        .map(|r| (r.name.clone(), BTreeMap::new()))
        .collect();
    if let Some(view) = view {
        for d in &view.devices {
            let Some(r) = resources.iter().find(|r| r.platform == d.platform) else {
                continue;
            };
            known.insert(d.id.clone(), r.name.clone());
            if let Some(list) = out.get_mut(&r.name) {
                list.insert(d.id.clone(), healthy(d, ours.contains(&d.id)));
            }
        }
    }
    for (id, resource) in known.iter() {
        if let Some(list) = out.get_mut(resource) {
            list.entry(id.clone()).or_insert(false);
        }
    }
    out.into_iter()
        .map(|(r, devices)| {
            let devices = devices
                .into_iter()
                .map(|(id, ok)| Device {
                    id,
                    health: if ok { HEALTHY } else { UNHEALTHY }.to_owned(),
                    topology: None,
                })
                .collect();
            (r, devices)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(id: &str, platform: &str, available: bool, holder: Holder) -> ViewDevice {
        ViewDevice {
            id: id.into(),
            platform: platform.into(),
            available,
            unavailable_reason: None,
            holder,
        }
    }

    fn health(lists: &BTreeMap<String, Vec<Device>>, r: &str) -> Vec<(String, String)> {
        lists[r]
            .iter()
            .map(|d| (d.id.clone(), d.health.clone()))
            .collect()
    }

    #[test]
    fn the_rules() {
        let resources = vec![
            Resource {
                platform: "mock".into(),
                name: "devicerail.dev/mock".into(),
            },
            Resource {
                platform: "web".into(),
                name: "devicerail.dev/browser".into(),
            },
        ];
        let reserved = |taken| Holder::Reserved {
            label: "kube".into(),
            taken,
        };
        let view = HostView {
            devices: vec![
                dev("free", "mock", true, Holder::Free),
                dev("down", "mock", false, Holder::Free),
                dev("outside", "mock", true, Holder::Connection { client: None }),
                dev("ours", "mock", true, reserved(false)),
                dev("ours-taken", "mock", true, reserved(true)),
                dev("theirs", "mock", true, reserved(false)),
                dev("chrome", "web", true, Holder::Free),
                dev("phone", "android", true, Holder::Free),
            ],
        };
        let ours: HashSet<String> = ["ours".into(), "ours-taken".into()].into();
        let mut known = Known::new();
        let l = lists(Some(&view), &resources, &ours, &mut known);
        let h = |id: &str, ok: bool| {
            (
                id.to_owned(),
                if ok { HEALTHY } else { UNHEALTHY }.to_owned(),
            )
        };
        assert_eq!(
            health(&l, "devicerail.dev/mock"),
            [
                h("down", false),
                h("free", true),
                h("ours", true),
                h("ours-taken", true),
                h("outside", false),
                h("theirs", false),
            ]
        );
        assert_eq!(health(&l, "devicerail.dev/browser"), [h("chrome", true)]);
        assert!(!known.contains_key("phone"), "no resource for android");
        // A device that disappears stays listed, unhealthy; all do when
        // the host is unreachable.
        let gone = HostView {
            devices: vec![dev("free", "mock", true, Holder::Free)],
        };
        let l = lists(Some(&gone), &resources, &ours, &mut known);
        assert_eq!(l["devicerail.dev/mock"].len(), 6);
        assert_eq!(health(&l, "devicerail.dev/mock")[1], h("free", true));
        assert_eq!(health(&l, "devicerail.dev/mock")[2], h("ours", false));
        let l = lists(None, &resources, &ours, &mut known);
        assert!(
            l["devicerail.dev/browser"]
                .iter()
                .all(|d| d.health == UNHEALTHY)
        );
    }
}
