//! `cos search "<query>"`: the search tool from the shell (the code index
//! brought up to date first, a shell having no watcher), as a readable
//! list (one hit a line: where, why, the snippet), or the envelope with `--json`.

use clap::Args;
use serde_json::{Value, json};

use super::{call, print_envelope};
use crate::envelope::Budget;
use crate::tools::Hub;

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// The query (see `cos_search`'s description: words, "phrases", prefix*, -not, /regex/, area:/kind:/path:/lang:/status:).
    /// It may start with an exclusion: cos search "-test parse".
    #[arg(allow_hyphen_values = true)]
    pub query: String,
    /// Hits to show, 1 to 200.
    #[arg(long, default_value_t = 20)]
    pub limit: u32,
    /// Continue after an earlier answer's next_cursor.
    #[arg(long)]
    pub cursor: Option<String>,
    /// auto (fused with semantic when an embedding model is set), lexical or semantic.
    #[arg(long, value_parser = ["auto", "lexical", "semantic"])]
    pub mode: Option<String>,
    /// Print the tool's envelope instead of the list.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: SearchArgs, hub: &Hub) -> i32 {
    super::refresh_code(hub);
    level_first(hub);
    let mut arguments = json!({"q": args.query, "limit": args.limit});
    if let Some(mode) = &args.mode {
        arguments["mode"] = json!(mode);
    }
    if let Some(cursor) = &args.cursor {
        arguments["cursor"] = json!(cursor);
    }
    if args.json {
        return match call(hub, "cos_search", arguments, Budget::None) {
            Ok(envelope) => print_envelope(&envelope),
            Err(code) => code,
        };
    }
    let envelope = match call(hub, "cos_search", arguments, Budget::None) {
        Ok(envelope) => envelope,
        Err(code) => return code,
    };
    if envelope["ok"] != Value::Bool(true) {
        eprintln!(
            "cos: {}",
            envelope["error"]["message"].as_str().unwrap_or("failed")
        );
        return 1;
    }
    print!("{}", render(&args.query, &envelope["data"]));
    let meta = &envelope["data"]["meta"];
    if let Some(mode) = meta["mode"].as_str().filter(|m| *m != "lexical") {
        println!(
            "mode: {mode} ({})",
            meta["mode_reason"].as_str().unwrap_or("")
        );
    }
    0
}

/// The search index is brought level before the query, with no time limit
/// (a shell has no follower to do it ahead, and a first build over a large
/// repository outlasts a query's 30 s); with an embedding model set, what
/// it holds gets its vectors too.
fn level_first(hub: &Hub) {
    match super::level_search(hub) {
        Ok(Some(report)) if report.embedded > 0 => {
            eprintln!(
                "cos: embedded {} first",
                super::counted(report.embedded as u64, "item")
            )
        }
        Ok(_) => {}
        Err(_) => {
            eprintln!("cos: the index could not be brought level first; searching what it holds")
        }
    }
}

/// The answer as lines a person reads.
fn render(query: &str, data: &Value) -> String {
    let mut out = String::new();
    let facets: Vec<String> = data["facets"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(area, count)| format!("{area} {count}"))
        .collect();
    out.push_str(&format!(
        "{}{} ({})\n",
        super::counted(data["total"].as_u64().unwrap_or(0), "hit"),
        if data["capped"] == json!(true) {
            " or more"
        } else {
            ""
        },
        facets.join(", "),
    ));
    for hit in data["hits"].as_array().into_iter().flatten() {
        let place = match (&hit["opens"]["location"], &hit["opens"]["task_id"]) {
            (Value::String(location), _) => location.clone(),
            (_, Value::String(task)) => task.clone(),
            _ => {
                let document = &hit["opens"]["document"];
                let place = format!(
                    "{}/{}",
                    document["mount"].as_str().unwrap_or(""),
                    document["path"].as_str().unwrap_or("")
                );
                match document["section"].as_str() {
                    Some(section) if !section.is_empty() => format!("{place}#{section}"),
                    _ => place,
                }
            }
        };
        out.push_str(&format!(
            "{:<8} {:<9} {}  [{}]\n         {}\n",
            hit["area"].as_str().unwrap_or(""),
            hit["kind"].as_str().unwrap_or(""),
            place,
            hit["why"].as_str().unwrap_or(""),
            hit["snippet"].as_str().unwrap_or("").trim(),
        ));
    }
    for note in data["notes"].as_array().into_iter().flatten() {
        out.push_str(&format!("note: {}\n", note.as_str().unwrap_or("")));
    }
    let close: Vec<&str> = data["did_you_mean"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if !close.is_empty() {
        out.push_str(&format!("did you mean: {}\n", close.join(", ")));
    }
    if let Some(cursor) = data["next_cursor"].as_str() {
        out.push_str(&format!("more: cos search {query:?} --cursor {cursor}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document_hit(section: &str) -> Value {
        json!({
            "area": "docs", "kind": "heading", "why": "name", "snippet": "# Retries",
            "opens": {"document": {"mount": "docs", "path": "adr/retries.md", "section": section}}
        })
    }

    #[test]
    fn the_list_counts_hits_agreeing_and_places_a_section_only_when_there_is_one() {
        let data = json!({
            "total": 2, "capped": false,
            "facets": {"symbols": 0, "code": 0, "docs": 2, "tasks": 0},
            "hits": [document_hit("retries"), document_hit("")],
            "notes": ["the code is not indexed yet"], "did_you_mean": [], "next_cursor": null
        });
        let lines: Vec<String> = render("retries", &data)
            .lines()
            .map(str::to_string)
            .collect();
        assert_eq!(lines[0], "2 hits (symbols 0, code 0, docs 2, tasks 0)");
        assert!(
            lines[1].contains(" docs/adr/retries.md#retries  [name]"),
            "{lines:?}"
        );
        assert!(
            lines[3].contains(" docs/adr/retries.md  [name]"),
            "{lines:?}"
        );
        assert_eq!(lines[5], "note: the code is not indexed yet");
        let one = json!({"total": 1, "capped": true, "facets": {}, "hits": []});
        assert!(render("x", &one).starts_with("1 hit or more ("));
    }
}
