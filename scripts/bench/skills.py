#!/usr/bin/env python3
"""Skills at scale: 200 skills of 10 files each, over stdio.

Usage: skills.py MAJORDOMUS [--rounds N] [--no-floor] [--before OTHER_MAJORDOMUS] [--gap MS]

Makes two throwaway repositories (`git init`, `MAJORDOMUS init`, committed):
- SKILLS: 200 skills, each a `SKILL.md` and nine more text files (references, scripts, a
  template) of about 1.5 KB;
- KNOWLEDGE: the same 2,000 texts as plain knowledge objects (each file's text under a small
  front matter), so both layers weigh about the same bytes.

Then, in one run (so both sides share the machine's drift):
- on one warm `MAJORDOMUS mcp` process over SKILLS, the median of N rounds of `skills/list`
  (its first page: the request without a cursor), the whole walk of the listing (the first page,
  then each `nextCursor` until there is none: what a host pays for every skill), `skills/get` of
  one skill and `resources/read` of one object (`majordomus://skill/...`), each one request and
  its answer; ratios against the read (target <= 1.5x);
- beside it, taking turns round by round, the kit's floor program (no JSON parser, no layer:
  canned bytes) serving majordomus's own results for the same three requests, byte for byte:
  what moving and reading those bytes costs, so what is left of majordomus's ratio is its own
  share (the floor is built with `rustc` from `$MAJORDOMUS_PEERS_KIT/floor`, default
  /work/shared/bench/peers, into `$MAJORDOMUS_BENCH_DIR`, default /tmp/majordomus-bench;
  `--no-floor` skips it);
- on the floor, a whole walk of the 201 skills by pages of 50 (five round trips of a quarter of
  the bytes) beside the one page of 500: what a smaller page would cost a client that lists
  everything, whatever the server does;
- with `--before OTHER`, a second warm server of that binary over the same SKILLS, taking the
  same turns: its three medians and MAJORDOMUS's against them (after / before, one run);
- each warm server's CPU time over the timed rounds (the sum of its threads' time on a CPU,
  `/proc/PID/task/*/schedstat`), a round being one read, one get and one list;
- the index build of each layer, as `MAJORDOMUS_LOG=debug` reports it ("index built in X ms"),
  the median of N one-shot `objects list --limit 1` runs, taking turns; the ratio SKILLS /
  KNOWLEDGE (target <= 1.3x), and each side's CPU time per run (user + system of the child).

Prints each figure, the ratios and the machine's load (`/proc/loadavg`) before and after.
No dependencies beyond Python 3.9 (and `rustc` for the floor).
"""

import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from mcp_pipe import Session as Stdio

SKILLS = 200
FILES = 10
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
WORDS = (
    "form field merge flatten page render script reference template option value check "
    "layer rule prompt index search answer digest size resource directory entry client"
).split()


def text(seed, size=1500):
    out, i = [], seed
    while sum(len(w) + 1 for w in out) < size:
        out.append(WORDS[(i * 7 + len(out) * 13) % len(WORDS)])
        i += 1
    lines = [" ".join(out[k : k + 12]) + "." for k in range(0, len(out), 12)]
    return "\n".join(lines) + "\n"


def files_of(s):
    """The ten files of skill `s`: (path within the skill, text)."""
    name = f"skill-{s:03d}"
    files = [
        (
            "SKILL.md",
            f"---\nname: {name}\ndescription: Skill number {s} of the bench; use it for bench task {s}.\n---\n\n# {name}\n\n{text(s)}",
        )
    ]
    for j in range(1, FILES):
        kind = ["references/r{j}.md", "scripts/s{j}.py", "templates/t{j}.txt"][j % 3]
        files.append((kind.format(j=j), text(s * FILES + j)))
    return name, files


def make(binary, layout):
    root = tempfile.mkdtemp(prefix=f"majordomus-bench-{layout}-")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=ENV)
    subprocess.run([binary, "init"], cwd=root, check=True, env=ENV, stdout=subprocess.DEVNULL)
    for s in range(SKILLS):
        name, files = files_of(s)
        for j, (path, body) in enumerate(files):
            if layout == "skills":
                full = os.path.join(root, ".ai/repo/skills", name, path)
                content = body
            else:
                ident = f"k-{s:03d}-{j}"
                full = os.path.join(root, ".ai/repo/knowledge/curated", f"{ident}.md")
                content = f"---\nid: {ident}\ntitle: {name} {path}\n---\n\n{body}"
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(content)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=ENV)
    subprocess.run(["git", "commit", "-q", "-m", layout], cwd=root, check=True, env=ENV)
    return root


def layer_bytes(root):
    total = 0
    for d, _, names in os.walk(os.path.join(root, ".ai/repo")):
        total += sum(os.path.getsize(os.path.join(d, n)) for n in names)
    return total


def medians_ms(fns, rounds, gap=0.0):
    """The median of `rounds` timings of each of `fns`, taking turns round by round so that all
    share the machine's drift; `gap` seconds of sleep before each turn (a server that has just
    answered polls its stdin for 100 us: without a gap it still does while the next one is timed)."""
    for fn in fns:
        fn()
        fn()  # warm: the first answers of a generation fill its caches
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, out in zip(fns, times):
            if gap:
                time.sleep(gap)
            start = time.perf_counter()
            fn()
            out.append(time.perf_counter() - start)
    return [statistics.median(t) * 1000 for t in times]


def build_once(binary, root):
    """One one-shot build: the log's build time and the child's CPU time, in ms."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [binary, "objects", "list", "--limit", "1"],
        cwd=root,
        env={**ENV, "MAJORDOMUS_LOG": "debug"},
        capture_output=True,
        text=True,
        check=True,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    match = re.search(r"index built in ([0-9.]+) ms", out.stderr)
    if not match:
        raise SystemExit(f"no build time in the log:\n{out.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return float(match.group(1)), cpu * 1000


def builds_ms(binary, roots, rounds):
    """Per root, the median build time and the median CPU time of a run, taking turns."""
    found = [([], []) for _ in roots]
    for _ in range(rounds):
        for root, (builds, cpus) in zip(roots, found):
            build, cpu = build_once(binary, root)
            builds.append(build)
            cpus.append(cpu)
    return [(statistics.median(b), statistics.median(c)) for b, c in found]


def cpu_ns(process):
    """The time a process's threads have spent on a CPU, in ns (0 where schedstat is missing)."""
    total = 0
    base = f"/proc/{process.pid}/task"
    try:
        tasks = os.listdir(base)
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"{base}/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


FLOOR_PATCH = (
    # Canned results from files, `<method with / as __>.json` in $FLOOR_ANSWERS, before the
    # program's own.
    (
        "    let mut input = ",
        "    let canned: Vec<(Vec<u8>, Vec<u8>)> = std::env::var_os(\"FLOOR_ANSWERS\")\n"
        "        .and_then(|d| std::fs::read_dir(d).ok()).into_iter().flatten().flatten()\n"
        "        .filter_map(|e| {\n"
        "            let name = e.file_name().into_string().ok()?;\n"
        "            let method = name.strip_suffix(\".json\")?.replace(\"__\", \"/\");\n"
        "            Some((format!(\"\\\"{method}\\\"\").into_bytes(), std::fs::read(e.path()).ok()?))\n"
        "        }).collect();\n"
        "    let mut input = ",
    ),
    (
        "        let result: Option<&[u8]> = match method {",
        "        let result: Option<&[u8]> = if let Some((_, r)) = canned.iter().find(|(m, _)| m.as_slice() == method) { Some(r.as_slice()) } else { match method {",
    ),
    ("            _ => None,\n        };", "            _ => None,\n        } };"),
)


def floor_binary():
    """The kit's floor, patched to serve canned results from files, built once with rustc."""
    kit = os.environ.get("MAJORDOMUS_PEERS_KIT", "/work/shared/bench/peers")
    work = os.path.join(os.environ.get("MAJORDOMUS_BENCH_DIR", "/tmp/majordomus-bench"), "floor-skills")
    binary = os.path.join(work, "peer-floor-skills")
    source = os.path.join(kit, "floor", "src", "main.rs")
    with open(source) as f:
        text = f.read()
    for old, new in FLOOR_PATCH:
        if old not in text:
            raise SystemExit(f"the kit's floor changed ({old.strip()!r} is gone); update this script")
        text = text.replace(old, new, 1)
    os.makedirs(work, exist_ok=True)
    patched = os.path.join(work, "main.rs")
    if not os.path.exists(binary) or not os.path.exists(patched) or open(patched).read() != text:
        with open(patched, "w") as f:
            f.write(text)
        subprocess.run(
            ["rustc", "--edition", "2024", "-C", "opt-level=3", "-C", "codegen-units=1", "-o", binary, patched],
            check=True,
        )
    return binary


CURSOR = re.compile(rb'"nextCursor":"([^"]+)"')


def walk(session):
    """The whole `skills/list` of a session by cursor, unparsed: (pages, bytes)."""
    cursor, pages, size = None, 0, 0
    while True:
        session._send("skills/list", {"cursor": cursor} if cursor else {})
        line = session._line()
        pages += 1
        size += len(line)
        # The cursor closes the result: it is among the line's last bytes.
        found = CURSOR.search(line, max(0, len(line) - 256))
        if not found:
            return pages, size
        cursor = found.group(1).decode()


def listing(session):
    """Every entry of a session's `skills/list`, walked by cursor, and the pages' sizes."""
    entries, sizes, cursor = [], [], None
    while True:
        page, size = session.call("skills/list", {"cursor": cursor} if cursor else {})
        entries.extend(page["skills"])
        sizes.append(size)
        cursor = page.get("nextCursor")
        if not cursor:
            return entries, sizes
        if len(sizes) > 1000:
            raise SystemExit("skills/list: the walk does not end")


def result_text(line):
    """The result member of an answer line, as text."""
    start = line.index(b'"result":') + len(b'"result":')
    return line[start : line.rindex(b"}")]


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    binary = os.path.abspath(args[0])
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 50
    skills_repo = make(binary, "skills")
    knowledge_repo = make(binary, "knowledge")
    scratch = []
    try:
        print(
            f"layers: {SKILLS} skills x {FILES} files ({layer_bytes(skills_repo)} bytes under .ai/repo) "
            f"and {SKILLS * FILES} knowledge objects ({layer_bytes(knowledge_repo)} bytes)"
        )
        server = Stdio([binary, "mcp", "--repo", skills_repo])
        server.call(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )
        first_page, list_bytes = server.call("skills/list", {})
        everything, page_sizes = listing(server)
        names = [e["frontmatter"]["name"] for e in everything]
        if len(names) != SKILLS + 1 or len(set(names)) != len(names):
            raise SystemExit(f"skills/list: {len(names)} entries ({len(set(names))} skills), expected {SKILLS + 1} once each")
        uri = "skill://skill-100/SKILL.md"
        got, get_bytes = server.call("skills/get", {"uri": uri})
        if len(got["skill"]["resources"]) != FILES:
            raise SystemExit(f"skills/get: {len(got['skill']['resources'])} files, expected {FILES}")
        read_uri = "majordomus://skill/skill-100"
        _, read_bytes = server.call("resources/read", {"uri": read_uri})
        requests = [
            ("resources/read", {"uri": read_uri}),
            ("skills/get", {"uri": uri}),
            ("skills/list", {}),
        ]
        servers = [server]
        if "--before" in args:
            before = Stdio([os.path.abspath(args[args.index("--before") + 1]), "mcp", "--repo", skills_repo])
            before.call(
                "initialize",
                {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
            )
            servers.append(before)
        floors = []
        if "--no-floor" not in args:
            answers = tempfile.mkdtemp(prefix="majordomus-bench-floor-")
            scratch.append(answers)
            for method, params in requests:
                server.next_id += 1
                line = json.dumps({"jsonrpc": "2.0", "id": server.next_id, "method": method, "params": params})
                server.process.stdin.write(line.encode() + b"\n")
                server.process.stdin.flush()
                answer = server.process.stdout.readline()
                with open(os.path.join(answers, method.replace("/", "__") + ".json"), "wb") as f:
                    f.write(result_text(answer))
            floor = floor_binary()
            floors.append(Stdio([floor], env={**ENV, "FLOOR_ANSWERS": answers}))
            # A second floor whose skills/list is a page of 50 entries, a quarter of the bytes.
            quarter = tempfile.mkdtemp(prefix="majordomus-bench-floor-")
            scratch.append(quarter)
            page = {"skills": everything[:50], "nextCursor": "0" * 40}
            with open(os.path.join(quarter, "skills__list.json"), "w") as f:
                f.write(json.dumps(page, separators=(",", ":")))
            floors.append(Stdio([floor], env={**ENV, "FLOOR_ANSWERS": quarter}))
            for f in floors:
                f.call(
                    "initialize",
                    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
                )
        print(f"load before the round trips: {load()}")
        fns = []
        for s in servers[:1] + floors[:1] + servers[1:]:
            for method, params in requests:
                fns.append(lambda s=s, method=method, params=params: s.round_trip(method, params))
        for s in servers:
            fns.append(lambda s=s: walk(s))
        if floors:
            floor_walk = lambda: [floors[1].round_trip("skills/list", {}) for _ in range((SKILLS + 1 + 49) // 50)]
            fns.append(floor_walk)
        cpu_before = [cpu_ns(s.process) for s in servers]
        gap = float(args[args.index("--gap") + 1]) / 1000 if "--gap" in args else 0.0
        figures = medians_ms(fns, rounds, gap)
        cpu_rounds = [(cpu_ns(s.process) - c) / (rounds + 2) / 1e6 for s, c in zip(servers, cpu_before)]
        read, get, lst = figures[:3]
        walks = figures[3 * (len(servers) + bool(floors)) :][: len(servers)]
        print(f"load after: {load()}")
        print(f"CPU a round (read + get + first page + walk) of the warm server: {cpu_rounds[0]:.3f} ms")
        print(f"resources/read of one object: median {read:.3f} ms ({read_bytes} bytes)")
        print(f"skills/get of one skill:      median {get:.3f} ms ({get_bytes} bytes), {get / read:.2f}x the read (target <= 1.5x)")
        print(
            f"skills/list, its first page:  median {lst:.3f} ms ({len(first_page['skills'])} skills, {list_bytes} bytes), "
            f"{lst / read:.2f}x the read (target <= 1.5x)"
        )
        print(
            f"skills/list, the whole walk:  median {walks[0]:.3f} ms ({SKILLS + 1} skills in {len(page_sizes)} page(s), "
            f"{sum(page_sizes)} bytes), {walks[0] / read:.2f}x the read, {walks[0] / lst:.2f}x its first page"
        )
        if len(servers) > 1:
            b_read, b_get, b_list = figures[6:9] if floors else figures[3:6]
            print(
                f"--before, the same turns: read {b_read:.3f} ms, get {b_get:.3f} ms, first page {b_list:.3f} ms, "
                f"walk {walks[1]:.3f} ms; CPU a round {cpu_rounds[1]:.3f} ms"
            )
            print(
                f"after / before: read {read / b_read:.2f}x, get {get / b_get:.2f}x, first page {lst / b_list:.2f}x, "
                f"walk {walks[0] / walks[1]:.2f}x, "
                + (f"CPU a round {cpu_rounds[0] / cpu_rounds[1]:.2f}x" if cpu_rounds[1] else "CPU: no schedstat")
            )
        if floors:
            f_read, f_get, f_list = figures[3:6]
            f_walk = figures[-1]
            print(f"floor, the same bytes: read {f_read:.3f} ms, get {f_get:.3f} ms, list {f_list:.3f} ms ({f_list / f_read:.2f}x its read)")
            print(
                f"majordomus's own share: read {read - f_read:+.3f} ms, get {get - f_get:+.3f} ms, "
                f"list {lst - f_list:+.3f} ms ({(lst - f_list) / lst * 100:.0f}% of its list; the list is {lst / f_list:.2f}x the floor's)"
            )
            print(
                f"floor, a whole walk of {SKILLS + 1} skills: one page of 500 {f_list:.3f} ms, "
                f"{(SKILLS + 1 + 49) // 50} pages of 50 {f_walk:.3f} ms ({f_walk / f_list:.2f}x)"
            )
        for s in servers + floors:
            s.close()
        print(f"load before the builds: {load()}")
        (skills_build, skills_cpu), (knowledge_build, knowledge_cpu) = builds_ms(
            # A build is ~20 ms: a hundred turns each cost ~5 s, and the median of 20 moved by
            # 0.1x between runs of identical binaries (1.39x here against 1.25-1.30x in 150).
            binary, [skills_repo, knowledge_repo], max(30, rounds)
        )
        print(f"load after: {load()}")
        print(f"index build, {SKILLS} skills x {FILES} files: median {skills_build:.1f} ms (CPU {skills_cpu:.1f} ms a run)")
        print(f"index build, {SKILLS * FILES} knowledge objects:   median {knowledge_build:.1f} ms (CPU {knowledge_cpu:.1f} ms a run)")
        print(
            f"index build ratio skills / knowledge: {skills_build / knowledge_build:.2f}x (target <= 1.3x); "
            f"CPU a run {skills_cpu / knowledge_cpu:.2f}x"
        )
    finally:
        for d in scratch:
            shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(skills_repo, ignore_errors=True)
        shutil.rmtree(knowledge_repo, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
