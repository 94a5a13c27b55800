#!/usr/bin/env bash
# Copies this crate's sources (not target/, not .git/) into a fresh temporary directory and prints
# its path. Builds in the copy share this checkout's target directory through CARGO_TARGET_DIR,
# so dependencies are not rebuilt; cargo keeps the copy's own artifacts apart by path.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dest=$(mktemp -d /tmp/majordomus-copy.XXXXXX)
tar -C "$root" --exclude=./target --exclude=./.git --exclude=./node_modules -cf - . | tar -C "$dest" -xf -
echo "$dest"
