#!/usr/bin/env bash
# Seeds a scratch copy's own target directory (the one argument) with this checkout's debug
# build of the dependencies, so the copy does not rebuild them; does nothing without a debug
# build. Only the dependencies' artefacts (their libraries, build scripts and fingerprints):
# this crate's own (its libraries, binaries, test and bench binaries and incremental state,
# gigabytes of them) would be rebuilt by the copy anyway, and copying them doubled what a check
# needs of the disk.
#   scripts/ci/seed-target.sh TARGET_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=$1
[ -d "$root/target/debug/deps" ] || exit 0
mkdir -p "$target/debug"
(cd "$root/target/debug" &&
  { find deps -maxdepth 1 -name 'lib*' ! -name '*majordomus*'
    find build .fingerprint -mindepth 1 -maxdepth 1 ! -name '*majordomus*' ! -name '*integration*'; } |
  tar -cf - -T - 2>/dev/null) | tar -C "$target/debug" -xf -
