//! The symbols a changed file's hunks touch: each side of the file is
//! extracted as the graph extracts it, and its definitions are matched
//! against the lines the hunks removed and added. A definition only on the
//! new side is added, only on the old removed, on both modified; a removed
//! and an added one of the same kind and the same body are a rename.

use super::diff::{FileChange, FileStatus};
use crate::graph::extract::{self, Language, NodeRecord};

/// The kinds of definition a change is reported for.
const DEFINITIONS: &[&str] = &["class", "interface", "function", "method", "variable"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Added,
    Modified,
    Removed,
    /// From the uid it had.
    Renamed(String),
}

impl Change {
    pub fn as_str(&self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Modified => "modified",
            Change::Removed => "removed",
            Change::Renamed(_) => "renamed",
        }
    }
}

/// A definition the change touched, as the side that has it describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Touched {
    pub uid: String,
    pub kind: String,
    pub name: String,
    pub path: String,
    pub line: u32,
    pub change: Change,
}

/// The definitions in `text` (the file at `path`), or none for a language
/// the graph does not read.
fn definitions(path: &str, text: Option<&str>) -> Vec<NodeRecord> {
    let (Some(language), Some(text)) = (Language::of(path), text) else {
        return Vec::new();
    };
    extract::extract(path, language, text)
        .nodes
        .into_iter()
        .filter(|node| DEFINITIONS.contains(&node.kind))
        .collect()
}

fn overlaps(node: &NodeRecord, lines: &[(u32, u32)]) -> bool {
    lines
        .iter()
        .any(|(start, end)| node.line_start <= *end && *start <= node.line_end)
}

/// Of `nodes`, those no other of them lies inside: a change inside a
/// method is the method's, not its class's.
fn innermost(nodes: Vec<&NodeRecord>) -> Vec<&NodeRecord> {
    let inside = |outer: &NodeRecord, inner: &NodeRecord| {
        outer.uid != inner.uid
            && outer.line_start <= inner.line_start
            && inner.line_end <= outer.line_end
    };
    nodes
        .iter()
        .filter(|outer| !nodes.iter().any(|inner| inside(outer, inner)))
        .copied()
        .collect()
}

/// Of one side's definitions, those its hunks touch (all of a whole added
/// or deleted file), innermost.
fn touched_on<'a>(
    nodes: &'a [NodeRecord],
    lines: &[(u32, u32)],
    whole: bool,
) -> Vec<&'a NodeRecord> {
    if whole {
        return nodes.iter().collect();
    }
    innermost(nodes.iter().filter(|n| overlaps(n, lines)).collect())
}

/// The lines of a definition after its first (its name's), trimmed: what a
/// rename leaves as it was.
fn body(text: Option<&str>, node: &NodeRecord) -> Vec<String> {
    text.unwrap_or_default()
        .lines()
        .skip(node.line_start as usize)
        .take(node.line_end.saturating_sub(node.line_start) as usize)
        .map(|line| line.trim().to_string())
        .collect()
}

/// The definitions `file`'s change touched, given each side's text.
pub fn touched(file: &FileChange, old: Option<&str>, new: Option<&str>) -> Vec<Touched> {
    let old_path = file.old_path.as_deref().unwrap_or(&file.path);
    let before = definitions(old_path, old);
    let after = definitions(&file.path, new);
    let removed_side = touched_on(&before, &file.old_lines, file.status == FileStatus::Deleted);
    let added_side = touched_on(&after, &file.new_lines, file.status == FileStatus::Added);
    let touch = |node: &NodeRecord, path: &str, change: Change| Touched {
        uid: node.uid.clone(),
        kind: node.kind.to_string(),
        name: node.label.clone(),
        path: path.to_string(),
        line: node.line_start,
        change,
    };
    // a renamed file's definitions keep their names: same name, same kind
    let same_place = |a: &NodeRecord, b: &NodeRecord| {
        if file.old_path.is_some() {
            a.label == b.label && a.kind == b.kind
        } else {
            a.uid == b.uid
        }
    };
    let mut found: Vec<Touched> = Vec::new();
    for node in &added_side {
        let change = if before.iter().any(|old| same_place(old, node)) {
            Change::Modified
        } else {
            Change::Added
        };
        found.push(touch(node, &file.path, change));
    }
    let mut removed: Vec<&NodeRecord> = Vec::new();
    for node in &removed_side {
        match after.iter().find(|new| same_place(node, new)) {
            // lines removed inside a definition that stays
            Some(kept) if !found.iter().any(|t| t.uid == kept.uid) => {
                found.push(touch(kept, &file.path, Change::Modified));
            }
            Some(_) => {}
            None => removed.push(node),
        }
    }
    for node in removed {
        let was = body(old, node);
        let partner = found.iter_mut().find(|t| {
            t.change == Change::Added
                && t.kind == node.kind
                && after.iter().any(|n| n.uid == t.uid && body(new, n) == was)
        });
        match partner {
            Some(renamed) => renamed.change = Change::Renamed(node.uid.clone()),
            None => found.push(touch(node, old_path, Change::Removed)),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(old: Vec<(u32, u32)>, new: Vec<(u32, u32)>) -> FileChange {
        FileChange {
            path: "app.py".into(),
            old_path: None,
            status: FileStatus::Modified,
            binary: false,
            old_lines: old,
            new_lines: new,
        }
    }

    fn summary(found: &[Touched]) -> Vec<String> {
        found
            .iter()
            .map(|t| match &t.change {
                Change::Renamed(from) => format!("renamed {} from {from}", t.name),
                other => format!("{} {}", other.as_str(), t.name),
            })
            .collect()
    }

    #[test]
    fn a_hunk_inside_a_method_is_the_methods_and_a_new_function_is_added() {
        let old = "class Store:\n    def save(self):\n        return 1\n";
        let new =
            "class Store:\n    def save(self):\n        return 2\n\ndef helper():\n    return 3\n";
        let found = touched(
            &change(vec![(3, 3)], vec![(3, 3), (4, 6)]),
            Some(old),
            Some(new),
        );
        assert_eq!(summary(&found), ["modified save", "added helper"]);
    }

    #[test]
    fn a_renamed_method_is_a_rename_within_its_class() {
        let old = "class Store:\n    def save(self):\n        return 1\n";
        let new = "class Store:\n    def persist(self):\n        return 1\n";
        let found = touched(&change(vec![(2, 2)], vec![(2, 2)]), Some(old), Some(new));
        assert_eq!(
            summary(&found),
            ["renamed persist from code:method:app.py::Store.save"]
        );
    }

    #[test]
    fn a_removed_function_is_removed_and_a_renamed_one_is_a_rename() {
        let old =
            "def keep():\n    pass\n\ndef gone():\n    return 1\n\ndef old_name():\n    return 2\n";
        let new = "def keep():\n    pass\n\ndef new_name():\n    return 2\n";
        let found = touched(&change(vec![(4, 8)], vec![(4, 5)]), Some(old), Some(new));
        assert_eq!(
            summary(&found),
            [
                "renamed new_name from code:function:app.py::old_name",
                "removed gone"
            ]
        );
    }
}
