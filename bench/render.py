#!/usr/bin/env python3
"""Renders the JSON rows of a bench/run.sh run as one Markdown section of bench/RESULTS.md.

    render.py DIR EXPERIMENT...        the section, on stdout, from DIR/meta.txt and DIR/<experiment>.jsonl
    render.py --insert RESULTS SECTION puts the section file at the top of RESULTS, under its title line

One table per experiment: the columns are the rows' keys in the order they first appear (nested objects
as key.subkey). Exits 1 when an experiment has no row or a line is not a JSON object.
"""
import json
import sys


def flatten(obj, prefix=""):
    out = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(flatten(v, prefix + k + "."))
        else:
            out[prefix + k] = v
    return out


def cell(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v).replace("|", "\\|")


def table(rows):
    keys = []
    for r in rows:
        for k in r:
            if k not in keys and k != "bench":
                keys.append(k)
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        lines.append("| " + " | ".join(cell(r.get(k)) for k in keys) + " |")
    return "\n".join(lines)


def render(d, exps):
    meta = open(f"{d}/meta.txt").read().splitlines()
    info = dict(line.split(": ", 1) for line in meta if ": " in line)
    bad = 0
    parts = [f"## `bench/run.sh` at {info.get('started', '?')}, commit {info.get('commit', '?')}", ""]
    parts.append(f"Machine: {info.get('machine', '?')}; load average {info.get('load before', '?')} before, "
                  f"{info.get('load after', '?')} after. p50/p90 are over the repeated runs of each row "
                  "(see each experiment's source for what one run is).")
    parts.append("")
    for e in exps:
        rows = []
        try:
            with open(f"{d}/{e}.jsonl") as f:
                for n, line in enumerate(f, 1):
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        obj = None
                    if not isinstance(obj, dict):
                        print(f"render.py: {e}.jsonl line {n} is not a JSON object", file=sys.stderr)
                        bad = 1
                        continue
                    rows.append(flatten(obj))
        except OSError as x:
            print(f"render.py: {x}", file=sys.stderr)
        if not rows:
            print(f"render.py: experiment {e} reported no row", file=sys.stderr)
            bad = 1
            continue
        parts.append(f"### {e}")
        parts.append("")
        parts.append(f"`{info.get('cmd.' + e, '?')} --json`, load average {info.get('load.' + e, '?')} before it.")
        parts.append("")
        parts.append(table(rows))
        parts.append("")
    print("\n".join(parts))
    return bad


def insert(results, section):
    text = open(results).read()
    new = open(section).read().rstrip("\n") + "\n\n"
    head, sep, rest = text.partition("\n")
    if not head.startswith("# "):
        head, rest = "# Measured results", text
    open(results, "w").write(head + "\n\n" + new + rest.lstrip("\n"))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--insert":
        sys.exit(insert(sys.argv[2], sys.argv[3]))
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(render(sys.argv[1], sys.argv[2:]))
