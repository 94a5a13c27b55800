#!/usr/bin/env python3
"""`majordomus peers check --hook git` as a pre-commit hook, measured: wall time of the hook
command on a repository with 3 worktrees (a `majordomus mcp` peer serving each, 200 live
exclusive claims on the board) and 1,000 files staged in the third worktree, none of them held,
so every staged path is checked against every claim. Run RUNS times in the staging worktree,
as git runs a hook (cwd at the top of the worktree, GIT_INDEX_FILE set), alternated with the
same command fed a held path so the refusal is measured too. Target: median <= 50 ms.

usage: peers_check_hook.py BINARY [--runs N]"""
import argparse, json, os, statistics, subprocess, tempfile, time
from stdio_session import Session

parser = argparse.ArgumentParser()
parser.add_argument("binary")
parser.add_argument("--runs", type=int, default=100)
args = parser.parse_args()


def git(*a, cwd):
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", *a], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL)


print(f"load average at start: {os.getloadavg()}")
top = tempfile.mkdtemp(prefix="hook-bench-")
main = os.path.join(top, "main")
os.mkdir(main)
git("init", "-q", cwd=main)
subprocess.run([args.binary, "init", "--repo", main], check=True, stdout=subprocess.DEVNULL,
               stderr=subprocess.DEVNULL)
git("add", "-A", cwd=main)
git("commit", "-qm", "i", cwd=main)
trees = [main]
for name in ("second", "third"):
    path = os.path.join(top, name)
    git("worktree", "add", "-q", path, "-b", name, cwd=main)
    trees.append(path)
peers = [Session(args.binary, t, f"peer-{i}") for i, t in enumerate(trees)]
for i, p in enumerate(peers[:2]):
    for k in range(100):
        assert p.tool("majordomus_claim", {"globs": [f"area/{i}/{k}/**", f"held/{i}-{k}.rs"]})["granted"]
third = trees[2]
staged = os.path.join(third, "staged")
for d in range(10):
    os.makedirs(os.path.join(staged, f"d{d}"))
    for f in range(100):
        open(os.path.join(staged, f"d{d}", f"f{f}.rs"), "w").close()
git("add", "staged", cwd=third)
gitdir = subprocess.run(["git", "rev-parse", "--absolute-git-dir"], cwd=third, check=True,
                        capture_output=True, text=True).stdout.strip()
env = dict(os.environ, GIT_INDEX_FILE=os.path.join(gitdir, "index"))
hook = [args.binary, "peers", "check", "--hook", "git", "--mode", "enforce"]

free, refused = [], []
for r in range(args.runs):
    t = time.perf_counter()
    out = subprocess.run(hook, cwd=third, env=env, capture_output=True)
    free.append((time.perf_counter() - t) * 1000)
    assert out.returncode == 0, out.stderr
    held = os.path.join(third, "held", "0-7.rs")
    if r == 0:
        os.makedirs(os.path.dirname(held), exist_ok=True)
        open(held, "w").close()
    git("add", "held/0-7.rs", cwd=third)
    t = time.perf_counter()
    out = subprocess.run(hook, cwd=third, env=env, capture_output=True)
    refused.append((time.perf_counter() - t) * 1000)
    assert out.returncode != 0 and b"held/0-7.rs" in out.stderr, out.stderr
    git("restore", "--staged", "held/0-7.rs", cwd=third)
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(len(xs) * p))]
print(f"3 worktrees, 200 claims, 1000 staged files, {args.runs} runs each: "
      f"hook letting the commit through median {statistics.median(free):.1f} ms p90 {q(free, .9):.1f}; "
      f"refusing it (1001 staged, 1 held) median {statistics.median(refused):.1f} ms p90 {q(refused, .9):.1f}")
print(f"load average at end: {os.getloadavg()}")
for p in peers:
    p.close()
