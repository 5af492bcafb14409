"""Document writes while `cos serve` makes its first index of a large repository.

`cos serve` starts on a fresh copy of the Django 5.1.4 sdist (no state yet,
so it indexes the graph, then the search index catches up), and a client
creates a document over REST every 0.1 s from the moment the server answers,
for --seconds. Each run prints how many creates there were, how many failed
(and with which code), the longest wait and the median. With several
--binary, the builds take turns run by run, each on a fresh copy.

    python3 bench/bench-busy-writes.py --binary target/dist/cos [--binary OTHER] [--seconds 25] [--runs 3]
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time, urllib.error, urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import django_tree, free_port, stop, wait_for


def call(base, method, path, body):
    request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode(),
                                     headers={"content-type": "application/json"})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()
            return response.status, None, time.monotonic() - started
    except urllib.error.HTTPError as error:
        try:
            code = json.loads(error.read())["error"]["code"]
        except (ValueError, KeyError, TypeError):
            code = "?"
        return error.code, code, time.monotonic() - started
    except OSError as error:
        return -1, str(error), time.monotonic() - started


def run(binary, tree, seconds):
    work = tempfile.mkdtemp(prefix="busy-writes-")
    repo = os.path.join(work, "repo")
    shutil.copytree(tree, repo)
    port = free_port()
    env = dict(os.environ, COS_STATE_DIR=os.path.join(repo, ".cos"), RUST_LOG="warn")
    with open(os.path.join(work, "server.log"), "w") as log:
        server = subprocess.Popen([binary, "serve", repo, "--port", str(port)], env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        if not wait_for(base + "/api/health"):
            sys.exit(f"{binary} did not answer on {base}")
        started = time.monotonic()
        results = []
        while time.monotonic() - started < seconds:
            n = len(results) + 1
            results.append(call(base, "POST", "/api/docs/documents", {
                "mount": "docs", "path": f"busy/p{n}.md", "content": f"# P{n}\n\nx\n", "request_id": f"busy-{n}"}))
            time.sleep(0.1)
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)
    waits = sorted(took for _, _, took in results)
    failed = [code for status, code, _ in results if status >= 300 or status < 0]
    codes = ", ".join(sorted(set(map(str, failed))))
    print(f"{os.path.basename(binary):12} creates {len(results):4}  failed {len(failed)}{' (' + codes + ')' if failed else ''}"
          f"  longest {waits[-1] * 1000:6.0f} ms  p50 {statistics.median(waits) * 1000:5.1f} ms", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", action="append", required=True, help="a cos build (repeat to take turns)")
    parser.add_argument("--seconds", type=float, default=25.0)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="busy-writes-django-") as parent:
        tree = django_tree(parent)
        for _ in range(args.runs):
            for binary in args.binary:
                run(os.path.abspath(binary), tree, args.seconds)


if __name__ == "__main__":
    main()
