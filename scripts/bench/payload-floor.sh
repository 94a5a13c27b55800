#!/usr/bin/env bash
# The transport floor of majordomus's own answers: the kit's floor program (canned bytes, no
# work) made to answer `tools/list` and `resources/list` with the exact results majordomus gives
# on the 10,000-object layer, measured by the kit's stdio driver. It tells how much of a
# majordomus figure is the server and how much is moving and reading its bytes.
#
# It is measured twice: with the kit's driver as it is, and with a copy whose notification check
# looks only at a line's envelope (the first 200 bytes). The kit's driver JSON-decodes, inside its
# timed region, every answer that contains the text "method" anywhere (to skip notifications);
# majordomus's tools/list does (an HTTP route's `method` property in its output schemas).
#   scripts/bench/payload-floor.sh   (after scripts/bench/peers.sh has built the kit and layers)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${MAJORDOMUS_BENCH_DIR:-/tmp/majordomus-bench}
kit="$work/peers"
repo="$work/repo-10000"
[ -x "$kit/floor/target/release/peer-floor" ] && [ -d "$repo/.ai" ] || {
  echo "run scripts/bench/peers.sh first (it builds the kit and the layers)" >&2
  exit 2
}
(cd "$root" && cargo build --release --quiet)
bin="$root/target/release/majordomus"

floor="$work/floor-payload"
if [ ! -x "$floor/target/release/peer-floor" ]; then
  rm -rf "$floor" && cp -r "$kit/floor" "$floor" && rm -rf "$floor/target"
  python3 - "$floor/src/main.rs" <<'EOF'
import sys
path = sys.argv[1]
src = open(path).read()
src = src.replace(
    "    let tools = tools_list().into_bytes();",
    "    let from = |var: &str| std::env::var(var).ok().and_then(|p| std::fs::read(p).ok());\n"
    "    let tools = from(\"FLOOR_TOOLS\").unwrap_or_else(|| tools_list().into_bytes());")
src = src.replace(
    "    let resources = br#\"{\"resources\":[]}\"#.to_vec();",
    "    let resources = from(\"FLOOR_RESOURCES\").unwrap_or_else(|| br#\"{\"resources\":[]}\"#.to_vec());")
assert "FLOOR_TOOLS" in src and "FLOOR_RESOURCES" in src, "the kit's floor changed; update this script"
open(path, "w").write(src)
EOF
  (cd "$floor" && cargo build --release --quiet)
fi

# majordomus's own results, byte for byte
python3 - "$bin" "$repo" "$work" <<'EOF'
import json, subprocess, sys
bin, repo, work = sys.argv[1:]
p = subprocess.Popen([bin, "mcp", "--repo", repo], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for i, method in enumerate(["initialize", "tools/list", "resources/list"]):
    msg = {"jsonrpc": "2.0", "id": i, "method": method}
    if method == "initialize":
        msg["params"] = {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "payload-floor", "version": "1"}}
    p.stdin.write((json.dumps(msg) + "\n").encode())
p.stdin.flush()
lines = [p.stdout.readline().decode().rstrip("\n") for _ in range(3)]
p.stdin.close()
p.wait()
for line, name in [(lines[1], "tools"), (lines[2], "resources")]:
    start = line.index('"result":') + len('"result":')
    open(f"{work}/majordomus-{name}.json", "w").write(line[start:-1])
EOF

sed 's/if b'"'"'"method"'"'"' in line and is_notification(line):/if b'"'"'"method"'"'"' in line[:200] and is_notification(line):/' \
  "$kit/bench_stdio.py" >"$work/bench_stdio_envelope.py"
grep -q 'line\[:200\]' "$work/bench_stdio_envelope.py" || {
  echo "the kit's driver changed; update this script" >&2
  exit 2
}

args=(--get-tool majordomus_get --get-arg uri --search-tool majordomus_search --search-arg query
  --list-tool majordomus_list --runs 3 --quiet)
for driver in "$kit/bench_stdio.py" "$work/bench_stdio_envelope.py"; do
  echo "== driver: $(basename "$driver")"
  FLOOR_TOOLS="$work/majordomus-tools.json" FLOOR_RESOURCES="$work/majordomus-resources.json" \
    python3 "$driver" --name floor-with-majordomus-bytes --cmd "$floor/target/release/peer-floor x" \
    --get-value layer://doc/doc-00000 "${args[@]}" | grep -E '^== |^   (tools/list|resources/list|pipelined)'
  values=()
  for i in $(python3 -c "print(' '.join(str(i*50) for i in range(200)))"); do
    values+=(--get-value "$(printf 'majordomus://knowledge/doc-%05d' "$i")")
  done
  python3 "$driver" --name majordomus-10000 --cmd "$bin mcp --repo $repo" "${values[@]}" "${args[@]}" |
    grep -E '^== |^   (tools/list|resources/list|pipelined)'
done
