#!/usr/bin/env python3
"""How long another writer waits for the database's one write lock while the
hub records a repository's Markdown for the first time (`cos_docs_scan` on a
fresh state folder), and how long that scan takes.

Usage: bench/bench-first-scan.py --binary A [--binary B ...] [--documents 3000] [--runs 3]

A repository of --documents small Markdown files (in `notes/`, which the
default `repo` mount holds) is made in a temporary folder. Each run starts
from an empty state folder: `cos tool call cos_docs_scan` is started, and a
second writer (this script's own SQLite connection) takes the write lock
(`BEGIN IMMEDIATE`, then `COMMIT`) every 5 ms until the scan ends. Prints,
per build and run, the scan's wall time and the writer's longest wait; the
builds take turns run by run. Loopback files only; the folder is removed at
the end.
"""
import argparse, os, shutil, sqlite3, statistics, subprocess, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure


def make_repository(root, documents):
    notes = os.path.join(root, "notes")
    os.makedirs(notes)
    for n in range(documents):
        with open(os.path.join(notes, f"note-{n:05}.md"), "w") as f:
            f.write(f"# Note {n}\n\nWritten for the first scan.\n")


def one_run(binary, repo):
    shutil.rmtree(os.path.join(repo, ".cos"), ignore_errors=True)
    # the state folder and its database, with nothing recorded yet
    subprocess.run([binary, "tool", "call", "cos_hub_health"], cwd=repo, capture_output=True, check=True)
    db = sqlite3.connect(os.path.join(repo, ".cos", "cos.db"), timeout=60, isolation_level=None)
    started = time.monotonic()
    scan = subprocess.Popen(
        [binary, "tool", "call", "cos_docs_scan", "--budget", "none"],
        cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    waits = []
    while scan.poll() is None:
        asked = time.monotonic()
        db.execute("BEGIN IMMEDIATE")
        waits.append(time.monotonic() - asked)
        db.execute("COMMIT")
        time.sleep(0.005)
    took = time.monotonic() - started
    recorded = db.execute("SELECT count(*) FROM docs_documents").fetchone()[0]
    db.close()
    if scan.returncode != 0:
        raise SystemExit(f"{binary}: the scan failed (exit {scan.returncode})")
    return took, max(waits, default=0.0), recorded


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", action="append", required=True)
    parser.add_argument("--documents", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args.binary = [binary_to_measure(binary, here) for binary in args.binary]
    root = tempfile.mkdtemp(prefix="cos-first-scan-")
    try:
        make_repository(root, args.documents)
        results = {binary: [] for binary in args.binary}
        for run in range(1, args.runs + 1):
            for binary in args.binary:
                took, longest, recorded = one_run(binary, root)
                results[binary].append((took, longest))
                print(f"run {run} {binary}: scan {took:.2f} s, {recorded} documents, "
                      f"another writer waited at most {longest * 1000:.0f} ms")
        for binary, runs in results.items():
            print(f"{binary}: median scan {statistics.median(t for t, _ in runs):.2f} s, "
                  f"median longest wait {statistics.median(w for _, w in runs) * 1000:.0f} ms")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
