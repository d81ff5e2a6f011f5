"""``bounds_epsilon_share=``: the share of epsilon ``bounds="auto"`` spends (issue 33).

Every method that takes ``bounds="auto"`` takes it, default the measured
``DEFAULT_SHARE``; it is checked before anything is spent (also with declared
bounds, where it is not used), spent as asked, and recorded in the metadata.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp import PrivacyBudget
from pandas_dp.stats.auto_bands import DEFAULT_SHARE

RNG = np.random.default_rng(2)
DF = pd.DataFrame({"x": RNG.normal(50, 10, 2000), "g": RNG.choice(["a", "b"], 2000)})
KEYS = {"keys": ["a", "b"]}

CALLS: dict[str, Callable[..., Any]] = {
    "frame.mean": lambda **k: DF.dp.mean("x", **k),
    "frame.sum": lambda **k: DF.dp.sum("x", **k),
    "series.std": lambda **k: DF["x"].dp.std(**k),
    "series.skew": lambda **k: DF["x"].dp.skew(**k),
    "frame.median": lambda **k: DF.dp.median("x", **k),
    "series.quantile": lambda **k: DF["x"].dp.quantile([0.25, 0.75], **k),
    "frame.agg": lambda **k: DF.dp.agg({"x": ["mean", "std"]}, **k),
    "groupby.mean": lambda **k: DF.dp.groupby("g", **KEYS).mean("x", **k),
    "groupby.median": lambda **k: DF.dp.groupby("g", **KEYS).median("x", **k),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_share_is_spent_and_recorded(name: str) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    out = CALLS[name](
        epsilon=1.0, bounds="auto", bounds_epsilon_share=0.1, budget=budget, random_state=0
    )
    meta = out.attrs["dp"]
    assert meta.details["bounds_epsilon_share"] == 0.1
    assert meta.epsilon == pytest.approx(0.9)  # the release's own: the rest
    ledger = budget.ledger
    assert len(ledger) == 2
    assert ledger["epsilon"].iloc[0] == pytest.approx(0.1)
    assert budget.spent[0] == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["frame.mean", "frame.median", "groupby.mean"])
def test_the_default_is_the_measured_share(name: str) -> None:
    out = CALLS[name](epsilon=1.0, bounds="auto", random_state=0)
    assert out.attrs["dp"].details["bounds_epsilon_share"] == DEFAULT_SHARE == 0.3


@pytest.mark.parametrize("share", [0, 1, 1.5, -0.1, True, "0.3", None, float("nan")])
@pytest.mark.parametrize("name", ["frame.mean", "series.quantile", "frame.agg", "groupby.median"])
@pytest.mark.parametrize("bounds", ["auto", (0, 100)])
def test_a_bad_share_is_refused_before_the_charge(name: str, share: Any, bounds: Any) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(ValueError, match="bounds_epsilon_share must be a number in"):
        CALLS[name](epsilon=1.0, bounds=bounds, bounds_epsilon_share=share, budget=budget)
    assert budget.spent[0] == 0.0 and len(budget.ledger) == 0


def test_describe_spends_the_share_of_each_estimated_column() -> None:
    frame = DF.assign(t=RNG.choice(["u", "v"], len(DF)))
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    d = frame.dp.describe(
        epsilon=1.0, delta=1e-6, bounds="auto", bounds_epsilon_share=0.2, budget=budget
    )
    assert d.attrs["dp"].details["auto"]["auto_share"] == 0.2
    ledger = budget.ledger
    # three columns (x, g, t), a third each: x's bounds, then g's and t's categories
    assert ledger["epsilon"].iloc[0] == pytest.approx(0.2 / 3)
    assert ledger["epsilon"].iloc[1] == pytest.approx(0.2 / 3)
    assert budget.spent[0] == pytest.approx(1.0)
    budget = PrivacyBudget(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="bounds_epsilon_share"):
        frame.dp.describe(
            epsilon=1.0, delta=1e-6, bounds="auto", bounds_epsilon_share=1.0, budget=budget
        )
    assert budget.spent[0] == 0.0


def test_every_method_taking_auto_bounds_has_the_keyword() -> None:
    methods = [
        DF.dp.mean,
        DF.dp.sum,
        DF.dp.var,
        DF.dp.std,
        DF.dp.sem,
        DF.dp.skew,
        DF.dp.median,
        DF.dp.quantile,
        DF.dp.agg,
        DF.dp.describe,
        DF["x"].dp.mean,
        DF["x"].dp.describe,
        DF.dp.groupby("g").mean,
        DF.dp.groupby("g").quantile,
        DF.dp.groupby("g").agg,
    ]
    for method in methods:
        parameter = inspect.signature(method).parameters["bounds_epsilon_share"]
        assert parameter.default == DEFAULT_SHARE, method
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, method
    # cov and corr take no bounds="auto": no share either
    assert "bounds_epsilon_share" not in inspect.signature(DF.dp.cov).parameters
