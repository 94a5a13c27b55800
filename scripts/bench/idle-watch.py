#!/usr/bin/env python3
"""Idle CPU of `majordomus mcp` on a generated repository of FILES files whose layer adopted its
AGENTS.md files (`init` writes the source `**/AGENTS.md`, which may match anywhere), for two
binaries side by side, plus the AFTER binary on the same repository without that source.

Every server runs at once, so all see the same machine: each is started, initialised, given
SETTLE seconds to start its watcher and make its first checks, then its CPU ticks (user + system,
all threads, from /proc/<pid>/stat) are read over SECONDS seconds of nothing happening. Prints
each one's share of one core and the load average while measuring.

usage: idle-watch.py BEFORE AFTER [FILES=30000] [SECONDS=30] [SETTLE=5]"""
import json, os, shutil, subprocess, sys, tempfile, time

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "idle-watch", "version": "1"}}}
FILES_PER_DIRECTORY = 10


def git(repo, *args):
    # No automatic gc: it would prune loose objects in the background while the repository is copied.
    subprocess.run(["git", "-c", "gc.auto=0", "-c", "user.email=bench@example.com", "-c", "user.name=bench", *args],
                   cwd=repo, check=True, stdout=subprocess.DEVNULL)


def generate(repo, files, binary):
    """FILES source files in nested directories (10 a directory, 10 directories a level), an
    AGENTS.md at the root and in every 100th directory, an ignored `target/` of as many
    directories again; `init`, then one commit."""
    os.makedirs(repo)
    directories = files // FILES_PER_DIRECTORY
    for d in range(directories):
        path = os.path.join(repo, "src", f"m{d // 100}", f"n{(d // 10) % 10}", f"o{d % 10}")
        os.makedirs(path, exist_ok=True)
        for f in range(FILES_PER_DIRECTORY):
            with open(os.path.join(path, f"f{f}.rs"), "w") as out:
                out.write(f"// file {d}/{f}\n")
        if d % 100 == 0:
            with open(os.path.join(path, "AGENTS.md"), "w") as out:
                out.write(f"# Module {d}\n\nHow to work here.\n")
        os.makedirs(os.path.join(repo, "target", "debug", f"d{d}"), exist_ok=True)
    with open(os.path.join(repo, "AGENTS.md"), "w") as out:
        out.write("# The repository\n\nHow to work here.\n")
    with open(os.path.join(repo, ".gitignore"), "w") as out:
        out.write("/target/\n")
    git(repo, "init", "-q")
    subprocess.run([binary, "init", "--repo", repo], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "generated")


def without_agents_source(repo, copy):
    """The same repository, its layer without the `**/AGENTS.md` source."""
    shutil.copytree(repo, copy, symlinks=True)
    sources = os.path.join(copy, ".ai", "repo", "knowledge", "sources.yaml")
    with open(sources) as f:
        text = f.read()
    start = text.index("  - id: agents-md")
    rest = text.find("\n  - ", start + 1)
    text = text[:start] + (text[rest + 1:] if rest >= 0 else "")
    with open(sources, "w") as f:
        f.write(text)
    git(copy, "commit", "-qam", "no agents source")


def ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)


def start(binary, repo):
    proc = subprocess.Popen([binary, "mcp", "--repo", repo], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    proc.stdout.readline()
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.flush()
    return proc


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    before, after = sys.argv[1], sys.argv[2]
    files = int(sys.argv[3]) if len(sys.argv) > 3 else 30000
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 30
    settle = float(sys.argv[5]) if len(sys.argv) > 5 else 5
    hz = os.sysconf("SC_CLK_TCK")
    work = tempfile.mkdtemp(prefix="idle-watch-")
    try:
        repo = os.path.join(work, "repo")
        generate(repo, files, after)
        plain = os.path.join(work, "plain")
        without_agents_source(repo, plain)
        servers = {"before": start(before, repo), "after": start(after, repo),
                   "after, no **/AGENTS.md": start(after, plain)}
        time.sleep(settle)
        first = {name: ticks(p.pid) for name, p in servers.items()}
        began = time.monotonic()
        time.sleep(seconds)
        took = time.monotonic() - began
        last = {name: ticks(p.pid) for name, p in servers.items()}
        load = os.getloadavg()
        print(f"{files} files, {seconds:.0f} s idle, load average {load[0]:.2f} {load[1]:.2f}")
        for name, proc in servers.items():
            share = (last[name] - first[name]) / hz / took * 100
            print(f"  {name:24} {share:6.2f} % of a core ({last[name] - first[name]} ticks)")
            proc.stdin.close()
            proc.wait(timeout=10)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
