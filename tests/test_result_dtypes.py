"""Result value dtypes like pandas' for the input's dtypes (issue 32): nullable in ->
nullable out, Arrow in -> Arrow out, float32 kept where pandas keeps it; one place,
:func:`pandas_dp.result.dtypes.like_pandas`, with pandas as the oracle on a sample frame
made from the dtypes alone. The cast never changes a released number (beyond float32's
rounding) and never fails after the charge.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401
from pandas_dp.result import dtypes as rd

KW: dict[str, Any] = dict(epsilon=1e6, bounds=(0, 10), random_state=0)
N = 60


def _frame(dtype: Any) -> Any:
    rng = np.random.default_rng(1)
    x = np.round(rng.uniform(0, 10, N))
    y = np.round(rng.uniform(0, 10, N))
    return pd.DataFrame(
        {
            "x": pd.Series(x).astype(dtype),
            "y": pd.Series(y).astype(dtype),
            "g": rng.choice(["a", "b"], N),
        }
    )


def _float64(result: Any) -> Any:
    """The release's numbers as numpy float64, for an exact comparison."""
    return result.astype("float64").to_numpy(dtype="float64", na_value=np.nan)


CALLS: dict[str, Any] = {
    "mean": lambda df: df.dp.mean(["x", "y"], **KW),
    "sum": lambda df: df.dp.sum(["x", "y"], **KW),
    "var": lambda df: df.dp.var(["x", "y"], **KW),
    "quantile": lambda df: df.dp.quantile(["x", "y"], [0.25, 0.5], **KW),
    "describe": lambda df: df.dp.describe(["x", "y"], **KW),
    "agg": lambda df: df.dp.agg({"x": ["mean", "sum"], "y": ["std"]}, **KW),
    "series-agg": lambda df: df["x"].dp.agg(["mean", "var"], **KW),
    "groupby-mean": lambda df: df.dp.groupby("g", keys=["a", "b"]).mean(["x", "y"], **KW),
    "groupby-sum": lambda df: df.dp.groupby("g", keys=["a", "b"])["x"].sum(**KW),
    "groupby-count": lambda df: df.dp.groupby("g", keys=["a", "b"]).count(
        epsilon=1e6, random_state=0
    ),
    "groupby-describe": lambda df: df.dp.groupby("g", keys=["a", "b"])["x"].describe(**KW),
}
INTEGER_FAMILY = {"int64": "float64", "Int64": "Float64", "int64[pyarrow]": "double[pyarrow]"}


def _pandas(name: str, df: Any) -> Any:
    """pandas' answer to the same call (values aside: its dtypes are the oracle)."""
    g = df.groupby("g")
    return {
        "mean": lambda: df[["x", "y"]].mean(),
        "sum": lambda: df[["x", "y"]].sum(),
        "var": lambda: df[["x", "y"]].var(),
        "quantile": lambda: df[["x", "y"]].quantile([0.25, 0.5]),
        "describe": lambda: df[["x", "y"]].describe(),
        "agg": lambda: df.agg({"x": ["mean", "sum"], "y": ["std"]}),
        "series-agg": lambda: df["x"].agg(["mean", "var"]),
        "groupby-mean": lambda: g[["x", "y"]].mean(),
        "groupby-sum": lambda: g["x"].sum(),
        "groupby-count": lambda: g.count(),
        "groupby-describe": lambda: g["x"].describe(),
    }[name]()


def _dtypes(result: Any) -> list[str]:
    return [str(result.dtype)] if isinstance(result, pd.Series) else list(map(str, result.dtypes))


DTYPES = ["Float64", "Int64", "float32", "double[pyarrow]", "int64[pyarrow]"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(CALLS))
def test_value_dtypes_are_pandas_and_numbers_unchanged(name: str, dtype: str) -> None:
    """pandas' dtypes (a noisy float where pandas gives integers, except counts and
    integer sums), and the numbers of the same seeded release on float64 columns (an
    integer sum: on int64 columns), bit for bit (float32: rounded once)."""
    if "pyarrow" in dtype:
        pytest.importorskip("pyarrow")
    # an integer sum (agg's too) is an integer release (discrete noise): held to the int64 column's
    integer_sum = name in {"sum", "groupby-sum", "agg"} and dtype in INTEGER_FAMILY
    df, plain = _frame(dtype), _frame("int64" if integer_sum else "float64")
    got, base = CALLS[name](df), CALLS[name](plain)
    theirs = _dtypes(_pandas(name, df))
    if name in {"quantile"} and dtype == "Int64":  # pandas: Int64 if every value is whole
        theirs = ["Float64" if d == "Int64" else d for d in theirs]
    if name != "groupby-count" and not integer_sum:  # counts and integer sums: integers
        theirs = [INTEGER_FAMILY.get(d, d) for d in theirs]
    assert _dtypes(got) == theirs
    if dtype == "float32":
        expected = base.astype("float64").to_numpy().astype("float32").astype("float64")
        kept = [d == "float32" for d in _dtypes(got)]
        if isinstance(got, pd.DataFrame):  # float32 columns rounded, the others exact
            expected = np.where(kept, expected, base.to_numpy(dtype="float64"))
        elif not kept[0]:
            expected = _float64(base)
        np.testing.assert_array_equal(_float64(got), expected)
    else:
        np.testing.assert_array_equal(_float64(got), _float64(base))


def test_the_record_describes_the_cast_release() -> None:
    """The cast release is the release: its record is live and gives its interval."""
    df = _frame("Float64")
    got = df.dp.mean(["x", "y"], **KW)
    meta = got.attrs["dp"]
    assert got.dtype == "Float64" and not meta.derived
    lo, hi = meta.interval(0.05).to_numpy().T
    assert ((lo <= got.to_numpy(dtype=float)) & (got.to_numpy(dtype=float) <= hi)).all()
    assert (got * 2).attrs["dp"].derived  # arithmetic still makes a derived object


def test_plain_columns_do_not_ask_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy float64/int64/bool columns are released as computed, without the sample."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the sample frame was built for plain columns")

    monkeypatch.setattr(rd, "sample_frame", refuse)
    df = _frame("float64")
    df["b"] = df["x"] > 4
    assert df.dp.mean(["x", "b"], **KW).dtype == "float64"
    g = df.dp.groupby("g", keys=["a", "b"])
    assert g.sum(["x"], **KW).dtypes.tolist() == [np.dtype("float64")]


def test_the_sample_is_made_from_dtypes_alone() -> None:
    """0 and 1 (the categories' first two) in each dtype: nothing of any data."""
    cats = pd.CategoricalDtype(["q", "r", "s"])
    sample = rd.sample_frame(["Int64", "float32", cats, "boolean"], rows=4)
    assert sample[0].tolist() == [0, 0, 1, 1]
    assert sample[2].tolist() == ["q", "q", "r", "r"]
    assert sample[3].tolist() == [False, False, True, True]
    assert [str(d) for d in sample.dtypes] == ["Int64", "float32", "category", "boolean"]


@pytest.mark.parametrize(
    ("ours", "theirs", "released"),
    [
        ("float64", "Int64", "Float64"),  # a noisy float is no integer
        ("int64", "Int64", "Int64"),  # a count is
        ("float64", "int64", "float64"),
        ("float64", "boolean", "Float64"),
        ("float64", "float32", "float32"),
        ("float64", "object", "float64"),  # no numbers: kept
        ("float64", "category", "float64"),
        ("object", "Float64", "object"),
    ],
)
def test_released_dtype(ours: str, theirs: str, released: str) -> None:
    got = rd.released_dtype(pd.api.types.pandas_dtype(ours), pd.api.types.pandas_dtype(theirs))
    assert str(got) == released


def test_released_dtype_of_arrow_integers() -> None:
    pytest.importorskip("pyarrow")
    arrow = pd.api.types.pandas_dtype("int64[pyarrow]")
    assert str(rd.released_dtype(np.dtype("float64"), arrow)) == "double[pyarrow]"
    assert rd.released_dtype(np.dtype("int64"), arrow) == arrow


def test_no_answer_from_pandas_leaves_the_release() -> None:
    """A call pandas refuses on the sample (a quantile of booleans) keeps the release's
    own dtypes: the cast never raises after the charge."""
    release = pd.Series([0.25, 0.75], index=["x", "y"])
    same = rd.like_pandas(release, "quantile", {"q": 0.5}, lambda c: "boolean", columns=["x", "y"])
    assert same is release


def test_dask_gives_the_in_memory_dtypes() -> None:
    dd = pytest.importorskip("dask.dataframe")
    df = _frame("Float64")
    df["z"] = df["x"].astype("float32")
    ddf = dd.from_pandas(df, npartitions=3)
    for frame in (df, ddf):
        g = frame.dp.groupby("g", keys=["a", "b"])
        got = [
            frame.dp.mean(["x", "z"], **KW).dtype,
            *frame.dp.describe(["x", "z"], **KW).dtypes,
            *g.mean(["x", "z"], **KW).dtypes,
            *g.count(["x", "z"], epsilon=1e6, random_state=0).dtypes,
        ]
        assert list(map(str, got)) == [
            "Float64",
            "Float64",
            "float64",
            "Float64",
            "float32",
            "Int64",
            "int64",
        ]


@pytest.mark.parametrize("keys", ["Int64", "category"])
def test_cells_keep_the_key_dtype(keys: str) -> None:
    """A grouped value_counts and a grouped quantile of several q keep the key's dtype
    in their (key, label) index, as pandas does and the other grouped releases do."""
    df = _frame("float64")
    df["g"] = df["g"].map({"a": 3, "b": 1}).astype("Int64")
    df["c"] = (df["x"] > 4).map({True: "hi", False: "lo"})
    if keys == "category":
        df["g"] = df["g"].astype(pd.CategoricalDtype([1, 3]))
    g = df.dp.groupby("g", keys=[1, 3])
    counts = g.value_counts("c", epsilon=1e6, categories=["lo", "hi"], random_state=0)
    quantiles = g.quantile(["x"], [0.25, 0.75], **KW)
    grouped = df.groupby("g", observed=True)
    for ours, theirs in (
        (counts, grouped["c"].value_counts()),
        (quantiles, grouped[["x"]].quantile([0.25, 0.75])),
    ):
        assert ours.index.levels[0].dtype == theirs.index.levels[0].dtype == df["g"].dtype
        assert ours.index.names == theirs.index.names


def test_cells_of_no_key_keep_the_dtypes() -> None:
    from pandas_dp.result.labels import cells_index

    keys = pd.Index([], dtype="Int64", name="k")
    cells = cells_index(keys, pd.Index([0.5], dtype="float64"), ["k", None])
    assert len(cells) == 0
    assert [str(level.dtype) for level in cells.levels] == ["Int64", "float64"]


def test_pandas_answers_once_per_call_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    """pandas' answer is kept by call (method, dtypes, shaping arguments): the same call
    again does not build the sample; another q does."""
    monkeypatch.setattr(rd, "_ANSWERS", {})
    built: list[int] = []
    sample = rd.sample_frame

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(1)
        return sample(*args, **kwargs)

    monkeypatch.setattr(rd, "sample_frame", counted)
    df = _frame("Float64")
    first = df.dp.quantile(["x", "y"], [0.25], **KW)
    again = df.dp.quantile(["x", "y"], [0.25], **KW)
    assert len(built) == 1 and first.dtypes.tolist() == again.dtypes.tolist()
    df.dp.quantile(["x", "y"], 0.5, **KW)
    assert len(built) == 2


def test_describe_of_numbers_and_categories() -> None:
    """pandas' describe leaves the text column out: each numeric column still takes its
    dtype from pandas' answer (matched by column), the shares keep float64."""
    df = _frame("Float64")
    df["c"] = np.where(df["x"].to_numpy(dtype=float) > 4, "hi", "lo")
    got = df.dp.describe(
        ["c", "x"],
        epsilon=1e6,
        bounds={"x": (0, 10)},
        categories={"c": ["lo", "hi"]},
        random_state=0,
    )
    assert got["x"].dtype == df[["x"]].describe()["x"].dtype == "Float64"
    assert got["c"].dtype == np.dtype("float64")
    assert not got.attrs["dp"].derived
