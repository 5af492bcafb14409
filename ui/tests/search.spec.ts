import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

// The hub serves a copy of tests/fixtures/graph-repo (app/db.py, app/models.py, docs/guide.md).

async function createTask(request: APIRequestContext, data: Record<string, unknown>): Promise<string> {
  const response = await request.post("/api/board/tasks", { data });
  expect(response.status()).toBe(201);
  return ((await response.json()) as { data: { id: string } }).data.id;
}

async function searchFor(page: Page, query: string) {
  await page.request.post("/api/graph/index");
  await page.goto(`/search?q=${encodeURIComponent(query)}`);
  await expect(page.getByRole("heading", { name: "Search", exact: true })).toBeVisible();
  await expect(page.getByTestId("search-total")).toBeVisible();
}

test("a symbol is found in another spelling, ranked first, and opens in the graph", async ({ page }) => {
  await searchFor(page, "Store");
  const first = page.getByTestId("search-hit").first();
  await expect(first).toContainText("class");
  await expect(first).toContainText("exact definition");
  await expect(first.locator("mark").first()).toHaveText("Store");
  // the class and its method (Store.save)
  await expect(page.getByRole("link", { name: /Symbols/ })).toContainText("2");
  await expect(page.getByTestId("syntax")).toContainText("parse_http_request");

  // the keyboard: the list takes focus, down moves, up comes back, Enter opens
  await page.getByRole("listbox", { name: "Hits" }).focus();
  await page.keyboard.press("ArrowDown");
  await expect(page.getByTestId("search-hit").nth(1)).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("ArrowUp");
  await expect(first).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await expect(page).toHaveURL(/\/graph\?node=code%3Aclass%3Aapp%2Fmodels\.py%3A%3AStore/);
  await expect(page.getByTestId("node-panel").getByRole("heading", { name: /Store/ })).toBeVisible();
});

test("identifier spellings find each other in code text and symbols", async ({ page }) => {
  await searchFor(page, "openDb");
  // `open_db` is a name bound by an import: found as code text, highlighted
  const line = page.getByTestId("search-hit").filter({ hasText: "from app.db import connect as open_db" });
  await expect(line).toBeVisible();
  await expect(line.locator("mark")).toHaveText("open_db");
  await expect(line).toContainText("app/models.py:1");
  // a line of code opens in the editor at its place
  await expect(line.getByRole("link", { name: "app/models.py:1" })).toHaveAttribute(
    "href",
    /^vscode:\/\/file\/.+\/app\/models\.py:1$/,
  );
});

test("a task hit opens its card, and a new task shows up without a reload", async ({ page, request }) => {
  const id = await createTask(request, { title: "Rotate the webhookSecret", description: "The signing key expires in March." });
  await searchFor(page, "webhook secret");
  const hit = page.getByTestId("search-hit").filter({ hasText: "Rotate the webhookSecret" });
  await expect(hit).toContainText(id);
  // live: another task that matches appears in the open results
  await createTask(request, { title: "Audit every webhook secret" });
  await expect(page.getByTestId("search-hit").filter({ hasText: "Audit every webhook secret" })).toBeVisible({ timeout: 10_000 });
  await hit.click();
  await expect(page).toHaveURL(new RegExp(`/board\\?task=${id}`));
  await expect(page.getByRole("dialog").getByText("Rotate the webhookSecret")).toBeVisible();
});

test("a question in plain words ranks what holds most of its words, naming them and the mode", async ({ page, request }) => {
  const id = await createTask(request, {
    title: "Rotate the webhook signing keys",
    description: "The webhook secret expires every spring and must be replaced before then.",
  });
  await searchFor(page, "how do I replace the expired webhook secrets");
  const first = page.getByTestId("search-hit").first();
  await expect(first).toContainText(id);
  // every word it holds, by stem: replaced, expires, webhook, secret
  await expect(first.getByTestId("search-words")).toHaveText("replaceexpiredwebhooksecrets");
  await expect(page.getByTestId("search-mode-used")).toHaveText("lexical");
  await expect(page.getByText("left out as too common to rank by: how, do, I, the")).toBeVisible();
});

test("a document hit opens its section in the Documents page", async ({ page }) => {
  await searchFor(page, "database module");
  const hit = page.getByTestId("search-hit").filter({ hasText: "Guide" }).first();
  await expect(hit).toContainText("docs/guide.md");
  await hit.click();
  await expect(page).toHaveURL(/\/documents\/docs\/guide\.md#guide$/);
  await expect(page.getByTestId("rendered")).toContainText("opens connections");
});

test("area tabs narrow the hits and load more follows the cursor", async ({ page, request }) => {
  for (let n = 1; n <= 35; n += 1) await createTask(request, { title: `Bulk pagination item ${n}` });
  await searchFor(page, "bulk pagination");
  await expect(page.getByTestId("search-hit")).toHaveCount(30);
  await page.getByRole("button", { name: "Load more" }).click();
  await expect(page.getByTestId("search-hit")).toHaveCount(35);
  await expect(page.getByRole("button", { name: "Load more" })).toHaveCount(0);
  await page.getByRole("link", { name: /^Code/ }).click();
  await expect(page).toHaveURL(/area=code/);
  await expect(page.getByText("Nothing found for bulk pagination.")).toBeVisible();
  // the tabs keep the counts of the query over every area
  await expect(page.getByRole("link", { name: /^Tasks/ })).toContainText("35");
  // one hit is counted as one
  await searchFor(page, '"bulk pagination item 35"');
  await expect(page.getByTestId("search-total")).toHaveText("1 hit");
});

test("a refused query says why, naming what was expected", async ({ page }) => {
  await searchFor(page, "parser");
  await page.getByRole("searchbox", { name: "Search query" }).fill("/x(/");
  await page.getByRole("button", { name: "Search" }).click();
  const failure = page.getByTestId("failure");
  await expect(failure).toHaveAttribute("data-code", "E_ARGUMENT");
  await expect(failure).toContainText("q: a valid regular expression at character");
  await page.getByRole("searchbox", { name: "Search query" }).fill("reconect");
  await page.getByRole("button", { name: "Search" }).click();
  await expect(page.getByText("Did you mean")).toBeVisible();
  await page.getByRole("button", { name: "reconnect", exact: true }).click();
  await expect(page.getByTestId("search-hit").first()).toContainText("exact definition");
});

test("screenshot of the search page", async ({ page }) => {
  await searchFor(page, "connect");
  await expect(page.getByTestId("search-hit").first()).toBeVisible();
  const folder = resolve("test-results/screenshots");
  mkdirSync(folder, { recursive: true });
  const path = resolve(folder, "search.png");
  await page.screenshot({ path, fullPage: true });
  console.log(`search screenshot saved to ${path}`);
});

test("files of languages the graph does not parse are searched, and a language chip narrows the hits", async ({ page }) => {
  // the hub's repository (scripts/serve-for-tests.mjs), written to as a person would
  const repo = join(tmpdir(), `cos-ui-test-${process.env.COS_UI_TEST_PORT}`);
  const deploy = join(repo, "deploy");
  mkdirSync(deploy, { recursive: true });
  writeFileSync(join(deploy, "compose.yaml"), "services:\n  ledger:\n    image: acme/ledger-service:2\n");
  writeFileSync(join(deploy, "schema.sql"), "CREATE TABLE ledger_entries (id INTEGER PRIMARY KEY);\n");
  writeFileSync(join(deploy, "release"), "#!/bin/sh\necho \"posting the ledger\"\n");
  try {
    await searchFor(page, "ledger");
    const languages = page.getByRole("navigation", { name: "Languages" });
    await expect(languages.getByRole("button", { name: "Any language" })).toHaveAttribute("aria-pressed", "true");
    for (const lang of ["yaml", "sql", "shell"]) {
      await expect(languages.getByRole("button", { name: new RegExp(`^${lang} \\d+$`) })).toBeVisible();
    }
    await languages.getByRole("button", { name: /^sql \d+$/ }).click();
    await expect(page).toHaveURL(/lang=sql/);
    await expect(languages.getByRole("button", { name: /^sql \d+$/ })).toHaveAttribute("aria-pressed", "true");
    const hits = page.getByTestId("search-hit");
    await expect(hits).toHaveCount(1);
    await expect(hits.first()).toContainText("deploy/schema.sql:1");
    // the other languages stay on offer while one is chosen
    await expect(languages.getByRole("button", { name: /^yaml \d+$/ })).toBeVisible();
    await languages.getByRole("button", { name: "Any language" }).click();
    await expect(page).not.toHaveURL(/lang=/);
    await expect(hits.filter({ hasText: "deploy/compose.yaml:3" })).toBeVisible();
  } finally {
    rmSync(deploy, { recursive: true, force: true });
    await page.request.post("/api/graph/index");
  }
});
