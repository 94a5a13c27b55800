#!/usr/bin/env python3
"""The size of every listing's default answer on a generated layer of 10,000 objects and 10,000
issues, 1,000 files left by interrupted writes, with a board that has peers, claims, messages and
executions on it.

Usage: listings.py BINARY [WORKDIR] [--record]

A listing is a tool whose answer carries a list (its output schema has an array property); each
is called once with only the arguments it requires, and its answer is measured as the model gets
it: the tool result's text, compact JSON. Every default answer is meant to stay within 16 KB
(16,384 bytes); the script exits non-zero, after printing the table, when one does not.
`--record` writes `docs/figures/listings.json` for the README (scripts/bench/figures.py).
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcp_pipe import Session  # noqa: E402
import figures  # noqa: E402

BUDGET = 16 * 1024
OBJECTS = 10_000
ISSUES = 10_000
ORPHANS = 1_000
# What a call needs beyond its defaults: only the arguments a tool requires.
REQUIRED = {
    "majordomus_capability": {"id": "objects.get"},
    "majordomus_applicable": {"paths": ["src/m001/lib.rs"]},
    "majordomus_get": {"uri": "majordomus://rule/r-00000@1"},
    "majordomus_search": {"query": "rule"},
    "majordomus_check": {"paths": ["src/m001/lib.rs"]},
    "majordomus_recover_orphans": {"older_than_seconds": 3600, "check": True},
}
# Writers are measured by the answers the board set-up gives, not called again here.
WRITERS = {
    "majordomus_announce", "majordomus_claim", "majordomus_release", "majordomus_send",
    "majordomus_mark_read", "majordomus_knowledge_record", "majordomus_plan_claim",
    "majordomus_plan_create", "majordomus_plan_release", "majordomus_plan_transition",
}

BODY = "## Why\n\nA generated object of a large layer.\n\n## How to comply\n\n- Read it.\n"


def rule(i):
    scope = 'applies_to: ["src/m%03d/**"]\n' % (i % 400) if i % 5 else ""
    klass = "blocking" if i % 50 == 0 else "advisory"
    return (
        "---\nid: r-%05d\nversion: 1\nkind: rule\ntitle: Rule %d\ndescription: A generated rule.\n"
        "statement: Keep rule %d in mind when you touch its files.\nstatus: active\nclass: %s\n%s---\n\n"
        "# Rule %d\n\n%s" % (i, i, i, klass, scope, i, BODY)
    )


def issue(i):
    depends = "depends_on: [i-%05d]\n" % (i - 1) if i % 4 else ""
    return (
        "id: i-%05d\ntitle: Generated issue %d of a large plan\npaths: [\"src/m%03d/**\"]\n"
        "priority: %d\nlabels: [gen]\n%s" % (i, i, i % 400, i % 4, depends)
    )


def layer(binary, root):
    """Writes the layer once; a second run reuses it."""
    done = os.path.join(root, ".ai", "repo", "project", "issues", "i-%05d.yaml" % (ISSUES - 1))
    if os.path.isfile(done):
        return
    subprocess.run(["rm", "-rf", root], check=True)
    os.makedirs(root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([binary, "init", "--repo", root], check=True, stdout=subprocess.DEVNULL)
    for i in range(OBJECTS):
        d = os.path.join(root, ".ai", "repo", "rules", "g-%03d" % (i // 500))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "r-%05d.md" % i), "w") as f:
            f.write(rule(i))
    d = os.path.join(root, ".ai", "repo", "project", "issues")
    os.makedirs(d, exist_ok=True)
    for i in range(ISSUES):
        with open(os.path.join(d, "i-%05d.yaml" % i), "w") as f:
            f.write(issue(i))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "layer"], cwd=root, check=True
    )


def orphans(root):
    """Temporary files two hours old, as interrupted writes leave them, outside what git tracks."""
    d = os.path.join(root, ".ai", "local", "interrupted")
    os.makedirs(d, exist_ok=True)
    old = time.time() - 7200
    for i in range(ORPHANS):
        path = os.path.join(d, "r-%05d.md.4242.mj-tmp" % i)
        with open(path, "w") as f:
            f.write("interrupted")
        os.utime(path, (old, old))


def call(session, name, arguments):
    result, _ = session.call("tools/call", {"name": name, "arguments": arguments})
    if result.get("isError"):
        raise SystemExit("%s: %s" % (name, json.dumps(result)[:300]))
    return result


def board(session, others):
    """Peers that announce, claim and write to each other: claims, messages and executions."""
    for n, peer in enumerate(others):
        call(peer, "majordomus_announce", {"intent": "generated peer %d at work" % n,
                                           "paths": ["src/m%03d/**" % n]})
    for n, peer in enumerate(others):
        for k in range(10):
            call(peer, "majordomus_claim", {"globs": ["src/m%03d/f%d/**" % (n, k)], "reason": "work %d" % k})
            call(peer, "majordomus_send", {"subject": "note %d from peer %d" % (k, n),
                                           "body": "A generated message to everyone. " * 4, "all": True})
    call(session, "majordomus_announce", {"intent": "measuring listings"})


def start(binary, root):
    s = Session([binary, "--repo", root, "mcp", "--toolsets", "all"])
    s.initialize()
    s.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    s.process.stdin.flush()
    return s


def main():
    args = [a for a in sys.argv[1:] if a != "--record"]
    if not args:
        raise SystemExit(__doc__)
    binary = os.path.abspath(args[0])
    root = os.path.abspath(args[1] if len(args) > 1 else "/tmp/majordomus-listings")
    loads = [figures.load_average()]
    layer(binary, root)
    orphans(root)
    session = start(binary, root)
    others = [start(binary, root) for _ in range(8)]
    board(session, others)
    tools, _ = session.call("tools/list", {})
    rows, over = [], []
    for tool in sorted(tools["tools"], key=lambda t: t["name"]):
        name = tool["name"]
        out = tool.get("outputSchema", {}).get("properties", {})
        if name in WRITERS or not any("array" in json.dumps(v.get("type")) for v in out.values()):
            continue
        result = call(session, name, REQUIRED.get(name, {}))
        size = len(result["content"][0]["text"].encode())
        counts = {k: len(v) for k, v in result.get("structuredContent", {}).items() if isinstance(v, list)}
        shown = ", ".join("%s: %d" % (k, n) for k, n in sorted(counts.items()) if n)
        rows.append([name, f"{size:,}", shown or "—"])
        if size > BUDGET:
            over.append(name)
    loads.append(figures.load_average())
    for s in [session] + others:
        s.process.stdin.close()
        s.process.wait()
    print("| tool | default answer B | lists (items) |")
    print("|---|---:|---|")
    for r in rows:
        print("| %s |" % " | ".join(r))
    print("%d listings; over %d B: %s" % (len(rows), BUDGET, ", ".join(over) or "none"))
    if "--record" in sys.argv:
        figures.record("listings", build="debug" if "/debug/" in binary else "release", loads=loads,
                       columns=["tool", "default answer B", "lists (items)"], rows=rows,
                       values={"count": len(rows), "objects": f"{OBJECTS:,}", "issues": f"{ISSUES:,}",
                               "orphans": f"{ORPHANS:,}",
                               "budget": f"{BUDGET // 1024} KB",
                               "largest": f"{max(int(r[1].replace(',', '')) for r in rows):,} bytes"})
    if over:
        sys.exit(1)


if __name__ == "__main__":
    main()
