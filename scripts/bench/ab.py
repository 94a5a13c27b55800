#!/usr/bin/env python3
"""A/B timing of two majordomus binaries, interleaved so both see the same machine: round after
round, each binary takes its turn, and the medians of all turns are compared (after/before).
Used by before-after.sh; each mode prints one line per binary and one `ratio` line.

usage: ab.py stdio ROUNDS CALLS REPO BEFORE AFTER TOOL ARGS_JSON
         one `mcp` process per binary, kept open; each round sends CALLS `tools/call TOOL` to
         each in turn, one at a time (request, answer, next), and times every call
       ab.py oneshot ROUNDS REPO BEFORE AFTER ARG...
         each round runs `BINARY ARG... --repo REPO` once per binary and times it to exit"""
import json, statistics, subprocess, sys, time

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "ab", "version": "1"}}}


def report(unit, samples, scale=1.0):
    medians = {}
    for name, values in samples.items():
        medians[name] = statistics.median(values) * scale
        q = statistics.quantiles(values, n=100) if len(values) >= 2 else values * 99
        print(f"  {name:6} median {medians[name]:10.3f} {unit}  p90 {q[89] * scale:10.3f}  "
              f"min {min(values) * scale:10.3f}  ({len(values)} samples)")
    print(f"  ratio after/before {medians['after'] / medians['before']:.3f}")


class Server:
    def __init__(self, binary, repo):
        self.proc = subprocess.Popen([binary, "mcp", "--repo", repo], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1
        self.call_raw(INITIALIZE)
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def call_raw(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("the server closed its output")
        answer = json.loads(line)
        if "error" in answer or answer.get("result", {}).get("isError"):
            sys.exit(f"the server refused the call: {line[:300]!r}")
        return answer

    def call(self, tool, arguments):
        self.next_id += 1
        return self.call_raw({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                              "params": {"name": tool, "arguments": arguments}})

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def stdio(rounds, calls, repo, before, after, tool, arguments):
    arguments = json.loads(arguments)
    servers = {"before": Server(before, repo), "after": Server(after, repo)}
    # One unmeasured call each: the layer is opened on first use.
    for server in servers.values():
        server.call(tool, arguments)
    samples = {name: [] for name in servers}
    for _ in range(rounds):
        for name, server in servers.items():
            for _ in range(calls):
                start = time.perf_counter_ns()
                server.call(tool, arguments)
                samples[name].append((time.perf_counter_ns() - start) / 1e3)
    for server in servers.values():
        server.close()
    report("µs/call", samples)


def oneshot(rounds, repo, before, after, args):
    samples = {"before": [], "after": []}
    for _ in range(rounds):
        for name, binary in (("before", before), ("after", after)):
            start = time.perf_counter_ns()
            done = subprocess.run([binary, *args, "--repo", repo], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
            samples[name].append((time.perf_counter_ns() - start) / 1e6)
            if done.returncode != 0:
                sys.exit(f"{binary} {' '.join(args)} exited {done.returncode}")
    report("ms", samples)


if __name__ == "__main__":
    mode, rest = sys.argv[1], sys.argv[2:]
    if mode == "stdio" and len(rest) == 7:
        stdio(int(rest[0]), int(rest[1]), *rest[2:])
    elif mode == "oneshot" and len(rest) >= 5:
        oneshot(int(rest[0]), rest[1], rest[2], rest[3], rest[4:])
    else:
        sys.exit(__doc__)
