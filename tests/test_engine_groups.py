"""The engine's grouping: grouped results are the per-group ungrouped results, exactly.

Every kernel of :mod:`pandas_dp.engines` takes an optional :class:`Groups`. These
tests check, on random data with missing and infinite values and with rows in no
group (code ``-1``), that a grouped call equals one ungrouped call per group on
that group's rows, that results do not depend on row order or on the chunk size,
that sums stay exact integers where a float sum would round, and that the key
mappers never raise on a data value.
"""

from __future__ import annotations

import decimal
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pandas_dp import engines
from pandas_dp.engines import pandas as engine_module
from pandas_dp.engines import sums as sums_module

VALUES = st.one_of(
    st.floats(-1e6, 1e6),
    st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -3.0, 7.0]),
)


@st.composite
def grouped_column(draw: Any) -> tuple[np.ndarray, engines.Groups]:
    n = draw(st.integers(0, 60))
    size = draw(st.integers(1, 5))
    x = np.array(draw(st.lists(VALUES, min_size=n, max_size=n)), dtype=np.float64)
    codes = np.array(
        draw(st.lists(st.integers(-1, size - 1), min_size=n, max_size=n)), dtype=np.intp
    )
    return x, engines.Groups(codes, size)


def reference_moments(x: np.ndarray, lower: float, upper: float) -> tuple[int, int, int]:
    """Count, total and squares by the module's definition, added as Python integers."""
    half = 0.5 * (upper - lower)
    mid = lower + half
    q, q2 = engines.accumulation_step(half), engines.accumulation_step(half * half)
    y = np.clip(x - mid, -half, half)
    y = y[~np.isnan(y)]
    total = sum(int(v) for v in np.rint(y / q))
    squares = sum(int(v) for v in np.rint(y * y / q2))
    return y.shape[0], total, squares


@settings(max_examples=200, deadline=None)
@given(
    grouped_column(), st.sampled_from([(0.0, 10.0), (-3.0, 5.0), (-1e150, 1e150), (0.0, 1e-100)])
)
def test_grouped_moments_equal_per_group_ungrouped(
    data: tuple[np.ndarray, engines.Groups], bounds: tuple[float, float]
) -> None:
    x, groups = data
    lo, hi = bounds
    got = engines.moments(pd.Series(x), lo, hi, squares=True, groups=groups)
    assert got.count.shape == (groups.size,)
    assert len(got.total) == len(got.squares) == groups.size
    for g in range(groups.size):
        rows = x[groups.codes == g]
        alone = engines.moments(pd.Series(rows, dtype=float), lo, hi, squares=True)
        assert alone.count.shape == (1,)
        assert (got.count[g], got.total[g], got.squares[g]) == (
            alone.count[0],
            alone.total[0],
            alone.squares[0],
        )
        assert (alone.count[0], alone.total[0], alone.squares[0]) == reference_moments(rows, lo, hi)
        assert got.total_exact[g] == got.total[g] * Fraction(got.step)
        assert got.squares_exact[g] == got.squares[g] * Fraction(got.square_step)
    assert got.total_value.dtype == np.float64


@settings(max_examples=100, deadline=None)
@given(grouped_column(), st.randoms(use_true_random=False))
def test_grouped_results_do_not_depend_on_row_order(
    data: tuple[np.ndarray, engines.Groups], rnd: Any
) -> None:
    x, groups = data
    order = list(range(x.shape[0]))
    rnd.shuffle(order)
    shuffled = engines.Groups(groups.codes[order], groups.size)
    a = engines.moments(pd.Series(x), -2.0, 6.0, squares=True, groups=groups)
    b = engines.moments(pd.Series(x[order]), -2.0, 6.0, squares=True, groups=shuffled)
    assert np.array_equal(a.count, b.count)
    assert (a.total, a.squares) == (b.total, b.squares)


@pytest.mark.parametrize("chunk", [1, 3, 64, 1 << 14])
@pytest.mark.parametrize("flush", [1, 2, 1 << 10])
def test_results_do_not_depend_on_chunking(
    chunk: int, flush: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(0, 10, 5000)
    x[rng.random(5000) < 0.1] = np.nan
    x[:7] = [np.inf, -np.inf, 1e308, -1e308, 0.5, 2.5, -2.5]
    codes = rng.integers(-1, 4, 5000).astype(np.intp)
    groups = engines.Groups(codes, 4)
    want = [engines.moments(pd.Series(x[codes == g]), -5.0, 5.0, squares=True) for g in range(4)]
    monkeypatch.setattr(engine_module, "CHUNK", chunk)
    monkeypatch.setattr(sums_module, "_FLUSH_CHUNKS", flush)
    got = engines.moments(pd.Series(x), -5.0, 5.0, squares=True, groups=groups)
    one = engines.moments(pd.Series(x), -5.0, 5.0, squares=True)
    for g in range(4):
        assert got.count[g] == want[g].count[0]
        assert (got.total[g], got.squares[g]) == (want[g].total[0], want[g].squares[0])
    assert one.total[0] == sum(w.total[0] for w in want) + int(
        engines.moments(pd.Series(x[codes == -1]), -5.0, 5.0, squares=False).total[0]
    )


def test_exact_with_many_extreme_values(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sums no float accumulator holds: ``2**38``-step values, many chunks, frequent
    flushes, one tiny value that a float sum of this size would round away."""
    monkeypatch.setattr(sums_module, "_FLUSH_CHUNKS", 3)
    n = 40 * (1 << 14) + 11
    x = np.full(n, 1.0)  # bounds [-1, 1]: step 2**-37, each value 2**37 steps
    x[4] = -1.0 + 2.0**-37  # -2**37 + 1 steps (an even row: group 0)
    codes = np.zeros(n, dtype=np.intp)
    codes[1::2] = 1
    got = engines.moments(pd.Series(x), -1.0, 1.0, squares=True, groups=engines.Groups(codes, 2))
    odd = n // 2
    even = n - odd
    assert got.total == [(even - 2) * 2**37 + 1, odd * 2**37]
    assert float(got.total[0]) != got.total[0]  # not representable: float would round
    assert got.count.tolist() == [even, odd]
    one = engines.moments(pd.Series(x), -1.0, 1.0, squares=False)
    assert one.total == [(n - 2) * 2**37 + 1]
    assert one.total_exact[0] == Fraction(n - 2) + Fraction(1, 2**37)


def test_missing_values_of_extension_dtypes() -> None:
    s = pd.Series([1, None, 3, 4], dtype="Int64")
    got = engines.moments(
        s, 0.0, 4.0, squares=False, groups=engines.Groups(np.array([0, 0, 1, 1]), 2)
    )
    assert got.count.tolist() == [1, 2]
    assert got.total_value.tolist() == [-1.0, 3.0]


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", None, np.nan, 1, 2.5]), max_size=40),
    st.integers(1, 4),
    st.booleans(),
    st.data(),
)
def test_grouped_category_counts_equal_per_group(
    values: list[Any], size: int, categorical: bool, data: Any
) -> None:
    n = len(values)
    codes = np.array(
        data.draw(st.lists(st.integers(-1, size - 1), min_size=n, max_size=n)), dtype=np.intp
    )
    series = pd.Series(values, dtype=object)
    if categorical:
        series = series.astype(pd.CategoricalDtype(["c", "z", "a"]))
    declared = ["a", "b", 1]
    got = engines.category_counts(series, declared, groups=engines.Groups(codes, size))
    assert got.counts.shape == (size, 3)
    assert got.missing.shape == got.other.shape == (size,)
    total = engines.category_counts(series, declared)
    assert total.counts.shape == (1, 3)
    for g in range(size):
        alone = engines.category_counts(series[codes == g], declared)
        assert got.counts[g].tolist() == alone.counts[0].tolist()
        assert (got.missing[g], got.other[g]) == (alone.missing[0], alone.other[0])
    assert got.counts.sum() + got.missing.sum() + got.other.sum() == np.count_nonzero(codes >= 0)


def test_category_counts_contingency_table() -> None:
    a = pd.Series(["x", "y", "x", "x", "q", None])
    b = pd.Series(["u", "v", "v", "u", "u", "u"])
    table = engines.category_counts(b, ["u", "v"], groups=engines.group_codes([a], [["x", "y"]]))
    assert table.counts.tolist() == [[2, 1], [0, 1]]


def test_categorical_and_hash_paths_agree() -> None:
    values = ["a", "b", None, "z", "a", "c"]
    declared = ["a", "b", "c"]
    plain = engines.category_counts(pd.Series(values, dtype=object), declared)
    cat = engines.category_counts(pd.Series(values, dtype="category"), declared)
    assert plain.counts.tolist() == cat.counts.tolist() == [[2, 1, 1]]
    assert (plain.missing, plain.other) == (cat.missing, cat.other)


def _arrow_string_dtypes() -> list[Any]:
    pa = pytest.importorskip("pyarrow")
    return [
        "str",
        "string[pyarrow]",
        pd.ArrowDtype(pa.string()),
        pd.ArrowDtype(pa.large_string()),
    ]


ARROW_STRING_DTYPES = ["str", "string[pyarrow]", "arrow string", "arrow large_string"]


def _arrow_strings(values: list[Any], name: str, chunks: int = 1) -> pd.Series:
    """``values`` as an Arrow-backed string column of dtype ``name``, in ``chunks``
    Arrow chunks (pieces of the values, in order)."""
    pa = pytest.importorskip("pyarrow")
    dtype = dict(zip(ARROW_STRING_DTYPES, _arrow_string_dtypes(), strict=True))[name]
    if chunks == 1 or not values:
        return pd.Series(values, dtype=dtype)
    cut = np.array_split(np.arange(len(values)), chunks)
    kind = pa.large_string() if name == "arrow large_string" else pa.string()
    chunked = pa.chunked_array([pa.array([values[i] for i in c], type=kind) for c in cut])
    return pd.Series(pd.arrays.ArrowExtensionArray(chunked)).astype(dtype)


@pytest.mark.parametrize("name", ARROW_STRING_DTYPES)
@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.sampled_from(["a", "b", "", "é", "ab", "z"]))),
    keys=st.lists(st.sampled_from(["a", "b", "", "é", "q"]), min_size=1, max_size=6),
    chunks=st.integers(1, 3),
)
def test_arrow_string_slots_equal_the_generic_path(
    name: str, values: list[Any], keys: list[str], chunks: int
) -> None:
    """An Arrow-backed string column is looked up by Arrow's ``index_in`` (any dtype
    of the four, any chunking, duplicated keys, undeclared and missing values), with
    the slots the generic path gives the same values as Python objects."""
    from pandas_dp.engines import codes

    s = _arrow_strings(values, name, chunks)
    assert codes._arrow_string_positions(s, codes._first_positions(keys)) is not None
    generic = codes._slots(pd.Series(values, dtype=object), keys)
    assert codes._slots(s, keys).tolist() == generic.tolist()


class _Str(str):
    """A ``str`` subclass: its equality could differ from its characters'."""


def test_arrow_string_slots_leave_other_keys_to_the_generic_path() -> None:
    """A declared key that is not a string, or a string with no UTF-8 form (a lone
    surrogate), is left to the generic path, which gives the same counts; numpy's
    strings (keys taken from an array) are strings."""
    from pandas_dp.engines import codes

    s = _arrow_strings(["a", "b", None, "1"], "str")
    numpy_keys = list(np.array(["b", "1", "q"]))
    assert codes._slots(s, numpy_keys).tolist() == [3, 0, 4, 1]
    assert codes._arrow_string_positions(s, codes._first_positions(numpy_keys)) is not None
    for keys in (["a", 1], ["a", "\ud800"], ["a", _Str("b")]):
        assert codes._arrow_string_positions(s, codes._first_positions(keys)) is None
        want = codes._slots(pd.Series(["a", "b", None, "1"], dtype=object), keys)
        assert codes._slots(s, keys).tolist() == want.tolist()
    python = pd.Series(["a", None], dtype="string[python]")  # not Arrow-backed
    assert codes._arrow_string_positions(python, {"a": 0}) is None
    assert codes._slots(python, ["a"]).tolist() == [0, 2]


def test_string_columns_count_and_group_alike_in_every_dtype() -> None:
    """value_counts' counts and a group-by's codes are the same for a column of
    strings whatever its dtype (object, Arrow-backed, categorical)."""
    values = ["N", "S", None, "E", "N", "x", "W", "N"]
    cats = ["N", "S", "E", "W"]
    want = engines.category_counts(pd.Series(values, dtype=object), cats)
    want_codes = engines.group_codes([pd.Series(values, dtype=object)], [cats]).codes
    for name in ARROW_STRING_DTYPES:
        s = _arrow_strings(values, name, chunks=2)
        got = engines.category_counts(s, cats)
        assert got.counts.tolist() == want.counts.tolist() == [[3, 1, 1, 1]]
        assert (got.missing.tolist(), got.other.tolist()) == ([1], [1])
        assert engines.group_codes([s], [cats]).codes.tolist() == want_codes.tolist()


def test_repeated_categories_count_once_in_every_dtype() -> None:
    """A category declared twice is counted at its first position, whatever the
    dtype (a categorical's codes used to count it twice, and "other" went negative)."""
    values = ["a", "b", "a", None, "z"]
    for dtype in (object, "category", "str"):
        c = engines.category_counts(pd.Series(values, dtype=dtype), ["a", "b", "a"])
        assert c.counts.tolist() == [[2, 1, 0]]
        assert (c.missing.tolist(), c.other.tolist()) == ([1], [1])


def test_mask_counts_grouped() -> None:
    masks = [pd.Series([True, False, True, True]), pd.Series([True, None, False, True])]
    groups = engines.Groups(np.array([0, 1, -1, 1]), 2)
    assert engines.mask_counts(masks).tolist() == [[3, 2]]
    assert engines.mask_counts(masks, groups).tolist() == [[1, 1], [1, 1]]


def test_row_counts() -> None:
    groups = engines.Groups(np.array([2, 0, -1, 2, 2]), 4)
    assert engines.row_counts(groups, 5).tolist() == [1, 0, 3, 0]
    assert engines.row_counts(None, 5).tolist() == [5]


def test_products_count_has_one_group() -> None:
    p = engines.products([pd.Series([1.0, np.nan, 3.0])], [0.0], [4.0])
    assert p.count.tolist() == [2]


def test_wrong_code_length_raises() -> None:
    with pytest.raises(ValueError, match="rows"):
        engines.moments(
            pd.Series([1.0, 2.0]),
            0,
            1,
            squares=False,
            groups=engines.Groups(np.zeros(3, np.intp), 1),
        )


# ------------------------------------------------------------------ group_codes


def test_group_codes_numeric() -> None:
    s = pd.Series([3, 1, 2, 5, 1])
    g = engines.group_codes([s], [[1, 2, 3]])
    assert g.size == 3
    assert g.codes.tolist() == [2, 0, 1, -1, 0]
    g = engines.group_codes([s], [[1, 2, 3]], other=True)
    assert g.size == 4
    assert g.codes.tolist() == [2, 0, 1, 3, 0]


def test_group_codes_float_with_missing() -> None:
    s = pd.Series([1.5, np.nan, 2.0, np.inf])
    g = engines.group_codes([s], [[2.0, 1.5]], other=True)
    assert g.codes.tolist() == [1, -1, 0, 2]


def test_group_codes_strings_and_categorical() -> None:
    values = ["b", "a", None, "zz", "b"]
    for dtype in [object, "string", pd.CategoricalDtype(["zz", "b", "a", "q"])]:
        g = engines.group_codes([pd.Series(values, dtype=dtype)], [["a", "b"]], other=True)
        assert g.size == 3
        assert g.codes.tolist() == [1, 0, -1, 2, 1], dtype


def test_group_codes_multi_column_mixed_radix() -> None:
    a = pd.Series(["x", "y", "y", "x", "w"])
    b = pd.Series([1, 2, 3, 3, 1]).astype("category")
    c = pd.Series([True, False, True, True, True])
    g = engines.group_codes([a, b, c], [["x", "y"], [1, 2, 3], [False, True]])
    assert g.size == 12
    # code = (pos_a * 3 + pos_b) * 2 + pos_c
    assert g.codes.tolist() == [1, 4 * 2 + 0, 5 * 2 + 1, 2 * 2 + 1, -1]
    with_other = engines.group_codes([a, b, c], [["x", "y"], [1, 2, 3], [False, True]], other=True)
    assert with_other.codes.tolist() == [1, 8, 11, 5, 12]


@pytest.mark.parametrize(
    "junk",
    [
        [[1, 2], {"a": 1}, None, np.nan, "a"],
        [decimal.Decimal("sNaN"), decimal.Decimal(1), "a", pd.NA, pd.NaT],
        [object(), 1, "a", b"a", (1, [2])],
        [],
    ],
)
def test_group_codes_never_raise_on_junk(junk: list[Any]) -> None:
    s = pd.Series(junk, dtype=object)
    g = engines.group_codes([s], [["a", 1]], other=True)
    assert g.codes.shape == (len(junk),)
    assert set(g.codes.tolist()) <= {-1, 0, 1, 2}
    assert "a" not in junk or g.codes[junk.index("a")] == 0
    c = engines.category_counts(s, ["a", 1], groups=g)
    assert c.counts.shape == (3, 2)
    groups, uniques = engines.observed_codes(s)
    assert groups.codes.shape == (len(junk),)
    assert groups.size == len(uniques)


def test_observed_codes_sorted() -> None:
    g, uniques = engines.observed_codes(pd.Series([3, 1, np.nan, 3, 2]))
    assert list(uniques) == [1.0, 2.0, 3.0]
    assert g.codes.tolist() == [2, 0, -1, 2, 1]
    assert g.size == 3
    g, uniques = engines.observed_codes(pd.Series(["b", 1, "a", 1], dtype=object))
    assert g.size == 3 and len(uniques) == 3
    assert g.codes[1] == g.codes[3]


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint32", "uint64", "float64"])
def test_group_codes_integer_table_matches_generic(dtype: str) -> None:
    info = np.iinfo(dtype) if dtype != "float64" else None
    values = [0, 1, 5, 7, 100, 3]
    if info is not None:
        values += [int(info.min), int(info.max), int(info.max) - 4]
    s = pd.Series(values, dtype=dtype)
    keys = [7, 1, 0, 3, 5, -5, 2]
    got = engines.group_codes([s], [keys], other=True)
    want = [keys.index(v) if v in keys else len(keys) for v in values]
    assert got.codes.tolist() == want


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint32", "uint64"])
@pytest.mark.parametrize("span", [3, 500, 10**6, 2**40])
def test_observed_integer_codes_are_factorize(
    monkeypatch: pytest.MonkeyPatch, dtype: str, span: int
) -> None:
    """Private integer keys through the compiled first-row table (long columns, short
    spans; split into parts and threads) give ``pd.factorize``'s codes and uniques,
    in the same order, sorted or not; a wide span, uint64 or no numba factorizes."""
    pytest.importorskip("numba")
    from pandas_dp.engines import _numba

    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 5000)
    info = np.iinfo(dtype)
    rng = np.random.default_rng(span)
    n = 1 << 16
    low = max(int(info.min), -span // 3)
    values = rng.integers(low, min(low + span, int(info.max) + 1), n, dtype=dtype)
    values[-1] = low  # a value first seen in the last part
    for sort in (True, False):
        groups, uniques = engines.observed_codes(pd.Series(values), sort=sort)
        codes, want = pd.factorize(pd.Series(values), sort=sort)
        assert np.array_equal(groups.codes, codes)
        pd.testing.assert_index_equal(uniques, pd.Index(want))
        assert groups.size == len(want)
    used = engines.codes._integer_observed(pd.Series(values), True) is not None
    wide = int(values.max()) - int(values.min()) + 1 > 2 * n
    assert used == (dtype != "uint64" and not wide)


def test_group_codes_wide_integer_keys() -> None:
    s = pd.Series([10**12, 5, -(10**12), 7])
    got = engines.group_codes([s], [[5, 10**12, -(10**12)]])
    assert got.codes.tolist() == [1, 0, 2, -1]


# ------------------------------------------------------------------ numba kernels


def _fast_and_slow(
    monkeypatch: pytest.MonkeyPatch,
    column: pd.Series,
    bounds: tuple[float, float],
    squares: bool,
    groups: engines.Groups | None,
) -> tuple[Any, Any]:
    """The moments of ``column`` from the compiled kernels, then from numpy."""
    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
    fast = engines.moments(column, *bounds, squares=squares, groups=groups)
    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 1 << 62)
    monkeypatch.setattr(engine_module, "WARM_READS", 1 << 62)
    slow = engines.moments(column, *bounds, squares=squares, groups=groups)
    return fast, slow


def test_numba_and_numpy_sums_are_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled kernels give the numpy kernels' integers exactly (skipped without numba)."""
    pytest.importorskip("numba")
    from pandas_dp.engines import _numba

    monkeypatch.setattr(_numba, "BLOCK", 1000)  # several kernel calls, summed as ints
    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 700)  # and several threads
    rng = np.random.default_rng(3)
    n = 20000
    x = rng.normal(0, 30, n)
    x[rng.random(n) < 0.05] = np.nan
    x[:6] = [np.inf, -np.inf, 1e308, -1e308, 2.5, -0.5]
    ints = pd.Series(rng.integers(-50, 50, n))
    flags = pd.Series(rng.random(n) < 0.3)
    codes = rng.integers(-1, 7, n).astype(np.intp)
    for column in [pd.Series(x), ints, flags]:
        for bounds in [(-10.0, 10.0), (0.0, 1.0), (-1e150, 3e150), (1.0, 1.0 + 2**-30)]:
            for groups in [None, engines.Groups(codes, 7)]:
                for squares in [False, True]:
                    fast, slow = _fast_and_slow(monkeypatch, column, bounds, squares, groups)
                    assert np.array_equal(fast.count, slow.count)
                    assert fast.total == slow.total
                    assert fast.squares == slow.squares
                    assert fast.count.dtype == np.int64
    assert _numba.kernels() is not None


HUGE_BOUNDS = [(0.0, 1e308), (-1e308, 0.0), (-8e307, 8e307), (-1e308, -1e307), (1e307, 1e308)]
EXTREMES = [1.7e308, -1.7e308, 1e308, -1e308, 5e307, 0.0, np.inf, -np.inf, np.nan]


@pytest.mark.parametrize("bounds", HUGE_BOUNDS)
@pytest.mark.parametrize("chunk", [3, 1 << 14])
def test_huge_bounds_and_extreme_values_never_warn(
    bounds: tuple[float, float], chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Values at, beyond and far beyond bounds near the float limit: no overflow warning
    (a data value must not warn after the charge), with or without groups, through the
    numpy kernels (one chunk or many); the clamped sums are exact."""
    monkeypatch.setattr(engine_module, "CHUNK", chunk)
    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 1 << 62)
    monkeypatch.setattr(engine_module, "WARM_READS", 1 << 62)
    x = np.array(EXTREMES * 3)
    codes = np.arange(x.shape[0], dtype=np.intp) % 2
    lo, hi = bounds
    half = 0.5 * (hi - lo)
    mid = lo + half
    with np.errstate(over="ignore"):
        y = np.clip(x - mid, -half, half)
    y = y[~np.isnan(y)]
    q = engines.accumulation_step(half)
    want_total = sum(int(v) for v in np.rint(y / q))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one = engines.moments(pd.Series(x), lo, hi, squares=False)
        grouped = engines.moments(
            pd.Series(x), lo, hi, squares=False, groups=engines.Groups(codes, 2)
        )
    assert (one.count[0], one.total[0]) == (y.shape[0], want_total)
    assert sum(grouped.total) == want_total
    assert int(grouped.count.sum()) == y.shape[0]


@pytest.mark.parametrize("bounds", HUGE_BOUNDS)
def test_numba_and_numpy_agree_on_huge_bounds(
    bounds: tuple[float, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bit-identical integers at the float limit (overflowing centring, ±inf, NaN)."""
    pytest.importorskip("numba")
    x = pd.Series(EXTREMES * 40)
    codes = np.arange(len(x), dtype=np.intp) % 3 - 1
    for groups in [None, engines.Groups(codes, 2)]:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fast, slow = _fast_and_slow(monkeypatch, x, bounds, False, groups)
        assert np.array_equal(fast.count, slow.count)
        assert fast.total == slow.total
