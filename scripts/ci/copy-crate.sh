#!/usr/bin/env bash
# Copies this crate's sources (not target/, not .git/) into a fresh temporary directory and prints
# its path. The copy gets its own target directory, seeded from this checkout's debug build so
# dependencies are not rebuilt. (Sharing one target directory is not safe: cargo names a local
# package's build-script output without its path, so the copy's generated code would leak into
# this checkout's build.)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d /tmp/majordomus-copy.XXXXXX)
tar -C "$root" --exclude=./target --exclude=./.git --exclude=node_modules -cf - . | tar -C "$dest" -xf -
"$root/scripts/ci/seed-target.sh" "$dest/target"
echo "$dest"
