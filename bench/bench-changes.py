#!/usr/bin/env python3
"""What a commit affects, over this repository's own history: `cos changes`
for each of the last commits on the first-parent line, timed.

Usage: bench/bench-changes.py [--binary target/dist/cos] [--commits 100]

Clones this repository (its history is local, so no network is needed) into
a scratch folder, indexes it once (a warm graph, as a hub keeps it), then
asks `cos changes --range C^..C --json` for each commit C and reports the
median, p99 and slowest wall time per answer, a process start included, with
how many files and definitions the answers held. Stops by itself; nothing
listens on any port.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary")
    parser.add_argument("--commits", type=int, default=100)
    args = parser.parse_args()
    binary = binary_to_measure(args.binary, ROOT)
    work = tempfile.mkdtemp(prefix="cos-changes-")
    try:
        repo = os.path.join(work, "repo")
        subprocess.run(["git", "clone", "-q", "--no-local", ROOT, repo], check=True)
        cos = [binary, "--repo", repo, "--state-dir", os.path.join(work, "state")]
        subprocess.run(cos + ["index"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        commits = subprocess.run(
            ["git", "-C", repo, "rev-list", "--first-parent", "-n", str(args.commits), "HEAD"],
            check=True, capture_output=True, text=True,
        ).stdout.split()
        times, files, symbols, refused = [], [], [], []
        for commit in commits:
            started = time.perf_counter()
            out = subprocess.run(cos + ["changes", "--range", f"{commit}^..{commit}", "--json"], capture_output=True, text=True)
            times.append((time.perf_counter() - started) * 1000)
            try:
                envelope = json.loads(out.stdout)
            except json.JSONDecodeError:
                refused.append((commit[:7], out.stderr.strip()[:120]))
                continue
            if not envelope.get("ok"):
                refused.append((commit[:7], envelope["error"]["message"][:120]))
                continue
            files.append(envelope["data"]["summary"]["files"])
            symbols.append(envelope["data"]["summary"]["symbols"])
        times.sort()
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        print(f"{len(times)} commits: p50 {statistics.median(times):.0f} ms, p99 {p99:.0f} ms, slowest {times[-1]:.0f} ms")
        if files:
            print(f"answers held {statistics.median(files):.0f} files and {statistics.median(symbols):.0f} definitions (medians), "
                  f"at most {max(files)} files and {max(symbols)} definitions")
        for commit, why in refused:
            print(f"refused {commit}: {why}")
        return 1 if refused else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
