#!/usr/bin/env python3
"""A live layer, measured: how fast an edit reaches a subscriber, what
listeners cost an idle server, and whether rapid edits leave every listener with the last state.

Usage: live.py BINARY [--objects N] [--edits N] [--idle-seconds S] [--rapid N] [--only WHAT]

Builds a throwaway repository (`git init`, `BINARY init`) holding N objects (knowledge files plus
`init`'s rule), then:

- latency: a client subscribed to the rule (legacy `resources/subscribe`), over stdio
  (`BINARY mcp`) and over HTTP (`BINARY serve`, the session's GET stream); each edit rewrites the
  rule's file and the clock runs from the write to the receipt of
  `notifications/resources/updated`. Edits are spaced so that each is its own generation.
  Prints median and p95 per transport.
- idle: `serve` with no listener, then with 10 (legacy GET streams), each for S seconds of
  nothing; prints the server's CPU ticks (utime + stime, /proc/<pid>/stat) over each window.
- rapid: 4 listeners on `serve` (2 legacy GET streams, 2 modern listens) and N edits of the rule
  as fast as the script can write them; then waits for each listener's last `updated`, reads the
  rule, and checks it is the final content and that no queue passed its bound (mcp.projection).

WHAT is one of latency, idle, rapid (default: all). Timing figures are noisy on a shared machine;
compare figures from one run.
"""

import argparse
import http.client
import json
import os
import queue
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

RULE = ".ai/repo/rules/describe-changes-in-commits.md"
RULE_URI = "majordomus://rule/describe-changes-in-commits@1"
MODERN = "2026-07-28"
PATIENCE = 60


def make_repo(binary, objects):
    repo = tempfile.mkdtemp(prefix="majordomus-live-bench-")
    subprocess.run(["git", "init", "-q", repo], check=True)
    subprocess.run([binary, "init"], cwd=repo, check=True, stdout=subprocess.DEVNULL)
    folder = os.path.join(repo, ".ai/repo/knowledge/curated")
    os.makedirs(folder, exist_ok=True)
    for i in range(max(0, objects - 4)):
        with open(os.path.join(folder, f"k{i:06}.md"), "w", encoding="utf-8") as f:
            f.write(f"---\nid: k{i:06}\ntitle: Note {i}\n---\n\nThe body of note {i}.\n")
    with open(os.path.join(repo, RULE), encoding="utf-8") as f:
        rule = f.read()
    return repo, rule


def write_rule(repo, base, n):
    """Rewrites the rule with a distinct body; returns the marker it carries."""
    marker = f"Edit number {n}."
    with open(os.path.join(repo, RULE), "w", encoding="utf-8") as f:
        f.write(base.rstrip("\n") + f"\n\n{marker}\n")
    return marker


def ticks(pid):
    """utime + stime of `pid`, in clock ticks."""
    with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


class Stdio:
    """`BINARY mcp` over pipes; notifications are put on `notes` with their arrival time."""

    def __init__(self, binary, repo):
        self.process = subprocess.Popen(
            [binary, "mcp", "--repo", repo], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
        )
        self.answers = queue.Queue()
        self.notes = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0

    def _read(self):
        for line in self.process.stdout:
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self.answers.put(message)
            else:
                self.notes.put((time.perf_counter(), message))

    def request(self, method, params):
        self.next_id += 1
        self.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + "\n")
        self.process.stdin.flush()
        answer = self.answers.get(timeout=PATIENCE)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=PATIENCE)


class Serve:
    """`BINARY serve --port 0`; requests over http.client, streams over raw sockets."""

    def __init__(self, binary, repo):
        self.process = subprocess.Popen([binary, "serve", "--port", "0", "--repo", repo], stderr=subprocess.PIPE, text=True)
        first = self.process.stderr.readline()
        match = re.search(r" on http://127\.0\.0\.1:(\d+)$", first.strip())
        if not match:
            self.process.kill()
            raise RuntimeError(f"serve did not start: {first!r}")
        self.port = int(match.group(1))
        threading.Thread(target=lambda: self.process.stderr.read(), daemon=True).start()

    def post(self, message, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=PATIENCE)
        all_headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        all_headers.update(headers or {})
        connection.request("POST", "/mcp", json.dumps(message), all_headers)
        response = connection.getresponse()
        body = response.read()
        session = response.getheader("Mcp-Session-Id")
        connection.close()
        return (json.loads(body) if body else None), session

    def session(self):
        _, session = self.post({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        })
        return session

    def call(self, session, method, params):
        answer, _ = self.post({"jsonrpc": "2.0", "id": 2, "method": method, "params": params}, {"Mcp-Session-Id": session})
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def stream(self, request):
        """Opens an event stream with the raw request text; returns a queue of (time, message)."""
        notes = queue.Queue()
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall(request.encode())
        reader = sock.makefile("r", encoding="utf-8", newline="\n")

        def read():
            for line in reader:
                if line.startswith("data: "):
                    notes.put((time.perf_counter(), json.loads(line[6:])))
            notes.put((time.perf_counter(), None))

        threading.Thread(target=read, daemon=True).start()
        return notes, sock

    def get_stream(self, session):
        return self.stream(
            f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
        )

    def listen_stream(self, id, filter):
        body = json.dumps({
            "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {
                "_meta": {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}},
                "notifications": filter,
            },
        })
        return self.stream(
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {MODERN}\r\n"
            f"Mcp-Method: subscriptions/listen\r\nContent-Length: {len(body)}\r\n\r\n{body}"
        )

    def close(self):
        self.process.terminate()
        self.process.wait(timeout=PATIENCE)


def wait_updated(notes, since):
    """The arrival time of the next `updated` for the rule after `since`."""
    deadline = time.perf_counter() + PATIENCE
    while True:
        at, message = notes.get(timeout=max(0.01, deadline - time.perf_counter()))
        if message is None:
            raise RuntimeError("the stream ended")
        if message.get("method") == "notifications/resources/updated" and message["params"]["uri"] == RULE_URI and at >= since:
            return at


def measure(notes, repo, base, edits, label):
    latencies = []
    for n in range(edits):
        # Spaced so each edit is its own generation (the watcher checks at most every 500 ms).
        time.sleep(0.6)
        while not notes.empty():
            notes.get_nowait()
        start = time.perf_counter()
        write_rule(repo, base, n)
        latencies.append((wait_updated(notes, start) - start) * 1000)
    print(
        f"latency {label}: median {statistics.median(latencies):.1f} ms, p95 {percentile(latencies, 95):.1f} ms"
        f" over {edits} edits (min {min(latencies):.1f}, max {max(latencies):.1f})"
    )


def latency(binary, repo, base, edits, objects):
    stdio = Stdio(binary, repo)
    stdio.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
    stdio.request("resources/subscribe", {"uri": RULE_URI})
    measure(stdio.notes, repo, base, edits, f"stdio at {objects} objects")
    stdio.close()
    served = Serve(binary, repo)
    session = served.session()
    served.call(session, "resources/subscribe", {"uri": RULE_URI})
    notes, sock = served.get_stream(session)
    measure(notes, repo, base, edits, f"http at {objects} objects")
    sock.close()
    served.close()


def idle(binary, repo, seconds):
    served = Serve(binary, repo)
    # Let start-up work (the first generation's search postings) finish.
    time.sleep(5)
    before = ticks(served.process.pid)
    time.sleep(seconds)
    alone = ticks(served.process.pid) - before
    socks = []
    for _ in range(10):
        session = served.session()
        served.call(session, "resources/subscribe", {"uri": RULE_URI})
        socks.append(served.get_stream(session)[1])
    time.sleep(1)
    before = ticks(served.process.pid)
    time.sleep(seconds)
    listening = ticks(served.process.pid) - before
    for sock in socks:
        sock.close()
    # Alone once more, after the listeners left: the two lone windows show how much the
    # watcher's own checks vary from one window to the next, which the listeners' figure is
    # read against.
    time.sleep(1)
    before = ticks(served.process.pid)
    time.sleep(seconds)
    after = ticks(served.process.pid) - before
    hz = os.sysconf("SC_CLK_TCK")
    print(
        f"idle over {seconds} s: {alone} ticks with no listener, {listening} ticks with 10 listeners,"
        f" {after} ticks with no listener again ({hz} ticks a second)"
    )
    served.close()


def rapid(binary, repo, base, edits):
    served = Serve(binary, repo)
    streams = []
    for _ in range(2):
        session = served.session()
        served.call(session, "resources/subscribe", {"uri": RULE_URI})
        streams.append(served.get_stream(session))
    for n in range(2):
        streams.append(served.listen_stream(100 + n, {"resourceSubscriptions": [RULE_URI]}))
    time.sleep(1)
    last = None
    start = time.perf_counter()
    for n in range(edits):
        # A generation that read the last edit was built after its write began.
        final_write = time.perf_counter()
        last = write_rule(repo, base, n)
    wrote = time.perf_counter() - start
    # Every listener hears an `updated` from a generation built after the last write began.
    for i, (notes, _) in enumerate(streams):
        wait_updated(notes, final_write)
    observer = served.session()
    text = served.call(observer, "resources/read", {"uri": RULE_URI})["contents"][0]["text"]
    if last not in text:
        raise RuntimeError("the rule read after the last notification is not the last edit")
    projection = served.call(observer, "tools/call", {"name": "majordomus_mcp", "arguments": {}})
    http = next(t for t in projection["structuredContent"]["transports"] if t["name"] == "http")["live"]
    if http["deepest_queue"] > http["queue_bound"]:
        raise RuntimeError(f"a queue passed its bound: {http}")
    print(
        f"rapid: {edits} edits written in {wrote:.2f} s; all 4 listeners got an `updated` after the last write,"
        f" the rule reads as the last edit; deepest queue {http['deepest_queue']} of {http['queue_bound']},"
        f" {http['collapsed']} collapses"
    )
    for _, sock in streams:
        sock.close()
    served.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("binary")
    parser.add_argument("--objects", type=int, default=100)
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--idle-seconds", type=int, default=30)
    parser.add_argument("--rapid", type=int, default=1000)
    parser.add_argument("--only", choices=["latency", "idle", "rapid"])
    args = parser.parse_args()
    binary = os.path.abspath(args.binary)
    repo, base = make_repo(binary, args.objects)
    print(f"repository of {args.objects} objects at {repo}")
    if args.only in (None, "latency"):
        latency(binary, repo, base, args.edits, args.objects)
    if args.only in (None, "idle"):
        idle(binary, repo, args.idle_seconds)
    if args.only in (None, "rapid"):
        rapid(binary, repo, base, args.rapid)
    return 0


if __name__ == "__main__":
    sys.exit(main())
