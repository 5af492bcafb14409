#!/usr/bin/env python3
"""Documents against real Markdown nobody here wrote: every `.md` file found
under the given folders (by default the cargo registry, npm packages and
system documentation on this machine) is put in a fresh repository's `docs`
mount and driven through the hub's public doors. Loopback only; stops by
itself; prints every surprise and exits 1 if there was one.

Usage: bench/checks/check-docs-real-markdown.py [--limit 2000] [--binary target/debug/cos] [ROOT ...]

MCP (`cos mcp`, the agents' budget on):
  - each document read page by page: every answer within 16,384 bytes, the
    pages joined equal the file byte for byte;
  - one operation each, picked at random: `append`, `replace_text` (the
    result must equal Python's own replacement), `replace_section`,
    `insert_before_section`, `insert_after_section`, `delete_section`. A
    refusal must be `E_ARGUMENT` with a reason (a heading it would change, a
    heading path naming two sections); anything else is a surprise;
  - the listing pages through every document exactly once; the audit verifies.
REST (`cos serve`, the budget off): each document created (201), read back
byte for byte, patched under its ETag (If-Match), the same ETag again 412,
moved into a folder with a non-ASCII name; the audit verifies.
"""
import argparse, json, os, random, re, shutil, subprocess, sys, tempfile, urllib.error, urllib.parse, urllib.request, uuid

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))  # benchlib
from benchlib import Session, free_port, stop, wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUDGET = 16_384
DEFAULT_ROOTS = [os.path.expanduser("~/.cargo/registry/src"), "/usr/share/doc", "/usr/lib/node_modules",
                 os.path.join(ROOT, "ui", "node_modules")]


def markdown_under(roots, limit, seed):
    found = []
    for root in roots:
        for folder, _, files in os.walk(root):
            for name in files:
                if not name.endswith((".md", ".markdown")):
                    continue
                path = os.path.join(folder, name)
                try:
                    with open(path, encoding="utf-8", newline="") as f:
                        found.append((path, f.read()))
                except (UnicodeDecodeError, OSError):
                    continue
    random.Random(seed).shuffle(found)
    return found[:limit]


def new_repo(parent, name):
    repo = os.path.join(parent, name)
    os.makedirs(os.path.join(repo, "docs"))
    subprocess.run(["git", "init", "-q", repo], check=True)
    return repo


def on_disk(repo, path):
    with open(os.path.join(repo, "docs", path), encoding="utf-8", newline="") as f:
        return f.read()


class Agent:
    def __init__(self, binary, repo, surprises):
        self.session = Session([binary, "mcp", repo], repo)
        self.surprises = surprises

    def call(self, tool, arguments):
        text = self.session.call(tool, arguments)["content"][0]["text"]
        if len(text.encode()) > BUDGET:
            self.surprises.append((tool, arguments.get("path"), f"an answer of {len(text.encode())} bytes"))
        return json.loads(text)

    def read_whole(self, path):
        pages, cursor = [], None
        while True:
            arguments = {"mount": "docs", "path": path, **({"cursor": cursor} if cursor else {})}
            answer = self.call("cos_docs_read", arguments)
            if not answer["ok"]:
                self.surprises.append(("read", path, answer["error"]["code"], answer["error"]["message"][:200]))
                return None, None
            pages.append(answer["data"])
            cursor = answer["data"].get("next_cursor")
            if not cursor:
                return "".join(page["content"] for page in pages), pages[0]


def an_operation(rng, text, first_page):
    outline = first_page["outline"] if first_page["outline_complete"] else []
    words = re.findall(r"[A-Za-z]{5,}", text)
    kinds = ["append"] + (["replace_text"] if words else []) + (
        ["replace_section", "insert_before_section", "insert_after_section", "delete_section"] if outline else [])
    kind, marker = rng.choice(kinds), f"zq{uuid.uuid4().hex[:10]}"
    if kind == "append":
        return {"op": kind, "content": marker}, lambda after: after.startswith(text.rstrip("\r\n")) and after.count(marker) == 1
    if kind == "replace_text":
        find = rng.choice(words)
        return ({"op": kind, "find": find, "replace": marker, "expected_count": text.count(find)},
                lambda after: after == text.replace(find, marker))
    section = rng.choice(outline)
    if kind == "delete_section":
        head = text.encode()[:section["start"]].rstrip()
        return {"op": kind, "section": section["path"]}, lambda after: after.encode().startswith(head) and len(after) < len(text)
    content = f"{'#' * section['level']} {marker}\n\nbody {marker}\n" if kind == "replace_section" else f"para {marker}"
    return {"op": kind, "section": section["path"], "content": content}, lambda after: marker in after


REFUSAL_REASONS = ("would make", "names 2 sections", "names 3 sections")


def over_mcp(binary, documents, parent, seed):
    surprises, counts = [], {}
    repo = new_repo(parent, "mcp")
    names = []
    for n, (source, text) in enumerate(documents):
        name = f"{n:05d}-" + re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(source))
        with open(os.path.join(repo, "docs", name), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        names.append((name, text))
    agent, rng = Agent(binary, repo, surprises), random.Random(seed)
    for name, text in names:
        whole, first = agent.read_whole(name)
        if whole is None:
            continue
        if whole != text:
            surprises.append(("pages joined", name, len(text), len(whole)))
            continue
        operation, holds = an_operation(rng, text, first)
        base = {"rev": first["document"]["rev"], "hash": first["document"]["hash"]}
        answer = agent.call("cos_docs_patch", {"mount": "docs", "path": name, "base": base,
                                               "request_id": uuid.uuid4().hex, "operations": [operation]})
        kind = operation["op"]
        if not answer["ok"]:
            error = answer["error"]
            expected = error["code"] == "E_ARGUMENT" and any(r in error["message"] for r in REFUSAL_REASONS)
            counts[f"{kind} refused"] = counts.get(f"{kind} refused", 0) + 1
            if not expected:
                surprises.append((kind, name, error["code"], error["message"][:300]))
            continue
        counts[kind] = counts.get(kind, 0) + 1
        if not holds(on_disk(repo, name)):
            surprises.append((kind, name, "the file is not what the operation asked for", operation))
    listed, cursor = [], None
    while True:
        answer = agent.call("cos_docs_list", {"mount": "docs", **({"cursor": cursor} if cursor else {})})
        listed += [document["path"] for document in answer["data"]["documents"]]
        cursor = answer["data"].get("next_cursor")
        if not cursor:
            break
    if sorted(listed) != sorted(name for name, _ in names):
        surprises.append(("listing", f"{len(listed)} listed, {len(set(listed))} distinct, {len(names)} documents"))
    audit = agent.call("cos_docs_audit", {})
    if not (audit["ok"] and audit["data"]["verified"]):
        surprises.append(("audit", audit))
    agent.session.close()
    return counts, surprises


def over_rest(binary, documents, parent):
    surprises = []
    repo, port = new_repo(parent, "rest"), free_port()
    server = subprocess.Popen([binary, "serve", repo, "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        if not wait_for(base + "/api/docs/mounts"):
            return [("serve", "the hub did not answer")]

        def call(method, path, body=None, headers=None):
            request = urllib.request.Request(base + path, method=method,
                                             data=json.dumps(body).encode() if body is not None else None,
                                             headers={"Content-Type": "application/json", **(headers or {})})
            try:
                with urllib.request.urlopen(request) as response:
                    answer = json.loads(response.read() or b"null")
                    return response.status, response.headers.get("ETag"), answer.get("data", answer)
            except urllib.error.HTTPError as error:
                return error.code, None, json.loads(error.read() or b"null")

        for n, (source, text) in enumerate(documents):
            path = f"real/{n:05d}/{os.path.basename(source)}"
            status, _, answer = call("POST", "/api/docs/documents",
                                     {"mount": "docs", "path": path, "content": text, "request_id": f"c-{n}"})
            if status != 201:
                surprises.append(("create", path, status, str(answer)[:200]))
                continue
            query = urllib.parse.urlencode({"mount": "docs", "path": path})
            pages, cursor, tag = [], None, None
            while True:
                more = f"&cursor={urllib.parse.quote(cursor)}" if cursor else ""
                status, tag, answer = call("GET", f"/api/docs/document?{query}{more}")
                if status != 200:
                    surprises.append(("read", path, status, str(answer)[:200]))
                    break
                pages.append(answer["content"])
                cursor = answer.get("next_cursor")
                if not cursor:
                    break
            if "".join(pages) != text or on_disk(repo, path) != text:
                surprises.append(("read back", path))
                continue
            patch = {"operations": [{"op": "append", "content": uuid.uuid4().hex}]}
            status, new_tag, answer = call("PATCH", f"/api/docs/document?{query}", patch,
                                           {"If-Match": tag, "Idempotency-Key": f"p-{n}"})
            if status != 200:
                surprises.append(("patch", path, status, str(answer)[:300]))
                continue
            status, _, _ = call("PATCH", f"/api/docs/document?{query}", patch,
                                {"If-Match": tag, "Idempotency-Key": f"q-{n}"})
            if status != 412:
                surprises.append(("a stale If-Match", path, status))
            to = f"moved/{n:05d}-ü {os.path.basename(source)}"
            status, _, answer = call("POST", "/api/docs/move", {"mount": "docs", "path": path, "to": to},
                                     {"If-Match": new_tag, "Idempotency-Key": f"m-{n}"})
            if status != 200 or not os.path.exists(os.path.join(repo, "docs", to)):
                surprises.append(("move", path, status, str(answer)[:300]))
        status, _, audit = call("GET", "/api/docs/audit")
        if status != 200 or not audit.get("verified"):
            surprises.append(("audit", status, audit))
    finally:
        stop(server)
    return surprises


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("roots", nargs="*", default=DEFAULT_ROOTS)
    parser.add_argument("--limit", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "debug", "cos"))
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    if not os.path.exists(binary):
        sys.exit(f"{binary} is missing: cargo build, or give another --binary")
    documents = markdown_under(args.roots, args.limit, args.seed)
    if not documents:
        sys.exit(f"no Markdown under {', '.join(args.roots)}")
    with tempfile.TemporaryDirectory() as parent:
        counts, surprises = over_mcp(binary, documents, parent, args.seed)
        surprises += over_rest(binary, documents, parent)
    print(f"{len(documents)} documents; MCP operations: "
          + ", ".join(f"{kind} {count}" for kind, count in sorted(counts.items())))
    for surprise in surprises:
        print("SURPRISE", *surprise)
    print(f"{len(surprises)} surprises")
    sys.exit(1 if surprises else 0)


if __name__ == "__main__":
    main()
