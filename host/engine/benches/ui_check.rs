//! What a UI tree from a plugin's worker costs on each side, on a small
//! screen (the mock's sign-in, 12 nodes) and on 1,000 nodes: the worker
//! only finds the tree's extent in the driver's JSON (a syntax scan, no
//! allocation); the host decodes it with every bound the protocol's types
//! enforce and encodes it as the Observation's snapshot
//! (`EncodedUi::from_driver_json`, what an inline plugin's tree costs too).
//!
//! Run: `cargo bench -p devicerail-host-engine --bench ui_check`.

#![allow(missing_docs)]

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use devicerail_host_engine::observation::EncodedUi;
use devicerail_host_plugin_api::UiTree;
use devicerail_host_protocol::{ObservationId, UiContextRef, UiNode};
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
        let text = serde_json::to_vec(&tree(nodes)).expect("json");
        g.bench_with_input(BenchmarkId::new("extent (worker)", nodes), &text, |b, t| {
            b.iter(|| serde_json::from_slice::<&serde_json::value::RawValue>(t).expect("json"))
        });
        g.bench_with_input(
            BenchmarkId::new("decode + encode (host)", nodes),
            &text,
            |b, t| {
                b.iter(|| {
                    EncodedUi::from_driver_json(t, id)
                        .expect("readable")
                        .expect("valid")
                })
            },
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
