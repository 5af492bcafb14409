#!/usr/bin/env python3
"""Known-item relevance of `cos search` (tests/search_relevance/queries.json).

Usage: bench/search-relevance.py [--binary target/dist/cos] [--work DIR] [--min-mrr 0.9]

Builds the corpus the set names in a work folder (Django 5.1.4 from the
package registry, cached under ~/.cache/cos-hub; the 1,007 task files
imported into the board), indexes it, asks every query through `cos search
--json` and reports, per query, where the expected hit ranked (in the top
10), then MRR (reciprocal rank, 0 when outside the top 10) and top-1. Fails
(exit 1) when a query's hit is not in the top 3 or MRR is under --min-mrr.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import django_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SET = os.path.join(ROOT, "tests", "search_relevance", "queries.json")
TASKS = os.path.join(ROOT, "tests", "fixtures", "coding-os-tasks")


def place(hit):
    opens = hit["opens"]
    return opens.get("uid") or opens.get("task_id")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "dist", "cos"))
    parser.add_argument("--work")
    parser.add_argument("--min-mrr", type=float, default=0.9)
    args = parser.parse_args()
    work = args.work or tempfile.mkdtemp(prefix="cos-relevance-")
    try:
        repo = django_tree(work)
        state = os.path.join(work, "state")
        cos = [args.binary, "--repo", repo, "--state-dir", state]
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        subprocess.run(cos + ["index"], **quiet)
        subprocess.run(cos + ["board", "import", "--dir", TASKS], **quiet)
        queries = json.load(open(SET))["queries"]
        reciprocal, top1, misses = 0.0, 0, []
        for query in queries:
            out = subprocess.run(cos + ["search", query["q"], "--json", "--limit", "10"], capture_output=True, text=True)
            envelope = json.loads(out.stdout)
            if not envelope.get("ok"):
                misses.append((query["q"], "refused: " + envelope["error"]["message"]))
                continue
            places = [place(hit) for hit in envelope["data"]["hits"]]
            rank = places.index(query["expect"]) + 1 if query["expect"] in places else None
            reciprocal += 1 / rank if rank else 0
            top1 += rank == 1
            print(f"{rank if rank else '-':>3}  {query['q']}")
            if not rank or rank > 3:
                misses.append((query["q"], f"expected {query['expect']} in the top 3, got {places[:3]}"))
        mrr = reciprocal / len(queries)
        print(f"{len(queries)} queries: MRR {mrr:.3f}, top-1 {top1}/{len(queries)} ({top1 / len(queries):.0%})")
        for q, why in misses:
            print(f"miss: {q}: {why}", file=sys.stderr)
        return 1 if misses or mrr < args.min_mrr else 0
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
