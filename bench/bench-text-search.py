#!/usr/bin/env python3
"""Code text search over every text file of a large tree, beside ripgrep in one run.

Usage: bench/bench-text-search.py [--tree PATH | --linux PATH] [--binary PATH] [--rounds 20] [--in-process]
           [--edits N]

Without --tree or --linux the tree is the Django 5.1.4 sdist (downloaded once
from the package registry). --linux takes the unpacked source of Debian's
`linux-source-6.1` package (`tar xf /usr/src/linux-source-6.1.tar.xz`); the
packaging appends `/*` and `!/debian/` to its top-level `.gitignore`, which
would hide every file, so those two lines are dropped from that copy first.

Measures, loopback only, each bounded in count:
  * cold index: `cos index`, its wall time and peak RSS: the graph's walk
    reads every file (those in a language it does not parse are kept as
    text), then the search index is built (the time each took, as it prints
    them);
  * what is searchable: files and bytes by language, and what was left out
    and why (`cos index`'s own lines);
  * REST latency, one connection, every query `--rounds` times after a first
    pass (which builds what a process keeps in memory): p50 and p99 of the
    identifier and regex classes;
  * with --edits N, re-indexing after a one-file edit of N files spread over
    the tree (C files with --linux): the whole `cos index` and the graph's
    own run, each file put back afterwards;
  * impact to depth 3 over REST on a function with many callers (the median
    of those called from ten places or more), median of --rounds;
  * with --in-process, the same classes through the tool runtime in one
    process (benches/search_latency.rs, this tree's bench build);
  * ripgrep on the same tree, the same questions (`rg -n -w NAME`,
    `rg -n REGEX`, `--no-require-git` so it reads the same .gitignore rules the
    hub does), median of 3 runs per query, a process per query as agents run it.
--binary names the `cos` to measure (default: this tree's dist build, built
first). Needs ripgrep (apt-get install -y ripgrep).
"""
import argparse, json, os, re, shutil, sqlite3, statistics, subprocess, sys, tempfile, time, urllib.parse, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure, django_tree, free_port, stop, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

QUESTIONS = {
    "django": {
        "identifier": ["QuerySet", "get_object_or_404", "CsrfViewMiddleware", "ModelAdmin", "slugify",
                       "HttpResponseRedirect", "select_related", "cached_property", "ValidationError", "reverse_lazy"],
        "regex": [r"def \w+_queryset\(", r"class \w+Admin\(", r"raise \w+Error\(", r"import\s+re$"],
    },
    "linux": {
        "identifier": ["kmalloc", "spin_lock_irqsave", "task_struct", "copy_from_user", "ext4_fill_super",
                       "tcp_v4_connect", "sched_setaffinity", "list_for_each_entry", "dev_err", "EXPORT_SYMBOL_GPL"],
        "regex": [r"static int \w+_probe\(", r"#define \w+_MASK\b", r"struct \w+_ops \{", r"EXPORT_SYMBOL\(\w+_init\)"],
    },
}


def measured(command):
    """Runs `command` to its end: (seconds, peak RSS in MB)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({process.returncode}): {out[-2000:]}")
    return time.perf_counter() - started, usage.ru_maxrss / 1024, out


def without_debian_ignores(tree):
    """Drops the Debian packaging's `/*` and `!/debian/` from the top .gitignore."""
    path = os.path.join(tree, ".gitignore")
    with open(path) as f:
        lines = f.read().splitlines(keepends=True)
    kept = [line for line in lines if line.strip() not in ("/*", "!/debian/")]
    if len(kept) != len(lines):
        with open(path, "w") as f:
            f.writelines(kept)
        print(f"dropped {len(lines) - len(kept)} lines of the Debian packaging from {path}", flush=True)


def cold_index(cos):
    index_s, peak_mb, printed = measured(cos + ["index"])
    graph_ms = re.search(r"^indexed .* in (\d+) ms", printed, re.M)
    search_ms = re.search(r"^search index: .* in (\d+) ms", printed, re.M)
    if not graph_ms:
        sys.exit(f"cos index printed no time: {printed[:2000]}")
    if search_ms:
        search_s = int(search_ms.group(1)) / 1000
    else:
        # a cos whose `cos index` leaves the search index to the first query
        # (before 2026-12-07): that query, less a warm one
        first_s, first_mb, _ = measured(cos + ["search", "warm up", "--json"])
        search_s = first_s - statistics.median(measured(cos + ["search", "warm up", "--json"])[0] for _ in range(3))
        index_s, peak_mb = index_s + search_s, max(peak_mb, first_mb)
    return {"index_s": index_s, "peak_mb": peak_mb, "graph_s": int(graph_ms.group(1)) / 1000,
            "search_s": search_s, "printed": printed}


def edit_reindex(cos, tree, count, suffix):
    """Re-indexing after a one-file edit, `count` files of `suffix` spread over
    the tree: (whole command ms, the graph's own ms) for each; every file is
    put back and indexed again, unmeasured."""
    candidates = sorted(os.path.join(folder, name) for folder, _, names in os.walk(tree)
                        if "/." not in folder for name in names if name.endswith(suffix))
    step = max(1, len(candidates) // max(1, count))
    timings = []
    for path in candidates[step // 2::step][:count]:
        with open(path, "rb") as f:
            original = f.read()
        try:
            with open(path, "ab") as f:
                f.write(b"\n/* edited by the benchmark */\n")
            seconds, _, printed = measured(cos + ["index"])
            graph_ms = re.search(r"^indexed .* in (\d+) ms: 1 parsed", printed, re.M)
            if not graph_ms:
                sys.exit(f"an edit of {path} re-indexed more than it: {printed[:1000]}")
            timings.append((seconds * 1000, int(graph_ms.group(1))))
        finally:
            with open(path, "wb") as f:
                f.write(original)
            measured(cos + ["index"])
    return timings


def impact_node(state):
    """A function with many callers and no outlier: the median of those
    called from ten places or more."""
    with sqlite3.connect(f"file:{os.path.join(state, 'cos.db')}?mode=ro", uri=True) as db:
        rows = db.execute(
            "SELECT t.uid, count(*) AS callers FROM graph_edges e JOIN graph_nodes t ON t.id = e.target "
            "WHERE e.kind = 'calls' AND t.kind = 'function' GROUP BY t.id HAVING callers >= 10 ORDER BY callers, t.uid"
        ).fetchall()
    return rows[len(rows) // 2] if rows else None


def impact_latency(port, uid, rounds):
    url = f"http://127.0.0.1:{port}/api/graph/impact"
    body = json.dumps({"uid": uid, "depth": 3}).encode()
    times, count = [], 0
    for _ in range(rounds):
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=600) as answer:
            count = json.load(answer)["data"]["count"]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), count


def rest_latency(cos, questions, rounds, impact=None):
    port = free_port()
    server = subprocess.Popen(cos + ["serve", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=dict(os.environ, RUST_LOG="warn", COS_ANSWER_CACHE="off"))
    try:
        if not wait_for(f"http://127.0.0.1:{port}/api/health", limit=600):
            sys.exit("cos serve did not come up")
        def ask(query):
            url = f"http://127.0.0.1:{port}/api/search?q={urllib.parse.quote(query)}&limit=20&area=code"
            started = time.perf_counter()
            with urllib.request.urlopen(url, timeout=600) as answer:
                body = json.load(answer)
            return (time.perf_counter() - started) * 1000, body["data"]["total"]
        classes = {"identifier": questions["identifier"], "regex": ["/" + r + "/" for r in questions["regex"]]}
        first = [ask(q)[0] for qs in classes.values() for q in qs]
        rows = {}
        for name, queries in classes.items():
            times, hits = [], []
            for _ in range(rounds):
                for query in queries:
                    ms, total = ask(query)
                    times.append(ms)
                    hits.append(total)
            times.sort()
            rows[name] = {"p50_ms": statistics.median(times), "p99_ms": times[int(len(times) * 0.99) - 1],
                          "calls": len(times), "hits": statistics.median(hits)}
        if impact:
            rows["impact"] = impact_latency(port, impact, rounds)
        return rows, first
    finally:
        stop(server)


def in_process(tree, state, questions, rounds, work):
    queries = os.path.join(work, "classes.json")
    with open(queries, "w") as f:
        json.dump({"identifier": questions["identifier"], "regex": ["/" + r + "/" for r in questions["regex"]]}, f)
    out = subprocess.run(["cargo", "bench", "--quiet", "--bench", "search_latency", "--", tree, state, queries, str(rounds)],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def ripgrep(tree, questions):
    def median_of(command):
        return statistics.median(measured(command)[0] for _ in range(3)) * 1000
    base = ["rg", "--no-require-git", "-n"]
    return {
        "identifier": statistics.median(median_of(base + ["-w", name, tree]) for name in questions["identifier"]),
        "regex": statistics.median(median_of(base + [pattern, tree]) for pattern in questions["regex"]),
    }


def commit_of(tree):
    try:
        return subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except subprocess.CalledProcessError:
        return "no git"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tree", help="any tree to search (questions: Django's)")
    parser.add_argument("--linux", help="the unpacked linux-source-6.1 (questions: the kernel's)")
    parser.add_argument("--binary", help="the cos to measure (default: the dist build of this tree, built first)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--in-process", action="store_true", help="also time the queries in process (cargo bench)")
    parser.add_argument("--edits", type=int, default=0,
                        help="re-index after this many one-file edits (C files on --linux, Python ones else)")
    args = parser.parse_args()
    if shutil.which("rg") is None:
        sys.exit("ripgrep is needed: apt-get install -y ripgrep")
    binary = binary_to_measure(args.binary, ROOT)
    work = tempfile.mkdtemp(prefix="cos-bench-text-")
    try:
        if args.linux:
            tree, questions = os.path.abspath(args.linux), QUESTIONS["linux"]
            without_debian_ignores(tree)
        else:
            tree, questions = (os.path.abspath(args.tree) if args.tree else django_tree(work)), QUESTIONS["django"]
        state = os.path.join(work, "state")
        cos = [binary, "--repo", tree, "--state-dir", state]
        print(f"cos {binary} (commit {commit_of(ROOT)}), tree {tree}", flush=True)
        cold = cold_index(cos)
        print(f"cold `cos index` {cold['index_s']:.1f} s, peak RSS {cold['peak_mb']:.0f} MB: the graph "
              f"{cold['graph_s']:.1f} s, then the search index {cold['search_s']:.1f} s", flush=True)
        for line in cold["printed"].splitlines():
            if line.startswith(("indexed ", "left out by reason", "searchable by language", "search index")):
                print("  " + (line if len(line) < 400 else line[:400] + " ..."), flush=True)
        if args.edits:
            timings = edit_reindex(cos, tree, args.edits, ".c" if args.linux else ".py")
            print(f"re-index after a one-file edit, median of {len(timings)}: "
                  f"{statistics.median(w for w, _ in timings):.0f} ms the whole command, "
                  f"{statistics.median(g for _, g in timings):.0f} ms the graph's run (each: "
                  + ", ".join(f"{w:.0f}/{g}" for w, g in timings) + ")", flush=True)
        impact = impact_node(state)
        rows, first = rest_latency(cos, questions, args.rounds, impact[0] if impact else None)
        if "impact" in rows:
            ms, count = rows.pop("impact")
            print(f"impact depth 3 over REST on {impact[0]} ({impact[1]} callers, {count} dependents): "
                  f"median {ms:.1f} ms", flush=True)
        rg = ripgrep(tree, questions)
        print(f"REST, first pass after start: median {statistics.median(first):.1f} ms, max {max(first):.0f} ms", flush=True)
        for name, row in rows.items():
            print(f"{name:<10} REST p50 {row['p50_ms']:7.2f} ms  p99 {row['p99_ms']:7.2f} ms  ({row['calls']} calls, "
                  f"median {row['hits']:.0f} hits)  rg p50 {rg[name]:8.1f} ms: {rg[name] / row['p50_ms']:.0f}x faster",
                  flush=True)
        if args.in_process:
            for name, row in in_process(tree, state, questions, args.rounds, work).items():
                print(f"{name:<10} in process p50 {row['p50_ms']:7.2f} ms  p99 {row['p99_ms']:7.2f} ms  "
                      f"rg p50 {rg[name]:8.1f} ms: {rg[name] / row['p50_ms']:.0f}x faster", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
