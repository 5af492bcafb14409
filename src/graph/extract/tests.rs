//! The extractor over small files of every language it reads.

use super::*;

fn uids(extraction: &Extraction) -> Vec<&str> {
    extraction.nodes.iter().map(|n| n.uid.as_str()).collect()
}

/// The targets of a Markdown file's links, in order.
fn links(extraction: &Extraction) -> Vec<&str> {
    extraction
        .references
        .iter()
        .filter(|r| r.kind == "links_to")
        .map(|r| r.name.as_str())
        .collect()
}

#[test]
fn python_classes_methods_functions_imports_calls_bases() {
    let text = "import os\nfrom app.db import connect as db_connect\n\nclass Base:\n    pass\n\nclass Store(Base):\n    def save(self):\n        db_connect()\n        self.flush()\n\ndef main():\n    Store().save()\n";
    let e = extract("app/store.py", Language::Python, text);
    assert_eq!(
        uids(&e),
        [
            "code:file:app/store.py",
            "code:class:app/store.py::Base",
            "code:class:app/store.py::Store",
            "code:method:app/store.py::Store.save",
            "code:function:app/store.py::main"
        ]
    );
    assert!(e.edges.contains(&EdgeRecord {
        source: "code:class:app/store.py::Store".into(),
        target: "code:method:app/store.py::Store.save".into(),
        kind: "contains"
    }));
    let refs: Vec<(&str, &str, &str)> = e
        .references
        .iter()
        .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
        .collect();
    assert!(refs.contains(&("code:file:app/store.py", "imports", "os")));
    assert!(refs.contains(&("code:file:app/store.py", "imports", "app.db.connect")));
    assert!(refs.contains(&("code:class:app/store.py::Store", "inherits_from", "Base")));
    // the alias is followed to the bound symbol and module
    let aliased = e
        .references
        .iter()
        .find(|r| r.kind == "calls" && r.name == "connect")
        .map(|r| (r.source.as_str(), r.module.as_deref()));
    assert_eq!(
        aliased,
        Some(("code:method:app/store.py::Store.save", Some("app.db")))
    );
    assert!(refs.contains(&("code:method:app/store.py::Store.save", "calls", "flush")));
    assert!(refs.contains(&("code:function:app/store.py::main", "calls", "save")));
    assert_eq!(e.parse_errors, 0);
}

#[test]
fn rust_structs_traits_impls_and_calls() {
    let text = "use crate::store::Store;\n\npub trait Shape { fn area(&self) -> f64; }\n\npub struct Square { side: f64 }\n\nimpl Shape for Square {\n    fn area(&self) -> f64 { helper(self.side) }\n}\n\nfn helper(x: f64) -> f64 { x * x }\n";
    let e = extract("src/shape.rs", Language::Rust, text);
    let found = uids(&e);
    assert!(
        found.contains(&"code:interface:src/shape.rs::Shape"),
        "{found:?}"
    );
    assert!(found.contains(&"code:class:src/shape.rs::Square"));
    assert!(
        found.contains(&"code:method:src/shape.rs::Square.area"),
        "{found:?}"
    );
    assert!(found.contains(&"code:function:src/shape.rs::helper"));
    let refs: Vec<(&str, &str, &str)> = e
        .references
        .iter()
        .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
        .collect();
    assert!(
        refs.contains(&("code:class:src/shape.rs::Square", "implements", "Shape")),
        "{refs:?}"
    );
    assert!(
        refs.contains(&("code:method:src/shape.rs::Square.area", "calls", "helper")),
        "{refs:?}"
    );
    assert!(
        refs.contains(&("code:file:src/shape.rs", "imports", "crate.store.Store")),
        "{refs:?}"
    );
}

#[test]
fn markdown_headings_and_local_links() {
    let text = "# Guide\n\nSee [the API](api.md#errors) and [site](https://example.com).\n\n## Getting started\n\n```\n[not](a-link.md)\n```\n";
    let e = extract("docs/guide.md", Language::Markdown, text);
    assert_eq!(
        uids(&e),
        [
            "doc:file:docs/guide.md",
            "doc:heading:docs/guide.md#guide",
            "doc:heading:docs/guide.md#getting-started"
        ]
    );
    assert_eq!(links(&e), ["api.md#errors"]);
}

#[test]
fn markdown_headings_repeated_are_one_node_and_links_between_code_blocks_count() {
    let text = "# Setup\n```\n[a](in-first.md)\n```\n[b](between.md)\n\n    [c](indented.md)\n\n# Setup\n[d](after.md)\n```\n[e](in-last.md)\n```\n";
    let e = extract("docs/twice.md", Language::Markdown, text);
    assert_eq!(
        uids(&e),
        ["doc:file:docs/twice.md", "doc:heading:docs/twice.md#setup"]
    );
    assert_eq!(links(&e), ["between.md", "after.md"]);
}

#[test]
fn markdown_headings_are_on_the_lines_commonmark_counts_whatever_the_line_ending() {
    let heading_lines = |text: &str| -> Vec<(String, u32, u32)> {
        extract("docs/ends.md", Language::Markdown, text)
            .nodes
            .iter()
            .filter(|n| n.kind == "doc_heading")
            .map(|n| (n.label.clone(), n.line_start, n.line_end))
            .collect()
    };
    // a setext heading spans its text and its underline
    let expected = vec![
        ("Mac".to_string(), 1, 1),
        ("Two".to_string(), 4, 4),
        ("Under".to_string(), 7, 8),
    ];
    for ending in ["\n", "\r\n", "\r"] {
        let text = [
            "# Mac", "", "old text", "## Two", "x", "", "Under", "-----", "end",
        ]
        .join(ending);
        assert_eq!(heading_lines(&text), expected, "line ending {ending:?}");
    }
}

#[test]
fn typescript_classes_interfaces_arrow_functions_imports() {
    let text = "import { connect } from './db';\nimport React from 'react';\n\nexport interface Shape { area(): number }\n\nexport class Square extends Base implements Shape {\n  area() { return helper(2); }\n}\n\nexport const helper = (x: number) => x * x;\nfunction main() { new Square().area(); connect(); }\n";
    let e = extract("web/shapes.ts", Language::TypeScript, text);
    let found = uids(&e);
    for uid in [
        "code:interface:web/shapes.ts::Shape",
        "code:class:web/shapes.ts::Square",
        "code:method:web/shapes.ts::Square.area",
        "code:function:web/shapes.ts::helper",
        "code:function:web/shapes.ts::main",
    ] {
        assert!(found.contains(&uid), "{uid} missing from {found:?}");
    }
    let refs: Vec<(&str, &str, &str)> = e
        .references
        .iter()
        .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
        .collect();
    for expected in [
        ("code:file:web/shapes.ts", "imports", "./db"),
        ("code:file:web/shapes.ts", "imports", "react"),
        ("code:class:web/shapes.ts::Square", "inherits_from", "Base"),
        ("code:class:web/shapes.ts::Square", "implements", "Shape"),
        ("code:method:web/shapes.ts::Square.area", "calls", "helper"),
        ("code:function:web/shapes.ts::main", "calls", "Square"),
        ("code:function:web/shapes.ts::main", "calls", "connect"),
    ] {
        assert!(
            refs.contains(&expected),
            "{expected:?} missing from {refs:?}"
        );
    }
    assert_eq!(e.parse_errors, 0);
    let tsx = extract(
        "web/App.tsx",
        Language::Tsx,
        "export function App() { return <div>{render()}</div>; }\n",
    );
    assert!(uids(&tsx).contains(&"code:function:web/App.tsx::App"));
    let js = extract(
        "web/util.js",
        Language::JavaScript,
        "class A extends B {}\nfunction f() { g(); }\n",
    );
    assert!(uids(&js).contains(&"code:class:web/util.js::A"));
    assert!(
        js.references
            .iter()
            .any(|r| r.kind == "inherits_from" && r.name == "B")
    );
}

#[test]
fn go_types_methods_functions_imports() {
    let text = "package store\n\nimport (\n  \"fmt\"\n  \"example.com/app/db\"\n)\n\ntype Store struct { n int }\ntype Saver interface { Save() error }\n\nfunc (s *Store) Save() error { return db.Write(fmt.Sprint(s.n)) }\n\nfunc New() *Store { return &Store{} }\n";
    let e = extract("store/store.go", Language::Go, text);
    let found = uids(&e);
    for uid in [
        "code:class:store/store.go::Store",
        "code:interface:store/store.go::Saver",
        "code:method:store/store.go::Store.Save",
        "code:function:store/store.go::New",
    ] {
        assert!(found.contains(&uid), "{uid} missing from {found:?}");
    }
    let refs: Vec<(&str, &str, &str)> = e
        .references
        .iter()
        .map(|r| (r.source.as_str(), r.kind, r.name.as_str()))
        .collect();
    assert!(
        refs.contains(&("code:file:store/store.go", "imports", "go:fmt")),
        "{refs:?}"
    );
    assert!(refs.contains(&(
        "code:file:store/store.go",
        "imports",
        "go:example.com/app/db"
    )));
    assert!(refs.contains(&("code:method:store/store.go::Store.Save", "calls", "Write")));
}
