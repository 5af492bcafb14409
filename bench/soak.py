#!/usr/bin/env python3
"""Soak test of `cos serve` on loopback: a mixed load for a bounded time.

Starts the hub on a throwaway copy of a repository (by default a fresh one
with the reference system's 1,007 real tasks imported when the corpus is
there), then runs at once, until the time is up:
  - readers: board list, graph search, task search, a document read;
  - writers: task creates, edits and moves to the archive (the open columns,
    answered whole, keep their size), document patches (the same section
    rewritten, so the document keeps its size), evidence records (50
    sessions a writer);
  - MCP sessions: a new session every few requests, never closed (the hub's
    cap and idle expiry must bound them);
  - idle sockets: connections that never send a byte (the header timeout must
    close them);
  - a held reader: another process keeping a read transaction open on the
    database for 30 s at a time (the WAL must stay bounded).
Every 10 s it prints the hub's RSS, open file descriptors, WAL size and log
size, and at the end whether RSS stayed flat in the second half (its maximum
there within 10 % of the first half's). Loopback only; bounded in time
(--seconds) and in requests (--max-requests).

Usage: bench/soak.py [--binary target/dist/cos] [--seconds 300]
"""

import argparse
import http.client
import json
import os
import re
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import stop

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpora" / "coding-os-tasks"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=str(ROOT / "target" / "dist" / "cos"))
    parser.add_argument("--seconds", type=int, default=300)
    parser.add_argument("--max-requests", type=int, default=2_000_000)
    parser.add_argument("--idle-sockets", type=int, default=200)
    # to find which part of the load a growth comes with
    parser.add_argument("--without", action="append", default=[],
                        choices=["held-reader", "mcp", "evidence", "docs", "tasks", "reads"],
                        help="leave a part of the load out (repeatable)")
    return parser.parse_args()


class Budget:
    """Stops every worker at the deadline or after the request budget."""

    def __init__(self, seconds, max_requests):
        self.deadline = time.monotonic() + seconds
        self.left = max_requests
        self.lock = threading.Lock()
        self.counts = {}
        self.failures = {}

    def take(self, kind):
        with self.lock:
            if self.left <= 0 or time.monotonic() > self.deadline:
                return False
            self.left -= 1
            self.counts[kind] = self.counts.get(kind, 0) + 1
            return True

    def failed(self, kind, status):
        with self.lock:
            key = f"{kind} {status}"
            self.failures[key] = self.failures.get(key, 0) + 1

    def running(self):
        return time.monotonic() < self.deadline and self.left > 0


def request(port, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        data = None if body is None else json.dumps(body).encode()
        sent = {"content-type": "application/json", **(headers or {})}
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        payload = response.read()
        return response.status, payload, response.getheaders()
    finally:
        connection.close()


def make_repo(binary):
    repo = Path(tempfile.mkdtemp(prefix="cos-soak-"))
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    (repo / "docs").mkdir()
    (repo / "docs" / "runbook.md").write_text("# Runbook\n## Log\nstart\n")
    source = repo / "src"
    source.mkdir()
    for n in range(40):
        (source / f"module_{n}.py").write_text(
            f"def handler_{n}(request):\n    return parse_request(request)\n\n"
            f"class Service{n}:\n    def run(self):\n        return handler_{n}(None)\n"
        )
    if CORPUS.is_dir():
        tasks = repo / "reference-tasks"
        shutil.copytree(CORPUS, tasks)
        subprocess.run(
            [binary, "--repo", str(repo), "board", "import", "--dir", str(tasks)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    subprocess.run([binary, "--repo", str(repo), "index"], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return repo


def start_hub(binary, repo):
    hub = subprocess.Popen(
        [binary, "serve", str(repo), "--port", "0"],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = hub.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)", line)
        if found:
            threading.Thread(target=lambda: [None for _ in hub.stderr], daemon=True).start()
            return hub, int(found.group(1))
    hub.kill()
    sys.exit("cos serve did not announce its address")


def reader(port, budget, left_out=()):
    paths = [
        "/api/board/list?page_size=50",
        "/api/graph/search?query=handler&limit=20",
        "/api/board/search?text=graph",
        "/api/docs/document?mount=docs&path=runbook.md",
        "/api/health",
    ]
    n = 0
    if "reads" in left_out:
        return
    while budget.take("read"):
        status, _, _ = request(port, "GET", paths[n % len(paths)])
        if status >= 500:
            budget.failed("read", status)
        n += 1


def writer(port, budget, number, left_out=()):
    kinds = [kind for kind, name in enumerate(["tasks", "docs", "evidence", "mcp"]) if name not in left_out]
    if not kinds:
        return
    n = 0
    while budget.running():
        kind = kinds[n % len(kinds)]
        n += 1
        if kind == 0 and budget.take("task create"):
            status, body, _ = request(port, "POST", "/api/board/tasks",
                                      {"title": f"soak {number}-{n}"},
                                      {"Idempotency-Key": f"soak-{number}-{n}"})
            if status != 201:
                budget.failed("task create", status)
                continue
            task = json.loads(body)["data"]
            if n % 8 == 1:
                if budget.take("task edit"):
                    status, _, _ = request(port, "PATCH", f"/api/board/tasks/{task['id']}",
                                           {"changes": {"description": f"edited {n}"}},
                                           {"If-Match": f"\"{task['version']}\""})
                    if status != 200:
                        budget.failed("task edit", status)
            # done with: the open columns (answered whole) keep their size,
            # as on a board where work flows through
            if budget.take("task move"):
                status, _, _ = request(port, "POST", f"/api/board/tasks/{task['id']}/move",
                                       {"from": "icebox", "to": "archive"})
                if status != 200:
                    budget.failed("task move", status)
        elif kind == 1 and budget.take("doc patch"):
            status, body, headers = request(port, "GET", "/api/docs/document?mount=docs&path=runbook.md")
            etag = dict((k.lower(), v) for k, v in headers).get("etag", "")
            status, _, _ = request(port, "PATCH", "/api/docs/document?mount=docs&path=runbook.md",
                                   {"operations": [{"op": "replace_section", "section": "Log",
                                                    "content": f"line {number}-{n}"}]},
                                   {"If-Match": etag, "Idempotency-Key": f"doc-{number}-{n}"})
            if status not in (200, 412):
                budget.failed("doc patch", status)
        elif kind == 2 and budget.take("evidence"):
            status, _, _ = request(port, "POST", "/api/supervise/outputs",
                                   {"session_id": f"soak-{number}-{n % 50}", "task_marker": "SOAK",
                                    "persona_id": "soak", "formula_id": "researcher",
                                    "output_json": json.dumps({"n": n})})
            if status != 201:
                budget.failed("evidence", status)
        elif kind == 3 and budget.take("mcp session"):
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "soak", "version": "1"}}}
            status, _, _ = request(port, "POST", "/mcp", initialize,
                                   {"accept": "application/json, text/event-stream"})
            if status != 200:
                budget.failed("mcp session", status)


def idle_sockets(port, budget, count):
    """Keeps about `count` silent connections open; the hub must close them."""
    sockets = []
    closed_by_hub = 0
    while budget.running():
        alive = []
        for sock in sockets:
            try:
                if sock.recv(1, socket.MSG_DONTWAIT) == b"":
                    closed_by_hub += 1
                    sock.close()
                    continue
            except BlockingIOError:
                pass
            except OSError:
                closed_by_hub += 1
                sock.close()
                continue
            alive.append(sock)
        sockets = alive
        while len(sockets) < count:
            try:
                sockets.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                break
        time.sleep(1)
    for sock in sockets:
        sock.close()
    budget.counts["idle sockets closed by the hub"] = closed_by_hub


def held_reader(database, budget):
    """Holds a read transaction for 30 s, lets go for 5 s, again."""
    while budget.running():
        try:
            connection = sqlite3.connect(database, timeout=10)
            connection.execute("BEGIN")
            connection.execute("SELECT count(*) FROM tasks").fetchone()
            end = time.monotonic() + 30
            while budget.running() and time.monotonic() < end:
                time.sleep(0.5)
            connection.rollback()
            connection.close()
        except sqlite3.Error as error:
            budget.failed("held reader", str(error))
        time.sleep(5)


def sample(pid, state):
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kib = int(re.search(r"VmRSS:\s+(\d+)", status).group(1))
    anon_kib = int(re.search(r"RssAnon:\s+(\d+)", status).group(1))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    wal = state / "cos.db-wal"
    wal_bytes = wal.stat().st_size if wal.exists() else 0
    log_bytes = sum(p.stat().st_size for p in state.glob(".mcp.log*"))
    return rss_kib, anon_kib, fds, wal_bytes, log_bytes


def main():
    args = parse_args()
    binary = str(Path(args.binary).resolve())
    if not os.access(binary, os.X_OK):
        sys.exit(f"{binary}: no such binary; build it with cargo build --profile dist")
    repo = make_repo(binary)
    hub, port = start_hub(binary, repo)
    state = repo / ".cos"
    budget = Budget(args.seconds, args.max_requests)
    left_out = set(args.without)
    workers = [threading.Thread(target=reader, args=(port, budget, left_out)) for _ in range(4)]
    workers += [threading.Thread(target=writer, args=(port, budget, n, left_out)) for n in range(4)]
    workers.append(threading.Thread(target=idle_sockets, args=(port, budget, args.idle_sockets)))
    if "held-reader" not in left_out:
        workers.append(threading.Thread(target=held_reader, args=(str(state / "cos.db"), budget)))
    for worker in workers:
        worker.start()
    samples = []
    started = time.monotonic()
    print(f"soak of {binary} for {args.seconds} s on 127.0.0.1:{port}")
    print(f"{'t (s)':>6} {'RSS (MiB)':>10} {'anon (MiB)':>10} {'fds':>6} {'WAL (MiB)':>10} {'log (KiB)':>10} {'requests':>9}")
    try:
        while budget.running():
            time.sleep(10)
            rss, anon, fds, wal, log = sample(hub.pid, state)
            samples.append((time.monotonic() - started, rss, fds, wal, log, anon))
            done = sum(budget.counts.values())
            print(f"{samples[-1][0]:6.0f} {rss / 1024:10.1f} {anon / 1024:10.1f} {fds:6d} {wal / 2**20:10.1f} {log / 1024:10.1f} {done:9d}",
                  flush=True)
        for worker in workers:
            worker.join(timeout=60)
    finally:
        stop(hub)
    after_stop = (state / "cos.db-wal").stat().st_size if (state / "cos.db-wal").exists() else 0
    print("requests by kind:", json.dumps(budget.counts, sort_keys=True))
    print("failures:", json.dumps(budget.failures, sort_keys=True) if budget.failures else "none")
    print(f"WAL after a clean stop: {after_stop} bytes")
    flat = True
    if len(samples) >= 4:
        half = len(samples) // 2
        first = max(s[1] for s in samples[:half])
        second = max(s[1] for s in samples[half:])
        flat = second <= first * 1.10
        print(f"RSS max first half {first / 1024:.1f} MiB, second half {second / 1024:.1f} MiB, "
              f"median {statistics.median(s[1] for s in samples) / 1024:.1f} MiB: "
              f"{'flat' if flat else 'GROWING'}")
    print(f"peak fds {max(s[2] for s in samples) if samples else 0}, "
          f"peak WAL {max(s[3] for s in samples) / 2**20 if samples else 0:.1f} MiB, "
          f"peak log {max(s[4] for s in samples) / 1024 if samples else 0:.1f} KiB")
    shutil.rmtree(repo, ignore_errors=True)
    return 0 if flat and not any(k.split()[-1].startswith("5") for k in budget.failures) else 1


if __name__ == "__main__":
    sys.exit(main())
