"""The in-memory engine: exact sufficient statistics of pandas columns, with numpy.

Each column is read once, in cache-sized chunks, without copying it (nullable
extension dtypes are converted to ``float64`` once). A numeric Arrow column
(``pd.ArrowDtype`` of floats, integers or booleans) is read chunk by chunk: a chunk
without nulls as a zero-copy view of its values, a chunk with nulls (or of a type
numpy cannot view, e.g. ``float32``) as a ``float64`` copy of that chunk alone, its
nulls ``NaN`` (:func:`column_pieces`, the one place where a column becomes the
arrays the kernels read). A value ``x`` becomes
``y = clamp(x - m, -h, h)`` (``m`` the midpoint, ``h`` the half-width of the
declared bounds), then ``round(y / q)``, an integer, with ``q`` a power of two
fixed by the bounds alone (:func:`accumulation_step`); squares and products are
rounded likewise on their own steps. The rounding moves a row's contribution by at
most one step, which the plan adds to the sensitivity.

Exactness (REFERENCE.md §13). Every rounded integer is at most ``2**STEP_BITS``
(``2**38``) in size, and a chunk holds ``CHUNK`` (``2**14``) rows, so *any* partial
sum over one chunk, whatever its order, and whatever subset of the chunk's rows it
covers, is an integer of size at most ``2**52 < 2**53``: a float64 holds it
exactly. Hence the float ``sum`` of a chunk, and equally ``np.bincount(codes,
weights=...)`` over a chunk (a group's partial sums are sums over a subset of the
chunk), are exact. The chunk results are converted to ``int64`` and added into
``int64`` accumulators, one per group; after ``2**10`` chunks (``2**24`` rows) an
accumulator is at most ``2**62`` in size and is flushed into a Python integer, so
nothing overflows whatever the number of rows. The sums are therefore exact and the
same for any row order, chunking or partition of the rows (the optional numba
kernels of :mod:`pandas_dp.engines._numba` follow the same bounds and give the
identical integers).

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
>>> import pandas as pd
>>> m = moments(pd.Series([1.0, 5.0, None, 50.0]), 0.0, 10.0, squares=True)
>>> m.count, m.total_value, m.squares_value
(array([3]), array([1.]), array([41.]))
>>> import numpy as np
>>> g = Groups(np.array([0, 1, 0, -1]), 2)
>>> moments(pd.Series([1.0, 5.0, None, 50.0]), 0.0, 10.0, squares=False, groups=g).count
array([1, 1])
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import _numba
from pandas_dp.engines.columns import _arrow_numeric, column_pieces, column_values

_T = TypeVar("_T")

__all__ = [
    "CHUNK",
    "STEP_BITS",
    "Groups",
    "MomentSums",
    "ProductSums",
    "accumulation_step",
    "moments",
    "products",
    "row_counts",
]

#: Rows per chunk: 16 Ki doubles = 128 KiB, small enough to stay in L2.
CHUNK: Final = 1 << 14
#: A rounded value is at most ``2**STEP_BITS`` steps; ``CHUNK`` of them sum below 2**53.
STEP_BITS: Final = 38
#: Chunks added into an int64 accumulator before it is flushed (``2**24`` rows: < 2**62).
_FLUSH_CHUNKS: Final = 1 << 10
#: Use the compiled kernels (numba, optional) when installed ...
USE_NUMBA: bool = True
#: ... for columns of at least this many rows (below, numpy's few calls cost less
#: than a compiled call's dispatch, except for :func:`moments`: see :func:`_kernels_for`).
FAST_MIN_ROWS: int = 1 << 16
#: Moments of columns shorter than :data:`FAST_MIN_ROWS` computed with numpy
#: before the compiled kernels are loaded for them too.
WARM_READS: int = 256
#: Longest per-thread tally or key table of the compiled kernels.
_TABLE_ROWS: Final = 1 << 20


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
        isinstance(dtype, pd.ArrowDtype) and _arrow_numeric(dtype.pyarrow_dtype)
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
        and size < _TABLE_ROWS
        and (fast := _fast_kernels()) is not None
    ):  # one compiled pass, no shifted copy of the codes
        return _numba.code_counts(fast, codes, -1, size + 1)[1:]
    tally = np.bincount(codes + 1, weights=weights, minlength=size + 1)
    return tally[1:] if weights is not None else tally[1:].astype(np.int64, copy=False)


class _Accumulator:
    """Exact per-group integer sums from exact float chunk sums (see the module)."""

    def __init__(self, size: int) -> None:
        self.wide = [0] * size
        self.narrow = np.zeros(size, dtype=np.int64)
        self.pending = 0

    def add(self, chunk_sums: NDArray[np.float64]) -> None:
        self.narrow += chunk_sums.astype(np.int64)
        self.pending += 1
        if self.pending == _FLUSH_CHUNKS:
            self.flush()

    def add_one(self, chunk_sum: float) -> None:
        self.narrow[0] += int(chunk_sum)
        self.pending += 1
        if self.pending == _FLUSH_CHUNKS:
            self.flush()

    def flush(self) -> None:
        self.wide = [w + int(v) for w, v in zip(self.wide, self.narrow, strict=True)]
        self.narrow[:] = 0
        self.pending = 0

    def result(self) -> list[int]:
        self.flush()
        return self.wide


@dataclass(frozen=True)
class MomentSums:
    """Exact per-group sums over the non-missing values of one column (all private).

    Attributes
    ----------
    count : ndarray of int64, shape (size,)
        Non-missing values per group (size 1 without groups).
    total : list of int
        Per group, ``Σ round(y / step)``, ``y`` the clamped, centred value.
    squares : list of int
        Per group, ``Σ round(y² / square_step)`` (zeros when not asked for).
    step, square_step : float
        The public rounding steps.
    """

    count: NDArray[np.int64]
    total: list[int]
    squares: list[int]
    step: float
    square_step: float

    @property
    def total_exact(self) -> list[Fraction]:
        """Per group, ``Σ y`` exactly (an integer times the power-of-two step)."""
        q = _fraction(self.step)
        return [t * q for t in self.total]

    @property
    def squares_exact(self) -> list[Fraction]:
        """Per group, ``Σ y²`` exactly."""
        q = _fraction(self.square_step)
        return [s * q for s in self.squares]

    @property
    def total_value(self) -> NDArray[np.float64]:
        """Per group, ``Σ y`` (the centred sum) as a float."""
        return np.array([float(t) * self.step for t in self.total], dtype=np.float64)

    @property
    def squares_value(self) -> NDArray[np.float64]:
        """Per group, ``Σ y²`` (the centred squares) as a float."""
        return np.array([float(s) * self.square_step for s in self.squares], dtype=np.float64)


@functools.lru_cache(maxsize=256)
def _fraction(step: float) -> Fraction:
    """``Fraction(step)`` of a public step (a power of two; kept, as few exist)."""
    return Fraction(step)


def _scaler(step: float) -> Callable[[NDArray[np.float64]], object]:
    """In place ``b / step``: a multiplication by ``1 / step`` when that is finite
    (both are the correctly rounded value of the same exact quotient), else a division."""
    inverse = 1.0 / step
    if math.isfinite(inverse) and inverse * step == 1.0:
        return lambda b: np.multiply(b, inverse, out=b)
    return lambda b: np.divide(b, step, out=b)


def moments(
    series: pd.Series,
    lower: float,
    upper: float,
    *,
    squares: bool,
    groups: Groups | None = None,
) -> MomentSums:
    """One pass over a numeric column: per group count, centred sum, centred squares.

    Parameters
    ----------
    series : pandas.Series
        A numeric or boolean column.
    lower, upper : float
        Declared bounds (finite, ``lower < upper``, finite width).
    squares : bool
        Whether to accumulate the squares (a variance needs them, a mean not).
    groups : Groups, optional
        The group of each row; ``None``: one group of all rows.

    Returns
    -------
    MomentSums
        Exact sums, one entry per group.

    Examples
    --------
    >>> import numpy as np
    >>> s = pd.Series([1.0, 2.0, np.nan, 9.0])
    >>> m = moments(s, 0.0, 4.0, squares=True, groups=Groups(np.array([0, 0, 1, -1]), 2))
    >>> m.count, m.total_value, m.squares_value
    (array([2, 0]), array([-1.,  0.]), array([1., 0.]))
    """
    pieces = column_pieces(series)
    n = sum(piece.shape[0] for piece in pieces)
    _check_groups(groups, n)
    half = 0.5 * (upper - lower)
    mid = lower + half
    step = accumulation_step(half)
    sq_step = accumulation_step(half * half) if squares else 1.0
    scale, sq_scale = _exact_inverse(step), _exact_inverse(sq_step)
    fast = _kernels_for(n) if scale is not None and sq_scale is not None else None

    def one(x: NDArray[Any], start: int, stop: int) -> MomentSums:
        part = _part(groups, start, stop)
        if (
            fast is not None
            and (x.dtype == np.float64 or x.dtype.kind in "iub")
            and x.dtype.isnative  # (the compiled kernels take native byte order only)
            and scale is not None
            and sq_scale is not None
        ):
            codes = None if part is None else part.codes
            size = 1 if part is None else part.size
            count, total, sq = _numba.moments(
                fast, x, codes, size, mid, half, scale, sq_scale, squares
            )
            return MomentSums(count, total, sq, step, sq_step)
        if part is None and x.shape[0] <= CHUNK:
            return _moments_one_chunk(x, mid, half, step, sq_step, squares)
        return _moments_numpy(x, mid, half, step, sq_step, squares, part)

    parts = _over_pieces(one, pieces, _threads(fast, n))
    if len(parts) == 1:
        return parts[0]
    size = 1 if groups is None else groups.size
    total, sq = [0] * size, [0] * size
    for p in parts:  # Python integers: exact
        total = [a + b for a, b in zip(total, p.total, strict=True)]
        sq = [a + b for a, b in zip(sq, p.squares, strict=True)]
    count: NDArray[np.int64] = np.sum([p.count for p in parts], axis=0, dtype=np.int64)
    return MomentSums(count, total, sq, step, sq_step)


def _moments_one_chunk(
    x: NDArray[Any], mid: float, half: float, step: float, sq_step: float, squares: bool
) -> MomentSums:
    """:func:`_moments_numpy` for one group of at most :data:`CHUNK` rows: its one
    chunk's float operations, in the same order, without the chunk loop's buffers and
    accumulators (a short column's release spends most of its engine time on those).

    ``np.maximum`` then ``np.minimum`` is ``np.clip`` (the nearest point of
    ``[-half, half]``, NaN kept), without its Python wrapper. A missing value stays
    NaN through the scaling and rounding, so the centred sum is NaN exactly when one
    is missing: only then are they counted and zeroed (in both sums) and the sum
    taken again.
    """
    n = x.shape[0]
    add = np.add.reduce  # (``b.sum()`` without its Python wrapper)
    b = np.empty(n, dtype=np.float64)
    np.subtract(x, mid, out=b, casting="unsafe")
    np.maximum(b, -half, out=b)
    np.minimum(b, half, out=b)
    c = np.multiply(b, b) if squares else b[:0]
    if squares:
        _scaler(sq_step)(c)
        np.rint(c, out=c)
    _scaler(step)(b)
    np.rint(b, out=b)
    total_f = float(add(b))
    missing = 0
    if math.isnan(total_f):  # missing values (NaN throughout): count, then zero
        holes = np.isnan(b)
        missing = int(np.count_nonzero(holes))
        b[holes] = 0.0
        if squares:
            c[holes] = 0.0
        total_f = float(add(b))
    sq = int(float(add(c))) if squares else 0  # exact: see the module
    total = int(total_f)
    count = np.array([n - missing], dtype=np.int64)
    return MomentSums(count, [total], [sq], step, sq_step)


def _moments_numpy(
    x: NDArray[Any],
    mid: float,
    half: float,
    step: float,
    sq_step: float,
    squares: bool,
    groups: Groups | None,
) -> MomentSums:
    """The numpy kernel of :func:`moments` (chunked; see the module for exactness)."""
    n = x.shape[0]
    size = 1 if groups is None else groups.size
    scale, sq_scale = _scaler(step), _scaler(sq_step)
    buf = np.empty(min(CHUNK, max(n, 1)), dtype=np.float64)
    b2 = np.empty_like(buf)
    total, sq = _Accumulator(size), _Accumulator(size)
    missing = np.zeros(size, dtype=np.int64)
    for start in range(0, n, CHUNK):
        chunk = x[start : start + CHUNK]
        m = chunk.shape[0]
        codes = None if groups is None else groups.codes[start : start + m]
        b = buf[:m]
        np.subtract(chunk, mid, out=b, casting="unsafe")
        np.clip(b, -half, half, out=b)
        if math.isnan(float(b.sum())):  # missing values in this chunk: count, then zero
            holes = np.isnan(b)
            if codes is None:
                missing[0] += int(np.count_nonzero(holes))
            else:
                missing += _bincount(codes[holes], size)
            b[holes] = 0.0
        if squares:
            c = b2[:m]
            np.multiply(b, b, out=c)
            sq_scale(c)
            np.rint(c, out=c)
            if codes is None:
                sq.add_one(float(c.sum()))
            else:
                sq.add(_bincount(codes, size, c))
        scale(b)
        np.rint(b, out=b)
        if codes is None:
            total.add_one(float(b.sum()))
        else:
            total.add(_bincount(codes, size, b))
    count = row_counts(groups, n) - missing
    return MomentSums(count, total.result(), sq.result(), step, sq_step)


@dataclass(frozen=True)
class ProductSums:
    """Exact sums over the complete rows of several columns (all private).

    Attributes
    ----------
    count : ndarray of int64, shape (1,)
        Rows where no selected column is missing (one group: the grouping
        convention of :class:`MomentSums`).
    totals : list of int
        Per column, ``Σ round(y_i / steps[i])``.
    products : dict
        ``(i, j) -> Σ round(y_i y_j / product_steps[i, j])`` for ``i <= j``.
    steps : list of float
    product_steps : dict
    """

    count: NDArray[np.int64]
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

    Parameters
    ----------
    columns : sequence of pandas.Series
        Numeric columns of equal length.
    lowers, uppers : sequence of float
        Declared bounds per column.

    Returns
    -------
    ProductSums
        Exact sums (one group).

    Examples
    --------
    >>> p = products([pd.Series([0.0, 2.0]), pd.Series([1.0, None])], [0, 0], [2, 2])
    >>> p.count, p.matrices()[1]
    (array([1]), array([[1., 0.],
           [0., 0.]]))
    """
    arrays = [column_values(c) for c in columns]
    p = len(arrays)
    n = arrays[0].shape[0] if p else 0
    half = [0.5 * (u - lo) for lo, u in zip(lowers, uppers, strict=True)]
    mid = [lo + h for lo, h in zip(lowers, half, strict=True)]
    steps = [accumulation_step(h) for h in half]
    pairs = [(i, j) for i in range(p) for j in range(i, p)]
    psteps = {(i, j): accumulation_step(half[i] * half[j]) for i, j in pairs}
    scalers = [_scaler(q) for q in steps]
    pscalers = {ij: _scaler(q) for ij, q in psteps.items()}
    block = np.empty((p, min(CHUNK, max(n, 1))))
    tmp = np.empty(block.shape[1])
    totals = [_Accumulator(1) for _ in range(p)]
    prods = {ij: _Accumulator(1) for ij in pairs}
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
        for ij in pairs:
            np.multiply(b[ij[0]], b[ij[1]], out=t)
            pscalers[ij](t)
            np.rint(t, out=t)
            prods[ij].add_one(float(t.sum()))
        for i in range(p):
            np.copyto(t, b[i])
            scalers[i](t)
            np.rint(t, out=t)
            totals[i].add_one(float(t.sum()))
    return ProductSums(
        np.array([n - missing], dtype=np.int64),
        [a.result()[0] for a in totals],
        {ij: a.result()[0] for ij, a in prods.items()},
        steps,
        psteps,
    )


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


def _exact_inverse(step: float) -> float | None:
    """``1 / step`` when it is a finite power of two (then ``y * (1/step) == y / step``)."""
    inverse = 1.0 / step
    return inverse if math.isfinite(inverse) and inverse * step == 1.0 else None
