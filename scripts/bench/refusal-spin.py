#!/usr/bin/env python3
"""What a client that ignores `Retry-After` costs once a bound is full (so no
other client is slowed). For each binary, in turns: `serve` on a fresh repository, the bound
filled, then CLIENTS threads that ask again at once after every `503 busy`, for SECONDS. Prints
the refusals answered, the server's CPU time in that window (utime + stime from /proc) and the
load average, per binary and round. The bound, by `--refusal=`:

  inflight  (default) MAX_IN_FLIGHT (256) requests that announce a body and never send it (each
            holds its permit until the 30 s deadline); the clients ask `GET /healthz`.
  sessions  MAX_SESSIONS (4096) legacy `initialize`s over HTTP, none idle long enough to end; the
            clients ask `initialize` (each is handled, then refused at the cap).
  listen    MAX_LISTENS (256) modern `subscriptions/listen` streams held open; the clients ask
            for one more.

usage: refusal-spin.py [--refusal=inflight|sessions|listen] ROUNDS CLIENTS SECONDS BINARY [BINARY ...]
       (e.g. --refusal=sessions 3 8 5 before after)"""
import http.client, json, os, socket, statistics, subprocess, sys, tempfile, threading, time

args = sys.argv[1:]
refusal = "inflight"
if args and args[0].startswith("--refusal="):
    refusal = args.pop(0).split("=", 1)[1]
if len(args) < 4 or refusal not in ("inflight", "sessions", "listen"):
    sys.exit(__doc__)
rounds, clients, seconds = int(args[0]), int(args[1]), float(args[2])
binaries = [os.path.abspath(b) for b in args[3:]]
IN_FLIGHT = 256
SESSIONS = 4096
LISTENS = 256
MODERN = "2026-07-28"
port = 18796


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


JSON = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def initialize(n):
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": f"client-{n}", "version": "0.0.1"}}})


LISTEN = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
    "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN,
              "io.modelcontextprotocol/clientCapabilities": {}},
    "notifications": {"resourcesListChanged": True}}})
LISTEN_HEADERS = dict(JSON, **{"MCP-Protocol-Version": MODERN, "Mcp-Method": "subscriptions/listen"})


def ask(conn):
    """One request of the kind the bound refuses."""
    if refusal == "inflight":
        conn.request("GET", "/healthz")
    elif refusal == "sessions":
        conn.request("POST", "/mcp", initialize(0), JSON)
    else:
        conn.request("POST", "/mcp", LISTEN, LISTEN_HEADERS)


def spin(stop, counts):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    n = 0
    while not stop.is_set():
        try:
            ask(conn)
            reply = conn.getresponse()
            reply.read()
            if reply.status != 503:
                sys.exit(f"not refused: {reply.status}")
            n += 1
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    counts.append(n)


def fill():
    """Fills the bound; returns what must stay open while the clients spin."""
    held = []
    if refusal == "inflight":
        for _ in range(IN_FLIGHT):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
            held.append(s)
        time.sleep(0.5)  # every stalled request holds its permit
    elif refusal == "sessions":
        def some(k):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for n in range(k, SESSIONS, 4):
                conn.request("POST", "/mcp", initialize(n), JSON)
                reply = conn.getresponse()
                reply.read()
                if reply.status != 200:
                    sys.exit(f"initialize {n}: {reply.status}")
        fillers = [threading.Thread(target=some, args=(k,)) for k in range(4)]
        for t in fillers:
            t.start()
        for t in fillers:
            t.join()
    else:
        for _ in range(LISTENS):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            conn.request("POST", "/mcp", LISTEN, LISTEN_HEADERS)
            reply = conn.getresponse()
            if reply.status != 200:
                sys.exit(f"listen: {reply.status}")
            held.append((conn, reply))
    return held


def one(binary):
    with tempfile.TemporaryDirectory() as repo:
        subprocess.run(["git", "-C", repo, "init", "-q"], check=True)
        subprocess.run([binary, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL)
        server = subprocess.Popen([binary, "serve", "--port", str(port), "--repo", repo],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.01)
            held = fill()
            stop, counts = threading.Event(), []
            threads = [threading.Thread(target=spin, args=(stop, counts)) for _ in range(clients)]
            load, cpu = loadavg(), cpu_seconds(server.pid)
            for t in threads:
                t.start()
            time.sleep(seconds)
            stop.set()
            for t in threads:
                t.join()
            used = cpu_seconds(server.pid) - cpu
            for h in held:
                (h if isinstance(h, socket.socket) else h[0]).close()
            return sum(counts), used, load
        finally:
            server.terminate()
            server.wait()


results = {b: [] for b in binaries}
for r in range(rounds):
    for binary in binaries:
        answered, used, load = one(binary)
        results[binary].append((answered, used))
        print(f"round {r + 1}  {refusal}  {binary}: {answered} refusals in {seconds:.0f} s "
              f"({answered / seconds:.0f}/s), server CPU {used:.2f} s; load before {load}")
for binary, runs in results.items():
    print(f"median  {binary}: {statistics.median(a for a, _ in runs) / seconds:.0f} refusals/s, "
          f"server CPU {statistics.median(u for _, u in runs):.2f} s in {seconds:.0f} s "
          f"({clients} clients, {rounds} rounds)")
