#!/usr/bin/env bash
# A second official client on the modern era (2026-07-28): the MCP Inspector's CLI
# (@modelcontextprotocol/inspector) with `--protocol-era modern`, against this checkout's server
# over stdio (`majordomus mcp`) and over Streamable HTTP (`majordomus serve`, /mcp). Each
# transport: tools/list, a tools/call of the tool that reads a URI, resources/list, a
# resources/read of every builtin resource listed, resources/templates/list. The Inspector
# validates what it parses; a JSON-RPC error or an isError result fails the step.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Pinned so a new Inspector release changes this step in a commit, not under a green CI.
INSPECTOR_VERSION=2.12.0
INSPECTOR_PREFIX=/tmp/majordomus-inspector-$INSPECTOR_VERSION
WORK=$(mktemp -d)
. scripts/ci/node22.sh
. scripts/ci/serve-checkout.sh
trap 'stop_served; rm -rf "$WORK"' EXIT

node22
npm_pinned "$INSPECTOR_PREFIX" @modelcontextprotocol/inspector "$INSPECTOR_VERSION"
INSPECTOR=$INSPECTOR_PREFIX/node_modules/.bin/mcp-inspector
echo "node $("$NODE" --version), @modelcontextprotocol/inspector $INSPECTOR_VERSION"

serve_checkout "$WORK/serve.log"
BIN=$PWD/target/debug/majordomus

# The Inspector keeps a catalog under $HOME; this run's stays in its own directory.
export HOME=$WORK/home
inspect() { # transport out-file inspector-args...
    local transport=$1 out=$2
    shift 2
    if [ "$transport" = http ]; then
        PATH=$(dirname "$NODE"):$PATH "$INSPECTOR" --cli "http://127.0.0.1:$PORT/mcp" \
            --protocol-era modern --format json -q "$@" >"$out"
    else
        PATH=$(dirname "$NODE"):$PATH "$INSPECTOR" --cli "$BIN" mcp --repo . \
            --protocol-era modern --format json -q "$@" >"$out"
    fi
}
for transport in stdio http; do
    inspect "$transport" "$WORK/$transport-tools.json" --method tools/list
    inspect "$transport" "$WORK/$transport-resources.json" --method resources/list
    inspect "$transport" "$WORK/$transport-templates.json" --method resources/templates/list
    # Every builtin query but the inbox, which is an agent's: on the stateless era over HTTP a
    # request names its agent by a handle this one-shot client never announced for.
    uris=$(python3 -c 'import json,sys; print("\n".join(r["uri"] for r in json.load(open(sys.argv[1]))["result"]["resources"] if r["_meta"].get("majordomus", {}).get("kind") == "query" and not (sys.argv[2] == "http" and r["_meta"]["majordomus"].get("id") == "peers.inbox")))' "$WORK/$transport-resources.json" "$transport")
    n=0
    for uri in $uris; do
        n=$((n + 1))
        inspect "$transport" "$WORK/$transport-read-$n.json" --method resources/read --uri "$uri"
    done
    uri=$(python3 -c 'import json,sys; print([r["uri"] for r in json.load(open(sys.argv[1]))["result"]["resources"] if r["_meta"].get("majordomus", {}).get("kind") not in (None, "query")][0])' "$WORK/$transport-resources.json")
    tool=$(python3 -c 'import json,sys; print([t["name"] for t in json.load(open(sys.argv[1]))["result"]["tools"] if t["_meta"]["majordomus"]["id"] == "objects.get"][0])' "$WORK/$transport-tools.json")
    inspect "$transport" "$WORK/$transport-call.json" --method tools/call --tool-name "$tool" \
        --tool-args-json "{\"uri\": \"$uri\"}"
done

python3 - "$WORK" <<'PY'
import json, pathlib, sys

work = pathlib.Path(sys.argv[1])
for transport in ("stdio", "http"):
    def result(name):
        answer = json.loads((work / f"{transport}-{name}.json").read_text())
        if "error" in answer or "result" not in answer:
            sys.exit(f"{transport} {name}: {answer}")
        return answer["result"]
    tools = result("tools")["tools"]
    resources = result("resources")["resources"]
    templates = result("templates")["resourceTemplates"]
    reads = sorted(work.glob(f"{transport}-read-*.json"))
    for read in reads:
        contents = result(read.stem[len(transport) + 1:])["contents"]
        if len(contents) != 1 or not contents[0].get("text"):
            sys.exit(f"{transport} {read.name}: {contents}")
        # Only the modern era names the server in every result's _meta.
        served_by = result(read.stem[len(transport) + 1:]).get("_meta", {})
        if "io.modelcontextprotocol/serverInfo" not in served_by:
            sys.exit(f"{transport} {read.name}: not answered on the modern era: {served_by}")
    call = result("call")
    if call.get("isError") or "structuredContent" not in call:
        sys.exit(f"{transport} tools/call: {call}")
    if len(tools) < 10 or len(resources) < 10 or not templates or len(reads) < 2:
        sys.exit(f"{transport}: too little: {len(tools)} tools, {len(resources)} resources, {len(reads)} reads")
    print(f"inspector --protocol-era modern over {transport}: ok: {len(tools)} tools, "
          f"{len(resources)} resources, {len(reads)} builtin resources read, one tools/call, "
          f"{len(templates)} template")
PY
