#!/usr/bin/env bash
# Builds what is published of majordomus, from this checkout, into dist/ (or DIST_DIR):
#   - the binary of the chosen profile (`dist` by default: fat LTO, one codegen unit);
#   - the npm package `majordomus` (a launcher) and `majordomus-<platform>` carrying the binary,
#     for this machine's platform, each packed as a tarball `npm install` takes;
#   - the Python wheel carrying the binary (maturin, `bin` bindings), tagged with the lowest
#     manylinux its C library symbols allow.
# Every version is Cargo.toml's. The other platforms of the table in packaging/README.md are built
# by this same script on a machine of that platform.
#
# Usage: scripts/dist.sh [--profile dist|release]
#   --profile release  skips the whole-program optimisation (minutes) for a quick check, as CI does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

profile=dist
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) profile=${2:?--profile needs dist or release}; shift 2 ;;
    *) echo "dist.sh: unknown argument \`$1\` (expected --profile dist|release)" >&2; exit 2 ;;
  esac
done
case "$profile" in dist|release) ;; *) echo "dist.sh: --profile is dist or release, not \`$profile\`" >&2; exit 2 ;; esac

out=${DIST_DIR:-$root/dist}
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
[ -n "$version" ] || { echo "dist.sh: no version in Cargo.toml" >&2; exit 1; }

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 ;;
  Darwin-x86_64) platform=darwin-x64 ;;
  Darwin-arm64) platform=darwin-arm64 ;;
  MINGW*-x86_64|MSYS*-x86_64) platform=win32-x64 ;;
  *) echo "dist.sh: no package layout for $(uname -s)-$(uname -m); see packaging/README.md" >&2; exit 1 ;;
esac

command -v npm >/dev/null || { echo "dist.sh: needs npm (Debian: apt-get install npm)" >&2; exit 1; }
tools=${DIST_TOOLS:-/tmp/majordomus-dist-tools}
if [ ! -x "$tools/bin/maturin" ]; then
  python3 -m venv "$tools"
  "$tools/bin/pip" install --quiet --disable-pip-version-check 'maturin>=1.9,<2'
fi

rm -rf "$out" && mkdir -p "$out"
started=$(date +%s)

# The wheel first: maturin runs cargo with the profile, so the binary below is that build.
# maturin reads the pyproject.toml where it runs, which names the manifest.
(cd packaging/python && "$tools/bin/maturin" build --quiet --profile "$profile" --out "$out" >&2)
wheel=$(ls "$out"/majordomus-"$version"-*.whl)
exe=majordomus && [ "$platform" = win32-x64 ] && exe=majordomus.exe
binary=target/$profile/$exe
[ -x "$binary" ] || { echo "dist.sh: maturin left no $binary" >&2; exit 1; }
built=$(date +%s)

# On Linux, the oldest glibc the binary runs on: the newest GLIBC_ symbol version it asks for.
glibc=none
if [ "${platform%%-*}" = linux ]; then
  glibc=$(objdump -T "$binary" | grep -o 'GLIBC_[0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
  case "$(basename "$wheel")" in
    *manylinux_${glibc//./_}_*) ;;
    *) echo "dist.sh: the wheel's tag does not say glibc $glibc: $(basename "$wheel")" >&2; exit 1 ;;
  esac
fi

# npm: the binary package of this platform, then the launcher naming every platform's package.
stage=$out/npm && mkdir -p "$stage"
# The platforms this release has binary packages for: this machine's, unless the release is
# assembled from several machines' builds (DIST_PLATFORMS='["linux-x64","darwin-arm64"]').
platforms=${DIST_PLATFORMS:-"[\"$platform\"]"}
python3 - "$stage" "$version" "$platform" "$glibc" "$platforms" <<'PY'
import json, os, shutil, sys
stage, version, platform, glibc, platforms = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], json.loads(sys.argv[5])
system, cpu = platform.split("-")
binary = {
    "name": f"majordomus-{platform}",
    "version": version,
    "description": f"The majordomus binary for {platform}; installed by the `majordomus` package",
    "license": "MIT",
    "os": [system],
    "cpu": [cpu],
    "files": ["bin"],
    "preferUnplugged": True,
}
if system == "linux":
    binary["libc"] = ["glibc"]
launcher = {
    "name": "majordomus",
    "version": version,
    "description": "Serves a repository's AI layer to coding agents (MCP), programs (HTTP), people (Cockpit) and shells (CLI)",
    "license": "MIT",
    "keywords": ["mcp", "model-context-protocol", "agents"],
    "bin": {"majordomus": "bin/majordomus.js"},
    "files": ["bin", "README.md"],
    "engines": {"node": ">=18"},
    "optionalDependencies": {f"majordomus-{p}": version for p in platforms},
    "majordomus": {"glibc": glibc, "platforms": platforms},
}
for name, manifest in ((f"majordomus-{platform}", binary), ("majordomus", launcher)):
    os.makedirs(os.path.join(stage, name, "bin"), exist_ok=True)
    with open(os.path.join(stage, name, "package.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
PY
cp packaging/npm/majordomus/bin/majordomus.js "$stage/majordomus/bin/"
cp packaging/npm/majordomus/README.md "$stage/majordomus/"
cp "$binary" "$stage/majordomus-$platform/bin/$exe"
[ "$platform" = win32-x64 ] || strip "$stage/majordomus-$platform/bin/$exe"
(cd "$out" && npm pack --silent "$stage/majordomus-$platform" "$stage/majordomus" >/dev/null)
rm -rf "$stage"

finished=$(date +%s)
echo "dist.sh: majordomus $version ($platform, profile $profile, glibc $glibc or newer)"
echo "dist.sh: built in $((built - started)) s, packaged in $((finished - built)) s"
for f in "$out"/*; do
  printf 'dist.sh:   %-60s %8s bytes\n' "$(basename "$f")" "$(stat -c %s "$f")"
done
