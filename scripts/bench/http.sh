#!/usr/bin/env bash
# HTTP under load (wrk, loopback): GET /api/v1/object for a layer object, 30 s at 64
# connections; then POST /mcp tools/call majordomus_get in one session, against the rmcp peer's
# Streamable HTTP server on the same layer. Also startup to the first answered request.
#   scripts/bench/http.sh [seconds] [connections]     (default 30 64; needs scripts/bench/peers.sh run once)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${MAJORDOMUS_BENCH_DIR:-/tmp/majordomus-bench}
secs=${1:-30}
conns=${2:-64}
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 2; }
(cd "$root" && cargo build --release --quiet)
bin="$root/target/release/majordomus"
repo="$work/repo-10000"
layer="$work/layer-10000"
[ -d "$repo/.ai" ] || { echo "run scripts/bench/peers.sh first (it makes $repo)" >&2; exit 2; }

port=18741
log=$(mktemp)
start=$(date +%s%N)
"$bin" serve --port "$port" --repo "$repo" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null || true; [ -n "${rpid:-}" ] && kill $rpid 2>/dev/null || true' EXIT
until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do sleep 0.002; done
echo "startup to first answered request: $(( ($(date +%s%N) - start) / 1000000 )) ms (10,000 objects)"

uri='majordomus://knowledge/doc-05000'
rss_before=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
echo "--- GET /api/v1/object?uri=$uri, ${secs}s, $conns connections"
samples=$(mktemp)
( for _ in $(seq 1 "$secs"); do sleep 1; awk '/VmRSS/ {print $2}' /proc/$pid/status; done >"$samples" ) &
sampler=$!
wrk -t2 -c"$conns" -d"${secs}s" --latency "http://127.0.0.1:$port/api/v1/object?uri=$uri" | sed -n '1,20p'
wait "$sampler"
rss_after=$(awk '/VmRSS/ {print $2}' /proc/$pid/status)
echo "resident memory (kB): ${rss_before} before; each second of the run: $(tr '\n' ' ' <"$samples"); ${rss_after} after"
rm -f "$samples"

session=$(curl -si -X POST "http://127.0.0.1:$port/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
  | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}')
lua=$(mktemp --suffix=.lua)
cat > "$lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = "$session"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_get","arguments":{"uri":"$uri"}}}'
LUA
echo "--- majordomus POST /mcp tools/call majordomus_get, ${secs}s, $conns connections"
wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$lua" "http://127.0.0.1:$port/mcp" | sed -n '1,20p'

rport=18742
"$work/peers/rmcp/target/release/peer-rmcp" "$layer" --http "$rport" >/dev/null 2>&1 &
rpid=$!
until curl -s -o /dev/null "http://127.0.0.1:$rport/mcp" -X POST -H 'Content-Type: application/json' -d '{}'; do sleep 0.05; done
rsession=$(curl -si -X POST "http://127.0.0.1:$rport/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
  | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}')
curl -s -X POST "http://127.0.0.1:$rport/mcp" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' -H "Mcp-Session-Id: $rsession" \
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
cat > "$lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = "$rsession"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"layer_get","arguments":{"uri":"layer://doc/doc-05000"}}}'
LUA
echo "--- rmcp POST /mcp tools/call layer_get, ${secs}s, $conns connections"
wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$lua" "http://127.0.0.1:$rport/mcp" | sed -n '1,20p'
rm -f "$lua" "$log"
