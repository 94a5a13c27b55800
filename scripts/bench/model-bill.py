#!/usr/bin/env python3
"""What each client passes its model of an MCP server, for one or more majordomus binaries.

Usage: model-bill.py REPO NAME=BINARY [NAME=BINARY]... [--record]

For each binary and each toolset selection (the default, `core`, `all`) it starts `BINARY mcp`
on REPO, reads the instructions (initialize) and tools/list, and prints the bytes and estimated
tokens (bytes / 4.5, rounded up: the estimate `mcp.projection` states) of:
- the instructions whole (Codex and Gemini CLI pass them whole) and as Claude Code passes them
  (its first 2,048 characters, counted as JavaScript counts them);
- the tool definitions as a client passes them to its model: each tool's name, description and
  input schema as compact JSON, in one array (no output schema, title or annotations);
- the tools/list result as sent on the wire.
No third-party package is needed; scripts/bench/token-bill.sh checks the estimate against a real
tokenizer. `--record` writes `docs/figures/model-bill.json` for the README
(scripts/bench/figures.py): per toolset, one row per binary in the order given, labelled with the
version the binary states, so a release's bill stands beside this one's. Name the earlier release
first and this build last; the prose values are the last binary's. A release's binary is built
from its commit in a worktree of its own, e.g. for 0.4.0:

    git worktree add /tmp/v040 3da0b55d
    CARGO_TARGET_DIR=target-v040 cargo build --manifest-path /tmp/v040/Cargo.toml
    scripts/bench/model-bill.py . 0.4.0=target-v040/debug/majordomus \
        this=target/debug/majordomus --record

A release without the `agent` toolset served every tool by default; its default row says so.
"""

import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

CUT = 2048


def tokens(n):
    return math.ceil(n * 2 / 9)


def cut(text):
    units = 0
    for i, c in enumerate(text):
        units += 2 if ord(c) > 0xFFFF else 1
        if units > CUT:
            return text[:i]
    return text


def measure(binary, repo, toolsets):
    args = [binary, "mcp", "--repo", repo] + (["--toolsets", toolsets] if toolsets else [])
    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "model-bill", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in lines)
    out = subprocess.run(args, input=stdin.encode(), capture_output=True, timeout=60)
    answers = {}
    for line in out.stdout.decode().splitlines():
        message = json.loads(line)
        if "id" in message:
            answers[message["id"]] = (line, message)
    if 2 not in answers or "result" not in answers[2][1]:
        raise SystemExit(f"{binary} {toolsets}: {out.stderr.decode().strip()}")
    instructions = answers[1][1]["result"].get("instructions", "")
    tools = answers[2][1]["result"]["tools"]
    passed = [{"name": t["name"], "description": t.get("description"),
               "inputSchema": t.get("inputSchema")} for t in tools]
    wire_line = answers[2][0]
    wire = len(wire_line[wire_line.index('"result":') + 9:-1].encode())
    return {
        "tools": len(tools),
        "instructions": len(instructions.encode()),
        "instructions_claude": len(cut(instructions).encode()),
        "model_tools": len(json.dumps(passed, separators=(",", ":"), ensure_ascii=False).encode()),
        "wire": wire,
    }


def version(binary):
    """`0.4.0`: what `BINARY --version` states."""
    out = subprocess.run([binary, "--version"], capture_output=True, timeout=60)
    return out.stdout.decode().split()[-1]


def default_label(binary, repo, m, every):
    """What a binary's default toolset is: `agent`, or every tool where it has no `agent` set."""
    try:
        agent = measure(binary, repo, "agent")
    except SystemExit:
        agent = None
    # The instructions name the toolsets asked for, so only the tools are compared.
    if agent is not None and (agent["tools"], agent["model_tools"]) == (m["tools"], m["model_tools"]):
        return "default: `agent`"
    if m["tools"] == every:
        return "default: every tool (no `agent` toolset yet)"
    return "default"


def main():
    record = "--record" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--record"]
    if len(args) < 2:
        raise SystemExit(__doc__)
    repo = args[0]
    binaries = [spec.split("=", 1) for spec in args[1:]]
    loads = [figures.load_average()]
    print("| binary | toolset | tools | instructions B (tok) | as Claude Code cuts them B (tok) "
          "| tools to the model B (tok) | tools/list on the wire B |")
    print("|---|---|---:|---:|---:|---:|---:|")
    measured = {}
    for name, binary in binaries:
        for toolsets in [None, "core", "all"]:
            m = measure(binary, repo, toolsets)
            measured[(binary, toolsets)] = m
            print(f"| {name} | {toolsets or 'default'} | {m['tools']} "
                  f"| {m['instructions']:,} ({tokens(m['instructions']):,}) "
                  f"| {m['instructions_claude']:,} ({tokens(m['instructions_claude']):,}) "
                  f"| {m['model_tools']:,} ({tokens(m['model_tools']):,}) | {m['wire']:,} |")
    loads.append(figures.load_average())
    if not record:
        return
    rows, values = [], {}
    for toolsets in [None, "core", "all"]:
        for at, (_, binary) in enumerate(binaries):
            m = measured[(binary, toolsets)]
            label = toolsets or default_label(
                binary, repo, m, measured[(binary, "all")]["tools"])
            rows.append([
                label, version(binary), str(m["tools"]),
                f"{m['model_tools']:,} B (~{tokens(m['model_tools']):,})",
                f"{m['instructions_claude']:,} B (~{tokens(m['instructions_claude']):,})",
                f"{m['instructions']:,} B (~{tokens(m['instructions']):,})",
                f"{m['wire']:,} B",
            ])
            if at == len(binaries) - 1:
                key = toolsets or "agent"
                values[f"{key}_tools"] = f"{m['model_tools']:,} bytes"
                values[f"{key}_tokens"] = f"{tokens(m['model_tools'] + m['instructions_claude']):,}"
    builds = {"debug" if "/debug/" in binary else "release" for _, binary in binaries}
    figures.record(
        "model-bill", build=" and ".join(sorted(builds)), loads=loads,
        columns=["toolset", "release", "tools",
                 "tool definitions to the model (all three clients)",
                 "instructions, Claude Code (cut at 2,048 characters)",
                 "instructions, Codex and Gemini CLI (whole)", "tools/list on the wire"],
        rows=rows, values=values)


if __name__ == "__main__":
    main()
