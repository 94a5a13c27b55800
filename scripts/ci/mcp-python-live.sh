#!/usr/bin/env bash
# The layer's changes reaching a real MCP client (SPEC §8.4): the official MCP Python SDK hears
# `resources/updated` and `list_changed` through its message handler on the legacy era, and a
# `subscriptions/listen` stream on the modern era, over stdio and over Streamable HTTP, against
# a throwaway repository it edits. The same throwaway virtual environment as
# mcp-python-client.sh.
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
"$venv/bin/python" "$root/scripts/ci/mcp-python-live.py" "$root/target/debug/majordomus"
