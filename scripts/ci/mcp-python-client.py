#!/usr/bin/env python3
"""A real MCP client against `majordomus mcp`: the official MCP Python SDK (`pip install mcp`).

Usage: mcp-python-client.py BINARY REPO

Connects over stdio to `BINARY mcp --repo REPO --toolsets all` (every tool, the operator's too:
the default lists the agent's), initializes, lists the tools and the resources,
calls every read tool (effect `read` in `_meta.majordomus.effect`) with each example its
capability declares (asked over the same session from the tool of `capabilities.describe`) and
with `{}` when its input requires nothing, and reads every resource. The SDK validates every
result it parses, including each `structuredContent` against the tool's `outputSchema`.

Then connects once more with the SDK's default `Client` (mode `auto`: it probes `server/discover`
and falls back to the `initialize` handshake), as most programs built on the SDK will.

Then the modern era (2026-07-28), with the SDK's `Client` pinned to `2026-07-28` and in `auto`
mode (which must settle on the modern era), over stdio and over Streamable HTTP (`BINARY serve
--port 0`): the same sweep, `resources/list` walked page by page through `nextCursor`, every
result parsed by the SDK's modern types (`resultType`, `ttlMs`, `cacheScope`).

Exits 0 with a summary line; exits 1 on any exception, protocol error or `isError` result.
"""

import asyncio
import json
import sys
import traceback

from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation, TextContent
from mcp_serve import Serve

READ = "read"


def meta(tool):
    """The tool's `_meta.majordomus` object."""
    value = (tool.meta or {}).get("majordomus")
    if not isinstance(value, dict):
        raise AssertionError(f"{tool.name}: no _meta.majordomus")
    return value


def text_of(result, what):
    """The one text content of a tool result."""
    if len(result.content) != 1 or not isinstance(result.content[0], TextContent):
        raise AssertionError(f"{what}: expected one text content, got {result.content!r}")
    return result.content[0].text


async def call_ok(session, name, arguments):
    result = await session.call_tool(name, arguments)
    what = f"{name} {json.dumps(arguments, sort_keys=True)}"
    if result.is_error:
        raise AssertionError(f"{what}: isError: {text_of(result, what)}")
    if result.structured_content is None:
        raise AssertionError(f"{what}: no structuredContent")
    if json.loads(text_of(result, what)) != result.structured_content:
        raise AssertionError(f"{what}: the text content is not the structuredContent")
    return result.structured_content


async def run(binary, repo):
    server = StdioServerParameters(command=binary, args=["mcp", "--repo", repo, "--toolsets", "all"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=60,
            client_info=Implementation(name="majordomus-ci-python", version="1.0.0"),
        ) as session:
            init = await session.initialize()
            if init.server_info.name != "majordomus":
                raise AssertionError(f"serverInfo.name is {init.server_info.name!r}")
            if init.capabilities.tools is None or init.capabilities.resources is None:
                raise AssertionError("the server offers no tools or no resources")
            if init.capabilities.prompts is not None:
                raise AssertionError("the server offers prompts")
            print(
                f"mcp-python-client: initialized: protocol {init.protocol_version}, "
                f"server {init.server_info.name} {init.server_info.version}"
            )

            await session.send_ping()
            tools = (await session.list_tools()).tools
            by_id = {meta(t)["id"]: t for t in tools}
            describe = by_id.get("capabilities.describe")
            if describe is None:
                raise AssertionError("no tool describes a capability (capabilities.describe)")

            called = 0
            read_tools = [t for t in tools if meta(t)["effect"] == READ]
            for tool in read_tools:
                descriptor = await call_ok(session, describe.name, {"id": meta(tool)["id"]})
                inputs = [example["input"] for example in descriptor["examples"]]
                if not tool.input_schema.get("required"):
                    inputs.append({})
                for arguments in inputs:
                    await call_ok(session, tool.name, arguments)
                    called += 1

            resources = (await session.list_resources()).resources
            for resource in resources:
                contents = (await session.read_resource(resource.uri)).contents
                if len(contents) != 1 or str(contents[0].uri) != str(resource.uri):
                    raise AssertionError(f"{resource.uri}: expected one content naming it")
                if not getattr(contents[0], "text", None):
                    raise AssertionError(f"{resource.uri}: no text")
            templates = (await session.list_resource_templates()).resource_templates

            if len(read_tools) < 10 or called < 15 or len(resources) < 10 or not templates:
                raise AssertionError(
                    f"too little swept: {len(read_tools)} read tools, {called} calls, "
                    f"{len(resources)} resources, {len(templates)} templates"
                )
            print(
                f"mcp-python-client: ok: {len(tools)} tools listed, {called} calls to "
                f"{len(read_tools)} read tools, {len(resources)} resources read, "
                f"{len(templates)} resource template"
            )
    listed = sorted(t.name for t in tools)

    async with Client(server, read_timeout_seconds=60, raise_exceptions=True) as client:
        again = sorted(t.name for t in (await client.list_tools()).tools)
        if again != listed:
            raise AssertionError(f"the default Client lists other tools: {again} != {listed}")
        print(f"mcp-python-client: ok: the default Client negotiated {client.protocol_version}")


async def sweep(client, where, stateless_http=False):
    """Lists, calls every read tool with its examples, walks and reads every resource. Over
    HTTP on the stateless era the client is an agent by the handle `majordomus_announce` answers,
    passed as `agent` to every tool that takes one (a stdio process already is one agent)."""
    tools = (await client.list_tools()).tools
    by_id = {meta(t)["id"]: t for t in tools}
    describe = by_id["capabilities.describe"]
    handle = None
    if stateless_http:
        announced = await call_ok(client, by_id["peers.announce"].name, {"intent": f"sweep {where}"})
        handle = announced["handle"]
    called = 0
    read_tools = [t for t in tools if meta(t)["effect"] == READ]
    for tool in read_tools:
        descriptor = await call_ok(client, describe.name, {"id": meta(tool)["id"]})
        inputs = [example["input"] for example in descriptor["examples"]]
        if not tool.input_schema.get("required"):
            inputs.append({})
        for arguments in inputs:
            if handle and "agent" in tool.input_schema.get("properties", {}):
                arguments = {**arguments, "agent": handle}
            await call_ok(client, tool.name, arguments)
            called += 1
    resources, cursor, pages = [], None, 0
    while True:
        page = await client.list_resources(cursor=cursor)
        pages += 1
        if page.ttl_ms is None or page.cache_scope is None:
            raise AssertionError(f"{where}: resources/list carries no ttlMs/cacheScope")
        resources.extend(page.resources)
        cursor = page.next_cursor
        if not cursor:
            break
    for resource in resources:
        if handle and str(resource.uri) == "majordomus://peers/inbox":
            continue  # an agent's own: a resource read names no handle
        contents = (await client.read_resource(resource.uri)).contents
        if len(contents) != 1 or str(contents[0].uri) != str(resource.uri):
            raise AssertionError(f"{where} {resource.uri}: expected one content naming it")
    templates = (await client.list_resource_templates()).resource_templates
    if len(read_tools) < 10 or called < 15 or len(resources) < 10 or not templates:
        raise AssertionError(f"{where}: too little swept")
    print(
        f"mcp-python-client: ok: {where}: protocol {client.protocol_version}, {len(tools)} tools, "
        f"{called} calls to {len(read_tools)} read tools, {len(resources)} resources in {pages} "
        f"page(s) read, {len(templates)} template"
    )



async def modern(binary, repo):
    server = StdioServerParameters(command=binary, args=["mcp", "--repo", repo, "--toolsets", "all"])
    with Serve(binary, repo, extra=("--toolsets", "all")) as url:
        for transport, target in [("stdio", server), ("http", url)]:
            for mode in ["2026-07-28", "auto"]:
                async with Client(target, mode=mode, read_timeout_seconds=60, raise_exceptions=True) as client:
                    if client.protocol_version != "2026-07-28":
                        raise AssertionError(f"{transport} {mode}: negotiated {client.protocol_version}")
                    await sweep(client, f"{transport} mode {mode}", stateless_http=transport == "http")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    try:
        asyncio.run(run(sys.argv[1], sys.argv[2]))
        asyncio.run(modern(sys.argv[1], sys.argv[2]))
    except BaseException:  # noqa: BLE001 — any failure, including an exception group, fails CI
        traceback.print_exc()
        print("mcp-python-client: FAILED", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
