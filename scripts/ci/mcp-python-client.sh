#!/usr/bin/env bash
# Connects a real MCP client — the official MCP Python SDK (`mcp`, PyPI) — to this checkout's
# server: over stdio on the legacy era (initialize, list, call every read tool with its examples,
# read every resource), then on the modern era (2026-07-28) in the SDK's `2026-07-28` and `auto`
# modes, over stdio and over Streamable HTTP (`majordomus serve`). Installed into a throwaway
# virtual environment; the SDK's 2.x API is the one used.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${MAJORDOMUS_CI_VENV:-/tmp/majordomus-ci-venv}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("mcp").split(".")[0] != "2")' 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'mcp>=2.3,<3'
fi
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/mcp-python-client.py" "$root/target/debug/majordomus" "$root"
