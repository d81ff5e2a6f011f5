"""``out_of_bounds="raise"`` raises an error a pandera user already catches.

The check runs after the charge and is not differentially private; its error is
ours (``PandasDPError``), a ``ValueError`` (as before) and pandera's ``SchemaError``
with pandera's failure cases, for every kind of release that offers the mode.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandera.errors import SchemaError

import pandas_dp
from pandas_dp.errors import PandasDPError

BOUNDS = {"x": (0.0, 10.0), "y": (0.0, 10.0)}
CALLS: dict[str, Callable[[pd.DataFrame], Any]] = {
    "mean": lambda d: d.dp.mean("x", epsilon=1.0, bounds=BOUNDS, out_of_bounds="raise"),
    "quantile": lambda d: d.dp.median("x", epsilon=1.0, bounds=BOUNDS, out_of_bounds="raise"),
    "cov": lambda d: d.dp.cov(["x", "y"], epsilon=1.0, bounds=BOUNDS, out_of_bounds="raise"),
    "value_counts": lambda d: d["g"].dp.value_counts(
        epsilon=1.0, categories=["a", "b"], out_of_bounds="raise"
    ),
    "groupby": lambda d: d.dp.groupby("g", keys=["a", "b"]).mean(
        "x", epsilon=1.0, bounds=BOUNDS, out_of_bounds="raise"
    ),
}


@pytest.fixture
def bad() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {"x": rng.uniform(0, 10, 50), "y": rng.uniform(0, 10, 50), "g": ["a", "b"] * 25}
    )
    frame.loc[3, "x"] = 42.0
    frame.loc[4, "g"] = "c"
    return frame


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_violation_is_a_pandera_schema_error(bad: pd.DataFrame, name: str) -> None:
    with pytest.raises(SchemaError) as caught:
        CALLS[name](bad)
    err = caught.value
    assert isinstance(err, PandasDPError) and isinstance(err, ValueError)
    assert isinstance(err, pandas_dp.errors.OutOfBoundsError)
    assert "already charged" in str(err)
    assert isinstance(err.failure_cases, pd.DataFrame) and len(err.failure_cases) >= 1


def test_valid_data_pass(bad: pd.DataFrame) -> None:
    good = bad.drop(index=[3, 4])
    for name, call in CALLS.items():
        assert call(good) is not None, name


def test_the_class_is_one_class() -> None:
    assert pandas_dp.errors.OutOfBoundsError is pandas_dp.errors.OutOfBoundsError
    assert pandas_dp.errors.OutOfBoundsError.__module__ == "pandas_dp.errors"
    with pytest.raises(AttributeError):
        pandas_dp.errors.NoSuchError  # noqa: B018
