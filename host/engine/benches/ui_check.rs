//! What a driver's observation with its UI tree costs the host, on a small
//! screen (the mock's sign-in, 12 nodes) and on 1,000 nodes: the worker
//! forwards the driver's JSON unread; the host decodes it with every bound
//! the protocol's types enforce and encodes the tree as the Observation's
//! snapshot (`HostObservation::from_driver_json`, what an inline plugin's
//! observation costs too).
//!
//! Run: `cargo bench -p devicerail-host-engine --bench ui_check`.

#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use devicerail_host_engine::observation::HostObservation;
use devicerail_host_plugin_api::{ObservationWire, UiTree};
use devicerail_host_protocol::{ObservationId, UiContextRef, UiNode, Viewport};
use serde_json::json;

fn tree(nodes: usize) -> UiTree {
    let context: UiContextRef = serde_json::from_value(
        json!({ "contextKind": "native", "contextId": "app", "documentEpoch": "1" }),
    )
    .expect("context");
    let mut list: Vec<UiNode> = vec![
        serde_json::from_value(json!({ "stableNodeId": "root", "role": "window" })).expect("root"),
    ];
    for i in 1..nodes {
        list.push(
            serde_json::from_value(json!({
                "stableNodeId": format!("n{i}"),
                "parentStableNodeId": "root",
                "role": "button",
                "name": format!("Row {i}"),
                "identifier": format!("row-{i}"),
                "bounds": { "x": 0, "y": i * 40, "width": 720, "height": 40 },
                "enabled": true,
            }))
            .expect("node"),
        );
    }
    UiTree {
        context,
        root_stable_node_ids: vec!["root".into()],
        nodes: list,
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("ui_snapshot");
    for nodes in [12usize, 1000] {
        let id = ObservationId::new_v7();
        let wire = ObservationWire {
            viewport: Viewport {
                width: 720,
                height: 1280,
                scale_factor: 2.0,
            },
            metadata: serde_json::Map::new(),
            ui_tree: Some(tree(nodes)),
        };
        let text = serde_json::to_vec(&wire).expect("json");
        g.bench_with_input(
            BenchmarkId::new("decode + encode (host)", nodes),
            &text,
            |b, t| {
                b.iter(|| {
                    HostObservation::from_driver_json(t, None, id, true)
                        .expect("readable")
                        .ui
                        .expect("a tree")
                        .expect("valid")
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
