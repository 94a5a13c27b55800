#!/usr/bin/env bash
# Rewrites every committed artefact a change to the registry (or to anything else the public
# surface is made of) touches, then checks them, so a capability change is one command to green:
#
#   surface.json                          tests/surface.rs (the build's surface)
#   tests/snapshots/tools/*.json          tests/projection_snapshots.rs (one file per tool; a
#   tests/snapshots/openapi.json            removed tool's file is deleted)
#   tests/snapshots/tools_list_core.json
#   tests/snapshots/tools_list_bill.txt
#   docs/reference/*.md                   tests/reference.rs (`majordomus reference`), which also
#   README.md: the tool table, the bill     rewrites the README's tool table and its bill figures
#   README.md: the figure blocks          tests/readme_figures.rs (from docs/figures records)
#   tests/snapshots/fixture_*             tests/generator.rs (the generator over the fixture
#                                           registry; blessed only when it differs)
#
# Each is rewritten by the test that compares it, under UPDATE_SNAPSHOTS=1, so what is written is
# by construction what the check reads. The surface's version is graded as CI grades it
# (`majordomus surface check`): the script says which bump the change needs, and `--bump` writes
# it into Cargo.toml and Cargo.lock. Measured figures (docs/figures/*.json) are records of
# benchmark runs; the script never rewrites one.
#
# Exit 0: every artefact matches and the version carries the change. Exit 1: it names what still
# differs. Exit 2: bad usage.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'EOF'
usage: scripts/bless.sh [--bump] [--against REV] [--full]

Rewrites surface.json, tests/snapshots/ (tools, openapi, core list, bill, and the generator's
fixture when it differs), docs/reference/ and the README's generated blocks, then checks them
and grades the surface's version against REV.

  --bump         apply the version bump the surface change needs to Cargo.toml and Cargo.lock
  --against REV  the revision whose surface.json the version is graded against (default: the
                 merge base with origin/main when there is one, else HEAD, the last commit)
  --full         end with the whole `cargo test` instead of only the artefact checks
EOF
}

bump=0
full=0
against=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bump) bump=1 ;;
    --full) full=1 ;;
    --against)
      [ $# -ge 2 ] || { usage >&2; exit 2; }
      against=$2
      shift
      ;;
    -h | --help) usage; exit 0 ;;
    *) echo "bless: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done

step() { printf '\n== bless: %s\n' "$*"; }
remaining=()

# The tests that each compare one committed artefact and rewrite it under UPDATE_SNAPSHOTS=1.
# Two of them write README.md, so they run on one thread: each reads the README the other wrote.
REWRITERS=(
  projection_snapshots::
  surface::surface_json_at_the_root_is_what_the_build_prints
  reference::the_committed_reference_and_readme_table_are_what_the_binary_writes
  reference::the_readmes_tool_list_figures_are_what_the_binary_bills
  readme_figures::
)
# What is checked afterwards: the rewriters' whole modules, and the tests that read the registry's
# names out of the prose (a tool named in the README must be declared).
CHECKS=(projection_snapshots:: surface:: reference:: readme_figures:: mcp_prose:: generator::)

step "cargo build (build.rs validates the registry)"
cargo build

# --- The version the surface change needs -------------------------------------------------------
if [ -z "$against" ]; then
  if git rev-parse --verify --quiet origin/main >/dev/null; then
    against=$(git merge-base HEAD origin/main)
  else
    against=$(git rev-parse --verify --quiet HEAD || true)
  fi
fi

# Prints the check's JSON answer; its exit status is the check's (10: the version does not carry
# the change).
surface_check() { cargo run --quiet -- surface check --against "$against" 2>/dev/null; }
field() { sed -n "s/^  \"$1\": \"\\{0,1\\}\\([^\",]*\\)\"\\{0,1\\},\\{0,1\\}$/\\1/p"; }

version_missing=""
if [ -z "$against" ] || ! git cat-file -e "$against:surface.json" 2>/dev/null; then
  step "version: no surface.json at ${against:-any commit} to grade it against"
else
  step "version: the surface against $against"
  report=$(surface_check || true)
  old=$(printf '%s\n' "$report" | field old_version)
  new=$(printf '%s\n' "$report" | field new_version)
  need=$(printf '%s\n' "$report" | field bump)
  class=$(printf '%s\n' "$report" | field class)
  carried=$(printf '%s\n' "$report" | field carried)
  if [ -z "$old" ]; then
    echo "bless: surface check answered nothing readable:" >&2
    cargo run --quiet -- surface check --against "$against" >&2 || true
    exit 1
  fi
  cargo run --quiet -- --format text surface check --against "$against" 2>/dev/null || true
  if [ "$need" = none ]; then
    echo "no change to the surface since $against: no bump needed (version $new)"
  elif [ "$carried" = true ]; then
    echo "a $class change needs a $need bump from $old; $new carries it"
  else
    IFS=. read -r major minor patch <<<"${old%%[-+]*}"
    case "$need" in
      major) target="$((major + 1)).0.0" ;;
      minor) target="$major.$((minor + 1)).0" ;;
      *) target="$major.$minor.$((patch + 1))" ;;
    esac
    if [ $bump -eq 1 ]; then
      echo "a $class change needs a $need bump from $old: writing $target into Cargo.toml and Cargo.lock"
      # The [package] table's own version line, and the lock's entry for this package only.
      awk -v v="$target" '
        /^\[/ { in_package = ($0 == "[package]") }
        in_package && !done && /^version = "/ { print "version = \"" v "\""; done = 1; next }
        { print }' Cargo.toml >Cargo.toml.bless && mv Cargo.toml.bless Cargo.toml
      awk -v v="$target" '
        $0 == "name = \"majordomus\"" { ours = 1; print; next }
        ours && /^version = "/ { print "version = \"" v "\""; ours = 0; next }
        { ours = 0; print }' Cargo.lock >Cargo.lock.bless && mv Cargo.lock.bless Cargo.lock
      step "cargo build (at $target)"
      cargo build
      if ! surface_check >/dev/null; then
        echo "bless: the version is $target and the surface check still refuses it" >&2
        exit 1
      fi
    else
      version_missing="a $class change needs a $need bump: $old → $target (Cargo.toml says $new); rerun with --bump to write it"
      echo "$version_missing"
    fi
  fi
fi

# --- The generator's snapshots -------------------------------------------------------------------
# Checked first: a capability change leaves them alone, and blessing them needs a build of the
# tests without the fixture's golden code (the bless-snapshots feature), which is a second build
# of the crate. Only when the check fails (or the golden code no longer compiles) are they blessed.
step "the generator's fixture snapshots"
if cargo test --quiet --test integration generator:: >/dev/null 2>&1; then
  echo "unchanged"
else
  echo "they differ: rewriting them"
  # BLESS-GENERATOR: the one line naming where the generator's snapshot tests live.
  UPDATE_SNAPSHOTS=1 cargo test --features bless-snapshots --test integration generator::
fi

# --- Every other artefact, from the tests that compare them ----------------------------------
step "rewriting surface.json, tests/snapshots, docs/reference and the README's generated blocks"
UPDATE_SNAPSHOTS=1 cargo test --test integration -- --test-threads=1 "${REWRITERS[@]}"

# --- The checks ------------------------------------------------------------------------------
if [ $full -eq 1 ]; then
  step "cargo test (the whole suite)"
  cargo test || remaining+=("cargo test fails: the failing tests are named above")
else
  step "checking the artefacts (cargo test --test integration ${CHECKS[*]})"
  cargo test --test integration -- "${CHECKS[@]}" ||
    remaining+=("the artefact checks fail: the failing tests are named above")
fi
[ -z "$version_missing" ] || remaining+=("version: $version_missing")

step "what changed"
git status --short -- surface.json tests/snapshots docs/reference README.md Cargo.toml Cargo.lock ||
  true

if [ ${#remaining[@]} -gt 0 ]; then
  printf '\nbless: NOT green:\n' >&2
  printf '  - %s\n' "${remaining[@]}" >&2
  exit 1
fi
printf '\nbless: green. Review the diff (git diff) and commit the artefacts with the change.\n'
