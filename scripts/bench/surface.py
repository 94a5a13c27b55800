#!/usr/bin/env python3
"""The surface's figures: `majordomus surface` cold — a fresh process printing the
embedded surface, against `majordomus --version` in the same run as the floor — and
`majordomus surface diff` of two surfaces of 200 tools (the built surface's tools copied up to
200; the second removes 5, adds 5, tightens a bound and edits descriptions in 20). Medians over
RUNS runs. usage: surface.py BINARY [RUNS]"""
import copy, json, os, statistics, subprocess, sys, tempfile, time

binary = sys.argv[1]
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 21


def timed(args):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        times.append((time.perf_counter() - start) * 1000)
        if out.returncode != 0:
            sys.exit(f"{args}: exit {out.returncode}: {out.stderr.decode()}")
    return statistics.median(times), out.stdout


floor, _ = timed(["--version"])
cold, text = timed(["surface"])
print(f"majordomus surface cold: median {cold:.1f} ms ({len(text)} bytes); "
      f"--version floor {floor:.1f} ms; surface - floor {cold - floor:.1f} ms")

base = json.loads(text)
tools = list(base["tools"].items())
big = copy.deepcopy(base)
big["tools"] = {}
for i in range(200):
    name, tool = tools[i % len(tools)]
    t = copy.deepcopy(tool)
    t["capability"] = f"bench.t{i}"
    big["tools"][f"{name}_{i}"] = t
new = copy.deepcopy(big)
names = list(new["tools"])
for n in names[:5]:
    del new["tools"][n]
for i in range(5):
    t = copy.deepcopy(tools[0][1])
    t["capability"] = f"bench.new{i}"
    new["tools"][f"added_{i}"] = t
for n in names[5:25]:
    new["tools"][n]["description"] += " (edited)"
for n in names[25:26]:
    for p in new["tools"][n]["input"].get("properties", {}).values():
        p["maxLength"] = 3
with tempfile.TemporaryDirectory() as d:
    a, b = os.path.join(d, "old.json"), os.path.join(d, "new.json")
    json.dump(big, open(a, "w"), indent=2)
    json.dump(new, open(b, "w"), indent=2)
    size = os.path.getsize(a)
    same, _ = timed(["surface", "diff", a, a])
    diff, out = timed(["surface", "diff", a, b])
    report = json.loads(out)
print(f"majordomus surface diff, 200 tools ({size} bytes each): median {diff:.1f} ms "
      f"({len(report['changes'])} changes, class {report['class']}); identical surfaces {same:.1f} ms; "
      f"ratio to the --version floor {diff / floor:.1f}x")
