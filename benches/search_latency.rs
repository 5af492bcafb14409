//! In-process latency of `cos_search` (the tool runtime's call, as every
//! front door makes it) per query class, on an already indexed repository.
//! Prints one JSON object: per class, the median, 99th percentile and mean in
//! milliseconds and the hits found. `bench/bench-search.py` runs it:
//! `cargo bench --bench search_latency -- REPO STATE QUERIES.json ROUNDS`,
//! where QUERIES.json maps a class name to a list of queries.
//!
//! With `SEARCH_BENCH_ONE_ROUND` set it asks every query once to warm up,
//! then once more inside `one_round` and prints nothing: under callgrind
//! (`bench/search-instructions.sh`), collecting only in that function
//! counts the instructions of the queries alone, a figure this machine's
//! noise cannot move.

// the runtime's error is the wire error (see src/lib.rs)
#![allow(clippy::result_large_err)]

use cos_hub::envelope::ErrorBody;
use cos_hub::hub;
use cos_hub::tools::{Hub, HubConfig, Source, Unwatched};
use serde_json::{Map, Value, json};
use std::time::Instant;

fn percentile(sorted: &[f64], share: f64) -> f64 {
    let at = ((sorted.len() as f64 - 1.0) * share).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Every query of every class, once.
#[inline(never)]
fn one_round(classes: &Map<String, Value>, call: &dyn Fn(&str) -> Result<u64, ErrorBody>) {
    for q in classes.values().flat_map(queries_of) {
        let _ = std::hint::black_box(call(q));
    }
}

fn queries_of(list: &Value) -> impl Iterator<Item = &str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn main() {
    let arguments: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let [repo, state, queries, rounds] = arguments.as_slice() else {
        eprintln!("usage: search_latency REPO STATE QUERIES.json ROUNDS");
        std::process::exit(2);
    };
    let rounds: usize = rounds.parse().expect("ROUNDS is a number");
    let classes: Map<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(queries).expect("the queries file"))
            .expect("the queries file is a JSON object");
    let hub = Hub::open(
        HubConfig::for_repo(repo.as_ref(), Some(state.into())),
        hub::default_registry(),
    )
    .expect("the hub opens");
    let call = |q: &str| {
        hub.call_named_here("cos_search", json!({"q": q}), Source::Cli, &Unwatched)
            .map(|answer| answer.data["total"].as_u64().unwrap_or(0))
    };
    // the first call brings the index level with the graph, board and documents
    let _ = call("warm");
    if std::env::var_os("SEARCH_BENCH_ONE_ROUND").is_some() {
        for q in classes.values().flat_map(queries_of) {
            let _ = call(q);
        }
        one_round(&classes, &call);
        return;
    }
    let mut report = Map::new();
    for (class, list) in &classes {
        let list: Vec<&str> = queries_of(list).collect();
        let mut times = Vec::new();
        let mut hits = 0;
        for _ in 0..rounds {
            for q in &list {
                let started = Instant::now();
                match call(q) {
                    Ok(total) => hits += total,
                    Err(error) => panic!("{q}: {}", error.message),
                }
                times.push(started.elapsed().as_secs_f64() * 1000.0);
            }
        }
        times.sort_by(f64::total_cmp);
        report.insert(
            class.clone(),
            json!({
                "p50_ms": percentile(&times, 0.5),
                "p99_ms": percentile(&times, 0.99),
                // what throughput follows: a class's slow calls weigh in full
                "mean_ms": times.iter().sum::<f64>() / times.len().max(1) as f64,
                "calls": times.len(),
                "hits_per_call": hits as f64 / times.len().max(1) as f64,
            }),
        );
    }
    println!("{}", Value::Object(report));
}
