#!/usr/bin/env python3
"""Graph benchmark on real code nobody here wrote: the Django 5.1.4 source distribution.

Usage: bench/bench-graph.py [--edits 5] [--seconds 8] [--reference] [--binary PATH]

Downloads the sdist with pip (kept in a temporary folder, never in the repository),
then with the dist build (or the --binary given) measures: a cold `cos index` (wall time, peak RSS, node and
edge counts), re-indexing after a one-file edit (median over --edits edits of different
files), after files appear and go (a new package, a much-imported module removed and
restored; medians of 3), and over HTTP on loopback: cos_graph_impact to depth 3 on a well-connected node
(median latency), GET /api/graph/context at 8 connections, and the export of 2,000
nodes at 8 and 64 connections with the server's peak memory, with the answer cache on
(default) and off (COS_ANSWER_CACHE=off). Load runs are wrk runs bounded to --seconds.

With --reference, the reference system (coding-os 0.3.25, in a temporary venv; see
../shared/reference/run-reference-system.md) indexes the same tree (about 5.5 minutes
here) and serves context and export under the same load, in the same run.
"""
import argparse, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time, urllib.parse, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure, free_port, peak_mb, post_script, reference_cos, wait_for, wrk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EDITED = ["django/utils/text.py", "django/http/request.py", "django/core/mail/message.py",
          "django/forms/widgets.py", "django/template/base.py", "django/db/models/query.py"]
CONTEXT_NODE = "code:file:django/db/models/query.py"
MOVED = "django/db/models/query.py"
EXPORT_BODY = '{"root":"folder:django","edge_types":["contains"],"max_hops":10,"max_nodes":2000}'


def timed(command, cwd=None, env=None):
    """Runs `command` under /usr/bin/time; returns (seconds, peak MB, stdout)."""
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + command, cwd=cwd, env=env, capture_output=True, text=True, check=True)
    seconds, kilobytes = re.search(r"TIME ([\d.]+) (\d+)", out.stderr).groups()
    return float(seconds), int(kilobytes) / 1024, out.stdout


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def row(name, load):
    rps, p50, p99, errors = load
    return f"{name}: {rps:,.0f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms" + (f" ({errors} failed: non-2xx or timed out)" if errors else "")


def serve_ours(binary, repo, work, seconds, cache):
    port = free_port()
    hub = subprocess.Popen([binary, "serve", repo, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           env=dict(os.environ, RUST_LOG="warn", COS_ANSWER_CACHE=cache), start_new_session=True)
    label = f"cos-hub (answer cache {cache})"
    try:
        base = f"http://127.0.0.1:{port}"
        if not wait_for(base + "/api/health"):
            sys.exit("cos serve did not come up")
        node = "code:file:django/utils/functional.py"
        latencies = []
        for _ in range(15):
            started = time.perf_counter()
            answer = post(base + "/api/graph/impact", {"uid": node, "depth": 3})
            latencies.append((time.perf_counter() - started) * 1000)
        print(f"{label}: impact depth 3 on {node} ({answer['data']['count']} dependents): median {statistics.median(latencies):.1f} ms over HTTP")
        exported = post(base + "/api/graph/export", json.loads(EXPORT_BODY))["data"]
        print(f"{label}: export answer {len(exported['nodes'])} nodes, {len(exported['edges'])} edges")
        context_url = f"{base}/api/graph/context?uid={CONTEXT_NODE}"
        print("  " + row(f"context of {CONTEXT_NODE}, 8 connections", wrk(context_url, 8, seconds)))
        script = post_script(work, EXPORT_BODY)
        for connections in (8, 64):
            print("  " + row(f"export of 2,000 nodes, {connections} connections", wrk(base + "/api/graph/export", connections, seconds, script)))
        print(f"  peak RSS of the server: {peak_mb(hub.pid):.0f} MB")
    finally:
        os.killpg(hub.pid, signal.SIGTERM)
        hub.wait(timeout=15)


def reference(repo_source, work, seconds):
    cos = reference_cos()
    repo = os.path.join(work, "reference-repo")
    shutil.copytree(repo_source, repo, ignore=shutil.ignore_patterns(".cos"))
    home = os.path.join(work, "reference-home")
    os.makedirs(home)
    os.makedirs(os.path.join(repo, ".coding-os"))
    subprocess.run(["git", "init", "-q", repo], check=True)
    env = dict(os.environ, HOME=home, HF_HUB_OFFLINE="1", COS_GRAPH_BACKEND="sqlite",
               COS_GRAPH_RATE_CAPACITY="1000000", COS_GRAPH_RATE_REFILL="1000000")
    seconds_index, peak, _ = timed([cos, "graph-reindex"], cwd=repo, env=env)
    print(f"reference cold index: {seconds_index:.1f} s wall, peak RSS {peak:.0f} MB")
    out = subprocess.run([cos, "registry", "add", repo], env=env, capture_output=True, text=True, check=True).stdout
    # "Registered <slug> → <path>"
    slug = re.search(r"Registered (\S+)", out).group(1)
    port = free_port()
    hub = subprocess.Popen([cos, "hub", "start", "--foreground", "--port", str(port)], cwd=repo, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}"
        if not wait_for(base + "/openapi.json", limit=120):
            print("reference hub did not come up", file=sys.stderr)
            return
        uid = urllib.parse.quote(CONTEXT_NODE, safe="")
        print("  " + row("reference context, 8 connections", wrk(f"{base}/api/p/{slug}/graph/context/{uid}", 8, seconds)))
        export = f"{base}/api/p/{slug}/graph/export?root_uid=folder:django&edge_types=contains&max_nodes=2000&max_hops=10"
        for connections in (8, 64):
            print("  " + row(f"reference export of 2,000 nodes, {connections} connections", wrk(export, connections, seconds)))
        print(f"  peak RSS of the reference hub: {peak_mb(hub.pid):.0f} MB")
    finally:
        os.killpg(hub.pid, signal.SIGTERM)
        try:
            hub.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(hub.pid, signal.SIGKILL)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--reference", action="store_true")
    parser.add_argument("--binary", help="the cos to measure (default: the dist build of this tree, built first)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install -y wrk")
    binary = binary_to_measure(args.binary, ROOT)
    work = tempfile.mkdtemp(prefix="cos-bench-graph-")
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "django==5.1.4", "-d", work], check=True)
        subprocess.run(["tar", "xzf", os.path.join(work, "Django-5.1.4.tar.gz"), "-C", work], check=True)
        repo = os.path.join(work, "Django-5.1.4")
        pristine = os.path.join(work, "pristine")
        shutil.copytree(repo, pristine)

        colds = []
        for run in range(3):
            shutil.rmtree(os.path.join(repo, ".cos"), ignore_errors=True)
            seconds, peak, out = timed([binary, "index", repo])
            colds.append((seconds, peak))
        print(f"cold index: median {statistics.median(s for s, _ in colds):.2f} s wall over 3 runs ("
              + ", ".join(f"{s:.2f}" for s, _ in colds) + f"), peak RSS {max(p for _, p in colds):.0f} MB")
        print("  " + "\n  ".join(out.strip().splitlines()))

        edits = []
        for path in (EDITED * args.edits)[: args.edits]:
            with open(os.path.join(repo, path), "a") as f:
                f.write("\n# edited by the benchmark\n")
            seconds, _, out = timed([binary, "index", repo])
            assert " 1 parsed" in out, out
            edits.append(seconds * 1000)
        print(f"re-index after a one-file edit: median {statistics.median(edits):.0f} ms (wall, whole command) over {len(edits)} edits: "
              + ", ".join(f"{e:.0f}" for e in edits))

        # files that appear and go: a new package, and a much-imported module removed and put back
        moves = {"add a new package": [], "remove it": [], "remove django/db/models/query.py": [], "put it back": []}
        package, module = os.path.join(repo, "cos_bench_pkg"), os.path.join(repo, MOVED)
        for _ in range(3):
            os.makedirs(package)
            with open(os.path.join(package, "jobs.py"), "w") as f:
                f.write("from django.utils.text import slugify\n\ndef run(title):\n    return slugify(title)\n")
            moves["add a new package"].append(timed([binary, "index", repo])[0] * 1000)
            shutil.rmtree(package)
            moves["remove it"].append(timed([binary, "index", repo])[0] * 1000)
            os.rename(module, module + ".away")
            moves["remove django/db/models/query.py"].append(timed([binary, "index", repo])[0] * 1000)
            os.rename(module + ".away", module)
            moves["put it back"].append(timed([binary, "index", repo])[0] * 1000)
        for what, times in moves.items():
            print(f"re-index after files appear or go, {what}: median {statistics.median(times):.0f} ms over 3: "
                  + ", ".join(f"{t:.0f}" for t in times))

        for cache in ("on", "off"):
            serve_ours(binary, repo, work, args.seconds, cache)
        if args.reference:
            reference(pristine, work, args.seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
