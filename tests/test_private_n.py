"""The privacy model: under ``add_remove`` (the default) the frame's length is private.

No release value, clamp range, interval or metadata field may depend on the exact
``len(df)`` (DESIGN.md, "The privacy model"; REFERENCE.md §9). Two checks of that,
for every public release:

* a frame and the same frame with an 11th row *added*, released with the same
  ``random_state``: the metadata (every field of ``to_dict()``; none of them holds
  a noisy value), the public output range, the shape and the index are equal;
* a frame and the same frame with an 11th row that is *missing everywhere*: the
  sufficient statistics (non-missing counts, sums, category counts, complete
  rows, query counts) are equal, only ``len(df)`` differs, so with the same
  ``random_state`` the releases must be identical -- values and intervals too.
  Only the number of rows itself (``len``, the denominator of
  ``counts(normalize=True)``) legitimately changes, by exactly one row.

And a release on a frame filtered on its own data is not clamped to the filtered
frame's length (which would leak it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)

BOUNDS = {"x": (0.0, 10.0), "y": (-5.0, 5.0)}
CATS = {"r": ["N", "S", "E"]}
XY = ["x", "y"]


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "x": rng.uniform(0, 10, 10),
            "y": rng.uniform(-5, 5, 10),
            "r": pd.Series(rng.choice(["N", "S", "E"], 10), dtype=object),
        }
    )


def _added(frame: pd.DataFrame, row: dict[str, Any]) -> pd.DataFrame:
    return pd.concat([frame, pd.DataFrame([row], index=[len(frame)])]).astype(frame.dtypes)


REAL_ROW = {"x": 9.5, "y": -4.0, "r": "S"}
MISSING_ROW = {"x": np.nan, "y": np.nan, "r": None}

Release = Callable[[pd.DataFrame, int], Any]

#: Every public release of the DataFrame and Series accessors, under the default relation.
RELEASES: dict[str, Release] = {
    "count": lambda f, rs: f.dp.count(epsilon=1.0, random_state=rs),
    "len": lambda f, rs: f.dp.len(epsilon=1.0, random_state=rs),
    "sum": lambda f, rs: f.dp.sum(XY, epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "mean": lambda f, rs: f.dp.mean(XY, epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "mean one": lambda f, rs: f.dp.mean("x", epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "var": lambda f, rs: f.dp.var(XY, epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "var ddof=0": lambda f, rs: f.dp.var(XY, 0, epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "std": lambda f, rs: f.dp.std(XY, epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "cov": lambda f, rs: f.dp.cov(XY, epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "corr": lambda f, rs: f.dp.corr(XY, epsilon=1.0, bounds=BOUNDS, random_state=rs),
    "describe": lambda f, rs: f.dp.describe(
        epsilon=1.0, bounds=BOUNDS, categories=CATS, random_state=rs
    ),
    "value_counts": lambda f, rs: f.dp.value_counts(
        "r", epsilon=1.0, categories=CATS["r"], random_state=rs
    ),
    "value_counts normalize": lambda f, rs: f.dp.value_counts(
        "r", normalize=True, epsilon=1.0, categories=CATS["r"], random_state=rs
    ),
    "proportions": lambda f, rs: f.dp.proportions(
        "r", epsilon=1.0, categories=CATS["r"], random_state=rs
    ),
    "proportions rescale": lambda f, rs: f.dp.proportions(
        "r", epsilon=1.0, categories=CATS["r"], method="rescale", random_state=rs
    ),
    "counts": lambda f, rs: f.dp.counts(
        {"big": f.x > 5, "neg": "y < 0"}, epsilon=1.0, random_state=rs
    ),
    "counts normalize": lambda f, rs: f.dp.counts(
        {"big": f.x > 5, "neg": "y < 0"}, normalize=True, epsilon=1.0, random_state=rs
    ),
    "groupby len": lambda f, rs: f.dp.groupby("r", keys=CATS["r"]).len(
        epsilon=1.0, random_state=rs
    ),
    "groupby count": lambda f, rs: f.dp.groupby("r", keys=CATS["r"]).count(
        XY, epsilon=1.0, random_state=rs
    ),
    "groupby mean": lambda f, rs: f.dp.groupby("r", keys=CATS["r"]).mean(
        XY, epsilon=1.0, bounds=BOUNDS, random_state=rs
    ),
    "groupby std other": lambda f, rs: f.dp.groupby("r", keys=["N"], other="rest").std(
        "x", epsilon=1.0, bounds=BOUNDS, random_state=rs
    ),
    "groupby agg": lambda f, rs: f.dp.groupby("r", keys=CATS["r"]).agg(
        {"x": ["mean", "var"], "y": "sum"}, epsilon=1.0, bounds=BOUNDS, random_state=rs
    ),
    "agg": lambda f, rs: f.dp.agg(
        {"x": ["count", "mean", "std"], "y": "sum"}, epsilon=1.0, bounds=BOUNDS, random_state=rs
    ),
    "agg with a median": lambda f, rs: f.dp.agg(
        {"x": ["mean", "median"], "y": "median"}, epsilon=1.0, bounds=BOUNDS, random_state=rs
    ),
    "quantile": lambda f, rs: f.dp.quantile(
        XY, [0.25, 0.5], epsilon=1.0, bounds=BOUNDS, random_state=rs
    ),
    "groupby agg with a median": lambda f, rs: f.dp.groupby("r", keys=CATS["r"]).agg(
        {"x": "mean", "y": "median"}, epsilon=1.0, bounds=BOUNDS, random_state=rs
    ),
    "contingency": lambda f, rs: f.dp.value_counts(
        ["r"], epsilon=1.0, categories=CATS, sort=False, random_state=rs
    ),
    "series count": lambda f, rs: f["x"].dp.count(epsilon=1.0, random_state=rs),
    "series len": lambda f, rs: f["x"].dp.len(epsilon=1.0, random_state=rs),
    "series sum": lambda f, rs: f["x"].dp.sum(epsilon=1.0, bounds=(0, 10), random_state=rs),
    "series mean": lambda f, rs: f["x"].dp.mean(epsilon=1.0, bounds=(0, 10), random_state=rs),
    "series var": lambda f, rs: f["x"].dp.var(epsilon=1.0, bounds=(0, 10), random_state=rs),
    "series std": lambda f, rs: f["x"].dp.std(epsilon=1.0, bounds=(0, 10), random_state=rs),
    "series value_counts": lambda f, rs: f["r"].dp.value_counts(
        epsilon=1.0, categories=CATS["r"], random_state=rs
    ),
    "series proportions": lambda f, rs: f["r"].dp.proportions(
        epsilon=1.0, categories=CATS["r"], random_state=rs
    ),
}
#: Releases of the number of rows itself: they change when a missing row is added.
OF_THE_ROWS = {"len", "series len", "counts normalize"}
#: Sorted by the noisy counts, like pandas: the order is post-processing of noisy values.
SORTED_BY_VALUE = {"value_counts", "value_counts normalize", "series value_counts"}


def _shape(release: Any, name: str) -> tuple[type, Any, Any]:
    """Type, shape and labels of a release."""
    if isinstance(release, pd.DataFrame | pd.Series):
        labels = release.index.tolist()
        labels = sorted(labels) if name in SORTED_BY_VALUE else labels
        if isinstance(release, pd.DataFrame):
            return type(release), labels, release.columns.tolist()
        return type(release), labels, (str(release.dtype), release.name)
    return type(release), None, None


def _interval(release: Any) -> Any:
    return release.attrs["dp"].interval(0.05)


def _same_interval(a: Any, b: Any) -> None:
    if isinstance(a, tuple):
        assert a == b
    else:
        pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize("name", list(RELEASES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_adding_a_row_changes_no_metadata(name: str, seed: int) -> None:
    small = _frame()
    big = _added(small, REAL_ROW)
    assert len(big) == 11 and big.iloc[:10].equals(small)
    a, b = RELEASES[name](small, seed), RELEASES[name](big, seed)
    ma, mb = a.attrs["dp"], b.attrs["dp"]
    assert ma.n is None and mb.n is None and ma.neighbouring == "add_remove"
    # to_dict() carries no noisy value: every one of its fields must be equal
    da, db = ma.to_dict(), mb.to_dict()
    assert "value" not in da
    assert da == db
    assert ma.output_bounds == mb.output_bounds
    assert _shape(a, name) == _shape(b, name)
    ia, ib = _interval(a), _interval(b)
    assert type(ia) is type(ib)
    if not isinstance(ia, tuple):
        assert _shape(ia, name) == _shape(ib, name)


@pytest.mark.parametrize("name", [n for n in RELEASES if n not in OF_THE_ROWS])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_missing_row_changes_nothing(name: str, seed: int) -> None:
    small = _frame()
    big = _added(small, MISSING_ROW)
    assert len(big) == 11 and big.iloc[:10].equals(small)
    a, b = RELEASES[name](small, seed), RELEASES[name](big, seed)
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, pd.Series):
        pd.testing.assert_series_equal(a, b)
    else:
        assert type(a) is type(b) and a == b
    assert a.attrs["dp"].to_dict() == b.attrs["dp"].to_dict()
    _same_interval(_interval(a), _interval(b))


@pytest.mark.parametrize("name", sorted(OF_THE_ROWS))
def test_a_missing_row_moves_a_row_count_by_its_exact_change_only(name: str) -> None:
    """Same noise with 10 and 11 rows: the scale and range cannot depend on the length."""
    small = _frame()
    big = _added(small, MISSING_ROW)
    for seed in range(5):
        a, b = RELEASES[name](small, seed), RELEASES[name](big, seed)
        assert a.attrs["dp"].to_dict() == b.attrs["dp"].to_dict()
        if name == "counts normalize":  # same noisy counts over a row count one larger
            assert (b <= a).all() and (b.index == a.index).all()
        elif a > 0:  # BIT clamps at 0 only
            assert b - a == 1


# ----------------------------------------------------------------------------- filtering


def test_a_filtered_count_is_not_clamped_to_the_filtered_length() -> None:
    """``df[df.x > 5].dp.count``: the filtered length is private, nothing is clamped to it.

    One column, epsilon = 1: the count gets discrete Laplace noise of scale t = 1, so
    P(release = exact) = P(noise = 0) = tanh(1 / (2t)) = 0.4621. Were the release
    clamped to [0, len(frame)] (the exact count is len(frame) here: no missing
    value), it would equal the exact count with probability 0.4621 + 0.5379 / 2 =
    0.731. Over N = 2000 seeds the fraction's standard error is 0.0112; the
    tolerance of 0.056 (5 standard errors) gives a false-alarm rate below 1e-6
    and lies 24 standard errors away from the clamped value.
    """
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.uniform(0, 10, 400)})
    filtered = df[df.x > 5]
    exact = len(filtered)
    releases = []
    for i in range(2000):
        c = filtered.dp.count(epsilon=1.0, random_state=i)
        if i == 0:
            meta = c.attrs["dp"]
            assert meta.n is None and meta.output_bounds == {"x": (0.0, math.inf)}
            # 1 / epsilon, rounded up by the exact sampler by < 2**-38 (relative)
            assert 1.0 <= meta.scale["x: count"] <= 1.0 + 2.0**-38
        releases.append(int(c["x"]))
    values = np.array(releases)
    p0 = math.tanh(0.5)
    assert abs(np.mean(values == exact) - p0) < 0.056
    # P(noise > 0) = 0.269: with 2000 draws, none above would happen with prob. 1e-273
    assert (values > exact).any()
    assert (values < exact).any()


def test_a_filtered_len_is_not_clamped_to_the_filtered_length() -> None:
    """Same as the count, for ``len`` (scale 1 at epsilon = 1; same false-alarm bound)."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": rng.uniform(0, 10, 400)})
    filtered = df[df.x > 5]
    values = np.array([int(filtered.dp.len(epsilon=1.0, random_state=i)) for i in range(2000)])
    assert abs(np.mean(values == len(filtered)) - math.tanh(0.5)) < 0.056
    assert (values > len(filtered)).any()
