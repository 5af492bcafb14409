//! Writers and readers of one document racing through the tool runtime that
//! every front door calls, in-process so the interleavings are tight: no
//! write in flight may pass for an outside edit, and no committed write may
//! lose its receipt to someone else finishing it.

use cos_hub::tools::{Hub, HubConfig, Source, Unwatched};
use serde_json::{Value, json};

const ROUNDS: usize = 4;
const WRITERS: usize = 8;
const EDITS: usize = 12;

fn call(hub: &Hub, name: &str, arguments: Value) -> Result<Value, cos_hub::envelope::ErrorBody> {
    hub.call_named_here(name, arguments, Source::Rest, &Unwatched)
        .map(|answer| serde_json::to_value(&answer.data).expect("answers are JSON"))
}

fn append_until_it_lands(hub: &Hub, writer: usize, edit: usize) -> String {
    let marker = format!("w{writer}-{edit}");
    for attempt in 0..500 {
        let read = call(
            hub,
            "cos_docs_read",
            json!({"mount": "docs", "path": "race.md"}),
        )
        .expect("reads succeed");
        let request_id = format!("{marker}-{attempt}");
        let patched = call(
            hub,
            "cos_docs_patch",
            json!({"mount": "docs", "path": "race.md", "request_id": request_id,
                   "base": {"rev": read["document"]["rev"], "hash": read["document"]["hash"]},
                   "operations": [{"op": "append_to_section", "section": "Log", "content": marker}]}),
        );
        match patched {
            Ok(_) => return request_id,
            Err(error) => assert_eq!(error.code.to_string(), "STALE_REVISION", "{error:?}"),
        }
    }
    panic!("{marker} never landed in 500 attempts");
}

#[test]
fn racing_writes_keep_every_edit_and_receipt_and_record_no_outside_edit() {
    for round in 0..ROUNDS {
        let repo = tempfile::tempdir().expect("temporary repository");
        let hub = Hub::open(
            HubConfig::for_repo(repo.path(), None),
            cos_hub::hub::default_registry(),
        )
        .expect("hub opens");
        call(
            &hub,
            "cos_docs_create",
            json!({"mount": "docs", "path": "race.md", "content": "# Race\n## Log\n", "request_id": "create"}),
        )
        .expect("create");
        let landed: Vec<String> = std::thread::scope(|scope| {
            let hub = &hub;
            let readers: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(move || {
                        for _ in 0..100 {
                            call(
                                hub,
                                "cos_docs_read",
                                json!({"mount": "docs", "path": "race.md"}),
                            )
                            .expect("read");
                            call(hub, "cos_docs_list", json!({"mount": "docs"})).expect("list");
                        }
                    })
                })
                .collect();
            let writers: Vec<_> = (0..WRITERS)
                .map(|writer| {
                    scope.spawn(move || {
                        (0..EDITS)
                            .map(|edit| append_until_it_lands(hub, writer, edit))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for reader in readers {
                reader.join().expect("reader");
            }
            writers
                .into_iter()
                .flat_map(|writer| writer.join().expect("writer"))
                .collect()
        });
        let history = call(
            &hub,
            "cos_docs_history",
            json!({"mount": "docs", "path": "race.md", "limit": 200}),
        )
        .expect("history");
        let ops: Vec<&str> = history["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|entry| entry["op"].as_str().unwrap_or("?"))
            .collect();
        assert_eq!(ops.len(), 1 + WRITERS * EDITS, "round {round}: {ops:?}");
        assert!(
            ops.iter().all(|op| *op != "external"),
            "round {round}: {ops:?}"
        );
        let text = std::fs::read_to_string(repo.path().join("docs/race.md")).expect("on disk");
        for writer in 0..WRITERS {
            for edit in 0..EDITS {
                let marker = format!("w{writer}-{edit}");
                assert_eq!(
                    text.lines().filter(|line| *line == marker).count(),
                    1,
                    "{marker}"
                );
            }
        }
        for request_id in landed {
            let receipt =
                call(&hub, "cos_docs_receipt", json!({"request_id": request_id})).expect("receipt");
            assert_eq!(receipt["state"], "committed", "{receipt}");
        }
    }
}
