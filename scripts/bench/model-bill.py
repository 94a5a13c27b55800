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
tokenizer. `--record` writes the first binary's figures to `docs/figures/model-bill.json` for the
README (scripts/bench/figures.py): one row per toolset, as each client passes it.
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


def main():
    record = "--record" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--record"]
    if len(args) < 2:
        raise SystemExit(__doc__)
    repo = args[0]
    loads = [figures.load_average()]
    print("| binary | toolset | tools | instructions B (tok) | as Claude Code cuts them B (tok) "
          "| tools to the model B (tok) | tools/list on the wire B |")
    print("|---|---|---:|---:|---:|---:|---:|")
    rows, values = [], {}
    for at, spec in enumerate(args[1:]):
        name, binary = spec.split("=", 1)
        for toolsets in [None, "core", "all"]:
            m = measure(binary, repo, toolsets)
            shown = toolsets or "default"
            print(f"| {name} | {shown} | {m['tools']} "
                  f"| {m['instructions']:,} ({tokens(m['instructions']):,}) "
                  f"| {m['instructions_claude']:,} ({tokens(m['instructions_claude']):,}) "
                  f"| {m['model_tools']:,} ({tokens(m['model_tools']):,}) | {m['wire']:,} |")
            if at == 0:
                label = toolsets or "agent (the default)"
                rows.append([
                    label, str(m["tools"]),
                    f"{m['model_tools']:,} B (~{tokens(m['model_tools']):,})",
                    f"{m['instructions_claude']:,} B (~{tokens(m['instructions_claude']):,})",
                    f"{m['instructions']:,} B (~{tokens(m['instructions']):,})",
                    f"{m['wire']:,} B",
                ])
                key = toolsets or "agent"
                values[f"{key}_tools"] = f"{m['model_tools']:,} bytes"
                values[f"{key}_tokens"] = f"{tokens(m['model_tools'] + m['instructions_claude']):,}"
    loads.append(figures.load_average())
    if record:
        binary = args[1].split("=", 1)[1]
        figures.record(
            "model-bill", build="debug" if "/debug/" in binary else "release", loads=loads,
            columns=["toolset", "tools", "tool definitions to the model (all three clients)",
                     "instructions, Claude Code (cut at 2,048 characters)",
                     "instructions, Codex and Gemini CLI (whole)", "tools/list on the wire"],
            rows=rows, values=values)


if __name__ == "__main__":
    main()
