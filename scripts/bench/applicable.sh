#!/usr/bin/env bash
# The stdio figures of what applies to a path, in one command: majordomus_applicable (100 paths, 10,000 rules of
# which 2,000 scoped) against majordomus_get, and initialize with the 500 blocking rules in the
# instructions against a layer without blocking rules (release build).
#   scripts/bench/applicable.sh [rounds]    (default 40)
# The in-process figure (median <= 2 ms) is `cargo bench --bench applicable`.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
(cd "$root" && cargo build --release --quiet)
exec python3 "$root/scripts/bench/applicable.py" "$root/target/release/majordomus" --rounds "${1:-40}"
