#!/usr/bin/env bash
# Two agents in one checkout, stopped by a real `git commit`: in a linked worktree of a fresh
# repository, the hook `majordomus peers check --print-hook git` prints is saved at the path it
# names. Agent alpha (a client process that starts its own stdio `majordomus mcp`) claims
# `src/**`; agent beta (another client, its own server, the same checkout) is refused the claim
# of `./src/main.rs`, and its `git commit` of `src/main.rs` is refused by the hook naming alpha.
# Alpha's own commit of the same file then goes through. Needs only git and the debug binary.
#   scripts/ci/same-checkout-hook.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$root" && cargo build --quiet)
mj="$root/target/debug/majordomus"
export PATH="$root/target/debug:$PATH"
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_COMMON_DIR MAJORDOMUS_BOARD MAJORDOMUS_LOG
work=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-same-checkout.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL  $*"; exit 1; }

repo="$work/repo"
git init -q "$repo"
git -C "$repo" config user.name ci
git -C "$repo" config user.email ci@example.com
(cd "$repo" && "$mj" init >/dev/null 2>&1)
git -C "$repo" add -A
git -C "$repo" commit -qm "a layer"
linked="$work/linked"
git -C "$repo" worktree add -q "$linked" -b linked
[ -f "$linked/.git" ] || fail "a linked worktree's .git is a file"
cd "$linked"

# The hook, saved where it says to save it.
hook_path=$("$mj" peers check --print-hook git \
  | sed -n 's/^# Save as \(.*\) and make it executable,$/\1/p')
[ -n "$hook_path" ] || fail "--print-hook git names no install path"
mkdir -p "$(dirname "$hook_path")"
"$mj" peers check --print-hook git > "$hook_path"
chmod +x "$hook_path"
grep -q -- '--mode enforce' "$hook_path" || fail "the printed hook does not enforce by default"
echo "ok    the hook is installed at $hook_path"

mkdir -p src
printf 'fn main() {}\n' > src/main.rs
git add src/main.rs
head=$(git rev-parse HEAD)
mkfifo "$work/alpha.ready" "$work/alpha.go"

# One agent: this shell process is its client (never a command substitution's subshell, which
# would leave with the server's pipes). It starts its server, initializes as NAME, claims GLOB,
# and leaves the claim's answer in $reply.
agent_start() {
  local name=$1 glob=$2
  coproc SERVER { exec "$mj" mcp 2>>"$work/$name.log"; }
  exec 6>&"${SERVER[1]}" 7<&"${SERVER[0]}"
  printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"'"$name"'","version":"1"}}}' >&6
  IFS= read -r -t 60 reply <&7 || fail "$name: no answer to initialize"
  printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&6
  printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"majordomus_claim","arguments":{"globs":["'"$glob"'"]}}}' >&6
  IFS= read -r -t 60 reply <&7 || fail "$name: no answer to the claim"
}

# Alpha: claims src/**, then commits only when told to.
(
  agent_start alpha 'src/**'
  case $reply in *'"granted":true'*) ;; *) fail "alpha was not granted src/**: $reply" ;; esac
  echo claimed > "$work/alpha.ready"
  read -r _ < "$work/alpha.go"
  set +e
  git commit -qm "alpha's work" > "$work/alpha.out" 2>&1
  echo $? > "$work/alpha.rc"
) &
alpha=$!
read -r -t 120 _ < "$work/alpha.ready" || fail "alpha did not claim"
echo "ok    alpha holds src/**"

# Beta: the same checkout, its own client and server.
(
  agent_start beta './src/main.rs'
  case $reply in *'"granted":false'*) ;; *) fail "beta was granted ./src/main.rs: $reply" ;; esac
  set +e
  git commit -qm "beta's work" > "$work/beta.out" 2>&1
  echo $? > "$work/beta.rc"
)
[ "$(cat "$work/beta.rc")" != 0 ] || fail "beta's commit went through: $(cat "$work/beta.out")"
grep -q 'is claimed exclusively by alpha' "$work/beta.out" \
  || fail "beta's refusal does not name alpha: $(cat "$work/beta.out")"
[ "$(git rev-parse HEAD)" = "$head" ] || fail "beta committed"
echo "ok    beta's claim of ./src/main.rs and its commit are refused: $(grep -m1 claimed "$work/beta.out")"

echo go > "$work/alpha.go"
wait "$alpha" || fail "alpha's client failed"
[ "$(cat "$work/alpha.rc")" = 0 ] || fail "alpha's own commit was refused: $(cat "$work/alpha.out")"
[ "$(git rev-parse HEAD)" != "$head" ] || fail "alpha committed nothing"
echo "ok    alpha's own commit goes through"
