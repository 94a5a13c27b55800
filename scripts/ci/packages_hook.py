"""Two agents whose servers `npx` started, in one checkout: the Claude Code hook run by the
holder's client lets its edit happen, the one run by the other agent's client denies it. The
stdio server's parent is then npm's launcher chain, not the client, so this is what proves the
hook finds its agent above the launchers. Usage: NPM_DIR REPO MAJORDOMUS."""

import json
import os
import subprocess
import sys

npm_dir, repo, binary = sys.argv[1], sys.argv[2], sys.argv[3]
HOOK_INPUT = json.dumps({
    "session_id": "packages-ci", "cwd": repo, "hook_event_name": "PreToolUse", "tool_name": "Write",
    "tool_input": {"file_path": os.path.join(repo, "src", "a.rs"), "content": "y\n"}})


def hook():
    done = subprocess.run([binary, "peers", "check", "--hook", "claude"], cwd=repo,
                          input=HOOK_INPUT, capture_output=True, text=True, timeout=30)
    return done.stdout


class Agent:
    """This process as a client whose server npx starts (from the npm install's directory)."""

    def __init__(self, name):
        self.proc = subprocess.Popen(["npx", "--no-install", "majordomus", "mcp", "--repo", repo],
                                     cwd=npm_dir, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.rpc(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": name, "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def rpc(self, request_id, method, params):
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise SystemExit(f"packages: the server under npx closed stdout (exit {self.proc.wait()})")
            message = json.loads(line)
            if message.get("id") == request_id:
                return message

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


if __name__ == "__main__" and len(sys.argv) == 4:
    holder = Agent("holder")
    answer = holder.rpc(2, "tools/call", {"name": "majordomus_claim", "arguments": {"globs": ["src/**"]}})
    assert '\\"granted\\":true' in json.dumps(answer), answer
    own = hook()
    assert "deny" not in own, f"the holder's own hook denied its edit: {own}"
    # The other agent's client runs under this one, with a server of its own: its hook acts for
    # the nearest client above it, which is the other agent.
    other = subprocess.run([sys.executable, __file__, npm_dir, repo, binary, "other"],
                           capture_output=True, text=True, timeout=120)
    holder.close()
    assert other.returncode == 0, other.stdout + other.stderr
    print("packages: under npx, the holder's hook allows its edit and the other agent's denies it")
elif __name__ == "__main__":
    agent = Agent("other")
    decision = hook()
    agent.close()
    if '"permissionDecision":"deny"' not in decision:
        raise SystemExit(f"packages: the other agent's hook did not deny the held file: {decision!r}")
