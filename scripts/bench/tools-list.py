#!/usr/bin/env python3
"""tools/list as a client feels it, for several majordomus binaries (or selections) side by side.

Usage: tools-list.py NAME=COMMAND... [--rounds N] [--calls N]

Each COMMAND is a whole stdio server command line (e.g. `target/debug/majordomus mcp --repo R
--toolsets core`). In alternating rounds, so every command shares the machine's drift:
- cold: spawn, initialize, tools/list answered — the time until a client has its tools;
- warm: --calls tools/list requests on one open session, each timed from the request written to
  its whole line read (the JSON is not decoded: what is measured is the server and the bytes).
Prints per command the bytes, the medians, and each median's ratio to the first command's.
No dependencies beyond Python 3.9.
"""

import json
import os
import statistics
import subprocess
import sys
import time

INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}).encode() + b"\n"


def listing(i):
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list"}).encode() + b"\n"


def session(command):
    p = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return p


def cold(command):
    started = time.perf_counter()
    p = session(command)
    p.stdin.write(INIT + listing(2))
    p.stdin.flush()
    p.stdout.readline()
    line = p.stdout.readline()
    took = (time.perf_counter() - started) * 1e3
    p.stdin.close()
    p.wait(timeout=10)
    return took, len(line)


def warm(command, calls):
    p = session(command)
    p.stdin.write(INIT)
    p.stdin.flush()
    p.stdout.readline()
    times = []
    for i in range(calls):
        started = time.perf_counter()
        p.stdin.write(listing(100 + i))
        p.stdin.flush()
        p.stdout.readline()
        times.append((time.perf_counter() - started) * 1e3)
    p.stdin.close()
    p.wait(timeout=10)
    return statistics.median(times)


def main(argv):
    rounds, calls = 15, 200
    commands = []
    rest = list(argv[1:])
    while rest:
        a = rest.pop(0)
        if a == "--rounds":
            rounds = int(rest.pop(0))
        elif a == "--calls":
            calls = int(rest.pop(0))
        else:
            name, _, command = a.partition("=")
            commands.append((name, command.split()))
    results = {name: {"cold": [], "warm": [], "bytes": 0} for name, _ in commands}
    for r in range(rounds):
        order = commands if r % 2 == 0 else list(reversed(commands))
        for name, command in order:
            took, size = cold(command)
            results[name]["cold"].append(took)
            results[name]["bytes"] = size
            results[name]["warm"].append(warm(command, calls))
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {rounds} rounds, {calls} warm calls each")
    first = None
    for name, _ in commands:
        c = statistics.median(results[name]["cold"])
        w = statistics.median(results[name]["warm"])
        if first is None:
            first = (c, w)
        print(f"{name:<12} tools/list line {results[name]['bytes']:>6} B  cold start to tools {c:7.2f} ms ({c / first[0]:.2f}x)  "
              f"warm tools/list {w * 1000:7.1f} us ({w / first[1]:.2f}x)")


if __name__ == "__main__":
    main(sys.argv)
