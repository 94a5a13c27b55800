#!/usr/bin/env python3
"""The peer board measured, in one run on one throwaway git repository:

1. `majordomus_peers` round trip over stdio: a lone process of BEFORE (a build without the board,
   optional), a lone process on the board, and one process on a board of 20 peers; median and
   p90 over CALLS calls each, and the ratios to the first.
   The same answer of 20 peers over `/mcp` of `serve`: 20 sessions in one process (BEFORE, and
   this build with the board off) beside one session in `serve` and 19 stdio processes on the
   board; the ratio is the board's cost for an answer of the same size.
2. SIGKILL to absence: an observer and KILLS victims; each victim is SIGKILLed (not reaped) and
   the observer is asked `majordomus_peers` until the victim is gone; median and max.
3. Idle cost: CPU ticks (utime + stime) over IDLE seconds of a lone process beside a process on a
   board of 10, measured over the same window.

usage: board.py BINARY [--before BINARY] [--calls N] [--kills N] [--idle SECONDS]"""
import argparse, http.client, json, os, shutil, signal, statistics, subprocess, tempfile, time
from stdio_session import Session

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--before", help="a build without the board, for today's lone answer")
parser.add_argument("--calls", type=int, default=2000)
parser.add_argument("--kills", type=int, default=20)
parser.add_argument("--idle", type=float, default=30.0)
args = parser.parse_args()


class Served:
    def __init__(self, binary, repo, env=None):
        self.proc = subprocess.Popen([binary, "serve", "--port", "0", "--repo", repo],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, env=env)
        first = self.proc.stderr.readline().decode()
        self.port = int(first.rsplit(":", 1)[1])
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port)
        self.n = 0

    def post(self, message, session=None):
        headers = {"Content-Type": "application/json", "Host": f"127.0.0.1:{self.port}",
                   "Accept": "application/json, text/event-stream"}
        if session:
            headers["Mcp-Session-Id"] = session
        self.conn.request("POST", "/mcp", json.dumps(message), headers)
        reply = self.conn.getresponse()
        body = reply.read()
        return reply.getheader("Mcp-Session-Id"), body

    def session(self, name):
        sid, _ = self.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}})
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        return sid

    def peers_in(self, sid):
        self.n += 1
        _, body = self.post({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                             "params": {"name": "majordomus_peers", "arguments": {}}}, sid)
        return json.loads(body)["result"]["structuredContent"]

    def close(self):
        self.conn.close()
        self.proc.terminate()
        self.proc.wait()


def http_round_trip(served, sid, calls):
    class Bound:
        def peers(self):
            return served.peers_in(sid)
    return round_trip(Bound(), calls)


def round_trip(session, calls):
    for _ in range(50):
        session.peers()
    times = []
    for _ in range(calls):
        t = time.perf_counter()
        session.peers()
        times.append((time.perf_counter() - t) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9)]


work = tempfile.mkdtemp(prefix="majordomus-board-")
repo = os.path.join(work, "repo")
os.mkdir(repo)
subprocess.run(["git", "init", "-q", repo], check=True)
subprocess.run([args.binary, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL)
subprocess.run(["git", "-C", repo, "add", "-A"], check=True)
subprocess.run(["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm",
                "init"], check=True)
off = dict(os.environ, MAJORDOMUS_BOARD="off")
on = {k: v for k, v in os.environ.items() if k != "MAJORDOMUS_BOARD"}
try:
    print(f"1. majordomus_peers round trip over stdio, {args.calls} calls each (µs)")
    rows = []
    if args.before:
        s = Session(args.before, repo, "before")
        rows.append(("lone, before the board", *round_trip(s, args.calls)))
        s.close()
    s = Session(args.binary, repo, "lone-off", off)
    rows.append(("lone, MAJORDOMUS_BOARD=off", *round_trip(s, args.calls)))
    s.close()
    s = Session(args.binary, repo, "lone-on", on)
    rows.append(("lone, on the board", *round_trip(s, args.calls)))
    crowd = [Session(args.binary, repo, f"peer-{i:02}", on) for i in range(19)]
    assert s.peers()["count"] == 20
    rows.append(("20 peers on the board", *round_trip(s, args.calls)))
    base = rows[0][1]
    for name, median, p90 in rows:
        print(f"   {name:28} median {median:7.1f}  p90 {p90:7.1f}  ratio {median / base:4.2f}")
    for c in crowd:
        c.close()
    s.close()

    rows = []
    for label, binary, env in ([("20 sessions in one serve, before", args.before, off)]
                               if args.before else []) + [
            ("20 sessions in one serve, board off", args.binary, off)]:
        served = Served(binary, repo, env)
        sids = [served.session(f"http-{i:02}") for i in range(20)]
        assert served.peers_in(sids[0])["count"] == 20
        rows.append((label, *http_round_trip(served, sids[0], args.calls)))
        served.close()
    served = Served(args.binary, repo, on)
    sid = served.session("http-00")
    crowd = [Session(args.binary, repo, f"peer-{i:02}", on) for i in range(19)]
    assert served.peers_in(sid)["count"] == 20
    rows.append(("1 in serve + 19 on the board", *http_round_trip(served, sid, args.calls)))
    base = rows[0][1]
    for name, median, p90 in rows:
        print(f"   {name:34} median {median:7.1f}  p90 {p90:7.1f}  ratio {median / base:4.2f}")
    for c in crowd:
        c.close()
    served.close()

    print(f"2. SIGKILL to absence from another process's list, {args.kills} kills (ms)")
    observer = Session(args.binary, repo, "observer", on)
    victims = [Session(args.binary, repo, f"victim-{i:02}", on) for i in range(args.kills)]
    assert observer.peers()["count"] == args.kills + 1
    gaps = []
    for v in victims:
        t = time.perf_counter()
        os.kill(v.proc.pid, signal.SIGKILL)
        while any(p["pid"] == v.proc.pid for p in observer.peers()["peers"]):
            pass
        gaps.append((time.perf_counter() - t) * 1e3)
    for v in victims:
        v.proc.wait()
    print(f"   median {statistics.median(gaps):.2f}  max {max(gaps):.2f}")
    observer.close()

    print(f"3. idle CPU ticks over {args.idle:.0f} s (clock ticks of {os.sysconf('SC_CLK_TCK')} Hz)")
    lone_repo = os.path.join(work, "lone")
    shutil.copytree(repo, lone_repo)
    lone = Session(args.binary, lone_repo, "lone", on)
    ten = [Session(args.binary, repo, f"idle-{i}", on) for i in range(10)]
    assert ten[0].peers()["count"] == 10
    watched = ten[0]
    before = (lone.ticks(), watched.ticks())
    time.sleep(args.idle)
    after = (lone.ticks(), watched.ticks())
    print(f"   lone process: {after[0] - before[0]} ticks; on a board of 10: "
          f"{after[1] - before[1]} ticks")
    lone.close()
    for t in ten:
        t.close()
finally:
    shutil.rmtree(work, ignore_errors=True)
