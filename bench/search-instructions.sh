#!/usr/bin/env bash
# Instructions per query of cos_search in process, counted by callgrind: a
# figure the shared machine's noise cannot move, so two builds can be compared
# one change at a time (timings here swing by 20 % from minute to minute).
#
# Usage: bench/search-instructions.sh REPO STATE QUERIES.json [OUT]
#   REPO, STATE   an indexed repository and its state dir (as bench-search.py
#                 leaves them, or `cos --repo R --state-dir S index`)
#   QUERIES.json  {"class": ["query", ...], ...} as benches/search_latency.rs takes
#   OUT           where callgrind writes its profile (callgrind_annotate reads it)
# Every query is asked once to warm what a process keeps, then once more while
# callgrind collects; prints the instructions in all and per query.
# Needs valgrind (apt-get install -y valgrind).
set -euo pipefail
repo=$1 state=$2 queries=$3 out=${4:-$(mktemp -d)/callgrind.out}
cd "$(dirname "$0")/.."
bench=$(cargo bench --bench search_latency --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("reason") == "compiler-artifact" and m.get("target", {}).get("name") == "search_latency" and m.get("executable")][-1])')
SEARCH_BENCH_ONE_ROUND=1 valgrind --tool=callgrind --collect-atstart=no \
  --toggle-collect='search_latency::one_round*' --callgrind-out-file="$out" \
  "$bench" "$repo" "$state" "$queries" 1 2>"$out.log" >/dev/null
total=$(grep -o 'Collected : [0-9]*' "$out.log" | grep -o '[0-9]*$')
count=$(python3 -c 'import json,sys; print(sum(len(v) for v in json.load(open(sys.argv[1])).values()))' "$queries")
echo "instructions: $total for $count queries ($((total / count)) per query); profile: $out"
