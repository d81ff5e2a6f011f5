"""The in-memory engine: exact sufficient statistics of pandas columns, with numpy.

Each column is read once, in cache-sized chunks, without copying it (extension
dtypes are converted to ``float64`` once). A value ``x`` becomes
``y = clamp(x - m, -h, h)`` (``m`` the midpoint, ``h`` the half-width of the
declared bounds), then ``round(y / q)``, an integer, with ``q`` a power of two
fixed by the bounds alone (:func:`accumulation_step`); squares and products are
rounded likewise on their own steps. Within a chunk of ``2**14`` values every such
integer is at most ``2**38`` in size, so the chunk's float sum is exact in any
order; chunks are added as Python integers. The sums are therefore exact, and the
same for any row order or chunking (REFERENCE.md §13). The rounding moves a
row's contribution by at most one step, which the plan adds to the sensitivity.

Missing values (``NaN``, ``None``, ``pd.NA``) are counted apart and contribute
nothing; ``±inf`` are clamped to the bounds like any out-of-range value.

Examples
--------
>>> import pandas as pd
>>> m = moments(pd.Series([1.0, 5.0, None, 50.0]), 0.0, 10.0, squares=True)
>>> m.count, m.total_value, m.squares_value
(3, 1.0, 41.0)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = [
    "CHUNK",
    "STEP_BITS",
    "CategoryCounts",
    "MomentSums",
    "ProductSums",
    "accumulation_step",
    "category_counts",
    "column_values",
    "mask_counts",
    "moments",
    "products",
]

#: Rows per chunk: 16 Ki doubles = 128 KiB, small enough to stay in L2.
CHUNK: Final = 1 << 14
#: A rounded value is at most ``2**STEP_BITS`` steps; ``CHUNK`` of them sum below 2**53.
STEP_BITS: Final = 38
#: Up to this many categories, count codes by comparison rather than ``bincount``.
_FEW_CATEGORIES: Final = 32


def accumulation_step(magnitude: float) -> float:
    """The power-of-two step ``q`` with ``magnitude <= 2**STEP_BITS * q``.

    ``magnitude`` is the largest absolute value a rounded quantity can take (a
    half-width, a squared half-width, a product of half-widths): public.

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


def column_values(series: pd.Series) -> NDArray[Any]:
    """The column as a numpy array, without a copy when its dtype allows.

    numpy-backed numeric and boolean columns are returned as they are; extension
    dtypes (nullable ``Int64``/``Float64``/``boolean``, Arrow) become ``float64``
    with ``NaN`` for missing values.
    """
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "fiub":
        return series.to_numpy(copy=False)
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def _exact_sum(values: NDArray[np.float64]) -> int:
    """The sum of integer-valued floats below ``2**STEP_BITS`` (exact: see the module)."""
    return int(values.sum())


@dataclass(frozen=True)
class MomentSums:
    """Exact sums over the non-missing values of one column (all private).

    Attributes
    ----------
    count : int
        Non-missing values.
    total : int
        ``Σ round(y / step)``, ``y`` the clamped, centred value.
    squares : int
        ``Σ round(y² / square_step)`` (0 when not asked for).
    step, square_step : float
        The public rounding steps.
    """

    count: int
    total: int
    squares: int
    step: float
    square_step: float

    @property
    def total_exact(self) -> Fraction:
        """``Σ y`` exactly (an integer times the power-of-two step)."""
        return self.total * Fraction(self.step)

    @property
    def squares_exact(self) -> Fraction:
        """``Σ y²`` exactly."""
        return self.squares * Fraction(self.square_step)

    @property
    def total_value(self) -> float:
        """``Σ y`` (the centred sum) as a float."""
        return float(self.total) * self.step

    @property
    def squares_value(self) -> float:
        """``Σ y²`` (the centred squares) as a float."""
        return float(self.squares) * self.square_step


def moments(series: pd.Series, lower: float, upper: float, *, squares: bool) -> MomentSums:
    """One pass over a numeric column: count, centred sum and centred squares.

    Parameters
    ----------
    series : pandas.Series
        A numeric or boolean column.
    lower, upper : float
        Declared bounds (finite, ``lower < upper``, finite width).
    squares : bool
        Whether to accumulate the squares (a variance needs them, a mean not).
    """
    x = column_values(series)
    n = x.shape[0]
    half = 0.5 * (upper - lower)
    mid = lower + half
    step = accumulation_step(half)
    sq_step = accumulation_step(half * half) if squares else 1.0
    buf = np.empty(min(CHUNK, max(n, 1)), dtype=np.float64)
    b2 = np.empty_like(buf)
    total = sq = missing = 0
    for start in range(0, n, CHUNK):
        chunk = x[start : start + CHUNK]
        m = chunk.shape[0]
        b = buf[:m]
        np.subtract(chunk, mid, out=b, casting="unsafe")
        np.clip(b, -half, half, out=b)
        if math.isnan(float(b.sum())):  # missing values in this chunk: count, then zero
            holes = np.isnan(b)
            missing += int(np.count_nonzero(holes))
            b[holes] = 0.0
        if squares:
            c = b2[:m]
            np.multiply(b, b, out=c)
            np.divide(c, sq_step, out=c)  # not times 1/step: that overflows for tiny steps
            np.rint(c, out=c)
            sq += _exact_sum(c)
        np.divide(b, step, out=b)
        np.rint(b, out=b)
        total += _exact_sum(b)
    return MomentSums(n - missing, total, sq, step, sq_step)


@dataclass(frozen=True)
class ProductSums:
    """Exact sums over the complete rows of several columns (all private).

    Attributes
    ----------
    count : int
        Rows where no selected column is missing.
    totals : list of int
        Per column, ``Σ round(y_i / steps[i])``.
    products : dict
        ``(i, j) -> Σ round(y_i y_j / product_steps[i, j])`` for ``i <= j``.
    steps : list of float
    product_steps : dict
    """

    count: int
    totals: list[int]
    products: dict[tuple[int, int], int]
    steps: list[float]
    product_steps: dict[tuple[int, int], float]

    def exact(self) -> tuple[list[Fraction], dict[tuple[int, int], Fraction]]:
        """The centred sums and the cross-products as exact rationals."""
        sums = [t * Fraction(q) for t, q in zip(self.totals, self.steps, strict=True)]
        prods = {ij: v * Fraction(self.product_steps[ij]) for ij, v in self.products.items()}
        return sums, prods

    def matrices(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The centred sums ``S`` and the symmetric cross-product matrix ``P``."""
        p = len(self.totals)
        s = np.array([float(t) * q for t, q in zip(self.totals, self.steps, strict=True)])
        pm = np.zeros((p, p))
        for (i, j), v in self.products.items():
            pm[i, j] = pm[j, i] = float(v) * self.product_steps[(i, j)]
        return s, pm


def products(
    columns: Sequence[pd.Series], lowers: Sequence[float], uppers: Sequence[float]
) -> ProductSums:
    """One pass over several columns: complete rows, centred sums, cross-products.

    A row with a missing value in any of the columns is left out of every sum
    (listwise deletion), so one count serves the whole matrix.
    """
    arrays = [column_values(c) for c in columns]
    p = len(arrays)
    n = arrays[0].shape[0] if p else 0
    half = [0.5 * (u - lo) for lo, u in zip(lowers, uppers, strict=True)]
    mid = [lo + h for lo, h in zip(lowers, half, strict=True)]
    steps = [accumulation_step(h) for h in half]
    pairs = [(i, j) for i in range(p) for j in range(i, p)]
    psteps = {(i, j): accumulation_step(half[i] * half[j]) for i, j in pairs}
    block = np.empty((p, min(CHUNK, max(n, 1))))
    tmp = np.empty(block.shape[1])
    totals = [0] * p
    prods = dict.fromkeys(pairs, 0)
    missing = 0
    for start in range(0, n, CHUNK):
        m = min(CHUNK, n - start)
        b = block[:, :m]
        for i, x in enumerate(arrays):
            np.subtract(x[start : start + m], mid[i], out=b[i], casting="unsafe")
            np.clip(b[i], -half[i], half[i], out=b[i])
        holes = np.isnan(b).any(axis=0)
        if holes.any():
            missing += int(np.count_nonzero(holes))
            b[:, holes] = 0.0
        t = tmp[:m]
        for i, j in pairs:
            np.multiply(b[i], b[j], out=t)
            np.divide(t, psteps[(i, j)], out=t)
            np.rint(t, out=t)
            prods[(i, j)] += _exact_sum(t)
        for i in range(p):
            np.divide(b[i], steps[i], out=t)
            np.rint(t, out=t)
            totals[i] += _exact_sum(t)
    return ProductSums(n - missing, totals, prods, steps, psteps)


@dataclass(frozen=True)
class CategoryCounts:
    """Counts of a column over its declared categories (all private).

    Attributes
    ----------
    counts : ndarray of int64
        One count per declared category, in declaration order.
    missing : int
        Missing values.
    other : int
        Values that are not missing and not among the declared categories
        (unhashable and incomparable values included).
    """

    counts: NDArray[np.int64]
    missing: int
    other: int


def _is_missing(value: Any) -> bool:
    try:
        return bool(value is None or value is pd.NA or value is pd.NaT or value != value)
    except Exception:  # an incomparable value (e.g. Decimal('sNaN')) is not missing
        return False


def category_counts(series: pd.Series, categories: Sequence[object]) -> CategoryCounts:
    """One pass (the codes of a categorical, or a hash table) over a column.

    The data's own distinct values never leave this function: only the counts of
    the declared categories, of missing values and of everything else do. No value
    makes it raise: what cannot be hashed or compared is "other".
    """
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _categorical_counts(series, dtype, categories)
    index: dict[Any, int] = {}
    for i, c in enumerate(categories):
        index.setdefault(c, i)
    try:
        observed = series.value_counts(dropna=False, sort=False).to_dict()
        pairs = list(observed.items())
    except Exception:  # unhashable values: classify one by one
        pairs = [(v, 1) for v in series.tolist()]
    found = np.zeros(len(categories), dtype=np.int64)
    missing = other = 0
    for value, count in pairs:
        try:
            slot = index.get(value)
        except Exception:
            slot = None
        if slot is not None:
            found[slot] += int(count)
        elif _is_missing(value):
            missing += int(count)
        else:
            other += int(count)
    return CategoryCounts(counts=found, missing=missing, other=other)


def _categorical_counts(
    series: pd.Series, dtype: pd.CategoricalDtype, categories: Sequence[object]
) -> CategoryCounts:
    """A categorical column: counts of its integer codes (``-1`` = missing)."""
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


def mask_counts(masks: Sequence[pd.Series]) -> NDArray[np.int64]:
    """Number of rows where each boolean mask is true (missing counts as false)."""
    out = np.empty(len(masks), dtype=np.int64)
    for i, mask in enumerate(masks):
        if isinstance(mask.dtype, np.dtype) and mask.dtype.kind == "b":
            values = mask.to_numpy()
        else:
            values = mask.to_numpy(dtype=bool, na_value=False)
        out[i] = int(np.count_nonzero(values))
    return out
