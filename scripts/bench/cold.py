#!/usr/bin/env python3
"""Cold start beside the bench kit's rmcp peer: spawn to the `initialize` answer over stdio, at
each kit layer size, for the builds named and rmcp, in turns.

Each turn starts every server once, in an order that rotates from turn to turn, so that all of
them meet the same drift of the machine and none is always first after another's exit. For each
server and size it prints the median wall time, the median of each turn's ratio to rmcp's start
in that turn (which drift moves far less than the medians' ratio), and the median CPU of the
whole run (user and system, every thread, from wait4).

usage: cold.py --work W [--sizes 100,1000] [--turns 300] [--record] NAME=BINARY...
  W is the kit's work directory (scripts/bench/kit.sh: W/repo-N, W/layer-N and
  W/peers/rmcp/target/release/peer-rmcp). Each majordomus build runs `BINARY mcp` in W/repo-N;
  rmcp serves W/layer-N. With --record, the figures are the README's `cold` table
  (scripts/bench/figures.py)."""
import argparse, os, statistics, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

INITIALIZE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
              b'"2025-11-25","capabilities":{},"clientInfo":{"name":"cold","version":"1"}}}\n')


def start(argv, cwd):
    """Spawn to the first line of the answer (ms), and the whole run's CPU (ms)."""
    began = time.perf_counter_ns()
    server = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    server.stdin.write(INITIALIZE)
    server.stdin.flush()
    if not server.stdout.readline():
        sys.exit(f"no answer to initialize from {argv[0]} in {cwd}")
    wall = (time.perf_counter_ns() - began) / 1e6
    server.stdin.close()
    _, status, usage = os.wait4(server.pid, 0)
    server.returncode = status
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3


def measure(work, size, servers, turns):
    """{name: (median wall, median ratio to rmcp, median CPU)} for one layer size."""
    repo, layer = os.path.join(work, f"repo-{size}"), os.path.join(work, f"layer-{size}")
    peer = os.path.join(work, "peers", "rmcp", "target", "release", "peer-rmcp")
    commands = {name: ([binary, "mcp"], repo) for name, binary in servers}
    commands["rmcp"] = ([peer, layer], work)
    names = list(commands)
    wall = {n: [] for n in names}
    cpu = {n: [] for n in names}
    for turn in range(turns):
        order = names[turn % len(names):] + names[:turn % len(names)]
        for name in order:
            w, c = start(*commands[name])
            wall[name].append(w)
            cpu[name].append(c)
    return {n: (statistics.median(wall[n]),
                statistics.median(a / b for a, b in zip(wall[n], wall["rmcp"])),
                statistics.median(cpu[n])) for n in names}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True)
    p.add_argument("--sizes", default="100,1000")
    p.add_argument("--turns", type=int, default=300)
    p.add_argument("--record", action="store_true")
    p.add_argument("servers", nargs="+", metavar="NAME=BINARY")
    a = p.parse_args()
    servers = [tuple(s.split("=", 1)) for s in a.servers]
    sizes = [int(s) for s in a.sizes.split(",")]
    loads = [figures.load_average()]
    results = {}
    for size in sizes:
        results[size] = measure(a.work, size, servers, a.turns)
        loads.append(figures.load_average())
        print(f"{size:,} objects, {a.turns} turns:")
        for name, (wall, ratio, cpu) in results[size].items():
            print(f"  {name:10} {wall:8.2f} ms  {ratio:5.2f}× rmcp  CPU {cpu:6.2f} ms")
    print(f"load {min(loads):.1f}–{max(loads):.1f}")
    if a.record:
        names = ["rmcp"] + [n for n, _ in servers]
        columns = ["server"]
        for size in sizes:
            columns += [f"{size:,} objects", "× rmcp", "CPU"]
        rows = [[n] + [cell for size in sizes for cell in (
            f"{results[size][n][0]:.2f} ms", f"{results[size][n][1]:.2f}×",
            f"{results[size][n][2]:.1f} ms")] for n in names]
        figures.record(
            "cold", build="release and dist", loads=loads, columns=columns, rows=rows,
            values={"turns": str(a.turns)},
            # The kit's work directory lives outside this checkout: named, not spelled.
            command=f"scripts/bench/cold.py --work W --sizes {a.sizes} --turns {a.turns} "
                    "--record " + " ".join(f"{n}=BINARY" for n, _ in servers),
        )


if __name__ == "__main__":
    main()
