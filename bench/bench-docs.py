#!/usr/bin/env python3
"""Documents benchmark: cos-hub against the MCP reference filesystem server
(npm @modelcontextprotocol/server-filesystem), side by side in one run, over
MCP stdio, on the same files in fresh temporary folders (loopback only, no
network).

Usage: bench/bench-docs.py [--agents 8] [--edits 25] [--latency-edits 200]
                             [--rounds 5] [--binary target/dist/cos] [--no-reference]

(a) Concurrent editing: --agents agents, each its own MCP stdio session, each
    appending --edits unique markers to sections of 4 shared documents.
    Theirs: read_text_file, then edit_file replacing the section's heading
    with heading + marker (what an agent does; no precondition exists).
    Ours: cos_docs_read for the base, cos_docs_patch append_to_section with a
    request ID; on STALE_REVISION it re-reads and sends again with a new ID.
    Lost updates = markers acknowledged as written but absent at the end.
(b) Per-edit latency, one agent each, --latency-edits sequential edits of one
    document: their edit_file against our cos_docs_patch (fully durable: file
    and folder fsynced, SQLite FULL); p50 and p99 of the edit call alone. The
    two servers take turns edit by edit, so the drift of a shared machine
    falls on both alike; --rounds runs, each with fresh folders, and the
    median of their p50s.
(c) Durable patches per second in-process, 8 writers: `cargo bench --bench
    docs_throughput` (run separately; see docs/performance.md).

The reference server is installed into a temporary npm prefix on first use.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))  # benchlib
from benchlib import Session, envelope

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FS_PREFIX = os.path.join(tempfile.gettempdir(), "cos-fs-server")
DOCUMENTS = 4
SECTIONS = 8


def reference_server():
    entry = os.path.join(FS_PREFIX, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
    if not os.path.exists(entry):
        subprocess.run(["npm", "install", "-q", "--prefix", FS_PREFIX, "@modelcontextprotocol/server-filesystem"], check=True)
    return ["node", entry]


def seed(folder):
    os.makedirs(folder, exist_ok=True)
    for d in range(DOCUMENTS):
        text = f"# Document {d}\n" + "".join(f"## Part {s}\nstart\n" for s in range(SECTIONS))
        with open(os.path.join(folder, f"shared-{d}.md"), "w") as f:
            f.write(text)


def markers_in(folder):
    found = []
    for d in range(DOCUMENTS):
        with open(os.path.join(folder, f"shared-{d}.md")) as f:
            found += [line for line in f.read().splitlines() if line.startswith("m-")]
    return found


def theirs_agent(command, folder, agent, edits, acknowledged):
    session = Session(command + [folder], folder)
    try:
        for i in range(edits):
            path = os.path.join(folder, f"shared-{(agent + i) % DOCUMENTS}.md")
            section = (agent * edits + i) % SECTIONS
            marker = f"m-{agent}-{i}"
            session.call("read_text_file", {"path": path})
            result = session.call("edit_file", {"path": path, "edits": [
                {"oldText": f"## Part {section}\n", "newText": f"## Part {section}\n{marker}\n"}]})
            if not result.get("isError"):
                acknowledged.append(marker)
    finally:
        session.close()


def ours_agent(binary, repo, agent, edits, acknowledged, retries):
    session = Session([binary, "mcp", repo], repo)
    try:
        for i in range(edits):
            path = f"shared-{(agent + i) % DOCUMENTS}.md"
            section = (agent * edits + i) % SECTIONS
            marker = f"m-{agent}-{i}"
            for attempt in range(200):
                page = envelope(session.call("cos_docs_read", {"mount": "docs", "path": path, "page_bytes": 256}))
                document = page["data"]["document"]
                answer = envelope(session.call("cos_docs_patch", {
                    "mount": "docs", "path": path, "request_id": f"{marker}-{attempt}",
                    "base": {"rev": document["rev"], "hash": document["hash"]},
                    "operations": [{"op": "append_to_section", "section": f"Part {section}", "content": marker}]}))
                if answer["ok"]:
                    acknowledged.append(marker)
                    break
                if answer["error"]["code"] not in ("STALE_REVISION", "E_BUSY"):
                    raise RuntimeError(answer["error"])
                retries.append(1)
    finally:
        session.close()


def concurrent(name, agents, run_agent, folder):
    acknowledged, threads = [], []
    started = time.perf_counter()
    for agent in range(agents):
        thread = threading.Thread(target=run_agent, args=(agent, acknowledged))
        thread.start()
        threads.append(thread)
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - started
    present = markers_in(folder)
    lost = [m for m in acknowledged if present.count(m) != 1]
    print(f"{name:<34} acknowledged {len(acknowledged):>4}  present {len(present):>4}  lost {len(lost):>4}  {seconds:6.1f} s")
    return len(lost)


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


class TheirEditor:
    """Their edit_file on one document of a fresh folder."""

    def __init__(self, command, folder):
        seed(folder)
        self.session = Session(command + [folder], folder)
        self.path = os.path.join(folder, "shared-0.md")

    def edit(self, i):
        result = self.session.call("edit_file", {"path": self.path, "edits": [
            {"oldText": "## Part 3\n", "newText": f"## Part 3\nl-{i}\n"}]})
        assert not result.get("isError"), result


class OurEditor:
    """Our cos_docs_patch on one document of a fresh repository, fully durable."""

    def __init__(self, binary, repo):
        seed(os.path.join(repo, "docs"))
        subprocess.run(["git", "init", "-q", repo], check=True)
        self.session = Session([binary, "mcp", repo], repo)
        page = envelope(self.session.call("cos_docs_read", {"mount": "docs", "path": "shared-0.md", "page_bytes": 256}))
        self.base = page["data"]["document"]

    def edit(self, i):
        answer = envelope(self.session.call("cos_docs_patch", {
            "mount": "docs", "path": "shared-0.md", "request_id": f"lat-{i}",
            "base": {"rev": self.base["rev"], "hash": self.base["hash"]},
            "operations": [{"op": "append_to_section", "section": "Part 3", "content": f"l-{i}"}]}))
        assert answer["ok"], answer
        assert answer["data"]["durable"] == {"file": True, "directory": True, "database": True}
        self.base = answer["data"]["document"]


def interleaved_latency(editors, count):
    """Each editor's edit times in ms, the editors taking turns edit by edit, so
    that the machine's drift (these machines are shared) falls on all alike."""
    times = {name: [] for name in editors}
    try:
        for i in range(count):
            for name, editor in editors.items():
                started = time.perf_counter()
                editor.edit(i)
                times[name].append((time.perf_counter() - started) * 1000)
    finally:
        for editor in editors.values():
            editor.session.close()
    return times


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--edits", type=int, default=25)
    parser.add_argument("--latency-edits", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "dist", "cos"))
    parser.add_argument("--no-reference", action="store_true")
    args = parser.parse_args()
    # the servers run in their own folders: a relative path would not reach the binary
    args.binary = os.path.abspath(args.binary)
    if not os.path.exists(args.binary):
        sys.exit(f"{args.binary} is missing: cargo build --profile dist")
    work = tempfile.mkdtemp(prefix="bench-docs-")
    try:
        lost_ours = lost_theirs = None
        print(f"(a) {args.agents} agents x {args.edits} edits over MCP stdio on {DOCUMENTS} shared documents")
        if not args.no_reference:
            command = reference_server()
            folder = os.path.join(work, "theirs")
            seed(folder)
            lost_theirs = concurrent("server-filesystem edit_file", args.agents,
                                     lambda a, ack: theirs_agent(command, folder, a, args.edits, ack), folder)
        repo = os.path.join(work, "ours")
        seed(os.path.join(repo, "docs"))
        subprocess.run(["git", "init", "-q", repo], check=True)
        retries = []
        lost_ours = concurrent("cos-hub cos_docs_patch (CAS)", args.agents,
                               lambda a, ack: ours_agent(args.binary, repo, a, args.edits, ack, retries),
                               os.path.join(repo, "docs"))
        print(f"{'':<34} (cos-hub re-read and resent after STALE_REVISION {len(retries)} times)")
        print(f"\n(b) per-edit latency over MCP stdio, {args.rounds} runs of {args.latency_edits} edits, "
              "the two servers taking turns edit by edit, ms")
        medians = {}
        for run in range(args.rounds):
            editors = {}
            if not args.no_reference:
                editors["server-filesystem edit_file"] = TheirEditor(command, os.path.join(work, f"lat-theirs-{run}"))
            editors["cos-hub cos_docs_patch (durable)"] = OurEditor(args.binary, os.path.join(work, f"lat-ours-{run}"))
            for name, times in interleaved_latency(editors, args.latency_edits).items():
                medians.setdefault(name, []).append(statistics.median(times))
                print(f"run {run + 1}: {name:<34} p50 {statistics.median(times):6.2f}  p99 {percentile(times, 0.99):6.2f}")
        for name, p50s in medians.items():
            print(f"median of the runs' p50: {name:<34} {statistics.median(p50s):6.2f}")
        if lost_ours:
            sys.exit(f"cos-hub lost {lost_ours} updates")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
