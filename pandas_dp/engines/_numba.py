"""Compiled kernels of the pandas engine (numba: a dependency wherever it has wheels).

numba is imported, and the kernels (:mod:`pandas_dp.engines._kernels`) are
compiled, only on the first call that uses them (never by ``import pandas_dp``);
compiled code is cached on disk, beside the package where it may write, else in the
user's cache directory (numba's own fallback), so a second process does not compile.
Without numba (a platform it has no wheels for), :func:`kernels` returns ``None`` and
the engine stays on numpy.

The kernels compute the very integers of the numpy kernels: the same clamp, the
same centring (``x - mid`` in float64), the same scaling (a multiplication by the
power of two ``1 / step``, equal to the division), the same round-half-to-even, and
integer additions, which are exact and associative. A call covers at most ``2**24``
rows, so an ``int64`` sum of values of at most ``2**38`` stays below ``2**62``; the
caller adds the calls' results as Python integers. No float reduction is ever
reassociated: the only reductions are integer ones.

Why numba: measured at 10**7 rows (benchmarks/run.py), numpy needs one call per
step over each chunk -- even the fused numpy kernel of
:mod:`~pandas_dp.engines.sums` (subtract, range check, one rounding addition, an
integer sum) runs at about 2.5x one ``x.sum()`` for a mean and 3x for a variance,
in CPU time -- while a fused compiled loop reads each value once and vectorizes
(about 1.1-1.2x). Group keys are mapped to codes in one compiled pass per
key column (the numpy path makes about ten), categorical codes are tallied in one
pass, and a float column's missing values are counted in one pass without a mask.

Threads: a column of more than :data:`PARALLEL_ROWS` rows is split into at most
:data:`THREADS` parts (the kernels release the GIL), each with its own integer
sums or per-group tallies, added exactly afterwards: the result does not depend on
the split, the number of threads or their timing.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

import numpy as np
from numpy.typing import NDArray

from pandas_dp._optional import compiled

T = TypeVar("T")

#: Rows per kernel call: ``2**24`` values of at most ``2**38`` sum below ``2**62``.
BLOCK: Final = 1 << 24
#: Threads for one ungrouped column (its parts are added as integers, in any order).
THREADS: int = min(4, os.cpu_count() or 1)
#: Fewest rows per part.
PARALLEL_ROWS: int = 1 << 18
#: Parts per thread of a long column (the pool hands them out as threads free up).
PARTS_PER_THREAD: int = 4
#: Longest per-thread tally or key table of the kernels (a longer one falls back to numpy).
TABLE_ROWS: Final = 1 << 20


@functools.cache
def kernels() -> Any | None:
    """The compiled kernels (:mod:`pandas_dp.engines._kernels`), or ``None`` without numba."""
    return compiled("pandas_dp.engines._kernels")


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """One pool per process, made on first use (threads cost ~60 us to start). Keyed
    by process id: a child made by ``fork`` inherits the parent's pool object but
    none of its threads, so it makes its own."""
    pid = os.getpid()
    with _POOL_LOCK:
        pool = _POOLS.get(pid)
        if pool is None:
            _POOLS.clear()
            pool = _POOLS[pid] = ThreadPoolExecutor(THREADS, thread_name_prefix="pandas-dp-engine")
        return pool


def spans(n: int) -> list[tuple[int, int]]:
    """Row ranges of at most :data:`BLOCK` rows and at least :data:`PARALLEL_ROWS`,
    :data:`PARTS_PER_THREAD` per thread when ``n`` is large (a thread that gets a
    free core takes more of them than one sharing its core)."""
    step = min(BLOCK, max(PARALLEL_ROWS, -(-n // (THREADS * PARTS_PER_THREAD)), 1))
    return [(start, min(start + step, n)) for start in range(0, n, step)] or [(0, 0)]


_SERIAL = threading.local()


@contextlib.contextmanager
def serial() -> Iterator[None]:
    """Within the block, this thread's kernels run every part in the calling thread.

    For a task of a scheduler that already runs one task per core (a Dask worker):
    the kernels' own threads would only compete with the other tasks. The parts,
    hence the integers added, are the same as with threads.
    """
    before = getattr(_SERIAL, "on", False)
    _SERIAL.on = True
    try:
        yield
    finally:
        _SERIAL.on = before


def run_parts(fn: Callable[[int, int], T], n: int) -> list[T]:
    """``fn(start, stop)`` over :func:`spans` of ``n`` rows, in threads (the kernels
    release the GIL) unless inside :func:`serial`. The caller adds the parts'
    integers: any order is exact."""
    if n <= PARALLEL_ROWS and n <= BLOCK:  # spans(n) is [(0, n)]: no list to build
        return [fn(0, n)]
    parts = spans(n)
    if len(parts) > 1 and THREADS > 1 and not getattr(_SERIAL, "on", False):
        return list(_pool().map(lambda span: fn(*span), parts))
    return [fn(*span) for span in parts]


def run_jobs(fn: Callable[[Any], T], jobs: Sequence[Any]) -> list[T]:
    """``fn(job)`` for each job, in threads unless inside :func:`serial`.

    For work already cut into pieces (the chunks of an Arrow column): each job runs
    its kernels in its own thread, serially (a job never waits on the pool). The
    caller adds the jobs' integers: any order is exact.
    """
    if len(jobs) > 1 and THREADS > 1 and not getattr(_SERIAL, "on", False):

        def one(job: Any) -> T:
            with serial():
                return fn(job)

        return list(_pool().map(one, jobs))
    return [fn(job) for job in jobs]


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
    k : module
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
    if codes is None:

        def run(start: int, stop: int) -> tuple[int, int, int]:
            part = x[start:stop]
            if squares:
                m, t, s = k.sums_squares(part, mid, half, scale, sq_scale)
                return int(m), int(t), int(s)
            m, t = k.sums(part, mid, half, scale)
            return int(m), int(t), 0

        parts = run_parts(run, n)
        if len(parts) == 1:
            (one_missing, one_total, one_squares) = parts[0]
            return np.array([n - one_missing], dtype=np.int64), [one_total], [one_squares]
        missing = sum(p[0] for p in parts)  # integer sums: any order is exact
        return (
            np.array([n - missing], dtype=np.int64),
            [sum(p[1] for p in parts)],
            [sum(p[2] for p in parts)],
        )

    def run_grouped(start: int, stop: int) -> tuple[NDArray[np.int64], ...]:
        count = np.zeros(size, dtype=np.int64)
        total = np.zeros(size, dtype=np.int64)
        sq = np.zeros(size, dtype=np.int64) if squares else count[:0]
        stray = k.grouped(
            x[start:stop], codes[start:stop], mid, half, scale, sq_scale, squares, count, total, sq
        )
        _no_stray(int(stray))
        return count, total, sq

    tallies = run_parts(run_grouped, n)
    count: NDArray[np.int64] = np.sum([p[0] for p in tallies], axis=0, dtype=np.int64)
    totals = [0] * size
    sq = [0] * size
    for _, t, s in tallies:  # each part is below 2**62 per group; their sum may not be
        totals = [a + int(b) for a, b in zip(totals, t.tolist(), strict=True)]
        if squares:
            sq = [a + int(b) for a, b in zip(sq, s.tolist(), strict=True)]
    return count, totals, sq


def nan_count(k: Any, x: NDArray[np.floating[Any]]) -> int:
    """The number of NaN values of a float array (threads for a long one)."""
    return sum(run_parts(lambda start, stop: int(k.nan_count(x[start:stop])), x.shape[0]))


def present_counts(
    k: Any, x: NDArray[np.floating[Any]], codes: NDArray[np.intp], size: int
) -> NDArray[np.int64]:
    """Per group (``codes >= 0``), the non-NaN values of a float array."""

    def run(start: int, stop: int) -> NDArray[np.int64]:
        count = np.zeros(size, dtype=np.int64)
        _no_stray(int(k.grouped_present(x[start:stop], codes[start:stop], count)))
        return count

    return np.sum(run_parts(run, x.shape[0]), axis=0, dtype=np.int64).reshape(size)


def code_counts(
    k: Any, codes: NDArray[np.integer[Any]], low: int, size: int, *, trusted: bool = False
) -> NDArray[np.int64]:
    """Counts of the integer codes ``low .. low + size - 1``.

    ``trusted``: every code is known to be in range (a categorical's own codes), so
    no code is checked. Otherwise a code out of range (a caller's bug, never a data
    value) raises ``ValueError``.
    """

    def run(start: int, stop: int) -> NDArray[np.int64]:
        part = codes[start:stop]
        if trusted:
            out: NDArray[np.int64] = k.code_counts(part, low, size)
            return out
        counted, stray = k.checked_code_counts(part, low, size)
        _no_stray(int(stray))
        return counted  # type: ignore[no-any-return]

    return np.sum(run_parts(run, codes.shape[0]), axis=0, dtype=np.int64).reshape(size)


def _no_stray(stray: int) -> None:
    if stray:
        raise ValueError(f"{stray} group codes are out of range (a bug in the caller)")


def key_codes(
    k: Any,
    columns: Sequence[tuple[NDArray[np.integer[Any]], int, NDArray[np.intp], int]],
    rows: int,
    undeclared: int,
) -> NDArray[np.intp]:
    """Mixed-radix group codes of integer key columns, one fused pass per column.

    Parameters
    ----------
    k : module
        The compiled kernels.
    columns : sequence of (values, low, table, radix)
        Per key column: its integer values, and ``table[v - low]`` the slot of value
        ``v`` (its position among ``radix`` declared keys, ``radix`` if undeclared,
        ``radix + 1`` if missing; a value off the table takes the last entry).
    rows : int
        The number of rows.
    undeclared : int
        The code of a row with an undeclared key (and no missing one).

    Returns
    -------
    ndarray of intp
        Per row, the code; ``-1`` when a key is missing.
    """
    code = np.empty(rows, dtype=np.intp)
    if len(columns) == 1:  # one key column: a plain table look-up of the final code
        values, low, table, radix = columns[0]
        final = np.where(table < radix, table, np.where(table == radix, undeclared, -1))
        final = final.astype(np.intp)
        run_parts(
            lambda start, stop: k.table_codes(values[start:stop], low, final, code[start:stop]),
            rows,
        )
        return code

    def run(start: int, stop: int) -> None:
        last = len(columns) - 1
        for i, (values, low, table, radix) in enumerate(columns):
            mark = undeclared if i == last else -2
            k.key_codes(values[start:stop], low, table, radix, code[start:stop], i == 0, mark)

    run_parts(run, rows)
    return code
