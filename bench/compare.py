#!/usr/bin/env python3
"""Compares two benchmark runs: how much each ratio moved.

    python3 bench/compare.py A.json B.json [--limit 15]

A and B are RESULTS.json files written by bench/run.py. For every ratio
both runs have, prints A, B and the change (B / A - 1), flagging a change
beyond ±limit percent; then the same for the other figures the rows follow
(figures: idle CPU, time to notice a frozen peer, ...), and any goal whose
verdict differs. Exit status: 0 when every ratio is within the limit, 1
when one is not, 2 on bad input.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def load(path: str) -> dict[str, Any]:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"compare: {path}: {e}")


def values(res: dict[str, Any], kind: str) -> dict[str, tuple[str, float]]:
    """(row key, item key) -> (label, value) for ratios or figures."""
    out = {}
    for row, r in res.get("rows", {}).items():
        for key, item in r.get(kind, {}).items():
            v = item.get("value", item.get("median"))  # "median": figures before 12/2026
            if isinstance(v, (int, float)):
                out[f"{row}: {key}"] = (item.get("label", key), float(v))
    return out


def change(a: float, b: float) -> float | None:
    if a == b:
        return 0.0
    return None if a == 0 else b / a - 1


def describe(res: dict[str, Any], path: str) -> str:
    st = "steady" if res.get("steady", {}).get("held") else "UNSTEADY"
    ld = res.get("load", {})
    quick = ", --quick" if res.get("quick") else ""
    return (f"{path}: {res.get('machine', {}).get('date', '?')}, {st}{quick}, other processes "
            f"{ld.get('others_cores', 0):.2f} cores, load at start "
            f"{'/'.join(f'{x:.2f}' for x in ld.get('loadavg_start', []))}")


def table(a: dict[str, tuple[str, float]], b: dict[str, tuple[str, float]], limit: float
          ) -> tuple[list[str], int]:
    lines, flagged = [], 0
    width = max((len(k) for k in a if k in b), default=10)
    for key in a:
        if key not in b:
            continue
        va, vb = a[key][1], b[key][1]
        c = change(va, vb)
        bad = c is None or abs(c) > limit
        flagged += bad
        cs = "   n/a" if c is None else f"{100 * c:+6.1f}%"
        lines.append(f"{'!!' if bad else '  '} {key:<{width}}  {va:10.3f}  {vb:10.3f}  {cs}")
    missing = sorted(set(a) ^ set(b))
    if missing:
        lines.append(f"   (in one run only: {', '.join(missing)})")
    return lines, flagged


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--limit", type=float, default=15.0, help="percent (default 15)")
    o = ap.parse_args()
    ra, rb = load(o.a), load(o.b)
    limit = o.limit / 100
    print(describe(ra, o.a))
    print(describe(rb, o.b))
    print()
    print(f"Ratios (flagged !! beyond ±{o.limit:g}%):         A           B   change")
    lines, bad = table(values(ra, "ratios"), values(rb, "ratios"), limit)
    print("\n".join(lines))
    print()
    print("Other figures (for information):")
    flines, _ = table(values(ra, "figures"), values(rb, "figures"), limit)
    print("\n".join(flines) or "   none")
    ga = {g["figure"]: g["met"] for g in ra.get("goals", [])}
    gb = {g["figure"]: g["met"] for g in rb.get("goals", [])}
    flips = [f for f in ga if f in gb and ga[f] != gb[f]]
    print()
    if flips:
        print("Goal verdicts that differ: " + "; ".join(f"{f} ({ga[f]} -> {gb[f]})" for f in flips))
    else:
        print("Goal verdicts: the same in both runs.")
    n = len([1 for k in values(ra, "ratios") if k in values(rb, "ratios")])
    print(f"\n{bad} of {n} ratios moved beyond ±{o.limit:g}%.")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
