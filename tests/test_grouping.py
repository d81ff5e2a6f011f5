"""Group-by keys are public facts: resolved from the caller or a schema, never the data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from pandas_dp.errors import MissingBoundsError
from pandas_dp.request.grouping import resolve_grouping

FRAME = pd.DataFrame(
    {
        "sex": ["f", "m", "f", "x"],
        "smoker": [True, False, True, False],
        "region": pd.Categorical(["N", "S", "N", "N"], categories=["S", "N", "E"]),
        "age": [20.0, 30.0, 40.0, 50.0],
    }
)


def test_list_keys_are_sorted_and_absent_keys_kept() -> None:
    g = resolve_grouping(FRAME, "sex", keys=["m", "f", "z"], schema=None)
    assert g.keys is not None
    assert list(g.keys) == ["f", "m", "z"]  # 'z' is not in the data: released all the same
    assert g.keys.name == "sex"
    assert g.size == 3 and g.positions is None


def test_keys_never_come_from_the_data() -> None:
    with pytest.raises(MissingBoundsError):
        resolve_grouping(FRAME, "sex", keys=None, schema=None)
    # a data column's own categorical dtype is not a declaration either
    with pytest.raises(MissingBoundsError):
        resolve_grouping(FRAME, "region", keys=None, schema=None)


def test_boolean_column_declares_its_two_values() -> None:
    g = resolve_grouping(FRAME, "smoker", keys=None, schema=None)
    assert g.keys is not None and list(g.keys) == [False, True]


def test_schema_isin_declares_keys() -> None:
    schema = pa.DataFrameSchema({"sex": pa.Column(str, pa.Check.isin(["m", "f"]))})
    g = resolve_grouping(FRAME, "sex", keys=None, schema=schema)
    assert g.keys is not None and list(g.keys) == ["f", "m"]


def test_several_columns_give_the_product_of_domains() -> None:
    g = resolve_grouping(FRAME, ["sex", "smoker"], keys={"sex": ["m", "f"]}, schema=None)
    assert g.keys is not None
    assert isinstance(g.keys, pd.MultiIndex)
    assert list(g.keys.names) == ["sex", "smoker"]
    assert list(g.keys) == [("f", False), ("f", True), ("m", False), ("m", True)]


def test_explicit_tuples_map_to_positions() -> None:
    keys = pd.DataFrame({"sex": ["m", "f"], "smoker": [True, False]})
    g = resolve_grouping(FRAME, ["sex", "smoker"], keys=keys, schema=None)
    assert g.keys is not None and list(g.keys) == [("f", False), ("m", True)]
    assert g.positions is not None
    # product order: (f, False), (f, True), (m, False), (m, True)
    assert g.positions.tolist() == [0, -1, -1, 1]


def test_other_group_is_last_and_must_not_clash() -> None:
    g = resolve_grouping(FRAME, "sex", keys=["f", "m"], schema=None, other="rest")
    assert list(g.labels) == ["f", "m", "rest"] and g.size == 3
    with pytest.raises(ValueError, match="also a declared key"):
        resolve_grouping(FRAME, "sex", keys=["f", "m"], schema=None, other="f")


@pytest.mark.parametrize(
    ("by", "keys", "error", "match"),
    [
        ("nope", ["a"], KeyError, "not in the frame"),
        ([], ["a"], ValueError, "by is empty"),
        (["sex", "sex"], None, ValueError, "twice"),
        ("sex", [], ValueError, "empty"),
        ("sex", ["f", "f"], ValueError, "repeat"),
        ("sex", "f", TypeError, "keys must be"),
        (["sex", "smoker"], [("f",)], ValueError, "tuple of 2"),
        ("sex", {"age": [1]}, ValueError, "not group-by columns"),
        ("sex", "private", ValueError, "delta"),
        (["sex", "smoker"], "private", ValueError, "one group-by column"),
    ],
)
def test_bad_declarations_raise_precisely(
    by: object, keys: object, error: type, match: str
) -> None:
    with pytest.raises(error, match=match):
        resolve_grouping(FRAME, by, keys=keys, schema=None)


def test_private_keys_need_delta_and_declared_keys_refuse_it() -> None:
    g = resolve_grouping(FRAME, "sex", keys="private", schema=None, delta=1e-6)
    assert g.private and g.keys is None and g.delta == 1e-6
    with pytest.raises(ValueError, match="partition selection"):
        resolve_grouping(FRAME, "sex", keys=["f"], schema=None, delta=1e-6)


def test_unsortable_keys_keep_declaration_order() -> None:
    frame = pd.DataFrame({"k": [1, "a"]})
    g = resolve_grouping(frame, "k", keys=["a", 1, np.int64(2)], schema=None)
    assert g.keys is not None and list(g.keys) == ["a", 1, 2]


def test_a_dict_of_keys_takes_dtype_and_refuses_other_strings() -> None:
    """A string in a dict of keys is not a list of keys (it was read as its
    characters: keys 'd', 'e', 'p', 't', 'y'); 'dtype' is the declared dtype's."""
    cat = pd.CategoricalDtype(["x", "y", "z"])
    frame = pd.DataFrame({"k": pd.Series(["x", "y"] * 5, dtype=cat), "k2": ["a", "b"] * 5})
    grouping = resolve_grouping(
        frame, ["k", "k2"], keys={"k": "dtype", "k2": ["a", "b"]}, schema=None
    )
    assert grouping.levels[0] == ("x", "y", "z")
    with pytest.raises(TypeError, match="got the string 'ab'"):
        resolve_grouping(frame, "k2", keys={"k2": "ab"}, schema=None)
    with pytest.raises(ValueError, match=r"needs a pd\.CategoricalDtype"):
        resolve_grouping(frame, "k2", keys={"k2": "dtype"}, schema=None)


def test_a_contingency_table_takes_dtype_and_refuses_what_it_ignored() -> None:
    import pandas_dp

    cat = pd.CategoricalDtype(["x", "y", "z"])
    frame = pd.DataFrame(
        {"k": pd.Series(["x", "y"] * 50, dtype=cat), "j": pd.Series(["u"] * 100, dtype=cat)}
    )
    out = frame.dp.value_counts(["k", "j"], categories="dtype", epsilon=1.0, random_state=0)
    assert len(out) == 9
    budget = pandas_dp.PrivacyBudget(5.0)
    for option in ({"dropna": False}, {"other": "rest"}, {"via": "proportions"}):
        with pytest.raises(NotImplementedError, match="several columns does not support"):
            frame.dp.value_counts(
                ["k", "j"], categories="dtype", epsilon=1.0, budget=budget, **option
            )
    assert budget.spent == (0.0, 0.0)


def test_private_keys_are_labelled_by_the_group_not_its_first_row() -> None:
    """A released private key is the same label whichever spelling came first: -0.0
    and 0.0, numpy.str_ and str, datetime and Timestamp; a categorical column's
    category list (read off the data) is not carried into the index."""
    import datetime

    import pandas_dp  # noqa: F401

    def keys(values: list[object], dtype: object = None) -> pd.Index:
        frame = pd.DataFrame({"k": pd.Series(values * 200, dtype=dtype)})
        return frame.dp.groupby("k", keys="private", delta=1e-6).len(epsilon=50.0).index

    plain, first = keys([0.0, 1.0]), keys([-0.0, 0.0, 1.0])
    assert list(plain) == list(first) and not np.signbit(first[0])
    assert not np.signbit(keys([-0.0, 0.0, 1.0], "Float64")[0])
    assert type(keys([np.str_("a"), "a"], object)[0]) is str
    stamp = keys([datetime.datetime(2020, 1, 1), pd.Timestamp("2020-01-01")], object)[0]
    assert type(stamp) is pd.Timestamp
    categorical = keys(["a", "b", "secret"], "category")
    assert not isinstance(categorical.dtype, pd.CategoricalDtype)


def test_a_categorical_column_keeps_the_declared_order_like_pandas() -> None:
    """pandas orders the groups of a categorical column by its categories (a
    CategoricalIndex); here the declared keys stand in for them, in their order."""
    order = ["low", "mid", "high"]
    k = pd.Categorical(["high", "low", "mid", "low"] * 50, categories=order, ordered=True)
    df = pd.DataFrame({"k": k, "s": ["b", "a"] * 100, "x": np.arange(200.0) % 100})
    got = df.dp.groupby("k", keys={"k": order}).mean("x", epsilon=1e3, bounds={"x": (0, 100)})
    want = df.groupby("k", observed=False)["x"].mean()
    pd.testing.assert_index_equal(got.index, want.index)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), atol=1.0)
    two = df.dp.groupby(["k", "s"], keys={"k": order, "s": ["b", "a"]}).count(epsilon=1e3)
    pd.testing.assert_index_equal(two.index, df.groupby(["k", "s"], observed=False).count().index)
    assert two.index.levels[0].dtype == k.dtype
    # explicit key tuples: the categorical column's values in declaration order
    tuples = df.dp.groupby(["k", "s"], keys=[("mid", "a"), ("high", "b"), ("mid", "b")])
    assert list(tuples.count(epsilon=1.0).index) == [("mid", "a"), ("mid", "b"), ("high", "b")]
    # a text column is still sorted, as pandas sorts it
    text = df.assign(k=df["k"].astype(str))
    assert list(text.dp.groupby("k", keys={"k": order}).count(epsilon=1.0).index) == sorted(order)


def test_a_categorical_index_holds_only_declared_categories() -> None:
    """The column's own categories come from the data (one person's rare value
    here): the released index's categories are the declared ones, from a schema's
    CategoricalDtype as from a list."""
    df = pd.DataFrame({"k": ["a", "b"] * 50 + ["rare"], "x": 1.0}).astype({"k": "category"})
    schema = pa.DataFrameSchema({"k": pa.Column(pd.CategoricalDtype(["b", "a"]))})
    got = df.dp.groupby("k", other="?").count(epsilon=1.0, schema=schema)
    assert list(got.index) == ["b", "a", "?"] and "rare" not in str(got.index.dtype)
    by_list = df.dp.groupby("k", keys=["b", "a"]).count(epsilon=1.0)
    assert list(by_list.index.categories) == ["b", "a"]
