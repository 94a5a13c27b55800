"""One MCP session over a child process's pipes, for the stdio benches: a request, its answer
found by id (notifications skipped), timed or not, decoded or not. Used by applicable.py,
applicable-turns.py and skills.py; no dependencies beyond Python 3.9."""
import json
import subprocess
import time


class Session:
    def __init__(self, command, env=None):
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        self.next_id = 0

    def _send(self, method, params):
        self.next_id += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        self.process.stdin.write(line.encode() + b"\n")
        self.process.stdin.flush()

    def _line(self):
        answer = self.process.stdout.readline()
        if not answer:
            raise SystemExit("the server closed its stdout")
        return answer

    def call(self, method, params):
        """The answer's result and the length of its line; an error answer ends the bench."""
        self._send(method, params)
        while True:
            answer = self._line()
            message = json.loads(answer)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"{method}: {message['error']}")
                return message["result"], len(answer)

    def round_trip(self, method, params):
        """One request and its answer's line, unparsed: what the server costs, not the client's
        JSON decoder. Returns the line's length."""
        self._send(method, params)
        tag = f'"id":{self.next_id},'.encode()
        while True:
            answer = self._line()
            if tag in answer[:64]:
                return len(answer)

    def timed(self, method, params):
        """Milliseconds of `call`, with its result and size."""
        started = time.perf_counter()
        result, size = self.call(method, params)
        return (time.perf_counter() - started) * 1e3, result, size

    def initialize(self):
        return self.timed(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
        )

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)
