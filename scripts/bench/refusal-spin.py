#!/usr/bin/env python3
"""What a client that ignores `Retry-After` costs once the guard's in-flight bound is full (issue
13, Bad input: no other client is slowed). For each binary, in turns: `serve` on a fresh
repository, MAX_IN_FLIGHT (256) requests that announce a body and never send it (each holds its
permit until the 30 s deadline), then CLIENTS threads that ask `GET /healthz` again at once after
every `503 busy`, for SECONDS. Prints the refusals answered, the server's CPU time in that window
(utime + stime from /proc) and the load average, per binary and round.

usage: refusal-spin.py ROUNDS CLIENTS SECONDS BINARY [BINARY ...]   (e.g. 3 8 5 before after)"""
import http.client, os, socket, statistics, subprocess, sys, tempfile, threading, time

if len(sys.argv) < 5:
    sys.exit(__doc__)
rounds, clients, seconds = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
binaries = [os.path.abspath(b) for b in sys.argv[4:]]
IN_FLIGHT = 256
port = 18796


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def spin(stop, counts):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    n = 0
    while not stop.is_set():
        try:
            conn.request("GET", "/healthz")
            reply = conn.getresponse()
            reply.read()
            n += 1
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    counts.append(n)


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
            stalled = []
            for _ in range(IN_FLIGHT):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
                stalled.append(s)
            time.sleep(0.5)  # every stalled request holds its permit
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
            for s in stalled:
                s.close()
            return sum(counts), used, load
        finally:
            server.terminate()
            server.wait()


results = {b: [] for b in binaries}
for r in range(rounds):
    for binary in binaries:
        answered, used, load = one(binary)
        results[binary].append((answered, used))
        print(f"round {r + 1}  {binary}: {answered} refusals in {seconds:.0f} s "
              f"({answered / seconds:.0f}/s), server CPU {used:.2f} s; load before {load}")
for binary, runs in results.items():
    print(f"median  {binary}: {statistics.median(a for a, _ in runs) / seconds:.0f} refusals/s, "
          f"server CPU {statistics.median(u for _, u in runs):.2f} s in {seconds:.0f} s "
          f"({clients} clients, {rounds} rounds)")
