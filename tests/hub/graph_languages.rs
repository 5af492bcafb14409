//! Every language the graph reads, on the same small program: a `Cart` with
//! `total()`, an `Invoice` with a `total()` of its own (the decoy), and a
//! `pay` that calls `total()` through a variable holding a new `Cart`. The
//! call must reach `Cart.total` and never `Invoice.total`.

use crate::common::TestServer;
use serde_json::json;
use std::path::Path;

fn write(root: &Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().unwrap()).unwrap();
    std::fs::write(full, text).unwrap();
}

/// One language's program: its files, and the uids of `pay`, `Cart.total`
/// and the decoy `Invoice.total`.
struct Program {
    files: &'static [(&'static str, &'static str)],
    pay: &'static str,
    cart_total: &'static str,
    invoice_total: &'static str,
}

const PROGRAMS: &[Program] = &[
    Program {
        files: &[
            (
                "py/shop/cart.py",
                "class Cart:\n    def total(self):\n        return 1\n",
            ),
            (
                "py/shop/invoice.py",
                "class Invoice:\n    def total(self):\n        return 2\n",
            ),
            ("py/shop/__init__.py", ""),
            (
                "py/pay.py",
                "from py.shop.cart import Cart\n\ndef pay():\n    c = Cart()\n    return c.total()\n",
            ),
        ],
        pay: "code:function:py/pay.py::pay",
        cart_total: "code:method:py/shop/cart.py::Cart.total",
        invoice_total: "code:method:py/shop/invoice.py::Invoice.total",
    },
    Program {
        files: &[
            (
                "go/shop/cart.go",
                "package shop\n\ntype Cart struct{}\n\nfunc (c *Cart) Total() int { return 1 }\n",
            ),
            (
                "go/shop/invoice.go",
                "package shop\n\ntype Invoice struct{}\n\nfunc (i *Invoice) Total() int { return 2 }\n",
            ),
            (
                "go/pay/pay.go",
                "package pay\n\nimport \"example.com/go/shop\"\n\nfunc Pay() int {\n\tc := &shop.Cart{}\n\treturn c.Total()\n}\n",
            ),
        ],
        pay: "code:function:go/pay/pay.go::Pay",
        cart_total: "code:method:go/shop/cart.go::Cart.Total",
        invoice_total: "code:method:go/shop/invoice.go::Invoice.Total",
    },
    Program {
        files: &[
            (
                "ts/cart.ts",
                "export class Cart {\n  total(): number { return 1; }\n}\n",
            ),
            (
                "ts/invoice.ts",
                "export class Invoice {\n  total(): number { return 2; }\n}\n",
            ),
            (
                "ts/pay.ts",
                "import { Cart } from './cart';\n\nexport function pay(): number {\n  const c = new Cart();\n  return c.total();\n}\n",
            ),
        ],
        pay: "code:function:ts/pay.ts::pay",
        cart_total: "code:method:ts/cart.ts::Cart.total",
        invoice_total: "code:method:ts/invoice.ts::Invoice.total",
    },
    Program {
        files: &[
            (
                "js/cart.js",
                "export class Cart {\n  total() { return 1; }\n}\n",
            ),
            (
                "js/invoice.js",
                "export class Invoice {\n  total() { return 2; }\n}\n",
            ),
            (
                "js/pay.js",
                "import { Cart } from './cart.js';\n\nexport function pay() {\n  const c = new Cart();\n  return c.total();\n}\n",
            ),
        ],
        pay: "code:function:js/pay.js::pay",
        cart_total: "code:method:js/cart.js::Cart.total",
        invoice_total: "code:method:js/invoice.js::Invoice.total",
    },
    // single-file components: their script blocks, the template and styles left out
    Program {
        files: &[
            (
                "vue/cart.ts",
                "export class Cart {\n  total(): number { return 1; }\n}\n",
            ),
            (
                "vue/invoice.ts",
                "export class Invoice {\n  total(): number { return 2; }\n}\n",
            ),
            (
                "vue/Pay.vue",
                "<template>\n  <button @click=\"pay\">{{ total() }}</button>\n</template>\n\n<script setup lang=\"ts\">\nimport { Cart } from './cart'\n\nfunction pay(): number {\n  const c = new Cart()\n  return c.total()\n}\n</script>\n\n<style scoped>\nbutton { color: red }\n</style>\n",
            ),
        ],
        pay: "code:function:vue/Pay.vue::pay",
        cart_total: "code:method:vue/cart.ts::Cart.total",
        invoice_total: "code:method:vue/invoice.ts::Invoice.total",
    },
    Program {
        files: &[
            (
                "svelte/cart.js",
                "export class Cart {\n  total() { return 1; }\n}\n",
            ),
            (
                "svelte/invoice.js",
                "export class Invoice {\n  total() { return 2; }\n}\n",
            ),
            (
                "svelte/Pay.svelte",
                "<script>\n  import { Cart } from './cart.js';\n\n  function pay() {\n    const c = new Cart();\n    return c.total();\n  }\n</script>\n\n<button on:click={pay}>Pay</button>\n",
            ),
        ],
        pay: "code:function:svelte/Pay.svelte::pay",
        cart_total: "code:method:svelte/cart.js::Cart.total",
        invoice_total: "code:method:svelte/invoice.js::Invoice.total",
    },
    Program {
        files: &[
            (
                "src/cart.rs",
                "pub struct Cart;\nimpl Cart {\n    pub fn new() -> Cart { Cart }\n    pub fn total(&self) -> u32 { 1 }\n}\n",
            ),
            (
                "src/invoice.rs",
                "pub struct Invoice;\nimpl Invoice {\n    pub fn total(&self) -> u32 { 2 }\n}\n",
            ),
            (
                "src/pay.rs",
                "use crate::cart::Cart;\n\npub fn pay() -> u32 {\n    let c = Cart::new();\n    c.total()\n}\n",
            ),
        ],
        pay: "code:function:src/pay.rs::pay",
        cart_total: "code:method:src/cart.rs::Cart.total",
        invoice_total: "code:method:src/invoice.rs::Invoice.total",
    },
    Program {
        files: &[
            (
                "java/src/main/java/com/shop/model/Cart.java",
                "package com.shop.model;\n\npublic class Cart {\n    public int total() { return 1; }\n}\n",
            ),
            (
                "java/src/main/java/com/shop/model/Invoice.java",
                "package com.shop.model;\n\npublic class Invoice {\n    public int total() { return 2; }\n}\n",
            ),
            (
                "java/src/main/java/com/shop/Pay.java",
                "package com.shop;\n\nimport com.shop.model.Cart;\n\npublic class Pay {\n    int pay() {\n        Cart c = new Cart();\n        return c.total();\n    }\n}\n",
            ),
        ],
        pay: "code:method:java/src/main/java/com/shop/Pay.java::Pay.pay",
        cart_total: "code:method:java/src/main/java/com/shop/model/Cart.java::Cart.total",
        invoice_total: "code:method:java/src/main/java/com/shop/model/Invoice.java::Invoice.total",
    },
    Program {
        files: &[
            (
                "cs/Model/Cart.cs",
                "namespace Shop.Model {\n  public class Cart { public int Total() { return 1; } }\n}\n",
            ),
            (
                "cs/Model/Invoice.cs",
                "namespace Shop.Model {\n  public class Invoice { public int Total() { return 2; } }\n}\n",
            ),
            (
                "cs/Pay.cs",
                "using Shop.Model;\n\nnamespace Shop {\n  public class Pay {\n    int Run() { var c = new Cart(); return c.Total(); }\n  }\n}\n",
            ),
        ],
        pay: "code:method:cs/Pay.cs::Pay.Run",
        cart_total: "code:method:cs/Model/Cart.cs::Cart.Total",
        invoice_total: "code:method:cs/Model/Invoice.cs::Invoice.Total",
    },
    Program {
        files: &[
            (
                "cpp/cart.hpp",
                "class Cart {\npublic:\n  int total() const;\n};\n",
            ),
            (
                "cpp/cart.cpp",
                "#include \"cart.hpp\"\n\nint Cart::total() const { return 1; }\n",
            ),
            (
                "cpp/invoice.hpp",
                "class Invoice {\npublic:\n  int total() const { return 2; }\n};\n",
            ),
            (
                "cpp/pay.cpp",
                "#include \"cart.hpp\"\n\nint pay() {\n  Cart c;\n  return c.total();\n}\n",
            ),
        ],
        pay: "code:function:cpp/pay.cpp::pay",
        cart_total: "code:method:cpp/cart.cpp::Cart.total",
        invoice_total: "code:method:cpp/invoice.hpp::Invoice.total",
    },
    Program {
        files: &[
            (
                "php/src/Model/Cart.php",
                "<?php\nnamespace App\\Model;\n\nclass Cart { public function total() { return 1; } }\n",
            ),
            (
                "php/src/Model/Invoice.php",
                "<?php\nnamespace App\\Model;\n\nclass Invoice { public function total() { return 2; } }\n",
            ),
            (
                "php/src/pay.php",
                "<?php\nuse App\\Model\\Cart;\n\nfunction pay() {\n    $c = new Cart();\n    return $c->total();\n}\n",
            ),
        ],
        pay: "code:function:php/src/pay.php::pay",
        cart_total: "code:method:php/src/Model/Cart.php::Cart.total",
        invoice_total: "code:method:php/src/Model/Invoice.php::Invoice.total",
    },
    Program {
        files: &[
            (
                "rb/lib/cart.rb",
                "class Cart\n  def total\n    1\n  end\nend\n",
            ),
            (
                "rb/lib/invoice.rb",
                "class Invoice\n  def total\n    2\n  end\nend\n",
            ),
            (
                "rb/pay.rb",
                "require_relative 'lib/cart'\n\ndef pay\n  c = Cart.new\n  c.total\nend\n",
            ),
        ],
        pay: "code:function:rb/pay.rb::pay",
        cart_total: "code:method:rb/lib/cart.rb::Cart.total",
        invoice_total: "code:method:rb/lib/invoice.rb::Invoice.total",
    },
    Program {
        files: &[
            (
                "kt/kshop/Cart.kt",
                "package kshop\n\nclass Cart {\n    fun total(): Int = 1\n}\n",
            ),
            (
                "kt/kshop/Invoice.kt",
                "package kshop\n\nclass Invoice {\n    fun total(): Int = 2\n}\n",
            ),
            (
                "kt/Pay.kt",
                "import kshop.Cart\n\nfun pay(): Int {\n    val c = Cart()\n    return c.total()\n}\n",
            ),
        ],
        pay: "code:function:kt/Pay.kt::pay",
        cart_total: "code:method:kt/kshop/Cart.kt::Cart.total",
        invoice_total: "code:method:kt/kshop/Invoice.kt::Invoice.total",
    },
    Program {
        files: &[
            (
                "scala/sshop/Cart.scala",
                "package sshop\n\nclass Cart {\n  def total(): Int = 1\n}\n",
            ),
            (
                "scala/sshop/Invoice.scala",
                "package sshop\n\nclass Invoice {\n  def total(): Int = 2\n}\n",
            ),
            (
                "scala/Pay.scala",
                "import sshop.Cart\n\nobject Pay {\n  def pay(): Int = {\n    val c = new Cart()\n    c.total()\n  }\n}\n",
            ),
        ],
        pay: "code:method:scala/Pay.scala::Pay.pay",
        cart_total: "code:method:scala/sshop/Cart.scala::Cart.total",
        invoice_total: "code:method:scala/sshop/Invoice.scala::Invoice.total",
    },
    Program {
        files: &[
            (
                "swift/Shop/Cart.swift",
                "class Cart {\n    func total() -> Int { return 1 }\n}\n",
            ),
            (
                "swift/Shop/Invoice.swift",
                "class Invoice {\n    func total() -> Int { return 2 }\n}\n",
            ),
            (
                "swift/Pay.swift",
                "func pay() -> Int {\n    let c = Cart()\n    return c.total()\n}\n",
            ),
        ],
        pay: "code:function:swift/Pay.swift::pay",
        cart_total: "code:method:swift/Shop/Cart.swift::Cart.total",
        invoice_total: "code:method:swift/Shop/Invoice.swift::Invoice.total",
    },
    Program {
        files: &[
            (
                "dart/lib/cart.dart",
                "class Cart {\n  int total() => 1;\n}\n",
            ),
            (
                "dart/lib/invoice.dart",
                "class Invoice {\n  int total() => 2;\n}\n",
            ),
            (
                "dart/lib/pay.dart",
                "import 'cart.dart';\n\nint pay() {\n  var c = Cart();\n  return c.total();\n}\n",
            ),
        ],
        pay: "code:function:dart/lib/pay.dart::pay",
        cart_total: "code:method:dart/lib/cart.dart::Cart.total",
        invoice_total: "code:method:dart/lib/invoice.dart::Invoice.total",
    },
];

/// `app/cart.py` and `app/invoice.py`: two types with a `total()` each.
fn cart_and_invoice(root: &Path) {
    write(
        root,
        "app/cart.py",
        "class Cart:\n    def total(self):\n        return 1\n",
    );
    write(
        root,
        "app/invoice.py",
        "class Invoice:\n    def total(self):\n        return 2\n",
    );
}

/// The uids of what calls `uid`, through the references tool over HTTP.
async fn callers_of(server: &TestServer, uid: &str) -> Vec<String> {
    let (status, body) = server
        .post_json(
            "/api/graph/references",
            json!({"uid": uid, "kinds": ["calls"]}),
        )
        .await;
    assert_eq!(status, 200, "references of {uid}: {body}");
    body["data"]["references"]
        .as_array()
        .map(|found| {
            found
                .iter()
                .filter_map(|r| r["node"]["uid"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_method_called_through_a_variable_reaches_its_own_type_in_every_language() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(root, "go.mod", "module example.com\n\ngo 1.22\n");
    for program in PROGRAMS {
        for (path, text) in program.files {
            write(root, path, text);
        }
    }
    let (status, body) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let mut missed = Vec::new();
    for program in PROGRAMS {
        let cart = callers_of(&server, program.cart_total).await;
        let invoice = callers_of(&server, program.invoice_total).await;
        if !cart.iter().any(|uid| uid == program.pay) {
            missed.push(format!(
                "{} does not reach {}: {cart:?}",
                program.pay, program.cart_total
            ));
        }
        if invoice.iter().any(|uid| uid == program.pay) {
            missed.push(format!(
                "{} reaches the decoy {}",
                program.pay, program.invoice_total
            ));
        }
    }
    assert!(missed.is_empty(), "{missed:#?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_on_an_unknown_receiver_links_no_same_named_method() {
    let server = TestServer::start().await;
    let root = server.repo();
    cart_and_invoice(root);
    // `thing` comes from outside: nothing says which `total` it has
    write(
        root,
        "app/pay.py",
        "def pay(thing):\n    return thing.total()\n",
    );
    // a known type with no such method is not linked to another type's
    write(
        root,
        "app/refund.py",
        "from app.cart import Cart\n\ndef refund():\n    c = Cart()\n    return c.discount()\n\nclass Ledger:\n    def discount(self):\n        return 0\n",
    );
    // a bare call runs no method in Python, and a parameter is whatever was passed
    write(
        root,
        "app/stream.py",
        "class Stream:\n    def next(self):\n        return 1\n\ndef hook():\n    return 0\n",
    );
    write(
        root,
        "app/walk.py",
        "def walk(items, hook):\n    hook()\n    return next(iter(items))\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    for uid in [
        "code:method:app/cart.py::Cart.total",
        "code:method:app/invoice.py::Invoice.total",
        "code:method:app/stream.py::Stream.next",
        "code:function:app/stream.py::hook",
    ] {
        assert_eq!(
            callers_of(&server, uid).await,
            Vec::<String>::new(),
            "{uid}"
        );
    }
    assert_eq!(
        callers_of(&server, "code:method:app/refund.py::Ledger.discount").await,
        Vec::<String>::new()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn self_fields_parameters_and_inherited_methods_are_typed() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "shop/base.py",
        "class Base:\n    def audit(self):\n        return 0\n",
    );
    write(
        root,
        "shop/cart.py",
        "from shop.base import Base\n\nclass Cart(Base):\n    def total(self):\n        return self.count()\n\n    def count(self):\n        return 1\n",
    );
    write(
        root,
        "shop/invoice.py",
        "class Invoice:\n    def total(self):\n        return 2\n\n    def count(self):\n        return 3\n\n    def audit(self):\n        return 4\n",
    );
    write(
        root,
        "shop/checkout.py",
        "from shop.cart import Cart\n\nclass Checkout:\n    def __init__(self):\n        self.cart = Cart()\n\n    def run(self, other: Cart):\n        other.audit()\n        return self.cart.total()\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    let run = "code:method:shop/checkout.py::Checkout.run".to_string();
    let total = "code:method:shop/cart.py::Cart.total".to_string();
    assert_eq!(callers_of(&server, &total).await, vec![run.clone()]);
    assert_eq!(
        callers_of(&server, "code:method:shop/cart.py::Cart.count").await,
        vec![total]
    );
    assert_eq!(
        callers_of(&server, "code:method:shop/base.py::Base.audit").await,
        vec![run]
    );
    for decoy in ["total", "count", "audit"] {
        let uid = format!("code:method:shop/invoice.py::Invoice.{decoy}");
        assert_eq!(callers_of(&server, &uid).await, Vec::<String>::new());
    }
}

/// The health's count of Python call sites left unresolved.
async fn python_calls_unresolved(server: &TestServer) -> serde_json::Value {
    let (status, health) = server.get("/api/health").await;
    assert_eq!(status, 200);
    health["data"]["areas"]["graph"]["resolution"]["python"]["calls_unresolved"].clone()
}

#[tokio::test(flavor = "multi_thread")]
async fn what_resolution_missed_is_counted_and_said_beside_the_answers_it_touches() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(root, "app/__init__.py", "");
    cart_and_invoice(root);
    write(
        root,
        "app/pay.py",
        "from .gone import helper\n\ndef pay(thing):\n    return thing.total()\n",
    );
    let (status, body) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{body}");
    let python = &body["data"]["resolution"]["python"];
    assert_eq!(python["calls_unresolved"], 1, "{body}");
    assert_eq!(python["imports_unresolved"], 1, "{body}");
    assert_eq!(python_calls_unresolved(&server).await, 1);

    // an answer with no dependents says how many unlinked calls name the symbol
    let total = "code:method:app/cart.py::Cart.total";
    for (path, asked) in [
        ("/api/graph/references", json!({"uid": total})),
        ("/api/graph/impact", json!({"uid": total})),
        (
            "/api/graph/rename-plan",
            json!({"uid": total, "new_name": "sum"}),
        ),
    ] {
        let (status, answer) = server.post_json(path, asked).await;
        assert_eq!(status, 200, "{path}: {answer}");
        assert_eq!(
            answer["meta"]["unresolved_calls_named"], 1,
            "{path}: {answer}"
        );
    }

    // the call typed by an edit: counted again by the incremental run
    write(
        root,
        "app/pay.py",
        "from app.cart import Cart\n\ndef pay():\n    return Cart().total()\n",
    );
    let (status, body) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body["data"]["resolution"]["python"]["calls_unresolved"], 0,
        "{body}"
    );
    assert_eq!(python_calls_unresolved(&server).await, 0);
    let (_, answer) = server
        .post_json("/api/graph/references", json!({"uid": total}))
        .await;
    assert_eq!(answer["meta"]["unresolved_calls_named"], 0, "{answer}");
    assert_eq!(
        answer["data"]["references"][0]["node"]["uid"],
        "code:function:app/pay.py::pay"
    );

    // the doctor and `cos index` say the same
    let (status, doctor) = server.post_json("/api/graph/doctor", json!({})).await;
    assert_eq!(status, 200, "{doctor}");
    assert_eq!(
        doctor["data"]["stats"]["resolution"]["python"]["calls_resolved"], 2,
        "{doctor}"
    );
    let output = crate::cli::cos(root).arg("index").output().unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        printed
            .contains("resolved by language: python calls 2 of 2 (100 %), imports 1 of 1 (100 %)"),
        "{printed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_through_a_base_type_reaches_the_overrides_below_it_and_no_other() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "shapes/base.py",
        "class Shape:\n    def area(self):\n        return 0\n",
    );
    write(
        root,
        "shapes/square.py",
        "from shapes.base import Shape\n\nclass Square(Shape):\n    def area(self):\n        return 4\n",
    );
    write(
        root,
        "shapes/circle.py",
        "class Circle:\n    def area(self):\n        return 3\n",
    );
    write(
        root,
        "report.py",
        "from shapes.base import Shape\n\ndef report(shape: Shape):\n    return shape.area()\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    let (_, answer) = server
        .post_json(
            "/api/graph/references",
            json!({"uid": "code:method:shapes/square.py::Square.area"}),
        )
        .await;
    let found = |answer: &serde_json::Value| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = answer["data"]["references"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                let uid = r["node"]["uid"].as_str().unwrap_or_default().to_string();
                (
                    uid,
                    r["confidence"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        found.sort();
        found
    };
    // the call through the base type, and the base method it overrides
    let reached = [
        ("code:function:report.py::report", "dispatch"),
        ("code:method:shapes/base.py::Shape.area", "dispatch"),
    ]
    .map(|(uid, confidence)| (uid.to_string(), confidence.to_string()));
    assert_eq!(found(&answer), reached, "{answer}");
    assert_eq!(
        callers_of(&server, "code:method:shapes/base.py::Shape.area").await,
        vec!["code:function:report.py::report".to_string()]
    );
    assert_eq!(
        callers_of(&server, "code:method:shapes/circle.py::Circle.area").await,
        Vec::<String>::new()
    );
    // a subtype that stops overriding, and one that starts: an incremental run follows
    write(
        root,
        "shapes/square.py",
        "from shapes.base import Shape\n\nclass Square(Shape):\n    def side(self):\n        return 2\n",
    );
    write(
        root,
        "shapes/circle.py",
        "from shapes.base import Shape\n\nclass Circle(Shape):\n    def area(self):\n        return 3\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    let (_, answer) = server
        .post_json(
            "/api/graph/references",
            json!({"uid": "code:method:shapes/circle.py::Circle.area"}),
        )
        .await;
    assert_eq!(found(&answer), reached, "{answer}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interface_method_reaches_its_implementations_and_they_its_callers() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "src/IHandler.cs",
        "namespace Shop;\n\npublic interface IHandler\n{\n    int Handle(int order);\n}\n",
    );
    write(
        root,
        "src/PingHandler.cs",
        "namespace Shop;\n\npublic class PingHandler : IHandler\n{\n    public int Handle(int order) { return order; }\n}\n",
    );
    write(
        root,
        "src/Other.cs",
        "namespace Shop;\n\npublic class Other\n{\n    public int Handle(int order) { return 0; }\n}\n",
    );
    write(
        root,
        "src/Runner.cs",
        "namespace Shop;\n\npublic class Runner\n{\n    public int Run(IHandler handler) { return handler.Handle(1); }\n}\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    let implementation = "code:method:src/PingHandler.cs::PingHandler.Handle";
    let callers = callers_of(&server, implementation).await;
    assert!(
        callers.contains(&"code:method:src/IHandler.cs::IHandler.Handle".to_string()),
        "{callers:?}"
    );
    assert!(
        callers.contains(&"code:method:src/Runner.cs::Runner.Run".to_string()),
        "{callers:?}"
    );
    assert!(
        callers_of(&server, "code:method:src/Other.cs::Other.Handle")
            .await
            .is_empty(),
        "a same-named method of an unrelated type is reached by nothing"
    );
    let (status, impact) = server
        .post_json(
            "/api/graph/impact",
            json!({"uid": implementation, "depth": 2}),
        )
        .await;
    assert_eq!(status, 200, "{impact}");
    assert!(impact.to_string().contains("Runner.Run"), "{impact}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bare_call_in_a_method_is_its_own_types_and_a_recursion_is_itself() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "src/Pay.java",
        "class Pay {\n  int run() { return helper() + count(3); }\n  int helper() { return 1; }\n  static int count(int n) { return n == 0 ? 0 : count(n - 1); }\n}\n",
    );
    write(
        root,
        "src/Other.java",
        "class Other {\n  int helper() { return 2; }\n  static int count(int n) { return n; }\n}\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        callers_of(&server, "code:method:src/Pay.java::Pay.helper").await,
        vec!["code:method:src/Pay.java::Pay.run".to_string()]
    );
    for decoy in ["helper", "count"] {
        let uid = format!("code:method:src/Other.java::Other.{decoy}");
        assert_eq!(
            callers_of(&server, &uid).await,
            Vec::<String>::new(),
            "{uid}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_python_package_under_src_is_imported_by_its_name_and_its_library_names_lead_out() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(root, "src/shop/__init__.py", "from .cart import Cart\n");
    write(
        root,
        "src/shop/cart.py",
        "class Cart:\n    def total(self):\n        return 1\n",
    );
    // a name the package takes from the standard library and passes on
    write(
        root,
        "src/shop/compat.py",
        "from urllib.parse import urljoin\n",
    );
    write(
        root,
        "tests/test_cart.py",
        "from shop import Cart\nfrom shop.compat import urljoin\n\ndef test_total():\n    urljoin('a', 'b')\n    return Cart().total()\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        callers_of(&server, "code:method:src/shop/cart.py::Cart.total").await,
        vec!["code:function:tests/test_cart.py::test_total".to_string()]
    );
    assert_eq!(python_calls_unresolved(&server).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn kotlin_extension_functions_and_top_level_constants_are_found_across_source_sets() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "a/src/main/kotlin/shop/Dates.kt",
        "package shop\n\nconst val MAX_AGE = 100\n\nfun String.toDate(): Int = length\n",
    );
    // a second source set with the same package: `shop` names two folders
    write(
        root,
        "b/src/test/kotlin/shop/Helper.kt",
        "package shop\n\nfun helper() = 1\n",
    );
    write(
        root,
        "a/src/main/kotlin/shop/Loud.kt",
        "package shop\n\nfun String.shout(): String = uppercase()\n\nfun loud(s: String): String = s.shout()\n",
    );
    write(
        root,
        "a/src/main/kotlin/app/Use.kt",
        "package app\n\nimport shop.MAX_AGE\nimport shop.toDate\n\nfun use(s: String): Int = s.toDate() + MAX_AGE\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(
        callers_of(
            &server,
            "code:function:a/src/main/kotlin/shop/Dates.kt::toDate"
        )
        .await,
        vec!["code:function:a/src/main/kotlin/app/Use.kt::use".to_string()]
    );
    assert_eq!(
        callers_of(
            &server,
            "code:function:a/src/main/kotlin/shop/Loud.kt::shout"
        )
        .await,
        vec!["code:function:a/src/main/kotlin/shop/Loud.kt::loud".to_string()]
    );
    let (status, answer) = server
        .post_json(
            "/api/graph/references",
            json!({"uid": "code:file:a/src/main/kotlin/shop/Dates.kt", "kinds": ["imports"]}),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        answer["data"]["references"][0]["node"]["uid"], "code:file:a/src/main/kotlin/app/Use.kt",
        "{answer}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_on_a_type_itself_runs_its_own_method_and_no_subtypes() {
    let server = TestServer::start().await;
    let root = server.repo();
    write(
        root,
        "src/shop/Shape.java",
        "package shop;\n\npublic class Shape {\n    public static Shape create() { return new Shape(); }\n}\n",
    );
    write(
        root,
        "src/shop/Square.java",
        "package shop;\n\npublic class Square extends Shape {\n    public static Square create() { return new Square(); }\n}\n",
    );
    write(
        root,
        "src/shop/App.java",
        "package shop;\n\npublic class App {\n    public static void main(String[] args) { Shape.create(); }\n}\n",
    );
    let (status, _) = server.post_json("/api/graph/index", json!({})).await;
    assert_eq!(status, 200);
    let main = "code:method:src/shop/App.java::App.main".to_string();
    assert!(
        callers_of(&server, "code:method:src/shop/Shape.java::Shape.create")
            .await
            .contains(&main)
    );
    let square = callers_of(&server, "code:method:src/shop/Square.java::Square.create").await;
    assert!(!square.contains(&main), "{square:?}");
}
