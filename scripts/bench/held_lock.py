#!/usr/bin/env python3
"""A stdio session while another process holds the checkout's write lock for HOLD seconds:
one write is sent and waits for the lock; meanwhile `ping` and a read (`plan.issues`) are
timed, one after the other, for the whole hold. Prints their p50/p99 in ms and when the write
answered (its deadline, or the lock's release, whichever came first).
usage: held_lock.py BINARY [HOLD_SECONDS]"""
import fcntl, json, os, subprocess, sys, tempfile, time

binary = sys.argv[1]
hold = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
with tempfile.TemporaryDirectory() as repo:
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run([binary, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL)
    issues = os.path.join(repo, ".ai/repo/project/issues")
    os.makedirs(issues)
    with open(os.path.join(issues, "i0.yaml"), "w") as f:
        f.write("id: i0\ntitle: Issue 0\n")
    os.makedirs(os.path.join(repo, ".ai/local/state"), exist_ok=True)
    lock = open(os.path.join(repo, ".ai/local/state/write.lock"), "a")
    fcntl.flock(lock, fcntl.LOCK_EX)
    proc = subprocess.Popen([binary, "mcp", "--repo", repo], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
    def send(message):
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "bench", "version": "1"}}})
    json.loads(proc.stdout.readline())
    started = time.perf_counter()
    send({"jsonrpc": "2.0", "id": "write", "method": "tools/call",
          "params": {"name": "majordomus_plan_transition",
                     "arguments": {"issue": "i0", "transition": "start"}}})
    times = {"ping": [], "read": []}
    write_answer = None
    n = 0
    released = False
    while True:
        now = time.perf_counter()
        if not released and now - started >= hold:
            fcntl.flock(lock, fcntl.LOCK_UN)
            released = True
        if released and write_answer is not None:
            break
        n += 1
        kind = "ping" if n % 2 else "read"
        message = {"jsonrpc": "2.0", "id": n, "method": "ping"} if kind == "ping" else \
            {"jsonrpc": "2.0", "id": n, "method": "tools/call",
             "params": {"name": "majordomus_plan_issues", "arguments": {}}}
        t = time.perf_counter()
        send(message)
        while True:
            frame = json.loads(proc.stdout.readline())
            if frame.get("id") == "write":
                code = frame["result"].get("_meta", {}).get("majordomus", {}).get("error", {}).get("code")
                write_answer = (time.perf_counter() - started, code or "ok")
                continue
            if frame.get("id") == n:
                break
        if not released:
            times[kind].append((time.perf_counter() - t) * 1000)
        time.sleep(0.005)
    proc.stdin.close()
    proc.wait()
    for kind, ts in times.items():
        ts.sort()
        print(f"{kind} during the hold: p50 {ts[len(ts) // 2]:.2f} ms, p99 {ts[int(len(ts) * 0.99)]:.2f} ms over {len(ts)}")
    print(f"the write answered `{write_answer[1]}` after {write_answer[0]:.2f} s (lock held {hold:.0f} s)")
