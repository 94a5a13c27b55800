#!/usr/bin/env python3
"""Claims on the board measured, in one run on one throwaway git repository:

1. `majordomus_claim` round trip beside `majordomus_peers` on a board of 20 stdio peers holding
   200 live claims (10 each): median and p90 over CALLS calls each, alternated, and the ratio.
2. Grant race: the 20 peers (20 processes) claim one new path at once, ROUNDS rounds: grants per
   round (must be exactly 1) and the p50/p99 of a claim's round trip under the race.
3. Idle cost: CPU ticks (utime + stime) over IDLE seconds of a process on that board beside a
   lone process on a repository of its own, over the same window.

usage: claims.py BINARY [--calls N] [--rounds N] [--idle SECONDS]"""
import argparse, json, os, statistics, subprocess, tempfile, threading, time
from stdio_session import Session, throwaway_repo

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--calls", type=int, default=500)
parser.add_argument("--rounds", type=int, default=100)
parser.add_argument("--idle", type=float, default=30.0)
args = parser.parse_args()


def timed(f):
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1000


print(f"load average at start: {os.getloadavg()}")
main = throwaway_repo(args.binary, "claims-bench-")
peers = [Session(args.binary, main, f"peer-{i:02}") for i in range(20)]
for i, p in enumerate(peers):
    for k in range(10):
        assert p.tool("majordomus_claim", {"globs": [f"area/{i}/{k}/**"]})["granted"]
me = peers[0]
assert len(me.tool("majordomus_peers", {})["peers"]) == 20
lists, claims = [], []
for _ in range(args.calls):
    lists.append(timed(lambda: me.tool("majordomus_peers", {})))
    claims.append(timed(lambda: me.tool("majordomus_claim", {"globs": ["own/x.rs"]})))
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(len(xs) * p))]
ml, mc = statistics.median(lists), statistics.median(claims)
print(f"1. 20 peers, 200 claims, {args.calls} calls each: peers.list median {ml:.3f} ms p90 {q(lists, .9):.3f}; "
      f"peers.claim median {mc:.3f} ms p90 {q(claims, .9):.3f}; claim/list = {mc / ml:.2f}x")

grants, latencies = [], []
for r in range(args.rounds):
    barrier = threading.Barrier(len(peers))
    won = [False] * len(peers)
    def race(i):
        barrier.wait()
        t = time.perf_counter()
        won[i] = peers[i].tool("majordomus_claim", {"globs": [f"race/{r}.txt"]})["granted"]
        latencies.append((time.perf_counter() - t) * 1000)
    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(peers))]
    for t in threads: t.start()
    for t in threads: t.join()
    grants.append(sum(won))
print(f"2. race, 20 peers in 20 processes, {args.rounds} rounds: grants per round min {min(grants)} max {max(grants)}; "
      f"claim p50 {q(latencies, .5):.2f} ms p99 {q(latencies, .99):.2f} ms")

lone = Session(args.binary, throwaway_repo(args.binary, "claims-bench-"), "lone")
a, b = me.ticks(), lone.ticks()
time.sleep(args.idle)
print(f"3. idle {args.idle:.0f} s: on the board of 20 peers/200 claims {me.ticks() - a} ticks; lone {lone.ticks() - b} ticks")
print(f"load average at end: {os.getloadavg()}")
for p in peers + [lone]:
    p.close()
