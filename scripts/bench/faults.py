#!/usr/bin/env python3
"""A busy or failing server: the figures of its Measured section, against a real
`majordomus serve` (and stdio `mcp` processes) on throwaway fixture repositories.

  delete    /healthz p99 and max while a session is DELETEd mid-request (its writer waits on
            the checkout's write lock, held by this script)
  writers   a read's p99 idle, then during 200 concurrent writers; the ratio
  sessions  one call's median with no other session, then after 50,000 abandoned ones
  race      six stdio processes x 40 issues racing `start`: successes and ledger lines per run
  churn     a file created during a stream of writes: how long until it is served, per run
  badinput  /healthz p99 while 1,000 idle connections, 50 half-sent requests and a client
            reading one byte a second hang on
  disk      a write to a full tmpfs and to a read-only one: the answer's status and code
            (needs root, or `unshare -rm`, to mount; skipped with a note otherwise)

usage: faults.py BINARY [PHASE ...] [--runs N] [--stream SECONDS]
Every figure comes from one run on this machine; on a machine shared with other builds, read the
ratios, not the absolute times."""
import fcntl, http.client, json, os, random, shutil, socket, statistics, subprocess, sys
import tempfile, threading, time

args = [a for a in sys.argv[1:]]
def option(name, default):
    if name in args:
        i = args.index(name)
        value = args[i + 1]
        del args[i:i + 2]
        return value
    return default
RUNS = int(option("--runs", "20"))
STREAM = float(option("--stream", "30"))
BINARY = os.path.abspath(args[0])
PHASES = args[1:] or ["delete", "writers", "sessions", "race", "churn", "badinput", "disk"]


def fixture(issues=0, at=None):
    repo = at or tempfile.mkdtemp(prefix="mj-faults-")
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run([BINARY, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL)
    path = os.path.join(repo, ".ai/repo/project/issues")
    os.makedirs(path, exist_ok=True)
    for i in range(issues):
        with open(os.path.join(path, f"i{i:03}.yaml"), "w") as f:
            f.write(f"id: i{i:03}\ntitle: Issue {i}\n")
    return repo


class Serve:
    def __init__(self, repo):
        self.proc = subprocess.Popen([BINARY, "serve", "--port", "0", "--repo", repo],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        first = self.proc.stderr.readline()
        self.port = int(first.rsplit(":", 1)[1])
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        self.routes = {r["capability"]: r["path"] for r in self.get("/api/v1")[1]["routes"]}

    def conn(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, conn=None):
        own = conn is None
        conn = conn or self.conn()
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        conn.request(method, path, body=None if body is None else json.dumps(body), headers=h)
        r = conn.getresponse()
        data = r.read()
        if own:
            conn.close()
        try:
            value = json.loads(data) if data else None
        except ValueError:
            value = data
        return r.status, value, r

    def get(self, path, conn=None):
        return self.request("GET", path, conn=conn)

    def mcp(self, session, message, conn=None):
        headers = {"Accept": "application/json, text/event-stream"}
        if session:
            headers["Mcp-Session-Id"] = session
        return self.request("POST", "/mcp", message, headers, conn=conn)

    def initialize(self, name="bench", conn=None):
        status, _, r = self.mcp(None, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": name, "version": "1"}}}, conn=conn)
        assert status == 200, status
        return r.getheader("Mcp-Session-Id")

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def timed(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def hold_lock(repo):
    state = os.path.join(repo, ".ai/local/state")
    os.makedirs(state, exist_ok=True)
    f = open(os.path.join(state, "write.lock"), "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    return f


def phase_delete():
    repo = fixture(issues=1)
    s = Serve(repo)
    waiting = s.initialize("waits")
    lock = hold_lock(repo)
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "majordomus_plan_transition", "arguments": {"issue": "i000", "transition": "start"}}}
    in_flight = threading.Thread(target=lambda: s.mcp(waiting, call))
    in_flight.start()
    time.sleep(0.3)
    times, stop = [], threading.Event()
    def probe():
        c = s.conn(timeout=30)
        while not stop.is_set():
            times.append(timed(lambda: s.get("/healthz", conn=c)))
    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(0.2)
    status, _, _ = s.request("DELETE", "/mcp", headers={"Mcp-Session-Id": waiting})
    time.sleep(1.0)
    stop.set()
    prober.join()
    lock.close()
    in_flight.join()
    s.stop()
    print(f"delete: DELETE mid-request answered {status}; /healthz over {len(times)} calls: "
          f"p99 {pct(times, 0.99):.2f} ms, max {max(times):.2f} ms (bound 20 ms)")


def phase_writers():
    repo = fixture()
    s = Serve(repo)
    read = s.routes["plan.issues"]
    c = s.conn()
    for _ in range(20):
        s.get(read, conn=c)
    idle = [timed(lambda: s.get(read, conn=c)) for _ in range(300)]
    stop = threading.Event()
    outcomes = {}
    lock = threading.Lock()
    def writer(w):
        wc = s.conn()
        n = 0
        while not stop.is_set():
            body = {"id": f"w{w}-{n}", "title": "A note", "body": "Text."}
            try:
                status, _, _ = s.request("POST", s.routes["knowledge.record"], body, conn=wc)
            except Exception:
                wc = s.conn()
                status = "reset"
            with lock:
                outcomes[status] = outcomes.get(status, 0) + 1
            if status == 503:
                time.sleep(0.05)
            n += 1
    threads = [threading.Thread(target=writer, args=(w,)) for w in range(200)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    busy = [timed(lambda: s.get(read, conn=c)) for _ in range(300)]
    stop.set()
    for t in threads:
        t.join()
    s.stop()
    shutil.rmtree(repo, ignore_errors=True)
    ratio = pct(busy, 0.99) / pct(idle, 0.99)
    print(f"writers: read p99 idle {pct(idle, 0.99):.2f} ms, during 200 writers "
          f"{pct(busy, 0.99):.2f} ms: {ratio:.2f}x (bound 3x); writers' answers {outcomes}")


def phase_sessions():
    repo = fixture()
    s = Serve(repo)
    c = s.conn()
    mine = s.initialize("measured", conn=c)
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    def median_call():
        for _ in range(20):
            s.mcp(mine, listing, conn=c)
        return statistics.median(timed(lambda: s.mcp(mine, listing, conn=c)) for _ in range(300))
    none = median_call()
    opened, refused = [0], [0]
    def opener(k):
        oc = s.conn()
        for _ in range(k):
            status, _, _ = s.mcp(None, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "abandoned", "version": "1"}}}, conn=oc)
            if status == 200:
                opened[0] += 1
            else:
                refused[0] += 1
    threads = [threading.Thread(target=opener, args=(50_000 // 8,)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status, _, _ = s.mcp(mine, listing, conn=c)
    many = median_call()
    s.stop()
    print(f"sessions: tools/list median {none:.3f} ms with one session, {many:.3f} ms after "
          f"50,000 initializes ({opened[0]} opened and abandoned, {refused[0]} refused busy at the "
          f"cap): {many / none:.2f}x (bound 1.2x); the measured session answered {status}")


def phase_race():
    results = []
    for run in range(RUNS):
        repo = fixture(issues=40)
        def racer(p, won):
            proc = subprocess.Popen([BINARY, "mcp", "--repo", repo], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            def call(m):
                proc.stdin.write(json.dumps(m) + "\n")
                proc.stdin.flush()
                return json.loads(proc.stdout.readline())
            call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "clientInfo": {"name": f"r{p}", "version": "1"}}})
            order = list(range(40))
            random.shuffle(order)
            for i in order:
                a = call({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {
                    "name": "majordomus_plan_transition",
                    "arguments": {"issue": f"i{i:03}", "transition": "start"}}})
                if a.get("result", {}).get("isError") is False:
                    won.append(i)
            proc.stdin.close()
            proc.wait()
        won = []
        threads = [threading.Thread(target=racer, args=(p, won)) for p in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with open(os.path.join(repo, ".ai/local/state/ledger.jsonl")) as f:
            lines = sum(1 for _ in f)
        results.append((len(won), lines))
        shutil.rmtree(repo, ignore_errors=True)
    exact = sum(1 for w, l in results if w == 40 and l == 40)
    print(f"race: {exact} of {RUNS} runs had exactly 40 successes and 40 ledger lines; "
          f"(successes, lines) per run: {results}")


def phase_churn():
    lags = []
    for run in range(RUNS):
        repo = fixture()
        s = Serve(repo)
        stop = threading.Event()
        writes = [0]
        def stream():
            wc = s.conn()
            while not stop.is_set():
                s.request("POST", s.routes["knowledge.record"],
                          {"id": f"n{writes[0]}", "title": "A note", "body": "Text."}, conn=wc)
                writes[0] += 1
        t = threading.Thread(target=stream)
        t.start()
        time.sleep(random.uniform(0.2, max(0.3, STREAM - 2)))
        name = f"foreign-{run}"
        with open(os.path.join(repo, f".ai/repo/knowledge/curated/{name}.md"), "w") as f:
            f.write(f"---\nid: {name}\ntitle: Made elsewhere\n---\n\nText.\n")
        created = time.perf_counter()
        uri = f"majordomus%3A%2F%2Fknowledge%2F{name}"
        c = s.conn()
        lag = None
        while time.perf_counter() - created < 15:
            if s.get(f"{s.routes['objects.get']}?uri={uri}", conn=c)[0] == 200:
                lag = (time.perf_counter() - created) * 1000
                break
            time.sleep(0.01)
        stop.set()
        t.join()
        s.stop()
        shutil.rmtree(repo, ignore_errors=True)
        lags.append(lag)
    seen = [l for l in lags if l is not None]
    within = sum(1 for l in seen if l <= 1000)
    print(f"churn: {within} of {RUNS} runs served the file within 1 s during the write stream; "
          f"lag ms median {statistics.median(seen) if seen else float('nan'):.0f}, max "
          f"{max(seen) if seen else float('nan'):.0f}; never seen: {len(lags) - len(seen)}")


def phase_badinput():
    repo = fixture()
    s = Serve(repo)
    c = s.conn()
    idle = [timed(lambda: s.get("/healthz", conn=c)) for _ in range(300)]
    hanging = []
    for _ in range(1000):
        hanging.append(socket.create_connection(("127.0.0.1", s.port)))
    for _ in range(50):
        h = socket.create_connection(("127.0.0.1", s.port))
        h.sendall(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\nContent-Length: 100\r\n\r\n{{".encode())
        hanging.append(h)
    slow = socket.create_connection(("127.0.0.1", s.port))
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    slow.sendall(f"GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1:{s.port}\r\n\r\n".encode())
    stop = threading.Event()
    def trickle():
        while not stop.is_set():
            slow.recv(1)
            time.sleep(1)
    threading.Thread(target=trickle, daemon=True).start()
    time.sleep(0.5)
    fresh = []
    for _ in range(100):
        fresh.append(timed(lambda: s.get("/healthz")))
    busy = [timed(lambda: s.get("/healthz", conn=c)) for _ in range(300)]
    stop.set()
    for h in hanging:
        h.close()
    s.stop()
    print(f"badinput: /healthz p99 idle {pct(idle, 0.99):.2f} ms; with 1,000 idle connections, "
          f"50 half requests and a 1 byte/s reader: kept-alive p99 {pct(busy, 0.99):.2f} ms, "
          f"new connection p99 {pct(fresh, 0.99):.2f} ms")


def phase_disk():
    if os.geteuid() != 0:
        print("disk: skipped (mounting a tmpfs needs root; run under `unshare -rm`)")
        return
    base = tempfile.mkdtemp(prefix="mj-disk-")
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", base], check=True)
    except Exception as e:
        print(f"disk: skipped (cannot mount a tmpfs: {e})")
        return
    try:
        repo = fixture(at=os.path.join(base, "repo"))
        s = Serve(repo)
        fill = os.path.join(base, "fill")
        f = open(fill, "wb", buffering=0)
        try:
            while True:
                f.write(b"\0" * 4096)
        except OSError:
            pass
        f.close()
        full = s.request("POST", s.routes["knowledge.record"],
                         {"id": "on-a-full-disk", "title": "A note", "body": "x" * 20000})
        session = s.initialize()
        mcp = s.mcp(session, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "majordomus_knowledge_record", "arguments": {"id": "full-too", "title": "A note", "body": "x" * 20000}}})
        os.remove(fill)
        subprocess.run(["mount", "-o", "remount,ro", base], check=True)
        ro = s.request("POST", s.routes["knowledge.record"],
                       {"id": "on-a-read-only-disk", "title": "A note", "body": "Text."})
        s.stop()
        leftovers = [f for _, _, fs in os.walk(repo) for f in fs if f.endswith(".mj-tmp")]
        code = lambda v: v.get("error", {}).get("code") if isinstance(v, dict) else v
        mcp_result = mcp[1].get("result", mcp[1].get("error"))
        print(f"disk: full -> {full[0]} {code(full[1])}; over MCP isError={mcp_result.get('isError')} "
              f"code={mcp_result.get('_meta', {}).get('majordomus', {}).get('error', {}).get('code')}; "
              f"read-only -> {ro[0]} {code(ro[1])}; temp files left: {len(leftovers)}")
    finally:
        subprocess.run(["umount", "-l", base])
        shutil.rmtree(base, ignore_errors=True)


for phase in PHASES:
    globals()[f"phase_{phase}"]()
