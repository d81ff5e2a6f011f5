"""Optional compiled kernels of the pandas engine (``pip install "pandas-dp[fast]"``).

numba is imported, and the kernels are compiled, only on the first call that uses
them (never by ``import pandas_dp``); compiled code is cached on disk when the
package directory allows it. Without numba, :func:`kernels` returns ``None`` and
the engine stays on numpy.

The kernels compute the very integers of the numpy kernels: the same clamp, the
same centring (``x - mid`` in float64), the same scaling (a multiplication by the
power of two ``1 / step``, equal to the division), the same round-half-to-even
(``rint``), and integer additions, which are exact and associative. A call covers
at most ``2**24`` rows, so an ``int64`` sum of values of at most ``2**38`` stays
below ``2**62``; the caller adds the calls' results as Python integers. Reassociated
(vectorized) additions are allowed to the compiler: on integers they change nothing.

Why numba: measured at 10**7 rows (benchmarks/run.py), the chunked numpy kernel
makes five to six passes over each chunk (subtract, clip, NaN test, scale, round,
sum) and runs at about 4-7x one ``x.sum()``; a fused compiled loop reads each
value once and vectorizes. An ungrouped column of more than ``2**20`` rows is split
over up to four threads (the kernels release the GIL); each part's integer sums
are added exactly, so the result does not depend on the split.
"""

from __future__ import annotations

import functools
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

#: Rows per kernel call: ``2**24`` values of at most ``2**38`` sum below ``2**62``.
BLOCK: Final = 1 << 24
#: Threads for one ungrouped column (its parts are added as integers, in any order).
THREADS: int = min(4, os.cpu_count() or 1)
#: Fewest rows per thread.
PARALLEL_ROWS: int = 1 << 20


@functools.cache
def kernels() -> Any | None:
    """The compiled kernels (a namespace of njit functions), or ``None`` without numba."""
    try:
        import numba
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a read-only cache directory
        return _build(numba)


def _build(numba: Any) -> Any:
    def jit(fn: Any) -> Any:
        options = {"nogil": True, "error_model": "numpy", "fastmath": {"reassoc"}}
        try:
            return numba.njit(cache=True, **options)(fn)
        except Exception:  # no usable cache location: compile in memory
            return numba.njit(**options)(fn)

    @jit
    def sums(x: Any, mid: float, half: float, scale: float) -> Any:  # pragma: no cover
        missing = np.int64(0)
        total = np.int64(0)
        for i in range(x.shape[0]):
            v = x[i] - mid
            hole = v != v
            y = v if v > -half else -half
            y = y if y < half else half
            y = 0.0 if hole else y
            missing += hole
            total += np.int64(np.rint(y * scale))
        return missing, total

    @jit
    def sums_squares(
        x: Any, mid: float, half: float, scale: float, sq_scale: float
    ) -> Any:  # pragma: no cover
        missing = np.int64(0)
        total = np.int64(0)
        squares = np.int64(0)
        for i in range(x.shape[0]):
            v = x[i] - mid
            hole = v != v
            y = v if v > -half else -half
            y = y if y < half else half
            y = 0.0 if hole else y
            missing += hole
            total += np.int64(np.rint(y * scale))
            squares += np.int64(np.rint(y * y * sq_scale))
        return missing, total, squares

    @jit
    def grouped(
        x: Any,
        codes: Any,
        mid: float,
        half: float,
        scale: float,
        sq_scale: float,
        squares: bool,
        count: Any,
        total: Any,
        sq: Any,
    ) -> None:  # pragma: no cover
        for i in range(x.shape[0]):
            g = codes[i]
            if g < 0:
                continue
            v = x[i] - mid
            if v != v:
                continue
            y = v if v > -half else -half
            y = y if y < half else half
            count[g] += 1
            total[g] += np.int64(np.rint(y * scale))
            if squares:
                sq[g] += np.int64(np.rint(y * y * sq_scale))

    class Kernels:
        pass

    k = Kernels()
    k.sums = sums  # type: ignore[attr-defined]
    k.sums_squares = sums_squares  # type: ignore[attr-defined]
    k.grouped = grouped  # type: ignore[attr-defined]
    return k


def moments(
    k: Any,
    x: NDArray[Any],
    codes: NDArray[np.intp] | None,
    size: int,
    mid: float,
    half: float,
    scale: float,
    sq_scale: float,
    squares: bool,
) -> tuple[NDArray[np.int64], list[int], list[int]]:
    """Per group non-missing count, ``Σ round(y·scale)`` and ``Σ round(y²·sq_scale)``.

    Parameters
    ----------
    k : namespace
        The compiled kernels (:func:`kernels`).
    x : ndarray
        A numeric or boolean column.
    codes : ndarray of intp or None
        Group codes (``-1``: skipped); ``None``: one group.
    size : int
        The number of groups.
    mid, half : float
        Midpoint and half-width of the declared bounds.
    scale, sq_scale : float
        ``1 / step`` and ``1 / square_step`` (finite powers of two).
    squares : bool
        Whether to accumulate the squares.

    Returns
    -------
    tuple
        Counts (int64 array), totals and squares (lists of Python int).
    """
    n = x.shape[0]
    total = [0] * size
    sq = [0] * size
    if codes is None:

        def run(start: int, stop: int) -> tuple[int, int, int]:
            part = x[start:stop]
            if squares:
                m, t, s = k.sums_squares(part, mid, half, scale, sq_scale)
                return int(m), int(t), int(s)
            m, t = k.sums(part, mid, half, scale)
            return int(m), int(t), 0

        step = min(BLOCK, max(PARALLEL_ROWS, -(-n // THREADS)))
        spans = [(start, min(start + step, n)) for start in range(0, n, step)]
        if len(spans) > 1 and THREADS > 1:  # the kernels release the GIL
            with ThreadPoolExecutor(min(THREADS, len(spans))) as pool:
                parts = list(pool.map(lambda span: run(*span), spans))
        else:
            parts = [run(*span) for span in spans]
        missing = sum(p[0] for p in parts)  # integer sums: any order is exact
        total[0] = sum(p[1] for p in parts)
        sq[0] = sum(p[2] for p in parts)
        return np.array([n - missing], dtype=np.int64), total, sq
    count = np.zeros(size, dtype=np.int64)
    t_acc = np.zeros(size, dtype=np.int64)
    s_acc = np.zeros(size, dtype=np.int64)
    for start in range(0, n, BLOCK):
        t_acc[:] = 0
        s_acc[:] = 0
        k.grouped(
            x[start : start + BLOCK],
            codes[start : start + BLOCK],
            mid,
            half,
            scale,
            sq_scale,
            squares,
            count,
            t_acc,
            s_acc,
        )
        total = [a + int(b) for a, b in zip(total, t_acc, strict=True)]
        sq = [a + int(b) for a, b in zip(sq, s_acc, strict=True)]
    return count, total, sq
