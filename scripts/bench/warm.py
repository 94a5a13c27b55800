#!/usr/bin/env python3
"""The wait after start, beside the bench kit's rmcp peer: servers over stdio on one layer, each
started fresh in turn (round after round, so all see the same machine), measured from spawn.

For each server and round:
  cold       spawn -> `initialize` answered (ms)
  first      the first search, sent as soon as `initialize` is answered (ms)
  steady     a search every 50 ms from then on for SEARCH_SECONDS: the slowest, and how many took
             over 50 ms (each search a new letter-case spelling, so no answer comes from a cache)
  cpu30      CPU (user + system, every thread) from spawn to LIFE seconds after it (s)
  idle       share of one core over IDLE seconds of nothing, after LIFE (%)
Prints medians over rounds, their ratio to rmcp's, and the load average before and after.

usage: warm.py --repo REPO --layer LAYER --rmcp PEER [--rounds 2] [--search-seconds 20]
               [--life 30] [--idle 20] [--query "Quasar Needle"] [--first-start] [--record]
               NAME=BINARY...
  REPO is a majordomus repository whose layer holds LAYER's files (see kit.sh's kit_repo);
  PEER is the kit's rmcp server (`peer-rmcp`), given LAYER. --first-start removes the search
  postings an earlier start kept (REPO/.ai/local/search) before each majordomus start, so every
  start is a repository's first. With --record, the medians are the README's `warm` figure
  (`warm-first` with --first-start; scripts/bench/figures.py), rmcp's row first."""
import argparse, json, os, shutil, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "warm", "version": "1"}}}
HZ = os.sysconf("SC_CLK_TCK")


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def spellings(query, n=64):
    """`n` letter-case spellings of `query`: the same hits and work, distinct cache keys."""
    letters = [i for i, c in enumerate(query) if c.isalpha()]
    out = []
    for k in range(n):
        chars = list(query.lower())
        for bit, at in enumerate(letters[:16]):
            if (k >> bit) & 1:
                chars[at] = chars[at].upper()
        out.append("".join(chars))
    return out


class Server:
    def __init__(self, argv, search_tool):
        self.search_tool = search_tool
        self.spawned = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.call_raw(INITIALIZE)
        self.cold = time.perf_counter() - self.spawned
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call_raw(self, message):
        self.send(message)
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("a server closed its output")
        answer = json.loads(line)
        if "error" in answer or answer.get("result", {}).get("isError"):
            sys.exit(f"a server refused a call: {line[:300]!r}")
        return answer

    def search(self, query):
        self.next_id += 1
        started = time.perf_counter()
        self.call_raw({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                       "params": {"name": self.search_tool, "arguments": {"query": query}}})
        return time.perf_counter() - started

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def one(argv, tool, a, queries):
    if a.first_start and tool == "majordomus_search":
        shutil.rmtree(os.path.join(a.repo, ".ai", "local", "search"), ignore_errors=True)
    s = Server(argv, tool)
    first = s.search(queries[0])
    steady, at, k = [], time.perf_counter(), 1
    end = at + a.search_seconds
    while True:
        at += 0.05
        if at >= end:
            break
        time.sleep(max(0.0, at - time.perf_counter()))
        steady.append(s.search(queries[k % len(queries)]))
        k += 1
    time.sleep(max(0.0, s.spawned + a.life - time.perf_counter()))
    cpu = ticks(s.proc.pid) / HZ
    before, began = ticks(s.proc.pid), time.perf_counter()
    time.sleep(a.idle)
    idle = (ticks(s.proc.pid) - before) / HZ / (time.perf_counter() - began) * 100
    s.close()
    return {"cold": s.cold * 1e3, "first": first * 1e3, "max": max(steady) * 1e3,
            "p50": statistics.median(steady) * 1e3,
            "over50": sum(1 for x in steady if x > 0.05), "n": len(steady), "cpu30": cpu,
            "idle": idle}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", required=True)
    p.add_argument("--layer", required=True)
    p.add_argument("--rmcp", required=True)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--search-seconds", type=float, default=20)
    p.add_argument("--life", type=float, default=30)
    p.add_argument("--idle", type=float, default=20)
    p.add_argument("--query", default="Quasar Needle")
    p.add_argument("--first-start", action="store_true")
    p.add_argument("--record", action="store_true")
    p.add_argument("servers", nargs="+", metavar="NAME=BINARY")
    a = p.parse_args()
    servers = {"rmcp": ([a.rmcp, a.layer], "layer_search")}
    for spec in a.servers:
        name, binary = spec.split("=", 1)
        servers[name] = ([binary, "mcp", "--repo", a.repo], "majordomus_search")
    queries = spellings(a.query)
    load = os.getloadavg()
    loads = [load[0]]
    print(f"{a.repo}: {a.rounds} rounds, load average before {load[0]:.2f} {load[1]:.2f}", flush=True)
    results = {name: [] for name in servers}
    for r in range(a.rounds):
        for name, (argv, tool) in servers.items():
            results[name].append(one(argv, tool, a, queries))
            x = results[name][-1]
            print(f"  round {r + 1} {name}: cold {x['cold']:.1f} ms, first search {x['first']:.1f} ms, "
                  f"then max {x['max']:.1f} ms ({x['over50']} of {x['n']} over 50 ms), "
                  f"cpu {a.life:.0f} s {x['cpu30']:.2f} s, idle {x['idle']:.2f} % "
                  f"(load {os.getloadavg()[0]:.2f})", flush=True)
            loads.append(os.getloadavg()[0])
    load = os.getloadavg()
    print(f"load average after {load[0]:.2f} {load[1]:.2f}")
    keys = ["cold", "first", "max", "p50", "over50", "cpu30", "idle"]
    med = {n: {k: statistics.median(x[k] for x in rs) for k in keys} for n, rs in results.items()}
    print(f"{'median':10}" + "".join(f"{k:>12}" for k in keys))
    for n in servers:
        print(f"{n:10}" + "".join(f"{med[n][k]:12.2f}" for k in keys))
    for n in servers:
        if n == "rmcp":
            continue
        ratio = lambda k: med[n][k] / med["rmcp"][k] if med["rmcp"][k] else float("nan")
        print(f"{n + '/rmcp':10}" + "".join(f"{ratio(k):12.2f}" for k in keys))
    if a.record:
        objects = len([f for f in os.listdir(a.layer) if f.endswith(".md")])
        rows = [[n, f"{med[n]['cold']:.0f} ms", f"{med[n]['first']:.0f} ms",
                 f"{med[n]['max']:.0f} ms", f"{med[n]['over50']:.0f} of {results[n][0]['n']}",
                 f"{med[n]['cpu30']:.1f} s", f"{med[n]['idle']:.2f} %"] for n in servers]
        figures.record(
            "warm-first" if a.first_start else "warm",
            build="release",
            loads=loads,
            columns=["server", "cold start", "first search", "slowest search after it",
                     "searches over 50 ms", f"CPU over {a.life:.0f} s", "idle CPU"],
            rows=rows,
            values={"objects": f"{objects:,}", "rounds": str(a.rounds)},
            # The kit's layer and repository live outside this checkout: named, not spelled.
            command="scripts/bench/warm.py --repo REPO --layer LAYER --rmcp PEER "
                    f"--rounds {a.rounds} {'--first-start ' if a.first_start else ''}--record "
                    + " ".join(f"{n}=BINARY" for n in servers if n != "rmcp"),
        )


if __name__ == "__main__":
    main()
