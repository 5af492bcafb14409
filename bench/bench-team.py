#!/usr/bin/env python3
"""The team board on PostgreSQL, beside its peers, in one run.

Usage: bench/bench-team.py [--binary PATH] [--seconds 5] [--tasks 2000] [--only claims] [--url postgres://...]

Measured (loopback only; a throwaway cluster from scripts/postgres-cluster.sh
unless --url names a server whose maintenance database the run may use):
  * board REST throughput at 8 connections (wrk): GET /api/board/list and
    GET /api/board/tasks/TASK-1 on the 1,007 real task files, and POST
    /api/board/tasks, each on a hub on SQLite and on a hub on PostgreSQL;
  * claims: 16 agents (wrk connections, 8 on each of 2 hubs sharing one
    database) claim --tasks ready tasks until none is left (the board's
    settings let an agent hold any number in progress, so a claim is one
    request, as the raw one is one statement): claims per second, and every
    task claimed exactly once; beside 16 agents on one hub on SQLite, the
    same claims as raw SQL (UPDATE ... WHERE id = (SELECT ... FOR UPDATE
    SKIP LOCKED LIMIT 1)) through pgbench, 16 clients, on the same server,
    and what a hub's claim reads and writes with no hub at all (one
    server-side function a claim, bench/claim-records.sql, via pgbench,
    and its move of the task alone);
  * the change feed across hubs: a task created on one hub until the
    other hub's /api/stream announces the board's new revision, 40 times.
"""
import argparse, concurrent.futures, datetime, json, sqlite3, os, shutil, signal, statistics, subprocess, sys, tempfile, threading, time, urllib.request
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import binary_to_measure, free_port, post_script, stop, wait_for, wrk

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "fixtures", "coding-os-tasks")
PG_BIN = sorted(__import__("glob").glob("/usr/lib/postgresql/*/bin"))[-1]


def psql(url, sql):
    subprocess.run([f"{PG_BIN}/psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], check=True, stdout=subprocess.DEVNULL)


def database(server, name):
    psql(server, f"DROP DATABASE IF EXISTS {name}")
    psql(server, f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name


def serve(binary, repo, database_url=None):
    port = free_port()
    env = dict(os.environ, RUST_LOG="warn")
    env.pop("COS_DATABASE_URL", None)
    if database_url:
        env["COS_DATABASE_URL"] = database_url
    proc = subprocess.Popen([binary, "serve", "--port", str(port)], cwd=repo, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    if not wait_for(base + "/api/health"):
        sys.exit("a hub did not come up")
    return proc, base


def call(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def new_repo(binary, database_url=None, tasks_dir=None):
    repo = tempfile.mkdtemp(prefix="cos-bench-team-")
    subprocess.run(["git", "init", "-q", repo], check=True)
    if tasks_dir:
        command = [binary, "board", "import", "--dir", tasks_dir]
        if database_url:
            command += ["--database", database_url]
        subprocess.run(command, cwd=repo, check=True, stdout=subprocess.DEVNULL)
    return repo


def throughput(binary, server, seconds):
    print("board REST throughput, 8 connections (req/s, p50, p99):")
    rows = {}
    work = tempfile.mkdtemp(prefix="cos-bench-team-wrk-")
    create = post_script(work, json.dumps({"title": "bench task", "description": "created under load"}))
    for backend in ("sqlite", "postgres"):
        url = database(server, "bench_rest") if backend == "postgres" else None
        repo = new_repo(binary, url, CORPUS)
        proc, base = serve(binary, repo, url)
        try:
            for name, path, script in (("list", "/api/board/list", None),
                                       ("show", "/api/board/tasks/TASK-1", None),
                                       ("create", "/api/board/tasks", create)):
                urllib.request.urlopen(base + "/api/board/list", timeout=30).read()
                rows[(backend, name)] = wrk(base + path, 8, seconds, script)
        finally:
            stop(proc)
            shutil.rmtree(repo, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    for name in ("list", "show", "create"):
        lite, pg = rows[("sqlite", name)], rows[("postgres", name)]
        print(f"  {name:<7} sqlite {lite[0]:>8.0f} p50 {lite[1]:.2f} ms p99 {lite[2]:.2f} ms | "
              f"postgres {pg[0]:>8.0f} p50 {pg[1]:.2f} ms p99 {pg[2]:.2f} ms | ratio {pg[0] / lite[0]:.2f}"
              + (f" ({lite[3]}/{pg[3]} errors)" if lite[3] or pg[3] else ""), flush=True)


UNBOUNDED_WIP = "[wip]\nin_progress_per_actor = 0\n"


def allow_any_number_in_progress(binary, repo, url):
    """The board's settings: no per-agent limit, 0 (the team's with `url`)."""
    settings = os.path.join(repo, "bench-board.toml")
    with open(settings, "w") as f:
        f.write(UNBOUNDED_WIP)
    command = [binary, "board", "config", "--set", settings, "--repo", repo]
    if url:
        command += ["--database", url]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


CLAIM_SCRIPT = """
local agents = 0
local threads = {}
function setup(thread)
  agents = agents + 1
  thread:set("agent", OFFSET + agents)
  table.insert(threads, thread)
end
function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.body = '{"actor":{"kind":"agent","id":"agent-' .. agent .. '"},"lease_seconds":600}'
  claimed = ""
end
function response(status, headers, body)
  if status ~= 200 then return end
  local id = string.match(body, '"task":{"id":"(TASK%-%d+)"')
  if id then claimed = claimed .. id .. " " else wrk.thread:stop() end
end
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do io.write("claimed: ", thread:get("claimed"), "\\n") end
end
"""


def claim_all(binary, tasks, url):
    """16 agents claim every task through wrk (one connection each, 8 on
    each of 2 hubs sharing the team database `url`, or 16 on one hub on
    SQLite without it), each agent stopping at its first empty answer.
    (claims/s, tasks claimed twice)."""
    repos = [new_repo(binary), new_repo(binary)] if url else [new_repo(binary)]
    allow_any_number_in_progress(binary, repos[0], url)
    hubs = [serve(binary, repo, url) for repo in repos]
    work = tempfile.mkdtemp(prefix="cos-bench-team-claims-")
    try:
        base = hubs[0][1]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda n: call("POST", base + "/api/board/tasks", {"title": f"job {n}", "priority": ["P0", "P1", "P2", "P3"][n % 4]}), range(tasks)))
        agents = 16 // len(hubs)
        runs = []
        started = time.time()
        for number, (_, hub) in enumerate(hubs):
            script = os.path.join(work, f"claim-{number}.lua")
            with open(script, "w") as f:
                f.write(CLAIM_SCRIPT.replace("OFFSET", str(number * agents)))
            runs.append(subprocess.Popen(["wrk", f"-t{agents}", f"-c{agents}", "-d120s", "--timeout", "30s", "-s", script,
                                          hub + "/api/board/claim-next"], stdout=subprocess.PIPE, text=True))
        # wrk runs out its time after its agents stop: the run ends when no
        # task is left ready, and lasted until the last claim's start (each
        # claimed task's started_at), so the poll can be rare and cost little
        while True:
            time.sleep(0.2)
            status, ready = call("GET", base + "/api/board/ready?limit=1")
            if status == 200 and "TASK-" not in json.dumps(ready):
                break
        elapsed = last_claim_at(url, repos[0]) - started
        for run in runs:
            run.send_signal(signal.SIGINT)
        outputs = [run.communicate(timeout=60)[0] for run in runs]
    finally:
        for proc, _ in hubs:
            stop(proc)
        for repo in repos:
            shutil.rmtree(repo, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    claimed = [task for out in outputs for line in out.splitlines() if line.startswith("claimed:") for task in line.split()[1:]]
    if len(set(claimed)) != tasks:
        sys.exit(f"{len(set(claimed))} of {tasks} tasks were claimed")
    return len(claimed) / elapsed, len(claimed) - len(set(claimed))


def last_claim_at(url, repo):
    """When the last task was claimed, as the board recorded it (seconds since the epoch)."""
    sql = "SELECT max(started_at) FROM tasks"
    if url:
        last = subprocess.run([f"{PG_BIN}/psql", "-At", url, "-c", sql], capture_output=True, text=True, check=True).stdout.strip()
    else:
        with sqlite3.connect(os.path.join(repo, ".cos", "cos.db")) as db:
            last = db.execute(sql).fetchone()[0]
    return datetime.datetime.fromisoformat(last.replace("Z", "+00:00")).timestamp()


def claims(binary, server, tasks):
    ours, doubles = claim_all(binary, tasks, database(server, "bench_claims"))
    local, local_doubles = claim_all(binary, tasks, None)
    raw = raw_claims(server, tasks)
    records = records_claims(binary, server, tasks, True)
    moves = records_claims(binary, server, tasks, False)
    print(f"claims of {tasks} tasks, 16 agents: 2 hubs on PostgreSQL {ours:.0f}/s "
          f"({doubles} twice) | 1 hub on SQLite {local:.0f}/s ({local_doubles} twice) | raw SQL SKIP LOCKED via "
          f"pgbench, 16 clients {raw:.0f}/s | ratio to raw {ours / raw:.3f} | a claim's records in one "
          f"server-side function via pgbench {records:.0f}/s, {records / raw:.3f} of raw | its move of the "
          f"task alone {moves:.0f}/s, {moves / raw:.3f} of raw", flush=True)


def pgbench(url, sql, transactions):
    """Transactions per second of `sql` run `transactions` times over 16 clients."""
    work = tempfile.mkdtemp(prefix="cos-bench-team-pgbench-")
    script = os.path.join(work, "claim.sql")
    with open(script, "w") as f:
        f.write(sql)
    out = subprocess.run([f"{PG_BIN}/pgbench", "-n", "-c", "16", "-j", "2", "-t", str(transactions),
                          "-f", script, url], capture_output=True, text=True, check=True).stdout
    shutil.rmtree(work, ignore_errors=True)
    tps = [line for line in out.splitlines() if line.startswith("tps")][0]
    return float(tps.split("=")[1].split()[0])


def records_claims(binary, server, tasks, records):
    """What a hub's claim reads and writes, with no hub: bench/claim-records.sql's
    function on the hub's own tables (built by a CLI call), called by 16
    pgbench clients as the raw claims are, on as many tasks; with `records`
    false, only its move of the task."""
    url = database(server, "bench_records")
    repo = new_repo(binary)
    subprocess.run([binary, "task", "add", "built by the hub", "--repo", repo, "--database", url],
                   check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(repo, ignore_errors=True)
    psql(url, "INSERT INTO tasks (seq, title, status, kind, priority, swimlane, position, created_at, updated_at, updated_by) "
              "SELECT n, 'job ' || n, 'icebox', 'feature', 'P' || (n % 4), 'backend', n, '2026-01-01T00:00:00.000Z', "
              f"'2026-01-01T00:00:00.000Z', 'bench' FROM generate_series(2, {tasks * 4}) AS n")
    psql(url, "ANALYZE")
    subprocess.run([f"{PG_BIN}/psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-f", os.path.join(ROOT, "bench", "claim-records.sql")],
                   check=True, stdout=subprocess.DEVNULL)
    claim = ("SELECT bench_claim('agent:' || :client_id, to_char(clock_timestamp() AT TIME ZONE 'UTC', "
             "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), '2999-01-01T00:00:00.000Z', md5(random()::text), "
             f"{str(records).lower()});\n")
    return pgbench(url, claim, max(1, tasks * 3 // 16))


def raw_claims(server, tasks):
    url = database(server, "bench_raw")
    psql(url, "CREATE TABLE jobs (id bigint PRIMARY KEY, priority text NOT NULL, status text NOT NULL, holder int)")
    psql(url, f"INSERT INTO jobs SELECT n, 'P' || (n % 4), 'ready', NULL FROM generate_series(1, {tasks * 4}) AS n")
    psql(url, "CREATE INDEX jobs_ready ON jobs (priority, id) WHERE status = 'ready'")
    claim = ("UPDATE jobs SET status = 'claimed', holder = :client_id WHERE id = "
             "(SELECT id FROM jobs WHERE status = 'ready' ORDER BY priority, id FOR UPDATE SKIP LOCKED LIMIT 1);\n")
    return pgbench(url, claim, max(1, tasks * 3 // 16))


def feed(binary, server, rounds=40):
    url = database(server, "bench_feed")
    repos = [new_repo(binary), new_repo(binary)]
    hubs = [serve(binary, repo, url) for repo in repos]
    latencies = []
    try:
        stream = urllib.request.urlopen(hubs[1][1] + "/api/stream", timeout=60)
        revisions = []
        seen = threading.Event()

        def read():
            for line in stream:
                if line.startswith(b"data:"):
                    revisions.append(json.loads(line[5:]).get("board"))
                    seen.set()

        threading.Thread(target=read, daemon=True).start()
        seen.wait(10)
        for n in range(rounds):
            seen.clear()
            before = revisions[-1]
            started = time.perf_counter()
            call("POST", hubs[0][1] + "/api/board/tasks", {"title": f"feed {n}"})
            while True:
                if not seen.wait(5):
                    sys.exit("the other hub's stream announced nothing within 5 s")
                seen.clear()
                if revisions[-1] != before:
                    break
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    finally:
        for proc, _ in hubs:
            stop(proc)
        for repo in repos:
            shutil.rmtree(repo, ignore_errors=True)
    latencies.sort()
    print(f"feed across hubs: p50 {statistics.median(latencies):.0f} ms, p90 {latencies[int(len(latencies) * 0.9)]:.0f} ms, "
          f"max {latencies[-1]:.0f} ms over {rounds} writes", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=2000)
    parser.add_argument("--only", choices=["throughput", "claims", "feed"], help="run one of the three measurements")
    parser.add_argument("--url", help="a PostgreSQL server's maintenance database (default: a throwaway cluster)")
    args = parser.parse_args()
    binary = binary_to_measure(args.binary, ROOT)
    cluster = None
    server = args.url
    if not server:
        cluster = tempfile.mkdtemp(prefix="cos-bench-team-pg-")
        server = subprocess.run([os.path.join(ROOT, "scripts", "postgres-cluster.sh"), "start", cluster],
                                capture_output=True, text=True, check=True).stdout.strip()
    try:
        if args.only in (None, "throughput"):
            throughput(binary, server, args.seconds)
        if args.only in (None, "claims"):
            claims(binary, server, args.tasks)
        if args.only in (None, "feed"):
            feed(binary, server)
    finally:
        if cluster:
            subprocess.run([os.path.join(ROOT, "scripts", "postgres-cluster.sh"), "stop", cluster], check=False)


if __name__ == "__main__":
    main()
