"""What the load benchmarks and checks share: ports, waiting for a server, wrk runs, peak memory, corpora, an MCP stdio client."""
import json, os, re, shutil, socket, subprocess, sys, tarfile, tempfile, time, urllib.request

REFERENCE_VENV = os.path.join(tempfile.gettempdir(), "cos-reference-venv")


def binary_to_measure(given, root):
    """The `cos` to measure: the one given as it is, else the working tree's
    release build, built first (a build of a changed tree takes minutes: give
    --binary to compare builds without it)."""
    if given:
        if not os.path.exists(given):
            sys.exit(f"{given} is missing: cargo build --profile dist, or give another --binary")
        return os.path.abspath(given)
    # the shipping build: whole-program optimisation, as every figure in
    # docs/performance.md used
    subprocess.run(["cargo", "build", "--profile", "dist", "--bin", "cos"], cwd=root, check=True)
    return os.path.join(root, "target", "dist", "cos")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop(process, limit=30):
    """Asks `process` to stop (SIGTERM), and kills it when it has not within `limit` seconds."""
    process.terminate()
    try:
        process.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_for(url, limit=60.0):
    deadline = time.time() + limit
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return True
        except Exception:
            time.sleep(0.05)
    return False


def memory_mb(pid, field):
    """A /proc status memory field (VmHWM: peak, VmRSS: now) of a process and its children, in MB."""
    total = 0
    # the process and its children (a Python hub may fork)
    pids = [pid] + [int(p) for p in subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()]
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith(field + ":"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


def peak_mb(pid):
    """Peak resident memory (VmHWM) of a process and its children, in MB."""
    return memory_mb(pid, "VmHWM")


def reference_cos():
    """The reference system's `cos` (coding-os 0.3.25), installed into REFERENCE_VENV on first use."""
    cos = os.path.join(REFERENCE_VENV, "bin", "cos")
    if not os.path.exists(cos):
        subprocess.run([sys.executable, "-m", "venv", REFERENCE_VENV], check=True)
        subprocess.run([os.path.join(REFERENCE_VENV, "bin", "pip"), "install", "-q", "coding-os==0.3.25"], check=True)
    return cos


def to_ms(text):
    """wrk's latency text (`812.00us`, `1.20ms`, `2.01s`, `1.10m`) in ms; NaN when it printed none (`-nan`)."""
    match = re.match(r"([\d.]+)(us|ms|s|m)$", text)
    if not match:
        print(f"(wrk printed a latency of {text!r})", file=sys.stderr)
        return float("nan")
    value, unit = match.groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}[unit]


def wrk(url, connections, seconds, script=None):
    """(req/s, p50 ms, p99 ms, non-2xx count) of a wrk run bounded to `seconds`."""
    threads = min(2, connections)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout", "30s"]
    if script:
        command += ["-s", script]
    out = subprocess.run(command + [url], capture_output=True, text=True, timeout=seconds + 60).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    # no percentiles when no request completed within the run (a server that stalls)
    # anchored to the line: the thread stats' "+/- Stdev" column can end in "50%" too
    p50 = re.search(r"^\s*50%[ \t]+(\S+)", out, re.M)
    p99 = re.search(r"^\s*99%[ \t]+(\S+)", out, re.M)
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    timeouts = re.search(r"timeout (\d+)", out)
    failed = (int(errors.group(1)) if errors else 0) + (int(timeouts.group(1)) if timeouts else 0)
    return (rps, to_ms(p50.group(1)) if p50 else float("nan"), to_ms(p99.group(1)) if p99 else float("nan"), failed)


def post_script(folder, body):
    """A wrk Lua script that POSTs `body` (a JSON string) to the URL."""
    path = os.path.join(folder, "post.lua")
    with open(path, "w") as f:
        f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
        f.write("wrk.body = [[" + body + "]]\n")
    return path


CACHE = os.path.join(os.path.expanduser("~"), ".cache", "cos-hub")


def django_tree(work):
    """The Django 5.1.4 sdist unpacked under `work`, downloaded once (from the package registry) into the cache."""
    archive = os.path.join(CACHE, "Django-5.1.4.tar.gz")
    if not os.path.exists(archive):
        os.makedirs(CACHE, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "django==5.1.4", "-d", CACHE, "-q"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(work, filter="data")
    return os.path.join(work, "Django-5.1.4")


def rotating_script(folder, paths):
    """A wrk Lua script that GETs `paths` in turn."""
    path = os.path.join(folder, "rotate.lua")
    with open(path, "w") as f:
        f.write("local paths = {\n" + ",\n".join('"' + p.replace("\\", "\\\\").replace('"', '\\"') + '"' for p in paths) + "\n}\n")
        f.write("local at = 0\nrequest = function()\n  at = at % #paths + 1\n  return wrk.format(\"GET\", paths[at])\nend\n")
    return path


def reference_project(parent, tasks):
    """A project of the reference system under `parent` (`refproject`, its slug), its
    board synced from the task files in `tasks`, registered under a HOME of its own,
    as ../shared/reference/run-reference-system.md describes. Answers (repo, env)."""
    cos = reference_cos()
    python = os.path.join(REFERENCE_VENV, "bin", "python")
    repo = os.path.join(parent, "refproject")
    home = os.path.join(parent, "refhome")
    os.makedirs(os.path.join(repo, "docs", "tasks"))
    os.makedirs(os.path.join(repo, ".coding-os"))
    os.makedirs(home)
    for name in os.listdir(tasks):
        if name.startswith("TASK-"):
            shutil.copy(os.path.join(tasks, name), os.path.join(repo, "docs", "tasks", name))
    subprocess.run(["git", "init", "-q", repo], check=True)
    env = dict(os.environ, HOME=home, HF_HUB_OFFLINE="1", COS_GRAPH_BACKEND="sqlite",
               COS_GRAPH_RATE_CAPACITY="1000000", COS_GRAPH_RATE_REFILL="1000000")
    site = subprocess.run([python, "-c", "import core,os;print(os.path.dirname(os.path.dirname(core.__file__)))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([python, os.path.join(site, "core", "thinking_os", "task_sync.py"), "--project-root", repo,
                    "--db", os.path.join(repo, ".coding-os", "coding-os.db")], cwd=repo,
                   env=dict(env, PYTHONPATH=os.path.join(site, "core", "thinking_os")), check=True, stdout=subprocess.DEVNULL)
    subprocess.run([cos, "registry", "add", repo], env=env, check=True, stdout=subprocess.DEVNULL)
    return repo, env


class Session:
    """A minimal MCP client over stdio: newline-delimited JSON-RPC."""

    def __init__(self, command, cwd):
        self.proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "cos-hub-scripts", "version": "1"}})
        self.notify("notifications/initialized")

    def notify(self, method):
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed its stdout during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]

    def call(self, tool, arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments})

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def envelope(result):
    return json.loads(result["content"][0]["text"])
