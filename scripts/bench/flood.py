#!/usr/bin/env python3
"""Cheap pages under a flood of expensive ones: the latency of cheap requests
(the Cockpit's home page, a small object page, GET /api/v1/object) on an idle `serve`, then while
N clients each request the most expensive Cockpit page in a loop (the object page of a 4 MB
document of links to 1,000 objects). Prints p50/p99 of each and the flooded/idle ratio, what
the flood's requests answered (200, 503 busy, ...) and how long they took, the server's CPU time
in each phase (utime + stime from /proc) and the load average before each.

usage: flood.py BINARY [CLIENTS] [SAMPLES] [WORKDIR] [PAUSE]
       (default 48 300 /tmp/majordomus-flood 0)
PAUSE is what a flood client does after a 503: `0` asks again at once (no backoff), a number
waits that many seconds, `retry-after` waits what the answer's `Retry-After` says.
Each cheap request is measured SAMPLES times or for 20 s, whichever ends first. 48 clients are
more than the server's 32 blocking threads."""
import http.client, multiprocessing, os, shutil, statistics, subprocess, sys, time, urllib.parse

binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else sys.exit(__doc__)
clients = int(sys.argv[2]) if len(sys.argv) > 2 else 48
samples = int(sys.argv[3]) if len(sys.argv) > 3 else 300
work = sys.argv[4] if len(sys.argv) > 4 else "/tmp/majordomus-flood"
pause = sys.argv[5] if len(sys.argv) > 5 else "0"
if pause != "retry-after":
    pause = float(pause)
repo = os.path.join(work, "repo")
port = 18795


def make_repo():
    if os.path.exists(os.path.join(repo, "docs", "links.md")):
        return
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(os.path.join(repo, "docs", "d"))
    git = ["git", "-C", repo, "-c", "user.email=f@x", "-c", "user.name=f"]
    subprocess.run(git + ["init", "-q"], check=True)
    subprocess.run([binary, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL)
    for i in range(1000):
        with open(os.path.join(repo, "docs", "d", f"{i:04}.md"), "w") as f:
            f.write(f"# Document {i}\n\nA small page.\n")
    with open(os.path.join(repo, "docs", "links.md"), "w") as f:
        f.write("# Links\n\n")
        i, size = 0, 0
        while size < 4 * 1024 * 1024 - 64:
            link = f"[d{i}](d/{i % 1000:04}.md) "
            f.write(link)
            size += len(link)
            i += 1
    subprocess.run(git + ["add", "-A"], check=True)
    subprocess.run(git + ["commit", "-qm", "a document of links"], check=True)


def object_page(path):
    return "/cockpit/object?uri=" + urllib.parse.quote(f"majordomus://document/{path}", safe="")


EXPENSIVE = object_page("docs/links.md")
CHEAP = {
    "home": "/cockpit",
    "small object page": object_page("docs/d/0001.md"),
    "GET /api/v1/object": "/api/v1/object?uri="
    + urllib.parse.quote("majordomus://document/docs/d/0001.md", safe=""),
}


def get(conn, target):
    conn.request("GET", target)
    reply = conn.getresponse()
    body = reply.read()
    get.retry_after = reply.getheader("Retry-After")
    return reply.status, body


def flood(stop, results):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    answered = []
    while not stop.is_set():
        start = time.perf_counter()
        try:
            status, _ = get(conn, EXPENSIVE)
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            status = "error"
        answered.append((status, time.perf_counter() - start))
        if status == 503 and pause == "retry-after":
            time.sleep(float(get.retry_after or 0))
        elif status == 503 and pause:
            time.sleep(pause)
    # One message at the end: a message per answer filled the pipe, and the counts stopped.
    results.put(answered)


def measure(label):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    out = {}
    for name, target in CHEAP.items():
        times = []
        budget = time.perf_counter() + 20
        while len(times) < samples and (len(times) < 3 or time.perf_counter() < budget):
            start = time.perf_counter()
            status, body = get(conn, target)
            times.append((time.perf_counter() - start) * 1000)
            if status != 200:
                sys.exit(f"{name} answered {status} {label}: {body[:200]!r}")
        q = statistics.quantiles(times, n=100)
        out[name] = (statistics.median(times), q[98])
        print(f"  {label:8} {name:20} p50 {out[name][0]:8.2f} ms  p99 {out[name][1]:8.2f} ms")
    return out


def cpu_seconds(pid):
    """The server's CPU time so far, user and system, in seconds."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def main():
    make_repo()
    server = subprocess.Popen([binary, "serve", "--port", str(port), "--repo", repo],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                if get(conn, "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.01)
        start = time.perf_counter()
        status, body = get(conn, EXPENSIVE)
        print(f"the expensive page alone: {status}, {len(body):,} bytes, "
              f"{(time.perf_counter() - start) * 1000:.0f} ms")
        print(f"pause after a 503: {pause}; load average {loadavg()} on {os.cpu_count()} cores")
        cpu, wall = cpu_seconds(server.pid), time.perf_counter()
        idle = measure("idle")
        print(f"  idle: server CPU {cpu_seconds(server.pid) - cpu:.2f} s in "
              f"{time.perf_counter() - wall:.1f} s; load average now {loadavg()}")
        stop, results = multiprocessing.Event(), multiprocessing.Queue()
        flooders = [multiprocessing.Process(target=flood, args=(stop, results))
                    for _ in range(clients)]
        for p in flooders:
            p.start()
        time.sleep(2)  # every flood client has a render under way
        cpu, wall = cpu_seconds(server.pid), time.perf_counter()
        flooded = measure(f"{clients} flood")
        flood_cpu, flood_wall = cpu_seconds(server.pid) - cpu, time.perf_counter() - wall
        stop.set()
        answered = []
        for _ in flooders:
            answered.extend(results.get(timeout=180))
        for p in flooders:
            p.join()
        flooded_for = time.perf_counter() - wall
        print("ratio flooded/idle:")
        for name in CHEAP:
            print(f"  {name:20} p50 {flooded[name][0] / idle[name][0]:7.1f}x  "
                  f"p99 {flooded[name][1] / idle[name][1]:7.1f}x")
        by_status = {}
        for status, took in answered:
            by_status.setdefault(status, []).append(took * 1000)
        print(f"flooded: server CPU {flood_cpu:.2f} s in {flood_wall:.1f} s; "
              f"load average now {loadavg()}; the flood asked "
              f"{len(answered) / (flooded_for + 2):.0f} times a second")
        for status, took in sorted(by_status.items(), key=str):
            print(f"flood answers {status}: {len(took)}, median {statistics.median(took):.0f} ms, "
                  f"max {max(took):.0f} ms")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
