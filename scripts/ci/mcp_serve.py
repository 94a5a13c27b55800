"""`majordomus serve` for the CI's Python clients: the one way they start the HTTP server and
learn its `/mcp` address (the first stderr line names it)."""

import re
import subprocess


class Serve:
    """`BINARY serve --port 0 --repo REPO` for the length of a `with`; yields the `/mcp` URL."""

    def __init__(self, binary, repo, stop_seconds=20, extra=()):
        self.command = [binary, "serve", "--port", "0", "--repo", repo, *extra]
        self.stop_seconds = stop_seconds

    def __enter__(self):
        self.process = subprocess.Popen(self.command, stderr=subprocess.PIPE, text=True)
        first = self.process.stderr.readline()
        match = re.search(r" on (http://127\.0\.0\.1:\d+)$", first.strip())
        if not match:
            self.process.kill()
            raise AssertionError(f"serve did not start: {first!r}")
        return match.group(1) + "/mcp"

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=self.stop_seconds)
