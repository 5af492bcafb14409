//! Trimming a ~20 MB payload of 100,000 results to the agent budget, against one
//! `serde_json::to_vec` of the same payload, both measured by criterion in one run.
//! The target: trim ≤ 3× serialise. Run: `cargo bench --bench envelope_trim`
//! and divide the two estimates (the README quotes them).

use cos_hub::envelope::{self, Budget};
use criterion::{BatchSize, Criterion, criterion_group};
use serde_json::{Map, Value, json};

fn payload() -> Map<String, Value> {
    let results: Vec<Value> = (0..100_000)
        .map(|i| {
            json!({
                "uid": format!("code:function:src/module_{}/file_{}.py::Class{}.method_{i}", i % 97, i % 13, i % 7),
                "kind": "function",
                "score": 1.0 / (1.0 + i as f64),
                "path": format!("src/module_{}/file_{}.py", i % 97, i % 13),
                "line": i % 4000,
                "snippet": format!("def method_{i}(self, request, *args, **kwargs): return self.handle(request, args, kwargs)"),
            })
        })
        .collect();
    let count = results.len();
    match json!({"results": results, "count": count, "query": "handle request"}) {
        Value::Object(map) => map,
        _ => unreachable!(),
    }
}

fn bench(c: &mut Criterion) {
    let data = payload();
    let size = serde_json::to_vec(&data).map(|v| v.len()).unwrap_or(0);
    println!(
        "payload: {} results, {:.1} MB serialised",
        100_000,
        size as f64 / 1e6
    );
    let mut group = c.benchmark_group("envelope_trim");
    group.sample_size(10);
    group.bench_function("serde_json_to_vec", |b| {
        b.iter(|| serde_json::to_vec(&data))
    });
    group.bench_function("trim_to_agent_budget", |b| {
        b.iter_batched(
            || data.clone(),
            |d| envelope::ok(d, Some("search"), Budget::Agent),
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, bench);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
