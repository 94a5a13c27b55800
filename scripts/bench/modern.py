#!/usr/bin/env python3
"""The modern era (2026-07-28) beside the legacy one over stdio, and beside the kit's rmcp peer.

Usage: modern.py MAJORDOMUS REPO_100 REPO_10000 RMCP LAYER_10000 [--rounds N] [--floor PEER_FLOOR]

In one session, in turns (so the servers share the machine's drift):
- `resources/list` at 10,000 objects: rmcp's one answer (all entries), majordomus's first page
  (500 entries) and majordomus's whole walk by `nextCursor`, alternating for N rounds on one
  warm process each, medians of the driver's wall time (JSON decode included, as the kit's
  driver) and of the server's CPU time, with the bytes each moves;
- with `--floor` (the kit's floor program patched by modern.sh to answer each `resources/list`
  with the next of its canned results), the same walk served by the floor from majordomus's
  exact page bytes, and rmcp's exact answer served by the floor too, in the same rounds: what
  of each figure is the bytes themselves (pipe, framing, the driver's JSON decode) and what is
  the server;
- pipelined throughput: 2,000 `tools/call` of the get tool written at once, time until the last
  answer, at 100 and 10,000 objects, legacy session and modern requests on the same binary, in
  alternating rounds; with the server's CPU time per call (from `/proc/<pid>/task/*/schedstat`),
  which a loaded machine disturbs less than the wall clock. The requests are encoded before the
  clock starts: a Python writer encoding the bigger modern `_meta` inside the timed region made
  the driver, not the server, the modern figure.
Prints each figure and the ratios the issue asks for. No dependencies beyond Python 3.9.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Stdio:
    def __init__(self, command, env=None):
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=None if env is None else {**os.environ, **env},
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


def walk(server, modern, count_bytes=False):
    pages, entries, size, cursor = 0, 0, 0, None
    while True:
        params = {"cursor": cursor} if cursor else {}
        if modern:
            params["_meta"] = MODERN_META
        result = server.call("resources/list", params)["result"]
        pages += 1
        entries += len(result["resources"])
        if count_bytes:
            size += len(json.dumps(result, separators=(",", ":")))
        cursor = result.get("nextCursor")
        if not cursor:
            return (pages, entries, size) if count_bytes else (pages, entries)


def walk_results(server):
    """The result text of every page of a modern walk, byte for byte as the server wrote it."""
    results, cursor = [], None
    while True:
        params = {"_meta": MODERN_META}
        if cursor:
            params["cursor"] = cursor
        server.send("resources/list", params)
        server.process.stdin.flush()
        line = server.recv()
        results.append(result_text(line))
        cursor = json.loads(line)["result"].get("nextCursor")
        if not cursor:
            return results


def result_text(line):
    """The bytes of a response line's `result`, checked against the decoded line."""
    line = line.rstrip(b"\n")
    start = line.index(b'"result":') + len(b'"result":')
    assert line.endswith(b"}"), line[-80:]
    text = line[start:-1]
    assert json.loads(text) == json.loads(line)["result"], "the result is not the line's last member"
    return text


def floors(floor, ours, rmcp_server, workdir):
    """Two floor processes: one answering majordomus's walk page by page, one rmcp's answer."""
    made = []
    for name, texts in (("ours", walk_results(ours)), ("rmcp", [result_text(rmcp_line(rmcp_server))])):
        paths = []
        for i, text in enumerate(texts):
            path = os.path.join(workdir, f"{name}-{i:03}.json")
            with open(path, "wb") as f:
                f.write(text)
            paths.append(path)
        listing = os.path.join(workdir, f"{name}.pages")
        with open(listing, "w") as f:
            f.write("\n".join(paths) + "\n")
        server = Stdio([floor, "floor"], env={"FLOOR_PAGES": listing})
        server.initialize()
        made.append(server)
    return made


def rmcp_line(server):
    server.send("resources/list", {})
    server.process.stdin.flush()
    return server.recv()


def cpu_ns(pid):
    """The CPU time every live thread of `pid` has run, in ns."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total


def pipelined_round(server, tool, uris, modern, n=2000):
    """One round: (calls/s, server CPU µs per call)."""
    lines = []
    for i in range(n):
        server.next_id += 1
        params = {"name": tool, "arguments": {"uri": uris[i % len(uris)]}}
        if modern:
            params["_meta"] = MODERN_META
        lines.append(json.dumps({"jsonrpc": "2.0", "id": server.next_id, "method": "tools/call", "params": params}))
    blob = ("\n".join(lines) + "\n").encode()
    # Answers are read on another thread while requests are written: both pipes would fill.
    reader = threading.Thread(target=lambda: [server.recv() for _ in range(n)])
    cpu = cpu_ns(server.process.pid)
    start = time.perf_counter()
    reader.start()
    server.process.stdin.write(blob)
    server.process.stdin.flush()
    reader.join()
    seconds = time.perf_counter() - start
    return n / seconds, (cpu_ns(server.process.pid) - cpu) / n / 1000


def main():
    args = sys.argv[1:]
    rounds, floor = 9, None
    if "--rounds" in args:
        at = args.index("--rounds")
        rounds = int(args[at + 1])
        del args[at : at + 2]
    if "--floor" in args:
        at = args.index("--floor")
        floor = args[at + 1]
        del args[at : at + 2]
    if len(args) != 5:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    majordomus, repo_small, repo_large, rmcp, layer_large = args

    rmcp_server = Stdio([rmcp, layer_large])
    rmcp_server.initialize()
    ours = Stdio([majordomus, "mcp", "--repo", repo_large])
    ours.initialize()
    # In alternating rounds: rmcp's one answer, our first page, our whole walk; each the wall
    # time the driver sees (JSON decode included, as the kit's driver does) and the server's CPU.
    cases = {
        "rmcp": (rmcp_server, lambda: rmcp_server.call("resources/list", {})),
        "page": (ours, lambda: ours.call("resources/list", {"_meta": MODERN_META})),
        "walk": (ours, lambda: walk(ours, modern=True)),
    }
    workdir = tempfile.mkdtemp(prefix="modern-floor-")
    if floor:
        floor_ours, floor_rmcp = floors(floor, ours, rmcp_server, workdir)
        # The floor answers pages in turn: a walk of it is exactly majordomus's walk, every time.
        cases["floor-walk"] = (floor_ours, lambda: walk(floor_ours, modern=True))
        cases["floor-rmcp"] = (floor_rmcp, lambda: floor_rmcp.call("resources/list", {}))
    samples = {name: [] for name in cases}
    for name, (_, fn) in cases.items():
        fn()  # warm
    for _ in range(rounds):
        for name, (server, fn) in cases.items():
            cpu = cpu_ns(server.process.pid)
            ms = timed(fn) * 1000
            samples[name].append((ms, (cpu_ns(server.process.pid) - cpu) / 1e6))
    wall = {name: statistics.median(s[0] for s in runs) for name, runs in samples.items()}
    cpu = {name: statistics.median(s[1] for s in runs) for name, runs in samples.items()}
    rmcp_answer = rmcp_server.call("resources/list", {})
    rmcp_entries = len(rmcp_answer["result"]["resources"])
    rmcp_bytes = len(json.dumps(rmcp_answer, separators=(",", ":")))
    pages, entries, walk_bytes = walk(ours, modern=True, count_bytes=True)
    print(f"resources/list at 10,000 objects (median of {rounds} alternating rounds, one warm process each):")
    print(f"  rmcp, one answer of {rmcp_entries} entries ({rmcp_bytes:,} bytes): {wall['rmcp']:.2f} ms, server CPU {cpu['rmcp']:.2f} ms")
    for name, what, target in (
        ("page", "first page (500 entries)", 0.1),
        ("walk", f"whole walk ({pages} pages, {entries} entries, {walk_bytes:,} bytes)", 1.0),
    ):
        print(
            f"  majordomus modern, {what}: {wall[name]:.2f} ms = {wall[name] / wall['rmcp']:.3f}x rmcp's answer "
            f"(target <= {target}x); server CPU {cpu[name]:.2f} ms = {cpu[name] / cpu['rmcp']:.3f}x rmcp's"
        )
    if floor:
        fw, fr = wall["floor-walk"], wall["floor-rmcp"]
        print(f"  the floor (no server work) answering the same bytes: majordomus's walk {fw:.2f} ms, rmcp's answer {fr:.2f} ms")
        print(
            f"  the bytes alone: floor walk / floor rmcp answer = {fw / fr:.3f}x; majordomus's walk = {wall['walk'] / fw:.2f}x "
            f"its floor (rmcp's answer = {wall['rmcp'] / fr:.2f}x its floor)"
        )
        print(
            f"  beyond the floor: majordomus's walk {wall['walk'] - fw:+.2f} ms, rmcp's answer {wall['rmcp'] - fr:+.2f} ms; "
            f"walk/rmcp with the bytes' own cost taken out = {(wall['walk'] - fw) / max(wall['rmcp'] - fr, 1e-9):.3f}x"
        )
        floor_ours.close()
        floor_rmcp.close()
    shutil.rmtree(workdir, ignore_errors=True)
    rmcp_server.close()

    print("pipelined tools/call of the get tool, 2,000 at once (median of 5 alternating rounds):")
    for repo, n in [(repo_small, 100), (repo_large, 10000)]:
        server = ours if n == 10000 else Stdio([majordomus, "mcp", "--repo", repo])
        if n != 10000:
            server.initialize()
        uris = [f"majordomus://knowledge/doc-{i * n // min(200, n):05d}" for i in range(min(200, n))]
        runs = {False: [], True: []}
        pipelined_round(server, "majordomus_get", uris, modern=True)  # warm
        for _ in range(5):
            for modern in (False, True):
                runs[modern].append(pipelined_round(server, "majordomus_get", uris, modern))
        (legacy, legacy_cpu), (modern, modern_cpu) = (
            (statistics.median(r[0] for r in runs[m]), statistics.median(r[1] for r in runs[m])) for m in (False, True)
        )
        print(
            f"  {n:>6} objects: legacy {legacy:,.0f}/s ({legacy_cpu:.1f} µs CPU a call), "
            f"modern {modern:,.0f}/s ({modern_cpu:.1f} µs) = {modern / legacy:.2f}x legacy calls/s, "
            f"{legacy_cpu / modern_cpu:.2f}x legacy by CPU a call"
        )
        server.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
