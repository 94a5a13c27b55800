#!/usr/bin/env python3
"""How long a newcomer waits for a build: the README's build figures.

Usage: scripts/bench/build-times.py [--record]

In a fresh clone of this checkout (committed files only) with an empty target directory:
the first `cargo build --release --locked` (every dependency compiled, as `cargo install`
does), the release rebuild after a one-line edit of a registry YAML description, then the same
for the debug profile. Prints each in seconds; `--record` also writes `docs/figures/build.json`.
The machine's load is sampled before and after each build and stated with the figures: a build
on two busy cores takes several times as long as on two idle ones.
"""

import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402

ROOT = figures.ROOT
EDITED = "registry/capabilities/list.yaml"


def timed(cmd, cwd, env, loads):
    loads.append(figures.load_average())
    started = time.monotonic()
    subprocess.run(cmd, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    took = time.monotonic() - started
    loads.append(figures.load_average())
    return took


def edit(clone, n):
    """One line of one description changes, as a person edits a capability."""
    path = os.path.join(clone, EDITED)
    with open(path) as f:
        text = f.read()
    marker = "Lists the registry's capabilities"
    if marker not in text:
        raise SystemExit(f"{EDITED} no longer says {marker!r}: update build-times.py")
    with open(path, "w") as f:
        f.write(text.replace(marker, marker + " " * n, 1) if n else text)


def main():
    loads = []
    with tempfile.TemporaryDirectory(prefix="majordomus-build-") as top:
        clone = os.path.join(top, "majordomus")
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(top, "target"))
        env.pop("CARGO_INCREMENTAL", None)
        first_release = timed(["cargo", "build", "--release", "--locked"], clone, env, loads)
        edit(clone, 1)
        rebuild_release = timed(["cargo", "build", "--release", "--locked"], clone, env, loads)
        first_debug = timed(["cargo", "build", "--locked"], clone, env, loads)
        edit(clone, 2)
        rebuild_debug = timed(["cargo", "build", "--locked"], clone, env, loads)
    minutes = lambda s: f"{s / 60:.1f} minutes"
    seconds = lambda s: f"{s:.0f} s" if s >= 10 else f"{s:.1f} s"
    rows = [
        ["release (`cargo install`)", minutes(first_release), seconds(rebuild_release)],
        ["debug (`cargo build`)", minutes(first_debug), seconds(rebuild_debug)],
    ]
    for row in rows:
        print(" | ".join(row))
    print(f"load {min(loads):.1f}–{max(loads):.1f}")
    if "--record" in sys.argv:
        figures.record(
            "build",
            build="release and debug",
            loads=loads,
            columns=["profile", "first build", "after a one-line YAML edit"],
            rows=rows,
        )


if __name__ == "__main__":
    main()
