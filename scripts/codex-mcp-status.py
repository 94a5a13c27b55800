#!/usr/bin/env python3
"""Whether Codex starts a project's MCP servers, as a session started in DIR would.

`codex mcp list` only reads the configuration. This asks `codex app-server` to start a thread
in DIR (no model is called) and prints each server's start-up status as Codex reports it
(`mcpServer/startupStatus/updated`): `ready`, or `failed` with Codex's error. Exits 0 when every
server that reported is ready, 1 when one failed or none reported within the deadline.

    scripts/codex-mcp-status.py DIR [CODEX]      (CODEX defaults to `codex` on PATH)
"""
import json
import os
import select
import subprocess
import sys
import time

DEADLINE_SECONDS = 90


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    directory = os.path.abspath(sys.argv[1])
    codex = sys.argv[2] if len(sys.argv) > 2 else "codex"
    server = subprocess.Popen(
        [codex, "app-server"],
        cwd=directory,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )

    def send(message: dict) -> None:
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()

    send({"id": 1, "method": "initialize",
          "params": {"clientInfo": {"name": "majordomus-check", "version": "1"}}})
    status: dict = {}
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([server.stdout], [], [], 1)
            if not ready:
                continue
            line = server.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == 1:
                send({"method": "initialized"})
                send({"id": 2, "method": "thread/start", "params": {"cwd": directory}})
            elif message.get("id") == 2 and "error" in message:
                print(f"thread/start failed: {message['error']}", file=sys.stderr)
                return 1
            elif message.get("method") == "mcpServer/startupStatus/updated":
                params = message["params"]
                status[params["name"]] = params
                if params["status"] in ("ready", "failed"):
                    print(f"{params['name']}: {params['status']}"
                          + (f": {params['error']}" if params.get("error") else ""))
                if status and all(s["status"] in ("ready", "failed") for s in status.values()):
                    break
    finally:
        server.kill()
    if not status:
        print(f"no MCP server reported within {DEADLINE_SECONDS} s (is the project trusted?)")
        return 1
    return 0 if all(s["status"] == "ready" for s in status.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
