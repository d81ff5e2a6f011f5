"""The grid-count kernel: counts of a column's clamped values in the bins of a public grid.

The sufficient statistic of a quantile (REFERENCE.md §12): the declared bounds
``[a, b]`` are cut into ``bins`` equal-width bins ``[e_j, e_{j+1})`` with
``e_j = a + j (b - a) / bins`` (the last bin also holds ``b``). A value is clamped
to ``[a, b]`` and counted in its bin; a missing value (``NaN``, ``None``,
``pd.NA``) or one that is not a number (a string in an object column) is counted
in no bin. One row lands in at most one bin, so the histogram is a count over
public buckets (the ``category_counts`` row of the sensitivity table).

A quantile selection counts on the grid twice as fine as its candidates', whose
bins are the halves of the cells centred on the candidates
(:mod:`pandas_dp.stats.quantiles.search`).

The counts are integers, so they are the same for any row order, chunking or
partition of the rows, and they add up across chunks, partitions and groups.
The kernel never raises on a value of the data.

Examples
--------
>>> import numpy as np, pandas as pd
>>> grid_counts(pd.Series([0.5, 1.5, 9.0, None, -3.0]), 0.0, 4.0, 4)
array([[2, 1, 0, 1]])
>>> g = Groups(np.array([0, 1, 1, 0, -1]), 2)
>>> grid_counts(pd.Series([0.5, 1.5, 9.0, None, -3.0]), 0.0, 4.0, 4, groups=g)
array([[1, 0, 0, 0],
       [0, 1, 0, 1]])
"""

from __future__ import annotations

import functools
import math
import threading
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp._optional import compiled
from pandas_dp.engines import _numba
from pandas_dp.engines.columns import column_pieces
from pandas_dp.engines.pandas import CHUNK, Groups, _over_pieces

__all__ = ["check_grid", "grid_counts"]


def check_grid(lower: float, upper: float, bins: int) -> None:
    """Validate a grid from public facts (raises before any data is read).

    Parameters
    ----------
    lower, upper : float
        The declared bounds: finite, ``lower < upper``, finite width.
    bins : int
        The number of equal-width bins, at least 1.

    Examples
    --------
    >>> check_grid(0.0, 1.0, 16)
    """
    if isinstance(bins, bool) or not isinstance(bins, int | np.integer) or bins < 1:
        raise ValueError(f"bins must be a whole number >= 1 (e.g. bins=1024); got {bins!r}")
    if not (math.isfinite(lower) and math.isfinite(upper) and lower < upper):
        raise ValueError(f"a grid needs finite bounds with lower < upper; got ({lower}, {upper})")
    if not math.isfinite(upper - lower):
        raise ValueError(
            f"the bounds ({lower:g}, {upper:g}) are too wide for a grid: their width "
            f"overflows. Declare narrower bounds or rescale the column"
        )


def _numbers(series: pd.Series) -> list[NDArray[np.float64]]:
    """The column as float64 pieces (:func:`~pandas_dp.engines.columns.column_pieces`),
    ``NaN`` for anything missing or not a number (never raises).

    A column that is not numeric is read value by value, each value as ``float()``
    reads it: one row's value never changes how another row is read (a reader that
    switched for the whole column on one unparsable row would let that row move
    every other row's count).
    """
    if series.dtype != object:
        try:
            pieces = column_pieces(series)
            if all(x.dtype.kind in "fiub" for x in pieces):
                return [np.asarray(x, dtype=np.float64) for x in pieces]
        except Exception:  # not numbers after all: value by value below
            pass

    def one(v: Any) -> float:
        try:
            return float(v)
        except Exception:
            return math.nan

    return [np.array([one(v) for v in series.tolist()], dtype=np.float64).reshape(-1)]


def _bins_of(x: NDArray[np.float64], lower: float, upper: float, bins: int) -> NDArray[np.intp]:
    """Per value its bin in ``0 .. bins - 1``; ``bins`` for a missing value."""
    with np.errstate(invalid="ignore"):
        idx = np.floor((np.clip(x, lower, upper) - lower) * (bins / (upper - lower)))
    idx = np.where(np.isnan(idx), bins, np.clip(idx, 0, bins - 1))
    return idx.astype(np.intp)


@functools.cache
def _compiled() -> Any | None:
    """The compiled tally (:mod:`pandas_dp.engines._grid_kernel`), or None without numba."""
    return compiled("pandas_dp.engines._grid_kernel", "grid_tally")


def _counts(
    x: NDArray[np.float64],
    lower: float,
    upper: float,
    bins: int,
    groups: Groups | None,
    size: int,
    tally: Any | None,
) -> NDArray[np.int64]:
    """:func:`grid_counts` of one piece: compiled (``tally``, the same bins in one pass,
    parts in threads added exactly) or with numpy (in blocks of ``16 * CHUNK`` rows)."""
    if tally is not None:
        scale = bins / (upper - lower)
        codes = np.zeros(0, dtype=np.int64) if groups is None else groups.codes
        # one table per thread, each adding its parts (a fresh table costs page
        # faults: one per part would cost more than the tallies of a few parts)
        kind = np.int32 if x.shape[0] < 1 << 31 else np.int64
        tables: dict[int, NDArray[Any]] = {}

        def run(start: int, stop: int) -> None:
            part = codes[start:stop] if groups is not None else codes
            table = tables.get(threading.get_ident())
            if table is None:  # (a thread's own key: no other thread sets it)
                table = tables[threading.get_ident()] = np.zeros(size * bins, dtype=kind)
            tally(x[start:stop], part, float(lower), float(upper), scale, bins, table)

        _numba.run_parts(run, x.shape[0])
        parts = iter(tables.values())
        total = next(parts).astype(np.int64)
        for part in parts:
            total += part  # (exact: integers)
        return total.reshape(size, bins)
    n = x.shape[0]
    width = bins + 1  # one extra slot per group for missing values, dropped at the end
    table = np.zeros(size * width, dtype=np.int64)
    for start in range(0, n, 16 * CHUNK):
        idx = _bins_of(x[start : start + 16 * CHUNK], lower, upper, bins)
        if groups is None:
            table += np.bincount(idx, minlength=width)
            continue
        codes = groups.codes[start : start + 16 * CHUNK]
        slots = np.where(codes >= 0, codes * width + idx, size * width)
        table += np.bincount(slots, minlength=size * width + 1)[: size * width]
    return np.ascontiguousarray(table.reshape(size, width)[:, :bins])


def grid_counts(
    series: pd.Series,
    lower: float,
    upper: float,
    bins: int,
    *,
    groups: Groups | None = None,
) -> NDArray[np.int64]:
    """Per group, the number of the column's clamped values in each bin of the grid.

    Parameters
    ----------
    series : pandas.Series
        Any column; values that are missing or not numbers are counted nowhere,
        ``±inf`` and out-of-range values are clamped to the bounds.
    lower, upper : float
        The declared bounds (public; see :func:`check_grid`).
    bins : int
        The number of equal-width bins.
    groups : Groups, optional
        The group of each row (``-1``: in no group); ``None``: all rows form one group.

    Returns
    -------
    numpy.ndarray of int64, shape (size, bins)
        One row of bin counts per group.

    Examples
    --------
    >>> import pandas as pd
    >>> grid_counts(pd.Series(["1", "x", 3.9, float("inf")]), 0.0, 4.0, 2)
    array([[1, 2]])
    """
    check_grid(lower, upper, bins)
    pieces = _numbers(series)
    n = sum(x.shape[0] for x in pieces)
    if groups is not None and groups.codes.shape != (n,):
        raise ValueError(f"the group codes have shape {groups.codes.shape}; the data has {n} rows")
    size = 1 if groups is None else groups.size
    compiled = _compiled() if n > 0 else None

    def one(x: NDArray[np.float64], start: int, stop: int) -> NDArray[np.int64]:
        part = None if groups is None else Groups(groups.codes[start:stop], size)
        return _counts(x, lower, upper, bins, part, size, compiled)

    counts = _over_pieces(one, pieces, compiled is not None)
    return counts[0] if len(counts) == 1 else np.sum(counts, axis=0, dtype=np.int64)
