#!/usr/bin/env bash
# Fails when a crate the hub builds has other features in a test build than in
# a plain build: `cargo test` and `cargo build`/`cargo install` would then
# compile it (and everything above it) twice. Cargo.toml turns on in the
# normal dependencies whatever the dev-dependencies add.
set -euo pipefail
cd "$(dirname "$0")/.."
tree() { cargo tree --locked -e "$1" --prefix none --format '{p} {f}' | sed 's/ (\*)$//' | sort -u; }
normal=$(mktemp)
with_dev=$(mktemp)
trap 'rm -f "$normal" "$with_dev"' EXIT
tree normal,build,features >"$normal"
tree normal,build,dev,features >"$with_dev"
differ=$(comm -23 "$normal" "$with_dev")
if [ -n "$differ" ]; then
  echo "these crates get other features in test builds than in the binary's build:" >&2
  echo "$differ" >&2
  echo "the test build has:" >&2
  while read -r name _; do grep "^$name v" "$with_dev" >&2 || true; done <<<"$differ"
  echo "turn the missing features on in Cargo.toml's [dependencies] (see the comment there)" >&2
  exit 1
fi
echo "features agree: the binary's build reuses the test build"
