"""A quantile of a boolean column is refused before the charge, as pandas refuses it
(issue 32): a TypeError naming the column and ``proportions``. pandas' median of
booleans, and its group-by quantile of a nullable ``boolean`` column, answer; so do
these."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp

KW: dict[str, Any] = dict(epsilon=1.0, bounds=(0, 1))


def _frame(dtype: str) -> pd.DataFrame:
    flags = pd.Series([True, False, True, True] * 10, dtype=dtype)
    return pd.DataFrame({"f": flags, "x": np.linspace(0, 1, 40), "k": ["a", "b"] * 20})


REFUSED = {
    "frame": lambda d, b: d.dp.quantile("f", 0.5, budget=b, **KW),
    "frame-list": lambda d, b: d.dp.quantile(["x", "f"], [0.25, 0.75], budget=b, **KW),
    "series": lambda d, b: d["f"].dp.quantile(0.5, budget=b, **KW),
    "auto-bounds": lambda d, b: d.dp.quantile("f", 0.5, budget=b, epsilon=1.0, bounds="auto"),
    "groupby": lambda d, b: d.dp.groupby("k", keys=["a", "b"]).quantile("f", 0.5, budget=b, **KW),
    "groupby-col": lambda d, b: d.dp.groupby("k", keys=["a", "b"])["f"].quantile(
        0.5, budget=b, **KW
    ),
}


def _pandas_refuses(call: str, df: pd.DataFrame) -> bool:
    pandas_calls = {
        "frame": lambda: df[["f"]].quantile(0.5),
        "frame-list": lambda: df[["x", "f"]].quantile([0.25, 0.75]),
        "series": lambda: df["f"].quantile(0.5),
        "auto-bounds": lambda: df[["f"]].quantile(0.5),
        "groupby": lambda: df.groupby("k")[["f"]].quantile(0.5),
        "groupby-col": lambda: df.groupby("k")["f"].quantile(0.5),
    }
    try:
        pandas_calls[call]()
    except TypeError:
        return True
    return False


@pytest.mark.parametrize("dtype", ["bool", "boolean"])
@pytest.mark.parametrize("call", sorted(REFUSED))
def test_boolean_quantile_is_refused_where_pandas_refuses(call: str, dtype: str) -> None:
    df = _frame(dtype)
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    if not _pandas_refuses(call, df):  # pandas' group-by quantile of `boolean` answers
        assert dtype == "boolean" and call.startswith("groupby")
        out = REFUSED[call](df, budget)
        assert ((out >= 0) & (out <= 1)).all().all()
        return
    with pytest.raises(TypeError) as err:
        REFUSED[call](df, budget)
    message = str(err.value)
    assert "'f'" in message and "boolean" in message and "proportions('f')" in message
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


@pytest.mark.parametrize("dtype", ["bool", "boolean"])
def test_median_of_booleans_is_released_like_pandas(dtype: str) -> None:
    df = _frame(dtype)
    assert float(df["f"].median()) == 1.0  # pandas answers
    got = df["f"].dp.median(epsilon=1e6, bounds=(0, 1), random_state=0)
    assert 0.0 <= got <= 1.0
