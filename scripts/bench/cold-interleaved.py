#!/usr/bin/env python3
"""Cold start (spawn to the `initialize` answer) of several stdio servers, measured in turns: one
run of each command, then the next round. Cold starts of a few milliseconds drift with the
machine and with the page-cache state of each binary; taking turns exposes every command to
the same drift, so their medians can be compared. Each line also gives the command's CPU time (user
and system, all threads, from wait4: the whole run to exit, not only to the answer), which moves
far less with other load than wall-clock time does.
usage: cold-interleaved.py RUNS 'COMMAND ...' ['COMMAND ...' ...]   (run it in the layer's repo)
e.g.   cold-interleaved.py 300 'target/release/majordomus mcp' \\
           '/tmp/majordomus-bench/peers/rmcp/target/release/peer-rmcp /tmp/majordomus-bench/layer-100'"""
import os, shlex, statistics, subprocess, sys, time

runs, commands = int(sys.argv[1]), sys.argv[2:]
initialize = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
              b'"2025-11-25","capabilities":{},"clientInfo":{"name":"cold","version":"1"}}}\n')
times = {command: [] for command in commands}
cpu = {command: [] for command in commands}
for _ in range(runs):
    for command in commands:
        start = time.perf_counter_ns()
        server = subprocess.Popen(shlex.split(command), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        server.stdin.write(initialize)
        server.stdin.flush()
        if not server.stdout.readline():
            sys.exit(f"no answer to initialize from: {command}")
        times[command].append((time.perf_counter_ns() - start) / 1e6)
        server.stdin.close()
        _, _, usage = os.wait4(server.pid, 0)
        server.returncode = 0
        cpu[command].append((usage.ru_utime + usage.ru_stime) * 1e3)
for command, samples in times.items():
    print(f"{statistics.median(samples):8.2f} ms median  (min {min(samples):.2f}, "
          f"max {max(samples):.2f}, {runs} runs)  {command}  "
          f"[CPU {statistics.median(cpu[command]):.2f} ms median]")
