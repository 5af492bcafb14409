//! What ranking asks of an item whatever the query: whether it is a
//! definition, a task or a test's, how much its kind weighs, and its name
//! and file's name as queries are compared with them. Worked out once per
//! item (the word index keeps items across queries); knows nothing of
//! queries.

use crate::search::query::tokens;

/// What ranking asks of an item whatever the query.
#[derive(Debug, Clone, PartialEq)]
pub struct Standing {
    /// A symbol other than a file: an exact name match is its definition.
    pub definition: bool,
    pub task: bool,
    /// A test's, as its area says.
    pub test: bool,
    pub weight: i32,
    /// The name's parts run together.
    pub folded_name: Box<str>,
    /// A file's name without its extension, folded; None for anything else.
    pub folded_stem: Option<Box<str>>,
    /// The identifier parts of its file's name, joined by single spaces.
    pub file_stem_parts: Box<str>,
}

impl Standing {
    /// An item's, from what its corpus holds and the item's kind, name,
    /// name's parts (single spaces between them), path and test flag.
    pub fn of(holds: Holds, item: Of) -> Standing {
        let Of {
            kind,
            name,
            name_parts,
            path,
            test,
        } = item;
        let file = kind == "file";
        let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
        Standing {
            definition: holds == Holds::Definitions && !file,
            task: holds == Holds::Tasks,
            test,
            weight: kind_weight(kind),
            folded_name: name_parts.split(' ').collect::<String>().into(),
            folded_stem: file.then(|| tokens::folded(stem).into()),
            file_stem_parts: file_stem_parts(path).join(" ").into(),
        }
    }
}

/// The parts of an item a standing is worked out from.
pub struct Of<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub name_parts: &'a str,
    pub path: Option<&'a str>,
    pub test: bool,
}

/// What an item's corpus holds, as ranking tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holds {
    /// Definitions: an exact name match is the definition.
    Definitions,
    /// Tasks: an id is a name.
    Tasks,
    Other,
}

impl Holds {
    pub fn of(opens: crate::tools::searchable::Opens, definitions: bool) -> Holds {
        match (opens, definitions) {
            (_, true) => Holds::Definitions,
            (crate::tools::searchable::Opens::Task, _) => Holds::Tasks,
            _ => Holds::Other,
        }
    }
}

/// How much a kind weighs among hits of one rule.
pub fn kind_weight(kind: &str) -> i32 {
    match kind {
        "class" | "interface" => 8,
        "function" | "method" => 7,
        "module" => 6,
        "heading" | "task" => 5,
        "file" => 4,
        "variable" => 2,
        _ => 1,
    }
}

/// The identifier parts of a path's file name without its extension.
fn file_stem_parts(path: Option<&str>) -> Vec<String> {
    let file = path.and_then(|p| p.rsplit('/').next()).unwrap_or("");
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    tokens::all_parts(stem)
}
