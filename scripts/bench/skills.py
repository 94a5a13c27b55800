#!/usr/bin/env python3
"""Skills at scale (issue 17, Measured): 200 skills of 10 files each, over stdio.

Usage: skills.py MAJORDOMUS [--rounds N]

Makes two throwaway repositories (`git init`, `MAJORDOMUS init`, committed):
- SKILLS: 200 skills, each a `SKILL.md` and nine more text files (references, scripts, a
  template) of about 1.5 KB;
- KNOWLEDGE: the same 2,000 texts as plain knowledge objects (each file's text under a small
  front matter), so both layers weigh about the same bytes.

Then, in one run (so both sides share the machine's drift):
- on one warm `MAJORDOMUS mcp` process over SKILLS, the median of N rounds of `skills/list` (the
  one page of 200 entries), `skills/get` of one skill and `resources/read` of one object
  (`majordomus://skill/...`), each one request and its answer; ratios against the read
  (target <= 1.5x);
- the index build of each layer, as `MAJORDOMUS_LOG=debug` reports it ("index built in X ms"),
  the median of N one-shot `objects list --limit 1` runs; the ratio SKILLS / KNOWLEDGE
  (target <= 1.3x).

Prints each figure and the ratios. No dependencies beyond Python 3.9.
"""

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

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


class Stdio:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def call(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        while True:
            answer = self.process.stdout.readline()
            if not answer:
                raise SystemExit("the server closed its stdout")
            message = json.loads(answer)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"{method}: {message['error']}")
                return message["result"], len(answer)

    def round_trip(self, method, params):
        """One request and its answer's line, unparsed: what the server costs, not the client's
        JSON decoder."""
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        tag = f'"id":{self.next_id},'.encode()
        while True:
            answer = self.process.stdout.readline()
            if not answer:
                raise SystemExit("the server closed its stdout")
            if tag in answer[:64]:
                return len(answer)

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


def median_ms(fn, rounds):
    fn()
    fn()  # warm: the first answers of a generation fill its caches
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def build_ms(binary, root, rounds):
    found = []
    for _ in range(rounds):
        out = subprocess.run(
            [binary, "objects", "list", "--limit", "1"],
            cwd=root,
            env={**ENV, "MAJORDOMUS_LOG": "debug"},
            capture_output=True,
            text=True,
            check=True,
        )
        match = re.search(r"index built in ([0-9.]+) ms", out.stderr)
        if not match:
            raise SystemExit(f"no build time in the log:\n{out.stderr[-2000:]}")
        found.append(float(match.group(1)))
    return statistics.median(found)


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    binary = os.path.abspath(args[0])
    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 50
    skills_repo = make(binary, "skills")
    knowledge_repo = make(binary, "knowledge")
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
        listed, list_bytes = server.call("skills/list", {})
        if len(listed["skills"]) != SKILLS + 1 or "nextCursor" in listed:
            raise SystemExit(f"skills/list: {len(listed['skills'])} skills, expected {SKILLS + 1} on one page")
        uri = "skill://skill-100/SKILL.md"
        got, get_bytes = server.call("skills/get", {"uri": uri})
        if len(got["skill"]["resources"]) != FILES:
            raise SystemExit(f"skills/get: {len(got['skill']['resources'])} files, expected {FILES}")
        _, read_bytes = server.call("resources/read", {"uri": "majordomus://skill/skill-100"})
        read = median_ms(lambda: server.round_trip("resources/read", {"uri": "majordomus://skill/skill-100"}), rounds)
        get = median_ms(lambda: server.round_trip("skills/get", {"uri": uri}), rounds)
        lst = median_ms(lambda: server.round_trip("skills/list", {}), rounds)
        server.close()
        print(f"resources/read of one object: median {read:.3f} ms ({read_bytes} bytes)")
        print(f"skills/get of one skill:      median {get:.3f} ms ({get_bytes} bytes), {get / read:.2f}x the read (target <= 1.5x)")
        print(f"skills/list of {SKILLS + 1} skills:   median {lst:.3f} ms ({list_bytes} bytes), {lst / read:.2f}x the read (target <= 1.5x)")
        skills_build = build_ms(binary, skills_repo, max(5, rounds // 5))
        knowledge_build = build_ms(binary, knowledge_repo, max(5, rounds // 5))
        print(f"index build, {SKILLS} skills x {FILES} files: median {skills_build:.1f} ms")
        print(f"index build, {SKILLS * FILES} knowledge objects:   median {knowledge_build:.1f} ms")
        print(f"index build ratio skills / knowledge: {skills_build / knowledge_build:.2f}x (target <= 1.3x)")
    finally:
        shutil.rmtree(skills_repo, ignore_errors=True)
        shutil.rmtree(knowledge_repo, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
