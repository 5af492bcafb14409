// Fails when src/api/schema.ts differs from what openapi-typescript generates
// from the committed ../openapi/openapi.json. Fix with `npm run gen-api`.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const folder = mkdtempSync(join(tmpdir(), "cos-api-"));
const fresh = join(folder, "schema.ts");
let generated;
try {
  execFileSync("npx", ["openapi-typescript", "../openapi/openapi.json", "-o", fresh], { stdio: "ignore" });
  generated = readFileSync(fresh, "utf8");
} finally {
  rmSync(folder, { recursive: true, force: true });
}
const committed = readFileSync("src/api/schema.ts", "utf8");
if (generated !== committed) {
  console.error("ui/src/api/schema.ts is stale: run `npm run gen-api` in ui/ and commit it");
  process.exit(1);
}
console.log("ui/src/api/schema.ts matches openapi/openapi.json");
