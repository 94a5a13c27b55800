#!/usr/bin/env bash
# The README's newcomer walk: every ```sh walk block of the README, in order, each in a fresh
# shell started in one working directory that holds a clone of this checkout (`majordomus/`) and
# a fresh git repository (`your-project/`) with an AGENTS.md and a Cursor rule scoped to
# `src/**/*.rs`. The blocks install majordomus from the clone, run `init`, write the README's
# rule and ask `objects applicable` from a subdirectory; the walk passes when that answer names
# the rule and the Cursor rule. The commands are read from the README itself, so the README
# cannot drift from what works.
#   scripts/ci/newcomer-walk.sh
# The install builds into this checkout's target/ (WALK_TARGET_DIR overrides it) and installs
# under the walk's directory, never into ~/.cargo/bin.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-walk.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

git clone -q "$root" "$work/majordomus"
export CARGO_TARGET_DIR=${WALK_TARGET_DIR:-$root/target}
export CARGO_INSTALL_ROOT="$work/cargo"
export PATH="$work/cargo/bin:$PATH"

project="$work/your-project"
mkdir -p "$project/.cursor/rules" "$project/src/parse"
printf '# Working here\n\nRun the tests before every commit.\n' > "$project/AGENTS.md"
printf -- '---\ndescription: Rust here\nglobs: src/**/*.rs\nalwaysApply: false\n---\n\nPrefer `?` to `unwrap()`.\n' \
  > "$project/.cursor/rules/rust.mdc"
printf 'fn main() {}\n' > "$project/src/parse/lexer.rs"
git -C "$project" init -q
git -C "$project" add -A
git -C "$project" -c user.name=walk -c user.email=walk@example.com commit -qm "a project"

# The README's walk blocks, one file each.
awk -v dir="$work" '
  /^```sh walk$/ { n++; file = sprintf("%s/block-%02d.sh", dir, n); inside = 1; next }
  inside && /^```/ { inside = 0; close(file); next }
  inside { print > file }
' "$work/majordomus/README.md"
blocks=("$work"/block-*.sh)
[ -e "${blocks[0]}" ] || { echo "FAIL  the README has no \`sh walk\` blocks"; exit 1; }

last=""
for block in "${blocks[@]}"; do
  echo "=== $(basename "$block"):"; sed 's/^/    /' "$block"
  if ! last=$(cd "$work" && bash -euo pipefail "$block" 2>&1); then
    echo "$last" | sed 's/^/    | /'
    echo "FAIL  $(basename "$block") failed"; exit 1
  fi
  echo "$last" | tail -n 20 | sed 's/^/    | /'
done

fail=0
for expected in '"identity": "errors-are-typed@1"' '"path": ".cursor/rules/rust.mdc"' '"src/parse/lexer.rs"'; do
  if grep -qF "$expected" <<<"$last"; then
    echo "ok    the last answer has $expected"
  else
    echo "FAIL  the last answer lacks $expected"; fail=1
  fi
done
echo "newcomer walk: ${#blocks[@]} blocks, $(( $(date +%s) - started )) s"
exit $fail
