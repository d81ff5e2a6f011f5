"""``df.dp.groupby(by, keys=[...]).describe(bounds="auto")`` (issue 33).

The bounds and categories are released once over the whole frame, then the
grouped describe runs on them: the same releases as the whole frame's at the same
seed, the ledger rows summing to epsilon and delta exactly, every refusal before
the first charge.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp

KEYS = ["a", "b", "c"]


def frame(n: int = 3000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = rng.choice(KEYS, n)
    return pd.DataFrame(
        {
            "g": g,
            "age": rng.normal(40, 10, n).round() + (g == "b") * 10,
            "city": rng.choice(["A", "B"], n).astype(object),
            "smoker": rng.random(n) < 0.3,
        }
    )


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_grouped_auto_describe(mechanism: str) -> None:
    df = frame()
    budget = pandas_dp.PrivacyBudget(epsilon=2.0, delta=1e-5)
    kw = {"epsilon": 2.0, "delta": 1e-6, "bounds": "auto", "mechanism": mechanism}
    d = df.dp.groupby("g", keys=KEYS).describe(random_state=3, budget=budget, **kw)
    assert list(d.index) == KEYS
    assert list(dict.fromkeys(d.columns.get_level_values(0))) == ["age", "city", "smoker"]
    ledger = budget.ledger
    assert list(ledger["statistic"]) == ["bounds", "categories", "describe"]
    assert ledger["epsilon"].sum() == pytest.approx(2.0, rel=1e-12)
    assert ledger["delta"].sum() == pytest.approx(1e-6, rel=1e-12)
    # one whole-frame release of the bounds and categories: the whole frame's at the seed
    whole = df[["age", "city", "smoker"]].dp.describe(random_state=3, **kw)
    auto = d.attrs["dp"].details["auto"]
    assert auto["declared"] == whole.attrs["dp"].details["auto"]["declared"]
    lo, hi = auto["declared"]["bounds"]["age"]
    assert (d[("age", "min (declared)")] == lo).all() and (d[("age", "max (declared)")] == hi).all()
    assert auto["declared"]["categories"]["city"] == ["A", "B"]


def test_grouped_auto_is_accurate_at_a_large_epsilon() -> None:
    df = frame(6000)
    d = df.dp.groupby("g", keys=KEYS).describe(
        ["age", "city"], epsilon=500.0, delta=1e-6, bounds="auto", random_state=0
    )
    exact = df.groupby("g")["age"].mean()
    np.testing.assert_allclose(d[("age", "mean")], exact[KEYS], atol=0.2)
    shares = df.groupby("g")["city"].value_counts(normalize=True).unstack()
    np.testing.assert_allclose(d[("city", "share A")], shares.loc[KEYS, "A"], atol=0.01)


def test_grouped_auto_with_a_privacy_unit() -> None:
    df = frame(3000)
    df["pid"] = np.arange(len(df)) // 2
    dp = df.dp(privacy_unit="pid", max_rows_per_unit=2)
    d = dp.groupby("g", keys=KEYS).describe(
        ["age"], epsilon=2.0, bounds="auto", random_state=0, max_groups_per_unit=2,
        max_rows_per_group=2,
    )  # fmt: skip
    assert list(d.index) == KEYS and d[("age", "count")].notna().all()


def test_private_keys_and_bad_describe_refused_before_any_charge(charges: list[str]) -> None:
    df = frame(500)
    budget = pandas_dp.PrivacyBudget(epsilon=5.0, delta=1e-3)
    with pytest.raises(ValueError, match="private keys"):
        df.dp.groupby("g", keys="private", delta=1e-6).describe(
            ["age"], epsilon=1.0, bounds="auto", budget=budget
        )
    with pytest.raises(ValueError, match="percentiles"):
        df.dp.groupby("g", keys=KEYS).describe(
            ["age", "city"], [2.0], epsilon=1.0, delta=1e-6, bounds="auto", budget=budget
        )
    with pytest.raises(ValueError, match="histogram"):
        df.dp.groupby("g", keys=KEYS).describe(
            ["age", "city"], epsilon=1.0, delta=1e-6, bounds="auto", budget=budget,
            histogram=1,
        )  # fmt: skip
    with pytest.raises(ValueError, match="delta > 0"):
        df.dp.groupby("g", keys=KEYS).describe(
            ["age", "city"], epsilon=1.0, bounds="auto", budget=budget
        )
    assert charges == [] and budget.ledger.empty


def test_dask_same_release() -> None:
    dd = pytest.importorskip("dask.dataframe")
    df = frame(2000)
    kw: dict[str, Any] = {"epsilon": 2.0, "delta": 1e-6, "bounds": "auto", "random_state": 4}
    on_pandas = df.dp.groupby("g", keys=KEYS).describe(["age", "city"], histogram=10, **kw)
    on_dask = dd.from_pandas(df, npartitions=3).dp.groupby("g", keys=KEYS)
    got = on_dask.describe(["age", "city"], histogram=10, **kw)
    pd.testing.assert_frame_equal(got, on_pandas)
    details = got.attrs["dp"].details
    assert details["histograms"] == on_pandas.attrs["dp"].details["histograms"]
    assert details["auto"]["declared"] == on_pandas.attrs["dp"].details["auto"]["declared"]
