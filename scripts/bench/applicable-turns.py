#!/usr/bin/env python3
"""Two majordomus binaries in turns: the server's share of a repeated majordomus_applicable.

Usage: applicable-turns.py BEFORE AFTER [ROUNDS] [--work DIR]   (ROUNDS default 300)

On applicable.py's scoped layer (10,000 rules, 2,000 scoped; DIR as there, default
/tmp/majordomus-bench-applicable, written by applicable.py if missing) one warm `majordomus mcp`
of each binary answers, in turns, tools/call majordomus_applicable for 100 paths: new paths each
round (the executor's cache misses) and the same 100 paths every round (a hit). Prints each
side's median round trip and the server's CPU per call (its threads' /proc schedstat), and the
ratios before/after. Python 3.9, no dependencies.
"""
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import applicable as A  # noqa: E402

args = sys.argv[1:]
work = "/tmp/majordomus-bench-applicable"
if "--work" in args:
    i = args.index("--work")
    work = args[i + 1]
    del args[i:i + 2]
before, after = args[0], args[1]
rounds = int(args[2]) if len(args) > 2 else 300
repo = os.path.join(work, "scoped")
A.layer(after, repo, True)
paths_of = lambda r: ["src/m%03d/x/f%d.rs" % ((r * 100 + p) % 400, r) for p in range(100)]
servers = {}
for name, b in (("before", before), ("after", after)):
    s = A.Stdio(b, repo); s.initialize()
    s.timed("tools/call", A.tool("majordomus_applicable", {"paths": paths_of(0)}))
    servers[name] = s
t = {(n, k): [] for n in servers for k in ("miss", "hit")}
c = {(n, k): [] for n in servers for k in ("miss", "hit")}
for r in range(1, rounds + 1):
    for n, s in servers.items():
        for k, paths in (("miss", paths_of(r)), ("hit", paths_of(0))):
            cpu = A.server_cpu_ns(s.process.pid)
            ms, _, _ = s.timed("tools/call", A.tool("majordomus_applicable", {"paths": paths}))
            c[(n, k)].append((A.server_cpu_ns(s.process.pid) - cpu) / 1e6)
            t[(n, k)].append(ms)
for k in ("miss", "hit"):
    b, a = statistics.median(t[("before", k)]), statistics.median(t[("after", k)])
    cb, ca = statistics.median(c[("before", k)]), statistics.median(c[("after", k)])
    print("%s: round trip before %.3f ms, after %.3f ms (%.2fx); server CPU before %.3f ms, after %.3f ms (%.2fx)" % (k, b, a, b / a, cb, ca, cb / ca))
for s in servers.values(): s.close()
