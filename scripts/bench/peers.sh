#!/usr/bin/env bash
# Side by side with the peer kit (../shared/bench/peers): majordomus and the official SDK servers
# on the same layers of 100 and 10,000 `knowledge` objects, measured by the kit's stdio driver in
# one session. Prints the driver's tables and a summary with ratios.
#   scripts/bench/peers.sh [runs-100] [runs-10000] [peers...]   (default: 10 5 rmcp floor)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=${MAJORDOMUS_PEERS_KIT:-$root/../shared/bench/peers}
work=${MAJORDOMUS_BENCH_DIR:-/tmp/majordomus-bench}
. "$(dirname "$0")/kit.sh"
runs_small=${1:-10}
runs_large=${2:-5}
shift $(( $# > 2 ? 2 : $# )) || true
peers=("$@")
[ ${#peers[@]} -gt 0 ] || peers=(rmcp floor)
mkdir -p "$work"
kit_peers
(cd "$root" && cargo build --release --quiet)
bin="$root/target/release/majordomus"
out="$work/results-$(date +%Y%m%d-%H%M%S).jsonl"
for n in 100 10000; do
  kit_repo "$n"
  runs=$runs_small; [ "$n" = 10000 ] && runs=$runs_large
  # The get tool reads one object per request: 200 layer files spread over the layer, as the
  # driver picks for the peers; the builtin resources (majordomus://repository, ://mcp) are
  # queries, not files, and are left out.
  values=()
  for i in $(python3 -c "n=$n; k=min(200,n); print(' '.join(str(i*n//k) for i in range(k)))"); do
    values+=(--get-value "$(printf 'majordomus://knowledge/doc-%05d' "$i")")
  done
  python3 "$work/peers/bench_stdio.py" --name "majordomus-$n" --runs "$runs" \
    --cmd "$bin mcp --repo $repo" "${values[@]}" \
    --get-tool majordomus_get --get-arg uri \
    --search-tool majordomus_search --search-arg query --list-tool majordomus_list \
    --json-out "$out" --quiet || true
  for peer in "${peers[@]}"; do
    case "$peer" in
      rmcp) cmd="$work/peers/rmcp/target/release/peer-rmcp $layer" ;;
      floor) cmd="$work/peers/floor/target/release/peer-floor $layer" ;;
      python) cmd="$work/peers/python/.venv/bin/python $work/peers/python/server.py $layer" ;;
      node) cmd="node $work/peers/node/server.js $layer" ;;
      *) echo "unknown peer $peer" >&2; exit 2 ;;
    esac
    extra=()
    # The floor answers canned bytes and lists no resources: give it a value to get.
    [ "$peer" = floor ] && extra=(--get-value layer://doc/doc-00000)
    python3 "$work/peers/bench_stdio.py" --name "$peer-$n" --runs "$runs" --cmd "$cmd" \
      "${extra[@]}" --json-out "$out" --quiet || true
  done
done
python3 "$work/peers/summarize.py" "$out"
echo "raw: $out"
