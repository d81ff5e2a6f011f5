"""describe's shares of a numeric answer scale vs a standalone ``proportions`` (issue 33).

A survey-shaped frame: a Likert answer ``q`` declared ``isin([1, 2, 3, 4, 5])``
(skewed towards agreement), ``age`` on [18, 90], ``income`` log-normal on
[0, 250 000] and a categorical ``region``. For each seeded run, ``describe`` with
``shares="auto"`` (``q`` gets shares) and with ``shares=False``; the standalone
``proportions`` of ``q`` at the epsilon describe's shares spent (``budget_split``
``"q: category_counts"``). Reported: RMSE of the five shares (describe vs
``proportions``, and their ratio), and the mean's absolute error of ``q`` and of
``age`` with and without ``q``'s shares (what the shares cost the other rows).

Usage: ``nice -n 10 python benchmarks/describe_shares.py [--runs 300]``; writes
``benchmarks/results/describe_shares.md``.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa

import pandas_dp  # noqa: F401  (registers .dp)

VALUES = [1, 2, 3, 4, 5]
SCHEMA = pa.DataFrameSchema(
    {
        "q": pa.Column(int, pa.Check.isin(VALUES)),
        "age": pa.Column(float, pa.Check.in_range(18, 90)),
        "income": pa.Column(float, pa.Check.in_range(0, 250_000)),
        "region": pa.Column(str, pa.Check.isin(["N", "S", "E", "W"])),
    }
)
OUT = Path(__file__).parent / "results" / "describe_shares.md"


def frame(n: int, seed: int) -> pd.DataFrame:
    """The survey-shaped frame of ``n`` rows."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "q": rng.choice(VALUES, n, p=[0.05, 0.1, 0.2, 0.35, 0.3]),
            "age": np.clip(rng.normal(45, 15, n), 18, 90),
            "income": np.clip(rng.lognormal(10.5, 0.8, n), 0, 250_000),
            "region": rng.choice(["N", "S", "E", "W"], n),
        }
    )


def one_setting(n: int, epsilon: float, runs: int) -> dict[str, Any]:
    """The errors over ``runs`` seeded releases at one ``(n, epsilon)``."""
    df = frame(n, 11)
    truth = df["q"].value_counts(normalize=True).reindex(VALUES).to_numpy()
    acc: dict[str, list[float]] = {k: [] for k in ("d", "p", "q_on", "q_off", "a_on", "a_off")}
    share_eps = 0.0
    rows = [f"share {v}" for v in VALUES]
    for seed in range(runs):
        on = df.dp.describe(epsilon=epsilon, schema=SCHEMA, random_state=seed)
        off = df.dp.describe(epsilon=epsilon, schema=SCHEMA, random_state=seed, shares=False)
        share_eps = on.attrs["dp"].details["budget_split"]["q: category_counts"]
        p = df.dp.proportions(
            "q", epsilon=share_eps, categories=VALUES, random_state=10_000 + seed
        ).reindex(VALUES)
        acc["d"].append(float(np.mean((on.loc[rows, "q"].to_numpy() - truth) ** 2)))
        acc["p"].append(float(np.mean((p.to_numpy() - truth) ** 2)))
        acc["q_on"].append(abs(on.loc["mean", "q"] - df["q"].mean()))
        acc["q_off"].append(abs(off.loc["mean", "q"] - df["q"].mean()))
        acc["a_on"].append(abs(on.loc["mean", "age"] - df["age"].mean()))
        acc["a_off"].append(abs(off.loc["mean", "age"] - df["age"].mean()))
    rmse_d, rmse_p = np.sqrt(np.mean(acc["d"])), np.sqrt(np.mean(acc["p"]))
    return {
        "n": n,
        "epsilon": epsilon,
        "share epsilon": share_eps,
        "describe shares RMSE": rmse_d,
        "proportions RMSE": rmse_p,
        "ratio": rmse_d / rmse_p,
        "q mean MAE (shares on)": float(np.mean(acc["q_on"])),
        "q mean MAE (off)": float(np.mean(acc["q_off"])),
        "age mean MAE (shares on)": float(np.mean(acc["a_on"])),
        "age mean MAE (off)": float(np.mean(acc["a_off"])),
    }


def _markdown(table: pd.DataFrame) -> str:
    """A markdown table, numbers to 4 significant digits."""
    lines = ["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
    for row in table.itertuples(index=False):
        lines.append("| " + " | ".join(f"{v:.4g}" for v in row) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    """Run the settings and write the results table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    start, load = time.time(), os.getloadavg()[0]
    table = pd.DataFrame(
        [one_setting(n, eps, args.runs) for n in (1000, 5000) for eps in (0.3, 1.0)]
    )
    took = time.time() - start
    text = (
        "# describe's shares of a numeric answer scale (issue 33)\n\n"
        "`python benchmarks/describe_shares.py --runs "
        f"{args.runs}`: {args.runs} seeded releases per setting, in {took:.0f} s, "
        f"load average {load:.1f} at the start (2 shared cores).\n\n"
        "Frame: a Likert `q` declared `isin([1, 2, 3, 4, 5])`, `age`, log-normal "
        "`income`, a categorical `region` (4 categories). `describe` gives `q` its "
        'numeric rows and its shares (`shares="auto"`): `q`\'s shares are one histogram '
        "weighing a categorical column's, so `q` takes two of five column parts of "
        "epsilon (its numeric rows one, its shares one). `proportions` of `q` runs "
        "standalone at the epsilon the shares spent (`share epsilon`). The mean's "
        'absolute errors compare `shares="auto"` with `shares=False` (four parts: every '
        "other row gets 5/4 of its budget back).\n\n" + _markdown(table)
    )
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
