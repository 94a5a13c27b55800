#!/usr/bin/env python3
"""What applies to a path, and the layer in the instructions, over stdio.

Usage: applicable.py [MAJORDOMUS] [--rounds N] [--work DIR] [--only-applicable] [--kit DIR]
(default: target/release/majordomus; scripts/bench/applicable.sh builds it and runs this).

Writes two layers of 10,000 rules each into DIR (kept between runs), the same files but for the
class: "scoped" has 2,000 rules scoped by one to three globs and 500 blocking ones (the issue's
layer; its instructions carry the 500 statements up to 16 KiB), "advisory" has no blocking rule,
so its instructions are today's sentences alone (what `initialize` said before the layer was in
it). Then, in one run and in turns so both sides share the machine's drift:
1. on one warm `majordomus mcp` of the scoped layer, in turns each round: tools/call
   majordomus_get of one rule (the same rule every round, so the per-generation cache answers
   it after the first), and majordomus_applicable for 100 paths twice: (a) like for like, the
   same 100 paths every round, so the cache answers it too, and (b) a miss, 100 new paths every
   round, so the handler runs every time; each the median round trip of N rounds, with the
   server's CPU per call; target <= 3x get (the issue's figure; which of (a) and (b) it means is
   the reader's call, so both are printed); and the same three again with the answer's line
   read but not decoded (this client's json.loads of 58 KB alone is about 3x a whole get);
2. `initialize` round trip on a fresh process whose index is already built (a modern
   tools/call opens it first, so this first initialize of the generation also derives the
   layer's part of the instructions), scoped layer against advisory layer, median of N rounds
   each; target <= 2x; and a modern `server/discover` on one warm process (the derived part
   kept for the generation), against the same on a layer of 100 rules as a floor.
And, unless the kit's floor program cannot be built, where the stdio time of 1. goes: the kit's
floor (`$MAJORDOMUS_PEERS_KIT/floor`, or --kit DIR/floor: canned bytes, no JSON parser) is copied
into DIR, made to answer each tools/call with the exact result bytes majordomus gave for it, and
timed in the same turns; the difference is the server's work, the floor is moving and reading the
bytes (this client's readline and json.loads included). The server's CPU per call is read from
its threads' /proc schedstat. --only-applicable stops after this (no initialize figures).
Prints each figure and the ratios. Python 3.9, no dependencies.
"""

import json
import os
import statistics
import subprocess
import sys
import time

from mcp_pipe import Session

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
MANIFEST = "version: 1\n"
BODY = (
    "## Why\n\nSeveral people and agents edit the same tree at the same time; a change that does "
    "not build turns every later bisect into archaeology.\n\n## How to comply\n\n- Run the "
    "formatter, the linter and the tests.\n- Say what each file owns.\n"
)


def rule(i, blocking):
    scope = ""
    if i % 5 == 0:
        globs = [
            '"src/m%03d/**/*.%s"' % ((i + g) % 400, ["rs", "ts", "md"][g]) for g in range(1 + i % 3)
        ]
        scope = "applies_to: [%s]\n" % ", ".join(globs)
    klass = "blocking" if blocking and i % 20 == 0 else "advisory"
    return (
        "---\nid: r-%05d\nversion: 1\nkind: rule\ntitle: Rule %d\ndescription: A generated rule.\n"
        "statement: Keep rule %d in mind when you touch its files.\nstatus: active\nclass: %s\n%s---\n\n"
        "# Rule %d\n\n%s" % (i, i, i, klass, scope, i, BODY)
    )


def layer(binary, root, blocking):
    if os.path.isdir(os.path.join(root, ".ai", "repo", "rules", "group-019")):
        return
    subprocess.run(["rm", "-rf", root], check=True)
    os.makedirs(root)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run([binary, "init", "--repo", root], check=True, stdout=subprocess.DEVNULL)
    for i in range(10_000):
        d = os.path.join(root, ".ai", "repo", "rules", "group-%03d" % (i // 500))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "rule-%05d.md" % i), "w") as f:
            f.write(rule(i, blocking))
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=b@x", "-c", "user.name=b", "commit", "-qm", "layer"], cwd=root, check=True
    )


def Stdio(binary, repo, env=None, argv=None):
    """`BINARY --repo REPO mcp` (or `argv`) as one session."""
    return Session(argv or [binary, "--repo", repo, "mcp"], env=env)


def tool(name, arguments, meta=None):
    params = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return params


def checked(result, what):
    if result.get("isError"):
        raise SystemExit("%s: %s" % (what, json.dumps(result)[:300]))
    return result["structuredContent"]


FLOOR_PATCH = (
    "    let canned = |var: &str| std::env::var(var).ok().and_then(|p| std::fs::read(p).ok()).unwrap_or_default();\n"
    "    let (applicable, get) = (canned(\"FLOOR_APPLICABLE\"), canned(\"FLOOR_GET\"));\n"
)


def floor_program(kit, work):
    """The kit's floor, answering tools/call with FLOOR_APPLICABLE's bytes for majordomus_applicable
    and FLOOR_GET's for any other tool; None when there is no kit or no cargo."""
    source = os.path.join(kit, "floor", "src", "main.rs")
    target = os.path.join(work, "floor-applicable")
    binary = os.path.join(target, "target", "release", "peer-floor")
    if os.path.exists(binary):
        return binary
    if not os.path.exists(source):
        print("(no floor: %s is missing; give --kit or MAJORDOMUS_PEERS_KIT)" % source)
        return None
    subprocess.run(["rm", "-rf", target], check=True)
    subprocess.run(["cp", "-r", os.path.join(kit, "floor"), target], check=True)
    subprocess.run(["rm", "-rf", os.path.join(target, "target")], check=True)
    main_rs = os.path.join(target, "src", "main.rs")
    src = open(main_rs).read()
    before = 'b"\\"tools/call\\"" => Some(&call),'
    after = (
        'b"\\"tools/call\\"" => Some(if line.windows(21).any(|w| w == b"majordomus_applicable") '
        "{ &applicable } else { &get }),"
    )
    anchor = "    let resources ="
    if before not in src or anchor not in src:
        raise SystemExit("the kit's floor changed; update floor_program in this script")
    src = src.replace(before, after).replace(anchor, FLOOR_PATCH + anchor, 1)
    src = src.replace("    let call = ", "    let _call = ")
    open(main_rs, "w").write(src)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=target, check=True)
    return binary


def server_cpu_ns(pid):
    """The CPU time of every thread of `pid` so far, in nanoseconds (schedstat's first field)."""
    total = 0
    for task in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, task)) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that ended between the listing and the read
    return total


def where_it_goes(binary, scoped, rule_uri, rounds, kit, work):
    """Splits 1.'s stdio time into the server's share and the bytes' share (see the docstring)."""
    paths_of = lambda r: ["src/m%03d/x/f%d.rs" % ((r * 100 + p) % 400, r) for p in range(100)]
    s = Stdio(binary, scoped)
    s.initialize()
    canned = {}
    for name, arguments in (("applicable", {"paths": paths_of(0)}), ("get", {"uri": rule_uri})):
        s.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": s.next_id, "method": "tools/call",
                           "params": tool("majordomus_" + name, arguments)})
        s.process.stdin.write(line.encode() + b"\n")
        s.process.stdin.flush()
        answer = s.process.stdout.readline()
        start = answer.index(b'"result":') + len(b'"result":')
        path = os.path.join(work, "floor-%s.json" % name)
        with open(path, "wb") as f:
            f.write(answer[start:answer.rindex(b"}")])
        canned[name] = path
    floor_binary = floor_program(kit, work)
    floor = None
    if floor_binary:
        env = dict(os.environ, FLOOR_APPLICABLE=canned["applicable"], FLOOR_GET=canned["get"])
        floor = Stdio(floor_binary, "-", env=env, argv=[floor_binary, "x"])
        floor.initialize()
    times = {"mj-applicable": [], "mj-get": [], "floor-applicable": [], "floor-get": [], "decode": []}
    cpu = {"applicable": [], "get": []}
    for r in range(1, rounds + 1):
        args = {"paths": paths_of(r)}
        before = server_cpu_ns(s.process.pid)
        ms, result, _ = s.timed("tools/call", tool("majordomus_applicable", args))
        cpu["applicable"].append((server_cpu_ns(s.process.pid) - before) / 1e6)
        times["mj-applicable"].append(ms)
        before = server_cpu_ns(s.process.pid)
        ms, _, _ = s.timed("tools/call", tool("majordomus_get", {"uri": rule_uri}))
        cpu["get"].append((server_cpu_ns(s.process.pid) - before) / 1e6)
        times["mj-get"].append(ms)
        if floor:
            times["floor-applicable"].append(floor.timed("tools/call", tool("majordomus_applicable", args))[0])
            times["floor-get"].append(floor.timed("tools/call", tool("majordomus_get", {"uri": rule_uri}))[0])
        text = json.dumps(result).encode()
        started = time.perf_counter()
        json.loads(text)
        times["decode"].append((time.perf_counter() - started) * 1e3)
    s.close()
    m = {k: statistics.median(v) for k, v in times.items() if v}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    size = os.path.getsize(canned["applicable"])
    print("where the stdio time of (b), the miss, goes (median of %d turns; the answer's result is %d bytes):" % (rounds, size))
    print("  majordomus: applicable (a miss) %.3f ms, get %.3f ms: %.2fx" % (m["mj-applicable"], m["mj-get"], m["mj-applicable"] / m["mj-get"]))
    print("  server CPU per call (all threads): applicable %.3f ms, get %.3f ms" % (c["applicable"], c["get"]))
    if floor:
        floor.close()
        print("  floor, same bytes: applicable %.3f ms, get %.3f ms: %.2fx" % (m["floor-applicable"], m["floor-get"], m["floor-applicable"] / m["floor-get"]))
        print("  the server's share of applicable: %.3f ms; the bytes' share (pipe, readline, json.loads): %.3f ms"
              % (m["mj-applicable"] - m["floor-applicable"], m["floor-applicable"]))
    print("  of which this client's json.loads of the answer: %.3f ms" % m["decode"])


def main():
    args = sys.argv[1:]
    rounds = 40
    work = "/tmp/majordomus-bench-applicable"
    binary = "target/release/majordomus"
    only_applicable = False
    kit = os.environ.get("MAJORDOMUS_PEERS_KIT", "/work/shared/bench/peers")
    while args:
        a = args.pop(0)
        if a == "--rounds":
            rounds = int(args.pop(0))
        elif a == "--work":
            work = args.pop(0)
        elif a == "--only-applicable":
            only_applicable = True
        elif a == "--kit":
            kit = args.pop(0)
        else:
            binary = a
    binary = os.path.abspath(binary)
    scoped, advisory = os.path.join(work, "scoped"), os.path.join(work, "advisory")
    layer(binary, scoped, True)
    layer(binary, advisory, False)
    rule_uri = "majordomus://rule/r-05001@1"

    # 1. applicable against get, one warm process, in turns: (a) a hit beside a hit, (b) a miss.
    s = Stdio(binary, scoped)
    s.initialize()
    fixed = {"paths": ["src/m%03d/x/fixed.rs" % (p % 400) for p in range(100)]}
    s.call("tools/call", tool("majordomus_get", {"uri": rule_uri}))
    s.call("tools/call", tool("majordomus_applicable", fixed))
    names = ("get", "hit", "miss", "get-raw", "hit-raw", "miss-raw")
    times = {name: [] for name in names}
    cpu = {name: [] for name in names}
    sizes = {}
    for r in range(rounds):
        new = {"paths": ["src/m%03d/x/f%d.rs" % ((r * 100 + p) % 400, r) for p in range(100)]}
        new_raw = {"paths": ["src/m%03d/x/g%d.rs" % ((r * 100 + p) % 400, r) for p in range(100)]}
        turns = [("get", "majordomus_get", {"uri": rule_uri}),
                 ("hit", "majordomus_applicable", fixed),
                 ("miss", "majordomus_applicable", new),
                 ("get-raw", "majordomus_get", {"uri": rule_uri}),
                 ("hit-raw", "majordomus_applicable", fixed),
                 ("miss-raw", "majordomus_applicable", new_raw)]
        # Rotated each round, so no call always follows the same one.
        for name, tool_name, arguments in turns[r % 6:] + turns[:r % 6]:
            before = server_cpu_ns(s.process.pid)
            if name.endswith("-raw"):
                # The answer's line read but not decoded: the server and the pipe, not json.loads.
                started = time.perf_counter()
                size = s.round_trip("tools/call", tool(tool_name, arguments))
                ms = (time.perf_counter() - started) * 1e3
            else:
                ms, result, size = s.timed("tools/call", tool(tool_name, arguments))
                answer = checked(result, tool_name)
                if tool_name == "majordomus_applicable":
                    assert answer["total"] > 8000 and len(answer["rules"]) == 100, answer["total"]
            cpu[name].append((server_cpu_ns(s.process.pid) - before) / 1e6)
            times[name].append(ms)
            sizes[name] = size
    s.close()
    m = {k: statistics.median(v) for k, v in times.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    print("stdio tools/call, 10,000 rules (2,000 scoped), median of %d rounds taken in turns (load %s):"
          % (rounds, " ".join("%.2f" % x for x in os.getloadavg())))
    print("  majordomus_get, the same rule every round (a cache hit):      %.3f ms, server CPU %.3f ms (%d bytes)"
          % (m["get"], c["get"], sizes["get"]))
    print("  majordomus_applicable, the same 100 paths every round (a hit): %.3f ms, server CPU %.3f ms (%d bytes)"
          % (m["hit"], c["hit"], sizes["hit"]))
    print("  majordomus_applicable, 100 new paths every round (a miss):     %.3f ms, server CPU %.3f ms (%d bytes)"
          % (m["miss"], c["miss"], sizes["miss"]))
    print("  (a) like for like, hit / hit:  applicable / get = %.2fx (target <= 3)" % (m["hit"] / m["get"]))
    print("  (b) a miss against a hit:      applicable / get = %.2fx (target <= 3)" % (m["miss"] / m["get"]))
    print("  the same, the answer's line read but not decoded by this client (no json.loads):")
    print("    get %.3f ms, applicable hit %.3f ms, applicable miss %.3f ms"
          % (m["get-raw"], m["hit-raw"], m["miss-raw"]))
    print("    (a) hit / hit = %.2fx, (b) miss / hit = %.2fx"
          % (m["hit-raw"] / m["get-raw"], m["miss-raw"] / m["get-raw"]))
    where_it_goes(binary, scoped, rule_uri, rounds, kit, work)
    if only_applicable:
        return

    # 2. initialize with and without the 500 blocking rules, a fresh process each round.
    times = {scoped: [], advisory: []}
    text = {}
    for r in range(rounds):
        for repo in (scoped, advisory) if r % 2 == 0 else (advisory, scoped):
            p = Stdio(binary, repo)
            # Opens the index first: the round trip below is the instructions, not the index build.
            checked(p.call("tools/call", tool("majordomus_get", {"uri": rule_uri}, MODERN_META))[0], "warm-up")
            ms, result, _ = p.initialize()
            times[repo].append(ms)
            text[repo] = result["instructions"]
            p.close()
    i_s, i_a = statistics.median(times[scoped]), statistics.median(times[advisory])
    print("initialize, 10,000 rules, 500 blocking: median %.3f ms (instructions %d bytes)" % (i_s, len(text[scoped].encode())))
    print("initialize, 10,000 rules, none blocking: median %.3f ms (instructions %d bytes)" % (i_a, len(text[advisory].encode())))
    print("  with / without the blocking rules = %.2fx (target <= 2)" % (i_s / i_a))
    assert "r-00000@1" in text[scoped] and "Left out for length" in text[scoped]
    assert "Blocking rules" not in text[advisory]

    # And server/discover, the modern era's instructions, on one warm process each.
    small = os.path.join(work, "small")
    if not os.path.isdir(small):
        subprocess.run(["git", "init", "-q", small], check=True)
        subprocess.run([binary, "init", "--repo", small], check=True, stdout=subprocess.DEVNULL)
    discover = {}
    for repo in (scoped, advisory, small):
        p = Stdio(binary, repo)
        p.call("server/discover", {"_meta": MODERN_META})
        discover[repo] = statistics.median(p.timed("server/discover", {"_meta": MODERN_META})[0] for _ in range(rounds))
        p.close()
    print(
        "server/discover, warm: %.3f ms with the blocking rules, %.3f ms without: %.2fx (the scaffold's layer: %.3f ms)"
        % (discover[scoped], discover[advisory], discover[scoped] / discover[advisory], discover[small])
    )


if __name__ == "__main__":
    main()
