import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// The hub serves a copy of tests/fixtures/graph-repo with two mounts (scripts/serve-for-tests.mjs):
// `docs` (writable) and `policies` (read-only to people and agents, holding security.md).

const repo = join(tmpdir(), `cos-ui-test-${process.env.COS_UI_TEST_PORT}`);

interface Identity {
  rev: number;
  hash: string;
}

async function createDoc(request: APIRequestContext, path: string, content: string): Promise<Identity> {
  const response = await request.post("/api/docs/documents", { data: { mount: "docs", path, content } });
  expect(response.status()).toBe(201);
  return ((await response.json()) as { data: { document: Identity } }).data.document;
}

async function readDoc(request: APIRequestContext, path: string): Promise<{ content: string; document: Identity }> {
  const response = await request.get(`/api/docs/document?mount=docs&path=${encodeURIComponent(path)}`);
  expect(response.status()).toBe(200);
  return ((await response.json()) as { data: { content: string; document: Identity } }).data;
}

/** Someone else's edit, as an agent script would send it over REST. */
async function patchAsOther(request: APIRequestContext, path: string, operations: unknown[]): Promise<Identity> {
  const { document } = await readDoc(request, path);
  const response = await request.patch(`/api/docs/document?mount=docs&path=${encodeURIComponent(path)}`, {
    headers: { "If-Match": `"${document.rev}-${document.hash}"` },
    data: { operations, actor: "agent-7" },
  });
  expect(response.status()).toBe(200);
  return ((await response.json()) as { data: { document: Identity } }).data.document;
}

async function historyOf(request: APIRequestContext, path: string) {
  const response = await request.get(`/api/docs/history?mount=docs&path=${encodeURIComponent(path)}`);
  return ((await response.json()) as { data: { entries: { seq: number; rev: number; op: string; source: string; actor: string }[] } }).data
    .entries;
}

async function screenshot(page: Page, name: string) {
  const folder = resolve("test-results/screenshots");
  mkdirSync(folder, { recursive: true });
  await page.screenshot({ path: join(folder, `${name}.png`), fullPage: true });
}

async function open(page: Page, path: string) {
  await page.goto(`/documents/docs/${path}`);
  await expect(page.getByTestId("document")).toBeVisible();
}

const TWO_SECTIONS = "# Runbook\n\nIntro.\n\n## Deploy\n\nRun the deploy script.\n\n## Rollback\n\nRevert the release tag.\n";

test("browse the mounts and a folder tree; a deep link opens a section", async ({ page, request }) => {
  const filler = Array.from({ length: 80 }, (_, n) => `Paragraph ${n} of the overview.`).join("\n\n");
  await createDoc(
    request,
    "guides/deep-links.md",
    `# Deep links\n\n## Overview\n\n${filler}\n\n## Far below\n\nThe part a link points at.\n\n## Fixed in app/db.py:1\n\nSee [the guide](../guide.md).\n`,
  );
  await page.goto("/documents/docs/guides/deep-links.md#far-below");
  const heading = page.getByRole("heading", { name: "Far below" });
  await expect(heading).toBeInViewport();
  // mounts with their names, keys and read-only badges
  const policies = page.getByTestId("mount").filter({ hasText: "Policies" });
  await expect(policies).toContainText("policies");
  await expect(policies).toContainText("read-only for people");
  await expect(policies).toContainText("read-only for agents");
  // the tree: folders, titles, rev and last change
  const entry = page.getByTestId("doc-entry").filter({ hasText: "Deep links" });
  await expect(entry).toContainText("deep-links.md");
  await expect(entry).toContainText("rev 1");
  await expect(entry).toContainText("person");
  await expect(page.getByRole("navigation", { name: "Documents" })).toContainText("guides/");
  await page.getByLabel("Filter").fill("guide");
  await expect(page.getByTestId("doc-entry").filter({ hasText: "Guide" })).toBeVisible();
  await page.getByLabel("Filter").fill("deep links");
  await expect(page.getByTestId("doc-entry")).toHaveCount(1);
  await page.getByLabel("Filter").fill("");
  await page.getByTestId("doc-entry").filter({ hasText: "Guide" }).click();
  await expect(page).toHaveURL(/\/documents\/docs\/guide\.md$/);
  await expect(page.getByTestId("rendered")).toContainText("opens connections");
  // the outline jumps within the document, and the audit reports the chain
  await page.goBack();
  await page.getByRole("navigation", { name: "Outline" }).getByRole("link", { name: "Overview" }).click();
  await expect(page.getByRole("heading", { name: "Overview" })).toBeInViewport();
  await expect(page.getByTestId("audit")).toContainText("Chain verified");
  await screenshot(page, "documents-browse");
  // a heading naming code links into the graph and the editor; a relative link stays in the page
  const codeHeading = page.getByRole("heading", { name: /Fixed in app\/db\.py:1/ });
  await expect(codeHeading.getByRole("link", { name: "editor" })).toHaveAttribute("href", /^vscode:\/\/file\/.+\/app\/db\.py:1$/);
  await page.getByRole("link", { name: "the guide" }).click();
  await expect(page).toHaveURL(/\/documents\/docs\/guide\.md$/);
  await page.goBack();
  await codeHeading.getByRole("link", { name: "graph" }).click();
  await expect(page).toHaveURL(/\/graph\?node=code%3Afile%3Aapp%2Fdb\.py$/);
});

test("a deep link's jump gives way to a scroll made while it settles", async ({ page, request }) => {
  const filler = (part: string) => Array.from({ length: 60 }, (_, n) => `Paragraph ${n} of ${part}.`).join("\n\n");
  await createDoc(
    request,
    "guides/jump-gives-way.md",
    `# Jumps\n\n## Before\n\n${filler("before")}\n\n## Target\n\n${filler("target")}\n\n## After\n\n${filler("after")}\n`,
  );
  await page.goto("/documents/docs/guides/jump-gives-way.md#target");
  // the frame the jump lands in, the page is scrolled back to the top, as a
  // reader (or a click on a link further down) would; the page must stay there
  const after = await page.evaluate(async () => {
    const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
    let landed = false;
    for (let frames = 0; frames < 1200 && !landed; frames++) {
      const top = document.querySelector('[data-section="target"]')?.getBoundingClientRect().top;
      landed = top !== undefined && Math.abs(top) <= 16; // its scroll margin is half a line
      if (!landed) await frame();
    }
    window.scrollTo(0, 0);
    for (let frames = 0; frames < 8; frames++) await frame();
    return { landed, scrollY: window.scrollY };
  });
  expect(after).toEqual({ landed: true, scrollY: 0 });
});

test("a hostile document renders inert", async ({ page, request }) => {
  const hostile = [
    "# Hostile",
    "",
    "<script>window.__pwned = 'script'</script>",
    "",
    '<img src="x" onerror="window.__pwned = \'onerror\'">',
    "",
    "[a javascript link](javascript:window.__pwned='link')",
    "",
    '<a href="javascript:window.__pwned=\'raw link\'">raw link</a> and <b onclick="window.__pwned=\'click\'">bold</b>',
    "",
    '<iframe src="javascript:window.__pwned=\'iframe\'"></iframe>',
    "",
    "![image](javascript:window.__pwned='image')",
    "",
    "| table | ok |",
    "|---|---|",
    "| - [ ] not a task | `code` |",
    "",
    "- [x] a done task",
    "",
    "[a malformed escape](100%zz.md) stays a link",
    "",
    "```python",
    "def safe(): return '<script>'",
    "```",
    "",
  ].join("\n");
  await createDoc(request, "hostile.md", hostile);
  await open(page, "hostile.md");
  const rendered = page.getByTestId("rendered");
  // raw HTML is shown as text, never as markup
  await expect(rendered).toContainText("<script>window.__pwned = 'script'</script>");
  await expect(rendered).toContainText('<img src="x" onerror=');
  await expect(rendered.locator("script, iframe, img[onerror], [onclick], [onerror]")).toHaveCount(0);
  await expect(rendered.locator('a[href^="javascript:"], img[src^="javascript:"]')).toHaveCount(0);
  await rendered.getByText("a javascript link").click();
  // GFM tables, task lists and highlighted code still render
  await expect(rendered.locator("table td").first()).toHaveText("- [ ] not a task");
  await expect(rendered.locator('li input[type="checkbox"][checked]')).toHaveCount(1);
  await expect(rendered.locator("pre code.hljs .hljs-keyword").first()).toHaveText("def");
  await expect(rendered.getByRole("link", { name: "a malformed escape" })).toBeVisible();
  expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
  await screenshot(page, "documents-hostile");
});

test("edit one section and save with If-Match and an Idempotency-Key", async ({ page, request }) => {
  await createDoc(request, "runbook-edit.md", TWO_SECTIONS);
  await open(page, "runbook-edit.md");
  const sent: Record<string, string>[] = [];
  page.on("request", (req) => {
    if (req.method() === "PATCH") sent.push(req.headers());
  });
  await page.getByRole("button", { name: "Edit the section Deploy" }).click();
  const editor = page.getByTestId("doc-textarea");
  await expect(editor).toContainText("## Deploy");
  await expect(editor).toContainText("Run the deploy script.");
  await editor.fill("## Deploy\n\nRun the deploy script, then watch the dashboard.\n\n");
  await expect(page.getByTestId("doc-preview")).toContainText("watch the dashboard");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 2");
  await expect(page.getByTestId("rendered")).toContainText("then watch the dashboard");
  const { content, document } = await readDoc(request, "runbook-edit.md");
  expect(content).toBe(TWO_SECTIONS.replace("Run the deploy script.", "Run the deploy script, then watch the dashboard."));
  expect(document.rev).toBe(2);
  expect(sent).toHaveLength(1);
  expect(sent[0]?.["if-match"]).toMatch(/^"1-[0-9a-f]{64}"$/);
  expect(sent[0]?.["idempotency-key"]).toMatch(/^ui-/);
  const history = await historyOf(request, "runbook-edit.md");
  expect(history[0]).toMatchObject({ rev: 2, op: "patch", source: "person" });
  await screenshot(page, "documents-edited");
});

test("a CR LF document keeps its line endings through an edit in the browser", async ({ page, request }) => {
  const crlf = TWO_SECTIONS.replaceAll("\n", "\r\n");
  await createDoc(request, "runbook-crlf.md", crlf);
  await open(page, "runbook-crlf.md");
  await page.getByRole("button", { name: "Edit the section Deploy" }).click();
  const editor = page.getByTestId("doc-textarea");
  await expect(editor).toContainText("Run the deploy script.");
  await editor.getByText("Run the deploy script.").click();
  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  await page.keyboard.type("Then watch the dashboard.");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 2");
  const { content } = await readDoc(request, "runbook-crlf.md");
  expect(content).toBe(crlf.replace("Run the deploy script.", "Run the deploy script.\r\nThen watch the dashboard."));
  expect(content.replaceAll("\r\n", "")).not.toMatch(/[\r\n]/);
  const history = await historyOf(request, "runbook-crlf.md");
  expect(history[0]).toMatchObject({ rev: 2, op: "patch" });

  // a last section of one line, no line break of its own: the document's ending still applies
  await createDoc(request, "short-crlf.md", "# Runbook\r\n\r\nIntro.\r\n\r\n## End");
  await open(page, "short-crlf.md");
  await page.getByRole("button", { name: "Edit the section End" }).click();
  await page.getByTestId("doc-textarea").getByText("## End").click();
  await page.keyboard.press("End");
  await page.keyboard.press("Enter");
  await page.keyboard.type("Done.");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 2");
  expect((await readDoc(request, "short-crlf.md")).content).toBe("# Runbook\r\n\r\nIntro.\r\n\r\n## End\r\nDone.\r\n");
});

test("a save whose answer was lost is retried with the same key and writes once", async ({ page, request }) => {
  await createDoc(request, "retry.md", TWO_SECTIONS);
  await open(page, "retry.md");
  const keys: string[] = [];
  let dropped = false;
  await page.route("**/api/docs/document?*", async (route) => {
    if (route.request().method() !== "PATCH") return route.fallback();
    keys.push(route.request().headers()["idempotency-key"] ?? "");
    if (dropped) return route.fallback();
    dropped = true;
    await route.fetch(); // the hub commits it...
    await route.abort("connectionreset"); // ...but the browser never hears back
  });
  await page.getByRole("button", { name: "Edit the section Rollback" }).click();
  await page.getByTestId("doc-textarea").fill("## Rollback\n\nRevert the tag and tell the channel.\n");
  await page.getByRole("button", { name: "Save" }).click();
  const failure = page.getByTestId("doc-failure");
  await expect(failure).toContainText("The hub could not be reached");
  await failure.getByRole("button", { name: "Retry (same request ID)" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 2");
  expect(keys).toHaveLength(2);
  expect(keys[0]).toBe(keys[1]);
  const history = await historyOf(request, "retry.md");
  expect(history.map((entry) => entry.rev)).toEqual([2, 1]);
});

test("an edit changed after a failed save is a new intent, and the editor keeps the text", async ({ page, request }) => {
  await createDoc(request, "intent.md", TWO_SECTIONS);
  await open(page, "intent.md");
  const keys: string[] = [];
  let refused = false;
  await page.route("**/api/docs/document?*", async (route) => {
    if (route.request().method() !== "PATCH") return route.fallback();
    keys.push(route.request().headers()["idempotency-key"] ?? "");
    if (refused) return route.fallback();
    refused = true;
    await route.abort("connectionrefused"); // never reached the hub
  });
  await page.getByRole("button", { name: "Edit the section Deploy" }).click();
  const editor = page.getByTestId("doc-textarea");
  await editor.fill("## Deploy\n\nFirst try.\n\n");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-failure")).toContainText("The hub could not be reached");
  await editor.fill("## Deploy\n\nSecond thought, typed after the failure.\n\n");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 2");
  expect(keys).toHaveLength(2);
  expect(keys[1]).not.toBe(keys[0]);
  expect((await readDoc(request, "intent.md")).content).toContain("Second thought, typed after the failure.");
});

test("someone else's change to another section: the edit is re-applied in one click", async ({ page, request }) => {
  await createDoc(request, "runbook-merge.md", TWO_SECTIONS);
  await open(page, "runbook-merge.md");
  const keys: string[] = [];
  page.on("request", (req) => {
    if (req.method() === "PATCH") keys.push(req.headers()["idempotency-key"] ?? "");
  });
  await page.getByRole("button", { name: "Edit the section Deploy" }).click();
  await page.getByTestId("doc-textarea").fill("## Deploy\n\nRun the deploy script with --canary.\n\n");
  await patchAsOther(request, "runbook-merge.md", [{ op: "replace_section", section: "Rollback", content: "Revert the tag; page the on-call.\n" }]);
  // live: the editor says the document moved on underneath it
  await expect(page.getByTestId("changed-meanwhile")).toContainText("now at rev 2", { timeout: 10_000 });
  await page.getByRole("button", { name: "Save" }).click();
  const conflict = page.getByTestId("conflict");
  await expect(conflict).toContainText("touched other sections");
  await expect(conflict.getByTestId("diff").first()).toContainText("page the on-call");
  await screenshot(page, "documents-conflict-other-section");
  await conflict.getByRole("button", { name: "Re-apply my edit on rev 2" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Re-applied your edit as rev 3");
  // the re-applied edit is a new intent: a new request ID
  expect(keys).toHaveLength(2);
  expect(keys[1]).not.toBe(keys[0]);
  const { content } = await readDoc(request, "runbook-merge.md");
  expect(content).toContain("Run the deploy script with --canary.");
  expect(content).toContain("Revert the tag; page the on-call.");
});

test("someone else's change to the same section: the person chooses", async ({ page, request }) => {
  await createDoc(request, "runbook-choose.md", TWO_SECTIONS);
  await open(page, "runbook-choose.md");
  await page.getByRole("button", { name: "Edit the section Deploy" }).click();
  await page.getByTestId("doc-textarea").fill("## Deploy\n\nMine: deploy on Tuesdays.\n\n");
  await patchAsOther(request, "runbook-choose.md", [{ op: "replace_section", section: "Deploy", content: "Theirs: deploy on Fridays.\n\n" }]);
  await page.getByRole("button", { name: "Save" }).click();
  const conflict = page.getByTestId("conflict");
  await expect(conflict).toContainText("Both of you changed the same part");
  await expect(conflict).toContainText("Theirs: deploy on Fridays.");
  await expect(conflict).toContainText("Mine: deploy on Tuesdays.");
  await screenshot(page, "documents-conflict-same-section");
  await conflict.getByRole("button", { name: "Keep mine" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("as rev 3");
  const { content } = await readDoc(request, "runbook-choose.md");
  expect(content).toContain("Mine: deploy on Tuesdays.");
  expect(content).not.toContain("Fridays");
  expect(content).toContain("Revert the release tag.");
});

test("someone else's change to the same section: merged by hand in the editor", async ({ page, request }) => {
  await createDoc(request, "runbook-by-hand.md", TWO_SECTIONS);
  await open(page, "runbook-by-hand.md");
  await page.getByRole("button", { name: "Edit the section Deploy" }).click();
  await page.getByTestId("doc-textarea").fill("## Deploy\n\nMine: deploy on Tuesdays.\n\n");
  await patchAsOther(request, "runbook-by-hand.md", [{ op: "replace_section", section: "Deploy", content: "Theirs: deploy on Fridays.\n\n" }]);
  // the live update lands first; the editor says so, and only the editor
  await expect(page.getByTestId("changed-meanwhile")).toContainText("now at rev 2", { timeout: 10_000 });
  await expect(page.getByTestId("doc-notice")).toHaveCount(0);
  await page.getByRole("button", { name: "Save" }).click();
  await page.getByTestId("conflict").getByRole("button", { name: "Merge by hand" }).click();
  // the whole document, with the person's side where both wrote, rests on their revision
  const editor = page.getByTestId("doc-textarea");
  await expect(editor).toContainText("Mine: deploy on Tuesdays.");
  await expect(editor).toContainText("Revert the release tag.");
  const merged = TWO_SECTIONS.replace("Run the deploy script.", "Deploy on Tuesdays, or on Fridays when Tuesday is a holiday.");
  await editor.fill(merged);
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 3");
  expect((await readDoc(request, "runbook-by-hand.md")).content).toBe(merged);
});

test("an unsaved edit survives a reload", async ({ page, request }) => {
  await createDoc(request, "draft.md", TWO_SECTIONS);
  await open(page, "draft.md");
  await page.getByRole("button", { name: "Edit document" }).click();
  await page.getByTestId("doc-textarea").fill("# Runbook\n\nRewritten by hand, not saved yet.\n");
  await expect(page.getByTestId("draft-state")).toContainText("kept in this browser");
  await page.reload();
  await expect(page.getByTestId("draft-restored")).toContainText("based on rev 1");
  await expect(page.getByTestId("doc-textarea")).toContainText("Rewritten by hand, not saved yet.");
  await screenshot(page, "documents-draft-restored");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 2");
  expect((await readDoc(request, "draft.md")).content).toBe("# Runbook\n\nRewritten by hand, not saved yet.\n");
  await page.reload();
  await expect(page.getByTestId("draft-restored")).toHaveCount(0);
});

test("history: a diff between two revisions, and one restored", async ({ page, request }) => {
  await createDoc(request, "history.md", TWO_SECTIONS);
  await patchAsOther(request, "history.md", [{ op: "append_to_section", section: "Deploy", content: "Second revision line.\n" }]);
  await patchAsOther(request, "history.md", [{ op: "replace_text", find: "Intro.", replace: "Third revision intro." }]);
  await open(page, "history.md");
  await page.getByRole("button", { name: "History" }).click();
  const history = page.getByTestId("history");
  await expect(history.getByTestId("history-entry")).toHaveCount(3);
  await expect(history.getByTestId("history-entry").first()).toContainText("agent-7");
  await expect(history.getByTestId("diff")).toContainText("rev 2 → rev 3");
  await expect(history.getByTestId("diff").locator("ins")).toContainText("Third revision intro.");
  await history.getByLabel("From revision").selectOption("1");
  await expect(history.getByTestId("diff")).toContainText("rev 1 → rev 3");
  await expect(history.getByTestId("diff").locator("ins")).toContainText(["Third revision intro.", "Second revision line."]);
  await screenshot(page, "documents-history");
  const first = history.getByTestId("history-entry").filter({ hasText: "rev 1" });
  await first.getByRole("button", { name: "Restore…" }).click();
  await first.getByRole("button", { name: "Restore rev 1 as a new revision" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Restored rev 1 as rev 4");
  expect((await readDoc(request, "history.md")).content).toBe(TWO_SECTIONS);
});

test("a change on disk appears live", async ({ page, request }) => {
  await createDoc(request, "live.md", "# Live\n\nBefore the editor touched it.\n");
  await open(page, "live.md");
  await expect(page.getByTestId("rendered")).toContainText("Before the editor");
  const file = join(repo, "docs", "live.md");
  writeFileSync(file, readFileSync(file, "utf8").replace("Before the editor touched it.", "Saved from an editor on disk."));
  await expect(page.getByTestId("rendered")).toContainText("Saved from an editor on disk.", { timeout: 15_000 });
  await expect(page.getByTestId("doc-notice")).toContainText("Updated to rev 2");
  const history = await historyOf(request, "live.md");
  expect(history[0]).toMatchObject({ rev: 2, source: "external" });
  await screenshot(page, "documents-live");
});

test("a read-only mount refuses edits and says why", async ({ page, request }) => {
  await page.goto("/documents/policies/security.md");
  await expect(page.getByRole("heading", { name: "Security policy" })).toBeVisible();
  await expect(page.getByTestId("read-only")).toContainText("This mount is read-only for people");
  await expect(page.getByRole("button", { name: "Edit document" })).toBeDisabled();
  await expect(page.getByRole("button", { name: /Edit the section/ })).toHaveCount(0);
  await expect(page.getByRole("button", { name: "New document" })).toBeDisabled();
  // the hub refuses it too, whatever the page offers
  const answer = await request.patch("/api/docs/document?mount=policies&path=security.md", {
    headers: { "If-Match": "*" },
    data: { operations: [{ op: "append", content: "no" }] },
  });
  expect(answer.status()).toBe(403);
  expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("E_READ_ONLY");
  await screenshot(page, "documents-read-only");
});

test("create, move and delete a document, each confirmed", async ({ page }) => {
  await page.goto("/documents/docs");
  await page.getByRole("button", { name: "New document" }).click();
  const form = page.getByRole("form", { name: "New document" });
  await form.getByLabel("Path").fill("../outside.md");
  await form.getByRole("button", { name: "Create" }).click();
  await expect(form.getByTestId("doc-failure")).toContainText("That path is not allowed here");
  await form.getByLabel("Path").fill("notes/created.md");
  await form.getByLabel("Markdown").fill("# Created here\n\nFrom the page.\n");
  await form.getByRole("button", { name: "Create" }).click();
  await expect(page).toHaveURL(/\/documents\/docs\/notes\/created\.md$/);
  await expect(page.getByRole("heading", { name: "Created here", level: 1 }).first()).toBeVisible();
  await page.getByRole("button", { name: "Rename or move" }).click();
  await page.getByLabel("New path in the mount").fill("notes/moved.md");
  await page.getByRole("button", { name: "Move to notes/moved.md" }).click();
  await expect(page).toHaveURL(/\/documents\/docs\/notes\/moved\.md$/);
  await expect(page.getByTestId("doc-rev")).toHaveText("2");
  await page.getByRole("button", { name: "Delete" }).click();
  await page.getByRole("alertdialog", { name: "Delete the document" }).getByRole("button", { name: "Delete" }).click();
  await expect(page).toHaveURL(/\/documents\/docs$/);
  await expect(page.getByTestId("doc-entry").filter({ hasText: "Created here" })).toHaveCount(0);
});

/** Runs SQL on the test hub's database, as someone tampering with it would. */
function tamper(sql: string, ...parameters: (string | number)[]): void {
  const script = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute(sys.argv[2], sys.argv[3:]); c.commit()";
  execFileSync("python3", ["-c", script, join(repo, ".cos", "cos.db"), sql, ...parameters.map(String)]);
}

test("a tampered history raises the alarm and refuses saves until it is repaired", async ({ page, request }) => {
  await createDoc(request, "integrity.md", TWO_SECTIONS);
  const [entry] = await historyOf(request, "integrity.md");
  const seq = entry?.seq ?? 0;
  tamper("UPDATE docs_history SET actor = ? WHERE seq = ?", "mallory", seq);
  try {
    await open(page, "integrity.md");
    await page.getByTestId("audit").getByRole("button", { name: "Audit again" }).click();
    await expect(page.getByTestId("audit")).toContainText(`The first bad entry is #${seq}`);
    await expect(page.getByTestId("integrity-alarm")).toContainText("Writes are refused until the history is repaired");
    await page.getByRole("button", { name: "Edit the section Deploy" }).click();
    await page.getByTestId("doc-textarea").fill("## Deploy\n\nNot while the history is broken.\n\n");
    await page.getByRole("button", { name: "Save" }).click();
    await expect(page.getByTestId("doc-failure")).toHaveAttribute("data-code", "E_INTEGRITY");
    await expect(page.getByTestId("doc-failure")).toContainText("Writes are refused until the history is repaired");
    await expect(page.getByTestId("draft-state")).toContainText("kept in this browser");
    await screenshot(page, "documents-integrity");
  } finally {
    tamper("UPDATE docs_history SET actor = ? WHERE seq = ?", entry?.actor ?? "web", seq);
  }
  await page.getByTestId("audit").getByRole("button", { name: "Audit again" }).click();
  await expect(page.getByTestId("audit")).toContainText("Chain verified");
  await page.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId("doc-notice")).toContainText("Saved as rev 2");
});
