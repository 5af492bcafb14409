#!/usr/bin/env python3
"""Search benchmark on Django 5.1.4 and the 1,007 real tasks, side by side in one run
with ripgrep (the same identifier and regex questions over the same tree) and with
the reference system's task search.

Usage: bench/bench-search.py [--seconds 10] [--rounds 20] [--no-reference] [--binary PATH]

Measures, loopback only, each bounded in time:
  * cold index: `cos index` (the graph) on the unpacked sdist, then what the search
    index adds (the first query, which catches the index up, less a warm one), and
    the search tables' size against the text they index;
  * in-process latency per query class (benches/search_latency.rs: the tool runtime's
    call, p50 and p99), beside `rg -n -w NAME` / `rg -n REGEX` on the same tree
    (median of 3 runs per query, a process per query as agents run it);
  * REST: the first two answers after a start (they build what the process keeps
    in memory), then, after every query once, throughput at 8 connections over a
    rotating set of 100 queries (wrk);
  * the reference system's task search (/api/p/<slug>/search/tasks) at 8 connections.
--binary names the `cos` of the cold index and the REST runs (default: this
tree's dist build, built first); the in-process latencies are always this
tree's (cargo bench). Needs wrk and ripgrep (apt-get install -y wrk ripgrep).
"""
import argparse, json, os, shutil, signal, sqlite3, statistics, subprocess, sys, tempfile, time, urllib.parse, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure, django_tree, free_port, reference_cos, reference_project, rotating_script, wait_for, wrk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "tests", "fixtures", "coding-os-tasks")
RELEVANCE = os.path.join(ROOT, "tests", "search_relevance", "queries.json")

IDENTIFIERS = ["QuerySet", "get_object_or_404", "CsrfViewMiddleware", "ModelAdmin", "slugify", "HttpResponseRedirect",
               "select_related", "cached_property", "ValidationError", "reverse_lazy"]
REGEXES = [r"def \w+_queryset\(", r"class \w+Admin\(", r"raise \w+Error\(", r"import\s+re$"]
CLASSES = {
    "identifier": IDENTIFIERS,
    "words": ["parse http request", "select related", "model admin", "cache key", "csrf view middleware"],
    "regex": ["/" + r + "/" for r in REGEXES],
    "tasks": ["doctor id collision", "embedding outbox", "agent supervision", "graph audit", "module registry"],
}


def timed(command, **kwargs):
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    return time.perf_counter() - started


def database_bytes(state):
    return sum(os.path.getsize(os.path.join(state, name)) for name in ("cos.db", "cos.db-wal")
               if os.path.exists(os.path.join(state, name)))


def indexed_text_bytes(state):
    with sqlite3.connect(os.path.join(state, "cos.db")) as db:
        files = db.execute("SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM search_files").fetchone()[0]
        bodies = db.execute("SELECT coalesce(sum(length(CAST(body AS BLOB)) + length(CAST(name AS BLOB))), 0) FROM search_items").fetchone()[0]
    return files + bodies


def cold_index(cos, state):
    graph = timed(cos + ["index"])
    subprocess.run(cos + ["board", "import", "--dir", TASKS], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    before = database_bytes(state)
    first = timed(cos + ["search", "warm up", "--json"])
    warm = statistics.median(timed(cos + ["search", "warm up", "--json"]) for _ in range(3))
    after = database_bytes(state)
    text = indexed_text_bytes(state)
    return {"graph_index_s": graph, "search_adds_s": first - warm, "search_bytes": after - before, "text_bytes": text}


def in_process(repo, state, rounds, work):
    queries = os.path.join(work, "classes.json")
    with open(queries, "w") as f:
        json.dump(CLASSES, f)
    out = subprocess.run(["cargo", "bench", "--quiet", "--bench", "search_latency", "--", repo, state, queries, str(rounds)],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def ripgrep(tree):
    """Median wall time of rg per query (3 runs each), by class, in ms."""
    def median_of(command):
        return statistics.median(timed(command, cwd=tree) for _ in range(3)) * 1000
    return {
        "identifier": statistics.median(median_of(["rg", "-n", "-w", name, "."]) for name in IDENTIFIERS),
        "regex": statistics.median(median_of(["rg", "-n", pattern, "."]) for pattern in REGEXES),
    }


def hundred_queries(state):
    queries = [q["q"] for q in json.load(open(RELEVANCE))["queries"]]
    with sqlite3.connect(os.path.join(state, "cos.db")) as db:
        names = [row[0] for row in db.execute(
            "SELECT DISTINCT name FROM search_items WHERE corpus = 'symbols' AND kind = 'class' ORDER BY name LIMIT 200")]
    queries += names[:: max(1, len(names) // 60)]
    return queries[:100]


def serve(command, url, env, cwd):
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    if not wait_for(url, limit=120):
        stop(proc)
        sys.exit(f"{command[0]} did not come up")
    return proc


def stop(proc):
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def rest_throughput(cos, state, seconds, work):
    port = free_port()
    proc = serve(cos + ["serve", "--port", str(port)], f"http://127.0.0.1:{port}/api/health",
                 dict(os.environ, RUST_LOG="warn", COS_ANSWER_CACHE="off"), None)
    try:
        paths = [f"/api/search?q={urllib.parse.quote(q)}&limit=20" for q in hundred_queries(state)]
        # the first answers of a process build what it keeps in memory (the
        # word index, the lines by run): timed apart, then every query once
        # before the measured run
        first = []
        for path in paths[:2] + paths:
            started = time.perf_counter()
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}") as answer:
                answer.read()
            first.append((time.perf_counter() - started) * 1000)
        script = rotating_script(work, paths)
        return wrk(f"http://127.0.0.1:{port}/api/health", 8, seconds, script) + (first[0], first[1])
    finally:
        stop(proc)


def reference_task_search(seconds, work):
    cos = reference_cos()
    repo, env = reference_project(work, TASKS)
    port = free_port()
    proc = serve([cos, "hub", "start", "--foreground", "--port", str(port)], f"http://127.0.0.1:{port}/api/board/list", env, repo)
    try:
        paths = [f"/api/p/refproject/search/tasks?query={urllib.parse.quote(q)}" for q in CLASSES["tasks"]]
        return wrk(f"http://127.0.0.1:{port}/", 8, seconds, rotating_script(work, paths))
    finally:
        stop(proc)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--binary", help="the cos to measure (default: the dist build of this tree, built first)")
    args = parser.parse_args()
    for tool in ("wrk", "rg"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is needed: apt-get install -y wrk ripgrep")
    args.binary = binary_to_measure(args.binary, ROOT)
    work = tempfile.mkdtemp(prefix="cos-bench-search-")
    try:
        tree = django_tree(work)
        state = os.path.join(work, "state")
        cos = [args.binary, "--repo", tree, "--state-dir", state]
        cold = cold_index(cos, state)
        print(f"cold: graph index {cold['graph_index_s']:.2f} s; search index adds {cold['search_adds_s']:.2f} s; "
              f"search tables {cold['search_bytes'] / 1e6:.1f} MB for {cold['text_bytes'] / 1e6:.1f} MB of text "
              f"({cold['search_bytes'] / cold['text_bytes']:.2f}x)", flush=True)
        latency = in_process(tree, state, args.rounds, work)
        rg = ripgrep(tree)
        for name, row in latency.items():
            line = f"{name:<11} p50 {row['p50_ms']:7.2f} ms  p99 {row['p99_ms']:7.2f} ms  ({row['calls']} calls, {row['hits_per_call']:.0f} hits each)"
            if name in rg:
                line += f"  rg p50 {rg[name]:7.2f} ms: {rg[name] / row['p50_ms']:.1f}x faster"
            print(line, flush=True)
        rps, p50, p99, errors, first, second = rest_throughput(cos, state, args.seconds, work)
        print(f"REST: the first answer after start {first:.0f} ms, the second {second:.0f} ms (building what a process keeps)", flush=True)
        print(f"REST, 8 connections, 100 rotating queries, no answer cache: {rps:.0f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms"
              + (f" ({errors} errors)" if errors else ""), flush=True)
        if not args.no_reference:
            ref = reference_task_search(args.seconds, work)
            print(f"reference task search, 8 connections: {ref[0]:.0f} req/s, p50 {ref[1]:.2f} ms, p99 {ref[2]:.2f} ms"
                  + (f" ({ref[3]} errors)" if ref[3] else "") + f"; ours {rps / ref[0]:.0f}x its throughput")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
