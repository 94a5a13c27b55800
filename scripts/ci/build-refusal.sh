#!/usr/bin/env bash
# End-to-end proof that build.rs refuses a bad registry: copy the crate, add two bad declarations
# (one with a tool name another capability already has), and assert that `cargo build` fails
# naming each file, line, column, field and the file it collides with, as cargo's own errors
# (`cargo::error=`) and with the source line and a caret on stderr.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
copy=$("$root/scripts/ci/copy-crate.sh")
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/registry/zz"
cat > "$copy/registry/zz/dup.yaml" <<'YAML'
id: zz.dup
title: A duplicate tool
description: Declares a tool name another capability already has.
kind: query
effect: read
determinism: repository
expose:
  mcp: { tool: majordomus_capabilities }
input: { type: object, additionalProperties: false, properties: {} }
output: { type: object }
YAML
cat > "$copy/registry/zz/bad.yaml" <<'YAML'
id: zz.bad
title: A malformed tool name
description: Declares a tool name clients would reject.
kind: query
effect: read
determinism: repository
expose:
  mcp: { tool: Bad-Name }
  http: POST /api/v1/zz/bad
input: { type: object, additionalProperties: false, properties: {} }
output: { type: object }
YAML
log=$(mktemp)
if (cd "$copy" && CARGO_TARGET_DIR="$copy/target" cargo build --quiet) >"$log" 2>&1; then
  echo "build-refusal: FAIL: cargo build succeeded on a registry with bad declarations" >&2
  exit 1
fi
# Each violation is one of cargo's own error lines (`cargo::error=`)...
errors=(
  'registry/zz/dup.yaml:8:10: expose.mcp.tool "majordomus_capabilities" is already declared by registry/capabilities/list.yaml'
  'registry/zz/bad.yaml:8:10: expose.mcp.tool "Bad-Name" is a malformed tool name: it must match ^[a-z][a-z0-9_]*$'
  'registry/zz/bad.yaml:9:3: expose.http "POST /api/v1/zz/bad" uses POST for a query; a query is served with GET'
  'registry/zz/dup.yaml:1:1: id "zz.dup" has no handler: src/capabilities/zz.rs does not exist'
)
# ...and build.rs's stderr shows the source line with a caret under the column.
carets=(
  '  8 |   mcp: { tool: majordomus_capabilities }'
  '    |          ^'
)
status=0
for line in "${errors[@]}"; do
  if grep -F -- "$line" "$log" | grep -q '^error: majordomus@[^ ]*: registry/'; then
    echo "build-refusal: ok: $line"
  else
    echo "build-refusal: FAIL: missing from cargo's errors: $line" >&2
    status=1
  fi
done
for line in "${carets[@]}"; do
  if grep -qxF -- "$line" "$log"; then
    echo "build-refusal: ok: caret line: $line"
  else
    echo "build-refusal: FAIL: missing from build.rs's stderr: $line" >&2
    status=1
  fi
done
if grep -q "panicked" "$log"; then
  echo "build-refusal: FAIL: build.rs panicked instead of reporting" >&2
  status=1
fi
if [ $status -ne 0 ]; then
  echo "--- build output" >&2
  cat "$log" >&2
fi
rm -f "$log"
exit $status
