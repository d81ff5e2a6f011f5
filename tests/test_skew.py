"""``skew``: pandas' adjusted Fisher-Pearson skewness from noisy centred power sums.

A catalogue entry (:data:`pandas_dp.stats.catalogue.MOMENTS`), one new sufficient
statistic (the centred cubes: their sensitivity row is proven in
``tests/test_sensitivity.py``), an estimator and an interval
(:mod:`pandas_dp.stats.skewness`).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pandas_dp
from pandas_dp.errors import InvalidBoundsError
from pandas_dp.stats.skewness import skew_interval, skew_value

EPS = 1e7  # noise negligible: the release must equal pandas' answer


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    n = 4000
    x = rng.lognormal(2.0, 0.6, n).clip(0, 40)
    x[rng.random(n) < 0.05] = np.nan
    return pd.DataFrame(
        {
            "x": x,
            "y": rng.normal(5, 2, n).clip(0, 10),
            "g": rng.choice(["a", "b", "c"], n),
            "pid": rng.integers(0, 1500, n),
        }
    )


def test_skew_equals_pandas_on_every_accessor(df: pd.DataFrame) -> None:
    b = {"x": (0, 40), "y": (0, 10)}
    one = df.dp.skew("x", epsilon=EPS, bounds=b, random_state=1)
    assert isinstance(one, float)
    assert one == pytest.approx(df["x"].skew(), rel=1e-4)
    both = df.dp.skew(["x", "y"], epsilon=EPS, bounds=b, random_state=1)
    pd.testing.assert_series_equal(both, df[["x", "y"]].skew(), rtol=1e-4)
    s = df["y"].dp.skew(epsilon=EPS, bounds=(0, 10), random_state=1)
    assert s == pytest.approx(df["y"].skew(), rel=1e-3, abs=1e-4)
    g = df.dp.groupby("g", keys=["a", "b", "c"]).skew("x", epsilon=EPS, bounds=b)
    pd.testing.assert_series_equal(g, df.groupby("g")["x"].skew(), rtol=1e-4)
    agg = df.dp.agg({"x": ["mean", "skew"]}, epsilon=EPS, bounds=b, random_state=2)
    assert agg.loc["skew", "x"] == pytest.approx(df["x"].skew(), rel=1e-4)


def test_skew_of_clamped_values(df: pd.DataFrame) -> None:
    """Values beyond the bounds are clamped, as for every moment."""
    got = df.dp.skew("x", epsilon=EPS, bounds=(0, 10), random_state=1)
    assert got == pytest.approx(df["x"].clip(0, 10).skew(), rel=1e-4)


def test_skew_on_dask_equals_the_in_memory_release(df: pd.DataFrame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    want = df.dp.skew("x", epsilon=1.0, bounds=(0, 40), random_state=3)
    for parts in (1, 7, 64):
        ddf = dd.from_pandas(df, npartitions=parts)
        assert float(ddf.dp.skew("x", epsilon=1.0, bounds=(0, 40), random_state=3)) == float(want)


def test_skew_metadata_names_the_cubes_and_their_sensitivity(df: pd.DataFrame) -> None:
    r = df.dp(privacy_unit="pid", max_rows_per_unit=2).skew(
        "x", epsilon=1.0, bounds=(0, 40), random_state=4
    )
    meta = r.attrs["dp"]
    assert meta.statistic == "skew"
    cubes = [v for k, v in meta.sensitivity.items() if "centred_cubes" in str(k)]
    # R³/8 per row, two rows per unit, plus the rounding step
    assert cubes and cubes[0] == pytest.approx(2 * 40.0**3 / 8, rel=1e-9)
    lo, hi = meta.interval(0.05)
    assert lo <= float(r) <= hi


def test_too_wide_bounds_are_refused_before_the_charge(df: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    with pytest.raises(InvalidBoundsError, match="cubed half-width overflows"):
        df.dp.skew("x", epsilon=0.5, bounds=(-1e110, 1e110), budget=budget)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


@pytest.mark.parametrize("n", [0, 1, 2])
def test_fewer_than_three_values_give_a_number(n: int) -> None:
    s = pd.Series(np.linspace(1, 9, n), dtype=float)
    got = s.dp.skew(epsilon=1.0, bounds=(0, 10), random_state=5)
    assert math.isfinite(got)


def test_skew_value_is_pandas_formula_on_exact_sums() -> None:
    rng = np.random.default_rng(0)
    for n, mid in itertools.product([3, 4, 10, 500], [0.0, 3.0, -7.5]):
        x = rng.gamma(2.0, 2.0, n)
        y = x - mid
        got = skew_value(float(n), y.sum(), (y * y).sum(), (y**3).sum())
        assert got == pytest.approx(pd.Series(x).skew(), rel=1e-9, abs=1e-12)
    assert skew_value(5.0, 5.0, 5.0, 5.0) == 0.0  # constant: no spread, no skew


def test_skew_interval_encloses_every_point_of_its_box() -> None:
    """The interval holds G at every point of the box (random points and corners),
    so it holds the exact skewness whenever the four sums are in their intervals."""
    rng = np.random.default_rng(1)
    half = 5.0
    for _ in range(300):
        n = int(rng.integers(3, 400))
        y = (rng.beta(0.5 + 3 * rng.random(), 0.5 + 3 * rng.random(), n) * 2 - 1) * half
        sums = np.array([n, y.sum(), (y * y).sum(), (y**3).sum()], dtype=float)
        width = rng.random(4) * np.array([n / 3, n * half / 4, n * half**2 / 4, n * half**3 / 4])
        offset = (rng.random(4) - 0.5) * width
        box = [(s + o - w / 2, s + o + w / 2) for s, o, w in zip(sums, offset, width, strict=True)]
        lo, hi = skew_interval(*box, half)
        assert lo <= hi
        corners = list(itertools.product(*box))
        inner = [tuple(a + (b - a) * rng.random() for a, b in box) for _ in range(40)]
        for c, s1, s2, s3 in corners + inner + [tuple(sums)]:
            if c < 3:
                continue
            g = skew_value(c, s1, s2, s3)
            if (s2 - s1 * s1 / c) > 0 and abs(s1) <= c * half and 0 <= s2 <= c * half * half:
                assert lo - 1e-9 <= g <= hi + 1e-9, (box, (c, s1, s2, s3), g, lo, hi)


def test_the_interval_is_informative_where_the_data_speak(df: pd.DataFrame) -> None:
    big = pd.Series(np.random.default_rng(2).lognormal(3, 0.5, 20_000))
    r = big.dp.skew(epsilon=1.0, bounds=(0, 100), random_state=6)
    lo, hi = r.attrs["dp"].interval(0.05)
    assert hi - lo < 2.0 and lo > 0  # a right-skewed column is told apart from a symmetric one


@pytest.mark.slow
def test_interval_coverage() -> None:
    """400 releases at alpha = 0.1: a 90 % interval (conservative by its union bound
    and box) misses at most 60 times but for a false alarm of P(Bin(400, 0.1) > 60)
    < 1e-3."""
    assert stats.binom.sf(60, 400, 0.1) < 1e-3
    rng = np.random.default_rng(3)
    misses = 0
    for seed in range(400):
        x = pd.Series(rng.lognormal(2.0, 0.7, 300)).clip(0, 30)
        truth = x.skew()
        r = x.dp.skew(epsilon=2.0, bounds=(0, 30), random_state=seed)
        lo, hi = r.attrs["dp"].interval(0.1)
        misses += not (lo <= truth <= hi)
    assert misses <= 60


def test_a_constant_column_has_no_skew_as_in_pandas() -> None:
    """A spread within its noise is none: 0 (pandas 3 answers NaN, pandas 2 gave 0; never
    D3 / D2^1.5 of noise, which the clamp would turn into +-sqrt(N))."""
    s = pd.Series([5.0] * 100)
    for eps in (1.0, 1e9):
        assert s.dp.skew(epsilon=eps, bounds=(0, 10), random_state=7) == 0.0


@pytest.mark.parametrize(
    "bounds", [(-1e100, 1e100), (-1e102, 1e102), (0.0, 1e-30), (-1e-100, 1e-100)], ids=str
)
def test_no_value_raises_or_warns_after_the_charge(bounds: tuple[float, float]) -> None:
    """Huge and tiny bounds, inf, NaN, all missing: a number and an interval, silently."""
    rng = np.random.default_rng(9)
    frames = [
        pd.Series(rng.normal(0, 1e99, 500)),
        pd.Series([np.inf, -np.inf, np.nan, 1.0] * 50),
        pd.Series([np.nan] * 20),
        pd.Series([bounds[1]] * 30 + [bounds[0]]),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for s in frames:
            for eps in (0.1, 1e6):
                r = s.dp.skew(epsilon=eps, bounds=bounds, random_state=1)
                lo, hi = r.attrs["dp"].interval(0.05)
                assert math.isfinite(r) and lo <= hi
