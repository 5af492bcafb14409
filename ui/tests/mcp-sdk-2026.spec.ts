// The hub as the official TypeScript SDK 2.x client sees it: the stateless
// 2026-07-28 revision (server/discover instead of initialize, per-request
// _meta, the standard headers, caching hints on lists, subscriptions/listen),
// over stdio and over the served hub's /mcp. Like the 1.x check beside it,
// no browser is involved; the client checks each structured answer against
// the tool's output schema and throws when one does not fit.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { expect, test } from "@playwright/test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const binary = resolve(process.env.COS_BINARY ?? "../target/debug/cos");

interface Envelope {
  ok: boolean;
  data?: { [field: string]: unknown };
  error?: { category: string; code: string };
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Envelope> {
  const result = await client.callTool({ name, arguments: args });
  const envelope = result.structuredContent as Envelope | undefined;
  expect(envelope?.ok, `${name}: isError and ok agree`).toBe(result.isError !== true);
  return envelope as Envelope;
}

function modernClient(): Client {
  return new Client({ name: "cos-hub-tests", version: "1.0.0" }, { versionNegotiation: { mode: "auto" } });
}

/// Everything a 2026-07-28 client does with the hub, on either transport.
async function exercise(client: Client, document: string, section: string): Promise<void> {
  expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");

  const listed = await client.listTools();
  expect(listed.tools.length).toBeGreaterThan(20);
  expect(listed.ttlMs, "tools/list says how long it stays fresh").toBeGreaterThan(0);
  const board = await call(client, "cos_task_board", {});
  expect(board.ok).toBe(true);
  const refused = await call(client, "cos_task_show", { id: "TASK-9999" });
  expect(refused.error?.code).toBe("E_NOT_FOUND");

  const { resources } = await client.listResources();
  const uris = resources.map((resource) => resource.uri);
  expect(uris).toContain("cos://board");
  expect(uris).toContain(document);
  const { resourceTemplates } = await client.listResourceTemplates();
  expect(resourceTemplates.map((template) => template.uriTemplate)).toContain("cos://task/{id}");
  const read = await client.readResource({ uri: `${document}?section=${section}` });
  const content = read.contents[0] as { text: string; _meta?: { rev?: number; hash?: string } };
  expect(content.text.startsWith(`## ${section}`)).toBe(true);
  expect(content._meta?.hash).toMatch(/^[0-9a-f]{64}$/);

  const { prompts } = await client.listPrompts();
  expect(prompts.map((prompt) => prompt.name)).toEqual(["work-next-task", "review-change", "record-evidence"]);
  // the shared hub's board may hold no ready task: the prompt says so then
  const next = await client.getPrompt({ name: "work-next-task" });
  expect(JSON.stringify(next.messages[0]?.content)).toMatch(/cos_task_claim_next|No task on the board is ready/);
  await expect(client.getPrompt({ name: "review-change" })).rejects.toThrow(/target/);
}

test("over stdio, the 2026-07-28 client lists, calls, reads, prompts and hears a watched change", async () => {
  const repo = mkdtempSync(join(tmpdir(), "cos-mcp-2026-"));
  const client = modernClient();
  try {
    mkdirSync(join(repo, "docs"));
    writeFileSync(join(repo, "docs", "guide.md"), "# Guide\n\n## Setup\n\nInstall it.\n");
    await client.connect(
      new StdioClientTransport({
        command: binary,
        args: ["mcp", repo, "--toolsets", "all"],
        stderr: "ignore",
        env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? repo, RUST_LOG: "warn" },
      }),
    );
    await call(client, "cos_task_create", { title: "Write the setup guide" });
    const document = "cos://docs/docs/guide.md";
    await exercise(client, document, "Setup");
    const next = await client.getPrompt({ name: "work-next-task" });
    expect(JSON.stringify(next.messages[0]?.content)).toContain("## TASK-001: Write the setup guide");

    const heard: string[] = [];
    client.setNotificationHandler("notifications/resources/updated", (notification) => {
      heard.push(notification.params.uri);
    });
    const subscription = await client.listen({ resourceSubscriptions: [document] });
    const read = await client.readResource({ uri: document });
    const identity = (read.contents[0] as unknown as { _meta: { rev: number; hash: string } })._meta;
    const patched = await call(client, "cos_docs_patch", {
      mount: "docs",
      path: "guide.md",
      request_id: "listen-1",
      base: { rev: identity.rev, hash: identity.hash },
      operations: [{ op: "append", content: "\nMore.\n" }],
    });
    expect(patched.ok).toBe(true);
    await expect.poll(() => heard, { timeout: 10_000 }).toContain(document);
    await subscription.close();
  } finally {
    await client.close();
    rmSync(repo, { recursive: true, force: true });
  }
});

test("the served hub's /mcp answers the 2026-07-28 client without a session", async ({ baseURL }) => {
  const client = modernClient();
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", baseURL)));
    // a mount agents may only read is still read whole or by section
    await exercise(client, "cos://docs/policies/security.md", "Reporting");
  } finally {
    await client.close();
  }
});
