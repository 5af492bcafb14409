import { expect, test } from "@playwright/test";
import { readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The hub serves a git repository of tests/fixtures/graph-repo with the
// fixture committed (scripts/serve-for-tests.mjs), at a path derived from its port.
const repo = join(tmpdir(), `cos-ui-test-${process.env.COS_UI_TEST_PORT}`);

test("the Changes page lists a changed definition with its dependents and follows a save", async ({ page }) => {
  const db = join(repo, "app", "db.py");
  const before = readFileSync(db, "utf8");
  try {
    writeFileSync(db, before.replace("return 1", "return 2"));
    await page.goto("/changes");
    await expect(page.getByRole("heading", { name: "Changes", exact: true })).toBeVisible();
    await expect(page.getByTestId("changes-summary")).toContainText("the working tree against HEAD");
    const connect = page.getByTestId("changed-symbol").filter({ hasText: "connect" }).first();
    await expect(connect).toContainText("modified");
    // what calls it, each opening the graph at its node
    await expect(connect.getByRole("link", { name: "reconnect" })).toHaveAttribute("href", /\/graph\?node=/);

    // a save: a new definition appears without a reload
    writeFileSync(db, `${before.replace("return 1", "return 2")}\n\ndef disconnect():\n    return 0\n`);
    const added = page.getByTestId("changed-symbol").filter({ hasText: "disconnect" });
    await expect(added).toContainText("added", { timeout: 15_000 });
    await connect.getByRole("link", { name: "connect", exact: true }).click();
    await expect(page).toHaveURL(/\/graph\?node=code%3Afunction%3Aapp%2Fdb\.py%3A%3Aconnect/);
  } finally {
    writeFileSync(db, before);
  }
});
