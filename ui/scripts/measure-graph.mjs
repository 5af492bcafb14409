// Fluidity of the graph page with a large spine open, in headless Chromium.
// Here WebGL runs on the CPU (SwiftShader: these machines have no GPU), so frame
// times are the browser's software drawing; the script also reports how much of
// each frame is the page's own JavaScript (CPU profile of the main thread).
// Usage (from ui/): node scripts/measure-graph.mjs <repository> [nodes=10000]
// Needs ../target/dist/cos. Indexes <repository> into a temporary state
// folder, loads /graph, measures frame durations while the camera zooms and
// pans for 3 s (median, 95th percentile, frames per second), then opens
// folders with "Open all below" (as a person would) until at least [nodes]
// nodes are shown, reporting each click's time to the redrawn graph, and
// measures the frames again at that size. Bounded: 400 clicks or 10 minutes.
import { chromium } from "@playwright/test";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const repo = resolve(process.argv[2] ?? "..");
const target = Number(process.argv[3] ?? 10000);
const binary = resolve(process.env.COS_BINARY ?? "../target/dist/cos");
const state = mkdtempSync(join(tmpdir(), "cos-measure-graph-"));
const env = { ...process.env, RUST_LOG: "warn", COS_STATE_DIR: state };
execFileSync(binary, ["index", repo], { env, stdio: "ignore" });
const port = String(30000 + Math.floor(Math.random() * 20000));
const hub = spawn(binary, ["serve", repo, "--port", port], { stdio: "ignore", env });
await new Promise((done) => setTimeout(done, 1000));

const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
};
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-background-networking"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
  await page.goto(`http://127.0.0.1:${port}/graph`);
  const shown = async () => Number(await page.getByTestId("graph-canvas").getAttribute("data-nodes"));
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=graph-canvas]")?.getAttribute("data-nodes")) > 0);
  // frame durations while the camera moves, and how much of them is this page's
  // script (a CPU profile of the main thread); the rest is the browser drawing
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  const sweep = async () => {
    await cdp.send("Profiler.start");
    const frames = await page.evaluate(() => window.cosGraphView?.sweep(3000) ?? []);
    const { profile } = await cdp.send("Profiler.stop");
    const native = new Set(
      profile.nodes.filter((n) => ["(program)", "(idle)", "(garbage collector)"].includes(n.callFrame.functionName)).map((n) => n.id),
    );
    const scriptMs = profile.samples.reduce((sum, id, i) => sum + (native.has(id) ? 0 : (profile.timeDeltas[i] ?? 0)), 0) / 1000;
    const median = percentile(frames, 50);
    return (
      `${frames.length} frames, median ${median.toFixed(1)} ms (${(1000 / median).toFixed(0)} fps), p95 ${percentile(frames, 95).toFixed(1)} ms; ` +
      `page script ${(scriptMs / Math.max(frames.length, 1)).toFixed(1)} ms a frame`
    );
  };
  let count = await shown();
  console.log(`zoom and pan for 3 s with ${count.toLocaleString()} nodes: ${await sweep()}`);
  // open folders the way a person does: select one, then "Open all below"
  const deadline = Date.now() + 10 * 60_000;
  const opens = [];
  for (let n = 0; count < target && n < 400 && Date.now() < deadline; n += 1) {
    const next = await page.evaluate(() => window.cosGraphView?.closed()[0] ?? null);
    if (!next) break;
    await page.evaluate((uid) => window.cosGraphView?.select(uid), next);
    const button = page.getByTestId("node-panel").getByRole("button", { name: "Open all below" });
    await button.waitFor({ timeout: 30_000 });
    const started = Date.now();
    await button.click();
    await page
      .waitForFunction(
        (before) => Number(document.querySelector("[data-testid=graph-canvas]")?.getAttribute("data-nodes")) > before,
        count,
        { timeout: 30_000 },
      )
      .catch(() => {});
    opens.push(Date.now() - started);
    count = await shown();
  }
  console.log(`${count.toLocaleString()} nodes shown after ${opens.length} "Open all below" clicks`);
  console.log(`click to graph redrawn: median ${percentile(opens, 50)} ms, slowest ${Math.max(...opens)} ms`);
  console.log(`zoom and pan for 3 s with ${count.toLocaleString()} nodes: ${await sweep()}`);
} finally {
  await browser.close();
  hub.kill("SIGTERM");
  rmSync(state, { recursive: true, force: true });
}
