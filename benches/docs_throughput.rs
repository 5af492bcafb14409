//! Durable document patches per second, in process: 8 writers, each patching
//! its own document through the tool runtime (`cos_docs_patch`, the same call
//! every front door makes), every patch fully durable (the new file and its
//! folder fsynced, the history committed at synchronous = FULL). Prints the
//! median of 3 runs. `cargo bench --bench docs_throughput [-- WRITERS PATCHES]`.
//!
//! This machine's disk changes speed by 2x within an hour, so each run is
//! paired with the filesystem's own ceiling for the same file work, taken
//! right before it: as many writers in one folder, each replacing its file
//! the way a patch is published (a new file written and fsynced, renamed
//! over, the folder fsynced), with no database and nothing else. The share
//! of that ceiling the hub reaches is comparable across hours; the rate alone
//! is not.

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

/// Durable file replacements per second with nothing around them (see the
/// module's comment): the ceiling under `run`.
fn file_ceiling(writers: usize, replacements: usize) -> f64 {
    use std::io::Write;
    let folder = tempfile::tempdir().expect("a temporary folder");
    let root = folder.path();
    let content = vec![b'x'; 2048];
    let started = Instant::now();
    std::thread::scope(|scope| {
        for writer in 0..writers {
            let content = &content;
            scope.spawn(move || {
                let target = root.join(format!("w{writer}.md"));
                let directory = std::fs::File::open(root).expect("the folder opens");
                for n in 0..replacements {
                    let temp = root.join(format!(".w{writer}.{n}.tmp"));
                    let mut file = std::fs::File::create_new(&temp).expect("a new file");
                    file.write_all(content).expect("written");
                    file.sync_all().expect("synced");
                    drop(file);
                    std::fs::rename(&temp, &target).expect("renamed");
                    directory.sync_all().expect("the folder synced");
                }
            });
        }
    });
    (writers * replacements) as f64 / started.elapsed().as_secs_f64()
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(f64::total_cmp);
    rates[rates.len() / 2]
}

fn main() {
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let writers = numbers.first().copied().unwrap_or(8);
    let patches = numbers.get(1).copied().unwrap_or(250);
    let (ceilings, rates): (Vec<f64>, Vec<f64>) = (0..3)
        .map(|_| (file_ceiling(writers, patches), run(writers, patches)))
        .unzip();
    let shares: Vec<f64> = ceilings.iter().zip(&rates).map(|(c, r)| r / c).collect();
    let listed = |values: &[f64], scale: f64| {
        values
            .iter()
            .map(|v| format!("{:.0}", v * scale))
            .collect::<Vec<_>>()
            .join(", ")
    };
    println!(
        "docs_throughput: {writers} writers x {patches} durable patches: median {:.0} patches/s (runs: {}); \
         the filesystem's ceiling for the same file work just before each: median {:.0}/s (runs: {}); \
         share of it: median {:.0} % (runs: {})",
        median(rates.clone()),
        listed(&rates, 1.0),
        median(ceilings.clone()),
        listed(&ceilings, 1.0),
        median(shares.clone()) * 100.0,
        listed(&shares, 100.0),
    );
}
