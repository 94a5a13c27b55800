#!/usr/bin/env python3
"""The mesh through two real clients on two worktrees of one repository.

Usage: mesh-clients.py BINARY NODE INSPECTOR

Makes a throwaway git repository with `BINARY init`, commits, and adds a second worktree
(`git worktree add`). The official MCP Python SDK (`Client`, legacy era, over stdio on the first
worktree) subscribes to its inbox (`majordomus://peers/inbox`) and claims `src/api/**`. The MCP
Inspector's CLI (each call a fresh `majordomus mcp` over stdio on the second worktree, modern era)
claims `src/api/x.rs` and is answered `granted: false` naming the SDK's session, its worktree and
its reason; it sends the holders of `src/api/x.rs` a message, whose answer names the SDK's
session. The SDK hears `notifications/resources/updated` for its inbox, reads the message in it,
sees the unread count in its next answer, marks it read and releases; the Inspector's claim is
then granted. The SDK validates every `structuredContent` against the tool's `outputSchema`.

Exits 0 with a summary line; exits 1 on any exception, protocol error or unexpected answer.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import warnings

from mcp import Client, StdioServerParameters
from mcp.types import TextContent

INBOX = "majordomus://peers/inbox"
PATIENCE = 30


def method_of(message):
    """The notification method of whatever the message handler was given, if it is one."""
    for candidate in (message, getattr(message, "root", None)):
        method = getattr(candidate, "method", None)
        if isinstance(method, str):
            return method, getattr(candidate, "params", None)
    return None, None


async def call_ok(client, name, arguments):
    result = await client.call_tool(name, arguments)
    what = f"{name} {json.dumps(arguments, sort_keys=True)}"
    if result.is_error:
        text = result.content[0].text if result.content and isinstance(result.content[0], TextContent) else result.content
        raise AssertionError(f"{what}: isError: {text}")
    if result.structured_content is None:
        raise AssertionError(f"{what}: no structuredContent")
    return result.structured_content


class Inspector:
    """The Inspector's CLI calling one tool of a fresh `majordomus mcp` on `worktree`."""

    def __init__(self, node, inspector, binary, worktree, home):
        self.node, self.inspector, self.binary, self.worktree = node, inspector, binary, worktree
        self.env = dict(os.environ, HOME=home, PATH=os.path.dirname(node) + os.pathsep + os.environ["PATH"])

    def call(self, tool, arguments):
        command = [self.inspector, "--cli", self.binary, "mcp", "--repo", self.worktree,
                   "--protocol-era", "modern", "--format", "json", "-q",
                   "--method", "tools/call", "--tool-name", tool,
                   "--tool-args-json", json.dumps(arguments)]
        done = subprocess.run(command, env=self.env, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise AssertionError(f"inspector {tool}: exit {done.returncode}: {done.stderr[-2000:]}{done.stdout[-2000:]}")
        answer = json.loads(done.stdout)
        result = answer.get("result", answer)
        if "error" in answer or result.get("isError") or "structuredContent" not in result:
            raise AssertionError(f"inspector {tool} {arguments}: {answer}")
        return result["structuredContent"]


async def drive(binary, main, second, inspector):
    heard = asyncio.Queue()

    async def handler(message):
        method, params = method_of(message)
        if method:
            await heard.put((method, str(getattr(params, "uri", None))))

    async def expect_mail():
        deadline = time.monotonic() + PATIENCE
        while True:
            left = deadline - time.monotonic()
            method, uri = await asyncio.wait_for(heard.get(), max(left, 0.01))
            if method == "notifications/resources/updated" and uri == INBOX:
                return

    target = StdioServerParameters(command=binary, args=["mcp", "--repo", main])
    async with Client(target, mode="legacy", message_handler=handler, read_timeout_seconds=60,
                      raise_exceptions=True) as sdk:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # resources/subscribe is the legacy era's own
            await sdk.subscribe_resource(INBOX)
        held = await call_ok(sdk, "majordomus_claim", {"globs": ["src/api/**"], "reason": "python holds the api"})
        if held["granted"] is not True:
            raise AssertionError(f"the SDK's claim was not granted: {held}")
        sdk_pid = held["claim"]["pid"]

        # A second client in the second worktree is refused, told who holds it and why.
        refused = await asyncio.to_thread(inspector.call, "majordomus_claim", {"globs": ["src/api/x.rs"]})
        if refused["granted"] is not False or len(refused["conflicts"]) != 1:
            raise AssertionError(f"the Inspector's conflicting claim was not refused: {refused}")
        holder = refused["conflicts"][0]
        if holder["pid"] != sdk_pid or holder["client_supplied"].get("reason") != "python holds the api" \
                or os.path.realpath(holder["worktree"]) != os.path.realpath(main):
            raise AssertionError(f"the conflict does not name the SDK's claim: {holder}")

        # It asks the holders; the answer names the SDK's session, which is told of the mail.
        sent = await asyncio.to_thread(inspector.call, "majordomus_send", {
            "subject": "may I have src/api/x.rs?", "body": "a small fix", "globs": ["src/api/x.rs"]})
        if [r["pid"] for r in sent["recipients"]] != [sdk_pid]:
            raise AssertionError(f"the message did not name the SDK's session: {sent}")
        await expect_mail()
        mail = await call_ok(sdk, "majordomus_inbox", {})
        message = mail["messages"][-1]
        if message["client_supplied"]["subject"] != "may I have src/api/x.rs?" or message["addressed"] != "holders" \
                or os.path.realpath(message["from"]["worktree"]) != os.path.realpath(second):
            raise AssertionError(f"the inbox does not hold the message: {mail}")
        listed = await call_ok(sdk, "majordomus_peers", {})
        if listed["unread"] != 1:
            raise AssertionError(f"the unread count is not in the next answer: {listed['unread']}")
        await call_ok(sdk, "majordomus_mark_read", {})

        released = await call_ok(sdk, "majordomus_release", {"globs": ["src/api/**"]})
        if len(released["released"]) != 1 or released["unread"] != 0:
            raise AssertionError(f"the release did not end the claim: {released}")
        granted = await asyncio.to_thread(inspector.call, "majordomus_claim", {"globs": ["src/api/x.rs"]})
        if granted["granted"] is not True:
            raise AssertionError(f"after the release the Inspector's claim was not granted: {granted}")
        print(f"mesh-clients: ok: the Python SDK ({sdk.protocol_version}, {os.path.basename(main)}) claimed, "
              f"the Inspector CLI (modern, {os.path.basename(second)}) was refused naming it, sent it a "
              f"message it was notified of and read, and was granted after the release")


def main():
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    binary, node, inspector_bin = sys.argv[1:]
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory() as work:
            main_tree = os.path.join(work, "main")
            second = os.path.join(work, "second")
            os.makedirs(os.path.join(main_tree, "src", "api"))
            with open(os.path.join(main_tree, "src", "api", "x.rs"), "w", encoding="utf-8") as f:
                f.write("fn x() {}\n")
            git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
            subprocess.run(git + ["init", "-q", "-b", "main"], cwd=main_tree, check=True)
            subprocess.run([binary, "init"], cwd=main_tree, check=True, capture_output=True)
            subprocess.run(git + ["add", "-A"], cwd=main_tree, check=True)
            subprocess.run(git + ["commit", "-q", "-m", "start"], cwd=main_tree, check=True)
            subprocess.run(git + ["worktree", "add", "-q", second, "-b", "second"], cwd=main_tree, check=True)
            os.makedirs(os.path.join(work, "home"))
            inspector = Inspector(node, inspector_bin, binary, second, os.path.join(work, "home"))
            asyncio.run(drive(binary, main_tree, second, inspector))
    except BaseException:  # noqa: BLE001 — any failure, including an exception group, fails CI
        traceback.print_exc()
        print("mesh-clients: FAILED", file=sys.stderr)
        return 1
    print(f"mesh-clients: {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
