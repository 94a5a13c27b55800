#!/usr/bin/env bash
# Three clones of one remote, two agents each, coordinating through the board shared on the
# remote's `refs/majordomus/board` (`git daemon --enable=receive-pack` on the loopback), driven by
# the official MCP Python SDK (`mcp>=2.3,<3`, PyPI) over stdio, on both eras (one agent of each
# clone on legacy, the other on 2026-07-28): exclusivity across clones, the hook
# check, a message across clones, one issue claimed once, a new issue in the other clones' queues
# and claimed once, 10 races of 6 agents -> 1 grant each,
# a SIGKILLed clone's claim freed within its lease (scripts/ci/remote-board.py).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/ci/python-sdk.sh"
python_sdk
(cd "$root" && cargo build --quiet)
"$venv/bin/python" "$root/scripts/ci/remote-board.py" "$root/target/debug/majordomus" 10
