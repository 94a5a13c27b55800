"""An MCP handshake through a packaged launcher: `initialize`, `notifications/initialized` and
`tools/list` over stdio, each answer awaited with a deadline. Usage: LABEL REPO COMMAND..."""

import json
import selectors
import subprocess
import sys
import time

label, repo, command = sys.argv[1], sys.argv[2], sys.argv[3:]
started = time.monotonic()
proc = subprocess.Popen(command, cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
selector = selectors.DefaultSelector()
selector.register(proc.stdout, selectors.EVENT_READ)


def send(message):
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def answer(request_id, deadline_seconds=30):
    deadline = time.monotonic() + deadline_seconds
    while time.monotonic() < deadline:
        if not selector.select(timeout=deadline - time.monotonic()):
            break
        line = proc.stdout.readline()
        if not line:
            raise SystemExit(f"packages: {label}: the server closed stdout (exit {proc.wait()})")
        message = json.loads(line)
        if message.get("id") == request_id:
            return message
    raise SystemExit(f"packages: {label}: no answer to request {request_id} within {deadline_seconds} s")


send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "packages-ci", "version": "1"}}})
init = answer(1)
initialized_at = time.monotonic()
assert init["result"]["serverInfo"]["name"] == "majordomus", init
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
tools = answer(2)["result"]["tools"]
assert len(tools) >= 5, f"{label}: only {len(tools)} tools"
proc.stdin.close()
proc.wait(timeout=10)
print(f"packages: {label}: initialize in {(initialized_at - started) * 1000:.0f} ms, "
      f"{len(tools)} tools listed")
