#!/usr/bin/env python3
"""Startup to the first answered HTTP request: spawn `majordomus serve`, then try
GET /healthz every 0.2 ms until it answers 200. Prints the median over N runs.
usage: startup.py BINARY REPO [RUNS]"""
import socket, statistics, subprocess, sys, time

binary, repo = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 15
port = 18760
times = []
for _ in range(runs):
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "serve", "--port", str(port), "--repo", repo],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                if s.recv(64).startswith(b"HTTP/1.1 200"):
                    break
        except OSError:
            time.sleep(0.0002)
    times.append((time.perf_counter() - start) * 1000)
    proc.terminate()
    proc.wait()
print(f"startup to first answered request: median {statistics.median(times):.1f} ms, "
      f"min {min(times):.1f} ms, max {max(times):.1f} ms over {runs} runs ({repo})")
