import { type APIRequestContext, expect, type Page, test } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";

const unique = (prefix: string) => `${prefix} ${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

async function createTask(request: APIRequestContext, title: string): Promise<string> {
  const response = await request.post("/api/board/tasks", { data: { title } });
  expect(response.status()).toBe(201);
  return ((await response.json()) as { data: { id: string } }).data.id;
}

/** Frees the web actor's in_progress slot so a test can start a task. */
async function clearInProgress(request: APIRequestContext) {
  const board = (await (await request.get("/api/board/list")).json()) as {
    data: { columns: { status: string; cards: { id: string; assignee: string | null }[] }[] };
  };
  const column = board.data.columns.find((c) => c.status === "in_progress");
  for (const card of column?.cards ?? []) {
    await request.post(`/api/board/tasks/${card.id}/move`, { data: { from: "in_progress", to: "icebox" } });
  }
}

async function openBoard(page: Page) {
  await page.goto("/board");
  await expect(page.getByTestId("column-icebox")).toBeVisible();
}

test("create a task in the dialog", async ({ page }) => {
  await openBoard(page);
  const title = unique("Write the release notes");
  await page.getByRole("button", { name: "New task" }).click();
  await page.getByLabel("Title").fill(title);
  await page.getByLabel("Kind").last().selectOption("docs");
  await page.getByRole("button", { name: "Create" }).click();
  await expect(page.getByTestId("column-icebox").getByText(title)).toBeVisible();
});

test("validation errors appear beside the field they name", async ({ page }) => {
  await openBoard(page);
  await page.getByRole("button", { name: "New task" }).click();
  await page.getByLabel("Title").fill("x".repeat(201));
  await page.getByRole("button", { name: "Create" }).click();
  const error = page.locator("#title-error");
  await expect(error).toBeVisible();
  await expect(error).toContainText("title");
  await expect(page.getByLabel("Title")).toHaveAttribute("aria-invalid", "true");
});

test("drag a card to another column and see it there after reload", async ({ page, request }) => {
  await clearInProgress(request);
  const title = unique("Drag me");
  const id = await createTask(request, title);
  await openBoard(page);
  const card = page.getByTestId(`card-${id}`);
  await expect(card).toBeVisible();
  await card.dragTo(page.getByTestId("column-in_progress"));
  await expect(page.getByTestId("column-in_progress").getByTestId(`card-${id}`)).toBeVisible();
  await page.reload();
  await expect(page.getByTestId("column-in_progress").getByTestId(`card-${id}`)).toBeVisible();
  const shown = (await (await request.get(`/api/board/tasks/${id}`)).json()) as { data: { status: string } };
  expect(shown.data.status).toBe("in_progress");
});

test("a move refused by the WIP limit says why and snaps back", async ({ page, request }) => {
  await clearInProgress(request);
  const holder = await createTask(request, unique("Already in progress"));
  const started = await request.post(`/api/board/tasks/${holder}/move`, { data: { from: "icebox", to: "in_progress" } });
  expect(started.status()).toBe(200);
  const id = await createTask(request, unique("Second start"));
  await openBoard(page);
  await page.getByTestId(`card-${id}`).dragTo(page.getByTestId("column-in_progress"));
  const notice = page.getByTestId("move-error");
  await expect(notice).toContainText("WIP limit");
  await expect(page.getByTestId("column-icebox").getByTestId(`card-${id}`)).toBeVisible();
  await expect(page.getByTestId("column-in_progress").getByTestId(`card-${id}`)).toHaveCount(0);
});

test("a change made over REST appears in the open page without reload", async ({ page, request }) => {
  await openBoard(page);
  await expect(page.getByText("live", { exact: true })).toBeVisible();
  const title = unique("Made elsewhere");
  await createTask(request, title);
  await expect(page.getByTestId("column-icebox").getByText(title)).toBeVisible({ timeout: 3_000 });
});

test("a card opens its details and history from the keyboard", async ({ page, request }) => {
  const title = unique("Keyboard task");
  const id = await createTask(request, title);
  await openBoard(page);
  await page.getByTestId(`card-${id}`).focus();
  await page.keyboard.press("Enter");
  const dialog = page.getByRole("dialog");
  await expect(dialog.getByRole("heading", { name: `${id}: ${title}` })).toBeVisible();
  await expect(dialog.getByTestId("history")).toContainText("created");
  await dialog.getByLabel("Move to").selectOption("archive");
  await dialog.getByRole("button", { name: "Move", exact: true }).click();
  await expect(dialog.getByTestId("history")).toContainText("icebox → archive");
});

test("a disabled module says how to enable it, and settings switch it back", async ({ page }) => {
  await page.goto("/settings");
  const board = page.getByTestId("module-board");
  await board.uncheck();
  await expect(board).not.toBeChecked();
  // the switch is enabled again once the hub has saved it
  await expect(board).toBeEnabled();
  await page.getByRole("link", { name: "Board" }).click();
  const failure = page.getByTestId("failure");
  await expect(failure).toContainText("cos module enable board");
  await failure.getByRole("button", { name: /Enable board in Settings/ }).click();
  await page.getByTestId("module-board").check();
  await expect(page.getByTestId("module-board")).toBeEnabled();
  await page.getByRole("link", { name: "Board" }).click();
  await expect(page.getByTestId("column-icebox")).toBeVisible();
});

test("deep links load the app; unknown API paths stay JSON", async ({ page, request }) => {
  await page.goto("/settings");
  await expect(page.getByRole("heading", { name: "Settings" })).toBeVisible();
  await page.goto("/graph/doctor");
  await expect(page.getByRole("heading", { name: "Graph doctor" })).toBeVisible();
  await page.goto("/no/such/page");
  await expect(page.getByRole("heading", { name: "Not found" })).toBeVisible();
  await expect(page.getByText("/no/such/page")).toBeVisible();
  await page.getByRole("main").getByRole("link", { name: "Graph" }).click();
  await expect(page.getByRole("heading", { name: "Graph", exact: true })).toBeVisible();
  const response = await request.get("/api/no/such/thing");
  expect(response.status()).toBe(404);
  const body = (await response.json()) as { error: { category: string } };
  expect(body.error.category).toBe("not_found");
});

test("screenshot of the board", async ({ page, request }) => {
  for (const title of ["Fix the login redirect", "Profile the search index", "Document the board API"]) {
    await createTask(request, title);
  }
  await openBoard(page);
  await expect(page.getByText("Document the board API")).toBeVisible();
  const folder = resolve("test-results/screenshots");
  mkdirSync(folder, { recursive: true });
  const path = resolve(folder, "board.png");
  await page.screenshot({ path, fullPage: true });
  console.log(`board screenshot saved to ${path}`);
});

test("drop a card on another in its column to reorder", async ({ page, request }) => {
  const first = await createTask(request, unique("Stays second"));
  const second = await createTask(request, unique("Moves first"));
  await openBoard(page);
  const column = page.getByTestId("column-icebox");
  await page.getByTestId(`card-${second}`).dragTo(page.getByTestId(`card-${first}`));
  await expect
    .poll(async () => {
      const ids = await column.locator("[data-card-id]").evaluateAll((cards) => cards.map((c) => c.getAttribute("data-card-id")));
      return ids.indexOf(second) < ids.indexOf(first);
    })
    .toBe(true);
});

test("edit in the dialog; a stale edit offers the latest version and re-applies", async ({ page, request }) => {
  const id = await createTask(request, unique("Before the edit"));
  await openBoard(page);
  await page.getByTestId(`card-${id}`).click();
  const details = page.getByRole("dialog").first();
  await details.getByRole("button", { name: "Edit" }).click();
  const editor = page.getByRole("dialog", { name: `Edit ${id}` });
  // someone else edits the task meanwhile
  const other = await request.patch(`/api/board/tasks/${id}`, {
    headers: { "If-Match": '"1"' },
    data: { changes: { description: "changed elsewhere" } },
  });
  expect(other.status()).toBe(200);
  const title = unique("After the edit");
  await editor.getByLabel("Title").fill(title);
  await editor.getByRole("button", { name: "Save" }).click();
  const conflict = editor.getByTestId("failure");
  await expect(conflict).toContainText("changed since version 1");
  await conflict.getByRole("button", { name: "Load the latest and re-apply" }).click();
  await editor.getByRole("button", { name: "Save" }).click();
  await expect(page.getByTestId(`card-${id}`)).toContainText(title);
  const shown = (await (await request.get(`/api/board/tasks/${id}`)).json()) as {
    data: { title: string; description: string; version: number };
  };
  expect(shown.data.title).toBe(title);
  expect(shown.data.description).toBe("changed elsewhere");
  expect(shown.data.version).toBe(3);
});

test("a claimed task shows who holds its lease and until when", async ({ page, request }) => {
  await clearInProgress(request);
  const label = unique("lease").replace(/\s/g, "-");
  const response = await request.post("/api/board/tasks", { data: { title: unique("Claim me"), priority: "P0", labels: [label] } });
  expect(response.status()).toBe(201);
  const id = ((await response.json()) as { data: { id: string } }).data.id;
  const actor = { kind: "agent", id: "lease-bot" };
  const claimed = await request.post("/api/board/claim-next", { data: { actor, label, lease_seconds: 600 } });
  expect(((await claimed.json()) as { data: { task: { id: string } } }).data.task.id).toBe(id);
  await openBoard(page);
  const lease = page.getByTestId("column-in_progress").getByTestId(`card-${id}`).getByTestId("lease");
  await expect(lease).toContainText("agent:lease-bot until");
  // its holder's move ends the lease, and frees the column for the other tests
  await request.post(`/api/board/tasks/${id}/move`, { data: { from: "in_progress", to: "blocked", actor } });
  await page.reload();
  await expect(page.getByTestId(`card-${id}`).getByTestId("lease")).toHaveCount(0);
});
