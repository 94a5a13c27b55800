#!/usr/bin/env bash
# The surface's version gate: compares the build's surface with surface.json at the
# merge base and fails (exit 10) when Cargo.toml's version does not carry the bump the changes
# need. The base is `git merge-base HEAD origin/main` when origin/main exists; on a clean clone
# of main itself (where main is the only branch) it is HEAD~1, the commit before the one tested.
# A base that predates surface.json has nothing to compare with, and the script says so.
set -euo pipefail
cd "$(dirname "$0")/../.."
if git rev-parse --verify --quiet origin/main >/dev/null; then
  base=$(git merge-base HEAD origin/main)
  how="merge base with origin/main"
else
  base=$(git rev-parse --verify --quiet HEAD~1 || true)
  how="HEAD~1 (no origin/main)"
fi
if [ -z "$base" ]; then
  echo "surface check: no earlier commit to compare with"
  exit 0
fi
if [ "$base" = "$(git rev-parse HEAD)" ]; then
  base=$(git rev-parse --verify --quiet HEAD~1 || true)
  how="HEAD~1 (HEAD is the merge base)"
  [ -n "$base" ] || { echo "surface check: no earlier commit to compare with"; exit 0; }
fi
if ! git cat-file -e "$base:surface.json" 2>/dev/null; then
  echo "surface check: $how ($base) predates surface.json; nothing to compare with"
  exit 0
fi
echo "surface check against $how ($base)"
cargo run --quiet -- --format text surface check --against "$base"
