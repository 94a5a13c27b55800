#!/usr/bin/env python3
"""What an idle agent costs when the board is shared on a git remote: one `majordomus mcp`
process with one agent, on a clone of a bare repository served by `git daemon` on the loopback,
making no request while nothing on the board changes.

For each build named, in turn, with a server of its own: start the agent, wait WARM seconds (the
quiet spell), then over WINDOW seconds measure the process's CPU (user and system, with the git
processes it started and waited for, from /proc) and how many fetches reached the server (the
daemon's log of `upload-pack` requests).

With `--record`, writes the README's `remote_idle` table (`docs/figures/remote_idle.json`, see
figures.py).

usage: remote-idle.py [--warm S] [--window S] [--record] NAME=BINARY..."""
import argparse, json, os, shlex, socket, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--warm", type=float, default=40)
parser.add_argument("--window", type=float, default=60)
parser.add_argument("--record", action="store_true")
parser.add_argument("builds", nargs="+", metavar="NAME=BINARY")
args = parser.parse_args()
GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
TICK = os.sysconf("SC_CLK_TCK")


def git(*a, cwd=None):
    subprocess.run(GIT + list(a), cwd=cwd, check=True, capture_output=True)


def cpu_seconds(pid):
    """utime, stime, cutime and cstime of `pid`: its own CPU and its waited children's."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICK


def measure(binary):
    """(% of a core, fetches a minute) of one idle agent of `binary`."""
    with tempfile.TemporaryDirectory() as top:
        seed = os.path.join(top, "seed")
        os.makedirs(seed)
        git("init", "-q", cwd=seed)
        subprocess.run([binary, "init"], cwd=seed, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(seed, ".ai/manifest.yaml"), "a") as f:
            f.write("board:\n  remote: origin\n")
        git("add", "-A", cwd=seed)
        git("commit", "-qm", "seed", cwd=seed)
        git("clone", "-q", "--bare", seed, os.path.join(top, "remote.git"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout.strip()
        daemon = subprocess.Popen([os.path.join(exec_path, "git-daemon"), "--verbose", "--reuseaddr", "--export-all",
                                   "--enable=receive-pack", f"--base-path={top}", "--listen=127.0.0.1", f"--port={port}", top],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        fetches = []
        threading.Thread(target=lambda: [fetches.append(time.monotonic()) for line in daemon.stderr
                                         if "Request upload-pack" in line], daemon=True).start()
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit("git daemon did not accept within 10 s")
                time.sleep(0.05)
        clone = os.path.join(top, "clone")
        git("clone", "-q", f"git://127.0.0.1:{port}/remote.git", clone)
        agent = subprocess.Popen([binary, "mcp", "--repo", clone], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)

        def ask(message):
            agent.stdin.write((json.dumps(message) + "\n").encode())
            agent.stdin.flush()
            if "id" in message:
                agent.stdout.readline()

        ask({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "idle", "version": "1"}}})
        ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ask({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "majordomus_peers", "arguments": {}}})
        time.sleep(args.warm)
        began, before = time.monotonic(), cpu_seconds(agent.pid)
        time.sleep(args.window)
        spent, took = cpu_seconds(agent.pid) - before, time.monotonic() - began
        fetched = sum(1 for t in fetches if began <= t <= began + took)
        agent.stdin.close()
        agent.wait()
        daemon.kill()
        daemon.wait()
        return 100 * spent / took, 60 * fetched / took


loads = [figures.load_average()]
rows = []
for named in args.builds:
    name, binary = named.split("=", 1)
    share, per_minute = measure(os.path.abspath(binary))
    loads.append(figures.load_average())
    print(f"{name}: {share:.2f}% of a core, {per_minute:.1f} fetches a minute")
    rows.append([name, f"{share:.2f}%", f"{per_minute:.1f}"])
if args.record:
    figures.record(
        "remote_idle",
        build="release",
        loads=loads,
        command=" ".join(shlex.quote(a) for a in ["scripts/bench/remote-idle.py"] + sys.argv[1:]),
        columns=[f"one idle agent, board shared over `git daemon` ({args.window:.0f} s after {args.warm:.0f} s quiet)",
                 "CPU (% of a core)", "fetches a minute"],
        rows=rows,
    )
