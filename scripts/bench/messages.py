#!/usr/bin/env python3
"""Messages on the board measured, in one run on one throwaway git repository:

1. Idle cost: CPU ticks (utime + stime) over IDLE seconds of a process on a board of 20 stdio
   peers holding 200 live claims (10 each), one subscribed to its inbox (the watch made) and one
   not, beside a lone process on a repository of its own, over the same window.
2. `majordomus_send` round trip to one peer, to the holders of one claimed glob, and to all 19
   others, beside `majordomus_peers` on that board: medians and p90 over CALLS calls each,
   alternated (the recipients' inboxes stay at their bound of 100).

usage: messages.py BINARY [--calls N] [--idle SECONDS]"""
import argparse, json, os, statistics, subprocess, tempfile, time
from stdio_session import Session, throwaway_repo

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--calls", type=int, default=300)
parser.add_argument("--idle", type=float, default=30.0)
args = parser.parse_args()


def timed(f):
    t = time.perf_counter()
    f()
    return (time.perf_counter() - t) * 1000


print(f"load average at start: {os.getloadavg()}")
main = throwaway_repo(args.binary, "messages-bench-")
peers = [Session(args.binary, main, f"peer-{i:02}") for i in range(20)]
for i, p in enumerate(peers):
    for k in range(10):
        assert p.tool("majordomus_claim", {"globs": [f"area/{i}/{k}/**"]})["granted"]
me, subscribed, quiet = peers[0], peers[1], peers[2]
assert len(me.tool("majordomus_peers", {"claims": True})["claims"]) == 200
assert subscribed.request("resources/subscribe", {"uri": "majordomus://peers/inbox"})["result"] == {}
lone = Session(args.binary, throwaway_repo(args.binary, "messages-bench-"), "lone")
a, b, c = subscribed.ticks(), quiet.ticks(), lone.ticks()
time.sleep(args.idle)
print(f"1. idle {args.idle:.0f} s: on the board of 20 peers/200 claims, subscribed to its inbox "
      f"{subscribed.ticks() - a} ticks, not subscribed {quiet.ticks() - b} ticks; lone {lone.ticks() - c} ticks")

listed = me.tool("majordomus_peers", {})["peers"]
target = next(p for p in listed if p["client_supplied"]["client"] == "peer-03")
to = {"pid": target["pid"], "id": target["id"]}
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(len(xs) * p))]
lists, ones, holders, everyone = [], [], [], []
for _ in range(args.calls):
    lists.append(timed(lambda: me.tool("majordomus_peers", {})))
    ones.append(timed(lambda: me.tool("majordomus_send", {"subject": "s", "body": "b" * 200, "to": to})))
    holders.append(timed(lambda: me.tool("majordomus_send", {"subject": "s", "globs": ["area/5/5/x.rs"]})))
for _ in range(max(1, args.calls // 10)):
    everyone.append(timed(lambda: me.tool("majordomus_send", {"subject": "s", "all": True})))
ml = statistics.median(lists)
for name, xs in [("peers.list", lists), ("send to one peer", ones), ("send to a glob's holders", holders),
                 ("send to all 19", everyone)]:
    m = statistics.median(xs)
    print(f"2. {name}: median {m:.3f} ms p90 {q(xs, .9):.3f} ms ({m / ml:.2f}x peers.list, {len(xs)} calls)")
assert peers[3].tool("majordomus_inbox", {})["dropped"] > 0, "the inbox stayed at its bound"
print(f"load average at end: {os.getloadavg()}")
for p in peers + [lone]:
    p.close()
