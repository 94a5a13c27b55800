#!/usr/bin/env python3
"""Cold start through the package launchers beside the binary itself: the time from starting a
command to its `initialize` answer over stdio, in interleaved turns, median and p90 per command,
and each median's ratio to the first command's.

    python3 scripts/bench/launchers.py REPO TURNS 'binary=/path/majordomus mcp' \\
        'npm=/path/node_modules/.bin/majordomus mcp' 'uvx=uvx --offline --from X.whl majordomus mcp'
"""

import json
import shlex
import statistics
import subprocess
import sys
import time


def cold_start(command, repo):
    started = time.monotonic()
    proc = subprocess.Popen(command, cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"}}}) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = time.monotonic() - started
    if '"serverInfo"' not in line:
        raise SystemExit(f"no initialize answer from {command}: {line!r}")
    proc.stdin.close()
    proc.wait(timeout=10)
    return elapsed * 1000


def main():
    repo, turns = sys.argv[1], int(sys.argv[2])
    commands = [(spec.split("=", 1)[0], shlex.split(spec.split("=", 1)[1])) for spec in sys.argv[3:]]
    times = {label: [] for label, _ in commands}
    for label, command in commands:  # one warm-up each: the file cache, uv's unpacked wheel
        cold_start(command, repo)
    for _ in range(turns):
        for label, command in commands:
            times[label].append(cold_start(command, repo))
    base = statistics.median(times[commands[0][0]])
    print(f"{'command':<10} {'median ms':>10} {'p90 ms':>8} {'ratio':>6}")
    for label, _ in commands:
        ms = sorted(times[label])
        median = statistics.median(ms)
        p90 = ms[int(len(ms) * 0.9) - 1]
        print(f"{label:<10} {median:>10.1f} {p90:>8.1f} {median / base:>6.2f}")


if __name__ == "__main__":
    main()
