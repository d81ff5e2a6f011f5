"""pandas' group-by options and named aggregation, with pandas as the oracle (issue 32).

Each call is made on pandas with the same options, the declared keys equal to the
data's keys, at a large epsilon: the release has pandas' type, index, columns and
names, and its values are close to pandas'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp import PrivacyBudget

KW: dict[str, Any] = {"epsilon": 1e6, "bounds": (0, 10), "random_state": 0}
COUNTS: dict[str, Any] = {"epsilon": 1e6, "random_state": 0}

DF = pd.DataFrame(
    {
        "g": ["b", "a", "b", "c", None, "a"] * 20,
        "h": [1, 2, 2, 1, 1, 2] * 20,
        "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] * 20,
        "y": [5.0, 6.0, 7.0, 8.0, 9.0, 3.0] * 20,
        "c": pd.Categorical(["u", "v", "u", "w", "v", "u"] * 20, categories=["u", "v", "w"]),
    }
)
KEYS = ["a", "b", "c"]


def same_shape(ours: Any, theirs: Any, *, values: bool = True) -> None:
    """Type, index, columns and names equal to pandas'; values close (large epsilon)."""
    assert type(ours) is type(theirs)
    pd.testing.assert_index_equal(ours.index, theirs.index, exact=False)
    if isinstance(theirs, pd.DataFrame):
        assert list(ours.columns) == list(theirs.columns)
        assert ours.columns.names == theirs.columns.names
    else:
        assert ours.name == theirs.name
    if values:
        numeric = ours.select_dtypes("number") if isinstance(ours, pd.DataFrame) else ours
        expected = theirs[numeric.columns] if isinstance(theirs, pd.DataFrame) else theirs
        np.testing.assert_allclose(
            np.asarray(numeric, dtype=float), np.asarray(expected, dtype=float), atol=1e-2
        )


# ---------------------------------------------------------------- as_index=False
AS_INDEX: list[tuple[str, Callable[[Any], Any], Callable[[Any], Any]]] = [
    ("mean", lambda g: g[["x", "y"]].mean(**KW), lambda g: g[["x", "y"]].mean()),
    ("col mean", lambda g: g["x"].mean(**KW), lambda g: g["x"].mean()),
    ("sum", lambda g: g["x"].sum(**KW), lambda g: g["x"].sum()),
    ("size", lambda g: g.size(**COUNTS), lambda g: g.size()),
    ("count", lambda g: g[["x", "y"]].count(**COUNTS), lambda g: g[["x", "y"]].count()),
    ("agg str", lambda g: g.agg({"x": "mean"}, **KW), lambda g: g.agg({"x": "mean"})),
    (
        "agg list",
        lambda g: g.agg({"x": ["mean", "sum"]}, **KW),
        lambda g: g.agg({"x": ["mean", "sum"]}),
    ),
    (
        "col agg list",
        lambda g: g["x"].agg(["mean", "sum"], **KW),
        lambda g: g["x"].agg(["mean", "sum"]),
    ),
    (
        "value_counts",
        lambda g: g["c"].value_counts(**COUNTS, sort=False, categories=["u", "v", "w"]),
        lambda g: g["c"].value_counts(sort=False),
    ),
]


@pytest.mark.parametrize(("name", "ours", "theirs"), AS_INDEX, ids=[a[0] for a in AS_INDEX])
@pytest.mark.parametrize("by", ["g", ["g", "h"]])
def test_as_index_false_gives_pandas_columns(
    name: str, ours: Callable[[Any], Any], theirs: Callable[[Any], Any], by: Any
) -> None:
    keys = KEYS if by == "g" else [("a", 2), ("b", 1), ("b", 2), ("c", 1)]  # the data's
    g = DF.dp.groupby(by, keys=keys, as_index=False)
    out = ours(g)
    expected = theirs(DF.groupby(by, as_index=False, observed=False))
    same_shape(out, expected)
    assert isinstance(out.index, pd.RangeIndex)
    assert out.attrs["dp"].epsilon > 0  # the release's record is kept,
    assert not out.attrs["dp"].derived  # bound to the reshaped release


def test_as_index_false_quantile_list_and_describe_match_pandas_columns() -> None:
    g = DF.dp.groupby("g", keys=KEYS, as_index=False)
    p = DF.groupby("g", as_index=False)
    q = g[["x"]].quantile([0.25, 0.5], **KW)
    same_shape(q, p[["x"]].quantile([0.25, 0.5]), values=False)
    d = g["x"].describe(**KW)
    assert list(d.columns)[:3] == list(p["x"].describe().columns)[:3]


def test_as_index_true_is_unchanged_and_bit_identical() -> None:
    a = DF.dp.groupby("g", keys=KEYS).mean("x", epsilon=1.0, bounds=(0, 10), random_state=3)
    b = DF.dp.groupby("g", keys=KEYS, as_index=True, sort=True, dropna=True).mean(
        "x", epsilon=1.0, bounds=(0, 10), random_state=3
    )
    pd.testing.assert_series_equal(a, b)
    c = DF.dp.groupby("g", keys=KEYS, as_index=False).mean(
        "x", epsilon=1.0, bounds=(0, 10), random_state=3
    )
    np.testing.assert_array_equal(c["x"].to_numpy(), a.to_numpy())  # the same release


# ---------------------------------------------------------------- sort=False
def test_sort_false_gives_declared_order() -> None:
    out = DF.dp.groupby("g", keys=["c", "a", "b"], sort=False)["x"].mean(**KW)
    assert list(out.index) == ["c", "a", "b"]
    expected = DF.groupby("g")["x"].mean().loc[["c", "a", "b"]]
    np.testing.assert_allclose(out.to_numpy(), expected.to_numpy(), atol=1e-2)
    sorted_ = DF.dp.groupby("g", keys=["c", "a", "b"])["x"].mean(**KW)
    assert list(sorted_.index) == ["a", "b", "c"]


def test_sort_false_with_a_product_and_key_tuples() -> None:
    keys = {"g": ["c", "a", "b"], "h": [2, 1]}
    out = DF.dp.groupby(["g", "h"], keys=keys, sort=False).size(**COUNTS)
    assert list(out.index) == [(g, h) for g in ["c", "a", "b"] for h in [2, 1]]
    expected = DF.groupby(["g", "h"]).size().reindex(out.index, fill_value=0)
    np.testing.assert_allclose(out.to_numpy(), expected.to_numpy(), atol=1)
    tuples = [("b", 2), ("a", 1), ("a", 2)]
    t = DF.dp.groupby(["g", "h"], keys=tuples, sort=False).size(**COUNTS)
    assert list(t.index) == tuples
    expected = DF.groupby(["g", "h"]).size().reindex(pd.MultiIndex.from_tuples(tuples))
    np.testing.assert_allclose(t.to_numpy(), expected.fillna(0).to_numpy(), atol=1)


# ---------------------------------------------------------------- dropna
def test_dropna_false_releases_the_missing_key_group_like_pandas() -> None:
    out = DF.dp.groupby("g", keys=KEYS, dropna=False)["x"].mean(**KW)
    same_shape(out, DF.groupby("g", dropna=False)["x"].mean())
    declared = DF.dp.groupby("g", keys=["a", None, "b", "c"], dropna=False)["x"].mean(**KW)
    pd.testing.assert_index_equal(declared.index, out.index)
    unsorted = DF.dp.groupby("g", keys=["b", None, "a", "c"], dropna=False, sort=False).size(
        **COUNTS
    )
    assert pd.isna(unsorted.index[1]) and list(unsorted.index[[0, 2, 3]]) == ["b", "a", "c"]


def _no_nan(index: pd.Index) -> pd.MultiIndex:
    """Key tuples with NaN written "NA" (NaN equals nothing, so sets miss it)."""
    return pd.MultiIndex.from_frame(index.to_frame().astype(object).fillna("NA"))


def test_dropna_false_with_several_columns_and_a_categorical_key() -> None:
    df = DF.assign(h=DF["h"].where(DF.index % 7 != 0))  # some missing h
    out = df.dp.groupby(["g", "h"], keys={"g": KEYS, "h": [1.0, 2.0]}, dropna=False).size(**COUNTS)
    expected = df.groupby(["g", "h"], dropna=False).size()
    ours = pd.Series(out.to_numpy(), index=_no_nan(out.index))
    theirs = pd.Series(expected.to_numpy(), index=_no_nan(expected.index))
    assert set(theirs.index) <= set(ours.index)  # every observed key, NaN ones too
    assert len(ours) == 4 * 3  # the product, a missing key in each column
    np.testing.assert_allclose(ours[theirs.index].to_numpy(), theirs.to_numpy(), atol=1)
    cat = DF.assign(c=DF["c"].where(DF.index % 5 != 0))
    c = cat.dp.groupby("c", keys={"c": "dtype"}, dropna=False)["x"].count(**COUNTS)
    same_shape(c, cat.groupby("c", dropna=False, observed=False)["x"].count())


def test_dropna_false_releases_the_missing_group_even_when_empty() -> None:
    """Noise only: whether a row has a missing key is private, so the group is
    released always, as every declared key is."""
    full = DF.dropna(subset=["g"])
    out = full.dp.groupby("g", keys=KEYS, dropna=False).size(epsilon=1.0, random_state=0)
    assert len(out) == 4 and pd.isna(out.index[-1])


def test_a_declared_missing_key_needs_dropna_false_before_the_charge() -> None:
    budget = PrivacyBudget(epsilon=10.0)
    with pytest.raises(ValueError, match="dropna=False"):
        DF.dp.groupby("g", keys=["a", None]).size(epsilon=1.0, budget=budget)
    assert budget.spent[0] == 0.0 and len(budget.ledger) == 0


# ---------------------------------------------------------------- observed
def test_observed_false_is_every_declared_category_like_pandas() -> None:
    out = DF.dp.groupby("c", keys={"c": "dtype"}, observed=False)["x"].mean(**KW)
    same_shape(out, DF.groupby("c", observed=False)["x"].mean())


@pytest.mark.parametrize(
    ("make", "fragments"),
    [
        (
            lambda: DF.dp.groupby("c", keys={"c": "dtype"}, observed=True),
            ["observed=True", "private", "keys='private'", "observed=False"],
        ),
        (
            lambda: DF.dp.groupby("g", keys="private", delta=1e-6, dropna=False),
            ["dropna=False", "keys='private'", "fillna"],
        ),
        (
            lambda: DF.dp.groupby("c", keys="private", delta=1e-6, observed=False),
            ["observed=False", "keys='private'", "Declare the keys"],
        ),
        (lambda: DF.dp.groupby("g", keys=KEYS, level=0), ["level=0", "reset_index"]),
        (lambda: DF.dp.groupby("g", keys=KEYS, sort="yes"), ["sort", "True or False"]),
    ],
)
def test_an_option_with_no_private_meaning_is_refused_with_the_way_out(
    make: Callable[[], Any], fragments: list[str]
) -> None:
    with pytest.raises((ValueError, TypeError)) as err:
        make()
    for fragment in fragments:
        assert fragment in str(err.value), str(err.value)


def test_refused_options_charge_nothing() -> None:
    """The refusals are at groupby(), before any release; a refused release charges
    nothing either."""
    budget = PrivacyBudget(epsilon=10.0)
    with pytest.raises(ValueError):
        DF.dp.groupby("c", keys={"c": "dtype"}, observed=True).mean(
            "x", epsilon=1.0, bounds=(0, 10), budget=budget
        )
    with pytest.raises(TypeError, match="not both"):
        DF.dp.groupby("g", keys=KEYS).agg(
            {"x": "mean"}, m=("x", "mean"), epsilon=1.0, bounds=(0, 10), budget=budget
        )
    with pytest.raises(TypeError, match="named aggregations"):
        DF.dp.groupby("g", keys=KEYS).agg(epsilon=1.0, bounds=(0, 10), budget=budget)
    assert budget.spent[0] == 0.0 and len(budget.ledger) == 0


def test_observed_true_with_private_keys_and_non_categorical_keys() -> None:
    g = DF.dp.groupby("c", keys="private", delta=1e-6, observed=True)
    out = g["x"].mean(**KW)
    assert set(out.index) <= {"u", "v", "w"}
    # pandas ignores observed for a non-categorical key: so does the release
    a = DF.dp.groupby("g", keys=KEYS, observed=True)["x"].mean(**KW)
    pd.testing.assert_series_equal(a, DF.dp.groupby("g", keys=KEYS)["x"].mean(**KW))


def test_group_keys_has_no_effect() -> None:
    a = DF.dp.groupby("g", keys=KEYS, group_keys=False)["x"].sum(**KW)
    pd.testing.assert_series_equal(a, DF.dp.groupby("g", keys=KEYS)["x"].sum(**KW))


# ---------------------------------------------------------------- named aggregation
def test_named_aggregation_like_pandas() -> None:
    g = DF.dp.groupby("g", keys=KEYS)
    out = g.agg(m=("x", "mean"), s=pd.NamedAgg("y", "sum"), n=("x", "count"), **KW)
    same_shape(out, DF.groupby("g").agg(m=("x", "mean"), s=("y", "sum"), n=("x", "count")))
    assert out.attrs["dp"].statistic is not None
    col = g["x"].agg(m="mean", t="sum", **KW)
    same_shape(col, DF.groupby("g")["x"].agg(m="mean", t="sum"))
    flat = DF.dp.groupby("g", keys=KEYS, as_index=False).agg(m=("x", "mean"), **KW)
    same_shape(flat, DF.groupby("g", as_index=False).agg(m=("x", "mean")))


def test_named_aggregation_is_the_release_of_its_statistics() -> None:
    """Renaming is post-processing: the same numbers as agg(dict) with the same seed."""
    g = DF.dp.groupby("g", keys=KEYS)
    named = g.agg(a=("x", "mean"), b=("x", "std"), **KW)
    plain = g.agg({"x": ["mean", "std"]}, **KW)
    np.testing.assert_array_equal(named.to_numpy(), plain.to_numpy())


def test_named_aggregation_refuses_a_function() -> None:
    with pytest.raises(TypeError, match="string"):
        DF.dp.groupby("g", keys=KEYS).agg(m=("x", np.mean), **KW)
    with pytest.raises(TypeError, match="NamedAgg"):
        DF.dp.groupby("g", keys=KEYS).agg(m="mean", **KW)


# ---------------------------------------------------------------- refused keywords
@pytest.mark.parametrize(
    ("call", "fragments"),
    [
        (
            lambda g, b: g.quantile("x", 0.5, interpolation="linear", budget=b, **KW),
            ["interpolation='linear'", "rank", "bins="],
        ),
        (
            lambda g, b: g["x"].mean(engine="numba", budget=b, **KW),
            ["engine='numba'", "Leave engine= out"],
        ),
        (
            lambda g, b: g.agg({"x": "sum"}, engine_kwargs={"parallel": True}, budget=b, **KW),
            ["engine_kwargs=", "numba"],
        ),
        (
            lambda g, b: DF.dp.quantile("x", interpolation="nearest", budget=b, **KW),
            ["interpolation='nearest'"],
        ),
    ],
)
def test_a_pandas_keyword_with_no_private_meaning_is_refused_before_the_charge(
    call: Callable[[Any, Any], Any], fragments: list[str]
) -> None:
    """Not Python's "unexpected keyword": the message says why and what to do, and
    the budget is untouched."""
    budget = PrivacyBudget(epsilon=10.0)
    g = DF.dp.groupby("g", keys=KEYS)
    with pytest.raises(ValueError) as err:
        call(g, budget)
    for fragment in [*fragments, "no private meaning", "Nothing was charged"]:
        assert fragment in str(err.value), str(err.value)
    assert budget.spent[0] == 0.0 and len(budget.ledger) == 0


def test_the_refused_keywords_at_their_default_change_nothing() -> None:
    g = DF.dp.groupby("g", keys=KEYS)
    a = g["x"].mean(engine=None, engine_kwargs=None, **KW)
    pd.testing.assert_series_equal(a, g["x"].mean(**KW))
    q = g.quantile("x", 0.5, interpolation=None, **KW)
    pd.testing.assert_series_equal(q, g.quantile("x", 0.5, **KW))


def test_named_aggregation_on_the_frame_accessor_like_pandas() -> None:
    out = DF.dp.agg(m=("x", "mean"), s=pd.NamedAgg("y", "sum"), t=("x", "sum"), **KW)
    want = DF.agg(m=("x", "mean"), s=("y", "sum"), t=("x", "sum"))
    pd.testing.assert_index_equal(out.index, want.index)
    assert list(out.columns) == list(want.columns)
    np.testing.assert_array_equal(out.isna().to_numpy(), want.isna().to_numpy())
    np.testing.assert_allclose(out.fillna(0).to_numpy(), want.fillna(0).to_numpy(), rtol=1e-4)
    plain = DF.dp.agg({"x": ["mean", "sum"], "y": ["sum"]}, **KW)  # the same release
    assert out.loc["t", "x"] == plain.loc["sum", "x"] and out.loc["s", "y"] == plain.loc["sum", "y"]


def test_private_keys_take_as_index_false() -> None:
    out = DF.dp.groupby("g", keys="private", delta=1e-6, as_index=False).size(
        epsilon=5.0, random_state=0
    )
    assert list(out.columns) == ["g", "size"] and isinstance(out.index, pd.RangeIndex)
    assert set(out["g"]) <= {"a", "b", "c"}


def test_dask_groupby_refuses_the_same_options_before_the_charge() -> None:
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(DF, npartitions=3)
    with pytest.raises(ValueError, match="observed=True"):
        ddf.dp.groupby("c", keys={"c": "dtype"}, observed=True)
    with pytest.raises(ValueError, match="level="):
        ddf.dp.groupby("g", keys=KEYS, level=0)
    budget = PrivacyBudget(epsilon=10.0)
    with pytest.raises(ValueError, match="dropna=False"):
        ddf.dp.groupby("g", keys=["a", None]).size(epsilon=1.0, budget=budget)
    assert len(budget.ledger) == 0


def test_named_aggregation_intervals_are_labelled_by_the_new_names() -> None:
    """A named aggregation's interval() is indexed like its cells, ``(key, name)`` (the
    frame's ``(name, column)``), and holds the same bounds as the release of the same
    statistics under their own names."""
    g = DF.dp.groupby("g", keys=KEYS)
    named = g.agg(m=("x", "mean"), s=("y", "std"), t=("x", "sum"), **KW)
    plain = g.agg({"x": ["mean", "sum"], "y": ["std"]}, **KW)
    got, base = named.attrs["dp"].interval(0.05), plain.attrs["dp"].interval(0.05)
    want = [(k, n) for k in KEYS for n in ("m", "s", "t")]
    assert list(got.index) == want
    old = {"m": ("x", "mean"), "s": ("y", "std"), "t": ("x", "sum")}
    for (key, name), row in got.iterrows():
        np.testing.assert_array_equal(row.to_numpy(), base.loc[(key, *old[name])].to_numpy())
    col = g["x"].agg(lo="mean", hi="var", **KW).attrs["dp"].interval(0.05)
    assert list(col.index) == [(k, n) for k in KEYS for n in ("lo", "hi")]
    frame = DF.dp.agg(m=("x", "mean"), v=("y", "var"), w=("x", "sum"), **KW)
    rows = frame.attrs["dp"].interval(0.05)
    assert list(rows.index) == [("m", "x"), ("v", "y"), ("w", "x")]
    whole = DF.dp.agg({"x": ["mean", "sum"], "y": ["var"]}, **KW).attrs["dp"].interval(0.05)
    np.testing.assert_array_equal(rows.loc[("w", "x")].to_numpy(), whole.loc[("x", "sum")])
