"""What the board benchmarks share: a `majordomus mcp` process driven over its stdio, and a
throwaway git repository with a layer. Imported by the scripts beside it."""
import json, subprocess, tempfile


class Session:
    """One `majordomus mcp` process, initialized as client NAME; `flags` are added to `mcp`."""

    def __init__(self, binary, repo, name, env=None, flags=()):
        self.proc = subprocess.Popen([binary, "mcp", "--repo", repo, *flags], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": name, "version": "1"}})

    def request(self, method, params):
        self.n += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        while True:  # notifications on the way are read past
            frame = json.loads(self.proc.stdout.readline())
            if frame.get("id") == self.n:
                return frame

    def tool(self, name, arguments):
        return self.request("tools/call", {"name": name, "arguments": arguments})["result"]["structuredContent"]

    def peers(self):
        return self.tool("majordomus_peers", {})

    def ticks(self):
        """CPU ticks (utime + stime) the process has used."""
        stat = open(f"/proc/{self.proc.pid}/stat").read()
        fields = stat[stat.rfind(")") + 2:].split()
        return int(fields[11]) + int(fields[12])

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait()


def throwaway_repo(binary, prefix):
    """A new git repository under /tmp with `majordomus init`'s layer committed."""
    d = tempfile.mkdtemp(prefix=prefix)
    subprocess.run(["git", "init", "-q", d], check=True)
    subprocess.run([binary, "init", "--repo", d], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["git", "-C", d, "add", "-A"], check=True)
    subprocess.run(["git", "-C", d, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "i"],
                   check=True)
    return d
