#!/usr/bin/env python3
"""Graph benchmark on real code nobody here wrote: the Django 5.1.4 source distribution.

Usage: scripts/bench-graph.py [--edits 5] [--seconds 8]

Downloads the sdist with pip (kept in a temporary folder, never in the repository),
then with the release build measures: a cold `cos index` (wall time, peak RSS, node and
edge counts), re-indexing after a one-file edit (median over --edits edits of different
files), and over HTTP on loopback: cos_graph_impact to depth 3 on a well-connected node
(median latency) and GET /api/graph/context with wrk at 8 connections (bounded in time).
"""
import argparse, json, os, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, time, urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "cos")
EDITED = ["django/utils/text.py", "django/http/request.py", "django/core/mail/message.py",
          "django/forms/widgets.py", "django/template/base.py", "django/db/models/query.py"]


def timed(command, cwd=None):
    """Runs `command` under /usr/bin/time; returns (seconds, peak MB, stdout)."""
    out = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M"] + command, cwd=cwd, capture_output=True, text=True, check=True)
    seconds, kilobytes = re.search(r"TIME ([\d.]+) (\d+)", out.stderr).groups()
    return float(seconds), int(kilobytes) / 1024, out.stdout


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def post(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=8)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--bin", "cos"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="cos-bench-graph-")
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "django==5.1.4", "-d", work], check=True)
        subprocess.run(["tar", "xzf", os.path.join(work, "Django-5.1.4.tar.gz"), "-C", work], check=True)
        repo = os.path.join(work, "Django-5.1.4")

        seconds, peak, out = timed([BINARY, "index", repo])
        print(f"cold index: {seconds:.2f} s wall, peak RSS {peak:.0f} MB")
        print("  " + "\n  ".join(out.strip().splitlines()))

        edits = []
        for path in (EDITED * args.edits)[: args.edits]:
            with open(os.path.join(repo, path), "a") as f:
                f.write("\n# edited by the benchmark\n")
            seconds, _, out = timed([BINARY, "index", repo])
            assert " 1 parsed" in out, out
            edits.append(seconds * 1000)
        print(f"re-index after a one-file edit: median {statistics.median(edits):.0f} ms (wall, whole command) over {len(edits)} edits: "
              + ", ".join(f"{e:.0f}" for e in edits))

        port = free_port()
        hub = subprocess.Popen([BINARY, "serve", repo, "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=dict(os.environ, RUST_LOG="warn"), start_new_session=True)
        try:
            base = f"http://127.0.0.1:{port}"
            for _ in range(100):
                try:
                    urllib.request.urlopen(base + "/api/health", timeout=1)
                    break
                except Exception:
                    time.sleep(0.05)
            node = "code:file:django/utils/functional.py"
            latencies = []
            for _ in range(15):
                started = time.perf_counter()
                answer = post(base + "/api/graph/impact", {"uid": node, "depth": 3})
                latencies.append((time.perf_counter() - started) * 1000)
            print(f"impact depth 3 on {node} ({answer['data']['count']} dependents): median {statistics.median(latencies):.1f} ms over HTTP")
            if shutil.which("wrk"):
                url = f"{base}/api/graph/context?uid=code:file:django/db/models/query.py"
                out = subprocess.run(["wrk", "-t2", "-c8", f"-d{args.seconds}s", "--latency", url], capture_output=True, text=True).stdout
                rps = re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)
                p50 = re.search(r"50%\s+(\S+)", out).group(1)
                print(f"context of django/db/models/query.py, 8 connections: {float(rps):.0f} req/s, p50 {p50}")
        finally:
            os.killpg(hub.pid, signal.SIGTERM)
            hub.wait(timeout=15)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
