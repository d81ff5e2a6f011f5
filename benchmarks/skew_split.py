"""How ``skew`` splits its budget among the count and the centred sums, by measurement.

Usage::

    python benchmarks/skew_split.py              # 300 releases per cell
    python benchmarks/skew_split.py --draws 100  # quicker

Writes ``benchmarks/results/skew_split.md``. Each candidate weighting of
``count : centred_sum : centred_squares : centred_cubes`` is put in place of the
library's (``MOMENT_WEIGHTS["skew"]``) and released ``--draws`` times per cell with
fresh noise on one data set (seeded), the RMSE against pandas' skewness of the
clamped data; cells: n in {1 000, 10 000}, epsilon in {0.5, 2}, data on [0, 100]
lognormal (right-skewed), normal (symmetric, centred), beta(0.5, 3) (piled at the
lower bound). The table gives each candidate's RMSE over the best candidate's per
cell, and the worst ratio (minimax regret) per candidate.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401
from pandas_dp.stats import moment_weights

CANDIDATES = {
    "1:1:1:1": (1.0, 1.0, 1.0, 1.0),
    "1:2:3:5": (1.0, 2.0, 3.0, 5.0),
    "1:1:2:4": (1.0, 1.0, 2.0, 4.0),
    "1:2:4:8": (1.0, 2.0, 4.0, 8.0),
    "1:3:3:3": (1.0, 3.0, 3.0, 3.0),
    "1:2:2:6": (1.0, 2.0, 2.0, 6.0),
    "1:3:3:4": (1.0, 3.0, 3.0, 4.0),
    "1:3:4:5": (1.0, 3.0, 4.0, 5.0),
    "2:4:4:5": (2.0, 4.0, 4.0, 5.0),
    "2:3:3:3": (2.0, 3.0, 3.0, 3.0),
    "1:4:3:4": (1.0, 4.0, 3.0, 4.0),
}
SUMS = ("count", "centred_sum", "centred_squares", "centred_cubes")


def data(kind: str, n: int, rng: np.random.Generator) -> pd.Series:
    if kind == "lognormal":
        x = rng.lognormal(3.0, 0.6, n)
    elif kind == "normal":
        x = rng.normal(50.0, 15.0, n)
    else:
        x = rng.beta(0.5, 3.0, n) * 100.0
    return pd.Series(x).clip(0.0, 100.0)


def run(draws: int) -> list[dict[str, object]]:
    rows = []
    for n in (1_000, 10_000):
        for eps in (0.5, 2.0):
            for kind in ("lognormal", "normal", "piled"):
                x = data(kind, n, np.random.default_rng(n + int(eps * 10)))
                truth = x.skew()
                row: dict[str, object] = {"n": n, "epsilon": eps, "data": kind, "skew": truth}
                for name, w in CANDIDATES.items():
                    moment_weights.MOMENT_WEIGHTS["skew"] = dict(zip(SUMS, w, strict=True))
                    errs = [
                        x.dp.skew(epsilon=eps, bounds=(0, 100), random_state=seed) - truth
                        for seed in range(draws)
                    ]
                    row[name] = math.sqrt(float(np.mean(np.square(errs))))
                rows.append(row)
                print(row, flush=True)
    return rows


def write(rows: list[dict[str, object]], draws: int, seconds: float) -> str:
    names = list(CANDIDATES)
    lines = [
        "# skew: the budget split (benchmarks/skew_split.py)",
        "",
        f"{draws} releases per cell, fresh noise, one seeded data set per cell; RMSE "
        f"against pandas' skewness, each candidate over the best of the cell. "
        f"{seconds:.0f} s, load {os.getloadavg()[0]:.1f} (shared machine).",
        "",
        "| n | epsilon | data | skew | best RMSE | " + " | ".join(names) + " |",
        "|---|---|---|---|---|" + "---|" * len(names),
    ]
    worst = dict.fromkeys(names, 0.0)
    for r in rows:
        best = min(float(r[k]) for k in names)  # type: ignore[arg-type]
        ratios = {k: float(r[k]) / best for k in names}  # type: ignore[arg-type]
        for k in names:
            worst[k] = max(worst[k], ratios[k])
        lines.append(
            f"| {r['n']} | {r['epsilon']} | {r['data']} | {float(r['skew']):.2f} | "  # type: ignore[arg-type]
            f"{best:.3f} | " + " | ".join(f"{ratios[k]:.2f}" for k in names) + " |"
        )
    lines += ["", "| worst ratio | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    lines.append("| | " + " | ".join(f"{worst[k]:.2f}" for k in names) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=300)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = run(args.draws)
    text = write(rows, args.draws, time.perf_counter() - start)
    out = Path(__file__).parent / "results" / "skew_split.md"
    out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
