// Starts `cos serve` on a fresh temporary repository for the browser tests and
// removes it when Playwright stops the server.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const port = process.argv[2] ?? "9391";
const binary = resolve(process.env.COS_BINARY ?? "../target/debug/cos");
const repo = mkdtempSync(join(tmpdir(), "cos-ui-test-"));
const hub = spawn(binary, ["serve", repo, "--port", port], {
  stdio: "inherit",
  env: { ...process.env, RUST_LOG: "warn", COS_STATE_DIR: join(repo, ".cos") },
});
const stop = () => {
  hub.kill("SIGTERM");
};
hub.on("exit", (code) => {
  rmSync(repo, { recursive: true, force: true });
  process.exit(code ?? 0);
});
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
