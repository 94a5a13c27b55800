#!/usr/bin/env bash
# The modern era (2026-07-28) measured beside the legacy one and beside the kit's rmcp peer, on
# the kit's layers of 100 and 10,000 objects, in one session (release builds):
#   1. POST /mcp tools/call majordomus_get at N connections (wrk): a legacy session, modern
#      stateless requests (headers and _meta as a conforming client sends them), and rmcp's
#      Streamable HTTP server answering the same modern request for layer_get;
#   2. scripts/bench/modern.py over stdio: resources/list at 10,000 objects (one page, a whole
#      walk, rmcp's one answer) and pipelined tools/call on both eras at 100 and 10,000 objects.
# tools/list against the kit's floor program is scripts/bench/payload-floor.sh.
#   scripts/bench/modern.sh [seconds] [connections]    (default 10 64)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=${MAJORDOMUS_PEERS_KIT:-$root/../shared/bench/peers}
work=${MAJORDOMUS_BENCH_DIR:-/tmp/majordomus-bench}
secs=${1:-10}
conns=${2:-64}
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 2; }
mkdir -p "$work"
if [ ! -x "$work/peers/rmcp/target/release/peer-rmcp" ]; then
  rm -rf "$work/peers" && cp -r "$kit" "$work/peers"
  (cd "$work/peers/rmcp" && cargo build --release --locked --quiet)
fi
rmcp="$work/peers/rmcp/target/release/peer-rmcp"
(cd "$root" && cargo build --release --quiet)
bin="$root/target/release/majordomus"
for n in 100 10000; do
  layer="$work/layer-$n"
  [ -d "$layer" ] || python3 "$work/peers/gen_layer.py" "$n" "$layer" >/dev/null
  repo="$work/repo-$n"
  if [ ! -d "$repo/.ai" ]; then
    rm -rf "$repo" && mkdir -p "$repo" && git -C "$repo" init -q
    "$bin" init --repo "$repo" >/dev/null
    mkdir -p "$repo/.ai/repo/knowledge/curated" && cp "$layer"/*.md "$repo/.ai/repo/knowledge/curated/"
    git -C "$repo" add -A && git -C "$repo" -c user.email=b@x -c user.name=b commit -qm layer
  fi
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

declare -A rps p99
for case in legacy modern rmcp; do
  p=$port; [ "$case" = rmcp ] && p=$rport
  echo "--- $case: POST /mcp tools/call (get), ${secs}s, $conns connections"
  wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$tmp/$case.lua" "http://127.0.0.1:$p/mcp" | tee "$tmp/$case.out" | sed -n '1,12p'
  rps[$case]=$(awk '/^Requests\/sec/ {print $2}' "$tmp/$case.out")
  p99[$case]=$(awk '$1 == "99%" {print $2}' "$tmp/$case.out")
done
ratio() { python3 -c "print(f'{float(\"$1\") / float(\"$2\"):.2f}')"; }
echo "summary: modern ${rps[modern]} req/s (p99 ${p99[modern]}), legacy session ${rps[legacy]} req/s (p99 ${p99[legacy]}), rmcp modern ${rps[rmcp]} req/s (p99 ${p99[rmcp]})"
echo "         modern/legacy = $(ratio "${rps[modern]}" "${rps[legacy]}")x (target >= 1.0), modern/rmcp = $(ratio "${rps[modern]}" "${rps[rmcp]}")x (target >= 2)"
rm -rf "$tmp"

echo "--- over stdio"
python3 "$root/scripts/bench/modern.py" "$bin" "$work/repo-100" "$work/repo-10000" "$rmcp" "$layer"
