#!/usr/bin/env bash
# Connects a real MCP client — the official MCP Python SDK (`mcp`, PyPI) — to this checkout's
# server: over stdio on the legacy era (initialize, list, call every read tool with its examples,
# read every resource), then on the modern era (2026-07-28) in the SDK's `2026-07-28` and `auto`
# modes, over stdio and over Streamable HTTP (`majordomus serve`). Installed into a throwaway
# virtual environment (scripts/ci/python-sdk.sh); the SDK's 2.x API is the one used.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/ci/python-sdk.sh"
python_sdk
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/mcp-python-client.py" "$root/target/debug/majordomus" "$root"
