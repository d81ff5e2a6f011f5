"""A release's metadata never describes an object computed from it (issue 30).

pandas copies ``attrs`` onto nearly every object derived from a release. The record
then follows: an object that still holds exactly the released numbers under the
released labels (``copy()``, ``rename("name")``, a no-op ``astype``) is the release
and keeps a working record; any other (arithmetic, selection, reordering, a new
index, a new shape or dtype, in-place changes) keeps the record's public facts but
its ``interval()`` raises :class:`~pandas_dp.errors.DerivedResultError` and its
tables say so.
"""

from __future__ import annotations

import copy
import gc
import pickle
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import DPMetadata
from pandas_dp.errors import DerivedResultError, PandasDPError

BIG = {"epsilon": 1e6, "random_state": 0}
FRAME = pd.DataFrame(
    {
        "g": list("abcd") * 50,
        "x": np.tile([1.0, 2.0, 3.0, 4.0], 50),
        "y": np.linspace(0.0, 5.0, 200),
    }
)


def release() -> pd.Series:
    """A four-entry vector release (noisy means per declared key), strictly increasing."""
    out = FRAME.dp.groupby("g", keys=list("abcd")).mean("x", bounds=(0, 5), **BIG)
    assert out.is_monotonic_increasing and len(out) == 4
    return out


def frame_release() -> pd.DataFrame:
    """A grouped release of two columns (a DataFrame)."""
    return FRAME.dp.groupby("g", keys=list("abcd")).mean(["x", "y"], bounds=(0, 5), **BIG)


def assert_derived(obj: Any) -> None:
    """The record says it is derived: interval, text, HTML and to_dict."""
    meta = obj.attrs["dp"]
    assert isinstance(meta, DPMetadata)
    assert meta.derived
    with pytest.raises(DerivedResultError, match="computed from a release") as info:
        meta.interval(0.05)
    assert isinstance(info.value, PandasDPError) and isinstance(info.value, ValueError)
    assert "no longer applies" in str(info.value)
    html = meta._repr_html_()
    assert "computed from a release" in html and "95% interval" not in html
    assert "computed from a release" in str(meta)
    record = meta.to_dict()
    assert record["derived"] is True
    # the facts that stay true are still there: what was spent, on what
    assert record["epsilon"] == meta.epsilon == 1e6
    assert record["statistic"] == meta.statistic


def assert_live(obj: Any, original: Any) -> None:
    """The record works and gives the release's own intervals."""
    meta = obj.attrs["dp"]
    assert not meta.derived
    assert meta.to_dict()["derived"] is False
    assert "95% interval" in meta._repr_html_() or not isinstance(meta.interval(0.05), tuple)
    got, want = meta.interval(0.05), original.attrs["dp"].interval(0.05)
    if isinstance(want, tuple):
        assert got == want
    else:
        pd.testing.assert_frame_equal(got, want)


SERIES_DERIVED: dict[str, Callable[[pd.Series], Any]] = {
    "p * 100": lambda p: p * 100,
    "p + 1": lambda p: p + 1,
    "-p": lambda p: -p,
    "loc two keys": lambda p: p.loc[["a", "b"]],
    "iloc first two": lambda p: p.iloc[:2],
    "head(2)": lambda p: p.head(2),
    "sort_values descending": lambda p: p.sort_values(ascending=False),
    "round": lambda p: p.round(),
    "rename index": lambda p: p.rename(index=str.upper),
    "set_axis": lambda p: p.set_axis(list("wxyz")),
    "reset_index": lambda p: p.reset_index(drop=True),
    "astype int": lambda p: p.astype(np.int64),
    "to_frame": lambda p: p.to_frame(),
    "concat with itself": lambda p: pd.concat([p, p]),
    "cumsum": lambda p: p.cumsum(),
    "clip": lambda p: p.clip(0.0, 2.0),
    "where": lambda p: p.where(p > 2.0),
    "groupby sum": lambda p: p.groupby(lambda k: k in "ab").sum(),
}


@pytest.mark.parametrize("name", list(SERIES_DERIVED))
def test_an_object_computed_from_a_series_release_refuses_its_interval(name: str) -> None:
    p = release()
    assert_derived(SERIES_DERIVED[name](p))
    assert_live(p, release())  # the release itself is untouched


SERIES_SAME: dict[str, Callable[[pd.Series], Any]] = {
    "copy": lambda p: p.copy(),
    "deep copy": lambda p: p.copy(deep=True),
    "copy.deepcopy": copy.deepcopy,
    "rename": lambda p: p.rename("x_mean"),
    "rename_axis": lambda p: p.rename_axis("group"),
    "astype float (no-op)": lambda p: p.astype(float),
    "head() of four": lambda p: p.head(),
    "loc[:]": lambda p: p.loc[:],
    "concat of one": lambda p: pd.concat([p]),
    "pickled": lambda p: pickle.loads(pickle.dumps(p)),
}


@pytest.mark.parametrize("name", list(SERIES_SAME))
def test_a_copy_or_rename_with_the_released_numbers_keeps_its_record(name: str) -> None:
    p = release()
    assert_live(SERIES_SAME[name](p), p)


def test_a_copy_of_a_pickled_release_keeps_its_record_and_a_derived_one_does_not() -> None:
    back = pickle.loads(pickle.dumps(release()))
    assert_live(back.copy(), back)
    assert_derived(back * 2)


def test_copies_are_checked_when_read_not_when_made() -> None:
    """A copy changed in place afterwards, or whose labels pandas sets after the copy,
    no longer holds the release."""
    p = release()
    q = p.copy()
    meta = q.attrs["dp"]
    assert not meta.derived
    q.iloc[0] = 100.0
    assert_derived(q)
    with pytest.raises(DerivedResultError):
        meta.interval(0.05)
    # a temporary: the record is read after the expression that made it is gone
    with pytest.raises(DerivedResultError):
        p.rename(index=str.upper).attrs["dp"].interval(0.05)
    with pytest.raises(DerivedResultError):
        (p * 100).attrs["dp"].interval(0.05)


def test_the_release_changed_in_place_refuses_its_interval() -> None:
    for change in (
        lambda p: p.__setitem__("a", 100.0),
        lambda p: p.__imul__(100),
        lambda p: setattr(p, "index", list("wxyz")),
    ):
        p = release()
        change(p)
        assert_derived(p)
    p = release()
    meta = p.attrs["dp"]
    p.iloc[0] = 100.0
    with pytest.raises(DerivedResultError):
        meta.interval(0.05)
    p = release()
    meta = p.attrs["dp"]
    del p  # the record outlives its release: it still describes it
    assert not meta.derived
    meta.interval(0.05)


def test_a_derived_object_stays_derived_even_with_the_released_numbers() -> None:
    """``(p * 100) / 100`` holds the released numbers again: that is a coincidence of
    arithmetic, and pandas' copy of the record is judged against the release."""
    p = release()
    back = (p * 2) / 2
    assert back.equals(p)
    assert_derived(back)


FRAME_DERIVED: dict[str, Callable[[pd.DataFrame], Any]] = {
    "df[['x']]": lambda d: d[["x"]],
    "df['x']": lambda d: d["x"],
    "df.T": lambda d: d.T,
    "df * 2": lambda d: d * 2,
    "rename columns": lambda d: d.rename(columns={"x": "z"}),
    "iloc rows": lambda d: d.iloc[1:],
    "stack": lambda d: d.stack(),
    "mean": lambda d: d.mean(),
}


@pytest.mark.parametrize("name", list(FRAME_DERIVED))
def test_an_object_computed_from_a_frame_release_refuses_its_interval(name: str) -> None:
    d = frame_release()
    assert_derived(FRAME_DERIVED[name](d))
    assert_live(d.copy(), d)
    assert_live(d, frame_release())


def test_the_transpose_of_a_square_release_is_derived() -> None:
    """Same type and shape as the release: judged on its labels and numbers."""
    square = FRAME.dp.groupby("g", keys=["a", "b"]).mean(["x", "y"], bounds=(0, 5), **BIG)
    assert square.shape == (2, 2)
    assert_derived(square.T)
    covariance = FRAME.dp.cov(["x", "y"], bounds=(0, 5), **BIG)
    assert covariance.shape == (2, 2)
    assert_derived(covariance * 2)
    assert_derived(covariance.rename(index=str.upper))
    assert_live(covariance.copy(), covariance)


def test_concat_of_two_releases_drops_the_records() -> None:
    """pandas keeps attrs in a concat only when every input has the same ones."""
    p, q = release(), release()
    assert pd.concat([p, q]).attrs == {}
    assert_derived(pd.concat([p, p]))


def test_other_releases_follow_the_same_rule() -> None:
    releases: dict[str, Any] = {
        "describe": FRAME.dp.describe(["x", "y"], bounds=(0, 5), **BIG),
        "agg": FRAME.dp.agg({"x": ["mean", "count"]}, bounds=(0, 5), **BIG),
        "quantile": FRAME.dp.quantile(["x", "y"], [0.25, 0.5], bounds=(0, 5), **BIG),
        "quantiles grouped": FRAME.dp.groupby("g", keys=list("abcd")).median(
            "x", bounds=(0, 5), **BIG
        ),
        "value_counts": FRAME.dp.value_counts("g", categories=list("abcd"), **BIG),
        "private keys": FRAME.dp.groupby("g", keys="private", delta=1e-6).len(**BIG),
        "var of two": FRAME.dp.var(["x", "y"], bounds=(0, 5), **BIG),
        "series describe": FRAME["x"].dp.describe(bounds=(0, 5), **BIG),
        # relabelled by the accessor after the release: attached again to its shape
        "groupby agg by name": FRAME.dp.groupby("g", keys=list("abcd")).agg(
            {"x": "mean", "y": "median"}, bounds=(0, 5), **BIG
        ),
        "groupby column agg": FRAME.dp.groupby("g", keys=list("abcd"))["x"].agg(
            "mean", bounds=(0, 5), **BIG
        ),
        "groupby column agg list": FRAME.dp.groupby("g", keys=list("abcd"))["x"].agg(
            ["mean", "std"], bounds=(0, 5), **BIG
        ),
    }
    for name, r in releases.items():
        assert not r.attrs["dp"].derived, name
        r.attrs["dp"].interval(0.05)
        assert_live(r.copy(), r)
        assert_derived(r * 3)
        assert_derived(r.iloc[:1])


def test_scalar_releases_give_plain_numbers() -> None:
    m = FRAME.dp.mean("x", bounds=(0, 5), **BIG)
    n = FRAME.dp.len(**BIG)
    for derived in (m * 2, m + 0, -m, abs(m), round(m, 1), n + 1, -n, n * 1):
        assert type(derived) in (float, int)
        assert not hasattr(derived, "attrs")
    again = copy.deepcopy(m)
    assert again.attrs["dp"].interval(0.05) == m.attrs["dp"].interval(0.05)
    assert not again.attrs["dp"].derived


def test_a_record_reused_on_a_new_object_is_checked_against_that_object() -> None:
    """The Series accessor's describe and agg reuse a frame release's record."""
    s = FRAME["x"].dp.agg(["mean", "std"], bounds=(0, 5), **BIG)
    assert not s.attrs["dp"].derived
    assert_derived(s * 2)


def test_records_keep_no_object_alive() -> None:
    """A release is freed as soon as it is dropped (its record holds it weakly); an
    object of the release's shape, whose record holds it to compare at each read, is
    freed by the garbage collector."""
    p = release()
    meta = p.attrs["dp"]
    gone = weakref.ref(p)
    del p
    assert gone() is None
    assert not meta.derived  # the record still describes its release
    p = release()
    q = p + 1
    held = weakref.ref(q)
    del q
    gc.collect()
    assert held() is None
