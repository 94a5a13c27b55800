#!/usr/bin/env bash
# The skills extension through a real client: the official MCP Python SDK
# (`mcp`, PyPI), which has no skills methods, sends `skills/list`, `skills/get` and
# `resources/directory/read` through its session's raw `send_request`, reads every file of every
# skill with its own `read_resource` and verifies each digest and size against the bytes read;
# over stdio on the legacy era, and on 2026-07-28 over stdio and Streamable HTTP. The SDK comes from
# scripts/ci/python-sdk.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/ci/python-sdk.sh"
python_sdk
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/skills-python-client.py" "$root/target/debug/majordomus"
