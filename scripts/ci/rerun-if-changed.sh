#!/usr/bin/env bash
# Proves build.rs's rerun-if-changed is exact, and measures the edit loop: in a copy of the
# crate, editing one YAML description reruns the generator; touching an unrelated source file
# does not. Prints the debug rebuild time of each, the figure the edit loop is judged by.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
copy=$("$root/scripts/ci/copy-crate.sh")
trap 'rm -rf "$copy"' EXIT
cd "$copy"
export CARGO_TARGET_DIR="$copy/target"
# The edit loop is timed as a developer has it, with incremental builds, whatever CI chose.
unset CARGO_INCREMENTAL
cargo build --quiet
ms() { date +%s%3N; }

touch src/cli/mod.rs
t0=$(ms); out=$(cargo build -v 2>&1); t1=$(ms)
if grep -q "build-script-build\`" <<<"$out" && grep -q "Running .*majordomus-[0-9a-f]*/build-script-build" <<<"$out"; then
  echo "rerun-if-changed: FAIL: touching src/cli/mod.rs reran the generator" >&2
  exit 1
fi
echo "rerun-if-changed: ok: an unrelated edit does not rerun build.rs (debug rebuild $((t1 - t0)) ms)"

marker="  Lists the registry's capabilities"
if ! grep -q "^$marker" registry/capabilities/list.yaml; then
  echo "rerun-if-changed: FAIL: registry/capabilities/list.yaml no longer begins its description with '$marker'; update this script" >&2
  exit 1
fi
sed -i "s/^$marker/  Lists each registry capability/" registry/capabilities/list.yaml
t0=$(ms); out=$(cargo build -v 2>&1); t1=$(ms)
if ! grep -q "Running .*majordomus-[0-9a-f]*/build-script-build" <<<"$out"; then
  echo "rerun-if-changed: FAIL: editing a YAML file did not rerun the generator" >&2
  exit 1
fi
if ! "$CARGO_TARGET_DIR/debug/majordomus" capabilities describe capabilities.list | grep -q '"description": "Lists each registry capability'; then
  echo "rerun-if-changed: FAIL: the rebuilt binary does not carry the edited description" >&2
  exit 1
fi
echo "rerun-if-changed: ok: a YAML description edit reruns build.rs and reaches the binary (debug rebuild $((t1 - t0)) ms)"
