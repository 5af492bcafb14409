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

/// The uids and (kind, name, module) references one file of `language` gives.
fn definitions_and_references(
    path: &str,
    language: Language,
    text: &str,
) -> (Vec<String>, Vec<String>) {
    let e = extract(path, language, text);
    let uids = e.nodes.iter().map(|n| n.uid.clone()).collect();
    let refs = e
        .references
        .iter()
        .map(|r| {
            format!(
                "{} {} {}{}",
                r.kind,
                r.name,
                r.module.as_deref().unwrap_or("-"),
                r.receiver
                    .as_deref()
                    .map(|t| format!(" on {t}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    (uids, refs)
}

/// A file of a language: its path, language and text, the uids it must
/// declare and the references it must make.
type Case = (
    &'static str,
    Language,
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
);

#[test]
fn the_languages_teams_write_give_types_methods_imports_bases_and_typed_calls() {
    let cases: [Case; 10] = [
        (
            "src/main/java/com/shop/Pay.java",
            Language::Java,
            "package com.shop;\nimport com.shop.model.Cart;\npublic class Pay extends Base implements Payable {\n    private Cart cart;\n    public Pay(Cart c) { this.cart = c; }\n    int pay(Invoice inv) { return this.cart.total() + inv.total(); }\n    interface Payable { void pay(); }\n    enum Kind { A }\n}\n",
            &[
                "code:class:src/main/java/com/shop/Pay.java::Pay",
                "code:method:src/main/java/com/shop/Pay.java::Pay.Pay",
                "code:method:src/main/java/com/shop/Pay.java::Pay.pay",
                "code:interface:src/main/java/com/shop/Pay.java::Pay.Payable",
                "code:class:src/main/java/com/shop/Pay.java::Pay.Kind",
            ],
            &[
                "imports pkg:com.shop.model.Cart -",
                "inherits_from Base -",
                "implements Payable -",
                "calls total pkg:com.shop.model.Cart on Cart",
                "calls total - on Invoice",
                // the field's type and the parameter's
                "uses_type Cart pkg:com.shop.model.Cart",
                "uses_type Invoice -",
            ],
        ),
        (
            "src/Pay.cs",
            Language::CSharp,
            "using Shop.Model;\nnamespace Shop {\n  public class Pay : Base, IPayable {\n    public int Run(Cart c) { return c.Total(); }\n  }\n  public interface IPayable { void Run(); }\n  public struct Money {}\n}\n",
            &[
                "code:class:src/Pay.cs::Pay",
                "code:method:src/Pay.cs::Pay.Run",
                "code:interface:src/Pay.cs::IPayable",
                "code:class:src/Pay.cs::Money",
            ],
            &[
                "imports pkg:Shop.Model -",
                "inherits_from Base -",
                "inherits_from IPayable -",
                "calls Total - on Cart",
            ],
        ),
        (
            "src/cart.c",
            Language::C,
            "#include <stdio.h>\n#include \"cart.h\"\nstruct cart { int n; };\nstatic int helper(int x);\nint total(struct cart *c) { return helper(c->n); }\n",
            &[
                "code:class:src/cart.c::cart",
                "code:function:src/cart.c::total",
            ],
            &[
                "imports lib:stdio.h -",
                "imports path:cart.h -",
                "calls helper -",
            ],
        ),
        (
            "src/cart.cpp",
            Language::Cpp,
            "#include \"cart.hpp\"\nnamespace shop {\nclass Cart : public Base {\npublic:\n  int total() const;\n};\nint Cart::total() const { return this->count(); }\n}\n",
            &[
                "code:class:src/cart.cpp::Cart",
                "code:method:src/cart.cpp::Cart.total",
            ],
            &[
                "imports path:cart.hpp -",
                "inherits_from Base -",
                "calls count - on Cart",
            ],
        ),
        (
            "src/Pay.php",
            Language::Php,
            "<?php\nnamespace App;\nuse App\\Model\\{Cart, Money as M};\nclass Pay extends Base implements Payable {\n    public function run(Cart $c) { return $c->total(); }\n}\nfunction helper() {}\n",
            &[
                "code:class:src/Pay.php::Pay",
                "code:method:src/Pay.php::Pay.run",
                "code:function:src/Pay.php::helper",
            ],
            &[
                "imports pkg:App.Model.Cart -",
                "imports pkg:App.Model.Money -",
                "inherits_from Base -",
                "implements Payable -",
                "calls total pkg:App.Model.Cart on Cart",
            ],
        ),
        (
            "lib/pay.rb",
            Language::Ruby,
            "require 'json'\nrequire_relative 'cart'\nmodule Shop\n  class Pay < Base\n    def run\n      @cart = Cart.new\n      @cart.total\n    end\n  end\nend\n",
            &[
                "code:class:lib/pay.rb::Shop",
                "code:class:lib/pay.rb::Shop.Pay",
                "code:method:lib/pay.rb::Shop.Pay.run",
            ],
            &[
                "imports lib:json -",
                "imports path:cart -",
                "inherits_from Base -",
                "calls new - on ^Cart",
                "calls total - on Cart",
            ],
        ),
        (
            "src/Pay.kt",
            Language::Kotlin,
            "package shop\nimport shop.model.Cart\nclass Pay(private val cart: Cart) : Base(), Payable {\n    fun run(): Int { return cart.total() }\n}\nfun helper() {}\n",
            &[
                "code:class:src/Pay.kt::Pay",
                "code:method:src/Pay.kt::Pay.run",
                "code:function:src/Pay.kt::helper",
            ],
            &[
                "imports pkg:shop.model.Cart -",
                "inherits_from Base -",
                "inherits_from Payable -",
                "calls total pkg:shop.model.Cart on Cart",
            ],
        ),
        (
            "Sources/Pay.swift",
            Language::Swift,
            "import Foundation\nclass Pay: Base {\n    var cart: Cart\n    init(cart: Cart) { self.cart = cart }\n    func run() -> Int { return self.cart.total() }\n}\nprotocol Payable { func run() -> Int }\n",
            &[
                "code:class:Sources/Pay.swift::Pay",
                "code:method:Sources/Pay.swift::Pay.init",
                "code:method:Sources/Pay.swift::Pay.run",
                "code:interface:Sources/Pay.swift::Payable",
                "code:method:Sources/Pay.swift::Payable.run",
            ],
            &[
                "imports pkg:Foundation -",
                "inherits_from Base -",
                "calls total - on Cart",
            ],
        ),
        (
            "src/Pay.scala",
            Language::Scala,
            "package shop\nimport shop.model.{Cart, Money => M}\nclass Pay(cart: Cart) extends Base with Payable {\n  def run(): Int = cart.total()\n}\ntrait Payable { def run(): Int }\n",
            &[
                "code:class:src/Pay.scala::Pay",
                "code:method:src/Pay.scala::Pay.run",
                "code:interface:src/Pay.scala::Payable",
                "code:method:src/Pay.scala::Payable.run",
            ],
            &[
                "imports pkg:shop.model -",
                "inherits_from Base -",
                "inherits_from Payable -",
                "calls total pkg:shop.model.Cart on Cart",
            ],
        ),
        (
            "lib/pay.dart",
            Language::Dart,
            "import 'package:shop/cart.dart';\nimport 'money.dart' as money;\nclass Pay extends Base implements Payable {\n  final Cart cart;\n  int run() { return this.cart.total(); }\n}\nvoid helper() {}\n",
            &[
                "code:class:lib/pay.dart::Pay",
                "code:method:lib/pay.dart::Pay.run",
                "code:function:lib/pay.dart::helper",
            ],
            &[
                "imports lib:lib/cart.dart -",
                "imports path:money.dart -",
                "inherits_from Base -",
                "implements Payable -",
                "calls total - on Cart",
            ],
        ),
    ];
    for (path, language, text, uids, references) in cases {
        let (found_uids, found_references) = definitions_and_references(path, language, text);
        for uid in uids {
            assert!(
                found_uids.iter().any(|found| found == uid),
                "{path}: no {uid} in {found_uids:#?}"
            );
        }
        for reference in references {
            assert!(
                found_references.iter().any(|found| found == reference),
                "{path}: no `{reference}` in {found_references:#?}"
            );
        }
    }
}

#[test]
fn a_cpp_header_and_a_c_file_are_each_read_by_their_own_grammar() {
    // a header in C++ syntax is parsed with the C++ grammar; reading it
    // first must not leave the C files read by C++'s node kinds
    let header = extract(
        "lib/cart.h",
        Language::C,
        "namespace shop {\nclass Cart {\n public:\n  int total();\n};\n}\n",
    );
    assert!(
        uids(&header).contains(&"code:class:lib/cart.h::Cart"),
        "{:?}",
        uids(&header)
    );
    let c = extract(
        "src/pay.c",
        Language::C,
        "struct invoice { int sum; };\nint pay(struct invoice *i) { return settle(i->sum); }\n",
    );
    assert_eq!(
        uids(&c),
        [
            "code:file:src/pay.c",
            "code:class:src/pay.c::invoice",
            "code:function:src/pay.c::pay"
        ]
    );
    assert!(
        c.references
            .iter()
            .any(|r| r.kind == "calls" && r.name == "settle")
    );
}

#[test]
fn a_field_declared_below_the_method_that_calls_through_it_types_the_call() {
    let java = "class Checkout {\n  int pay() { return cart.total(); }\n  private Cart cart;\n}\n";
    let e = extract("src/Checkout.java", Language::Java, java);
    let call = e
        .references
        .iter()
        .find(|r| r.kind == "calls" && r.name == "total");
    assert_eq!(call.and_then(|r| r.receiver.as_deref()), Some("Cart"));
    let python = "class Checkout:\n    def pay(self):\n        return self.cart.total()\n\n    def __init__(self):\n        self.cart = Cart()\n";
    let e = extract("app/checkout.py", Language::Python, python);
    let call = e
        .references
        .iter()
        .find(|r| r.kind == "calls" && r.name == "total");
    assert_eq!(call.and_then(|r| r.receiver.as_deref()), Some("Cart"));
}

#[test]
fn a_dart_library_imports_every_file_of_a_conditional_import_its_exports_and_parts() {
    let text = "import 'io_client.dart' if (dart.library.js_interop) 'web_client.dart';\nexport 'src/cart.dart' show Cart;\npart 'shop.g.dart';\n";
    let e = extract("lib/shop.dart", Language::Dart, text);
    let imports: Vec<&str> = e
        .references
        .iter()
        .filter(|r| r.kind == "imports")
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(
        imports,
        [
            "path:io_client.dart",
            "path:web_client.dart",
            "path:src/cart.dart",
            "path:shop.g.dart"
        ]
    );
}

#[test]
fn a_call_on_a_type_uses_the_type_and_a_call_on_a_field_does_not() {
    let uses = |e: &Extraction, source: &str| -> Vec<String> {
        e.references
            .iter()
            .filter(|r| r.kind == "uses_type" && r.source == source)
            .map(|r| r.name.clone())
            .collect()
    };
    let ruby = "class JobsController\n  def index\n    HardJob.perform_async(1)\n  end\nend\n";
    let e = extract("app/jobs_controller.rb", Language::Ruby, ruby);
    assert_eq!(
        uses(
            &e,
            "code:method:app/jobs_controller.rb::JobsController.index"
        ),
        ["HardJob"]
    );
    let csharp =
        "class Runner {\n  ILogger Logger;\n  void Run() { Logger.Info(); Formats.Short(1); }\n}\n";
    let e = extract("src/Runner.cs", Language::CSharp, csharp);
    let run = "code:method:src/Runner.cs::Runner.Run";
    let used = uses(&e, run);
    assert!(used.contains(&"Formats".to_string()), "{used:?}");
    assert!(!used.contains(&"Logger".to_string()), "{used:?}");
    let info = e
        .references
        .iter()
        .find(|r| r.kind == "calls" && r.name == "Info");
    assert_eq!(info.and_then(|r| r.receiver.as_deref()), Some("ILogger"));
}

#[test]
fn a_tree_nested_thousands_deep_is_read_without_overflowing_a_thread_stack() {
    let terms = vec!["x"; 50_000].join(" + ");
    let text =
        format!("int sum(int x) {{ return {terms}; }}\nint after(void) {{ return sum(1); }}\n");
    // the parsers' threads have the default stack; so does this one
    let read = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || extract("gen/table.c", Language::C, &text))
        .map(|handle| handle.join());
    let Ok(Ok(e)) = read else {
        panic!("the walk overflowed its stack");
    };
    assert!(uids(&e).contains(&"code:function:gen/table.c::after"));
    assert!(
        e.references
            .iter()
            .any(|r| r.kind == "calls" && r.name == "sum")
    );
}
