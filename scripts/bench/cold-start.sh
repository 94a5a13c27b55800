#!/usr/bin/env bash
# Cold start, measured in one session: spawn to the `initialize` answer of
# `majordomus mcp` under `auto` discovery in a git repository, beside the bench kit's rmcp
# server on the same layer, at 100 and 10,000 `knowledge` objects, taking turns
# (cold-interleaved.py) so both see the same drift; then `majordomus objects list` cold at 100
# objects; then each command's CPU time (perf stat, when there is perf), which moves far less
# with other load than wall-clock time does. Prints medians and the ratios.
#   scripts/bench/cold-start.sh [runs-100] [runs-10000]            (default: 200 30)
#   BASELINE=/path/to/older/majordomus scripts/bench/cold-start.sh  also measures that binary
#                                                                   in the same turns (before/after)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=${MAJORDOMUS_PEERS_KIT:-$root/../shared/bench/peers}
work=${MAJORDOMUS_BENCH_DIR:-/tmp/majordomus-bench}
. "$(dirname "$0")/kit.sh"
runs_small=${1:-200}
runs_large=${2:-30}
mkdir -p "$work"
kit_peers
(cd "$root" && cargo build --release --quiet)
# MAJORDOMUS_BIN measures that binary instead of this checkout's release build.
bin=${MAJORDOMUS_BIN:-$root/target/release/majordomus}
rmcp="$work/peers/rmcp/target/release/peer-rmcp"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"cold","version":"1"}}}'
median() { sed -n 's/^ *\([0-9.]*\) ms median.*/\1/p' | sed -n "${1}p"; }
cpu_median() { sed -n 's/.*\[CPU \([0-9.]*\) ms median\]$/\1/p' | sed -n "${1}p"; }
for n in 100 10000; do
  kit_repo "$n"
  objects=$(cd "$repo" && "$bin" objects list --limit 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
  runs=$runs_small; [ "$n" = 10000 ] && runs=$runs_large
  commands=("$bin mcp" "$rmcp $layer")
  [ -n "${BASELINE:-}" ] && commands+=("$BASELINE mcp")
  echo "== $n files ($objects objects served), $runs turns, cold start to the initialize answer"
  result=$(cd "$repo" && python3 "$root/scripts/bench/cold-interleaved.py" "$runs" "${commands[@]}")
  echo "$result"
  ours=$(echo "$result" | median 1); theirs=$(echo "$result" | median 2)
  python3 -c "print(f'   ratio majordomus/rmcp: {$ours/$theirs:.2f}x')"
  if [ -n "${BASELINE:-}" ]; then
    before=$(echo "$result" | median 3)
    python3 -c "print(f'   ratio majordomus/baseline: {$ours/$before:.2f}x')"
    ours_cpu=$(echo "$result" | cpu_median 1); before_cpu=$(echo "$result" | cpu_median 3)
    python3 -c "print(f'   ratio majordomus/baseline, CPU in the same turns: {$ours_cpu/$before_cpu:.3f}x')"
  fi
  if command -v perf >/dev/null; then
    for c in "${commands[@]}"; do
      cpu=$(cd "$repo" && perf stat -x, -r 10 -e task-clock sh -c "echo '$init' | $c >/dev/null" 2>&1 | cut -d, -f1 | tail -1)
      printf '   CPU %8.2f ms per start  %s\n' "$cpu" "$c"
    done
  fi
  if [ "$n" = 100 ]; then
    echo "== objects list, cold, $n files"
    list=("$bin objects list")
    [ -n "${BASELINE:-}" ] && list+=("$BASELINE objects list")
    (cd "$repo" && python3 - "$runs" "${list[@]}" <<'PY'
import shlex, statistics, subprocess, sys, time
runs, commands = int(sys.argv[1]), sys.argv[2:]
times = {c: [] for c in commands}
for _ in range(runs):
    for c in commands:
        start = time.perf_counter_ns()
        subprocess.run(shlex.split(c), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times[c].append((time.perf_counter_ns() - start) / 1e6)
for c, s in times.items():
    print(f"{statistics.median(s):8.2f} ms median  (min {min(s):.2f}, max {max(s):.2f}, {runs} runs)  {c}")
PY
    )
  fi
done
