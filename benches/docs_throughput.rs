//! Durable document patches per second, in process: 8 writers, each patching
//! its own document through the tool runtime (`cos_docs_patch`, the same call
//! every front door makes), every patch fully durable (the new file and its
//! folder fsynced, the history committed at synchronous = FULL). Prints the
//! median of 3 runs. `cargo bench --bench docs_throughput [-- WRITERS PATCHES]`.

use cos_hub::docs::model::Base;
use cos_hub::docs::patch::Operation;
use cos_hub::docs::tools::{DocCreateInput, DocsCreate, DocsPatch, PatchInput};
use cos_hub::hub;
use cos_hub::tools::{Hub, HubConfig, Source, Unwatched};
use std::time::Instant;

fn run(writers: usize, patches: usize) -> f64 {
    let repo = tempfile::tempdir().expect("a temporary repository");
    let hub = Hub::open(
        HubConfig::for_repo(repo.path(), None),
        hub::default_registry(),
    )
    .expect("the hub opens");
    let mut bases = Vec::new();
    for writer in 0..writers {
        let created = hub
            .call_here::<DocsCreate>(
                DocCreateInput {
                    mount: "docs".into(),
                    path: format!("w{writer}.md"),
                    content: "# Log\n## Entries\n".into(),
                    request_id: format!("create-{writer}"),
                    actor: None,
                },
                Source::Cli,
                &Unwatched,
            )
            .expect("created");
        let document = created.data.document.expect("an identity");
        bases.push(Base {
            rev: document.rev,
            hash: document.hash,
        });
    }
    let started = Instant::now();
    std::thread::scope(|scope| {
        for (writer, base) in bases.into_iter().enumerate() {
            let hub = hub.clone();
            scope.spawn(move || {
                let mut base = base;
                for n in 0..patches {
                    let answer = hub
                        .call_here::<DocsPatch>(
                            PatchInput {
                                mount: "docs".into(),
                                path: format!("w{writer}.md"),
                                base: base.clone(),
                                request_id: format!("p-{writer}-{n}"),
                                operations: vec![Operation::AppendToSection {
                                    section: "Entries".into(),
                                    content: format!("entry {n}"),
                                }],
                                actor: None,
                            },
                            Source::Cli,
                            &Unwatched,
                        )
                        .expect("patched");
                    let document = answer.data.document.expect("an identity");
                    base = Base {
                        rev: document.rev,
                        hash: document.hash,
                    };
                }
            });
        }
    });
    (writers * patches) as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let writers = numbers.first().copied().unwrap_or(8);
    let patches = numbers.get(1).copied().unwrap_or(250);
    let mut rates: Vec<f64> = (0..3).map(|_| run(writers, patches)).collect();
    rates.sort_by(f64::total_cmp);
    println!(
        "docs_throughput: {writers} writers x {patches} durable patches: median {:.0} patches/s (runs: {})",
        rates[1],
        rates
            .iter()
            .map(|r| format!("{r:.0}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
