#!/usr/bin/env python3
"""The modern era (2026-07-28) beside the legacy one over stdio, and beside the kit's rmcp peer.

Usage: modern.py MAJORDOMUS REPO_100 REPO_10000 RMCP LAYER_10000 [--rounds N]

In one session, in turns (so the servers share the machine's drift):
- `resources/list` at 10,000 objects: rmcp's one answer (all entries), majordomus's first page
  (500 entries) and majordomus's whole walk by `nextCursor`, each the median of N rounds on one
  warm process;
- pipelined throughput: 2,000 `tools/call` of the get tool written at once, time until the last
  answer, at 100 and 10,000 objects, legacy session and modern requests on the same binary.
Prints each figure and the ratios the issue asks for. No dependencies beyond Python 3.9.
"""

import json
import statistics
import subprocess
import sys
import threading
import time

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Stdio:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def send(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        return self.next_id

    def recv(self):
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise SystemExit("the server closed its stdout")
            if b'"id"' in line[:64] or b'"result"' in line or b'"error"' in line:
                return line

    def call(self, method, params):
        self.send(method, params)
        self.process.stdin.flush()
        return json.loads(self.recv())

    def initialize(self):
        answer = self.call(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.process.stdin.flush()
        return answer

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def median_ms(fn, rounds):
    fn()  # warm
    return statistics.median(timed(fn) for _ in range(rounds)) * 1000


def walk(server, modern):
    pages, entries, cursor = 0, 0, None
    while True:
        params = {"cursor": cursor} if cursor else {}
        if modern:
            params["_meta"] = MODERN_META
        result = server.call("resources/list", params)["result"]
        pages += 1
        entries += len(result["resources"])
        cursor = result.get("nextCursor")
        if not cursor:
            return pages, entries


def pipelined(server, tool, uris, modern, n=2000):
    def run():
        # Answers are read on another thread while requests are written: both pipes would fill.
        reader = threading.Thread(target=lambda: [server.recv() for _ in range(n)])
        reader.start()
        for i in range(n):
            params = {"name": tool, "arguments": {"uri": uris[i % len(uris)]}}
            if modern:
                params["_meta"] = MODERN_META
            server.send("tools/call", params)
        server.process.stdin.flush()
        reader.join()

    seconds = statistics.median(timed(run) for _ in range(3))
    return n / seconds


def main():
    args = sys.argv[1:]
    rounds = 9
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at : at + 2]
    if len(args) != 5:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    majordomus, repo_small, repo_large, rmcp, layer_large = args

    rmcp_server = Stdio([rmcp, layer_large])
    rmcp_server.initialize()
    ours = Stdio([majordomus, "mcp", "--repo", repo_large])
    ours.initialize()
    rmcp_whole = median_ms(lambda: rmcp_server.call("resources/list", {}), rounds)
    rmcp_entries = len(rmcp_server.call("resources/list", {})["result"]["resources"])
    page = median_ms(lambda: ours.call("resources/list", {"_meta": MODERN_META}), rounds)
    whole = median_ms(lambda: walk(ours, modern=True), rounds)
    pages, entries = walk(ours, modern=True)
    print(f"resources/list at 10,000 objects (median of {rounds}, one warm process each):")
    print(f"  rmcp, one answer of {rmcp_entries} entries: {rmcp_whole:.2f} ms")
    print(f"  majordomus modern, first page (500 entries): {page:.2f} ms = {page / rmcp_whole:.3f}x rmcp's answer (target <= 0.1x)")
    print(f"  majordomus modern, whole walk ({pages} pages, {entries} entries): {whole:.2f} ms = {whole / rmcp_whole:.3f}x rmcp's answer (target <= 1.0x)")
    rmcp_server.close()

    print("pipelined tools/call of the get tool, 2,000 at once (median of 3), calls/s:")
    for repo, n in [(repo_small, 100), (repo_large, 10000)]:
        server = ours if n == 10000 else Stdio([majordomus, "mcp", "--repo", repo])
        if n != 10000:
            server.initialize()
        uris = [f"majordomus://knowledge/doc-{i * n // min(200, n):05d}" for i in range(min(200, n))]
        legacy = pipelined(server, "majordomus_get", uris, modern=False)
        modern = pipelined(server, "majordomus_get", uris, modern=True)
        print(f"  {n:>6} objects: legacy {legacy:,.0f}/s, modern {modern:,.0f}/s = {modern / legacy:.2f}x legacy")
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
