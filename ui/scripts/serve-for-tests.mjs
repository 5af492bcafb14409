// Starts `cos serve` on a fresh temporary repository for the browser tests,
// and removes it if the hub stops on its own; when Playwright ends the run it
// kills this launcher, and its global teardown (remove-test-repo.mjs) removes
// the repository instead. The repository holds a small
// code-and-docs fixture for the graph page and two document mounts, at a path
// the tests derive from the port so they can edit files while the hub watches.
import { execFileSync, spawn } from "node:child_process";
import { cpSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const port = process.argv[2] ?? "9391";
const binary = resolve(process.env.COS_BINARY ?? "../target/debug/cos");
// tests/graph.spec.ts finds the repository by the same name
const repo = join(tmpdir(), `cos-ui-test-${port}`);
rmSync(repo, { recursive: true, force: true });
cpSync(resolve("tests/fixtures/graph-repo"), repo, { recursive: true });
// the documents page's mounts: the project's docs, and policies that people only read
mkdirSync(join(repo, ".cos"), { recursive: true });
writeFileSync(
  join(repo, ".cos", "docs.toml"),
  [
    "[[mounts]]",
    'key = "docs"',
    'path = "docs"',
    'name = "Project docs"',
    "",
    "[[mounts]]",
    'key = "policies"',
    'path = "policies"',
    'name = "Policies"',
    'agents = "read_only"',
    'people = "read_only"',
    "",
  ].join("\n"),
);
mkdirSync(join(repo, "policies"), { recursive: true });
writeFileSync(join(repo, "policies", "security.md"), "# Security policy\n\n## Reporting\n\nMail security@example.org.\n");
// a git repository with the fixture committed, for the Changes page
const git = (...args) =>
  execFileSync("git", ["-C", repo, "-c", "user.email=tests@example.org", "-c", "user.name=tests", ...args], {
    stdio: "ignore",
  });
git("init", "-q");
git("add", "-A", "--", ":!.cos");
git("commit", "-q", "-m", "the fixture");
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
