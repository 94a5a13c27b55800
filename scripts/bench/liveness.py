#!/usr/bin/env python3
"""Liveness under load and scarcity, on the 10,000-object layer of scripts/bench/peers.sh:

  probe    /healthz p50/p99/max (a fresh connection per probe, 200 probes) while wrk holds 512
           connections loading GET /api/v1/object on a knowledge object; and how many probes
           were not 200.
  idle     /healthz p50/p99/max with the server started under `ulimit -n 64` and 200 idle
           connections (opened, nothing sent) held through the probes.
  git      GET /api/v1/object?uri=majordomus://repository (repository.info) against a knowledge
           object, each SECONDS at 64 connections, in the same run: requests/s, p99, the ratio,
           and the most `git` processes the server ran at once (sampled every 5 ms).

Prints the load average before each phase; the machine is shared, so read the ratios.

usage: liveness.py BINARY [SECONDS] [REPO]
       (default 10 /tmp/majordomus-bench/repo-10000; needs wrk)"""
import http.client, os, re, socket, statistics, subprocess, sys, threading, time

binary = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else sys.exit(__doc__)
seconds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
repo = sys.argv[3] if len(sys.argv) > 3 else "/tmp/majordomus-bench/repo-10000"
if not os.path.isdir(os.path.join(repo, ".ai")):
    sys.exit(f"{repo} has no layer: run scripts/bench/peers.sh once")
port = 18797
KNOWLEDGE = "/api/v1/object?uri=majordomus%3A%2F%2Fknowledge%2Fdoc-05000"
REPOSITORY = "/api/v1/object?uri=majordomus%3A%2F%2Frepository"


def load():
    return open("/proc/loadavg").read().split()[:3]


def start(open_files=None):
    limit = f"ulimit -n {open_files} && " if open_files else ""
    server = subprocess.Popen(
        ["sh", "-c", f'{limit}exec "$0" serve --port {port} --repo "$1"', binary, repo],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if probe() == 200:
                return server
        except OSError:
            time.sleep(0.02)
    server.kill()
    sys.exit("the server did not answer /healthz within 60 s")


def probe(timeout=60):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", "/healthz")
    status = conn.getresponse().status
    conn.close()
    return status


def probes(n=200, gap=0.02):
    """`n` probes, each timed; sorted times, the first probe's time, how many were not 200."""
    times, bad = [], 0
    for _ in range(n):
        began = time.perf_counter()
        try:
            status = probe()
        except OSError:
            status = 0
        times.append((time.perf_counter() - began) * 1e3)
        bad += status != 200
        time.sleep(gap)
    first = times[0]
    times.sort()
    return times, first, bad


def summary(times):
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    return f"p50 {statistics.median(times):.2f} ms, p99 {p99:.2f} ms, max {times[-1]:.2f} ms"


def wrk(path, conns, secs):
    out = subprocess.run(
        ["wrk", "-t2", f"-c{conns}", f"-d{secs}s", "--latency", f"http://127.0.0.1:{port}{path}"],
        capture_output=True, text=True).stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    scale = {"us": 1e-3, "ms": 1, "s": 1e3}[p99.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return rate, float(p99.group(1)) * scale, int(non2xx.group(1)) if non2xx else 0


def phase_probe():
    print(f"--- probe: load average {load()}")
    server = start()
    try:
        loaded = {}
        flood = threading.Thread(target=lambda: loaded.update(r=wrk(KNOWLEDGE, 512, seconds)))
        flood.start()
        time.sleep(1)
        times, _, bad = probes(n=min(200, int((seconds - 2) / 0.025)))
        flood.join()
        rate, p99, non2xx = loaded["r"]
        print(f"/healthz under 512 connections on GET /api/v1/object: {summary(times)}; "
              f"{bad} of {len(times)} not 200 (the load: {rate:.0f} req/s, p99 {p99:.1f} ms, "
              f"{non2xx} non-2xx)")
    finally:
        server.kill()
        server.wait()


def phase_idle():
    print(f"--- idle: load average {load()}")
    server = start(open_files=64)
    try:
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(200)]
        times, first, bad = probes()
        print(f"/healthz with 200 idle connections at a 64-descriptor limit: {summary(times)}; "
              f"the first probe {first:.2f} ms; {bad} of {len(times)} not 200")
        for s in idle:
            s.close()
    finally:
        server.kill()
        server.wait()


def phase_git():
    print(f"--- git: load average {load()}")
    server = start()
    try:
        seen, stop = [0], threading.Event()

        def count():
            while not stop.is_set():
                n = sum(1 for p in os.listdir("/proc") if p.isdigit() and child_git(p, server.pid))
                seen[0] = max(seen[0], n)
                time.sleep(0.005)

        sampler = threading.Thread(target=count)
        sampler.start()
        results = {}
        for name, path in (("knowledge object", KNOWLEDGE), ("repository.info", REPOSITORY),
                           ("knowledge object again", KNOWLEDGE)):
            results[name] = wrk(path, 64, seconds)
            rate, p99, non2xx = results[name]
            print(f"{name}: {rate:.0f} req/s, p99 {p99:.2f} ms, {non2xx} non-2xx")
        stop.set()
        sampler.join()
        base = (results["knowledge object"][0] + results["knowledge object again"][0]) / 2
        print(f"repository.info / knowledge object: {results['repository.info'][0] / base:.2f}; "
              f"most git processes at once: {seen[0]}")
    finally:
        server.kill()
        server.wait()


def child_git(pid, parent):
    """Whether process `pid` is a `git` the server started (the machine may run others)."""
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    name, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
    return name == "git" and int(rest[1]) == parent


for phase in (phase_probe, phase_idle, phase_git):
    phase()
