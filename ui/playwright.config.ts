import { defineConfig } from "@playwright/test";

// One hub for the run, on a free-ish loopback port shared with the workers through the environment.
const port = process.env.COS_UI_TEST_PORT ?? String(20000 + Math.floor(Math.random() * 20000));
process.env.COS_UI_TEST_PORT = port;

export default defineConfig({
  testDir: "tests",
  workers: 1,
  fullyParallel: false,
  timeout: 60_000,
  expect: { timeout: 5_000 },
  reporter: [["list"]],
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
