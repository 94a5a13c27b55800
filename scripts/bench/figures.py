"""The record a benchmark leaves for the README: `docs/figures/NAME.json`.

A script that measures a figure the README states calls `record(...)` with what it measured, as
the text the README shows; `UPDATE_SNAPSHOTS=1 cargo test --test integration readme_figures`
then writes the README's `<!-- figure:NAME -->` blocks from the records, and `cargo test` fails
whenever the README says anything else. A record says how it was measured: the command, the
date, the machine and its load, so a reader can rerun it and compare.
"""

import json
import os
import platform
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_average():
    """The one-minute load average, to say how busy the machine was."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def conditions(build, loads):
    """`release build; 2 cores, load 0.4–1.2` from the build measured and the loads sampled."""
    low, high = min(loads), max(loads)
    load = f"{low:.1f}" if round(low, 1) == round(high, 1) else f"{low:.1f}–{high:.1f}"
    return f"{build} build; {os.cpu_count()} cores ({platform.machine()}), load {load}"


def record(name, *, build, loads, values=None, columns=None, rows=None, command=None):
    """Writes `docs/figures/NAME.json`: `values` are figures the README's prose names
    (`<!-- figure:NAME.KEY -->`), `columns` and `rows` a table (`<!-- figure:NAME -->`).
    Every cell and value is text, written as the README shows it."""
    if not values and not rows:
        raise ValueError("a record needs values or rows")
    script = os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)
    argv = [script] + [os.path.relpath(a, ROOT) if os.path.isabs(a) and a.startswith(ROOT) else a for a in sys.argv[1:]]
    doc = {
        "script": script,
        "command": command or " ".join(argv),
        "measured": time.strftime("%Y-%m-%d", time.gmtime()),
        "conditions": conditions(build, loads),
    }
    if values:
        doc["values"] = {k: str(v) for k, v in values.items()}
    if rows:
        if not columns or any(len(r) != len(columns) for r in rows):
            raise ValueError("every row needs one cell per column")
        doc["table"] = {"columns": list(columns), "rows": [[str(c) for c in r] for r in rows]}
    path = os.path.join(ROOT, "docs", "figures", f"{name}.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, path)
    print(f"recorded {os.path.relpath(path, ROOT)}", file=sys.stderr)
    return path
