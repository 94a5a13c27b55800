#!/usr/bin/env bash
# What the hostile-input checks cost (issue 13, "Measured": at most 5% on index build and cold
# start): the YAML pre-scan (`yaml_bound`) and the content credential check (`secrets::find`).
# Builds the same tree twice with the release profile, with and without the cargo feature
# `unchecked-baseline` (which compiles those two calls out of `src/layer/` and nothing else; it
# exists for this script), copies both binaries aside, then measures them in turns:
#   1. cold start to the `initialize` answer at 100 and 10,000 objects, wall and CPU
#      (cold-start.sh with BASELINE=the unchecked binary: checked/unchecked ratios);
#   2. index build: one-shot `objects get` at 100 and 10,000 objects (ab.py oneshot, wall; then
#      CPU with perf stat);
#   3. the checks alone against index builds of the same layer, in one process
#      (`cargo bench --bench checks`, on the kit's repo-10000 and on generated documents).
#   scripts/bench/checks-before-after.sh [runs-100] [runs-10000]        (default: 200 30)
# MAJORDOMUS_PEERS_KIT and MAJORDOMUS_BENCH_DIR as for cold-start.sh; the two binaries are kept
# in MAJORDOMUS_CHECKS_BIN (default /tmp/majordomus-checks-bin), so a rebuild during the run
# changes nothing measured.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${MAJORDOMUS_BENCH_DIR:-/tmp/majordomus-bench}
bins=${MAJORDOMUS_CHECKS_BIN:-/tmp/majordomus-checks-bin}
mkdir -p "$bins"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
(cd "$root" && cargo build --release --quiet --features unchecked-baseline)
cp "$root/target/release/majordomus" "$bins/unchecked"
(cd "$root" && cargo build --release --quiet)
cp "$root/target/release/majordomus" "$bins/checked"
# Both measured from copies made at the same moment: a binary's page-cache state moves its cold
# start by up to 10% CPU (the same bytes, linker-written or copied an hour ago against copied just
# now, measured 1.10x and 1.12x), more than the checks cost.
cp "$bins/unchecked" "$bins/unchecked.fresh" && mv "$bins/unchecked.fresh" "$bins/unchecked"
cp "$bins/checked" "$bins/checked.fresh" && mv "$bins/checked.fresh" "$bins/checked"
unchecked=$bins/unchecked
checked=$bins/checked

echo; echo "== cold start, checked (majordomus) against unchecked (baseline)"
MAJORDOMUS_BIN=$checked BASELINE=$unchecked "$here/cold-start.sh" "${1:-200}" "${2:-30}"

echo; echo "== index build: one-shot \`objects get\`, before = unchecked, after = checked"
for n in 100 10000; do
  echo " repo-$n"
  python3 "$here/ab.py" oneshot "$(( n == 100 ? 100 : 20 ))" "$work/repo-$n" "$unchecked" "$checked" \
    objects get majordomus://knowledge/doc-00050
  if command -v perf >/dev/null; then
    for b in "$unchecked" "$checked"; do
      cpu=$(perf stat -x, -r 10 -e task-clock "$b" objects get majordomus://knowledge/doc-00050 \
        --repo "$work/repo-$n" 2>&1 >/dev/null | cut -d, -f1 | tail -1)
      printf '  CPU %8.2f ms per build  %s\n' "$cpu" "$b"
    done
  fi
done

echo; echo "== the checks alone against index builds, in one process (benches/checks.rs)"
(cd "$root" && cargo bench --quiet --bench checks -- --repo "$work/repo-10000")
(cd "$root" && cargo bench --quiet --bench checks)
echo; echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
