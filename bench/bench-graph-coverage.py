#!/usr/bin/env python3
"""Fair coverage of cos's graph beside codegraph's, per language, on one
repository per language, and a sample of resolved calls to check by hand.

Usage: bench/bench-graph-coverage.py --repos DIR --codegraph DIR [--binary PATH]
           [--only NAME,...] [--samples DIR]

--repos holds one checkout per repository of the table below (by its name:
requests, gin, ...); take them with the search tool's `fetch` and clone the
mirror (`git clone /work/.mirror/psf+requests/repo DIR/requests`). Each is
copied to a scratch folder, indexed by `cos index` and by codegraph 1.6.1
(`npm install --prefix DIR @colbymchenry/codegraph@1.6.1`, then --codegraph
DIR), and both graphs are read with one definition:

  fair coverage = the share of symbol-bearing, non-test source files of the
  repository's language that have at least one dependent in another file
  (an edge other than containment whose source is in another file and whose
  target is the file or a node in it).

The test rule is one function below for both graphs. With --samples DIR, 50
resolved cross-file calls of cos's graph per repository are written to
DIR/NAME.json (call site line, callee, and a `correct` field to fill in by
hand); a file already there keeps its verdicts, and the precision of the
verdicts given is printed. Each run records the checkouts' commits.
"""

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

# repository, language, the extensions of its source files
REPOSITORIES = [
    ("requests", "python", (".py",)),
    ("gin", "go", (".go",)),
    ("ripgrep", "rust", (".rs",)),
    ("gson", "java", (".java",)),
    ("MediatR", "c#", (".cs",)),
    ("guzzle", "php", (".php",)),
    ("sidekiq", "ruby", (".rb",)),
    ("redis", "c", (".c", ".h")),
    ("leveldb", "c++", (".cc", ".cpp", ".h", ".hpp")),
    ("Alamofire", "swift", (".swift",)),
    ("okhttp", "kotlin", (".kt",)),
    ("gatling", "scala", (".scala",)),
    ("http", "dart", (".dart",)),
]

SAMPLE_SIZE = 50
TYPED_SUFFIXES = (".java", ".kt", ".scala", ".cs", ".php", ".swift", ".dart")


def is_test(path):
    """One rule for both graphs: the hub's `graph::is_test_path`, and fixtures
    and benchmarks (`testdata`, `benches`) as well."""
    parts = path.split("/")
    name = parts[-1]
    folders = parts[:-1]
    stem = name.split(".")[0]
    in_test_folder = any(
        f in ("test", "tests", "__tests__", "spec", "Tests", "testdata", "benches")
        or (f.endswith("Tests") and len(f) > 5)
        for f in folders
    )
    typed = name.endswith(TYPED_SUFFIXES) and stem.endswith(("Test", "Tests", "Spec"))
    return (
        in_test_folder
        or typed
        or stem.startswith("test_")
        or stem.endswith(("_test", "_tests", "_spec"))
        or ".test." in name
        or ".spec." in name
    )


def coverage(symbol_files, depended):
    files = {f for f in symbol_files if not is_test(f)}
    covered = files & depended
    return len(covered), len(files)


def cos_graph(db, extensions):
    c = sqlite3.connect(db)
    symbols = {
        f
        for (f,) in c.execute(
            "SELECT DISTINCT file FROM graph_nodes WHERE kind IN "
            "('function','method','class','interface') AND file IS NOT NULL"
        )
        if f.endswith(extensions)
    }
    depended = {
        t
        for (t,) in c.execute(
            "SELECT DISTINCT t.file FROM graph_edges e JOIN graph_nodes s ON s.id = e.source "
            "JOIN graph_nodes t ON t.id = e.target WHERE e.kind NOT IN ('contains','declares') "
            "AND s.file IS NOT NULL AND t.file IS NOT NULL AND s.file <> t.file"
        )
    }
    return symbols, depended


def codegraph_graph(db, extensions):
    c = sqlite3.connect(db)
    symbols = {
        f
        for (f,) in c.execute(
            "SELECT DISTINCT file_path FROM nodes WHERE kind NOT IN ('file','import','variable','constant')"
        )
        if f.endswith(extensions)
    }
    depended = {
        t
        for (t,) in c.execute(
            "SELECT DISTINCT t.file_path FROM edges e JOIN nodes s ON s.id = e.source "
            "JOIN nodes t ON t.id = e.target WHERE e.kind <> 'contains' AND s.file_path <> t.file_path"
        )
    }
    return symbols, depended


def line_of(root, path, line):
    try:
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            for number, text in enumerate(f, 1):
                if number == line:
                    return text.strip()[:200]
    except OSError:
        pass
    return ""


def call_sites(root, db, extensions):
    """Resolved cross-file calls of cos's graph: caller, callee, and the
    caller's lines that name the callee (where to look)."""
    c = sqlite3.connect(db)
    rows = c.execute(
        "SELECT s.uid, s.file, s.line_start, s.line_end, t.uid, t.label, e.confidence "
        "FROM graph_edges e JOIN graph_nodes s ON s.id = e.source JOIN graph_nodes t ON t.id = e.target "
        "WHERE e.kind = 'calls' AND t.file IS NOT NULL AND s.file <> t.file "
        "AND t.kind IN ('function','method') ORDER BY s.uid, t.uid"
    ).fetchall()
    sites = []
    for caller, path, start, end, callee, label, confidence in rows:
        if not path.endswith(extensions):
            continue
        lines = []
        for number in range(start or 1, (end or start or 1) + 1):
            text = line_of(root, path, number)
            if label in text:
                lines.append(f"{number}: {text}")
            if len(lines) == 3:
                break
        sites.append(
            {"caller": caller, "callee": callee, "confidence": confidence, "site": lines, "correct": None}
        )
    return sites


def keep_samples(samples_dir, name, commit, sites):
    path = os.path.join(samples_dir, f"{name}.json")
    kept = {}
    if os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        kept = {(s["caller"], s["callee"]): s for s in old.get("calls", [])}
    chosen = [kept[k] for k in kept if any((s["caller"], s["callee"]) == k for s in sites)]
    rest = [s for s in sites if (s["caller"], s["callee"]) not in kept]
    random.Random(name).shuffle(rest)
    chosen += rest[: max(0, SAMPLE_SIZE - len(chosen))]
    with open(path, "w") as f:
        json.dump({"repository": name, "commit": commit, "calls": chosen}, f, indent=1)
        f.write("\n")
    judged = [s for s in chosen if s.get("correct") is not None]
    right = sum(1 for s in judged if s["correct"])
    return right, len(judged)


def commit_of(path):
    out = subprocess.run(["git", "-C", path, "rev-parse", "--short=10", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", required=True)
    parser.add_argument("--codegraph", required=True, help="the npm prefix codegraph 1.6.1 is installed under")
    parser.add_argument("--binary", help="a cos binary (default: build the dist profile)")
    parser.add_argument("--only", help="comma-separated repository names")
    parser.add_argument("--samples", help="where the hand-checked samples live")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    binary = os.path.abspath(args.binary) if args.binary else None
    if not binary:
        subprocess.run(["cargo", "build", "--profile", "dist", "--bin", "cos"], cwd=os.path.dirname(here), check=True)
        binary = os.path.join(os.path.dirname(here), "target", "dist", "cos")
    codegraph = os.path.join(args.codegraph, "node_modules", ".bin", "codegraph")
    only = set(args.only.split(",")) if args.only else None
    print(f"cos {commit_of(os.path.dirname(here))}; codegraph 1.6.1; {time.strftime('%Y-%m-%d')}")
    print("| repository | commit | language | cos | codegraph | cos index s | codegraph init s | precision (judged) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, language, extensions in REPOSITORIES:
        if only and name not in only:
            continue
        source = os.path.join(args.repos, name)
        if not os.path.isdir(source):
            print(f"| {name} | missing | {language} | | | | | |")
            continue
        commit = commit_of(source)
        with tempfile.TemporaryDirectory() as scratch:
            tree = os.path.join(scratch, name)
            shutil.copytree(source, tree, symlinks=True, ignore=shutil.ignore_patterns(".cos", ".codegraph"))
            started = time.monotonic()
            subprocess.run([binary, "index"], cwd=tree, check=True, capture_output=True,
                           env={**os.environ, "RUST_LOG": "error"})
            cos_seconds = time.monotonic() - started
            started = time.monotonic()
            subprocess.run([codegraph, "init", ".", "--no-color"], cwd=tree, stdin=subprocess.DEVNULL,
                           capture_output=True, check=False)
            codegraph_seconds = time.monotonic() - started
            cos_db = os.path.join(tree, ".cos", "cos.db")
            cg_db = os.path.join(tree, ".codegraph", "codegraph.db")
            ours = coverage(*cos_graph(cos_db, extensions))
            theirs = coverage(*codegraph_graph(cg_db, extensions)) if os.path.exists(cg_db) else (0, 0)
            precision = ""
            if args.samples:
                os.makedirs(args.samples, exist_ok=True)
                right, judged = keep_samples(args.samples, name, commit, call_sites(tree, cos_db, extensions))
                precision = f"{right}/{judged}" if judged else "not judged"

            def share(pair):
                covered, files = pair
                return f"{100.0 * covered / files:.1f} % ({covered}/{files})" if files else "no files"

            print(f"| {name} | {commit} | {language} | {share(ours)} | {share(theirs)} | "
                  f"{cos_seconds:.1f} | {codegraph_seconds:.1f} | {precision} |")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
