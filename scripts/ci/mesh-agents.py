#!/usr/bin/env python3
"""Three agents on the mesh, on both protocol eras and both transports, with the official SDK.

Usage: mesh-agents.py BINARY [LEASE_SECONDS] [--record]
       mesh-agents.py --latency BINARY [BINARY...]   (only the claim latency, of each binary)
       mesh-agents.py --hold BINARY TRANSPORT MODE TARGET GLOB   (a child: claims, then waits)

Makes a throwaway git repository with `BINARY init`, commits, and adds a second worktree. Then,
for each transport (stdio: `BINARY mcp`; http: one `BINARY serve --agent-lease LEASE`) and each
SDK mode (`legacy`, and `auto`, which settles on the 2026-07-28 era), three agents: A in the first
worktree, B in the second, C in the first again (one checkout, two agents). On the 2026-07-28 era
over HTTP each agent first calls `majordomus_announce` and passes its `handle` back as `agent`.

- exclusivity: A's exclusive claim of `src/db/**` refuses B's `src/db/y.rs` and C's
  `src/db/z.rs`, each naming A's handle; the refused answer carries no `claim`;
- every agent is listed by `peers.list` with a handle of its own;
- messages: B writes to the holders of `src/db/y.rs`; A's inbox has it, C's has nothing;
- six racers (fresh agents, at once) claim `race/**`: exactly one is granted;
- SIGKILL: a child process holding `kill/**` is killed; A is granted it within 5 s (stdio) or
  within the lease plus a reader's margin (http);
- claim latency: 40 claim-and-release rounds by A, median and p90 in milliseconds.

Exits 0 printing one line per transport and mode, then the latency table; 1 on any failure.
`--record` also writes what was measured to `docs/figures/mesh.json`, for the README.
`--latency` measures only the claim latency, one table row per binary, transport and mode: a
build from before agents had handles is measured as it works (its HTTP agents of the stateless
era claim without one).
"""

import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

from mcp import Client, StdioServerParameters
from mcp.types import TextContent
from mcp_serve import Serve

ROUNDS = 40
RACERS = 6


def target_of(binary, transport, where):
    """What the SDK connects to: a stdio server on a worktree, or the HTTP server's /mcp."""
    if transport == "stdio":
        return StdioServerParameters(command=binary, args=["mcp", "--repo", where])
    return where


class Agent:
    """One SDK client; on the 2026-07-28 era over HTTP it announces and passes its handle."""

    def __init__(self, client, transport, name):
        self.client, self.transport, self.name, self.handle = client, transport, name, None

    async def start(self):
        if self.transport == "http":
            # A legacy session is its own agent; the stateless era must name itself.
            result = await self.client.call_tool("majordomus_announce", {"intent": f"agent {self.name}"})
            if not result.is_error and result.structured_content.get("handle"):
                self.handle = result.structured_content["handle"]

    async def call(self, tool, arguments):
        if self.handle:
            arguments = dict(arguments, agent=self.handle)
        result = await self.client.call_tool(tool, arguments)
        what = f"{self.name} {tool} {json.dumps(arguments, sort_keys=True)}"
        if result.is_error:
            text = result.content[0].text if result.content and isinstance(result.content[0], TextContent) else result.content
            raise AssertionError(f"{what}: isError: {text}")
        if result.structured_content is None:
            raise AssertionError(f"{what}: no structuredContent")
        return result.structured_content


async def connected(stack, binary, transport, mode, where, name):
    client = await stack.enter_async_context(
        Client(target_of(binary, transport, where), mode=mode, read_timeout_seconds=60, raise_exceptions=True))
    agent = Agent(client, transport, name)
    await agent.start()
    return agent


def check(condition, message):
    if not condition:
        raise AssertionError(message)


async def scenario(binary, transport, mode, first, second, lease):
    from contextlib import AsyncExitStack
    async with AsyncExitStack() as stack:
        a = await connected(stack, binary, transport, mode, first, "A")
        b = await connected(stack, binary, transport, mode, second, "B")
        c = await connected(stack, binary, transport, mode, first, "C")

        held = await a.call("majordomus_claim", {"globs": ["src/db/**"], "reason": "A holds the db"})
        check(held["granted"] is True, f"A's claim: {held}")
        handle = held["claim"]["handle"]
        for agent, glob in [(b, "src/db/y.rs"), (c, "src/db/z.rs")]:
            refused = await agent.call("majordomus_claim", {"globs": [glob]})
            check(refused["granted"] is False, f"{agent.name} was granted inside A's claim: {refused}")
            check("claim" not in refused, f"a refused answer with a grant-shaped claim: {refused}")
            check([h["handle"] for h in refused["conflicts"]] == [handle],
                  f"{agent.name}'s refusal does not name A ({handle}): {refused}")
        released = await c.call("majordomus_release", {})
        check(released["released"] == [], f"C released another agent's claim: {released}")

        listed = await c.call("majordomus_peers", {})
        handles = {p["handle"] for p in listed["peers"]}
        check(len(handles) >= 3 and handle in handles, f"peers.list does not list three agents: {listed}")

        sent = await b.call("majordomus_send", {"subject": "may I have y.rs?", "globs": ["src/db/y.rs"]})
        check(len(sent["recipients"]) == 1, f"the message did not reach exactly A: {sent}")
        mail_a = await a.call("majordomus_inbox", {})
        check([m["client_supplied"]["subject"] for m in mail_a["messages"]] == ["may I have y.rs?"],
              f"A's inbox: {mail_a}")
        mail_c = await c.call("majordomus_inbox", {})
        check(mail_c["messages"] == [], f"C read A's mail: {mail_c}")

        # Six fresh agents race for one path: exactly one wins.
        async with AsyncExitStack() as racing:
            racers = [await connected(racing, binary, transport, mode, [first, second][i % 2], f"R{i}")
                      for i in range(RACERS)]
            answers = await asyncio.gather(*(r.call("majordomus_claim", {"globs": ["race/**"]}) for r in racers))
            granted = sum(1 for x in answers if x["granted"])
            check(granted == 1, f"{granted} of {RACERS} racers were granted race/**")

        # A child process holds kill/**, and is killed.
        where = first
        child = subprocess.Popen([sys.executable, __file__, "--hold", binary, transport, mode, where, "kill/**"],
                                 stdout=subprocess.PIPE, text=True)
        line = child.stdout.readline().strip()
        check(line == "held", f"the holding child said {line!r}")
        refused = await a.call("majordomus_claim", {"globs": ["kill/x"]})
        check(refused["granted"] is False, f"kill/** was not held: {refused}")
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        killed = time.monotonic()
        bound = 5 if transport == "stdio" else lease + 10
        while True:
            answer = await a.call("majordomus_claim", {"globs": ["kill/x"]})
            if answer["granted"]:
                freed = time.monotonic() - killed
                break
            check(time.monotonic() - killed < bound, f"kill/** still held {bound} s after SIGKILL")
            await asyncio.sleep(0.1)
        await a.call("majordomus_release", {"globs": ["kill/x"]})

        latencies = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await a.call("majordomus_claim", {"globs": ["bench/**"]})
            latencies.append((time.perf_counter() - started) * 1000)
            await a.call("majordomus_release", {"globs": ["bench/**"]})
        await a.call("majordomus_release", {})
        # `auto` settles on the 2026-07-28 era; over HTTP only that era hands out handles.
        era = "2026-07-28" if mode == "auto" else "legacy"
        check(transport == "stdio" or bool(b.handle) == (mode == "auto"), f"{mode} over HTTP: handle {b.handle!r}")
        return freed, latencies, era


async def latency_of(binary, transport, mode, where):
    from contextlib import AsyncExitStack
    async with AsyncExitStack() as stack:
        a = await connected(stack, binary, transport, mode, where, "A")
        latencies = []
        for _ in range(ROUNDS):
            started = time.perf_counter()
            await a.call("majordomus_claim", {"globs": ["bench/**"]})
            latencies.append((time.perf_counter() - started) * 1000)
            await a.call("majordomus_release", {"globs": ["bench/**"]})
        return latencies


async def latency(binaries):
    print(f"claim latency over {ROUNDS} rounds (ms): binary transport mode median p90")
    for binary in binaries:
        with tempfile.TemporaryDirectory() as top:
            first, _ = repository(binary, top)
            rows = [(t, m, await latency_of(binary, "stdio", m, first)) for t, m in [("stdio", "legacy"), ("stdio", "auto")]]
            with Serve(binary, first) as url:
                rows += [(t, m, await latency_of(binary, "http", m, url)) for t, m in [("http", "legacy"), ("http", "auto")]]
        for transport, mode, values in rows:
            ordered = sorted(values)
            print(f"  {binary} {transport:5} {mode:6} {statistics.median(values):7.2f} {ordered[int(len(ordered) * 0.9) - 1]:7.2f}")


async def hold(binary, transport, mode, where, glob):
    from contextlib import AsyncExitStack
    async with AsyncExitStack() as stack:
        agent = await connected(stack, binary, transport, mode, where, "holder")
        answer = await agent.call("majordomus_claim", {"globs": [glob]})
        if not answer["granted"]:
            raise AssertionError(f"the holder was refused: {answer}")
        print("held", flush=True)
        await asyncio.sleep(3600)


def repository(binary, top):
    first = os.path.join(top, "repo")
    os.makedirs(first)
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
    subprocess.run(["git", "init", "-q"], cwd=first, check=True)
    subprocess.run([binary, "init"], cwd=first, check=True, capture_output=True)
    subprocess.run(git + ["add", "-A"], cwd=first, check=True)
    subprocess.run(git + ["commit", "-qm", "init"], cwd=first, check=True)
    second = os.path.join(top, "second")
    subprocess.run(["git", "worktree", "add", "-q", second, "-b", "second"], cwd=first, check=True)
    return first, second


async def main(binary, lease, record_figures=False):
    loads = [os.getloadavg()[0]]
    rows = []
    with tempfile.TemporaryDirectory() as top:
        first, second = repository(binary, top)
        for mode in ["legacy", "auto"]:
            freed, latencies, era = await scenario(binary, "stdio", mode, first, second, lease)
            rows.append(("stdio", mode, era, freed, latencies))
        with Serve(binary, first, extra=["--agent-lease", str(lease)]) as url:
            for mode in ["legacy", "auto"]:
                freed, latencies, era = await scenario(binary, "http", mode, url, url, lease)
                rows.append(("http", mode, era, freed, latencies))
    for transport, mode, era, freed, _ in rows:
        print(f"ok: {transport} {mode} ({era}): exclusivity, listing, messages, "
              f"{RACERS} racers -> 1 grant, SIGKILL freed in {freed:.2f} s")
    print(f"claim latency over {ROUNDS} rounds (ms): transport mode era median p90")
    for transport, mode, era, _, latencies in rows:
        ordered = sorted(latencies)
        p90 = ordered[int(len(ordered) * 0.9) - 1]
        print(f"  {transport:5} {mode:6} {era:10} {statistics.median(latencies):7.2f} {p90:7.2f}")
    if record_figures:
        loads.append(os.getloadavg()[0])
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
        import figures

        stdio = [f for t, _, _, f, _ in rows if t == "stdio"]
        http = [f for t, _, _, f, _ in rows if t == "http"]
        span = lambda xs: f"{min(xs):.2f}" if f"{min(xs):.2f}" == f"{max(xs):.2f}" else f"{min(xs):.2f}–{max(xs):.2f}"
        build = "release" if "/release/" in binary else "debug"
        figures.record(
            "mesh",
            build=build,
            loads=loads,
            values={"freed_stdio": f"{span(stdio)} s", "freed_http": f"{span(http)} s", "lease": f"{lease} s"},
            columns=["claim (ms), 40 rounds", "median", "p90"],
            rows=[
                [f"{transport}, {era}", f"{statistics.median(lat):.2f}", f"{sorted(lat)[int(len(lat) * 0.9) - 1]:.2f}"]
                for transport, _, era, _, lat in rows
            ],
        )


if __name__ == "__main__":
    try:
        if sys.argv[1] == "--hold":
            asyncio.run(hold(*sys.argv[2:7]))
        elif sys.argv[1] == "--latency":
            asyncio.run(latency([os.path.abspath(b) for b in sys.argv[2:]]))
        else:
            args = [a for a in sys.argv[1:] if a != "--record"]
            asyncio.run(main(os.path.abspath(args[0]), int(args[1]) if len(args) > 1 else 5, "--record" in sys.argv))
    except Exception:
        traceback.print_exc()
        sys.exit(1)
