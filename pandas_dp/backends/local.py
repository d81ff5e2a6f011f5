"""Sufficient statistics of in-memory pandas columns, with numpy.

The column's array is read once, in cache-sized chunks, without copying the
column (except for extension dtypes, which are converted to ``float64`` once).
Each chunk is clamped to the declared bounds, centred on their midpoint, and
summed; missing values contribute nothing to the sums and are counted apart.

Examples
--------
>>> import pandas as pd
>>> m = moments(pd.Series([1.0, 5.0, None, 50.0]), 0.0, 10.0)
>>> (m.count, m.total, m.squares)
(3, 1.0, 41.0)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = [
    "CHUNK",
    "CategoryCounts",
    "Moments",
    "category_counts",
    "column_values",
    "mask_counts",
    "moments",
    "non_null_count",
]

#: Rows per chunk: 16 Ki doubles = 128 KiB, small enough to stay in L2.
CHUNK = 1 << 14
#: Up to this many categories, count codes by comparison rather than ``bincount``.
_FEW_CATEGORIES = 32


@dataclass(frozen=True)
class Moments:
    """Sums over the non-missing values ``y = clamp(x, lower, upper) - midpoint``.

    Attributes
    ----------
    rows : int
        Number of rows, missing ones included (the public ``n``).
    count : int
        Number of non-missing values (private).
    total : float
        ``sum(y)`` over non-missing values (private).
    squares : float
        ``sum(y**2)`` over non-missing values (private).
    """

    rows: int
    count: int
    total: float
    squares: float


def column_values(series: pd.Series) -> NDArray[np.generic]:
    """The column as a numpy array, without a copy when its dtype allows.

    numpy-backed numeric and boolean columns are returned as they are; extension
    dtypes (nullable ``Int64``/``Float64``/``boolean``, Arrow) become ``float64``
    with ``NaN`` for missing values.
    """
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "fiub":
        return series.to_numpy(copy=False)
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def non_null_count(series: pd.Series) -> int:
    """Number of non-missing values (private: only ever released with noise)."""
    return int(series.count())


def moments(series: pd.Series, lower: float, upper: float, *, squares: bool = True) -> Moments:
    """One pass over a numeric column: count, centred sum and sum of squares.

    ``NaN`` counts as missing; ``+inf`` and ``-inf`` are clamped to the bounds
    like any other out-of-range value, so no input makes this raise.

    Parameters
    ----------
    series : pandas.Series
        A numeric or boolean column.
    lower, upper : float
        Declared bounds.
    squares : bool, default True
        Whether to accumulate the sum of squares (a variance needs it, a mean not).
    """
    x = column_values(series)
    n = x.shape[0]
    mid = 0.5 * (lower + upper)
    low_c = lower - mid
    high_c = upper - mid
    buf = np.empty(min(CHUNK, max(n, 1)), dtype=np.float64)
    b2 = np.empty_like(buf) if squares else buf
    total = 0.0
    sq = 0.0
    missing = 0
    for start in range(0, n, CHUNK):
        chunk = x[start : start + CHUNK]
        m = chunk.shape[0]
        b = buf[:m]
        if squares:  # centre first: sums of squares of centred values lose no precision
            np.subtract(chunk, mid, out=b, casting="unsafe")
            np.clip(b, low_c, high_c, out=b)
        else:
            np.clip(chunk, lower, upper, out=b, casting="unsafe")
        part = float(b.sum())
        if part != part:  # NaN in this chunk (+-inf were clamped): count and drop them
            holes = np.isnan(b)
            missing += int(np.count_nonzero(holes))
            b[holes] = 0.0 if squares else mid
            part = float(b.sum())
        total += part if squares else part - m * mid
        if squares:
            # not np.dot: a BLAS call per chunk may wake BLAS threads, which costs
            # milliseconds when the cores are busy
            sq += float(np.multiply(b, b, out=b2[:m]).sum())
    return Moments(rows=n, count=n - missing, total=total, squares=sq)


@dataclass(frozen=True)
class CategoryCounts:
    """Counts of a categorical column over its declared categories (all private).

    Attributes
    ----------
    counts : ndarray of int64
        One count per declared category, in declaration order.
    missing : int
        Missing values.
    other : int
        Values that are not missing and not among the declared categories.
    """

    counts: NDArray[np.int64]
    missing: int
    other: int


def category_counts(series: pd.Series, categories: tuple[object, ...]) -> CategoryCounts:
    """One pass (pandas' hash table, or the codes of a categorical) over a column.

    The data's own distinct values never leave this function: only the counts of
    the declared categories, of missing values and of everything else do.
    """
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _categorical_counts(series, dtype, categories)
    observed = series.value_counts(dropna=False, sort=False).to_dict()
    missing = 0
    known: dict[object, int] = {}
    for value, count in observed.items():
        if value is None or value is pd.NA or value is pd.NaT or value != value:
            missing += int(count)
        else:
            known[value] = int(count)
    found = np.array([known.get(c, 0) for c in categories], dtype=np.int64)
    other = sum(known.values()) - int(found.sum())
    return CategoryCounts(counts=found, missing=missing, other=other)


def mask_counts(masks: list[pd.Series]) -> NDArray[np.int64]:
    """Number of rows where each boolean mask is true (missing counts as false)."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, mask in enumerate(masks):
        if isinstance(mask.dtype, np.dtype):  # numpy bool: no missing values possible
            values = mask.to_numpy()
        else:
            values = mask.to_numpy(dtype=bool, na_value=False)
        out[i] = int(np.count_nonzero(values))
    return out


def _categorical_counts(
    series: pd.Series, dtype: pd.CategoricalDtype, categories: tuple[object, ...]
) -> CategoryCounts:
    """A categorical column: one ``bincount`` over its integer codes (``-1`` = missing)."""
    codes = series.cat.codes.to_numpy()
    k = len(dtype.categories)
    if k <= _FEW_CATEGORIES:  # a few passes over the narrow codes beat widening them
        per_code = np.array([np.count_nonzero(codes == c) for c in range(k)], dtype=np.int64)
        missing = int(codes.shape[0] - per_code.sum())
    else:
        tally = np.bincount(codes.astype(np.intp) + 1, minlength=k + 1)
        per_code, missing = tally[1:], int(tally[0])
    code_of = {value: code for code, value in enumerate(dtype.categories)}
    found = np.array(
        [per_code[code_of[c]] if c in code_of else 0 for c in categories], dtype=np.int64
    )
    other = int(per_code.sum()) - int(found.sum())
    return CategoryCounts(counts=found, missing=missing, other=other)
