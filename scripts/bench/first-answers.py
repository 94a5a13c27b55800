#!/usr/bin/env python3
"""The first answer of every read tool, straight after `initialize`, beside the bench kit's rmcp
peer: for each tool, a server started fresh, `initialize` answered, then that one call, timed
from the call to its answer. Servers take turns (one start of each, then the next round), so all
see the same machine; rmcp answers its own three tools (list, get, search).

usage: first-answers.py --repo REPO --layer LAYER --rmcp PEER [--rounds 3] [--after MS]
                        [--tools NAME,...] NAME=BINARY...
  --tools NAME,... times only those tools (majordomus's and rmcp's), where a full run at
  100,000 objects would take too long to repeat.
  --after MS waits that long after `initialize` before the call, as an agent's first turn does.
  REPO is a majordomus repository whose layer holds LAYER's files (see kit.sh's kit_repo);
  PEER is the kit's rmcp server (`peer-rmcp`), given LAYER. Prints, per tool, the median and
  the slowest first answer in ms, and the load average before and after."""
import argparse, json, os, statistics, subprocess, sys, time

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "first-answers", "version": "1"}}}

# Arguments for the read tools that need some; every other read tool is called with none.
ARGUMENTS = {
    "majordomus_get": {"uri": "majordomus://knowledge/doc-05000"},
    "majordomus_search": {"query": "quasar needle"},
    "majordomus_applicable": {"paths": ["src/main.rs"]},
    "majordomus_check": {"paths": ["src/main.rs"]},
    "majordomus_capability": {"id": "objects.get"},
    "layer_get": {"uri": "layer://doc/doc-05000"},
    "layer_search": {"query": "quasar needle"},
}
RMCP_TOOLS = ["layer_list", "layer_get", "layer_search"]


class Server:
    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.call(INITIALIZE)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, message):
        self.send(message)
        line = self.proc.stdout.readline()
        if not line:
            sys.exit("a server closed its output")
        answer = json.loads(line)
        if "error" in answer:
            sys.exit(f"a server refused a call: {line[:300]!r}")
        return answer

    def tool(self, name):
        self.next_id += 1
        started = time.perf_counter()
        answer = self.call({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                            "params": {"name": name, "arguments": ARGUMENTS.get(name, {})}})
        took = time.perf_counter() - started
        if answer.get("result", {}).get("isError"):
            sys.exit(f"{name} answered an error: {json.dumps(answer)[:300]}")
        return took

    def read_tools(self):
        self.next_id += 1
        tools = self.call({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/list"})
        return [t["name"] for t in tools["result"]["tools"]
                if t.get("annotations", {}).get("readOnlyHint")]

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repo", required=True)
    p.add_argument("--layer", required=True)
    p.add_argument("--rmcp", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--after", type=float, default=0, metavar="MS")
    p.add_argument("--tools", default="", metavar="NAME,...")
    p.add_argument("servers", nargs="+", metavar="NAME=BINARY")
    a = p.parse_args()
    servers = {"rmcp": [a.rmcp, a.layer]}
    for spec in a.servers:
        name, binary = spec.split("=", 1)
        servers[name] = [binary, "mcp", "--toolsets", "all", "--repo", a.repo]
    tools = {"rmcp": RMCP_TOOLS}
    for name, argv in servers.items():
        if name != "rmcp":
            s = Server(argv)
            tools[name] = s.read_tools()
            s.close()
    if a.tools:
        wanted = set(a.tools.split(","))
        tools = {n: [t for t in ts if t in wanted] for n, ts in tools.items()}
    load = os.getloadavg()
    print(f"{a.repo}: {a.rounds} rounds, calls {a.after:.0f} ms after initialize, load average before {load[0]:.2f} {load[1]:.2f}", flush=True)
    times = {(n, t): [] for n in servers for t in tools[n]}
    for _ in range(a.rounds):
        for name, argv in servers.items():
            for tool in tools[name]:
                s = Server(argv)
                time.sleep(a.after / 1e3)
                times[(name, tool)].append(s.tool(tool) * 1e3)
                s.close()
    load = os.getloadavg()
    print(f"load average after {load[0]:.2f} {load[1]:.2f}")
    print(f"{'server':12}{'tool':32}{'median ms':>10}{'max ms':>10}")
    for (name, tool), xs in times.items():
        print(f"{name:12}{tool:32}{statistics.median(xs):10.1f}{max(xs):10.1f}")


if __name__ == "__main__":
    main()
