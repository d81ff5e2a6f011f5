"""The in-memory engine: exact sufficient statistics of pandas columns, with numpy.

Each column is read once, in cache-sized chunks, without copying it (nullable
extension dtypes are converted to ``float64`` once). A numeric Arrow column
(``pd.ArrowDtype`` of floats, integers or booleans) is read chunk by chunk: a chunk
without nulls as a zero-copy view of its values, a chunk with nulls (or of a type
numpy cannot view, e.g. ``float32``) as a ``float64`` copy of that chunk alone, its
nulls ``NaN`` (:func:`column_pieces`, the one place where a column becomes the
arrays the kernels read).

This module holds what the engine's kernels share: the groups (:class:`Groups`),
the power-of-two rounding step of an exact sum (:func:`accumulation_step`), the
chunk size (:data:`CHUNK`), when the compiled kernels of
:mod:`pandas_dp.engines._numba` run (:data:`USE_NUMBA`, :data:`FAST_MIN_ROWS`,
:data:`WARM_READS`), and the counts of rows and of non-missing values. The exact
centred sums -- a column's moments, several columns' cross-products -- and why they
are exact (REFERENCE.md §13) are in :mod:`pandas_dp.engines.sums`; counts of
categories and group codes in :mod:`pandas_dp.engines.codes`; counts over a
quantile grid in :mod:`pandas_dp.engines.grid`.

Grouping. Every kernel takes an optional :class:`Groups`: one code per row in
``0 .. size - 1`` (``-1``: the row belongs to no released group and is skipped).
Without groups, all rows form one group, and every result has a leading axis of
length 1; there is one code path. The codes come from
:func:`~pandas_dp.engines.codes.group_codes` (a *public* product of declared keys)
or :func:`~pandas_dp.engines.codes.observed_codes` (private keys, thresholded
before release); a column becomes arrays in :mod:`pandas_dp.engines.columns`.

Missing values (``NaN``, ``None``, ``pd.NA``) are counted apart and contribute
nothing; ``±inf`` are clamped to the bounds like any out-of-range value.

Examples
--------
>>> import numpy as np, pandas as pd
>>> g = Groups(np.array([0, 1, 0, -1]), 2)
>>> present_counts(pd.Series([1.0, 5.0, None, 50.0]), g)
array([1, 1])
>>> row_counts(g, 4)
array([2, 1])
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import _numba
from pandas_dp.engines.columns import arrow_numeric, column_pieces

_T = TypeVar("_T")

__all__ = [
    "CHUNK",
    "STEP_BITS",
    "Groups",
    "accumulation_step",
    "row_counts",
]

#: Rows per chunk: 16 Ki doubles = 128 KiB, small enough to stay in L2.
CHUNK: Final = 1 << 14
#: A rounded value is at most ``2**STEP_BITS`` steps; ``CHUNK`` of them sum below 2**53.
STEP_BITS: Final = 38
#: Use the compiled kernels (numba, optional) when installed ...
USE_NUMBA: bool = True
#: ... for columns of at least this many rows (below, numpy's few calls cost less
#: than a compiled call's dispatch, except for :func:`~pandas_dp.engines.sums.moments`:
#: see :func:`_kernels_for`).
FAST_MIN_ROWS: int = 1 << 16
#: Moments of columns shorter than :data:`FAST_MIN_ROWS` computed with numpy
#: before the compiled kernels are loaded for them too.
WARM_READS: int = 256


@dataclass(frozen=True)
class Groups:
    """Which released group each row belongs to.

    Parameters
    ----------
    codes : ndarray of intp
        One code per row, in ``0 .. size - 1``; ``-1`` marks a row that belongs to no
        released group (it is skipped by every kernel).
    size : int
        The number of groups (public: the number of declared keys, or of keys kept
        by a threshold).

    Examples
    --------
    >>> import numpy as np
    >>> Groups(np.array([0, 1, -1, 0]), 2).size
    2
    """

    codes: NDArray[np.intp]
    size: int


def accumulation_step(magnitude: float) -> float:
    """The power-of-two step ``q`` with ``magnitude <= 2**STEP_BITS * q``.

    Parameters
    ----------
    magnitude : float
        The largest absolute value a rounded quantity can take (a half-width, a
        squared half-width, a product of half-widths): public.

    Returns
    -------
    float
        The step, a power of two.

    Examples
    --------
    >>> accumulation_step(50.0) == 2.0**-32
    True
    """
    if not (math.isfinite(magnitude) and magnitude > 0):
        raise ValueError(
            f"the accumulation step needs a positive finite magnitude; got {magnitude}"
        )
    _, e = math.frexp(magnitude)  # magnitude < 2**e
    step = math.ldexp(1.0, e - STEP_BITS)
    if step == 0.0:  # below the smallest subnormal: no exact grid fits
        raise ValueError(
            f"the declared bounds are too narrow for floating point: the rounding step of "
            f"a quantity of magnitude {magnitude:g} underflows. Rescale the column (e.g. "
            f"multiply it by 1e100) and declare bounds in the new unit"
        )
    return step


def _over_pieces(
    fn: Callable[[NDArray[Any], int, int], _T], pieces: Sequence[NDArray[Any]], threads: bool
) -> list[_T]:
    """``fn(values, start, stop)`` over the column's pieces (``start:stop`` the rows
    of ``values``, for slicing group codes). One piece: one call, whose kernels use
    their own threads. Several pieces, with ``threads``: the pieces, cut into the
    parts of :func:`pandas_dp.engines._numba.spans`, run in the compiled kernels'
    thread pool. The caller adds the results (integers: any order is exact)."""
    if len(pieces) == 1:
        return [fn(pieces[0], 0, pieces[0].shape[0])]
    jobs: list[tuple[NDArray[Any], int, int]] = []
    start = 0
    for piece in pieces:
        if threads:
            jobs.extend((piece[a:b], start + a, start + b) for a, b in _numba.spans(piece.shape[0]))
        else:
            jobs.append((piece, start, start + piece.shape[0]))
        start += piece.shape[0]
    if threads:
        return _numba.run_jobs(lambda job: fn(*job), jobs)
    return [fn(*job) for job in jobs]


def _part(groups: Groups | None, start: int, stop: int) -> Groups | None:
    """The groups of rows ``start:stop``."""
    return None if groups is None else Groups(groups.codes[start:stop], groups.size)


def _check_groups(groups: Groups | None, rows: int) -> None:
    """Shapes only (public): the codes have one entry per row."""
    if groups is not None and groups.codes.shape != (rows,):
        raise ValueError(
            f"the group codes have shape {groups.codes.shape}; the data has {rows} rows"
        )


def row_counts(groups: Groups | None, rows: int) -> NDArray[np.int64]:
    """Rows per group (private).

    Parameters
    ----------
    groups : Groups or None
        The grouping; ``None``: all rows form one group.
    rows : int
        The number of rows (used when ``groups`` is ``None``).

    Returns
    -------
    ndarray of int64, shape (size,)
        Rows in each group; rows with code ``-1`` are in none.

    Examples
    --------
    >>> import numpy as np
    >>> row_counts(Groups(np.array([0, 1, -1, 0]), 3), 4)
    array([2, 1, 0])
    >>> row_counts(None, 4)
    array([4])
    """
    if groups is None:
        return np.array([rows], dtype=np.int64)
    return _bincount(groups.codes, groups.size)


def present_counts(series: pd.Series, groups: Groups | None) -> NDArray[np.int64]:
    """Non-missing values per group, of a column of any dtype (private).

    Examples
    --------
    >>> import numpy as np
    >>> present_counts(pd.Series(["a", None, "b", "c"]), Groups(np.array([0, 0, 1, -1]), 2))
    array([1, 1])
    """
    _check_groups(groups, len(series))
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":  # no missing value possible
        return row_counts(groups, len(series))
    if (isinstance(dtype, np.dtype) and dtype.kind == "f") or (
        isinstance(dtype, pd.ArrowDtype) and arrow_numeric(dtype.pyarrow_dtype)
    ):
        pieces = column_pieces(series)
        fast = _fast_kernels() if len(series) >= FAST_MIN_ROWS else None

        def one(x: NDArray[Any], start: int, stop: int) -> NDArray[np.int64]:
            return _present_in(x, _part(groups, start, stop), fast)

        counts = _over_pieces(one, pieces, fast is not None)
        return counts[0] if len(counts) == 1 else np.sum(counts, axis=0, dtype=np.int64)
    present = series.notna().to_numpy(dtype=bool)
    if groups is None:
        return np.array([int(np.count_nonzero(present))], dtype=np.int64)
    return _bincount(np.where(present, groups.codes, -1), groups.size)


def _present_in(x: NDArray[Any], groups: Groups | None, fast: Any | None) -> NDArray[np.int64]:
    """:func:`present_counts` of one piece of a numeric column (missing: ``NaN``)."""
    if x.dtype.kind != "f":
        return row_counts(groups, x.shape[0])
    if fast is not None and x.dtype.isnative:
        if groups is None:
            return np.array([x.shape[0] - _numba.nan_count(fast, x)], dtype=np.int64)
        return _numba.present_counts(fast, x, groups.codes, groups.size)
    if groups is None:  # (no negated copy of the mask)
        return np.array([x.shape[0] - int(np.count_nonzero(np.isnan(x)))], dtype=np.int64)
    return _bincount(np.where(np.isnan(x), -1, groups.codes), groups.size)


def _bincount(codes: NDArray[Any], size: int, weights: NDArray[Any] | None = None) -> NDArray[Any]:
    """``bincount`` over codes in ``-1 .. size - 1``, the ``-1`` bin dropped."""
    if (
        weights is None
        and codes.shape[0] >= FAST_MIN_ROWS
        and size < _numba.TABLE_ROWS
        and (fast := _fast_kernels()) is not None
    ):  # one compiled pass, no shifted copy of the codes
        return _numba.code_counts(fast, codes, -1, size + 1)[1:]
    tally = np.bincount(codes + 1, weights=weights, minlength=size + 1)
    return tally[1:] if weights is not None else tally[1:].astype(np.int64, copy=False)


def _fast_kernels() -> Any | None:
    """The compiled kernels of :mod:`pandas_dp.engines._numba`, or ``None``."""
    if not USE_NUMBA:
        return None
    return _numba.kernels()


_short_reads = 0


def _kernels_for(rows: int) -> Any | None:
    """The compiled kernels for the moments of a column of ``rows`` rows, or ``None``.

    From :data:`FAST_MIN_ROWS` rows always. A shorter column is read with numpy
    until :data:`WARM_READS` shorter reads have asked, then compiled too: importing
    numba and loading the kernels takes about 0.4 s, which a process that releases
    a few times would never get back, while on a 100-row column the compiled pass
    takes about 6 us against numpy's 8 to 11 (measured; for counts and category
    tallies of short columns numpy stays faster). Both give the same integers, so
    when the switch happens changes no release. (The count is not locked: two
    threads may both count one read, which only moves the switch.)
    """
    global _short_reads
    if rows < FAST_MIN_ROWS and _short_reads < WARM_READS:
        _short_reads += 1
        return None
    return _fast_kernels()


def _threads(fast: Any | None, rows: int) -> bool:
    """Whether a column's pieces run in the kernels' thread pool: compiled and long
    (a short column's pieces cost less than handing them to threads)."""
    return fast is not None and rows >= FAST_MIN_ROWS
