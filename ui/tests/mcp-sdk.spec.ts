// The hub as the official TypeScript MCP SDK's client sees it: agents built on
// that SDK, and the MCP Inspector, talk to the hub through it. It lives beside
// the browser tests because the TypeScript toolchain and test runner are here;
// no browser is involved. The SDK's client checks every structured answer
// against the output schema tools/list gave for its tool and throws when one
// does not fit, so each call below is also that check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { expect, test } from "@playwright/test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const binary = resolve(process.env.COS_BINARY ?? "../target/debug/cos");

interface Envelope {
  ok: boolean;
  data?: { next_cursor?: string | null; [field: string]: unknown };
  error?: { category: string; code: string; message: string };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Envelope> {
  const result = await client.callTool({ name, arguments: args });
  const envelope = result.structuredContent as Envelope | undefined;
  expect(envelope, `${name}: the envelope is the structured content`).toBeDefined();
  expect(envelope?.ok, `${name}: isError and ok agree`).toBe(result.isError !== true);
  return envelope as Envelope;
}

function sdkClient(): Client {
  return new Client({ name: "cos-hub-tests", version: "1.0.0" });
}

test("every tool answers the SDK's client over stdio, each answer within its output schema", async () => {
  const repo = mkdtempSync(join(tmpdir(), "cos-mcp-sdk-"));
  const client = sdkClient();
  try {
    mkdirSync(join(repo, "docs"));
    const long = `# Guide\n\n## Setup\n\n${"Install it and check the output. ".repeat(1500)}\n\n## Use\n\nRun it.\n`;
    writeFileSync(join(repo, "docs", "guide.md"), long);
    writeFileSync(join(repo, "app.py"), "def parse_request(text):\n    return text.strip()\n");
    await client.connect(
      new StdioClientTransport({
        command: binary,
        args: ["mcp", repo, "--toolsets", "all"],
        stderr: "ignore",
        // the repository's own state folder, whatever the runner's environment says
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? repo, RUST_LOG: "warn" },
      }),
    );
    expect(client.getServerVersion()?.name).toBe("cos-hub");
    const { tools } = await client.listTools();
    expect(tools.length).toBeGreaterThan(40);
    for (const tool of tools) {
      expect(tool.outputSchema, `${tool.name} has an output schema`).toBeDefined();
      // given nothing: answered or refused, either way within the schema
      await call(client, tool.name, {});
    }

    const created = await call(client, "cos_task_create", { title: "Filed through the SDK" });
    expect(created.data?.status).toBe("icebox");
    const refused = await call(client, "cos_task_show", { id: "TASK-9999" });
    expect(refused.error?.code).toBe("E_NOT_FOUND");
    const invalid = await call(client, "cos_task_create", { title: 7 });
    expect(invalid.error?.category).toBe("validation");

    // a document larger than the agent budget, read page by page to its end
    let args: Record<string, unknown> = { mount: "docs", path: "guide.md" };
    let pages = 0;
    for (; pages < 100; pages += 1) {
      const page = await call(client, "cos_docs_read", args);
      expect(page.ok).toBe(true);
      const cursor = page.data?.next_cursor;
      if (!cursor) break;
      args = { ...args, cursor };
    }
    expect(pages, "the document took more than one page").toBeGreaterThan(0);

    const found = await call(client, "cos_search", { q: "parseRequest" });
    expect(JSON.stringify(found.data)).toContain("parse_request");
  } finally {
    await client.close();
    rmSync(repo, { recursive: true, force: true });
  }
});

test("the served hub's /mcp answers the SDK's streamable HTTP client", async ({ baseURL }) => {
  const client = sdkClient();
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", baseURL)));
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain("cos_search");
    const health = await call(client, "cos_hub_health", {});
    expect(health.ok).toBe(true);
    const search = await call(client, "cos_search", { q: "guide" });
    expect(search.ok).toBe(true);
    const refused = await call(client, "cos_docs_read", { mount: "docs", path: "../outside.md" });
    expect(refused.error?.code).toBe("E_PATH");
  } finally {
    await client.close();
  }
});
