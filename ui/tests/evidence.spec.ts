import { type APIRequestContext, expect, test } from "@playwright/test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";

const unique = (prefix: string) => `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

async function record(request: APIRequestContext, body: Record<string, unknown>) {
  const response = await request.post("/api/supervise/outputs", { data: body });
  expect(response.status()).toBe(201);
  return ((await response.json()) as { data: { status: string; degraded: boolean } }).data;
}

test("a task's details list its agent sessions and show a bundle", async ({ page, request }) => {
  const created = await request.post("/api/board/tasks", { data: { title: unique("Evidence task") } });
  expect(created.status()).toBe(201);
  const task = ((await created.json()) as { data: { id: string } }).data.id;
  const session = unique("session");
  const base = { session_id: session, task_marker: task, persona_id: "lead" };
  await record(request, {
    ...base,
    formula_id: "researcher",
    output_json: JSON.stringify({ findings: ["the cache is cold on start"] }),
    latency_ms: 2300,
  });
  // an ok output that is not a JSON object fails the default schema: degraded
  const refused = await record(request, { ...base, formula_id: "analyst", output_json: "[1, 2]" });
  expect(refused).toMatchObject({ status: "fail", degraded: true });
  await record(request, { ...base, formula_id: "reviewer", output_json: "{}", status: "timeout", latency_ms: 60000 });
  const backtrack = await request.post(`/api/supervise/sessions/${session}/backtracks`, {
    data: { from_formula: "reviewer", to_formula: "researcher", reason: "the findings miss the warm path" },
  });
  expect(backtrack.status()).toBe(201);

  await page.goto("/board");
  await page.getByTestId(`card-${task}`).click();
  const details = page.getByRole("dialog").first();
  const sessions = details.getByTestId("sessions");
  await expect(sessions.getByRole("button", { name: session })).toBeVisible();
  await expect(sessions).toContainText("1 filled · 3 dispatches");
  await expect(sessions).toContainText("2 degraded");
  await sessions.getByRole("button", { name: session }).click();
  const bundle = sessions.getByTestId("bundle");
  await expect(bundle).toContainText("1 of 5 slots filled");
  await expect(bundle.getByTestId("slot-researcher")).toContainText("filled");
  await expect(bundle.getByTestId("slot-analyst")).toContainText("degraded");
  await expect(bundle.getByTestId("slot-tester")).toContainText("empty");
  await expect(bundle.getByTestId("degraded")).toContainText("analyst, reviewer");
  await bundle.getByTestId("slot-researcher").getByText("output of researcher").click();
  await expect(bundle.getByTestId("slot-researcher")).toContainText("the cache is cold on start");
  const timeline = bundle.getByTestId("dispatches");
  await expect(timeline.locator("li")).toHaveCount(3);
  await expect(timeline.locator("li").nth(1)).toContainText("analyst");
  await expect(timeline.locator("li").nth(1)).toContainText("analyst output");
  await expect(timeline.locator("li").nth(2)).toContainText("timeout");
  await expect(bundle).toContainText("reviewer → researcher: the findings miss the warm path");

  const folder = resolve("test-results/screenshots");
  mkdirSync(folder, { recursive: true });
  await details.screenshot({ path: resolve(folder, "evidence-bundle.png") });
});

test("a task without sessions says so", async ({ page, request }) => {
  const created = await request.post("/api/board/tasks", { data: { title: unique("Quiet task") } });
  const task = ((await created.json()) as { data: { id: string } }).data.id;
  await page.goto("/board");
  await page.getByTestId(`card-${task}`).click();
  await expect(page.getByRole("dialog").first().getByTestId("sessions")).toContainText(
    "No agent has recorded evidence for this task.",
  );
});
