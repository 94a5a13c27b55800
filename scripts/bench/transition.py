#!/usr/bin/env python3
"""plan.transition round trip over MCP stdio, fsync'd atomic write included: a fixture
repository with N ready issues; each is started with one tools/call, timed from writing the
request to reading the answer. Prints the median and p90 in ms.
usage: transition.py BINARY [N]"""
import json, os, statistics, subprocess, sys, tempfile, time

binary = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 60
with tempfile.TemporaryDirectory() as repo:
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run([binary, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL)
    issues = os.path.join(repo, ".ai/repo/project/issues")
    os.makedirs(issues)
    for i in range(n):
        with open(os.path.join(issues, f"i{i:03}.yaml"), "w") as f:
            f.write(f"id: i{i:03}\ntitle: Issue {i}\n")
    proc = subprocess.Popen([binary, "mcp", "--repo", repo], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    def call(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())
    call({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "bench", "version": "1"}}})
    times = []
    for i in range(n):
        start = time.perf_counter()
        answer = call({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call",
                       "params": {"name": "majordomus_plan_transition",
                                  "arguments": {"issue": f"i{i:03}", "transition": "start"}}})
        times.append((time.perf_counter() - start) * 1000)
        assert answer["result"]["isError"] is False, answer
    proc.stdin.close()
    proc.wait()
    times.sort()
    print(f"plan.transition over MCP stdio: median {statistics.median(times):.2f} ms, "
          f"p90 {times[int(len(times) * 0.9)]:.2f} ms over {n} writes (fsync'd, atomic, index refreshed)")
