#!/usr/bin/env python3
"""Time from starting `cos serve` to its first HTTP 200, and its idle memory.

Usage: bench/bench-startup.py [--runs 9] [--binary PATH] [--reference]

Each run starts the hub on a fresh temporary repository on a free loopback port,
polls GET /api/health every 2 ms until it answers 200 (bounded at 10 s), then
makes 20 requests, idles 2 s and reads VmRSS from /proc. Prints medians.
With --reference, measures coding-os 0.3.25 the same way in the same run
(installed into a temporary venv; see ../shared/reference/run-reference-system.md).
"""
import argparse, os, shutil, signal, statistics, subprocess, sys, tempfile, time, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure, free_port, memory_mb, reference_cos

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def measure(command, url, env, cwd, limit=10.0):
    start = time.perf_counter()
    proc = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        first = None
        while time.perf_counter() - start < limit:
            try:
                with urllib.request.urlopen(url, timeout=1) as response:
                    if response.status == 200:
                        first = time.perf_counter() - start
                        break
            except Exception:
                time.sleep(0.002)
        if first is None:
            return None, None
        for _ in range(20):
            urllib.request.urlopen(url, timeout=5).read()
        time.sleep(2)
        return first, memory_mb(proc.pid, "VmRSS")
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)

def bench(name, make_command, url_path, env_extra, runs):
    starts, memories = [], []
    for _ in range(runs):
        repo = tempfile.mkdtemp(prefix="cos-bench-")
        port = free_port()
        env = dict(os.environ, **env_extra(repo))
        first, rss = measure(make_command(repo, port), f"http://127.0.0.1:{port}{url_path}", env, repo)
        shutil.rmtree(repo, ignore_errors=True)
        if first is None:
            print(f"{name}: did not answer within the limit", file=sys.stderr)
            continue
        starts.append(first * 1000)
        memories.append(rss)
    if starts:
        print(f"{name}: first 200 after median {statistics.median(starts):.1f} ms "
              f"(min {min(starts):.1f}, max {max(starts):.1f}, n={len(starts)}); idle RSS median {statistics.median(memories):.1f} MB")
    return starts, memories

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--binary", help="the cos to measure (default: the dist build of this tree, built first)")
    parser.add_argument("--reference", action="store_true")
    args = parser.parse_args()
    binary = binary_to_measure(args.binary, ROOT)
    ours = bench("cos-hub", lambda repo, port: [binary, "serve", "--port", str(port)], "/api/health",
                 lambda repo: {"RUST_LOG": "warn"}, args.runs)
    if args.reference:
        cos = reference_cos()
        def reference(repo, port):
            os.makedirs(os.path.join(repo, ".coding-os"), exist_ok=True)
            # it refuses to serve a folder that is not a git repository
            subprocess.run(["git", "init", "-q", repo], check=True)
            return [cos, "hub", "start", "--foreground", "--port", str(port)]
        theirs = bench("reference (coding-os 0.3.25)", reference, "/openapi.json",
                       lambda repo: {"HOME": repo, "HF_HUB_OFFLINE": "1", "COS_GRAPH_BACKEND": "sqlite"}, max(3, args.runs // 3))
        if ours[0] and theirs[0]:
            print(f"ratio: start {statistics.median(theirs[0]) / statistics.median(ours[0]):.0f}x faster, "
                  f"idle memory {statistics.median(theirs[1]) / statistics.median(ours[1]):.1f}x smaller")

if __name__ == "__main__":
    main()
