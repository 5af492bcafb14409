#!/usr/bin/env python3
"""Drives `cos` through the official Python MCP SDK, over stdio and over
streamable HTTP, as an agent written in Python would. It fails on anything
the SDK refuses and on any answer outside its tool's output schema:

- every tool is called twice, with its required arguments filled plainly and
  with none; the SDK checks each ok answer against the tool's output schema
  (Python's `jsonschema`, with Python's regular expressions), and this script
  checks each refusal against the same schema's error branch;
- the documents' safe write sequence: create, read, patch with base and
  request ID, the identical request sent again (the same receipt, nothing
  written twice), a stale base refused `STALE_REVISION` with the current
  `{rev, hash}`, the receipt, the history and the audit.

Run by the test command against the installed `cos`; it installs the SDK
into target/mcp-python-venv on first use (`--install` only installs it).
Usage: scripts/check-mcp-python-sdk.py [--binary target/debug/cos] [--install]
"""

import argparse
import asyncio
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading
import time
import venv

from benchlib import stop

ROOT = pathlib.Path(__file__).resolve().parent.parent
VENV = ROOT / "target" / "mcp-python-venv"
SDK = "mcp==2.3.0"
# each transport's whole run takes a few seconds; a hang stops here instead
# of holding the test command
DOOR_TIME_LIMIT = 180


def in_sdk_venv():
    """Re-runs this script inside target/mcp-python-venv, made and given the
    pinned SDK on first use (never an SDK some other Python happens to have)."""
    python = VENV / "bin" / "python"
    if pathlib.Path(sys.prefix).resolve() != VENV.resolve():
        if not python.exists():
            venv.create(VENV, with_pip=True)
        os.execv(str(python), [str(python), *sys.argv])
    try:
        import jsonschema  # noqa: F401
        import mcp  # noqa: F401
    except ImportError:
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-compile", "--disable-pip-version-check", SDK],
            check=True,
        )


def plain_value(schema, defs):
    """A simple value of the schema's first shape, as a first try would send."""
    if "$ref" in schema:
        return plain_value(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
    for choice in ("oneOf", "anyOf"):
        if choice in schema:
            return plain_value(schema[choice][0], defs)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    return {
        "string": "x",
        "integer": max(1, schema.get("minimum", 1)),
        "number": 1,
        "boolean": False,
        "array": [],
        "object": {},
    }.get(kind)


class Checker:
    def __init__(self, session, door):
        self.session = session
        self.door = door
        self.failures = []
        # each tool's output schema, compiled once, for its refusals
        self.validators = {}

    def fail(self, what):
        self.failures.append(f"{self.door}: {what}")

    async def call(self, name, arguments):
        """Calls a tool; a refusal is checked against its output schema here
        (the SDK checks only ok answers)."""
        try:
            result = await self.session.call_tool(name, arguments)
        except Exception as error:  # the SDK refused the answer
            self.fail(f"{name} {json.dumps(arguments)[:120]}: {error}")
            return None
        envelope = result.structured_content
        if envelope is None:
            self.fail(f"{name}: no structured content")
            return None
        validator = self.validators.get(name)
        if result.is_error and validator is not None:
            error = next(validator.iter_errors(envelope), None)
            if error is not None:
                self.fail(f"{name}: a refusal outside the output schema: {error.message[:300]}")
        return envelope

    async def every_tool(self):
        from jsonschema import Draft202012Validator

        tools = (await self.session.list_tools()).tools
        if not tools:
            self.fail("no tools listed")
        answered = {"ok": 0, "refused": 0}
        for tool in tools:
            if tool.output_schema is None:
                self.fail(f"{tool.name}: no output schema")
            else:
                self.validators[tool.name] = Draft202012Validator(tool.output_schema)
            schema = tool.input_schema
            defs = schema.get("$defs", {})
            required = set(schema.get("required", []))
            filled = {
                field: plain_value(property_schema, defs)
                for field, property_schema in schema.get("properties", {}).items()
                if field in required
            }
            for arguments in (filled, {}):
                envelope = await self.call(tool.name, arguments)
                if envelope is not None:
                    answered["ok" if envelope.get("ok") else "refused"] += 1
        return len(tools), answered

    async def safe_write_sequence(self):
        path = f"notes/{self.door}.md"
        created = await self.call(
            "cos_docs_create",
            {"mount": "docs", "path": path, "content": "# Notes\n\n## Log\n\nfirst\n", "request_id": f"{self.door}-create"},
        )
        if not created or not created.get("ok"):
            self.fail(f"create: {created}")
            return
        read = await self.call("cos_docs_read", {"mount": "docs", "path": path})
        document = read["data"]["document"] if read and read.get("ok") else None
        if document is None:
            self.fail(f"read: {read}")
            return
        base = {"rev": document["rev"], "hash": document["hash"]}
        patch = {
            "mount": "docs",
            "path": path,
            "base": base,
            "request_id": f"{self.door}-patch",
            "operations": [{"op": "append_to_section", "section": "Log", "content": "second\n"}],
        }
        first = await self.call("cos_docs_patch", patch)
        again = await self.call("cos_docs_patch", patch)
        if not first or first.get("data", {}).get("state") != "committed":
            self.fail(f"patch: {first}")
            return
        receipt_fields = ("request_id", "state", "document", "previous", "seq", "durable")
        same = again and all(again["data"].get(f) == first["data"].get(f) for f in receipt_fields)
        if not same or again["data"].get("meta", {}).get("replayed") is not True:
            self.fail(f"the identical request again did not return the same receipt, marked replayed: {again}")
        stale = await self.call(
            "cos_docs_patch",
            {**patch, "request_id": f"{self.door}-stale", "operations": [{"op": "append", "content": "third\n"}]},
        )
        error = (stale or {}).get("error", {})
        current = first["data"]["document"]
        if error.get("code") != "STALE_REVISION":
            self.fail(f"a stale base was not refused STALE_REVISION: {stale}")
        elif re.search(rf"\b{current['rev']}\b", json.dumps(error.get("details"))) is None:
            self.fail(f"the stale refusal does not name the current rev {current['rev']}: {error}")
        receipt = await self.call("cos_docs_receipt", {"request_id": f"{self.door}-patch"})
        if not receipt or receipt.get("data", {}).get("state") != "committed":
            self.fail(f"receipt: {receipt}")
        history = await self.call("cos_docs_history", {"mount": "docs", "path": path})
        if not history or len(history.get("data", {}).get("entries", [])) != 2:
            self.fail(f"history of create and one patch: {history}")
        audit = await self.call("cos_docs_audit", {})
        if not audit or audit.get("data", {}).get("verified") is not True:
            self.fail(f"audit: {audit}")


    async def refused(self, what, code, attempt):
        """Checks that `attempt` is refused with the JSON-RPC `code`."""
        from mcp.shared.exceptions import MCPError

        try:
            await attempt
        except MCPError as error:
            if error.error.code != code:
                self.fail(f"{what}: refused {error.error.code}, not {code}: {error.error.message}")
            return
        self.fail(f"{what}: answered, not refused {code}")

    async def resources_and_prompts(self):
        listed = (await self.session.list_resources()).resources
        uris = [str(resource.uri) for resource in listed]
        for wanted in ("cos://board", "cos://docs/docs/guide.md"):
            if wanted not in uris:
                self.fail(f"resources/list lacks {wanted}: {uris[:10]}")
        if any(not resource.description for resource in listed):
            self.fail("a listed resource has no description")
        templates = [t.uri_template for t in (await self.session.list_resource_templates()).resource_templates]
        if "cos://task/{id}" not in templates:
            self.fail(f"resources/templates/list lacks cos://task/{{id}}: {templates}")
        read = await self.session.read_resource("cos://docs/docs/guide.md?section=Setup")
        content = read.contents[0]
        if not content.text.startswith("## Setup") or not re.fullmatch(r"[0-9a-f]{64}", (content.meta or {}).get("hash", "")):
            self.fail(f"the Setup section with its hash: {content}")
        await self.refused("a missing task", -32002, self.session.read_resource("cos://task/TASK-9999"))
        names = [prompt.name for prompt in (await self.session.list_prompts()).prompts]
        if names != ["work-next-task", "review-change", "record-evidence"]:
            self.fail(f"prompts/list: {names}")
        review = await self.session.get_prompt("review-change", {"target": "helper"})
        text = review.messages[0].content.text
        if "`main` (app.py:1) via calls" not in text:
            self.fail(f"review-change names helper's caller: {text[:400]}")
        await self.refused("a prompt without its argument", -32602, self.session.get_prompt("review-change", {}))


async def check(session, door):
    await session.initialize()
    checker = Checker(session, door)
    tools, answered = await checker.every_tool()
    await checker.safe_write_sequence()
    await checker.resources_and_prompts()
    print(f"{door}: {tools} tools, {answered['ok']} answers ok and {answered['refused']} refusals, each within its schema; "
          "the safe write sequence, resources and prompts ran")
    return checker.failures


async def over_stdio(binary, repo):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    # every tool, upkeep ones included, as `cos mcp --toolsets all` lists them
    server = StdioServerParameters(command=binary, args=["--repo", repo, "mcp", "--toolsets", "all"],
                                   env={**os.environ, "RUST_LOG": "warn"})
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            return await check(session, "stdio")


def listening_url(stderr):
    """The /mcp address `cos serve` says it listens on, read from its stderr;
    None if it ends without saying."""
    for line in stderr:
        found = re.search(r"on (http://127\.0\.0\.1:\d+)", line)
        if found:
            return found.group(1) + "/mcp"
    return None


async def over_http(binary, repo):
    import httpx2
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    # it says where it listens on stderr; the rest of what it says there is
    # read and dropped, so that a full pipe never stops it
    serving = subprocess.Popen(
        [binary, "serve", repo, "--port", "0"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "RUST_LOG": "warn"},
    )
    try:
        # read on a thread, so that the time limit also covers a server that
        # never says where it listens (stopping it ends the read)
        url = await asyncio.to_thread(listening_url, serving.stderr)
        if url is None:
            return ["http: cos serve never said where it listens"]
        threading.Thread(target=serving.stderr.read, daemon=True).start()
        # every tool, as the header X-MCP-Toolsets: all asks for it
        async with httpx2.AsyncClient(headers={"X-MCP-Toolsets": "all"},
                                      timeout=httpx2.Timeout(30, read=300)) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                read, write = streams[0], streams[1]
                async with ClientSession(read, write) as session:
                    return await check(session, "http")
    finally:
        stop(serving)


def repository(folder):
    subprocess.run(["git", "init", "-q", folder], check=True)
    docs = pathlib.Path(folder, "docs")
    docs.mkdir()
    (docs / "guide.md").write_text("# Guide\n\n## Setup\n\nsteps\n")
    pathlib.Path(folder, "app.py").write_text("def main():\n    return helper()\n\n\ndef helper():\n    return 1\n")


def main():
    in_sdk_venv()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=str(ROOT / "target" / "debug" / "cos"))
    parser.add_argument("--install", action="store_true", help="only install the SDK")
    arguments = parser.parse_args()
    if arguments.install:
        return
    binary = os.path.abspath(arguments.binary)
    failures = []
    for door in (over_stdio, over_http):
        with tempfile.TemporaryDirectory() as folder:
            repository(folder)
            started = time.monotonic()
            try:
                failures += asyncio.run(asyncio.wait_for(door(binary, folder), DOOR_TIME_LIMIT))
            except TimeoutError:
                failures.append(f"{door.__name__}: no end within {DOOR_TIME_LIMIT} s")
            print(f"  ({time.monotonic() - started:.1f} s)")
    for failure in failures:
        print("FAIL", failure)
    print(f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
