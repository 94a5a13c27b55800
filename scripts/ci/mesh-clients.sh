#!/usr/bin/env bash
# The mesh through two real clients on two worktrees: the official MCP Python SDK (`mcp`, PyPI)
# holds a claim and is subscribed to its inbox, the MCP Inspector's CLI
# (@modelcontextprotocol/inspector, modern era) in a second worktree is refused, sends the holder
# a message the SDK is notified of and reads, and is granted after the release
# (scripts/ci/mesh-clients.py). Both are installed where the other real-client steps put them.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
INSPECTOR_VERSION=2.12.0
INSPECTOR_PREFIX=/tmp/majordomus-inspector-$INSPECTOR_VERSION
. "$root/scripts/ci/python-sdk.sh"
. "$root/scripts/ci/node22.sh"
python_sdk
node22
npm_pinned "$INSPECTOR_PREFIX" @modelcontextprotocol/inspector "$INSPECTOR_VERSION"
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/mesh-clients.py" "$root/target/debug/majordomus" "$NODE" \
    "$INSPECTOR_PREFIX/node_modules/.bin/mcp-inspector"
