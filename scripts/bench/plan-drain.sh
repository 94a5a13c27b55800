#!/usr/bin/env bash
# The 20-agent drain of the plan, ten runs in a row: 2 `serve` processes with 8 HTTP sessions
# each and 4 stdio `mcp` processes take 200 ready issues by ready-then-claim. Each run asserts
# every issue was granted exactly once; this prints each run's wall time and the load average.
# Usage: scripts/bench/plan-drain.sh [runs]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-10}
cd "$root"
cargo test --quiet --test integration --no-run
bin=$(cargo test --quiet --test integration --no-run --message-format=json 2>/dev/null \
  | sed -n 's/.*"executable":"\([^"]*integration-[^"]*\)".*/\1/p' | tail -1)
passed=0
for ((i = 1; i <= runs; i++)); do
  out=$("$bin" --exact plan_queue::twenty_agents_in_six_processes_claim_every_issue_exactly_once --nocapture 2>&1)
  if grep -q "test result: ok. 1 passed" <<<"$out"; then
    passed=$((passed + 1))
  else
    echo "$out" | tail -20
  fi
  echo "run $i: $(grep -o 'drain of 200 issues.*' <<<"$out")  load $(cut -d' ' -f1-3 /proc/loadavg)"
done
echo "$passed of $runs runs claimed every issue exactly once"
[ "$passed" -eq "$runs" ]
