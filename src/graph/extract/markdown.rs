//! Markdown: headings become nodes under their file, links outside code
//! become references to resolve.

use tree_sitter::{Node, Parser};

use super::{EdgeRecord, Extraction, NodeRecord, Reference};
use crate::text_lines::{LineCounter, line_breaks};

/// A heading's anchor, as GitHub makes it: lowercase, spaces to dashes, punctuation dropped.
pub fn slug(heading: &str) -> String {
    let mut slug = String::new();
    for c in heading.trim().to_lowercase().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            slug.push(c);
        } else if c == ' ' {
            slug.push('-');
        }
    }
    slug
}

pub(super) fn extract(out: &mut Extraction, path: &str, file: &str, text: &str) {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_md::LANGUAGE.into())
        .is_err()
    {
        out.parse_errors += 1;
        return;
    }
    let Some(tree) = parser.parse(text, None) else {
        out.parse_errors += 1;
        return;
    };
    let mut stack = vec![tree.root_node()];
    let mut code_ranges = Vec::new();
    // by lookup: a file may hold tens of thousands of headings
    let mut known: std::collections::HashSet<String> =
        out.nodes.iter().map(|n| n.uid.clone()).collect();
    // headings come top to bottom: their lines are counted once along the text
    let mut lines = LineCounter::new(text);
    while let Some(node) = stack.pop() {
        match node.kind() {
            "atx_heading" | "setext_heading" => {
                let raw = node.utf8_text(text.as_bytes()).unwrap_or("");
                let title = crate::text_lines::lines(raw)
                    .next()
                    .unwrap_or("")
                    .trim_start_matches('#')
                    .trim()
                    .to_string();
                if !title.is_empty() {
                    let uid = format!("doc:heading:{path}#{}", slug(&title));
                    let (line_start, line_end) = heading_lines(text, node, &mut lines);
                    if known.insert(uid.clone()) {
                        out.nodes.push(NodeRecord {
                            uid: uid.clone(),
                            kind: "doc_heading",
                            label: title,
                            line_start,
                            line_end,
                        });
                        out.edges.push(EdgeRecord {
                            source: file.to_string(),
                            target: uid,
                            kind: "contains",
                        });
                    }
                }
            }
            "fenced_code_block" | "indented_code_block" => code_ranges.push(node.byte_range()),
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node> = node.children(&mut cursor).collect();
        // reversed, so the stack visits the document top to bottom
        stack.extend(children.into_iter().rev());
    }
    for (offset, target) in markdown_links(text) {
        if in_code(&code_ranges, offset) || target.contains("://") || target.starts_with("mailto:")
        {
            continue;
        }
        out.references
            .push(Reference::plain(file.to_string(), "links_to", target));
    }
}

/// The first and last line of a heading as CommonMark counts lines (a lone
/// CR ends one too, where tree-sitter counts LF only), its own line break
/// not counted as a line of it.
fn heading_lines(text: &str, node: Node, lines: &mut LineCounter) -> (u32, u32) {
    let start = node.start_byte();
    let Some(heading) = text.get(start..node.end_byte()) else {
        return super::walk::line(node);
    };
    let end = start + heading.trim_end_matches(['\n', '\r']).len();
    let first = lines.line_at(start);
    let last = first + line_breaks(text, start, end);
    let number = |line: usize| u32::try_from(line).unwrap_or(u32::MAX);
    (number(first), number(last))
}

/// Whether `offset` lies in one of `ranges`: code blocks in document order,
/// none inside another (a link's check is a search, not a pass over them).
fn in_code(ranges: &[std::ops::Range<usize>], offset: usize) -> bool {
    let after = ranges.partition_point(|range| range.start <= offset);
    after > 0 && ranges[after - 1].contains(&offset)
}

/// `[text](target)` links outside code, as (byte offset, target).
fn markdown_links(text: &str) -> Vec<(usize, String)> {
    let mut links = Vec::new();
    let bytes = text.as_bytes();
    let mut index = 0;
    while let Some(found) = text[index..].find("](") {
        let start = index + found + 2;
        let Some(end) = text[start..].find(')') else {
            break;
        };
        let target = text[start..start + end]
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string();
        if !target.is_empty() && !target.contains('`') && bytes.get(index + found).is_some() {
            links.push((start, target));
        }
        index = start + end;
    }
    links
}
