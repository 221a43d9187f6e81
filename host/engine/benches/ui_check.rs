//! What checking a worker's UI snapshot costs the host, beside what
//! encoding it costs the worker: `EncodedUi::check` (parse with every
//! bound the protocol's types enforce, structure, node count, Observation
//! and context) on a small screen (the mock's sign-in, 12 nodes) and on
//! 1,000 nodes.
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
        let t = tree(nodes);
        g.bench_with_input(BenchmarkId::new("encode (worker)", nodes), &t, |b, t| {
            b.iter(|| EncodedUi::encode(t.clone(), id).expect("valid"))
        });
        let encoded = EncodedUi::encode(t, id).expect("valid");
        g.bench_with_input(BenchmarkId::new("check (host)", nodes), &encoded, |b, e| {
            b.iter(|| {
                EncodedUi::check(e.context.clone(), e.node_count, e.bytes.clone(), id)
                    .expect("valid")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
