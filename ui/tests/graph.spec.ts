import { expect, type Page, test } from "@playwright/test";
import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The hub's repository (scripts/serve-for-tests.mjs copies tests/fixtures/graph-repo there).
const repo = join(tmpdir(), `cos-ui-test-${process.env.COS_UI_TEST_PORT}`);

async function shownNodes(page: Page): Promise<number> {
  const text = (await page.getByTestId("graph-count").textContent()) ?? "0";
  return Number(text.replace(/[^0-9]/g, ""));
}

async function openGraph(page: Page) {
  // the hub indexes on start; make sure it has, then load the page
  await page.request.post("/api/graph/index");
  await page.goto("/graph");
  await expect(page.getByTestId("graph-canvas")).toBeVisible();
  await expect.poll(() => shownNodes(page)).toBeGreaterThan(3);
}

test("clicking a folder on the canvas opens it and shows its context", async ({ page }) => {
  await openGraph(page);
  const before = await shownNodes(page);
  const at = await page.evaluate(() => window.cosGraphView?.positionOf("code:file:app/models.py") ?? null);
  expect(at, "the file is drawn after the first load (root and two rings)").not.toBeNull();
  await page.mouse.click(at!.x, at!.y);
  const panel = page.getByTestId("node-panel");
  await expect(panel.getByRole("heading", { name: /models\.py/ })).toBeVisible();
  // opening the file brings its class and method into the view
  await expect.poll(() => shownNodes(page)).toBeGreaterThan(before);
  await expect(panel.getByText("code:file:app/models.py")).toBeVisible();
  await expect(panel.getByRole("button", { name: /Store/ })).toBeVisible();
});

test("a node can still be clicked after the camera zoomed and panned", async ({ page }) => {
  await openGraph(page);
  // the picking layer is skipped while the camera moves and must be back once it stops
  const frames = await page.evaluate(async () => {
    const swept = (await window.cosGraphView?.sweep(600)) ?? [];
    // sigma draws the settled view on the next frame; a person's click comes later still
    await new Promise((settled) => requestAnimationFrame(() => requestAnimationFrame(settled)));
    return swept;
  });
  expect(frames.length).toBeGreaterThan(0);
  const before = await shownNodes(page);
  const at = await page.evaluate(() => window.cosGraphView?.positionOf("code:file:app/models.py") ?? null);
  expect(at).not.toBeNull();
  await page.mouse.click(at!.x, at!.y);
  await expect(page.getByTestId("node-panel").getByRole("heading", { name: /models\.py/ })).toBeVisible();
  // the file's children arrive and the view is laid out again before the drag
  await expect.poll(() => shownNodes(page)).toBeGreaterThan(before);

  // and after a drag with the mouse that pulls the target toward the middle (it
  // must stay on the canvas), held still before release: the only render at rest
  // is then the refresh sigma does because edges and labels are hidden on move
  const box = (await page.getByTestId("graph-canvas").boundingBox())!;
  const middle = { x: box.x + box.width / 2, y: box.y + box.height / 2 };
  const target = (await page.evaluate(() => window.cosGraphView?.positionOf("doc:file:docs/guide.md") ?? null))!;
  expect(target).not.toBeNull();
  await page.mouse.move(middle.x, middle.y);
  await page.mouse.down();
  await page.mouse.move(middle.x + (middle.x - target.x) / 3, middle.y + (middle.y - target.y) / 3, { steps: 8 });
  await page.waitForTimeout(300);
  await page.mouse.up();
  await page.waitForTimeout(800);
  const moved = (await page.evaluate(() => window.cosGraphView?.positionOf("doc:file:docs/guide.md") ?? null))!;
  expect(moved).not.toBeNull();
  expect(Math.hypot(moved.x - target.x, moved.y - target.y), "the drag moved the view").toBeGreaterThan(20);
  expect(moved.x > box.x && moved.x < box.x + box.width && moved.y > box.y && moved.y < box.y + box.height).toBe(true);
  await page.mouse.click(moved.x, moved.y);
  await expect(page.getByTestId("node-panel").getByRole("heading", { name: /guide\.md/ })).toBeVisible();
});

test("a found symbol's context links to its file and line and lists who depends on it", async ({ page }) => {
  await openGraph(page);
  await page.getByLabel("Find a node").fill("connect");
  await page.getByRole("button", { name: "Find", exact: true }).click();
  await page.getByRole("list", { name: "Nodes found" }).getByRole("button", { name: /^connect function/ }).click();
  const panel = page.getByTestId("node-panel");
  const location = panel.getByTestId("node-location");
  await expect(location).toHaveText("app/db.py:1");
  await expect(location).toHaveAttribute("href", /^vscode:\/\/file\/.*app\/db\.py:1$/);
  // the call through the import alias counts: save() and reconnect() both break
  await expect(panel.getByTestId("impact-will-break")).toHaveText("Will break: 2");
  await panel.getByRole("button", { name: /save/ }).first().click();
  await expect(panel.getByRole("heading", { name: /save/ })).toBeVisible();
});

test("the path finder joins a doc to a function and highlights the way", async ({ page }) => {
  await openGraph(page);
  await page.getByLabel("From").fill("docs/guide.md");
  await page.getByLabel("To").fill("code:function:app/db.py::reconnect");
  await page.getByRole("button", { name: "Find path" }).click();
  const steps = page.getByTestId("path-result").getByRole("listitem");
  await expect(steps).toHaveCount(3);
  await expect(steps.nth(1)).toContainText("links_to");
  await expect(steps.nth(2)).toContainText("reconnect");
  // an unknown end is refused with the closest candidates, not a blank page
  await page.getByLabel("To").fill("no_such_symbol_anywhere");
  await page.getByRole("button", { name: "Find path" }).click();
  await expect(page.getByRole("alert")).toContainText(/no graph node matches/);
});

test("the doctor lists every category and fixes a fixable one", async ({ page }) => {
  // a path with a space makes uids the doctor calls malformed; the hub's watcher indexes it
  mkdirSync(join(repo, "notes"), { recursive: true });
  writeFileSync(join(repo, "notes", "my draft.py"), "def draft():\n    pass\n");
  await page.goto("/graph/doctor");
  const row = page.getByTestId("doctor-malformed_uid_path");
  await expect
    .poll(
      async () => {
        await page.reload();
        return Number(await row.locator(".count").textContent());
      },
      { timeout: 15_000 },
    )
    .toBeGreaterThan(0);
  await expect(page.getByTestId("doctor-stale_paths")).toBeVisible();
  await expect(page.getByTestId("doctor-files_with_parse_errors").getByRole("button")).toHaveCount(0);
  await row.getByRole("button", { name: "Fix" }).click();
  await expect(page.getByRole("status")).toContainText(/malformed_uid_path: removed [1-9]/);
  await expect(row.locator(".count")).toHaveText("0");
});

test("a file saved on disk appears in the open graph page without a reload", async ({ page }) => {
  await openGraph(page);
  const uid = "code:file:app/saved_live.py";
  expect(await page.evaluate((id) => window.cosGraphView?.positionOf(id) ?? null, uid)).toBeNull();
  const navigations: string[] = [];
  page.on("framenavigated", (frame) => {
    if (frame === page.mainFrame()) navigations.push(frame.url());
  });
  // the hub's file watcher re-indexes; /api/stream announces the graph's new revision
  writeFileSync(join(repo, "app", "saved_live.py"), "def saved_live():\n    return 1\n");
  await expect
    .poll(() => page.evaluate((id) => window.cosGraphView?.positionOf(id) ?? null, uid), { timeout: 15_000 })
    .not.toBeNull();
  expect(navigations, "the page was not reloaded").toEqual([]);
});
