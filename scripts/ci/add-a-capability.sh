#!/usr/bin/env bash
# Adding a capability is one command to green: in a scratch copy of this checkout (its tracked
# and unignored files, committed there as the base), declare `scratch.echo` in
# registry/scratch/echo.yaml with its handler, run `scripts/bless.sh --bump` once, and assert that
# it ends green, that the tool is served (MCP, CLI, HTTP's OpenAPI), that the committed artefacts
# it names changed and nothing else, that the version carries the change as CI grades it, and
# that the whole `cargo test` passes in the copy.
#   scripts/ci/add-a-capability.sh
# The copy builds into its own target directory (a shared one would mix the copy's build-script
# output into this checkout's: cargo names a local package's by name, not path), kept between
# runs under this checkout's target/ so dependencies build once (ADD_CAPABILITY_TARGET_DIR
# overrides it); on its first run it is seeded with this checkout's dependency builds.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
started=$(date +%s)
copy=$(mktemp -d "${TMPDIR:-/tmp}/majordomus-add-capability.XXXXXX")
trap 'rm -rf "$copy"' EXIT
export CARGO_TARGET_DIR=${ADD_CAPABILITY_TARGET_DIR:-$root/target/add-a-capability}

fail=0
ok() { echo "ok    $*"; }
bad() { echo "FAIL  $*"; fail=1; }

# --- The copy: what git knows of this checkout, committed as the base ------------------------
(cd "$root" && git ls-files -z --cached --others --exclude-standard) |
  while IFS= read -r -d '' f; do [ -e "$root/$f" ] && printf '%s\0' "$f"; done |
  tar -C "$root" --null -T - -cf - | tar -C "$copy" -xf -
git -C "$copy" init -q
git -C "$copy" add -A
git -C "$copy" -c user.name=ci -c user.email=ci@example.com commit -qm base
# Seeded on the first run only: later runs reuse what the copy built.
[ -d "$CARGO_TARGET_DIR" ] || "$root/scripts/ci/seed-target.sh" "$CARGO_TARGET_DIR"
cd "$copy"
version_before=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)

# --- The new capability: its declaration and its handler, as the skill says --------------------
mkdir -p registry/scratch
cat >registry/scratch/echo.yaml <<'YAML'
id: scratch.echo
title: Echo a text
description: Answers with the text it was given; the capability scripts/ci/add-a-capability.sh adds.
kind: query
effect: read
determinism: repository
expose:
  mcp: { tool: majordomus_scratch_echo }
  http: GET /api/v1/scratch/echo
  cli: scratch echo
input:
  type: object
  additionalProperties: false
  properties:
    text: { type: string, description: "What to echo", minLength: 1, x-cli-positional: true }
  required: [text]
output:
  type: object
  additionalProperties: false
  properties:
    echo: { type: string }
  required: [echo]
examples:
  - name: echo a word
    input: { text: hello }
tags: [scratch]
YAML
# A handler takes what every other handler takes first (read from an existing one, so this
# follows the handlers' signature wherever it goes).
context_type=$(sed -n 's/^pub fn report(ctx: &\([A-Za-z]*\),.*/\1/p' src/capabilities/health.rs)
context_use=$(grep -m1 -E "^use crate::[a-z_:]+::${context_type:-none};" src/capabilities/health.rs || true)
if [ -z "$context_type" ] || [ -z "$context_use" ]; then
  echo "FAIL  cannot read the handlers' first parameter from src/capabilities/health.rs"
  exit 1
fi
cat >src/capabilities/scratch.rs <<RUST
//! Handlers of the \`scratch\` namespace: the capability scripts/ci/add-a-capability.sh adds.

$context_use
use crate::error::CapabilityError;
use crate::registry::types::scratch::{EchoInput, EchoOutput};

pub fn echo(_ctx: &$context_type, input: EchoInput) -> Result<EchoOutput, CapabilityError> {
    Ok(EchoOutput { echo: input.text })
}
RUST
# Declared beside an existing namespace, with that namespace's own visibility.
sed -i 's/^\(pub[()a-z]*\) mod repository;$/&\n\1 mod scratch;/' src/capabilities/mod.rs
grep -qE '^pub[()a-z]* mod scratch;$' src/capabilities/mod.rs || { echo "FAIL  no place for the module"; exit 1; }

# --- The one command --------------------------------------------------------------------------
bless_started=$(date +%s)
if bash scripts/bless.sh --bump; then
  ok "scripts/bless.sh --bump ended green in $(($(date +%s) - bless_started)) s"
else
  bad "scripts/bless.sh --bump did not end green"
fi

# --- The tool is served --------------------------------------------------------------------------
bin="$CARGO_TARGET_DIR/debug/majordomus"
# A pipe into `grep -q` would stop reading at the first match and fail the writer with SIGPIPE
# under pipefail, so each grep below reads its whole input.
if "$bin" mcp --inspect --toolsets all | grep '"majordomus_scratch_echo"' >/dev/null; then
  ok "majordomus mcp --inspect --toolsets all lists majordomus_scratch_echo"
else
  bad "majordomus mcp --inspect --toolsets all does not list majordomus_scratch_echo"
fi
answer=$("$bin" scratch echo hello 2>&1 || true)
if grep -q '"echo": "hello"' <<<"$answer"; then
  ok "majordomus scratch echo hello answers {\"echo\": \"hello\"}"
else
  bad "majordomus scratch echo hello answered: $answer"
fi
if "$bin" openapi | grep '"/api/v1/scratch/echo"' >/dev/null; then
  ok "majordomus openapi has GET /api/v1/scratch/echo"
else
  bad "majordomus openapi lacks /api/v1/scratch/echo"
fi

# --- The committed artefacts that changed, and nothing else ------------------------------------
changed=$(git status --porcelain --untracked-files=all | cut -c4- | sort)
expected=$(sort <<'EOF'
Cargo.lock
Cargo.toml
README.md
docs/reference/capabilities.md
registry/scratch/echo.yaml
src/capabilities/mod.rs
src/capabilities/scratch.rs
surface.json
tests/snapshots/openapi.json
tests/snapshots/tools/majordomus_scratch_echo.json
tests/snapshots/tools_list_bill.txt
EOF
)
if [ "$changed" = "$expected" ]; then
  ok "the change is the declaration, the handler and the artefacts: $(tr '\n' ' ' <<<"$changed")"
else
  bad "the copy's changes are not the expected files:"
  diff <(echo "$expected") <(echo "$changed") | sed 's/^/    /' || true
fi
# The reference heads each section with the capability's id; the others name the tool.
for pair in README.md:majordomus_scratch_echo docs/reference/capabilities.md:scratch.echo \
  surface.json:majordomus_scratch_echo tests/snapshots/tools_list_bill.txt:majordomus_scratch_echo; do
  f=${pair%%:*} name=${pair#*:}
  if git diff -- "$f" | grep -F "$name" >/dev/null; then
    ok "$f names $name"
  else
    bad "$f does not name $name"
  fi
done
version_after=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -1)
IFS=. read -r major minor patch <<<"$version_before"
if [ "$version_after" = "$major.$minor.$((patch + 1))" ]; then
  ok "an addition bumps the patch under 0.x: $version_before → $version_after"
else
  bad "the version went $version_before → $version_after; an addition needs $major.$minor.$((patch + 1))"
fi
if grep -A1 -x 'name = "majordomus"' Cargo.lock | grep -x "version = \"$version_after\"" >/dev/null; then
  ok "Cargo.lock carries $version_after"
else
  bad "Cargo.lock does not carry $version_after"
fi

# --- CI's own checks on the commit --------------------------------------------------------------
git add -A
git -c user.name=ci -c user.email=ci@example.com commit -qm "scratch.echo"
if bash scripts/ci/surface-check.sh; then
  ok "scripts/ci/surface-check.sh passes on the commit"
else
  bad "scripts/ci/surface-check.sh refuses the commit"
fi
test_started=$(date +%s)
if cargo test --quiet >"$copy.test.log" 2>&1; then
  ok "cargo test passes in the copy ($(grep -c '^test result: ok' "$copy.test.log") test binaries, $(($(date +%s) - test_started)) s)"
else
  bad "cargo test fails in the copy:"
  grep -E '^(test .* FAILED|failures:|    [a-z_:]+$|error)' "$copy.test.log" | head -40 | sed 's/^/    /'
fi
rm -f "$copy.test.log"

echo "add-a-capability: $(($(date +%s) - started)) s"
exit $fail
