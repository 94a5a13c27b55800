#!/usr/bin/env python3
"""The skills extension through a real client: the official MCP Python SDK (`pip install mcp`).

Usage: skills-python-client.py BINARY

Makes a throwaway repository (`git init`, `BINARY init`, two skills: one of a `SKILL.md`, a
script, a nested reference and a binary asset; committed), then connects to it over stdio on the
legacy era (`ClientSession.initialize`), and with the SDK's `Client` pinned to `2026-07-28` over
stdio and over Streamable HTTP (`BINARY serve --port 0`). The SDK has no skills methods, so
`skills/list`, `skills/get` and `resources/directory/read` go through the session's raw
`send_request`; every file is read with the SDK's own `read_resource`.

On each connection it checks that the server declares `io.modelcontextprotocol/skills` with
`directoryRead: true`; walks `skills/list` page by page; gets each skill and compares the entry
with the listed one; reads every file of every skill and verifies the `sha256:` digest and the
size against the bytes read (text as UTF-8, a blob base64-decoded) and against the file on disk;
and lists the root directory of each skill.

Exits 0 with one summary line per connection; exits 1 on any exception or mismatch.
"""

import asyncio
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from typing import Any

from pydantic import TypeAdapter

from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.types import Implementation, Request
from mcp_serve import Serve

EXTENSION = "io.modelcontextprotocol/skills"
RAW = TypeAdapter(dict[str, Any])

SKILLS = {
    "pdf-tools": {
        "SKILL.md": b"---\nname: pdf-tools\ndescription: Fill and merge PDF forms. Use when a PDF is involved.\nlicense: Apache-2.0\n---\n\n# PDF tools\n\nRun `scripts/fill.py`; see `references/forms/fields.md`.\n",
        "scripts/fill.py": b"print('fill')\n",
        "references/forms/fields.md": "# Fields\n\nEvery field is named \u00e9tiquette.\n".encode(),
        "assets/logo.png": bytes([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0xFF, 0x10]),
    },
    "release-notes": {
        "SKILL.md": b"---\nname: release-notes\ndescription: Write release notes from the log.\n---\n\n# Release notes\n",
        "template.md": b"## Changes\n",
    },
}


class Raw(Request[dict[str, Any] | None, str]):
    """A request the SDK has no type for, sent as it is."""


def make_repository(binary):
    """A committed repository with the skills above; returns its path."""
    root = tempfile.mkdtemp(prefix="majordomus-skills-")
    env = {**os.environ, "GIT_AUTHOR_NAME": "ci", "GIT_AUTHOR_EMAIL": "ci@example.invalid",
           "GIT_COMMITTER_NAME": "ci", "GIT_COMMITTER_EMAIL": "ci@example.invalid"}
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run([binary, "init"], cwd=root, check=True, env=env, stdout=subprocess.DEVNULL)
    for name, files in SKILLS.items():
        for path, content in files.items():
            full = os.path.join(root, ".ai/repo/skills", name, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(content)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "skills"], cwd=root, check=True, env=env)
    return root


async def raw(session, method, params):
    return await session.send_request(Raw(method=method, params=params), RAW)


def bytes_of(contents, uri):
    """The bytes one `resources/read` content carries: its text as UTF-8, or its decoded blob."""
    if len(contents) != 1 or str(contents[0].uri) != uri:
        raise AssertionError(f"{uri}: expected one content naming it, got {contents!r}")
    content = contents[0]
    text, blob = getattr(content, "text", None), getattr(content, "blob", None)
    if text is not None and blob is None:
        return text.encode("utf-8")
    if blob is not None and text is None:
        return base64.b64decode(blob, validate=True)
    raise AssertionError(f"{uri}: neither text nor blob")


async def check(session, read_resource, repo, where, extensions):
    skills_ext = (extensions or {}).get(EXTENSION)
    if not isinstance(skills_ext, dict) or skills_ext.get("directoryRead") is not True:
        raise AssertionError(f"{where}: {EXTENSION} is not declared with directoryRead: {extensions!r}")
    listed, cursor, pages = [], None, 0
    while True:
        page = await raw(session, "skills/list", {"cursor": cursor} if cursor else {})
        pages += 1
        listed.extend(page["skills"])
        cursor = page.get("nextCursor")
        if not cursor:
            break
    names = sorted(s["frontmatter"]["name"] for s in listed)
    expected = sorted([*SKILLS, "prepare-a-change"])
    if names != expected:
        raise AssertionError(f"{where}: skills/list names {names}, expected {expected}")
    files = 0
    for entry in listed:
        name = entry["frontmatter"]["name"]
        got = (await raw(session, "skills/get", {"uri": entry["uri"]}))["skill"]
        if got != entry:
            raise AssertionError(f"{where}: skills/get {entry['uri']} differs from skills/list")
        uris = [r["uri"] for r in got["resources"]]
        if len(set(uris)) != len(uris) or f"skill://{name}/SKILL.md" not in uris:
            raise AssertionError(f"{where}: {name}: files listed twice or no SKILL.md: {uris}")
        if name in SKILLS:
            expected_uris = sorted(f"skill://{name}/{p}" for p in SKILLS[name])
            if sorted(uris) != expected_uris:
                raise AssertionError(f"{where}: {name} lists {uris}, expected {expected_uris}")
        for resource in got["resources"]:
            uri = resource["uri"]
            data = bytes_of((await read_resource(uri)).contents, uri)
            digest = "sha256:" + hashlib.sha256(data).hexdigest()
            if resource["digest"] != digest or resource["size"] != len(data):
                raise AssertionError(
                    f"{where}: {uri}: entry says {resource['digest']} {resource['size']} B, "
                    f"read gave {digest} {len(data)} B"
                )
            relative = uri.removeprefix(f"skill://{name}/")
            with open(os.path.join(repo, ".ai/repo/skills", name, relative), "rb") as f:
                if f.read() != data:
                    raise AssertionError(f"{where}: {uri} is not the file's bytes")
            files += 1
        top = await raw(session, "resources/directory/read", {"uri": f"skill://{name}/"})
        children = {c["uri"] for c in top["resources"]}
        if f"skill://{name}/SKILL.md" not in children:
            raise AssertionError(f"{where}: the root of {name} does not hold SKILL.md: {children}")
    if files < 7:
        raise AssertionError(f"{where}: only {files} files read")
    print(
        f"skills-python-client: ok: {where}: {len(listed)} skills in {pages} page(s), "
        f"{files} files read, every digest and size verified"
    )



async def run(binary, repo):
    server = StdioServerParameters(command=binary, args=["mcp", "--repo", repo])
    async with stdio_client(server) as (read, write):
        async with ClientSession(
            read,
            write,
            read_timeout_seconds=60,
            client_info=Implementation(name="majordomus-ci-skills", version="1.0.0"),
        ) as session:
            init = await session.initialize()
            extensions = init.capabilities.model_dump(by_alias=True).get("extensions")
            await check(session, session.read_resource, repo, f"stdio {init.protocol_version}", extensions)
    with Serve(binary, repo) as url:
        for transport, target in [("stdio", server), ("http", url)]:
            async with Client(target, mode="2026-07-28", read_timeout_seconds=60, raise_exceptions=True) as client:
                # A client pinned to the modern era adopts it without asking: ask `server/discover`.
                discovered = await client.session.send_discover(client.protocol_version)
                extensions = discovered["capabilities"].get("extensions")
                where = f"{transport} {client.protocol_version}"
                await check(client.session, client.read_resource, repo, where, extensions)


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    repo = None
    try:
        repo = make_repository(sys.argv[1])
        asyncio.run(run(sys.argv[1], repo))
    except BaseException:  # noqa: BLE001 — any failure, including an exception group, fails CI
        traceback.print_exc()
        print("skills-python-client: FAILED", file=sys.stderr)
        return 1
    finally:
        if repo is not None:
            shutil.rmtree(repo, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
