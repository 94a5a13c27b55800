#!/usr/bin/env python3
"""The plan and the board at scale, measured through the real binary over MCP stdio, for one or
more builds side by side in one run (alternated, so load hits them alike):

1. Plan, ISSUES issues (the first fifth without dependencies, each other one depending on one of
   them; priorities 0..4): in RUNS fresh processes each, the first `plan.ready` straight after
   `initialize`, then the first `plan.issues` page (25 issues); then, warm, the median of CALLS
   `plan.issues` pages (offsets spread over the plan) and of CALLS `plan.ready`.
2. Bad input, ISSUES issues in one dependency chain (each depends on the one before), in RUNS
   fresh processes each: the first `plan.ready` and `plan.issues` page, the longest of any call,
   and the process's peak resident memory (VmHWM).
3. `peers.check` of 10 paths (one held) by one agent while another agent (another process)
   holds 1, then 1,000 live exclusive claims: the median of CALLS checks each, and the ratio.
4. The next claim of the agent holding 1,000 claims, alternated with the next claim of an agent
   holding 1 on a board of its own: the median of CALLS claims of a new glob each (each released
   again, the release not timed), and the ratio; and the median claim while the agent filled its
   1,000 (claims 2-101, 901-1,000).

Figures are milliseconds of a request's round trip on the pipes. The load average is printed at
start and end. With `--record`, the figures of the last build named are written through
`figures.record` as docs/figures/queue.json, for README sentences that show them with
`<!-- figure:queue.KEY -->` markers (a record the README shows nowhere fails `readme_figures`).

usage: queue_at_scale.py [--issues N] [--runs N] [--calls N] [--record] NAME=BINARY [NAME=BINARY ...]
  e.g. queue_at_scale.py before=/tmp/majordomus-main after=target/release/majordomus"""
import argparse
import os
import statistics
import subprocess
import tempfile
import time

import figures
from stdio_session import Session, throwaway_repo

parser = argparse.ArgumentParser()
parser.add_argument("builds", nargs="+", help="NAME=BINARY")
parser.add_argument("--issues", type=int, default=10_000)
parser.add_argument("--runs", type=int, default=5)
parser.add_argument("--calls", type=int, default=200)
parser.add_argument("--record", action="store_true")
args = parser.parse_args()
builds = [tuple(b.split("=", 1)) for b in args.builds]
loads = [os.getloadavg()[0]]
print(f"load average at start: {os.getloadavg()}")


def ms(f):
    t = time.perf_counter()
    out = f()
    return (time.perf_counter() - t) * 1000, out


def median(xs):
    return statistics.median(xs)


def issue_layer(binary, count, chain):
    """A committed repository with `count` issues: a fan (a fifth of roots) or one chain."""
    repo = tempfile.mkdtemp(prefix="queue-bench-")
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run([binary, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    issues = os.path.join(repo, ".ai", "repo", "project", "issues")
    os.makedirs(issues)
    roots = max(1, count // 5)
    for i in range(count):
        if chain:
            deps = f"depends_on: [issue-{i - 1:05}]\n" if i else ""
        else:
            deps = f"depends_on: [issue-{i % roots:05}]\n" if i >= roots else ""
        with open(os.path.join(issues, f"issue-{i:05}.yaml"), "w") as f:
            f.write(f"id: issue-{i:05}\ntitle: Synthetic issue {i}\n{deps}"
                    f"paths: [\"src/part-{i:05}/**\"]\npriority: {i % 5}\nlabels: [bench]\n"
                    f"created_at: \"2026-12-01T{i // 3600 % 24:02}:{i // 60 % 60:02}:{i % 60:02}Z\"\n")
    subprocess.run(["git", "-C", repo, "add", "-A"], check=True)
    subprocess.run(["git", "-C", repo, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm",
                    "plan"], check=True)
    return repo


def peak_kib(session):
    for line in open(f"/proc/{session.proc.pid}/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def plan_run(binary, repo, warm_calls):
    """One fresh process: first plan.ready, first page, then warm figures when asked."""
    s = Session(binary, repo, "plan-bench")
    first_ready, ready = ms(lambda: s.tool("majordomus_plan_ready", {}))
    first_page, page = ms(lambda: s.tool("majordomus_plan_issues", {}))
    assert len(page["issues"]) == 25 and page["total"] == args.issues, page["total"]
    out = {"first_ready": first_ready, "first_page": first_page, "ready_total": ready["total"]}
    if warm_calls:
        step = max(1, args.issues // warm_calls)
        pages = [ms(lambda: s.tool("majordomus_plan_issues", {"offset": (k * step) % args.issues}))[0]
                 for k in range(warm_calls)]
        readies = [ms(lambda: s.tool("majordomus_plan_ready", {}))[0] for _ in range(warm_calls)]
        out["warm_page"] = median(pages)
        out["warm_ready"] = median(readies)
        out["slowest"] = max(pages + readies + [first_ready, first_page])
    out["peak_mib"] = peak_kib(s) / 1024
    s.close()
    return out


def board_figures(binary):
    """Checks against 1 and 1,000 claims of another agent; then the next claim of that agent
    (holding 1,000) alternated with the next claim of an agent holding 1 on a board of its own,
    so neither reads the other's changes and both see the same file system churn."""
    repo = throwaway_repo(binary, "queue-board-")
    flags = ["--toolsets", "all"]
    holder = Session(binary, repo, "holder", flags=flags)
    checker = Session(binary, repo, "checker", flags=flags)
    solo = Session(binary, throwaway_repo(binary, "queue-solo-"), "solo", flags=flags)
    paths = [f"src/free-{i}.rs" for i in range(9)] + ["area/0/held.rs"]

    def check():
        answer = checker.tool("majordomus_check", {"paths": paths})
        assert [h["path"] for h in answer["held"]] == ["area/0/held.rs"], answer

    def next_claim(session, glob):
        t, answer = ms(lambda: session.tool("majordomus_claim", {"globs": [glob]}))
        assert answer["granted"], answer
        session.tool("majordomus_release", {"globs": [glob]})
        return t

    assert holder.tool("majordomus_claim", {"globs": ["area/0/**"]})["granted"]
    assert solo.tool("majordomus_claim", {"globs": ["area/0/**"]})["granted"]
    out = {"check_1": median([ms(check)[0] for _ in range(args.calls)])}
    fill = []
    for k in range(1, 1000):
        t, answer = ms(lambda: holder.tool("majordomus_claim", {"globs": [f"area/{k}/**"]}))
        assert answer["granted"], answer
        fill.append(t)
    out["fill_first"] = median(fill[:100])
    out["fill_last"] = median(fill[-100:])
    out["check_1000"] = median([ms(check)[0] for _ in range(args.calls)])
    ones, thousands = [], []
    for k in range(args.calls):
        ones.append(next_claim(solo, f"own/{k}.rs"))
        thousands.append(next_claim(holder, f"own/{k}.rs"))
    out["claim_1"], out["claim_1000"] = median(ones), median(thousands)
    for s in (holder, checker, solo):
        s.close()
    return out


# 1. and 2.: the layers are generated once (with the first build's `init`) and served to every build.
fan = issue_layer(builds[0][1], args.issues, chain=False)
chain = issue_layer(builds[0][1], args.issues, chain=True)
results = {name: {"runs": [], "warm": None, "chain": None, "board": None} for name, _ in builds}
for run in range(args.runs):
    for name, binary in builds:
        results[name]["runs"].append(plan_run(binary, fan, args.calls if run == 0 else 0))
    loads.append(os.getloadavg()[0])
chains = {name: [] for name, _ in builds}
for run in range(args.runs):
    for name, binary in builds:
        chains[name].append(plan_run(binary, chain, 20 if run == 0 else 0))
    loads.append(os.getloadavg()[0])
for name, _ in builds:
    c = dict(chains[name][0])
    for key in ("first_ready", "first_page"):
        c[key] = median([r[key] for r in chains[name]])
    c["slowest"] = max([c["slowest"]] + [r["first_ready"] for r in chains[name]])
    results[name]["chain"] = c
for name, binary in builds:
    results[name]["board"] = board_figures(binary)
    loads.append(os.getloadavg()[0])

n = f"{args.issues:,}"
print(f"\n1. plan of {n} issues, {args.runs} fresh processes per build (median; warm: {args.calls} calls)")
for name, _ in builds:
    runs = results[name]["runs"]
    warm = runs[0]
    print(f"  {name:<8} first plan.ready {median([r['first_ready'] for r in runs]):7.2f} ms   "
          f"first plan.issues page {median([r['first_page'] for r in runs]):7.2f} ms   "
          f"warm page {warm['warm_page']:6.2f} ms   warm plan.ready {warm['warm_ready']:6.2f} ms   "
          f"peak {warm['peak_mib']:.0f} MiB   ready {warm['ready_total']}")
print(f"2. bad input: {n} issues in one dependency chain, {args.runs} fresh processes per build (median)")
for name, _ in builds:
    c = results[name]["chain"]
    print(f"  {name:<8} first plan.ready {c['first_ready']:7.2f} ms   first page {c['first_page']:7.2f} ms   "
          f"warm page {c['warm_page']:6.2f} ms   slowest call {c['slowest']:7.2f} ms   "
          f"peak {c['peak_mib']:.0f} MiB   ready {c['ready_total']}")
print(f"3./4. the board: another agent holds 1, then 1,000 exclusive claims ({args.calls} calls each)")
for name, _ in builds:
    b = results[name]["board"]
    print(f"  {name:<8} peers.check of 10 paths {b['check_1']:.3f} ms -> {b['check_1000']:.3f} ms "
          f"({b['check_1000'] / b['check_1']:.2f}x)   next claim of an agent holding 1 {b['claim_1']:.3f} ms, "
          f"holding 1,000 {b['claim_1000']:.3f} ms ({b['claim_1000'] / b['claim_1']:.2f}x)   "
          f"filling: claims 2-101 {b['fill_first']:.3f} ms, 901-1,000 {b['fill_last']:.3f} ms")
print(f"load average at end: {os.getloadavg()}")

if args.record:
    name = builds[-1][0]
    r, b, c = results[name]["runs"], results[name]["board"], results[name]["chain"]
    figures.record("queue", build="release", loads=loads, values={
        "first_ready": f"{median([x['first_ready'] for x in r]):.1f} ms",
        "first_page": f"{median([x['first_page'] for x in r]):.1f} ms",
        "warm_page": f"{r[0]['warm_page']:.2f} ms",
        "chain_slowest": f"{c['slowest']:.0f} ms",
        "chain_peak": f"{c['peak_mib']:.0f} MiB",
        "check_1": f"{b['check_1']:.2f} ms",
        "check_1000": f"{b['check_1000']:.2f} ms",
        "claim_1": f"{b['claim_1']:.2f} ms",
        "claim_1000": f"{b['claim_1000']:.2f} ms",
    })
