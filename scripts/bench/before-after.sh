#!/usr/bin/env bash
# Before/after of two majordomus builds, every measurement interleaved (A, B, A, B, …) so both
# see the same machine, printed as after/before ratios (below 1: after is faster or smaller):
# dispatch (a stdio loop of tools/call majordomus_get), index build (a one-shot `objects get`),
# cold start (cold-interleaved.py, startup.py), search (one-shot `objects search`; served
# majordomus_search), HTTP load (wrk on GET /api/v1/object and POST /mcp, as http.sh does) and
# the binaries' sizes, as built and stripped. Layers of 100 and 10,000 objects from the peer kit.
#   scripts/bench/before-after.sh BEFORE AFTER [rounds] [wrk-seconds]
# BEFORE and AFTER are binaries or checkouts (then their target/release/majordomus, built).
# e.g. git worktree add --detach /work/wt/_before 3124275^ &&
#      scripts/bench/before-after.sh /work/wt/_before .
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# The peer kit beside the checkout (or beside the worktrees' directory).
kit=${MAJORDOMUS_PEERS_KIT:-$root/../shared/bench/peers}
[ -d "$kit" ] || kit=$root/../../shared/bench/peers
work=${MAJORDOMUS_AB_DIR:-/tmp/majordomus-before-after}
[ $# -ge 2 ] || { sed -n '2,11p' "$0" >&2; exit 2; }
rounds=${3:-5}
secs=${4:-5}
command -v wrk >/dev/null || { echo "needs wrk (apt-get install wrk)" >&2; exit 2; }

binary_of() {
  if [ -d "$1" ]; then
    (cd "$1" && cargo build --release --quiet) >&2
    echo "$(cd "$1" && pwd)/target/release/majordomus"
  elif [ -x "$1" ]; then
    echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
  else
    echo "not a binary or a checkout: $1" >&2; exit 2
  fi
}
before=$(binary_of "$1")
after=$(binary_of "$2")
# Copies, so a rebuild in either checkout during the run changes nothing measured.
mkdir -p "$work/bin"
cp "$before" "$work/bin/before" && cp "$after" "$work/bin/after"
before=$work/bin/before
after=$work/bin/after

for n in 100 10000; do
  layer="$work/layer-$n"
  [ -d "$layer" ] || python3 "$kit/gen_layer.py" "$n" "$layer" >/dev/null
  repo="$work/repo-$n"
  if [ ! -d "$repo/.ai" ]; then
    rm -rf "$repo" && mkdir -p "$repo" && git -C "$repo" init -q
    # The older binary's layer: the newer one reads what an older one made.
    "$before" init --repo "$repo" >/dev/null
    mkdir -p "$repo/.ai/repo/knowledge/curated" && cp "$layer"/*.md "$repo/.ai/repo/knowledge/curated/"
    git -C "$repo" add -A && git -C "$repo" -c user.email=b@x -c user.name=b commit -qm layer
  fi
done
small="$work/repo-100"
large="$work/repo-10000"
uri='majordomus://knowledge/doc-05000'

echo "before: $before ($("$before" --version))"
echo "after:  $after ($("$after" --version))"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"

echo; echo "== sizes (bytes)"
for name in before after; do
  strip -o "$work/bin/$name.stripped" "$work/bin/$name"
done
python3 - "$work/bin" <<'PY'
import os, sys
d = sys.argv[1]
for suffix, label in (("", "as built"), (".stripped", "stripped")):
    b, a = (os.path.getsize(f"{d}/{n}{suffix}") for n in ("before", "after"))
    print(f"  {label:9} before {b:>10,}  after {a:>10,}  ratio {a / b:.3f}  ({a - b:+,})")
PY

echo; echo "== dispatch: tools/call majordomus_get, one at a time over stdio"
for repo in "$small" "$large"; do
  echo " $(basename "$repo")"
  python3 "$here/ab.py" stdio "$rounds" 400 "$repo" "$before" "$after" majordomus_get "{\"uri\": \"majordomus://knowledge/doc-00050\"}"
done

echo; echo "== index build: one-shot \`objects get\` (start, build the index, answer, exit)"
for repo in "$small" "$large"; do
  echo " $(basename "$repo")"
  python3 "$here/ab.py" oneshot "$((rounds * 4))" "$repo" "$before" "$after" objects get majordomus://knowledge/doc-00050
done

echo; echo "== cold start: spawn to the initialize answer over stdio (cold-interleaved.py)"
for repo in "$small" "$large"; do
  echo " $(basename "$repo")"
  out=$(cd "$repo" && python3 "$here/cold-interleaved.py" "$((rounds * 20))" "$before mcp --repo $repo" "$after mcp --repo $repo")
  echo "$out" | sed 's/^/  /'
  echo "$out" | awk '{m[NR]=$1} END {printf "  ratio after/before %.3f\n", m[2]/m[1]}'
done

echo; echo "== cold start: spawn serve to the first answered GET /healthz (startup.py), 10,000 objects"
if (exec 3<>/dev/tcp/127.0.0.1/18760) 2>/dev/null; then
  echo "  skipped: port 18760 (startup.py's) is in use"
else
  for _ in $(seq 1 "$rounds"); do
    for name in before after; do
      echo "$name $(python3 "$here/startup.py" "$work/bin/$name" "$large" 5)"
    done
  done | python3 -c '
import re, statistics, sys
m = {"before": [], "after": []}
for line in sys.stdin:
    m[line.split()[0]].append(float(re.search(r"median ([0-9.]+) ms", line).group(1)))
for k, v in m.items():
    print(f"  {k:6} median of medians {statistics.median(v):8.1f} ms  ({len(v)} rounds of 5)")
ratio = statistics.median(m["after"]) / statistics.median(m["before"])
print(f"  ratio after/before {ratio:.3f}")'
fi

echo; echo "== search, one-shot: \`objects search \"quasar needle\"\`, 10,000 objects"
python3 "$here/ab.py" oneshot "$((rounds * 4))" "$large" "$before" "$after" objects search "quasar needle"

echo; echo "== search, served: tools/call majordomus_search over stdio, 10,000 objects"
for query in "quasar needle" "storage policy release"; do
  echo " \"$query\""
  python3 "$here/ab.py" stdio "$rounds" 40 "$large" "$before" "$after" majordomus_search "{\"query\": \"$query\"}"
done

echo; echo "== HTTP load (wrk -t2 -c64, ${secs}s turns, $rounds rounds), 10,000 objects"
port_before=18793
port_after=18794
"$before" serve --port "$port_before" --repo "$large" 2>/dev/null &
pid_before=$!
"$after" serve --port "$port_after" --repo "$large" 2>/dev/null &
pid_after=$!
trap 'kill $pid_before $pid_after 2>/dev/null || true; rm -f "${lua:-}"' EXIT
for port in $port_before $port_after; do
  until curl -sf "http://127.0.0.1:$port/healthz" >/dev/null; do sleep 0.01; done
  curl -sf "http://127.0.0.1:$port/api/v1/object?uri=$uri" >/dev/null
done
session_of() {
  curl -si -X POST "http://127.0.0.1:$1/mcp" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
    | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id" {print $2}'
}
lua=$(mktemp --suffix=.lua)
wrk_turns() { # label, then per binary: name url [script]
  for _ in $(seq 1 "$rounds"); do
    for name in before after; do
      port=$port_before; [ "$name" = after ] && port=$port_after
      if [ "$1" = mcp ]; then
        cat > "$lua" <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = "$(session_of "$port")"
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
wrk.body = '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_get","arguments":{"uri":"$uri"}}}'
LUA
        out=$(wrk -t2 -c64 -d"${secs}s" --latency -s "$lua" "http://127.0.0.1:$port/mcp")
      else
        out=$(wrk -t2 -c64 -d"${secs}s" --latency "http://127.0.0.1:$port/api/v1/object?uri=$uri")
      fi
      echo "$out" | grep -q 'Non-2xx' && { echo "  $name answered non-2xx:"; echo "$out"; }
      echo "$name $(echo "$out" | awk '/Requests\/sec/ {print $2}') $(echo "$out" | awk '$1=="99%" {print $2}')"
    done
  done | python3 -c '
import statistics, sys
def ms(t):
    for unit, f in (("us", 1e-3), ("ms", 1), ("s", 1e3)):
        if t.endswith(unit) and (unit != "s" or not t.endswith(("us", "ms"))):
            return float(t[: -len(unit)]) * f
rps = {"before": [], "after": []}; p99 = {"before": [], "after": []}
for line in sys.stdin:
    name, r, p = line.split()
    rps[name].append(float(r)); p99[name].append(ms(p))
for k in rps:
    print(f"  {k:6} median {statistics.median(rps[k]):10.0f} req/s  p99 {statistics.median(p99[k]):8.2f} ms  ({len(rps[k])} turns)")
r = statistics.median(rps["after"]) / statistics.median(rps["before"])
p = statistics.median(p99["after"]) / statistics.median(p99["before"])
print(f"  ratio after/before: req/s {r:.3f}, p99 {p:.3f}")'
}
echo " GET /api/v1/object?uri=$uri"
wrk_turns api
echo " POST /mcp tools/call majordomus_get (one session per turn)"
wrk_turns mcp
echo; echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
