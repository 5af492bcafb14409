#!/usr/bin/env python3
"""Load benchmark of GET /api/board/list, cos-hub against the reference system, in one run.

Usage: bench/bench-board.py [--seconds 10] [--no-reference] [--binary PATH]

Boards measured (each on a fresh temporary repository, loopback only):
  * cos-hub on the 1,007 real task files in tests/fixtures/coding-os-tasks (imported),
    with its answer cache on (default) and off (COS_ANSWER_CACHE=off);
  * cos-hub on a generated 5,000-task board (1,000 active, 4,000 complete or archived);
  * the reference system (coding-os 0.3.25, in a temporary venv) on the same 1,007 files,
    as ../shared/reference/run-reference-system.md describes.
Each is loaded with wrk at 1, 8 and 64 connections for --seconds (bounded); the
server's peak memory is its VmHWM afterwards. Needs wrk (apt-get install wrk).
"""
import argparse, os, shutil, signal, subprocess, sys, tempfile, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure, free_port, peak_mb, reference_cos, reference_project, wait_for, wrk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "coding-os-tasks")


def measure(name, command, url, env, cwd, seconds, results):
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        if not wait_for(url):
            print(f"{name}: did not come up", file=sys.stderr)
            return
        urllib.request.urlopen(url, timeout=30).read()
        body = len(urllib.request.urlopen(url, timeout=30).read())
        row = {"name": name, "bytes": body}
        for connections in (1, 8, 64):
            row[connections] = wrk(url, connections, seconds)
        row["peak_mb"] = peak_mb(proc.pid)
        results.append(row)
        print_row(row)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def print_row(row):
    cells = [f"{row['name']:<34}", f"{row['bytes'] / 1024:>6.0f} KB"]
    for c in (1, 8, 64):
        rps, p50, p99, errors = row[c]
        cells.append(f"c={c:<2} {rps:>9.0f} req/s p50 {p50:>7.2f} ms p99 {p99:>7.2f} ms" + (f" ({errors} errors)" if errors else ""))
    cells.append(f"peak {row['peak_mb']:.0f} MB")
    print(" | ".join(cells), flush=True)


def ours(binary, tasks_dir, name, seconds, results, cache="on"):
    repo = tempfile.mkdtemp(prefix="cos-bench-board-")
    try:
        subprocess.run([binary, "board", "import", "--dir", tasks_dir], cwd=repo, check=True, stdout=subprocess.DEVNULL)
        port = free_port()
        env = dict(os.environ, RUST_LOG="warn", COS_ANSWER_CACHE=cache)
        measure(name, [binary, "serve", "--port", str(port)], f"http://127.0.0.1:{port}/api/board/list", env, repo, seconds, results)
    finally:
        shutil.rmtree(repo, ignore_errors=True)


def generated_board(count):
    folder = tempfile.mkdtemp(prefix="cos-bench-tasks-")
    statuses = ["icebox"] * 900 + ["in_progress"] * 30 + ["testing"] * 20 + ["blocked"] * 50 + ["complete"] * 1500 + ["archive"] * 2500
    kinds = ["feature", "bug", "chore", "docs", "refactor"]
    for n in range(1, count + 1):
        status = statuses[(n - 1) % len(statuses)]
        completed = f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}" if status in ("complete", "archive") else "null"
        with open(os.path.join(folder, f"TASK-{n:04d}-generated.md"), "w") as f:
            f.write(f"---\nid: TASK-{n:04d}\ntitle: \"Generated task {n}: improve the {kinds[n % 5]} path for module {n % 37}\"\n"
                    f"status: {status}\nkind: {kinds[n % 5]}\npriority: P{n % 4}\nswimlane: backend\nlabels: [generated, wave-{n % 7}]\n"
                    f"completed: {completed}\n---\n# Task {n}\n\n" + "Some description text. " * 40 + "\n")
    return folder


def reference(seconds, results):
    cos = reference_cos()
    parent = tempfile.mkdtemp(prefix="cos-bench-reference-")
    try:
        repo, env = reference_project(parent, CORPUS)
        port = free_port()
        url = f"http://127.0.0.1:{port}/api/board/list?limit=400&include_archive=true"
        measure("reference (coding-os 0.3.25), 1,007", [cos, "hub", "start", "--foreground", "--port", str(port)], url, env, repo,
                seconds, results)
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--binary", help="the cos to measure (default: the dist build of this tree, built first)")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("wrk is needed: apt-get install -y wrk")
    args.binary = binary_to_measure(args.binary, ROOT)
    results = []
    ours(args.binary, CORPUS, "cos-hub, 1,007 tasks", args.seconds, results)
    ours(args.binary, CORPUS, "cos-hub, 1,007 tasks, cache off", args.seconds, results, cache="off")
    folder = generated_board(5000)
    try:
        ours(args.binary, folder, "cos-hub, 5,000 tasks", args.seconds, results)
        ours(args.binary, folder, "cos-hub, 5,000 tasks, cache off", args.seconds, results, cache="off")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if not args.no_reference:
        reference(args.seconds, results)
        ref = results[-1]
        for row in results[:-1]:
            ratios = ", ".join(f"c={c}: {row[c][0] / ref[c][0]:.0f}x" for c in (1, 8, 64))
            print(f"{row['name']} vs reference throughput: {ratios}")


if __name__ == "__main__":
    main()
