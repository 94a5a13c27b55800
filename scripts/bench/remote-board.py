#!/usr/bin/env python3
"""The board shared on a git remote, measured against a real git server this script starts:
`git daemon --enable=receive-pack` on a bare repository on the loopback (or, with
`--remote file`, a `file://` remote), three clones of it, agents as `majordomus mcp` processes
driven over stdio.

1. Claim latency: one agent claims a fresh path and releases it, LATENCY rounds, while an agent
   of another clone is on the board: p50/p99 of the claim's round trip (a fetch and a
   compare-and-swap push each), and of the release.
2. Message reach: an agent sends to every agent, SENDS times; the time until the agent of another
   clone has it in its inbox (polled every 20 ms): median and max.
3. Race: 3 clones x 2 agents claim one new path at once, ROUNDS rounds: grants per round (must be
   exactly 1), p50/p99 of a claim's round trip under the race.
4. A vanished clone: its agent holds a path and its process is SIGKILLed (with
   MAJORDOMUS_BOARD_LEASE=LEASE for every agent of this part); the time until an agent of another
   clone is granted the path.
5. The ref after CLAIMS claims (released every 100): the size of what `refs/majordomus/board`
   reaches (commit, tree, document), its history's length, and the server's object store.
6. A new issue's reach: an agent creates an issue, ISSUES times; the time until the agent of
   another clone has it in `plan.ready` (polled every 20 ms): median and max.

With `--record`, writes what it measured as the README's `remote_board` figures
(`docs/figures/remote_board.json`, see figures.py).

usage: remote-board.py BINARY [--remote daemon|file] [--latency N] [--sends N] [--rounds N]
                              [--lease S] [--claims N] [--issues N] [--record]"""
import argparse, os, signal, socket, statistics, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402
from stdio_session import Session  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--remote", choices=["daemon", "file"], default="daemon")
parser.add_argument("--latency", type=int, default=200)
parser.add_argument("--sends", type=int, default=20)
parser.add_argument("--rounds", type=int, default=100)
parser.add_argument("--lease", type=int, default=10)
parser.add_argument("--claims", type=int, default=10_000)
parser.add_argument("--issues", type=int, default=20)
parser.add_argument("--record", action="store_true")
args = parser.parse_args()
# The one-minute load average, sampled at the start and after every part.
loads = [figures.load_average()]
# What the README shows, filled by each part.
rows, values = [], {}
binary = os.path.abspath(args.binary)
GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def ms(t):
    return (time.perf_counter() - t) * 1000


def git(*a, cwd=None):
    return subprocess.run(GIT + list(a), cwd=cwd, check=True, capture_output=True, text=True).stdout


def server(top):
    """A seeded bare repository, served; answers its URL and the daemon (or None)."""
    seed = os.path.join(top, "seed")
    os.makedirs(seed)
    git("init", "-q", cwd=seed)
    subprocess.run([binary, "init"], cwd=seed, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(seed, ".ai/manifest.yaml"), "a") as f:
        f.write("board:\n  remote: origin\n")
    git("add", "-A", cwd=seed)
    git("commit", "-qm", "seed", cwd=seed)
    bare = os.path.join(top, "remote.git")
    git("clone", "-q", "--bare", seed, bare)
    if args.remote == "file":
        return bare, f"file://{bare}", None
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # `git daemon` runs `git-daemon` as its child: that is started directly, so killing it stops it.
    exec_path = subprocess.run(["git", "--exec-path"], capture_output=True, text=True, check=True).stdout.strip()
    daemon = subprocess.Popen([os.path.join(exec_path, "git-daemon"), "--reuseaddr", "--export-all", "--enable=receive-pack",
                               f"--base-path={top}", "--listen=127.0.0.1", f"--port={port}", top],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit("git daemon did not accept within 10 s")
            time.sleep(0.05)
    return bare, f"git://127.0.0.1:{port}/remote.git", daemon


def env(lease=None):
    e = dict(os.environ)
    e.pop("MAJORDOMUS_BOARD", None)
    if lease:
        e["MAJORDOMUS_BOARD_LEASE"] = str(lease)
    return e


def main():
    print(f"load average at start: {os.getloadavg()}; remote: {args.remote}")
    with tempfile.TemporaryDirectory(prefix="remote-board-bench-") as top:
        bare, url, daemon = server(top)
        clones = []
        for name in "abc":
            d = os.path.join(top, name)
            git("clone", "-q", url, d)
            clones.append(d)
        try:
            run(bare, clones)
        finally:
            if daemon:
                daemon.kill()
                daemon.wait()
    print(f"load average at end: {os.getloadavg()}")
    if args.record:
        figures.record(
            "remote_board",
            build="release" if "/release/" in binary else "debug",
            loads=loads,
            values=values,
            columns=[f"over {'`git daemon` on the loopback' if args.remote == 'daemon' else 'a `file://` remote'}",
                     "p50 / median", "p99 / max"],
            rows=rows,
        )


def run(bare, clones):
    a, b = Session(binary, clones[0], "a1", env()), Session(binary, clones[1], "b1", env())
    assert b.tool("majordomus_claim", {"globs": ["b-owns/**"]})["granted"]
    claims, releases = [], []
    for i in range(args.latency):
        t = time.perf_counter()
        answer = a.tool("majordomus_claim", {"globs": [f"lat/{i}.rs"]})
        claims.append(ms(t))
        assert answer["granted"], answer
        t = time.perf_counter()
        a.tool("majordomus_release", {})
        releases.append(ms(t))
    print(f"1. claim latency, {args.latency} rounds: claim p50 {q(claims, .5):.1f} ms p99 {q(claims, .99):.1f} ms; "
          f"release p50 {q(releases, .5):.1f} ms p99 {q(releases, .99):.1f} ms")
    rows.append([f"a claim, {args.latency} rounds (ms)", f"{q(claims, .5):.0f}", f"{q(claims, .99):.0f}"])
    rows.append([f"its release (ms)", f"{q(releases, .5):.0f}", f"{q(releases, .99):.0f}"])
    loads.append(figures.load_average())


    reach = []
    for i in range(args.sends):
        before = len(b.tool("majordomus_inbox", {})["messages"])
        t = time.perf_counter()
        sent = a.tool("majordomus_send", {"all": True, "subject": f"note {i}"})
        assert sent["recipients"], sent
        while len(b.tool("majordomus_inbox", {})["messages"]) <= before:
            if ms(t) > 30_000:
                raise SystemExit("a message took more than 30 s to cross")
            time.sleep(0.02)
        reach.append(ms(t))
        b.tool("majordomus_mark_read", {})
    print(f"2. message reach across clones, {args.sends} messages: median {statistics.median(reach):.0f} ms "
          f"max {max(reach):.0f} ms")
    rows.append([f"a message in another clone's inbox, {args.sends} messages (ms)",
                 f"{statistics.median(reach):.0f}", f"{max(reach):.0f}"])
    loads.append(figures.load_average())
    a.close()
    b.close()

    racers = [Session(binary, clones[i // 2], f"r{i}", env()) for i in range(6)]
    grants, latencies = [], []
    for r in range(args.rounds):
        barrier = threading.Barrier(6)
        won = [False] * 6

        def race(i):
            barrier.wait()
            t = time.perf_counter()
            won[i] = racers[i].tool("majordomus_claim", {"globs": [f"race/{r}.rs"]})["granted"]
            latencies.append(ms(t))
        threads = [threading.Thread(target=race, args=(i,)) for i in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        grants.append(sum(won))
        for x in racers:
            x.tool("majordomus_release", {})
    exact = sum(1 for g in grants if g == 1)
    print(f"3. race, 3 clones x 2 agents, {args.rounds} rounds: rounds with exactly one grant {exact}/{args.rounds} "
          f"(min {min(grants)} max {max(grants)}); claim p50 {q(latencies, .5):.0f} ms p99 {q(latencies, .99):.0f} ms")
    rows.append([f"a claim in a race of 3 clones × 2 agents, {args.rounds} rounds (ms)",
                 f"{q(latencies, .5):.0f}", f"{q(latencies, .99):.0f}"])
    values["race"] = f"{exact} of {args.rounds}"
    loads.append(figures.load_average())
    for x in racers:
        x.close()

    doomed = Session(binary, clones[2], "doomed", env(args.lease))
    waiting = Session(binary, clones[0], "waiting", env(args.lease))
    assert doomed.tool("majordomus_claim", {"globs": ["vanish/**"]})["granted"]
    assert not waiting.tool("majordomus_claim", {"globs": ["vanish/x"]})["granted"]
    os.kill(doomed.proc.pid, signal.SIGKILL)
    doomed.proc.wait()
    t = time.perf_counter()
    while not waiting.tool("majordomus_claim", {"globs": ["vanish/x"]})["granted"]:
        time.sleep(0.1)
    print(f"4. a vanished clone (SIGKILL, lease {args.lease} s): its claim freed for another clone after "
          f"{ms(t) / 1000:.1f} s")
    values["freed"] = f"{ms(t) / 1000:.1f} s"
    values["lease"] = f"{args.lease} s"
    loads.append(figures.load_average())
    waiting.close()

    bulk = Session(binary, clones[0], "bulk", env())
    t = time.perf_counter()
    for i in range(args.claims):
        assert bulk.tool("majordomus_claim", {"globs": [f"bulk/{i}.rs"]})["granted"]
        if i % 100 == 99:
            bulk.tool("majordomus_release", {})
    took = time.perf_counter() - t
    sizes = subprocess.run(["git", "-C", bare, "cat-file", "--batch-check"], check=True, text=True,
                           capture_output=True,
                           input="refs/majordomus/board\nrefs/majordomus/board^{tree}\nrefs/majordomus/board:board.json\n"
                           ).stdout.split("\n")
    reached = sum(int(line.split()[2]) for line in sizes if line.strip())
    history = git("-C", bare, "rev-list", "--count", "refs/majordomus/board").strip()
    objects = dict(line.split(": ") for line in git("-C", bare, "count-objects", "-v").splitlines())
    print(f"5. after {args.claims} claims ({took:.0f} s, {args.claims / took:.1f} claims/s): the ref reaches "
          f"{reached} bytes (commit, tree, document), history {history} commit; the server's store holds "
          f"{objects['count']} loose objects ({objects['size']} KiB) until its gc")
    values["claims"] = f"{args.claims:,}"
    values["ref"] = f"{reached:,} bytes"
    values["history"] = f"{history} commit" + ("" if history == "1" else "s")
    loads.append(figures.load_average())
    bulk.close()

    # Last: every write of the board after this one carries the new issues too.
    maker, taker = Session(binary, clones[0], "maker", env()), Session(binary, clones[1], "taker", env())
    made = []
    for i in range(args.issues):
        t = time.perf_counter()
        new = maker.tool("majordomus_plan_create", {"title": f"Reach {i}"})["id"]
        while not any(x["id"] == new for x in taker.tool("majordomus_plan_ready", {"limit": 1000})["ready"]):
            if ms(t) > 30_000:
                raise SystemExit("a new issue took more than 30 s to reach another clone")
            time.sleep(0.02)
        made.append(ms(t))
    print(f"6. a new issue in another clone's plan.ready, {args.issues} issues: median "
          f"{statistics.median(made):.0f} ms max {max(made):.0f} ms")
    rows.append([f"a new issue in another clone's `plan.ready`, {args.issues} issues (ms)",
                 f"{statistics.median(made):.0f}", f"{max(made):.0f}"])
    loads.append(figures.load_average())
    maker.close()
    taker.close()


main()
