#!/usr/bin/env bash
# Three agents on the mesh through the official MCP Python SDK (`mcp>=2.3,<3`, PyPI), in `legacy`
# and `auto` mode (which settles on 2026-07-28), over stdio (two worktrees and one shared
# checkout) and over HTTP (`majordomus serve`, its agent lease shortened to 5 s; the default is
# 60 s): exclusivity, listing, messages, six racers for one path, a SIGKILLed holder freed, and
# the claim latency of each era and transport (scripts/ci/mesh-agents.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/ci/python-sdk.sh"
python_sdk
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/mesh-agents.py" "$root/target/debug/majordomus" 5
