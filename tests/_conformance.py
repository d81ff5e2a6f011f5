"""Shared pieces of the conformance suite (``tests/test_conformance*.py``): the generated
frames, the table of documented deviations from pandas, and the comparison of a release
with pandas' answer to the same call.

Every release runs at epsilon 10**7 with bounds around the data and the data's own keys
and categories, so that the noise is far below the tolerances: a value that differs from
pandas' by more than the tolerance is a wrong value, not noise.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pandas.api.types import is_integer_dtype

import pandas_dp  # noqa: F401  (registers .dp)

EPS = 1e7
SEED = 0
N = 240
HAS_ARROW = importlib.util.find_spec("pyarrow") is not None
RTOL = 1e-3  # relative, on every moment; the noise at EPS is below 1e-6 of the width
QUANTILE_SLACK = 2.0 / 2**16  # of the width: two points of the selection grid

# ----------------------------------------------------------------------------------------
# The documented deviations: ONE table. Each entry names the case it covers, what pandas
# gives, what pandas-dp gives, and the reason (an anchor of docs/user_guide/differences.md).
# "not yet" entries are differences the page lists under "Not yet like pandas": their
# dtype tests are ``xfail(strict=True)``, so that following pandas turns the suite red
# until this table is updated. The other entries are permanent (privacy requires them)
# and the tests assert pandas-dp's documented behaviour.
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Deviation:
    """One documented difference from pandas."""

    case: str
    pandas: str
    ours: str
    reason: str
    not_yet: bool


DEVIATIONS: dict[str, Deviation] = {
    "integer-quantile": Deviation(
        case="quantile or median of an Int64 or boolean column",
        pandas="Int64 where every interpolated quantile happens to be a whole number "
        "(a dtype that depends on the data), else Float64",
        ours="Float64 always (a released quantile is a point of the public grid)",
        reason="differences.md#quantiles (whole-number quantiles keep a float dtype)",
        not_yet=False,
    ),
    "python-scalar": Deviation(
        case="a scalar release (one column) of a float32 column",
        pandas="a numpy float32 scalar",
        ours="a Python float (DPFloat, which carries the release's record)",
        reason="differences.md#result-types (a scalar is a python float)",
        not_yet=False,
    ),
    "no-nan": Deviation(
        case="a statistic of no values (all-missing column, one-row var/std/sem/skew/cov)",
        pandas="NaN",
        ours="a finite number in the public range (values compared for structure only)",
        reason="differences.md#what-is-released (a number, not NaN, on empty data)",
        not_yet=False,
    ),
    "declared-extremes": Deviation(
        case="describe: the min and max rows",
        pandas="'min' and 'max', the data's extremes",
        ours="'min (declared)' and 'max (declared)', the declared bounds",
        reason="differences.md#what-is-released (describe prints the declared bounds)",
        not_yet=False,
    ),
    "rank-quantile": Deviation(
        case="quantile, median and describe's percentiles",
        pandas="linear interpolation between the order statistics around rank (n - 1) q",
        ours="a point of the public grid whose rank is within two of pandas' (n - 1) q "
        "(on tied values: anywhere in the gap next to the tie, every point there scoring "
        "the same)",
        reason="differences.md#quantiles (chosen by rank, without interpolation)",
        not_yet=False,
    ),
    "proportions-order": Deviation(
        case="proportions vs value_counts(normalize=True)",
        pandas="sorted by share",
        ours="declared order (the same shares)",
        reason="differences.md#order (proportions keeps the declared order)",
        not_yet=False,
    ),
    "tie-order": Deviation(
        case="value_counts with tied counts",
        pandas="ties in order of appearance",
        ours="ties in declared order",
        reason="differences.md#order (ties keep the declared order)",
        not_yet=False,
    ),
    "boolean-describe": Deviation(
        case="describe of a bool or boolean column",
        pandas="count, unique, top and freq (object dtype)",
        ours="with declared bounds, the numeric rows of the column as 0/1 (count, mean = "
        "the share of True, std, percentiles, the declared bounds); without, the shares "
        "of False and True",
        reason="differences.md#what-is-released (describe of a boolean column)",
        not_yet=False,
    ),
    "listwise-cov": Deviation(
        case="cov and corr with missing values",
        pandas="pairwise-complete rows: each entry over the rows where both columns are "
        "present (the diagonal: each column's own variance)",
        ours="listwise: every row with a missing value in a selected column is left out "
        "(compared with pandas' cov/corr after dropna)",
        reason="differences.md#what-is-released (cov and corr leave out incomplete rows)",
        not_yet=False,
    ),
    "text-counts": Deviation(
        case="value_counts or proportions of a string or string[pyarrow] column",
        pandas="Int64 or int64[pyarrow] counts (Float64 or double[pyarrow] shares)",
        ours="int64 counts and float64 shares, whatever the text's storage (a Dask "
        "release, whose text Dask holds as string[pyarrow], equals the in-memory one)",
        reason="differences.md#result-types (counts of a text column are int64)",
        not_yet=False,
    ),
    "missing-bucket": Deviation(
        case="value_counts or proportions with dropna=False, no value missing, of a dtype "
        "that can hold one (float, text, object, nullable, Arrow, categorical)",
        pandas="no NaN entry",
        ours="a NaN entry, released like a declared category (noise on zero); none for "
        "numpy integer and bool columns, which cannot hold one (as in pandas)",
        reason="differences.md#what-is-released (the missing bucket of dropna=False)",
        not_yet=False,
    ),
    "declared-keys": Deviation(
        case="group-by or value_counts with a declared key or category nobody has",
        pandas="the key is absent",
        ours="the key is released with its own noise",
        reason="differences.md#what-is-released (every declared key is in the result)",
        not_yet=False,
    ),
}

INTEGER_KINDS = {"int64", "Int64-NA", "bool", "boolean-NA", "int64[pyarrow]"}
COUNTS = {"value_counts", "value_counts-normalize", "proportions"}
COUNT_METHODS = {"count", "size", "value_counts"}
#: The float dtype of each integer dtype's family: what a quantile of an integer column
#: is released as (DEVIATIONS['integer-quantile']).
FLOAT_OF = {"int64": "float64", "Int64": "Float64", "int64[pyarrow]": "double[pyarrow]"}


def integer_valued(kind: str, method: str) -> bool:
    """Whether pandas-dp releases whole numbers as numpy int64 (a Python int alone):
    counts, and the sum of a column of an integer kind."""
    return method in COUNT_METHODS or (method == "sum" and kind in INTEGER_KINDS)


def dtype_deviation(kind: str, method: str, grouped: bool = False) -> str | None:
    """The key of the DEVIATIONS entry that covers the value dtype of ``method`` on a
    frame of ``kind`` (``grouped``: through the group-by), or None if pandas-dp must give
    pandas' dtype. ``method`` "agg+sum" is an ``agg`` whose sum has its own column; a
    scalar float32 is DEVIATIONS['python-scalar'] whatever the method."""
    if method in {"quantile", "median"} and kind in INTEGER_KINDS:
        return "integer-quantile"
    if method in COUNTS and kind == "string[pyarrow]-keys":
        return "text-counts"
    return None


# ----------------------------------------------------------------------------------------
# Frames
# ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Frame:
    """A generated frame: two value columns ``a`` and ``b``, two key columns ``k1`` and
    ``k2`` (their labels depend on the kind), their bounds and declared keys."""

    kind: str
    df: Any  # a DataFrame (Any: pandas' stubs read ``.dp`` as a column)
    a: Any
    b: Any
    k1: Any
    k2: Any
    bounds: dict[Any, tuple[float, float]]
    keys: dict[Any, list[Any]]

    @property
    def values(self) -> list[Any]:
        """The two value columns' labels."""
        return [self.a, self.b]

    @property
    def width(self) -> float:
        """The width of the value columns' bounds."""
        lo, hi = self.bounds[self.a]
        return hi - lo

    def kw(self, **extra: Any) -> dict[str, Any]:
        """The keywords of a release on the value columns."""
        return dict(epsilon=EPS, bounds=self.bounds, random_state=SEED, **extra)

    def group(self, two: bool = False) -> Any:
        """``df.dp.groupby`` over ``k1`` (and ``k2``) with the data's own keys."""
        if two:
            by = [self.k1, self.k2]
            return self.df.dp.groupby(by, keys={k: self.keys[k] for k in by})
        return self.df.dp.groupby(self.k1, keys=self.keys[self.k1])

    def pgroup(self, two: bool = False) -> Any:
        """pandas' group-by of the same call."""
        return self.df.groupby([self.k1, self.k2] if two else self.k1)


VALUE_KINDS = [
    "float64",
    "float32",
    "int64",
    "Int64-NA",
    "Float64-NA",
    "boolean-NA",
    "bool",
    "int64[pyarrow]",
    "double[pyarrow]",
    "missing",
    "all-missing",
    "one-row",
]
LABEL_KINDS = ["int-labels", "tuple-labels", "multiindex", "row-index"]
KEY_KINDS = ["category-keys", "string[pyarrow]-keys", "Int64-keys", "int-keys"]
KINDS = VALUE_KINDS + LABEL_KINDS + KEY_KINDS
ARROW_KINDS = {"int64[pyarrow]", "double[pyarrow]", "string[pyarrow]-keys"}
BOOL_KINDS = {"bool", "boolean-NA"}


def _with_missing(values: np.ndarray, rng: np.random.Generator, dtype: Any) -> pd.Series:
    s = pd.Series(values).astype(dtype)
    s[rng.random(len(s)) < 0.1] = pd.NA if dtype[0].isupper() else np.nan
    return s


@functools.cache
def make_frame(kind: str) -> Frame:
    """The frame of ``kind``: 240 rows (one for ``one-row``), values in [0, 10] (booleans
    in [0, 1]), three keys of distinct frequencies (so counts have no ties) and two."""
    if kind in ARROW_KINDS and not HAS_ARROW:
        pytest.skip("pyarrow is not installed")
    rng = np.random.default_rng(SEED)
    n = 1 if kind == "one-row" else N
    x = rng.uniform(0, 10, n)
    y = (0.6 * x + rng.uniform(0, 4, n)).clip(0, 10)
    k1 = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    k2 = rng.choice(["u", "v"], n, p=[0.65, 0.35])
    a: Any = x
    b: Any = y
    dtype: Any = kind  # (Any: the stubs take literal dtype names only)
    hi = 10.0
    if kind == "float32":
        a, b = x.astype("float32"), y.astype("float32")
    elif kind in {"int64", "int64[pyarrow]"}:
        a, b = pd.Series(np.round(x)).astype(dtype), pd.Series(np.round(y)).astype(dtype)
    elif kind == "Int64-NA":
        a, b = _with_missing(np.round(x), rng, "Int64"), _with_missing(np.round(y), rng, "Int64")
    elif kind == "Float64-NA":
        a, b = _with_missing(x, rng, "Float64"), _with_missing(y, rng, "Float64")
    elif kind == "double[pyarrow]":
        a, b = pd.Series(x).astype(dtype), pd.Series(y).astype(dtype)
    elif kind == "bool":
        a, b, hi = x > 4, y > 6, 1.0
    elif kind == "boolean-NA":
        a, b, hi = _with_missing(x > 4, rng, "boolean"), _with_missing(y > 6, rng, "boolean"), 1.0
    elif kind == "missing":
        a, b = _with_missing(x, rng, "float64"), _with_missing(y, rng, "float64")
    elif kind == "all-missing":
        b = np.full(n, np.nan)
    keys1: Any = k1
    keys2: Any = k2
    if kind == "category-keys":
        keys1 = pd.Categorical(k1, categories=["c", "a", "b"])
        keys2 = pd.Categorical(k2, categories=["v", "u"])
    elif kind == "string[pyarrow]-keys":
        arrow: Any = "string[pyarrow]"
        keys1, keys2 = pd.array(k1, dtype=arrow), pd.array(k2, dtype=arrow)
    elif kind in {"Int64-keys", "int-keys"}:
        codes1 = pd.Series(k1).map({"a": 3, "b": 1, "c": 2}).to_numpy()
        codes2 = pd.Series(k2).map({"u": 20, "v": 10}).to_numpy()
        ints: Any = "Int64" if kind == "Int64-keys" else "int64"
        keys1, keys2 = pd.array(codes1, dtype=ints), pd.array(codes2, dtype=ints)
    labels: list[Any] = ["a", "b", "k1", "k2"]
    if kind == "int-labels":
        labels = [0, 1, 2, 3]
    elif kind in {"tuple-labels", "multiindex"}:
        labels = [("v", "a"), ("v", "b"), ("k", "1"), ("k", "2")]
    columns = [np.asarray(a) if isinstance(a, np.ndarray) else a for a in (a, b)]
    df = pd.DataFrame(
        {
            "a": pd.Series(columns[0]).reset_index(drop=True),
            "b": pd.Series(columns[1]).reset_index(drop=True),
            "k1": pd.Series(keys1),
            "k2": pd.Series(keys2),
        }
    )
    if kind == "multiindex":
        df.columns = pd.MultiIndex.from_tuples(labels, names=["outer", "inner"])
    else:
        df.columns = pd.Index(labels, tupleize_cols=False)
    if kind == "row-index":
        df.index = pd.Index(rng.permutation(n) + 1000, name="row")
    la, lb, l1, l2 = labels
    keys = {l1: _own_keys(df[l1]), l2: _own_keys(df[l2])}
    return Frame(kind, df, la, lb, l1, l2, {la: (0.0, hi), lb: (0.0, hi)}, keys)


def _own_keys(column: pd.Series) -> list[Any]:
    """The data's own keys in pandas' group order (sorted, or the categories' order)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        return list(column.cat.categories)
    return sorted(column.dropna().unique().tolist())


# ----------------------------------------------------------------------------------------
# Comparison
# ----------------------------------------------------------------------------------------


def _index_dtypes(index: pd.Index) -> list[Any]:
    if isinstance(index, pd.MultiIndex):
        return [level.dtype for level in index.levels]
    return [index.dtype]


def check_index(got: pd.Index, want: pd.Index, what: str) -> None:
    """Values, order, names and dtypes of an index like pandas'."""
    assert got.nlevels == want.nlevels, f"{what}: {got.nlevels} levels, pandas {want.nlevels}"
    assert list(got) == list(want), f"{what}: {list(got)} != pandas' {list(want)}"
    assert list(got.names) == list(want.names), f"{what} names: {got.names} != {want.names}"
    assert _index_dtypes(got) == _index_dtypes(want), (
        f"{what} dtype: {_index_dtypes(got)} != pandas' {_index_dtypes(want)}"
    )


def check_structure(
    got: Any, want: Any, deviation: str | None = None, integer: bool = False
) -> None:
    """Result type, shape, index, columns and Series name like pandas' (a scalar: a
    float where a deviation applies, unless the release is ``integer``, whole numbers)."""
    if isinstance(want, pd.DataFrame):
        assert isinstance(got, pd.DataFrame), f"{type(got).__name__}, pandas a DataFrame"
        assert got.shape == want.shape, f"shape {got.shape} != pandas' {want.shape}"
        check_index(got.index, want.index, "index")
        check_index(got.columns, want.columns, "columns")
    elif isinstance(want, pd.Series):
        assert isinstance(got, pd.Series), f"{type(got).__name__}, pandas a Series"
        assert got.shape == want.shape, f"shape {got.shape} != pandas' {want.shape}"
        check_index(got.index, want.index, "index")
        assert got.name == want.name, f"name {got.name!r} != pandas' {want.name!r}"
    else:
        assert not isinstance(got, pd.Series | pd.DataFrame), (
            f"{type(got).__name__}, pandas a scalar"
        )
        kind = np.asarray(want).dtype.kind
        if kind == "f" or (deviation is not None and not integer):
            assert isinstance(got, float), f"{type(got).__name__}, pandas a float"
        else:
            assert isinstance(got, int | np.integer), f"{type(got).__name__}, pandas an integer"


def value_dtypes(result: Any) -> list[Any]:
    """The value dtype(s) of a release or of pandas' answer."""
    if isinstance(result, pd.DataFrame):
        return list(result.dtypes)
    if isinstance(result, pd.Series):
        return [result.dtype]
    if isinstance(result, bool | int | float) and not isinstance(result, np.generic):
        return [np.dtype("float64") if isinstance(result, float) else np.dtype("int64")]
    return [np.asarray(result).dtype]


def _float32_scalar(want: Any) -> bool:
    return isinstance(want, np.floating) and want.dtype == np.float32


def documented_dtypes(want: Any, deviation: str | None) -> list[Any]:
    """The value dtypes pandas-dp documents for pandas' answer ``want``: pandas' own,
    a quantile of integers in the float dtype of its family (DEVIATIONS['integer-quantile']), a
    float32 scalar as a Python float (DEVIATIONS['python-scalar'])."""
    theirs = value_dtypes(want)
    if _float32_scalar(want):
        return [np.dtype("float64")]
    if deviation == "integer-quantile":
        return [pd.api.types.pandas_dtype(FLOAT_OF.get(str(d), str(d))) for d in theirs]
    if deviation == "text-counts":  # the numpy dtype of the same kind
        return [np.dtype("int64") if is_integer_dtype(d) else np.dtype("float64") for d in theirs]
    return theirs


def shows_deviation(want: Any, deviation: str | None, counts: bool) -> bool:
    """Whether pandas' answer shows a documented dtype deviation (the documented dtypes
    are not pandas')."""
    return documented_dtypes(want, deviation) != value_dtypes(want)


def check_value_dtypes(got: Any, want: Any, deviation: str | None, counts: bool) -> None:
    """pandas' value dtypes, or the documented ones where a documented deviation shows."""
    ours, theirs = value_dtypes(got), documented_dtypes(want, deviation)
    pandas = value_dtypes(want)
    assert ours == theirs, f"dtypes {ours} != the documented {theirs} (pandas' {pandas})"


def _floats(result: Any) -> np.ndarray:
    if isinstance(result, pd.DataFrame | pd.Series):
        return result.astype("float64").to_numpy(dtype="float64", na_value=np.nan)
    return np.asarray(float(result) if not pd.isna(result) else np.nan, dtype="float64")


def check_values(
    got: Any,
    want: Any,
    *,
    rtol: float = RTOL,
    atol: float = 0.0,
    exact: bool = False,
    holes: Any = None,
) -> None:
    """Values like pandas' within the tolerance; where pandas gives NaN, a finite number
    (DEVIATIONS['no-nan']), except at ``holes`` (a boolean mask of the entries that no
    statistic fills, NaN for both, as in ``agg`` with a dict of lists)."""
    g, w = _floats(got), _floats(want)
    missing = np.isnan(w)
    if holes is not None:
        holes = np.asarray(holes, dtype=bool)
        assert np.isnan(g[holes]).all(), "a value where pandas leaves a hole"
        missing &= ~holes
        w = np.where(holes, 0.0, w)
        g = np.where(holes, 0.0, g)
    assert np.isfinite(g[missing]).all(), "a NaN where pandas-dp promises a number"
    if exact:
        np.testing.assert_array_equal(g[~missing], w[~missing])
    else:
        np.testing.assert_allclose(g[~missing], w[~missing], rtol=rtol, atol=atol)


def check_bracket(got: Any, lower: Any, higher: Any, slack: float) -> None:
    """Each released quantile lies between ``lower`` and ``higher``, pandas' order
    statistics one rank either side of its own (DEVIATIONS['rank-quantile']), up to
    ``slack``."""
    g, lo, hi = _floats(got), _floats(lower), _floats(higher)
    assert g.shape == lo.shape == hi.shape, (g.shape, lo.shape, hi.shape)
    missing = np.isnan(lo)
    assert np.isfinite(g[missing]).all(), "a NaN where pandas-dp promises a number"
    inside = (lo[~missing] - slack <= g[~missing]) & (g[~missing] <= hi[~missing] + slack)
    assert inside.all(), (
        f"released {g[~missing][~inside]} outside "
        f"[{lo[~missing][~inside]}, {hi[~missing][~inside]}]"
    )


DECLARED = {"min": "min (declared)", "max": "max (declared)"}


# ----------------------------------------------------------------------------------------
# Cases
# ----------------------------------------------------------------------------------------

Pandas = Callable[[Frame, str, float], Any]  # (frame, interpolation, shift of q) -> answer


@dataclasses.dataclass(frozen=True)
class Spec:
    """One call: ``ours(frame)`` against pandas' ``theirs(frame, "linear", 0.0)``.

    ``check`` is "moment" (values within RTOL and ``atol`` times the width to the
    statistic's power), "exact" (counts), "shares" (proportions within 1e-6),
    "quantile" (by rank) or "describe". ``groups`` is the number of group-by keys (the
    rank window of a quantile is one order statistic of the smallest group). ``pct``
    is, for describe, pandas' quantile laid out like one percentile of the answer.
    """

    method: str
    ours: Callable[[Frame], Any]
    theirs: Pandas
    check: str
    atol: float = 0.0
    groups: int = 0
    holes: bool = False
    pct: Pandas | None = None


def window(obj: Any, q: Any, how: str) -> Any:
    """The lower (``how="lower"``) or upper (``"higher"``) end of the values a release
    may take by DEVIATIONS['rank-quantile']: a rank within two of pandas' own,
    h = (n - 1) q, so v in [x_(ceil h - 3), x_(floor h + 2)] (0-based, open past the
    data); an end on a tied value moves to the next distinct value, since every point
    between two values scores the same. Per column of ``obj`` with its own count; on one
    value, the value itself. Laid out positionally like ``obj.quantile(q)``."""

    def at(x: np.ndarray, share: float) -> float:
        n = len(x)
        if n <= 1:
            return float(x[0]) if n else np.nan
        h = (n - 1) * share
        i = math.ceil(h) - 3 if how == "lower" else math.floor(h) + 2
        if i < 0 or i > n - 1:
            return -np.inf if i < 0 else np.inf
        end = x[i]
        if (x == end).sum() > 1:  # a tie: the gap beyond it scores the same
            beyond = x[x < end] if how == "lower" else x[x > end]
            if not beyond.size:
                return -np.inf if how == "lower" else np.inf
            end = beyond.max() if how == "lower" else beyond.min()
        return float(end)

    def one(column: pd.Series) -> Any:
        x = np.sort(column.dropna().to_numpy(dtype="float64"))
        if isinstance(q, list):
            return pd.Series([at(x, share) for share in q])
        return at(x, q)

    return obj.apply(one) if isinstance(obj, pd.DataFrame) else one(obj)


def quantile_of(obj: Any, q: Any, how: str) -> Any:
    """pandas' quantile (``how="linear"``) or its rank window, of a frame or Series."""
    return obj.quantile(q) if how == "linear" else window(obj, q, how)


def grouped_quantile_of(grouped: Any, q: Any, how: str) -> Any:
    """pandas' grouped quantile (``how="linear"``) or each group's rank window."""
    if how == "linear":
        return grouped.quantile(q)
    return grouped.apply(lambda part: window(part, q, how))


def value_slack(frame: Frame) -> float:
    """Two steps of the public selection grid (2**16 points on the bounds)."""
    return QUANTILE_SLACK * frame.width


POWER = {"var": 2, "cov": 2, "corr": 0, "skew": 0}


def run_case(spec: Spec, frame: Frame) -> None:
    """Compare one call with pandas' answer to it."""
    if spec.check == "describe" and frame.kind in BOOL_KINDS:
        check_boolean_describe(spec, frame)
        return
    try:
        want = spec.theirs(frame, "linear", 0.0)
    except TypeError:  # pandas has no answer for this dtype: neither should we
        with pytest.raises(TypeError):
            spec.ours(frame)
        return
    got = spec.ours(frame)
    if spec.check == "describe":
        want = declared(want)
    deviation = dtype_deviation(frame.kind, spec.method, spec.groups > 0)
    integer = integer_valued(frame.kind, spec.method)
    check_structure(got, want, deviation, integer)
    check_value_dtypes(got, want, deviation, integer)
    if spec.check == "exact":
        check_values(got, want, exact=True)
    elif spec.check == "shares":
        check_values(got, want, rtol=0, atol=1e-6)
    elif spec.check == "moment":
        atol = spec.atol * frame.width ** POWER.get(spec.method, 1)
        holes = _holes(spec, frame) if spec.holes else None
        check_values(got, want, atol=atol, holes=holes)
    elif spec.check == "quantile":
        lower = spec.theirs(frame, "lower", 0.0)
        higher = spec.theirs(frame, "higher", 0.0)
        check_bracket(got, lower, higher, value_slack(frame))
    elif spec.check == "describe":
        check_describe(spec, got, want, frame)


def _holes(spec: Spec, frame: Frame) -> Any:
    """The entries no statistic fills: NaN in pandas' answer on complete float data."""
    full = dataclasses.replace(
        frame, df=make_frame("float64").df.set_axis(frame.df.columns, axis=1)
    )
    return np.isnan(_floats(spec.theirs(full, "linear", 0.0)))


def declared(want: Any) -> Any:
    """pandas' describe with its min/max labels renamed (DEVIATIONS['declared-extremes'])."""
    if stats_on_columns(want):
        level = -1 if want.columns.nlevels > 1 else None
        return want.rename(columns=DECLARED, level=level)
    return want.rename(index=DECLARED)


def stats_on_columns(want: Any) -> bool:
    """Whether describe's statistics label the columns (group-by) rather than the rows."""
    return isinstance(want, pd.DataFrame) and "mean" in list(want.columns.get_level_values(-1))


def _stat(result: Any, columns: bool, label: str) -> Any:
    if columns:
        if result.columns.nlevels > 1:
            return result.xs(label, axis=1, level=-1)
        return result[label]
    return result.loc[label]


def check_describe(spec: Spec, got: Any, want: Any, frame: Frame) -> None:
    """count, mean and std like pandas'; the percentiles by rank; the declared bounds."""
    columns = stats_on_columns(want)
    labels = want.columns.get_level_values(-1).unique() if columns else want.index
    for label in labels:
        ours, theirs = _stat(got, columns, label), _stat(want, columns, label)
        if label in {"count", "mean", "std"}:
            check_values(ours, theirs, atol=1e-4 * frame.width, exact=label == "count")
        elif str(label).endswith("(declared)"):
            bound = frame.bounds[frame.a][0 if str(label).startswith("min") else 1]
            assert (_floats(ours) == bound).all(), (label, ours)
        else:  # a percentile, by rank
            assert spec.pct is not None
            share = float(str(label)[:-1]) / 100
            lower = spec.pct(frame, "lower", share)
            higher = spec.pct(frame, "higher", share)
            check_bracket(ours, lower, higher, value_slack(frame))


def check_boolean_describe(spec: Spec, frame: Frame) -> None:
    """DEVIATIONS['boolean-describe']: a boolean column with bounds is described as
    pandas describes it cast to numbers; one without, by the shares of False and True
    that pandas' ``value_counts(normalize=True)`` gives."""
    got = spec.ours(frame)
    if isinstance(got, pd.Series) and str(got.index[0]).startswith("share "):
        column = frame.df[got.name]
        want = column.value_counts(normalize=True).reindex([False, True], fill_value=0.0)
        want.index = pd.Index([f"share {v}" for v in want.index])
        assert list(got.index) == list(want.index), (list(got.index), list(want.index))
        check_values(got, want.rename(got.name).astype("float64"), rtol=0, atol=1e-6)
        return
    numbers = {
        c: "Float64" if str(frame.df[c].dtype) == "boolean" else "float64" for c in frame.values
    }
    cast = dataclasses.replace(frame, df=frame.df.astype(numbers))
    want = declared(spec.theirs(cast, "linear", 0.0))
    check_structure(got, want, None, False)
    check_describe(spec, got, want, cast)


Finding = Callable[[str, str], bool]  # (frame kind, case name) -> whether it applies


# The default run: every cheap case on every frame; quantiles and describe (a selection
# each, about 50 ms) on these frames only. The rest is the slow sweep (-m slow).
QUICK_KINDS = {"float64", "Int64-NA", "missing", "one-row", "category-keys"}


def params(specs: dict[str, Spec], kinds: list[str], findings: dict[str, Finding]) -> list[Any]:
    """One pytest param per (frame kind, case), with its findings as strict xfails and
    the costly cases off the quick frames marked slow."""
    out = []
    for kind in kinds:
        for name, spec in specs.items():
            reasons = [reason for reason, applies in findings.items() if applies(kind, name)]
            marks: list[Any] = []
            if reasons:
                documented = all(r.startswith("documented") for r in reasons)
                prefix = "" if documented else "finding: "
                marks.append(pytest.mark.xfail(strict=True, reason=prefix + "; ".join(reasons)))
            if spec.check in {"quantile", "describe"} and kind not in QUICK_KINDS:
                marks.append(pytest.mark.slow)
            out.append(pytest.param(kind, name, id=f"{kind}-{name}", marks=marks))
    return out


def dtype_params(
    specs: dict[str, Spec], kinds: list[str], findings: dict[str, Finding]
) -> list[Any]:
    """One strict xfail per (kind, cheap case) whose value dtype a "not yet" deviation
    covers and no finding breaks first: following pandas turns it red."""
    out = []
    for kind in kinds:
        if kind in ARROW_KINDS and not HAS_ARROW:
            continue
        for name, spec in specs.items():
            deviation = dtype_deviation(kind, spec.method, spec.groups > 0)
            if deviation is None or not DEVIATIONS[deviation].not_yet:
                continue
            if spec.check in {"quantile", "describe"}:
                continue
            if any(applies(kind, name) for applies in findings.values()):
                continue
            want = spec.theirs(make_frame(kind), "linear", 0.0)  # pandas alone: cheap
            if not shows_deviation(want, deviation, integer_valued(kind, spec.method)):
                continue
            reason = f"documented: {DEVIATIONS[deviation].reason}"
            mark = pytest.mark.xfail(strict=True, reason=reason)
            out.append(pytest.param(kind, name, id=f"{kind}-{name}", marks=[mark]))
    return out


def check_dtype_like_pandas(spec: Spec, frame: Frame) -> None:
    """The value dtypes (and the scalar's type) are pandas'."""
    want = spec.theirs(frame, "linear", 0.0)
    got = spec.ours(frame)
    assert value_dtypes(got) == value_dtypes(want)
