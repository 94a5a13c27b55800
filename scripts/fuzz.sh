#!/usr/bin/env bash
# Runs one fuzz target for a given time and prints how many inputs it executed.
#
#   scripts/fuzz.sh <target> <seconds>
#
# Targets are the binaries of fuzz/Cargo.toml (mcp_message, layer_file, http_query, yaml_depth,
# configuration). The corpus
# grows in fuzz/corpus/<target> (ignored by git), seeded from fuzz/seeds/<target> (committed); a
# crash leaves its input in fuzz/artifacts/<target>/ and makes this script exit non-zero.
# Needs cargo-fuzz (`cargo install cargo-fuzz`). libFuzzer's flags need a nightly compiler; on a
# stable toolchain RUSTC_BOOTSTRAP=1 lets it accept them.
set -euo pipefail

if [[ $# -ne 2 ]]; then
    echo "usage: scripts/fuzz.sh <target> <seconds>" >&2
    exit 2
fi
target=$1
seconds=$2
if ! [[ $seconds =~ ^[1-9][0-9]*$ ]]; then
    echo "fuzz.sh: <seconds> must be a positive whole number, not \`$seconds\`" >&2
    exit 2
fi

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
if ! grep -q "^name = \"$target\"$" fuzz/Cargo.toml; then
    echo "fuzz.sh: no target \`$target\` in fuzz/Cargo.toml (targets: $(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v majordomus-fuzz | tr '\n' ' '))" >&2
    exit 2
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is not installed; run \`cargo install cargo-fuzz\`" >&2
    exit 2
fi
if ! rustc --version | grep -q nightly; then
    export RUSTC_BOOTSTRAP=1
fi

corpus=fuzz/corpus/$target
seeds=fuzz/seeds/$target
mkdir -p "$corpus" "$seeds" "fuzz/artifacts/$target"
# The targets that need a repository make theirs under TMPDIR; this run's goes with it.
scratch=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$scratch" "$log"' EXIT

status=0
TMPDIR=$scratch cargo fuzz run "$target" "$corpus" "$seeds" -- \
    -max_total_time="$seconds" \
    -timeout=20 \
    -rss_limit_mb=2048 \
    -print_final_stats=1 \
    >"$log" 2>&1 || status=$?

executed=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
per_second=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
grep -E '^(==[0-9]+==|thread .* panicked|SUMMARY|artifact_prefix|Test unit written|Running:)' "$log" || true
grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true
echo "fuzz target $target: ${executed:-0} executions in ${seconds} s (${per_second:-0} per second), corpus $(find "$corpus" -type f | wc -l) inputs"
if [[ $status -ne 0 ]]; then
    echo "fuzz target $target failed (exit $status); the input is in fuzz/artifacts/$target/" >&2
    tail -n 40 "$log" >&2
fi
exit "$status"
