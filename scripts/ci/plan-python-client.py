#!/usr/bin/env python3
"""The plan as a work queue, driven by the official MCP Python SDK (`pip install mcp`).

Usage: plan-python-client.py BINARY

Makes a throwaway git repository with `BINARY init`, then, over stdio (`BINARY mcp`) and over
Streamable HTTP (`BINARY serve --port 0`), with the SDK's default `Client`: creates an issue
(`majordomus_plan_create`), finds it in `majordomus_plan_ready`, claims it, and moves it
start → verify → done. While it is held, a second session (over the other transport) sees the
claim in `majordomus_plan_issues`, is refused `granted: false` when claiming it, and no longer
finds it ready; once done, the issue shows no claimant. The SDK validates every
`structuredContent` against the tool's `outputSchema`.

Exits 0 with a summary line; exits 1 on any exception, protocol error or unexpected answer.
"""

import asyncio
import json
import subprocess
import sys
import tempfile
import traceback

from mcp import Client, StdioServerParameters
from mcp.types import TextContent
from mcp_serve import Serve


async def call_ok(client, name, arguments):
    result = await client.call_tool(name, arguments)
    what = f"{name} {json.dumps(arguments, sort_keys=True)}"
    if result.is_error:
        text = result.content[0].text if result.content and isinstance(result.content[0], TextContent) else result.content
        raise AssertionError(f"{what}: isError: {text}")
    if result.structured_content is None:
        raise AssertionError(f"{what}: no structuredContent")
    return result.structured_content


async def until(client, filters, issue, where, what):
    """`majordomus_plan_issues` with `filters`, asked again until it lists `issue` or 10 s pass:
    another process sees a file written by this one once its index notices the change."""
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        answer = await call_ok(client, "majordomus_plan_issues", filters)
        if issue in ids(answer["issues"]):
            return answer
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{where}: the second session never saw {issue} {what}: {answer}")
        await asyncio.sleep(0.05)


def ids(tasks):
    return [t["id"] for t in tasks]


class AsAgent:
    """A client as one agent: over HTTP on the stateless era it announces once and passes the
    handle back as `agent` to every tool that takes one (a stdio process already is one agent)."""

    def __init__(self, client, over_http):
        self.client, self.over_http, self.handle, self.takes = client, over_http, None, set()
        self.protocol_version = client.protocol_version

    async def start(self):
        tools = (await self.client.list_tools()).tools
        self.takes = {t.name for t in tools if "agent" in t.input_schema.get("properties", {})}
        if self.over_http and self.client.protocol_version == "2026-07-28":
            announced = await call_ok(self.client, "majordomus_announce", {"intent": "plan queue"})
            self.handle = announced["handle"]
        return self

    async def call_tool(self, name, arguments):
        if self.handle and name in self.takes:
            arguments = {**arguments, "agent": self.handle}
        return await self.client.call_tool(name, arguments)


async def drive(holder_target, other_target, where):
    async with Client(holder_target, read_timeout_seconds=60, raise_exceptions=True) as holder_client, \
            Client(other_target, read_timeout_seconds=60, raise_exceptions=True) as other_client:
        holder = await AsAgent(holder_client, where == "http").start()
        other = await AsAgent(other_client, where == "stdio").start()
        made = await call_ok(holder, "majordomus_plan_create", {
            "title": f"Queue work over {where}",
            "paths": [f"src/{where}/**"],
            "priority": 0,
            "labels": ["sdk"],
        })
        issue = made["id"]
        ready = await call_ok(holder, "majordomus_plan_ready", {})
        if issue not in ids(ready["ready"]):
            raise AssertionError(f"{where}: {issue} is not ready: {ready}")
        claim = await call_ok(holder, "majordomus_plan_claim", {"issue": issue})
        if claim["granted"] is not True:
            raise AssertionError(f"{where}: not granted: {claim}")
        await call_ok(holder, "majordomus_plan_transition", {"issue": issue, "transition": "start"})

        seen = await until(other, {"claim": "claimed", "label": "sdk"}, issue, where, "held")
        held = [i for i in seen["issues"] if i["id"] == issue]
        if held[0]["claimant"]["live"] is not True:
            raise AssertionError(f"{where}: the second session does not see the claim: {seen}")
        again = await call_ok(other, "majordomus_plan_claim", {"issue": issue})
        if again["granted"] is not False or not again["holders"]:
            raise AssertionError(f"{where}: the second session was not refused: {again}")
        if issue in ids((await call_ok(other, "majordomus_plan_ready", {}))["ready"]):
            raise AssertionError(f"{where}: a held issue is still ready")

        for step in ["verify", "done"]:
            await call_ok(holder, "majordomus_plan_transition", {"issue": issue, "transition": step})
        done = await until(other, {"status": "done", "label": "sdk"}, issue, where, "done")
        finished = [i for i in done["issues"] if i["id"] == issue]
        if "claimant" in finished[0]:
            raise AssertionError(f"{where}: done did not release the claim: {done}")
        print(f"plan-python-client: ok: {where}: protocol {holder.protocol_version}, {issue} "
              f"created, claimed, seen held by the second session, started, verified, done")


async def run(binary, repo):
    stdio = StdioServerParameters(command=binary, args=["mcp", "--repo", repo])
    with Serve(binary, repo) as url:
        await drive(stdio, url, "stdio")
        await drive(url, stdio, "http")


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    binary = sys.argv[1]
    try:
        with tempfile.TemporaryDirectory() as repo:
            subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
            subprocess.run([binary, "init"], cwd=repo, check=True, capture_output=True)
            asyncio.run(run(binary, repo))
    except BaseException:  # noqa: BLE001 — any failure, including an exception group, fails CI
        traceback.print_exc()
        print("plan-python-client: FAILED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
