// The Documents page with a 1 MB document, in Debian's chromium: how long the
// first render takes and how long a key takes to reach the screen while
// editing it. Real Markdown: the 1,007 coding-os task files concatenated.
//
// Usage (from ui/): node bench/bench-documents-page.mjs <cos binary> [rounds=7] [keys=60]
// Loopback only; starts and stops its own `cos serve` on a temporary repository.
import { chromium } from "@playwright/test";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const binary = resolve(process.argv[2] ?? "../target/dist/cos");
const rounds = Number(process.argv[3] ?? 7);
const keys = Number(process.argv[4] ?? 60);
const TARGET_BYTES = 1024 * 1024;

function bigDocument() {
  const folder = resolve("../tests/fixtures/coding-os-tasks");
  const parts = ["# Every task, one document\n\n"];
  let size = parts[0].length;
  for (const name of readdirSync(folder).sort()) {
    if (!name.endsWith(".md")) continue;
    // each task becomes a section: its headings move one level down
    const text = readFileSync(join(folder, name), "utf8").replace(/^(#{1,5}) /gm, "#$1 ");
    parts.push(`## ${name.replace(/\.md$/, "")}\n\n${text}\n`);
    size += Buffer.byteLength(parts[parts.length - 1]);
    if (size >= TARGET_BYTES) break;
  }
  return parts.join("");
}

const freePort = () =>
  new Promise((done) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
};

async function main() {
  const repo = mkdtempSync(join(tmpdir(), "cos-bench-docs-page-"));
  const content = bigDocument();
  mkdirSync(join(repo, "docs"));
  writeFileSync(join(repo, "docs", "big.md"), content);
  writeFileSync(join(repo, "docs", "small.md"), "# Small\n\nA short one.\n");
  const port = await freePort();
  const hub = spawn(binary, ["serve", repo, "--port", String(port)], {
    stdio: "ignore",
    env: { ...process.env, RUST_LOG: "warn", COS_STATE_DIR: join(repo, ".cos") },
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let tries = 0; ; tries += 1) {
      try {
        if ((await fetch(`${base}/api/health`)).ok) break;
      } catch {
        if (tries > 200) throw new Error("cos serve did not start");
      }
      await new Promise((done) => setTimeout(done, 50));
    }
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox", "--disable-gpu"] });
    const page = await browser.newPage({ viewport: { width: 1600, height: 900 } });
    const headings = page.locator("[data-testid=rendered] h2");
    const lastTitle = content.match(/^## (.+)$/gm).pop().slice(3);

    // from a click in the tree (the app already loaded), in the page's own
    // clock: the first frame after the first section is in the page, then the
    // last section in the page
    const firstScreens = [];
    const renders = [];
    for (let round = 0; round < rounds; round += 1) {
      await page.goto(`${base}/documents/docs/small.md`);
      await page.getByTestId("rendered").getByText("A short one.").waitFor();
      await page.evaluate(() => {
        window.__paint = null;
        document.addEventListener("click", () => {
          const clicked = performance.now();
          const watch = new MutationObserver(() => {
            if (!document.querySelector("[data-testid=rendered] h2")) return;
            watch.disconnect();
            requestAnimationFrame(() => setTimeout(() => (window.__paint = performance.now() - clicked), 0));
          });
          watch.observe(document.body, { childList: true, subtree: true });
        }, { capture: true, once: true });
      });
      const started = Date.now();
      await page.getByTestId("doc-entry").filter({ hasText: "Every task" }).click();
      await headings.filter({ hasText: lastTitle }).waitFor({ state: "attached", timeout: 60_000 });
      renders.push(Date.now() - started);
      firstScreens.push(await page.evaluate(() => window.__paint));
    }

    // typing: each key from keydown to the next frame painted, in the page's own clock
    await page.getByRole("button", { name: "Edit document" }).click();
    const textarea = page.getByTestId("doc-textarea");
    await textarea.waitFor();
    const opened = Date.now();
    await textarea.click();
    await page.keyboard.press("Control+End");
    const openToFocus = Date.now() - opened;
    await page.evaluate(() => {
      const area = document.querySelector("[data-testid=doc-textarea]");
      if (!area) throw new Error("no editor");
      window.__latencies = [];
      area.addEventListener("keydown", () => {
        const down = performance.now();
        requestAnimationFrame(() => setTimeout(() => window.__latencies.push(performance.now() - down), 0));
      }, true);
    });
    let sent = "";
    for (let n = 0; n < keys; n += 1) {
      const key = String.fromCharCode(97 + (n % 26));
      sent += key;
      await page.keyboard.type(key);
      await page.waitForTimeout(30);
    }
    // the preview catches up once typing pauses
    const pauseStarted = Date.now();
    await page.getByTestId("doc-preview").locator("h2").last().waitFor({ state: "attached" });
    await page.waitForTimeout(400);
    const latencies = await page.evaluate(() => window.__latencies);
    const typed = (await page.locator(".cm-content .cm-line").filter({ hasText: sent }).count()) > 0 ? sent : "";
    await browser.close();
    if (!typed.endsWith(sent)) throw new Error("the keys did not reach the editor");

    const bytes = Buffer.byteLength(content);
    console.log(`document: ${(bytes / 1024 / 1024).toFixed(2)} MB, ${content.split("\n").length} lines, ${(content.match(/^#{1,6} /gm) ?? []).length} headings`);
    console.log(`first screen (tree click to the first section painted), ${rounds} rounds: median ${median(firstScreens).toFixed(0)} ms, min ${Math.min(...firstScreens).toFixed(0)}, max ${Math.max(...firstScreens).toFixed(0)}`);
    console.log(`whole document (tree click to the last section in the page), ${rounds} rounds: median ${median(renders)} ms, min ${Math.min(...renders)}, max ${Math.max(...renders)}`);
    console.log(`typing latency (keydown to next frame), ${latencies.length} keys: median ${median(latencies).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms`);
    console.log(`editor focus and jump to the end: ${openToFocus} ms; pause to preview settled: ${Date.now() - pauseStarted} ms`);
  } finally {
    hub.kill("SIGTERM");
    await new Promise((done) => hub.on("exit", done));
    rmSync(repo, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
