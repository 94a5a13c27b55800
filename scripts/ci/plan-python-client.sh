#!/usr/bin/env bash
# The plan as a work queue through a real client — the official MCP Python SDK (`mcp`, PyPI):
# create → ready → claim → start → verify → done over stdio and over Streamable HTTP, with a
# second session seeing the claim (scripts/ci/plan-python-client.py). Installed into the shared
# throwaway virtual environment (scripts/ci/python-sdk.sh).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/ci/python-sdk.sh"
python_sdk
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/plan-python-client.py" "$root/target/debug/majordomus"
