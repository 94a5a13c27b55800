#!/usr/bin/env bash
# The skills extension through a real client (issue 17 point 7): the official MCP Python SDK
# (`mcp`, PyPI), which has no skills methods, sends `skills/list`, `skills/get` and
# `resources/directory/read` through its session's raw `send_request`, reads every file of every
# skill with its own `read_resource` and verifies each digest and size against the bytes read;
# over stdio on the legacy era, and on 2026-07-28 over stdio and Streamable HTTP. Shares the
# throwaway virtual environment of mcp-python-client.sh.
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
"$venv/bin/python" "$root/scripts/ci/skills-python-client.py" "$root/target/debug/majordomus"
