"""The numpy path's fused kernels give the chunked kernels' integers exactly.

The fused moment kernel (``engines.sums._moments_fused``: one centring, a range
check, one addition per sum, integer sums of bit patterns) against the chunked
numpy kernel it replaces for ungrouped columns (``_moments_numpy``) and against
integers computed here from the definition (clamp, centre, ``rint(y / step)``, a
Python sum); the chunked code counts (``codes._few_code_counts``) against
``np.bincount``. Chunk and thread-part boundaries are made small so that many of
both are crossed.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import engines
from pandas_dp.engines import _numba, codes
from pandas_dp.engines import pandas as engine_module
from pandas_dp.engines import sums as sums_module

BOUNDS = [
    (-10.0, 10.0),
    (0.0, 1.0),
    (0.0, 100.0),
    (-1e150, 3e150),
    (1.0, 1.0 + 2**-30),
    (-3e-300, 5e-300),
    (1e-310, 3e-310),
]


def _columns(n: int) -> list[pd.Series]:
    rng = np.random.default_rng(5)
    x = rng.normal(0, 30, n)
    x[rng.random(n) < 0.05] = np.nan
    x[:9] = [np.inf, -np.inf, 1e308, -1e308, 2.5, -0.5, -0.0, 5e-324, -5e-324]
    inside = rng.uniform(-10, 10, n)  # every chunk inside (-10, 10): the clamp skipped
    return [
        pd.Series(x),
        pd.Series(inside),
        pd.Series(rng.integers(-50, 50, n)),
        pd.Series(rng.random(n) < 0.3),
        pd.Series(x.astype(">f8")),  # non-native byte order
        pd.Series(x[::3]),  # a strided view
    ]


def _definition(x: np.ndarray, lower: float, upper: float, squares: bool) -> tuple[int, int, int]:
    """Count, total and squares from the definition (REFERENCE.md §13), in Python ints."""
    half = 0.5 * (upper - lower)
    mid = lower + half
    step = engines.accumulation_step(half)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.clip(np.asarray(x, dtype=np.float64) - mid, -half, half)
    y = y[~np.isnan(y)]
    total = sum(int(v) for v in np.rint(y / step))
    sq = 0
    if squares:
        sq_step = engines.accumulation_step(half * half)
        sq = sum(int(v) for v in np.rint((y * y) / sq_step))
    return y.shape[0], total, sq


def _chunked(series: pd.Series, lower: float, upper: float, squares: bool) -> Any:
    """The chunked numpy kernel the fused one replaced (one group: all rows)."""
    half = 0.5 * (upper - lower)
    mid = lower + half
    step = engines.accumulation_step(half)
    sq_step = engines.accumulation_step(half * half) if squares else 1.0
    x = series.to_numpy()
    return sums_module._moments_numpy(x, mid, half, step, sq_step, squares, None)


@pytest.fixture
def numpy_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The numpy kernels only, with many chunks and thread parts."""
    monkeypatch.setattr(engine_module, "USE_NUMBA", False)
    monkeypatch.setattr(engine_module, "FAST_MIN_ROWS", 1 << 62)
    monkeypatch.setattr(engine_module, "WARM_READS", 1 << 62)
    monkeypatch.setattr(engine_module, "CHUNK", 64)  # above it: the fused kernel
    monkeypatch.setattr(sums_module, "FUSED_CHUNK", 37)
    monkeypatch.setattr(_numba, "PARALLEL_ROWS", 500)


@pytest.mark.usefixtures("numpy_only")
@pytest.mark.parametrize("squares", [False, True])
@pytest.mark.parametrize("bounds", BOUNDS)
def test_fused_moments_equal_chunked_and_definition(
    bounds: tuple[float, float], squares: bool
) -> None:
    n = 3001
    for column in _columns(n):
        half = 0.5 * (bounds[1] - bounds[0])
        if squares and not 0.0 < half * half < np.inf:  # no step for the squares
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a data value never warns
            got = engines.moments(column, *bounds, squares=squares)
        old = _chunked(column, *bounds, squares)
        assert got.count.dtype == np.int64
        assert np.array_equal(got.count, old.count)
        assert (got.total, got.squares) == (old.total, old.squares)
        count, total, sq = _definition(column.to_numpy(), *bounds, squares)
        assert (int(got.count[0]), got.total[0]) == (count, total)
        if squares:
            assert got.squares[0] == sq


@pytest.mark.usefixtures("numpy_only")
def test_fused_rounds_half_steps_to_even() -> None:
    """Values exactly half a step from two multiples round to the even one, as ``rint``."""
    step = engines.accumulation_step(1.0)  # bounds (-1, 1): mid 0, half 1
    j = np.arange(-40, 41, dtype=np.float64)
    x = np.tile((j + 0.5) * step, 5)
    got = engines.moments(pd.Series(x), -1.0, 1.0, squares=False)
    assert got.total[0] == 5 * int(np.rint(j + 0.5).sum())
    assert got.total[0] == _definition(x, -1.0, 1.0, False)[1]
    assert got.total[0] != 5 * int(np.floor(j + 1.0).sum())  # not half up


@pytest.mark.usefixtures("numpy_only")
def test_fused_sums_beyond_any_float_accumulator() -> None:
    """Sums far above ``2**53``: every value a ``2**37``-step extreme, one tiny one."""
    n = 5 * 37 + 3
    x = np.full(n, 1.0)  # bounds (-1, 1): step 2**-37, each value 2**37 steps
    x[4] = -1.0 + 2.0**-37
    got = engines.moments(pd.Series(x), -1.0, 1.0, squares=True)
    assert got.total == [(n - 2) * 2**37 + 1]
    assert got.squares == [_definition(x, -1.0, 1.0, True)[2]]


def test_fused_kernel_is_used_and_skipped_as_documented() -> None:
    """Bounds whose rounder binade overflows fall back to the chunked kernel."""
    assert sums_module._Fused.make(0.0, 1.0, 2.0**-37, 2.0**-38, True) is not None
    huge_step = engines.accumulation_step(8e307)
    assert sums_module._Fused.make(0.0, 8e307, huge_step, 1.0, False) is None


@pytest.mark.usefixtures("numpy_only")
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32])
@pytest.mark.parametrize(("low", "size"), [(-1, 5), (-2, 4), (-1, 2), (0, 3), (-3, 3), (-1, 33)])
def test_few_code_counts_equal_bincount(
    low: int, size: int, dtype: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(codes, "CODE_CHUNK_BYTES", 96)
    rng = np.random.default_rng(size)
    x: np.ndarray = rng.integers(low, low + size, 4099).astype(dtype)
    got = codes._few_code_counts(x, low, size)
    want = np.bincount(x.astype(np.intp) - low, minlength=size)
    assert got.dtype == np.int64
    assert np.array_equal(got, want)


@pytest.mark.usefixtures("numpy_only")
def test_few_code_counts_with_chunks_of_one_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sorted codes: chunks holding one code, code 0 alone, a gap between codes."""
    monkeypatch.setattr(codes, "CODE_CHUNK_BYTES", 50)
    for values in ([-1] * 120 + [0] * 130 + [3] * 77, [0] * 300, [-1] * 51, [2] * 9 + [-1] * 3):
        x = np.sort(np.array(values, dtype=np.int8))
        for arranged in (x, x[::-1].copy()):
            got = codes._few_code_counts(arranged, -1, 5)
            assert np.array_equal(got, np.bincount(arranged.astype(np.intp) + 1, minlength=5))


@pytest.mark.usefixtures("numpy_only")
def test_categorical_counts_on_the_numpy_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """A categorical column (its last category never seen, missing values) counted
    over its declared categories as pandas counts it."""
    monkeypatch.setattr(codes, "CODE_CHUNK_BYTES", 64)
    rng = np.random.default_rng(9)
    values = rng.choice(["N", "S", "E"], 5000).astype(object)
    values[rng.random(5000) < 0.1] = None
    series = pd.Series(pd.Categorical(values, categories=["N", "S", "E", "W"]))
    got = engines.category_counts(series, ["N", "S", "E", "W"])
    want = series.value_counts(sort=False).reindex(["N", "S", "E", "W"]).to_numpy()
    assert got.counts.tolist() == [want.tolist()]
    assert got.missing.tolist() == [int(series.isna().sum())]
    assert got.other.tolist() == [0]
    reordered = engines.category_counts(series, ["W", "E", "N"])
    assert reordered.counts.tolist() == [[0, want[2], want[0]]]
    assert reordered.other.tolist() == [want[1]]
