"""Whole releases through the reference engine equal the in-memory engine's, bit for bit.

The reference engine (:mod:`pandas_dp.engines.reference`) measures a plan with its
pure-Python kernels; with the same ``random_state`` the noise is the same, so a
release through it must equal the in-memory engine's exactly: every statistic's
sufficient statistics, grouped or not, with privacy units and private keys. The
reference engine is registered for a DataFrame subclass, so the same call on the
same rows goes to one engine or the other by the frame's type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401
from pandas_dp.engines import registry
from pandas_dp.engines.reference import ReferenceEngine


class ReferenceFrame(pd.DataFrame):
    """Rows whose releases the reference engine computes."""

    @property
    def _constructor(self) -> type[ReferenceFrame]:
        return ReferenceFrame


class CountingReference(ReferenceEngine):
    """The reference engine, counting the plans it measured."""

    def __init__(self) -> None:
        self.plans = 0

    def exact_values(self, measurements: Any, data: Any) -> Any:
        self.plans += 1
        return super().exact_values(measurements, data)


def _frame(rows: int = 300, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.normal(45, 15, rows).round(1)
    age[rng.random(rows) < 0.1] = np.nan
    return pd.DataFrame(
        {
            "age": age,
            "income": rng.lognormal(10, 0.8, rows),
            "score": rng.integers(1, 6, rows),
            "region": rng.choice(["N", "S", "E", "W"], rows),
            "pid": rng.integers(0, 80, rows),
        }
    )


B = {"age": (0.0, 100.0), "income": (0.0, 200_000.0), "score": (1, 5)}
REGIONS = ["N", "S", "E", "W"]

CALLS: dict[str, Callable[[pd.DataFrame], Any]] = {
    "mean": lambda d: d.dp.mean(["age", "income"], epsilon=1.0, bounds=B, random_state=1),
    "var": lambda d: d.dp.var("age", epsilon=1.0, bounds=B, random_state=2),
    "std gaussian": lambda d: d.dp.std(
        "age", epsilon=1.0, delta=1e-6, mechanism="gaussian", bounds=B, random_state=3
    ),
    "sem": lambda d: d.dp.sem(["age", "income"], epsilon=1.0, bounds=B, random_state=18),
    "sum": lambda d: d.dp.sum("score", epsilon=1.0, bounds=B, random_state=4),
    "skew": lambda d: d.dp.skew(["age", "income"], epsilon=1.0, bounds=B, random_state=19),
    "groupby skew units": lambda d: (
        d.dp(privacy_unit="pid", max_rows_per_unit=3)
        .groupby("region", keys=REGIONS)
        .skew("age", epsilon=2.0, bounds=B, random_state=20)
    ),
    "count": lambda d: d[["age", "region"]].dp.count(epsilon=1.0, random_state=5),
    "mean substitute": lambda d: d.dp.mean(
        "age", epsilon=1.0, bounds=B, neighbouring="substitute", random_state=6
    ),
    "mean direct": lambda d: d.dp.mean(
        "income", epsilon=1.0, bounds=B, neighbouring="substitute", method="direct", random_state=7
    ),
    "value_counts": lambda d: d.dp.value_counts(
        ["region"], epsilon=1.0, categories={"region": REGIONS}, random_state=8
    ),
    "quantile": lambda d: d.dp.quantile(
        "age", [0.25, 0.5, 0.9], epsilon=1.0, bounds=B, random_state=9
    ),
    "quantile tree": lambda d: d.dp.quantile(
        "age", [0.5], epsilon=1.0, bounds=B, method="tree", random_state=10
    ),
    "cov": lambda d: d.dp.cov(["age", "income"], epsilon=1.0, bounds=B, random_state=11),
    "describe": lambda d: d.dp.describe(
        ["age", "region"], epsilon=2.0, bounds=B, categories={"region": REGIONS}, random_state=12
    ),
    "groupby mean": lambda d: d.dp.groupby("region", keys=REGIONS).mean(
        "age", epsilon=1.0, bounds=B, random_state=13
    ),
    "groupby median": lambda d: d.dp.groupby("region", keys=REGIONS).median(
        "age", epsilon=1.0, bounds=B, random_state=14
    ),
    "groupby value_counts": lambda d: d.dp.groupby("region", keys=REGIONS).value_counts(
        "score", epsilon=1.0, categories={"score": [1, 2, 3, 4, 5]}, random_state=15
    ),
    "units mean": lambda d: d.dp(privacy_unit="pid", max_rows_per_unit=2).mean(
        "age", epsilon=1.0, bounds=B, random_state=16
    ),
    "private keys": lambda d: d.dp.groupby("region", keys="private", delta=1e-6).mean(
        "age", epsilon=1.0, bounds=B, random_state=17
    ),
}


def _equal(got: Any, want: Any) -> None:
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(pd.DataFrame(got), want, check_exact=True)
    elif isinstance(want, pd.Series):
        pd.testing.assert_series_equal(got, want, check_exact=True)
    else:
        assert float(got) == float(want)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_release_through_the_reference_engine_is_bit_identical(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = CountingReference()
    monkeypatch.setitem(registry._ENGINES, ReferenceFrame, engine)
    plain = _frame()
    call = CALLS[name]
    want = call(plain)
    got = call(ReferenceFrame(plain))
    assert engine.plans >= 1  # the reference engine measured the plan
    _equal(got, want)


def test_the_comparison_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """A reference engine off by one row's value gives a different release."""

    class OffByOne(CountingReference):
        @staticmethod
        def moments(series: pd.Series, *args: Any, **kwargs: Any) -> Any:
            return ReferenceEngine.moments(series.iloc[1:], *args, **kwargs)

    monkeypatch.setitem(registry._ENGINES, ReferenceFrame, OffByOne())
    plain = _frame()
    with pytest.raises(AssertionError):
        _equal(CALLS["mean"](ReferenceFrame(plain)), CALLS["mean"](plain))
