"""Quantiles of values that repeat: pandas-dp, diffprivlib and OpenDP side by side.

Usage::

    python benchmarks/quantile_ties.py               # 100 releases per cell
    python benchmarks/quantile_ties.py --reps 30     # a quick look

Writes ``benchmarks/results/quantile_ties.md``. Real columns often pile their
values on a few points: integer ages, Likert answers, zero-inflated amounts. The
data here (on the bounds (0, 100), n = 1000 and 100 000, epsilon 1 and 0.1):

* ``ages``: integers 18 .. 90, uniform;
* ``likert``: the points 20, 40, 60, 80, 100 with probabilities 10, 20, 40, 20, 10 %;
* ``zero-inflated``: 60 % zeros, the rest lognormal(2, 1) (clipped);
* ``constant``: every value 33.3.

The contenders and the RMSE are those of ``benchmarks/quantiles.py`` (its release
functions are imported): the median, and the three quartiles pooled, at equal
epsilon, against the data's exact quantiles (pandas' linear interpolation, which on
piled data is the pile's value). OpenDP scores the 131 073 edges of pandas-dp's grid,
on which 33.3 and most integers do not lie.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quantiles as qb  # benchmarks/quantiles.py: contenders, RMSE
import run as base  # benchmarks/run.py: machine table, peers

SIZES = (1_000, 100_000)
EPSILONS = (1.0, 0.1)
KINDS = ("ages", "likert", "zero-inflated", "constant")


def draw(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` values of one of :data:`KINDS` (see the module)."""
    if kind == "ages":
        return rng.integers(18, 91, n).astype(float)
    if kind == "likert":
        return rng.choice([20.0, 40.0, 60.0, 80.0, 100.0], n, p=[0.1, 0.2, 0.4, 0.2, 0.1])
    if kind == "zero-inflated":
        rest = np.clip(rng.lognormal(2.0, 1.0, n), 0.0, 100.0)
        return np.where(rng.random(n) < 0.6, 0.0, rest)
    return np.full(n, 33.3)


def bench(reps: int) -> list[dict[str, Any]]:
    tools, dp = qb.peers()
    rng = np.random.default_rng(11)
    data = [(kind, n, draw(kind, n, rng)) for kind in KINDS for n in SIZES]
    cells = []
    for (kind, n, x), eps in itertools.product(data, EPSILONS):
        start = time.perf_counter()
        cell: dict[str, Any] = {"data": kind, "n": n, "epsilon": eps}
        cell.update(qb.rmse_cell(partial(np.asarray, x), eps, reps, tools, dp))  # one draw
        print(
            f"  {kind:13s} n={n:<6d} eps={eps:<4} ({time.perf_counter() - start:.0f} s) "
            + "  ".join(
                f"{k}: {cell[k]['median'][0]:.3g}/{cell[k]['quartiles'][0]:.3g}"
                for k in qb.CONTENDERS
                if k in cell and "error" not in cell[k]
            ),
            file=sys.stderr,
            flush=True,
        )
        cells.append(cell)
    return cells


def _cell(c: dict[str, Any], k: str, stat: str) -> str:
    if k not in c:
        return "n/a"
    if "error" in c[k]:
        return f"fails ({c[k]['error'].split(':')[0]})"
    v = c[k][stat]
    return "0" if v[0] == 0 else f"{v[0]:.3g} ± {v[1]:.2g}"


def report(cells: list[dict[str, Any]], reps: int, seconds: float) -> str:
    lines = [
        "# Quantiles of values that repeat: pandas-dp, diffprivlib, OpenDP\n",
        "pandas-dp as called by default (5 % of epsilon on the interval's counts) and with "
        "`interval=False` (the whole epsilon selects).\n",
        f"`python benchmarks/quantile_ties.py` -- {seconds:.0f} s, {reps} releases per cell; "
        "data on (0, 100), drawn once per cell (see the script).\n",
        "| machine | |\n|:--|--:|",
        *(f"| {k} | {v} |" for k, v in base.machine_info().items()),
    ]
    for stat in ("median", "quartiles"):
        lines.append(f"\nRMSE of the {stat} (± Monte-Carlo SE)\n")
        lines.append("| data | n | ε | " + " | ".join(qb.CONTENDERS) + " | lowest |")
        lines.append("|:--|--:|--:|" + "--:|" * len(qb.CONTENDERS) + ":--|")
        for c in cells:
            present = [k for k in qb.CONTENDERS if k in c and "error" not in c[k]]
            best = min(present, key=lambda k: c[k][stat][0])
            row = [_cell(c, k, stat) for k in qb.CONTENDERS]
            lines.append(
                f"| {c['data']} | {c['n']:,} | {c['epsilon']:g} | "
                + " | ".join(row)
                + f" | {best} |"
            )
    errors = {
        f"{k}: {c[k]['error']}" for c in cells for k in qb.CONTENDERS if "error" in c.get(k, {})
    }
    if errors:
        lines.append("\nFailures: " + "; ".join(sorted(errors)) + ".")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=100, help="releases per cell (100)")
    ap.add_argument("--markdown", type=Path, default=base.RESULTS / "quantile_ties.md")
    args = ap.parse_args()
    start = time.perf_counter()
    cells = bench(args.reps)
    text = report(cells, args.reps, time.perf_counter() - start)
    args.markdown.write_text(text)
    args.markdown.with_suffix(".json").write_text(json.dumps(cells, indent=1, default=str))
    print(text)
    print(f"wrote {args.markdown}", file=sys.stderr)


if __name__ == "__main__":
    main()
