// Playwright's global teardown: removes the repository the browser tests ran
// on. Playwright ends its web server by killing it, so the launcher's own
// cleanup (serve-for-tests.mjs) does not run, and each run left its
// repository behind in the temporary folder.
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function removeTestRepo() {
  const port = process.env.COS_UI_TEST_PORT;
  if (port) rmSync(join(tmpdir(), `cos-ui-test-${port}`), { recursive: true, force: true });
}
