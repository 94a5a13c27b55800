#!/usr/bin/env bash
# The layer's changes reaching a real MCP client: the official MCP Python SDK hears
# `resources/updated` and `list_changed` through its message handler on the legacy era, and a
# `subscriptions/listen` stream on the modern era, over stdio and over Streamable HTTP, against
# a throwaway repository it edits. The SDK comes from
# scripts/ci/python-sdk.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/ci/python-sdk.sh"
python_sdk
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/mcp-python-live.py" "$root/target/debug/majordomus"
