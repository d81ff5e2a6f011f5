"""zCDP budgets charge every Gaussian release its rho (issue 30, finding 7).

Gaussian ``proportions`` and Gaussian ``cov(method="direct")`` were charged without a
rho, so ``accounting="zcdp"`` budgets refused them. Here both are admitted and charged
the rho their noise spends, recomputed independently from the sensitivities and
scales their metadata records: ``Delta_2^2 / (2 sigma^2)`` per noised vector, summed.
A loop over every statistic the accessors offer checks that no third Gaussian
release is charged without a rho. All deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import PrivacyBudget

EPS, DLT = 0.1, 1e-8
GAUSS: dict[str, Any] = {"epsilon": EPS, "delta": DLT, "mechanism": "gaussian"}
CATS = ["a", "b", "c", "d"]
BOUNDS = {"x": (0.0, 1.0), "y": (-2.0, 2.0), "z": (0.0, 10.0)}


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 400
    return pd.DataFrame(
        {
            "x": rng.uniform(0.0, 1.0, n),
            "y": rng.uniform(-2.0, 2.0, n),
            "z": rng.uniform(0.0, 10.0, n),
            "c": rng.choice(CATS, n),
            "g": rng.choice(["u", "v"], n),
        }
    )


def _zcdp() -> PrivacyBudget:
    return PrivacyBudget(epsilon=1.0, delta=1e-6, accounting="zcdp")


def _charged(budget: PrivacyBudget) -> float:
    """The rho of the one release charged to ``budget``, checked against its ledger."""
    ledger = budget.ledger
    assert len(ledger) == 1
    rho = float(ledger["rho"].iloc[0])
    assert budget.spent.rho == pytest.approx(rho, rel=1e-12)
    return rho


@pytest.mark.parametrize("method", ["project", "rescale"])
def test_gaussian_proportions_are_charged_their_rho(df: pd.DataFrame, method: str) -> None:
    budget = _zcdp()
    p = df["c"].dp.proportions(categories=CATS, method=method, budget=budget, **GAUSS)
    meta = p.attrs["dp"]
    assert meta.mechanism == "gaussian"
    # one vector of integer counts, one per category; one row (add/remove) moves one
    # count by one: Delta_2 = 1 (the recorded per-bucket sensitivity) and the rho
    # of the vector is Delta_2^2 / (2 sigma^2) with its (common) sigma
    sens = meta.sensitivity.to_numpy(dtype=float)
    scale = meta.scale.to_numpy(dtype=float)
    assert len(scale) == len(CATS) and np.all(scale == scale[0]) and np.all(sens == 1.0)
    expected = 1.0 / (2.0 * scale[0] ** 2)
    rho = _charged(budget)
    assert rho == pytest.approx(expected, rel=1e-9) and rho >= expected
    assert 0.0 < rho < budget.rho_budget


def test_gaussian_hierarchical_proportions_pay_every_level(df: pd.DataFrame) -> None:
    """Substitute neighbours, the hierarchical method: one row moves one count per
    noised level, so Delta_2^2 = levels * (per-bucket sensitivity)^2 * 2 (the old
    and the new row each move one)."""
    budget = _zcdp()
    p = df["c"].dp.proportions(
        categories=CATS,
        method="hierarchical",
        neighbouring="substitute",
        budget=budget,
        **GAUSS,
    )
    meta = p.attrs["dp"]
    levels = int(meta.details["noised levels"])
    assert levels > 1
    sens = meta.sensitivity.to_numpy(dtype=float)
    scale = meta.scale.to_numpy(dtype=float)
    assert np.all(scale == scale[0]) and np.all(sens == sens[0])
    expected = 2.0 * levels * sens[0] ** 2 / (2.0 * scale[0] ** 2)
    rho = _charged(budget)
    assert rho == pytest.approx(expected, rel=1e-9) and rho >= expected


@pytest.mark.parametrize("corr", [False, True])
def test_gaussian_direct_covariance_is_charged_its_rho(df: pd.DataFrame, corr: bool) -> None:
    budget = _zcdp()
    release = df.dp.corr if corr else df.dp.cov
    out = release(
        ["x", "y", "z"],
        bounds=BOUNDS,
        method="direct",
        neighbouring="substitute",
        budget=budget,
        **GAUSS,
    )
    meta = out.attrs["dp"]
    sens = meta.sensitivity.to_numpy(dtype=float)
    scale = meta.scale.to_numpy(dtype=float)
    # two noised vectors: the p variances (the diagonal), then the p (p - 1) / 2
    # covariances (the upper triangle); one row moves every entry by its
    # sensitivity, so each vector spends sum_i Delta_i^2 / (2 sigma_i^2)
    diag = np.diag_indices(3)
    upper = np.triu_indices(3, k=1)
    expected = sum(float(np.sum(sens[ix] ** 2 / (2.0 * scale[ix] ** 2))) for ix in (diag, upper))
    rho = _charged(budget)
    # the charge also pays the grid rounding of real-valued noise (a step 2**-40 of
    # the scale or finer): equal up to that, never below
    assert rho == pytest.approx(expected, rel=1e-9) and rho >= expected
    assert 0.0 < rho < budget.rho_budget


def test_direct_covariance_rho_does_not_depend_on_the_data() -> None:
    """The covariances' noise is calibrated after the variances are released, within
    caps made of them: the rho charged before must be the rho spent, whatever the
    data (a frame of constants and one of extremes give the same charge)."""
    rng = np.random.default_rng(5)
    frames = [
        pd.DataFrame({"x": np.full(300, 0.5), "y": np.zeros(300)}),
        pd.DataFrame({"x": rng.choice([0.0, 1.0], 300), "y": rng.choice([-2.0, 2.0], 300)}),
    ]
    charged, spent = [], []
    for frame in frames:
        budget = _zcdp()
        out = frame.dp.cov(
            bounds={"x": BOUNDS["x"], "y": BOUNDS["y"]},
            method="direct",
            neighbouring="substitute",
            budget=budget,
            **GAUSS,
        )
        meta = out.attrs["dp"]
        sens = meta.sensitivity.to_numpy(dtype=float)
        scale = meta.scale.to_numpy(dtype=float)
        spent.append(float(np.sum(np.triu(sens**2 / (2.0 * scale**2)))))
        charged.append(_charged(budget))
    assert charged[0] == charged[1]
    assert spent[0] == spent[1]


# --------------------------------------------------------------------------- every statistic

Release = Callable[[pd.DataFrame, PrivacyBudget], Any]

_NUM = {"bounds": BOUNDS}
_CAT = {"categories": {"c": CATS}}
_KEYS = {"keys": ["u", "v"]}

RELEASES: dict[str, Release] = {
    # Series
    "series.count": lambda d, b: d["x"].dp.count(budget=b, **GAUSS),
    "series.len": lambda d, b: d["x"].dp.len(budget=b, **GAUSS),
    "series.sum": lambda d, b: d["x"].dp.sum(bounds=(0, 1), budget=b, **GAUSS),
    "series.mean": lambda d, b: d["x"].dp.mean(bounds=(0, 1), budget=b, **GAUSS),
    "series.var": lambda d, b: d["x"].dp.var(bounds=(0, 1), budget=b, **GAUSS),
    "series.std": lambda d, b: d["x"].dp.std(bounds=(0, 1), budget=b, **GAUSS),
    "series.quantile": lambda d, b: d["x"].dp.quantile(0.3, bounds=(0, 1), budget=b, **GAUSS),
    "series.quantile_tree": lambda d, b: d["x"].dp.quantile(
        [0.2, 0.7], bounds=(0, 1), method="tree", budget=b, **GAUSS
    ),
    "series.median": lambda d, b: d["x"].dp.median(bounds=(0, 1), budget=b, **GAUSS),
    "series.describe": lambda d, b: d["x"].dp.describe(bounds=(0, 1), budget=b, **GAUSS),
    "series.agg": lambda d, b: d["x"].dp.agg(["mean", "std"], bounds=(0, 1), budget=b, **GAUSS),
    "series.value_counts": lambda d, b: d["c"].dp.value_counts(categories=CATS, budget=b, **GAUSS),
    "series.proportions": lambda d, b: d["c"].dp.proportions(categories=CATS, budget=b, **GAUSS),
    "series.proportions_liu": lambda d, b: d["c"].dp.proportions(
        categories=CATS, via="proportions", neighbouring="substitute", budget=b, **GAUSS
    ),
    "series.proportions_hierarchical": lambda d, b: d["c"].dp.proportions(
        categories=CATS, method="hierarchical", neighbouring="substitute", budget=b, **GAUSS
    ),
    # DataFrame
    "frame.count": lambda d, b: d.dp.count(budget=b, **GAUSS),
    "frame.len": lambda d, b: d.dp.len(budget=b, **GAUSS),
    "frame.sum": lambda d, b: d.dp.sum(["x", "y"], budget=b, **_NUM, **GAUSS),
    "frame.mean": lambda d, b: d.dp.mean(["x", "y"], budget=b, **_NUM, **GAUSS),
    "frame.var": lambda d, b: d.dp.var(["x", "y"], budget=b, **_NUM, **GAUSS),
    "frame.std": lambda d, b: d.dp.std(["x", "y"], budget=b, **_NUM, **GAUSS),
    "frame.agg": lambda d, b: d.dp.agg({"x": ["mean"], "y": ["sum"]}, budget=b, **_NUM, **GAUSS),
    "frame.describe": lambda d, b: d.dp.describe(["x", "c"], budget=b, **_NUM, **_CAT, **GAUSS),
    "frame.value_counts": lambda d, b: d.dp.value_counts("c", budget=b, **_CAT, **GAUSS),
    "frame.proportions": lambda d, b: d.dp.proportions("c", budget=b, **_CAT, **GAUSS),
    "frame.counts": lambda d, b: d.dp.counts(
        {"high": "x > 0.5", "low": "y < 0"}, budget=b, **GAUSS
    ),
    "frame.cov": lambda d, b: d.dp.cov(["x", "y"], budget=b, **_NUM, **GAUSS),
    "frame.corr": lambda d, b: d.dp.corr(["x", "y"], budget=b, **_NUM, **GAUSS),
    "frame.cov_direct": lambda d, b: d.dp.cov(
        ["x", "y"], method="direct", neighbouring="substitute", budget=b, **_NUM, **GAUSS
    ),
    "frame.quantile": lambda d, b: d.dp.quantile(["x", "y"], 0.5, budget=b, **_NUM, **GAUSS),
    "frame.median": lambda d, b: d.dp.median(["x", "y"], budget=b, **_NUM, **GAUSS),
    # group-by, public keys
    "groupby.len": lambda d, b: d.dp.groupby("g", **_KEYS).len(budget=b, **GAUSS),
    "groupby.count": lambda d, b: d.dp.groupby("g", **_KEYS).count(budget=b, **GAUSS),
    "groupby.sum": lambda d, b: d.dp.groupby("g", **_KEYS).sum("x", budget=b, **_NUM, **GAUSS),
    "groupby.mean": lambda d, b: d.dp.groupby("g", **_KEYS).mean("x", budget=b, **_NUM, **GAUSS),
    "groupby.var": lambda d, b: d.dp.groupby("g", **_KEYS).var("x", budget=b, **_NUM, **GAUSS),
    "groupby.std": lambda d, b: d.dp.groupby("g", **_KEYS).std("x", budget=b, **_NUM, **GAUSS),
    "groupby.agg": lambda d, b: d.dp.groupby("g", **_KEYS).agg(
        {"x": ["count", "mean"]}, budget=b, **_NUM, **GAUSS
    ),
    "groupby.describe": lambda d, b: d.dp.groupby("g", **_KEYS).describe(
        "x", budget=b, **_NUM, **GAUSS
    ),
    "groupby.value_counts": lambda d, b: d.dp.groupby("g", **_KEYS).value_counts(
        "c", budget=b, **_CAT, **GAUSS
    ),
    "groupby.proportions": lambda d, b: d.dp.groupby("g", **_KEYS).proportions(
        "c", budget=b, **_CAT, **GAUSS
    ),
    "groupby.quantile": lambda d, b: d.dp.groupby("g", **_KEYS).quantile(
        "x", 0.5, budget=b, **_NUM, **GAUSS
    ),
    "groupby.median": lambda d, b: d.dp.groupby("g", **_KEYS).median(
        "x", budget=b, **_NUM, **GAUSS
    ),
}


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_every_gaussian_release_is_charged_a_rho(df: pd.DataFrame, name: str) -> None:
    budget = _zcdp()
    RELEASES[name](df, budget)
    rho = _charged(budget)
    assert math.isfinite(rho) and 0.0 < rho <= budget.rho_budget
