#!/usr/bin/env python3
"""What the link costs a start (issue 19, adr-0033): CPU time (task-clock) and page faults per
start, from `perf stat`, of several builds of majordomus taking turns, round by round, so each
sees the same drift of a shared machine; and the same for a trivial Rust program (reads a line,
answers it) linked dynamically and statically, the floor a start cannot go under. Each start is
`sh -c 'echo <initialize> | BIN mcp'` (the shell's cost is the same for every line), and
`BIN --version` (the loader and the argument parser, no layer).
usage: link.py ROUNDS REPS BIN...    (run it in the layer's repository; needs perf and rustc)
e.g.   MAJORDOMUS_LINK=dynamic cargo build --release && cp target/release/majordomus /tmp/dynamic
       cargo build --release && cp target/release/majordomus /tmp/static
       cd /tmp/majordomus-bench/repo-100 && python3 $OLDPWD/scripts/bench/link.py 10 30 /tmp/static /tmp/dynamic
Prints, per command, the median over rounds of the per-start mean, the ratio of each binary to
the last one named, and the load before and after."""
import os, shutil, statistics, subprocess, sys, tempfile

rounds, reps, binaries = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
initialize = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
              '"2025-11-25","capabilities":{},"clientInfo":{"name":"link","version":"1"}}}')

floor_dir = tempfile.mkdtemp(prefix="majordomus-link-floor-")
floor_src = os.path.join(floor_dir, "floor.rs")
with open(floor_src, "w") as f:
    f.write("use std::io::BufRead;\nfn main() {\n    let mut line = String::new();\n"
            "    std::io::stdin().lock().read_line(&mut line).unwrap();\n"
            "    println!(\"{}\", line.len());\n}\n")
floors = []
for name, flags in [("dynamic", []), ("static", ["-C", "target-feature=+crt-static"])]:
    out = os.path.join(floor_dir, f"floor-{name}")
    built = subprocess.run(["rustc", "-O", "-C", "relocation-model=static", *flags, floor_src,
                            "-o", out], capture_output=True)
    if built.returncode == 0:
        floors.append(out)

def elf_kind(path):
    with open(path, "rb") as f:
        data = f.read(1 << 16)
    phoff = int.from_bytes(data[0x20:0x28], "little")
    size, count = (int.from_bytes(data[a:a + 2], "little") for a in (0x36, 0x38))
    types = [int.from_bytes(data[phoff + i * size:phoff + i * size + 4], "little") for i in range(count)]
    return "dynamic" if 3 in types else "static"

commands = []
for b in binaries:
    commands.append((f"{b} mcp", f"echo '{initialize}' | {b} mcp >/dev/null"))
    commands.append((f"{b} --version", f"{b} --version >/dev/null"))
for b in floors:
    commands.append((f"{b} (trivial)", f"echo x | {b} >/dev/null"))

def perf(shell):
    out = subprocess.run(["perf", "stat", "-x,", "-r", str(reps), "-e", "task-clock,page-faults",
                          "sh", "-c", shell], capture_output=True, text=True, check=True).stderr
    values = {}
    for line in out.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2] in ("task-clock", "page-faults"):
            values[fields[2]] = float(fields[0])
    return values

print(f"load before: {os.getloadavg()[0]:.2f}; {rounds} rounds x {reps} starts each")
for b in binaries + floors:
    print(f"  {os.path.getsize(b) / 1e6:6.2f} MB  {elf_kind(b):7}  {b}")
samples = {label: {"task-clock": [], "page-faults": []} for label, _ in commands}
for _ in range(rounds):
    for label, shell in commands:
        for event, value in perf(shell).items():
            samples[label][event].append(value)
median = {label: {e: statistics.median(v) for e, v in s.items()} for label, s in samples.items()}
for label, _ in commands:
    m = median[label]
    print(f"{m['task-clock']:8.3f} ms CPU  {m['page-faults']:6.0f} faults  per start  {label}")
if len(binaries) > 1:
    last = binaries[-1]
    for b in binaries[:-1]:
        for what in ("mcp", "--version"):
            ours, theirs = median[f"{b} {what}"], median[f"{last} {what}"]
            print(f"   {what}: {b} / {last}: CPU {ours['task-clock'] / theirs['task-clock']:.3f}x, "
                  f"{ours['page-faults'] - theirs['page-faults']:+.0f} faults")
if len(floors) == 2:
    d, s = (median[f"{b} (trivial)"] for b in floors)
    print(f"   trivial program static / dynamic: CPU {s['task-clock'] / d['task-clock']:.3f}x, "
          f"{s['page-faults'] - d['page-faults']:+.0f} faults")
print(f"load after: {os.getloadavg()[0]:.2f}")
shutil.rmtree(floor_dir)
