#!/usr/bin/env bash
# The modern era (2026-07-28) measured beside the legacy one and beside the kit's rmcp peer, on
# the kit's layers of 100 and 10,000 objects, in one session (release builds):
#   1. POST /mcp tools/call majordomus_get at N connections (wrk): a legacy session, modern
#      stateless requests (headers and _meta as a conforming client sends them), and rmcp's
#      Streamable HTTP server answering the same modern request for layer_get;
#   2. scripts/bench/modern.py over stdio: resources/list at 10,000 objects (one page, a whole
#      walk, rmcp's one answer, and the kit's floor program serving majordomus's exact walk and
#      rmcp's exact answer, so what the bytes themselves cost is measured beside each) and
#      pipelined tools/call on both eras at 100 and 10,000 objects.
# The HTTP cases run in alternating rounds (legacy, modern, rmcp, again), medians reported, after
# the servers have settled (a fresh majordomus prepares its search postings in the background for
# a few seconds); beside requests/s each prints the server's CPU time per request, which a loaded
# machine disturbs less than the wall clock.
# tools/list against the kit's floor program is scripts/bench/payload-floor.sh.
#   scripts/bench/modern.sh [seconds] [connections] [rounds]    (default 10 64 3; seconds per round)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=${MAJORDOMUS_PEERS_KIT:-$root/../shared/bench/peers}
work=${MAJORDOMUS_BENCH_DIR:-/tmp/majordomus-bench}
. "$(dirname "$0")/kit.sh"
secs=${1:-10}
conns=${2:-64}
rounds=${3:-3}
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 2; }
mkdir -p "$work"
kit_peers rmcp
rmcp="$work/peers/rmcp/target/release/peer-rmcp"
# The kit's floor program made to answer each `resources/list` with the next of a list of canned
# results (FLOOR_PAGES: a file naming one result file a line, answered in turn): modern.py has it
# serve majordomus's exact walk, page by page, and rmcp's exact one answer, so the walk's figure
# is read beside the cost of moving and decoding the same bytes with no server work at all.
floor="$work/floor-walk/target/release/peer-floor"
if [ ! -x "$floor" ]; then
  rm -rf "$work/floor-walk" && cp -r "$work/peers/floor" "$work/floor-walk" && rm -rf "$work/floor-walk/target"
  python3 - "$work/floor-walk/src/main.rs" <<'EOF'
import sys
path = sys.argv[1]
src = open(path).read()
resources = '    let resources = br#"{"resources":[]}"#.to_vec();'
answer = '            b"\\"resources/list\\"" => Some(&resources),'
assert resources in src and answer in src, "the kit's floor changed; update modern.sh"
src = src.replace(resources, resources + """
    let pages: Vec<Vec<u8>> = std::env::var("FLOOR_PAGES")
        .ok()
        .and_then(|list| std::fs::read_to_string(list).ok())
        .map(|list| list.lines().map(|p| std::fs::read(p).expect("a page file")).collect())
        .unwrap_or_default();
    let mut turn = 0usize;""")
src = src.replace(answer, """            b"\\"resources/list\\"" => Some(if pages.is_empty() {
                &resources[..]
            } else {
                turn += 1;
                &pages[(turn - 1) % pages.len()][..]
            }),""")
open(path, "w").write(src)
EOF
  (cd "$work/floor-walk" && cargo build --release --quiet)
fi
(cd "$root" && cargo build --release --quiet)
bin="$root/target/release/majordomus"
for n in 100 10000; do
  kit_repo "$n"
done
repo="$work/repo-10000"
layer="$work/layer-10000"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

port=18751
"$bin" serve --port "$port" --repo "$repo" 2>/dev/null &
pids+=($!)
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do sleep 0.01; done
rport=18752
"$rmcp" "$layer" --http "$rport" >/dev/null 2>&1 &
pids+=($!)
until curl -s -o /dev/null "http://127.0.0.1:$rport/mcp" -X POST -H 'Content-Type: application/json' -d '{}'; do sleep 0.05; done

uri='majordomus://knowledge/doc-05000'
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
session=$(curl -si -X POST "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
  | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}')
lua() { # file headers... body
  local file=$1 body=$2
  shift 2
  {
    echo 'wrk.method = "POST"'
    echo 'wrk.headers["Content-Type"] = "application/json"'
    echo 'wrk.headers["Accept"] = "application/json, text/event-stream"'
    for h in "$@"; do echo "wrk.headers[\"${h%%=*}\"] = \"${h#*=}\""; done
    echo "wrk.body = '$body'"
  } >"$file"
}
tmp=$(mktemp -d)
lua "$tmp/legacy.lua" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"majordomus_get\",\"arguments\":{\"uri\":\"$uri\"}}}" \
  "Mcp-Session-Id=$session" "MCP-Protocol-Version=2025-11-25"
lua "$tmp/modern.lua" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"majordomus_get\",\"arguments\":{\"uri\":\"$uri\"},$meta}}" \
  "MCP-Protocol-Version=2026-07-28" "Mcp-Method=tools/call" "Mcp-Name=majordomus_get"
lua "$tmp/rmcp.lua" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"layer_get\",\"arguments\":{\"uri\":\"layer://doc/doc-05000\"},$meta}}" \
  "MCP-Protocol-Version=2026-07-28" "Mcp-Method=tools/call" "Mcp-Name=layer_get"
# A request that is refused would make a fast, meaningless figure: each must answer its result.
for case in legacy modern rmcp; do
  p=$port; [ "$case" = rmcp ] && p=$rport
  body=$(sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$tmp/$case.lua")
  headers=()
  while IFS= read -r h; do headers+=(-H "$h"); done < <(sed -n 's/^wrk.headers\["\(.*\)"\] = "\(.*\)"$/\1: \2/p' "$tmp/$case.lua")
  answer=$(curl -s -X POST "http://127.0.0.1:$p/mcp" "${headers[@]}" -d "$body")
  echo "$answer" | grep -q '"isError":false' || { echo "$case: not a result: ${answer:0:300}" >&2; exit 1; }
done

sleep "${MAJORDOMUS_BENCH_SETTLE:-6}"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
results="$tmp/results"
for round in $(seq "$rounds"); do
  for case in legacy modern rmcp; do
    p=$port; pid=${pids[0]}
    [ "$case" = rmcp ] && { p=$rport; pid=${pids[1]}; }
    before=$(cpu_ticks "$pid")
    wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$tmp/$case.lua" "http://127.0.0.1:$p/mcp" >"$tmp/$case.out"
    after=$(cpu_ticks "$pid")
    n=$(awk '/requests in/ {print $1}' "$tmp/$case.out")
    r=$(awk '/^Requests\/sec/ {print $2}' "$tmp/$case.out")
    p99=$(awk '$1 == "99%" {print $2}' "$tmp/$case.out")
    errors=$(awk '/Non-2xx|Socket errors/' "$tmp/$case.out")
    [ -z "$errors" ] || { echo "$case: $errors" >&2; exit 1; }
    cpu=$(python3 -c "print(f'{($after - $before) * 1e6 / $(getconf CLK_TCK) / $n:.1f}')")
    echo "round $round $case: $r req/s, p99 $p99, server CPU $cpu us/request"
    echo "$case $r $p99 $cpu" >>"$results"
  done
done
python3 - "$results" "$secs" "$conns" "$rounds" <<'EOF'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def ms(text):
    for unit, scale in (("us", 1e-3), ("ms", 1.0), ("s", 1e3)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * scale
    raise SystemExit(f"a latency wrk did not print as expected: {text}")
med = {}
for case in ("legacy", "modern", "rmcp"):
    mine = [r for r in rows if r[0] == case]
    med[case] = tuple(statistics.median(f(r[i]) for r in mine) for i, f in ((1, float), (2, ms), (3, float)))
secs, conns, rounds = sys.argv[2:]
print(f"summary, POST /mcp tools/call get at {conns} connections, medians of {rounds} alternating rounds of {secs} s:")
for case, name in (("legacy", "legacy session"), ("modern", "modern stateless"), ("rmcp", "rmcp modern")):
    rps, p99, cpu = med[case]
    print(f"  {name:<17} {rps:>9.0f} req/s  p99 {p99:6.2f} ms  server CPU {cpu:6.1f} us/request")
(lr, _, lc), (mr, mp, mc), (rr, _, rc) = med["legacy"], med["modern"], med["rmcp"]
print(f"  modern/legacy = {mr / lr:.2f}x req/s (target >= 1.0), {lc / mc:.2f}x by CPU a request; modern p99 {mp:.2f} ms (target <= 10)")
print(f"  modern/rmcp   = {mr / rr:.2f}x req/s (target >= 2), {rc / mc:.2f}x by CPU a request")
EOF
rm -rf "$tmp"

echo "--- over stdio"
python3 "$root/scripts/bench/modern.py" "$bin" "$work/repo-100" "$work/repo-10000" "$rmcp" "$layer" --floor "$floor"
