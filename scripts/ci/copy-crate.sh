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
# Only the dependencies' artefacts are seeded (their libraries, build scripts and fingerprints):
# this crate's own (its libraries, binaries, test and bench binaries and incremental state,
# gigabytes of them) would be rebuilt by the copy anyway, and copying them doubled what the check
# needs of the disk.
if [ -d "$root/target/debug/deps" ]; then
  mkdir -p "$dest/target/debug"
  (cd "$root/target/debug" &&
    { find deps -maxdepth 1 -name 'lib*' ! -name '*majordomus*'
      find build .fingerprint -mindepth 1 -maxdepth 1 ! -name '*majordomus*' ! -name '*integration*'; } |
    tar -cf - -T - 2>/dev/null) | tar -C "$dest/target/debug" -xf -
fi
echo "$dest"
