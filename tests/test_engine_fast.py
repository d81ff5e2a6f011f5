"""The compiled (numba) engine paths give exactly what the numpy paths give.

Each test runs a public engine function twice, once forced onto the compiled
kernels (``FAST_MIN_ROWS = 0``, with small thread spans so that several threads and
several kernel calls contribute) and once forced onto numpy, and asserts equal
results. Skipped without numba.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import engines
from pandas_dp.engines import pandas as engine_module
from pandas_dp.engines import sums as sums_module

pytest.importorskip("numba")


@pytest.fixture
def both(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], Any]], tuple[Any, Any]]:
    """``run(fn) -> (compiled result, numpy result)``."""
    from pandas_dp.engines import _numba

    assert _numba.kernels() is not None
    monkeypatch.setattr(_numba, "BLOCK", 1000)
    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 700)

    def run(fn: Callable[[], Any]) -> tuple[Any, Any]:
        monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
        fast = fn()
        monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 1 << 62)
        monkeypatch.setattr(engine_module, "WARM_READS", 1 << 62)
        slow = fn()
        return fast, slow

    return run


def _same_moments(a: engines.MomentSums, b: engines.MomentSums) -> None:
    assert a.count.dtype == np.int64 and a.count.shape == b.count.shape
    assert np.array_equal(a.count, b.count)
    assert a.total == b.total
    assert a.squares == b.squares
    assert all(type(t) is int for t in a.total + a.squares)


def test_rounding_ties_and_extremes(both: Any) -> None:
    """Values exactly halfway between two steps round to even on both paths; inf,
    NaN and huge values are clamped or skipped alike."""
    step = engines.accumulation_step(1.0)  # bounds (-1, 1): half-width 1
    k = np.arange(-4000, 4000, dtype=np.float64)
    ties = (k + 0.5) * step  # exact halfway points
    x = np.concatenate(
        [ties, -ties, [np.nan] * 50, [np.inf, -np.inf, 1e308, -1e308, 0.0, -0.0, 5e-324]]
    )
    x = np.random.default_rng(0).permutation(x)
    codes = engines.Groups((np.arange(x.shape[0]) % 5 - 1).astype(np.intp), 4)
    for groups in (None, codes):
        for squares in (False, True):
            fast, slow = both(
                lambda g=groups, sq=squares: engines.moments(
                    pd.Series(x), -1.0, 1.0, squares=sq, groups=g
                )
            )
            _same_moments(fast, slow)


@pytest.mark.parametrize(
    "values",
    [
        np.array([], dtype=np.float64),
        np.full(3000, np.nan),
        np.random.default_rng(1).normal(0, 5, 3001).astype(np.float32),
        np.random.default_rng(2).integers(-128, 127, 2999).astype(np.int8),
        np.random.default_rng(3).integers(0, 255, 2500).astype(np.uint8),
        np.random.default_rng(4).integers(-(2**40), 2**40, 2500),
        np.random.default_rng(5).random(2500) < 0.5,
    ],
    ids=["empty", "all-nan", "float32", "int8", "uint8", "int64", "bool"],
)
def test_moments_dtypes(both: Any, values: NDArrayAny) -> None:
    n = values.shape[0]
    groups = engines.Groups(np.random.default_rng(6).integers(-1, 3, n).astype(np.intp), 3)
    for bounds in [(-3.0, 7.0), (0.0, 1.0), (-1e150, 1e150)]:
        for g in (None, groups):
            fast, slow = both(
                lambda b=bounds, g=g: engines.moments(pd.Series(values), *b, squares=True, groups=g)
            )
            _same_moments(fast, slow)


NDArrayAny = Any


@pytest.mark.parametrize(
    "series",
    [
        pd.Series(np.where(np.random.default_rng(7).random(5000) < 0.1, np.nan, 1.0)),
        pd.Series(np.random.default_rng(8).integers(0, 9, 5000)),
        pd.Series(np.random.default_rng(9).random(5000) < 0.5),
        pd.Series(np.full(5000, np.nan, dtype=np.float32)),
        pd.Series(["a", None] * 2500),
        pd.Series([1, None] * 2500, dtype="Int64"),
        pd.Series([], dtype=np.float64),
    ],
    ids=["float", "int", "bool", "float32-nan", "object", "Int64", "empty"],
)
def test_present_counts(both: Any, series: pd.Series) -> None:
    n = len(series)
    groups = engines.Groups(np.random.default_rng(10).integers(-1, 4, n).astype(np.intp), 4)
    for g in (None, groups):
        fast, slow = both(lambda g=g: engines.present_counts(series, g))
        assert fast.dtype == np.int64 and fast.shape == slow.shape
        assert np.array_equal(fast, slow)
        want = series.notna().to_numpy()
        if g is None:
            assert fast.tolist() == [int(want.sum())]
        else:
            assert fast.tolist() == [int(want[g.codes == c].sum()) for c in range(g.size)]


def test_categorical_counts(both: Any) -> None:
    rng = np.random.default_rng(11)
    values = rng.choice(["a", "b", "c", "d"], 10001, p=[0.5, 0.3, 0.15, 0.05]).astype(object)
    values[rng.random(values.shape[0]) < 0.02] = None
    for categories in (["a", "b", "c", "d"], [f"k{i}" for i in range(200)] + ["b", "a", "d", "c"]):
        series = pd.Series(pd.Categorical(values, categories=categories))
        for declared in (["a", "b", "c", "d"], ["d", "q", "a"], []):
            fast, slow = both(lambda s=series, d=declared: engines.category_counts(s, d))
            assert np.array_equal(fast.counts, slow.counts)
            assert np.array_equal(fast.missing, slow.missing)
            assert np.array_equal(fast.other, slow.other)
            assert int(fast.counts.sum() + fast.missing.sum() + fast.other.sum()) == 10001


def test_arrow_string_counts(both: Any) -> None:
    """An Arrow-backed string column's counts (Arrow's positions tallied, compiled or
    with numpy, short or long tables) equal those of the same values as objects."""
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(13)
    values = rng.choice(["a", "b", "c", "d", "é"], 10001).astype(object)
    values[rng.random(values.shape[0]) < 0.02] = None
    objects = pd.Series(values)
    for dtype in ("str", "string[pyarrow]"):
        series = pd.Series(values, dtype=dtype)
        many = [f"k{i}" for i in range(40)] + ["b", "a", "é"]
        for declared in (["a", "b", "c", "d"], ["d", "q", "a", "d"], many, []):
            want = engines.category_counts(objects, declared)
            fast, slow = both(lambda s=series, d=declared: engines.category_counts(s, d))
            for got in (fast, slow):
                assert np.array_equal(got.counts, want.counts)
                assert np.array_equal(got.missing, want.missing)
                assert np.array_equal(got.other, want.other)


def _keys(kind: str, n: int, rng: np.random.Generator) -> pd.Series:
    ints = rng.integers(-3, 12, n)
    if kind == "int":
        return pd.Series(ints)
    if kind == "int8":
        return pd.Series(ints.astype(np.int8))
    if kind == "uint16":
        return pd.Series(np.abs(ints).astype(np.uint16))
    if kind == "huge":
        return pd.Series(np.where(rng.random(n) < 0.1, np.iinfo(np.int64).min, ints))
    if kind == "category":
        values = pd.Categorical(ints, categories=list(range(-3, 12)))
        values[rng.random(n) < 0.05] = np.nan
        return pd.Series(values)
    strings = ints.astype(str).astype(object)
    strings[rng.random(n) < 0.05] = None
    if kind == "arrow str":  # a table from Arrow's index_in
        pytest.importorskip("pyarrow")
        return pd.Series(strings, dtype="str")
    return pd.Series(strings)  # no table: the numpy path


@pytest.mark.parametrize(
    "kinds",
    [
        ("int",),
        ("int8",),
        ("uint16",),
        ("huge",),
        ("category",),
        ("category", "int"),
        ("int8", "category", "uint16"),
        ("int", "str"),
        ("arrow str",),
        ("category", "arrow str"),
        ("arrow str", "int8", "str"),
    ],
)
def test_group_codes(both: Any, kinds: tuple[str, ...]) -> None:
    rng = np.random.default_rng(12)
    n = 4003
    columns = [_keys(kind, n, rng) for kind in kinds]
    declared: list[list[object]] = [
        ["0", "5", "7", "5"] if "str" in kind else [0, 5, 1, 11, -3, 5, 99] for kind in kinds
    ]
    # the same keys as Python objects: no table, the generic path
    objects = [
        c.astype(object) if k == "arrow str" else c for c, k in zip(columns, kinds, strict=True)
    ]
    for other in (False, True):
        fast, slow = both(lambda o=other: engines.group_codes(columns, declared, other=o))
        assert fast.size == slow.size
        assert fast.codes.dtype == slow.codes.dtype == np.intp
        assert np.array_equal(fast.codes, slow.codes)
        assert (fast.codes >= 0).any() and (fast.codes == (fast.size - 1 if other else -1)).any()
        generic = engines.group_codes(objects, declared, other=other)
        assert np.array_equal(fast.codes, generic.codes)


def test_group_codes_feed_grouped_moments(both: Any) -> None:
    """End to end: categorical keys -> codes -> grouped moments, both paths equal."""
    rng = np.random.default_rng(13)
    n = 6000
    keys = pd.Series(pd.Categorical(rng.integers(0, 50, n), categories=range(50)))
    x = pd.Series(np.where(rng.random(n) < 0.05, np.nan, rng.normal(5, 5, n)))

    def run() -> engines.MomentSums:
        groups = engines.group_codes([keys], [list(range(0, 60, 2))])
        return engines.moments(x, 0.0, 10.0, squares=True, groups=groups)

    fast, slow = both(run)
    _same_moments(fast, slow)


def test_row_counts(both: Any) -> None:
    codes = np.random.default_rng(14).integers(-1, 9, 5000).astype(np.intp)
    for size in (9, 12):
        fast, slow = both(lambda s=size: engines.row_counts(engines.Groups(codes, s), 5000))
        assert fast.dtype == np.int64 and np.array_equal(fast, slow)
        assert fast.tolist() == [int((codes == c).sum()) for c in range(size)]


def test_out_of_range_group_codes_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    """A code at or above ``size`` is a caller's bug: the compiled kernels (which do
    not check array bounds) refuse it rather than write past their tallies."""
    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
    codes = np.array([0, 1, 5, -1] * 100, dtype=np.intp)
    groups = engines.Groups(codes, 2)
    x = pd.Series(np.arange(400.0))
    with pytest.raises(ValueError, match="out of range"):
        engines.moments(x, 0.0, 1.0, squares=False, groups=groups)
    with pytest.raises(ValueError, match="out of range"):
        engines.present_counts(x, groups)
    with pytest.raises(ValueError, match="out of range"):
        engines.row_counts(groups, 400)


def test_big_endian_columns(both: Any) -> None:
    """Non-native byte order (which the compiled kernels cannot take) falls back to
    numpy instead of raising after the budget is charged."""
    rng = np.random.default_rng(15)
    x = rng.normal(0, 3, 3000)
    x[::7] = np.nan
    floats = pd.Series(x.astype(">f8"))
    ints = pd.Series(rng.integers(-5, 5, 3000).astype(">i8"))
    groups = engines.Groups(rng.integers(-1, 3, 3000).astype(np.intp), 3)
    for series in (floats, ints):
        for g in (None, groups):
            fast, slow = both(
                lambda s=series, g=g: engines.moments(s, -2.0, 2.0, squares=True, groups=g)
            )
            _same_moments(fast, slow)
            fast, slow = both(lambda s=series, g=g: engines.present_counts(s, g))
            assert np.array_equal(fast, slow)
    fast, slow = both(lambda: engines.group_codes([ints], [[0, 1, 2]], other=True))
    assert np.array_equal(fast.codes, slow.codes)


def test_long_kernel_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernel calls long enough for their prefetched blocks (``AHEAD_ROWS`` rows
    ahead, one request per cache line of each ``BLOCK_ROWS`` block) and a short tail:
    contiguous and strided columns, several dtypes, missing values, ties and infinite
    values give the numpy path's integers."""
    from pandas_dp.engines import _kernels, _numba

    assert _numba.kernels() is not None
    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 1 << 40)  # one call per column
    rows = 3 * _kernels.AHEAD_ROWS + _kernels.BLOCK_ROWS // 2 + 3  # whole blocks and a tail
    rng = np.random.default_rng(16)
    step = engines.accumulation_step(2.0)
    x = np.concatenate(
        [
            (rng.integers(-(2**39), 2**39, rows) + 0.5) * step,  # ties, some out of bounds
            rng.normal(0.0, 3.0, rows),
        ]
    )
    x[rng.integers(0, x.shape[0], 300)] = np.nan
    x[rng.integers(0, x.shape[0], 20)] = np.inf
    x[rng.integers(0, x.shape[0], 20)] = -np.inf
    columns = {
        "float64": x,
        "float64 strided": x[::2],
        "float32": x.astype(np.float32),
        "int8": rng.integers(-128, 127, 2 * rows).astype(np.int8),
        "bool": rng.random(2 * rows) < 0.5,
    }
    for name, values in columns.items():
        series = pd.Series(values, copy=False)
        for squares in (False, True):
            monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
            fast = engines.moments(series, -2.0, 2.0, squares=squares)
            monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 1 << 62)
            monkeypatch.setattr(engine_module, "WARM_READS", 1 << 62)
            slow = engines.moments(series, -2.0, 2.0, squares=squares)
            assert fast.count.tolist() == slow.count.tolist(), name
            assert (fast.total, fast.squares) == (slow.total, slow.squares), name


@pytest.mark.parametrize(
    "values",
    [
        np.array([], dtype=np.float64),
        np.full(7, np.nan),
        np.concatenate(
            [
                (np.arange(-300, 300) + 0.5) * engines.accumulation_step(2.0),  # ties
                [np.nan, np.inf, -np.inf, 1e308, -1e308, -0.0, 5e-324, 2.0, -2.0],
                np.random.default_rng(17).normal(0, 3, 500),
            ]
        ),
        np.random.default_rng(18).normal(0, 5, 1001).astype(np.float32),
        np.random.default_rng(19).integers(-(2**40), 2**40, 999),
        np.random.default_rng(20).integers(0, 255, 999).astype(np.uint8),
        np.random.default_rng(21).random(999) < 0.5,
    ],
    ids=["empty", "all-nan", "ties-and-extremes", "float32", "int64", "uint8", "bool"],
)
def test_one_chunk_path_equals_chunked_path(values: NDArrayAny) -> None:
    """A short ungrouped column (one chunk) skips the chunk loop's buffers and
    accumulators: the same integers as the chunked numpy kernel."""
    assert values.shape[0] <= engine_module.CHUNK
    for lower, upper in [(-2.0, 2.0), (0.0, 1.0), (-1e150, 1e150), (3.0, 3.5)]:
        for squares in (False, True):
            short = engines.moments(pd.Series(values), lower, upper, squares=squares)
            half = 0.5 * (upper - lower)
            step = engines.accumulation_step(half)
            sq_step = engines.accumulation_step(half * half) if squares else 1.0
            chunked = sums_module._moments_numpy(
                values, lower + half, half, step, sq_step, squares, None
            )
            _same_moments(short, chunked)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork")
def test_threads_work_in_a_forked_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child made by fork after the thread pool exists gets its own pool (the
    parent's threads do not exist in it): a threaded release there must not hang."""
    import multiprocessing

    from pandas_dp.engines import _numba

    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 700)
    x = pd.Series(np.arange(20000.0))
    want = engines.moments(x, 0.0, 10.0, squares=False)  # the parent's pool is now up
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        got = pool.apply_async(_child_total, (x,)).get(timeout=60)
    assert got == want.total


def _child_total(x: pd.Series) -> list[int]:
    return engines.moments(x, 0.0, 10.0, squares=False).total


def test_serial_block_runs_every_part_in_the_calling_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Inside ``serial()`` no part goes to the pool (a Dask task's kernels), and the
    sums are the threaded ones; the block restores threading on exit, also when nested."""
    import threading

    from pandas_dp.engines import _numba

    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 0)
    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 700)
    monkeypatch.setattr(_numba, "THREADS", 2)
    x = pd.Series(np.linspace(-3.0, 13.0, 20001))
    threaded = engines.moments(x, 0.0, 10.0, squares=True)
    seen: set[int] = set()
    real = _numba.run_parts

    def spy(fn: Callable[[int, int], Any], n: int) -> list[Any]:
        def part(start: int, stop: int) -> Any:
            seen.add(threading.get_ident())
            return fn(start, stop)

        return real(part, n)

    monkeypatch.setattr(_numba, "run_parts", spy)
    with _numba.serial():
        with _numba.serial():
            pass
        serial = engines.moments(x, 0.0, 10.0, squares=True)  # still serial after the inner block
        assert seen == {threading.get_ident()}
    assert len(_numba.spans(x.shape[0])) > 1
    _same_moments(serial, threaded)
    seen.clear()
    engines.moments(x, 0.0, 10.0, squares=True)
    assert seen and seen != {threading.get_ident()}  # threads again outside the block


def test_short_columns_switch_to_the_kernels_after_the_warm_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Below FAST_MIN_ROWS, moments stay on numpy for WARM_READS reads, then compile;
    the sums do not change at the switch (missing values included)."""
    from pandas_dp.engines import _numba

    monkeypatch.setattr(engine_module, "WARM_READS", 3)
    monkeypatch.setattr(engine_module, "_short_reads", 0)
    compiled: list[int] = []
    real = _numba.moments

    def spy(*args: Any, **kwargs: Any) -> Any:
        compiled.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_numba, "moments", spy)
    x = np.random.default_rng(4).uniform(-5.0, 15.0, 100)
    x[[3, 50]] = np.nan
    series = pd.Series(x)
    got = []
    for read in range(5):
        got.append(engines.moments(series, 0.0, 10.0, squares=True))
        assert len(compiled) == max(0, read - 2), read
    for later in got[1:]:
        _same_moments(later, got[0])
    assert int(got[0].count[0]) == 98
    # a long column never waits for the warm reads
    monkeypatch.setattr(engine_module, "_short_reads", 0)
    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 50)
    engines.moments(series, 0.0, 10.0, squares=False)
    assert len(compiled) == 3


@pytest.mark.parametrize("size", [1, 2, 5, 4096, 4097, 20000])
@pytest.mark.parametrize("rows", [0, 7, 1001])
def test_trusted_code_counts_match_bincount(size: int, rows: int) -> None:
    """Both tallies of ``code_counts`` (interleaved up to INTERLEAVED_CODES codes, one
    table above), including the rows left over after the last whole interleaved step."""
    from pandas_dp.engines import _kernels, _numba

    assert _kernels.INTERLEAVED_CODES == 4096
    rng = np.random.default_rng(size * 1000 + rows)
    dtype = np.int8 if size < 100 else np.int32
    codes = (rng.integers(0, size, rows) - 1).astype(dtype)
    if rows:
        codes[-1] = size - 2  # the last code, in the leftover rows
    kernels = _numba.kernels()
    got = kernels.code_counts(codes, -1, size)
    expected = np.bincount(codes.astype(np.intp) + 1, minlength=size)
    assert got.dtype == np.int64
    assert got.tolist() == expected.tolist()
