"""Choose the quantile grid's defaults: bins and branching factor (stats.quantiles.releases).

For each data set (uniform, normal, lognormal, on the declared bounds [0, 100]),
n and epsilon, the exact tree is computed once and noised ``REPS`` times with
Laplace noise of the tree's scale (``levels / epsilon``; the release uses the
discrete Laplace of the same scale), then made consistent and read off exactly
as the release does. Reported: RMSE of the median and of the quartiles against
``np.quantile`` of the data, per (bins, branching). Run:
``python benchmarks/quantile_grid.py``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from pandas_dp import engines
from pandas_dp.stats.quantiles.tree import Tree, consistent_leaves, read_quantiles, tree_counts

REPS = 60
QS = (0.25, 0.5, 0.75)


def data(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "uniform":
        return rng.uniform(0, 100, n)
    if kind == "normal":
        return np.clip(rng.normal(50, 10, n), 0, 100)
    return np.clip(rng.lognormal(2.0, 1.0, n), 0, 100)


def rmse(x: np.ndarray, bins: int, b: int, eps: float, rng: np.random.Generator) -> np.ndarray:
    tree = Tree(bins, b)
    leaves = engines.grid_counts(pd.Series(x), 0.0, 100.0, bins)
    exact = tree_counts(leaves, tree).astype(float)[0]
    truth = np.quantile(x, QS)
    err = []
    for _ in range(REPS):
        noisy = exact + rng.laplace(0.0, tree.levels / eps, exact.shape)
        lv, root = consistent_leaves(noisy, tree)
        err.append(read_quantiles(lv[0], float(root[0]), QS, 0.0, 100.0) - truth)
    return np.sqrt(np.mean(np.square(err), axis=0))


def main() -> None:
    rng = np.random.default_rng(1)
    rows = []
    for kind, n, eps in itertools.product(
        ("uniform", "normal", "lognormal"), (1_000, 100_000), (0.1, 1.0, 10.0)
    ):
        x = data(kind, n, rng)
        for bins, b in itertools.product((256, 1024, 4096), (4, 8, 16, 32)):
            r = rmse(x, bins, b, eps, rng)
            rows.append((kind, n, eps, bins, b, r[1], r.mean()))
    df = pd.DataFrame(rows, columns=["data", "n", "eps", "bins", "b", "median", "quartiles"])
    # relative to the best configuration of each setting, then averaged
    rel = df.groupby(["data", "n", "eps"])["quartiles"].transform("min")
    df["ratio"] = df["quartiles"] / rel
    print(df.pivot_table(index=["bins", "b"], values="ratio", aggfunc=["mean", "max"]).round(3))
    print(
        df[df.b == 16]
        .pivot_table(index=["data", "n", "eps"], columns="bins", values="median")
        .round(4)
    )


if __name__ == "__main__":
    main()
