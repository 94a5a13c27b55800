#!/usr/bin/env python3
"""The layer's changes reaching a real MCP client: the official MCP Python SDK (`pip install mcp`).

Usage: mcp-python-live.py BINARY

Makes a throwaway repository (`git init`, `BINARY init`), then, over stdio (`BINARY mcp`) and over
Streamable HTTP (`BINARY serve --port 0`):

- legacy era (the SDK's `Client` in mode `legacy`): subscribes to a rule, edits the rule's file
  and waits for `notifications/resources/updated` naming it, then adds a knowledge file and waits
  for `notifications/resources/list_changed`, both through the SDK's message handler;
- modern era (mode `2026-07-28`): opens `Client.listen(resources_list_changed=True,
  resource_subscriptions=[rule])`, checks the acknowledged filter, then waits for the SDK's
  typed `ResourceUpdated` and `ResourcesListChanged` events after the same two edits.

Exits 0 with a summary line; exits 1 on any exception or a notification that does not come.
"""

import asyncio
import os
import subprocess
import sys
import tempfile
import traceback
import warnings

from mcp import Client, StdioServerParameters
from mcp.client.subscriptions import ResourcesListChanged, ResourceUpdated
from mcp_serve import Serve

RULE = ".ai/repo/rules/describe-changes-in-commits.md"
RULE_URI = "majordomus://rule/describe-changes-in-commits@1"
PATIENCE = 30


def method_of(message):
    """The notification method of whatever the message handler was given, if it is one."""
    for candidate in (message, getattr(message, "root", None)):
        method = getattr(candidate, "method", None)
        if isinstance(method, str):
            return method, getattr(candidate, "params", None)
    return None, None


class Edits:
    """Edits of the throwaway repository, each distinct from the last."""

    def __init__(self, repo):
        self.repo = repo
        self.count = 0

    def rule(self):
        self.count += 1
        path = os.path.join(self.repo, RULE)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.rstrip("\n") + f"\n\nEdit {self.count}.\n")

    def new_object(self):
        self.count += 1
        folder = os.path.join(self.repo, ".ai/repo/knowledge/curated")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"python-{self.count}.md"), "w", encoding="utf-8") as f:
            f.write(f"---\nid: python-{self.count}\ntitle: Note {self.count}\n---\n\nFrom the SDK's run.\n")


async def legacy(target, where, edits):
    heard = asyncio.Queue()

    async def handler(message):
        method, params = method_of(message)
        if method:
            await heard.put((method, getattr(params, "uri", None)))

    async def expect(method, uri=None):
        while True:
            got = await asyncio.wait_for(heard.get(), PATIENCE)
            if got[0] == method and (uri is None or str(got[1]) == uri):
                return

    async with Client(target, mode="legacy", message_handler=handler, read_timeout_seconds=60, raise_exceptions=True) as client:
        caps = client.server_capabilities
        if not (caps.resources and caps.resources.subscribe and caps.resources.list_changed):
            raise AssertionError(f"{where}: resources do not offer subscribe and listChanged: {caps.resources}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe is the legacy era's own
            await client.subscribe_resource(RULE_URI)
        # Over HTTP the SDK opens the session's GET stream after initialize; give it a moment.
        await asyncio.sleep(0.5)
        edits.rule()
        await expect("notifications/resources/updated", RULE_URI)
        edits.new_object()
        await expect("notifications/resources/list_changed")
    print(f"mcp-python-live: {where} legacy: resources/updated and list_changed through the message handler")


async def modern(target, where, edits):
    async with Client(target, mode="2026-07-28", read_timeout_seconds=60, raise_exceptions=True) as client:
        async with client.listen(
            resources_list_changed=True, tools_list_changed=True, resource_subscriptions=[RULE_URI]
        ) as sub:
            honoured = sub.honored
            if honoured.tools_list_changed:
                raise AssertionError(f"{where}: toolsListChanged was acknowledged; tools are compiled in")
            if not honoured.resources_list_changed or list(honoured.resource_subscriptions or []) != [RULE_URI]:
                raise AssertionError(f"{where}: acknowledged {honoured}")
            events = sub.__aiter__()
            edits.rule()
            while True:
                event = await asyncio.wait_for(events.__anext__(), PATIENCE)
                if isinstance(event, ResourceUpdated) and str(event.uri) == RULE_URI:
                    break
            edits.new_object()
            while True:
                event = await asyncio.wait_for(events.__anext__(), PATIENCE)
                if isinstance(event, ResourcesListChanged):
                    break
    print(f"mcp-python-live: {where} modern: a listen acknowledged, then ResourceUpdated and ResourcesListChanged")



async def run(binary, repo):
    edits = Edits(repo)
    stdio = StdioServerParameters(command=binary, args=["mcp", "--repo", repo])
    await legacy(stdio, "stdio", edits)
    await modern(stdio, "stdio", edits)
    with Serve(binary, repo) as url:
        await legacy(url, "http", edits)
        await modern(url, "http", edits)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    try:
        with tempfile.TemporaryDirectory() as repo:
            subprocess.run(["git", "init", "-q", repo], check=True)
            subprocess.run([binary, "init"], cwd=repo, check=True, stdout=subprocess.DEVNULL)
            asyncio.run(run(binary, repo))
    except BaseException:  # noqa: BLE001 — any failure, including an exception group, fails CI
        traceback.print_exc()
        print("mcp-python-live: FAILED", file=sys.stderr)
        return 1
    print("mcp-python-live: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
