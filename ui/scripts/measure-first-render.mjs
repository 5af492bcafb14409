// First-render time of a 5,000-task board in Chromium, median of several loads.
// Usage (from ui/): node scripts/measure-first-render.mjs [loads=7]
// Builds nothing itself: needs ../target/dist/cos (cargo build --profile dist).
// The app marks `board-rendered` once the first board is on screen; the figure
// is that mark's time since navigation start (Performance API).
import { chromium } from "@playwright/test";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const loads = Number(process.argv[2] ?? 7);
const binary = resolve("../target/dist/cos");
const repo = mkdtempSync(join(tmpdir(), "cos-first-render-"));
const tasks = join(repo, "tasks");
mkdirSync(tasks);
const statuses = [...Array(900).fill("icebox"), ...Array(100).fill("blocked"), ...Array(4000).fill("archive")];
statuses.forEach((status, index) => {
  const n = index + 1;
  writeFileSync(
    join(tasks, `TASK-${String(n).padStart(4, "0")}-t.md`),
    `---\nid: TASK-${n}\ntitle: "Generated task ${n} for the first-render measurement"\nstatus: ${status}\nkind: feature\npriority: P${n % 4}\nswimlane: backend\nlabels: [generated]\ncompleted: ${status === "archive" ? `"2026-0${1 + (n % 9)}-1${n % 10}"` : "null"}\n---\nBody ${n}\n`,
  );
});
execFileSync(binary, ["board", "import", "--dir", tasks], { cwd: repo, stdio: "ignore" });
const port = String(30000 + Math.floor(Math.random() * 20000));
const hub = spawn(binary, ["serve", repo, "--port", port], { stdio: "ignore", env: { ...process.env, RUST_LOG: "warn" } });
await new Promise((done) => setTimeout(done, 800));

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const times = [];
try {
  for (let load = 0; load < loads; load += 1) {
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/board`);
    await page.waitForFunction(() => performance.getEntriesByName("board-rendered").length > 0, null, { timeout: 30_000 });
    const cards = await page.locator("[data-card-id]").count();
    times.push(await page.evaluate(() => performance.getEntriesByName("board-rendered")[0].startTime));
    console.log(`load ${load + 1}: ${times.at(-1).toFixed(0)} ms (${cards} cards in the DOM)`);
    await page.close();
  }
} finally {
  await browser.close();
  hub.kill("SIGTERM");
  rmSync(repo, { recursive: true, force: true });
}
times.sort((a, b) => a - b);
console.log(`5,000-task board (1,000 active cards): first render median ${times[Math.floor(times.length / 2)].toFixed(0)} ms over ${loads} loads`);
