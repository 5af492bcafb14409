import { defineConfig } from "@playwright/test";
import { readFileSync } from "node:fs";

// A loopback port below the kernel's ephemeral range: no client socket and no
// port-0 listener (the API fuzzing runs beside these tests) can be holding it.
function quietPort(): string {
  const floor = 20000;
  let ephemeralFrom = 32768;
  try {
    const range = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8");
    ephemeralFrom = Number(range.trim().split(/\s+/)[0]) || ephemeralFrom;
  } catch {
    // not Linux: the usual start of the range
  }
  const span = Math.max(ephemeralFrom - floor, 1000);
  return String(floor + Math.floor(Math.random() * span));
}

// One hub for the run, its port shared with the workers through the environment.
const port = process.env.COS_UI_TEST_PORT ?? quietPort();
process.env.COS_UI_TEST_PORT = port;

export default defineConfig({
  testDir: "tests",
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 5_000 },
  reporter: [["list"]],
  globalTeardown: "./scripts/remove-test-repo.mjs",
  outputDir: "test-results/artifacts",
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    headless: true,
    viewport: { width: 1600, height: 900 },
    screenshot: "only-on-failure",
    launchOptions: {
      // Debian's chromium: no browser download is possible (or needed) here.
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        // WebGL (the graph view) on the CPU: there is no GPU on the test machines
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  webServer: {
    command: `node scripts/serve-for-tests.mjs ${port}`,
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: "pipe",
    stderr: "pipe",
  },
});
