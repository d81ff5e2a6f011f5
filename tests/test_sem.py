"""``sem``: the standard error of the mean, like pandas, from the variance's own
measurements (a catalogue entry: ``std / sqrt(count)`` is post-processing)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401

EPS = 1e6  # noise negligible: the release must equal pandas' answer


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 10, 3000)
    x[rng.random(3000) < 0.05] = np.nan
    return pd.DataFrame(
        {"x": x, "y": rng.normal(5, 2, 3000).clip(0, 10), "g": rng.choice(["a", "b", "c"], 3000)}
    )


@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_sem_equals_pandas_on_every_accessor(df: pd.DataFrame, ddof: int) -> None:
    b = (0, 10)
    one = df.dp.sem("x", ddof, epsilon=EPS, bounds=b, random_state=1)
    assert isinstance(one, float)
    assert one == pytest.approx(df["x"].sem(ddof=ddof), rel=1e-4)
    both = df.dp.sem(["x", "y"], ddof, epsilon=EPS, bounds=b, random_state=1)
    pd.testing.assert_series_equal(both, df[["x", "y"]].sem(ddof=ddof), rtol=1e-4)
    s = df["x"].dp.sem(ddof, epsilon=EPS, bounds=b, random_state=1)
    assert s == pytest.approx(df["x"].sem(ddof=ddof), rel=1e-4)
    g = df.dp.groupby("g", keys=["a", "b", "c"]).sem("x", ddof=ddof, epsilon=EPS, bounds=b)
    pd.testing.assert_series_equal(g, df.groupby("g")["x"].sem(ddof=ddof), rtol=1e-4)


def test_sem_on_dask_equals_the_in_memory_release(df: pd.DataFrame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(df, npartitions=7)
    got = ddf.dp.sem("x", epsilon=1.0, bounds=(0, 10), random_state=3)
    want = df.dp.sem("x", epsilon=1.0, bounds=(0, 10), random_state=3)
    assert float(got) == float(want)


def test_sem_in_agg_and_its_metadata(df: pd.DataFrame) -> None:
    out = df.dp.agg({"x": ["mean", "sem"]}, epsilon=EPS, bounds=(0, 10), random_state=2)
    assert out.loc["sem", "x"] == pytest.approx(df["x"].sem(), rel=1e-4)
    r = df.dp.sem("x", epsilon=1.0, bounds=(0, 10), random_state=2)
    meta = r.attrs["dp"]
    assert meta.statistic == "sem"
    assert meta.details["ddof"] == 1
    std = df.dp.std("x", epsilon=1.0, bounds=(0, 10), random_state=2).attrs["dp"]
    assert meta.output_bounds == std.output_bounds  # the count is at least one
    assert 0.0 <= r <= meta.output_bounds[1]


def test_sem_is_the_std_over_the_root_of_the_count_when_n_is_public(df: pd.DataFrame) -> None:
    """With a public length (substitute, direct) the count is n itself."""
    kw = dict(epsilon=1.0, bounds=(0, 10), neighbouring="substitute", method="direct")
    full = df[["y"]]
    sem = full.dp.sem("y", random_state=4, **kw)
    std = full.dp.std("y", random_state=4, **kw)
    assert float(sem) == pytest.approx(float(std) / math.sqrt(len(full)), rel=1e-12)


def test_sem_interval_covers_the_exact_value() -> None:
    """90 % intervals at epsilon 0.5 on 200 values: each covers the exact sem with
    probability >= 0.9 (a union bound, conservative). Over 300 fresh data sets,
    fewer than 252 covering has probability below 3e-4 if the coverage is 0.9."""
    rng = np.random.default_rng(9)
    covered = 0
    for _ in range(300):
        s = pd.Series(rng.uniform(0, 10, 200))
        r = s.dp.sem(epsilon=0.5, bounds=(0, 10))
        lo, hi = r.attrs["dp"].interval(0.1)
        covered += lo <= s.sem() <= hi
    assert covered >= 252
