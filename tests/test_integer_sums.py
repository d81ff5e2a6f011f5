"""The sum of a column of whole numbers is released as an integer, like pandas'.

An integer or boolean column with whole-number bounds has an integer exact sum; it
is noised with discrete noise calibrated to the sum's sensitivity in the table
(``max(|a|, |b|)`` add/remove, ``max(R, |a|, |b|)`` substitute: whole numbers, no
rounding allowance) and released as ``int64``. Anything else stays a float sum.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401
from pandas_dp.plan.calibration import integer_sum, moment_row, zero_signs

EPS = 1.0


def _frame(n: int = 40, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.integers(0, 10, n),
            "flag": rng.random(n) < 0.3,
            "f": rng.random(n),
            "g": rng.choice(["a", "b"], n),
        }
    )


@pytest.mark.parametrize(
    ("integer", "bounds", "expected"),
    [
        (True, (0.0, 9.0), True),
        (True, (-5.0, 5.0), True),
        (False, (0.0, 9.0), False),  # a float column
        (True, (0.0, 0.5), False),  # a bound that is no whole number
        (True, (0.0, 2.0**38), False),  # the exact sum's step would exceed 1/2
        (True, (0.0, 2.0**38 - 2), True),
    ],
)
def test_which_sums_are_integer(integer: bool, bounds: tuple[float, float], expected: bool) -> None:
    assert integer_sum(integer, *bounds) is expected


@pytest.mark.parametrize("relation", ["add_remove", "substitute"])
def test_an_integer_sum_is_calibrated_to_the_table_alone(relation: str) -> None:
    """No rounding allowance: the sensitivity is the table's whole number."""
    a, b = -3.0, 7.0
    sens, lo, hi, integer = moment_row("sum", relation, None, a, b, zero_signs(a, b), True)
    assert integer and sens == (7.0 if relation == "add_remove" else 10.0)
    assert (lo, hi) == (-(2.0**53), 2.0**53)
    float_sens, *_, float_integer = moment_row("sum", relation, None, a, b, zero_signs(a, b))
    assert not float_integer and float_sens > sens


def test_the_series_sum_is_a_python_integer_and_the_noise_is_whole() -> None:
    s = _frame()["x"]
    got = s.dp.sum(epsilon=EPS, bounds=(0, 9), random_state=0)
    assert isinstance(got, int)
    record = got.attrs["dp"].to_dict()
    assert record["sensitivity"] == {"x: sum": 9.0}
    lo, hi = got.attrs["dp"].interval()
    assert float(lo).is_integer() and float(hi).is_integer() and lo <= got <= hi


def test_frame_grouped_and_boolean_sums_have_pandas_dtypes() -> None:
    df = _frame()
    both = df.dp.sum(["x", "flag"], epsilon=EPS, bounds={"x": (0, 9)}, random_state=0)
    assert both.dtype == df[["x", "flag"]].sum().dtype == np.dtype("int64")
    mixed = df.dp.sum(["x", "f"], epsilon=EPS, bounds={"x": (0, 9), "f": (0, 1)}, random_state=0)
    assert mixed.dtype == df[["x", "f"]].sum().dtype == np.dtype("float64")
    g = df.dp.groupby("g", keys=["a", "b"])
    one = g.sum("x", epsilon=EPS, bounds={"x": (0, 9)}, random_state=0)
    assert one.dtype == df.groupby("g")["x"].sum().dtype
    two = g.sum(["x", "f"], epsilon=EPS, bounds={"x": (0, 9), "f": (0, 1)}, random_state=0)
    pd.testing.assert_series_equal(two.dtypes, df.groupby("g")[["x", "f"]].sum().dtypes)


def test_float_columns_and_fractional_bounds_keep_float_sums() -> None:
    df = _frame()
    assert isinstance(df["f"].dp.sum(epsilon=EPS, bounds=(0, 1), random_state=0), float)
    half = df["x"].dp.sum(epsilon=EPS, bounds=(0, 9.5), random_state=0)
    assert isinstance(half, float)


def _noise(n_draws: int, sens_bound: tuple[int, int]) -> np.ndarray:
    s = pd.Series(np.full(50, 4, dtype=np.int64))
    exact = int(s.sum())
    out = np.empty(n_draws)
    for i in range(n_draws):
        out[i] = s.dp.sum(epsilon=EPS, bounds=sens_bound, random_state=i) - exact
    return out


def test_the_noise_is_discrete_laplace_of_the_table_scale() -> None:
    """2,000 releases: whole numbers, mean 0 and the discrete Laplace variance
    ``2 p / (1 - p)^2`` with ``p = exp(-eps / Delta)``, ``Delta = 9``. Each check's
    band is 5 standard errors (false alarm below 1e-6 each, by Chebyshev-free
    normal approximation of 2,000 draws)."""
    noise = _noise(2000, (0, 9))
    assert np.all(noise == np.round(noise))
    p = math.exp(-EPS / 9.0)
    var = 2 * p / (1 - p) ** 2
    se_mean = math.sqrt(var / noise.size)
    assert abs(noise.mean()) < 5 * se_mean
    # the variance of the sample variance: (m4 - var^2) / n, m4 of the discrete Laplace
    m4 = 2 * p * (1 + 10 * p + p * p) / (1 - p) ** 4
    se_var = math.sqrt((m4 - var * var) / noise.size)
    assert abs(noise.var() - var) < 5 * se_var


def test_a_sum_beyond_whole_doubles_is_clamped_exactly() -> None:
    """The exact sum above 2**53 is released from 2**53 (a whole double), not from a
    rounded float."""
    big = 2**37 - 2
    s = pd.Series(np.full(70_000, big, dtype=np.int64))
    assert int(s.sum()) > 2**53
    got: Any = s.dp.sum(epsilon=1e12, bounds=(0, big), random_state=0)
    assert isinstance(got, int) and abs(got - 2**53) <= 1


def test_dask_releases_the_same_integer_sum() -> None:
    dd = pytest.importorskip("dask.dataframe")
    df = _frame(200)
    ddf = dd.from_pandas(df, npartitions=7)
    mine = df.dp.sum(["x", "flag"], epsilon=EPS, bounds={"x": (0, 9)}, random_state=5)
    theirs = ddf.dp.sum(["x", "flag"], epsilon=EPS, bounds={"x": (0, 9)}, random_state=5)
    pd.testing.assert_series_equal(mine, theirs)
