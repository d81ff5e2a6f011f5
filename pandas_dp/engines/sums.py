"""Exact centred sums of pandas columns: one column's moments, several columns' products.

:func:`moments` reads a numeric column once and returns, per group, its count of
non-missing values, centred sum and centred sum of squares (:class:`MomentSums`);
:func:`products` reads several columns once and returns the complete rows' count,
centred sums and cross-products (:class:`ProductSums`). Both are kernels of the
in-memory engine (:mod:`pandas_dp.engines.pandas`), which holds what they share
with the engine's other kernels: the groups, the rounding step, the chunk size and
when the compiled kernels run (read from there at each call, so setting
``engines.pandas.CHUNK`` or ``FAST_MIN_ROWS`` applies here too).

Rounding. A value ``x`` becomes ``y = clamp(x - m, -h, h)`` (``m`` the midpoint,
``h`` the half-width of the declared bounds), then ``round(y / q)``, an integer,
with ``q`` a power of two fixed by the bounds alone
(:func:`~pandas_dp.engines.pandas.accumulation_step`); squares and products are
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
same for any row order, chunking or partition of the rows (the numba kernels of
:mod:`pandas_dp.engines._numba` follow the same bounds and give the identical
integers). A long column without groups takes a fused numpy kernel instead
(:func:`_moments_fused`: fewer passes per chunk, the rounding done by one addition
and the sums taken over the bit patterns as integers), which gives the same
integers again.

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
from typing import Any, Final

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import _numba
from pandas_dp.engines import pandas as core
from pandas_dp.engines.columns import column_pieces, column_values
from pandas_dp.engines.pandas import (
    Groups,
    _bincount,
    _check_groups,
    _kernels_for,
    _over_pieces,
    _part,
    _threads,
    accumulation_step,
    row_counts,
)

__all__ = ["MomentSums", "ProductSums", "moments", "products"]

#: Chunks added into an int64 accumulator before it is flushed (``2**24`` rows: < 2**62).
_FLUSH_CHUNKS: Final = 1 << 10


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


#: Below this midpoint size, ``x - mid`` of a finite float ``x`` cannot overflow:
#: ``|x - mid| <= MAX + |mid|`` rounds to at most ``MAX`` while ``|mid|`` is below
#: half the spacing of the floats near ``MAX`` (``2**971 / 2``).
_CENTRE_SAFE: Final = 2.0**969


def _centre(x: NDArray[Any], mid: float, out: NDArray[np.float64]) -> None:
    """``out = x - mid`` in float64, without an overflow warning.

    With a huge midpoint (public), a huge value on the other side of it overflows
    to ``±inf``, which the clamp that follows maps to ``±half``: the clamp of the
    exact difference, as the compiled kernels do. The overflow is only silenced
    there (a data value must never warn after the budget is charged).
    """
    if abs(mid) < _CENTRE_SAFE:  # (cannot overflow: no error-state switch)
        np.subtract(x, mid, out=out, casting="unsafe")
        return
    with np.errstate(over="ignore"):
        np.subtract(x, mid, out=out, casting="unsafe")


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
        if part is None and x.shape[0] <= core.CHUNK:
            return _moments_one_chunk(x, mid, half, step, sq_step, squares)
        if part is None and (fused := _Fused.make(mid, half, step, sq_step, squares)):
            return _moments_fused(x, fused, step, sq_step)
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
    """:func:`_moments_numpy` for one group of at most
    :data:`~pandas_dp.engines.pandas.CHUNK` rows: its one chunk's float operations, in
    the same order, without the chunk loop's buffers and accumulators (a short
    column's release spends most of its engine time on those).

    ``np.maximum`` then ``np.minimum`` is ``np.clip`` (the nearest point of
    ``[-half, half]``, NaN kept), without its Python wrapper. A missing value stays
    NaN through the scaling and rounding, so the centred sum is NaN exactly when one
    is missing: only then are they counted and zeroed (in both sums) and the sum
    taken again.
    """
    n = x.shape[0]
    add = np.add.reduce  # (``b.sum()`` without its Python wrapper)
    b = np.empty(n, dtype=np.float64)
    _centre(x, mid, b)
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


#: Adding ``ROUNDER * q`` to a value ``y`` with ``|y| <= 2**STEP_BITS * q`` rounds it to
#: the nearest multiple of ``q`` (see :class:`_Fused`).
_ROUNDER: Final = 1.5 * 2.0**52
#: Rows per chunk of the fused kernel (its integer sums need no smaller one): 128 Ki
#: doubles = 1 MiB per buffer, in L3. Measured at 10**7 rows, one thread, CPU time
#: of the mean against one ``x.sum()``: 2.3-2.5x with chunks of 2**17 rows, 2.7-3.1x
#: with 2**15, 3.4x with 2**14 (each numpy call costs 1-2 us besides its work: fewer,
#: longer calls win over L2 residency; 2**20 rows is slower again).
FUSED_CHUNK: int = 1 << 17
#: Longest chunk of the fused kernel: ``2**24`` sums of at most ``2**38`` stay below ``2**63``.
_LONGEST_FUSED_CHUNK: Final = 1 << 24
_WRAP: Final = 1 << 64


@dataclass(frozen=True)
class _Fused:
    """The constants of the fused numpy kernel (:func:`_moments_fused`), all public.

    Rounding by addition. For a power of two ``q`` and ``R = 1.5 * 2**52``, the
    floats of the binade ``[2**52 q, 2**53 q)`` are the multiples of ``q``, so for
    ``|y| <= 2**STEP_BITS * q`` the float sum ``y + R q`` is ``R q + round(y / q) q``
    (one correct rounding of the exact sum, ties to the even multiple: ``R`` is even,
    as ``rint`` rounds), and its bit pattern, read as an integer, is that of ``R q``
    plus ``round(y / q)``: the binade's bit patterns are consecutive integers. This is
    the integer of the chunked kernel, ``rint(y / q)`` (there a multiplication by
    ``1 / q`` or a division by ``q``: exact for a power of two, or, below the normal
    range, far below one half and rounded to zero either way), found with one
    addition instead of a scaling and a rounding. (``2**52 q`` is a normal float for
    every step, even the smallest subnormal one.) The bit patterns are added as
    ``uint64`` (exact modulo ``2**64``); subtracting ``rows * bits(R q)`` leaves the
    chunk's sum, at most ``2**24 * 2**STEP_BITS < 2**63`` in size, so its residue
    modulo ``2**64`` identifies it.

    The clamp is skipped for a chunk whose values are all within the bounds already
    (one ``min`` and one ``max``, or for the squares one ``max`` of ``y**2``: both
    read without writing, and both are NaN when a value is missing).
    """

    mid: float
    half: float
    square_half: float
    shift: float
    shift_bits: int
    sq_shift: float
    sq_shift_bits: int
    squares: bool

    @staticmethod
    def make(mid: float, half: float, step: float, sq_step: float, squares: bool) -> _Fused | None:
        """The constants, or ``None`` where the rounder's binade does not fit in the
        floats (a step above ``2**-53`` of the largest float: bounds near it)."""
        steps = (step, sq_step) if squares else (step,)
        if not all(math.isfinite(2.0**53 * q) for q in steps):
            return None
        shift = _ROUNDER * step
        sq_shift = _ROUNDER * sq_step
        return _Fused(
            mid,
            half,
            half * half,
            shift,
            _bits(shift),
            sq_shift,
            _bits(sq_shift),
            squares,
        )


def _bits(value: float) -> int:
    """The bit pattern of a float64, as a non-negative integer."""
    return int(np.array(value, dtype=np.float64).view(np.uint64))


def _signed(residue: int) -> int:
    """The integer in ``[-2**63, 2**63)`` congruent to ``residue`` modulo ``2**64``."""
    residue %= _WRAP
    return residue - _WRAP if residue >= _WRAP >> 1 else residue


def _moments_fused(x: NDArray[Any], fused: _Fused, step: float, sq_step: float) -> MomentSums:
    """The ungrouped numpy kernel of :func:`moments`: per chunk, one centring, a range
    check, one addition per sum and an integer sum of bit patterns (:class:`_Fused`);
    the long column in parts in the engine's threads (numpy releases the GIL in its
    loops), their integers added exactly."""
    n = x.shape[0]
    parts = _numba.run_parts(lambda start, stop: _fused_part(x[start:stop], fused), n)
    missing = sum(p[0] for p in parts)
    total = sum(p[1] for p in parts)
    squares = sum(p[2] for p in parts)
    return MomentSums(np.array([n - missing], dtype=np.int64), [total], [squares], step, sq_step)


def _fused_part(x: NDArray[Any], f: _Fused) -> tuple[int, int, int]:
    """``(missing, Σ round(y / step), Σ round(y² / square_step))`` over one part."""
    n = x.shape[0]
    chunk = max(1, min(FUSED_CHUNK, _LONGEST_FUSED_CHUNK, n))
    both = np.empty((2 if f.squares else 1, chunk), dtype=np.float64)
    bits = both.view(np.uint64)
    shifts = np.array([[f.shift], [f.sq_shift]][: both.shape[0]])
    b, c = both[0], both[-1]
    highest = np.maximum.reduce
    missing = total = squares = 0
    with np.errstate(over="ignore"):  # (a value far beyond the bounds)
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            if m != chunk:
                both, bits = both[:, :m], bits[:, :m]
                b, c = both[0], both[-1]
            np.subtract(x[start : start + m], f.mid, out=b, casting="unsafe")
            if f.squares:
                np.multiply(b, b, out=c)
                # fl(y²) < fl(h²) implies |y| < h (NaN, when a value is missing, fails)
                if not highest(c) < f.square_half:
                    changed, holes = _clamp(b, f.half)
                    missing += holes
                    if changed:
                        np.multiply(b, b, out=c)
            else:
                missing += _clamp(b, f.half)[1]
            np.add(both, shifts, out=both)
            sums = np.add.reduce(bits, axis=1)
            total += _signed(int(sums[0]) - m * f.shift_bits)
            if f.squares:
                squares += _signed(int(sums[1]) - m * f.sq_shift_bits)
    return missing, total, squares


def _clamp(b: NDArray[np.float64], half: float) -> tuple[bool, int]:
    """Clamp ``b`` to ``[-half, half]`` in place, a NaN made 0 (it then adds 0 to every
    sum): whether ``b`` changed, and the number of NaNs. Nothing is written when
    every value is within the bounds (one ``min`` and one ``max``, which are NaN when
    a value is missing); else one ``np.clip`` (measured: one pass, faster than
    ``np.maximum`` then ``np.minimum`` on 32 Ki rows)."""
    lo, hi = np.minimum.reduce(b), np.maximum.reduce(b)
    if lo >= -half and hi <= half:
        return False, 0
    holes = 0
    if lo != lo or hi != hi:  # missing values: counted, then 0
        flags = np.isnan(b)
        holes = int(np.count_nonzero(flags))
        b[flags] = 0.0
    np.clip(b, -half, half, out=b)
    return True, holes


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
    buf = np.empty(min(core.CHUNK, max(n, 1)), dtype=np.float64)
    b2 = np.empty_like(buf)
    total, sq = _Accumulator(size), _Accumulator(size)
    missing = np.zeros(size, dtype=np.int64)
    add = np.add.reduce
    for start in range(0, n, core.CHUNK):
        chunk = x[start : start + core.CHUNK]
        m = chunk.shape[0]
        codes = None if groups is None else groups.codes[start : start + m]
        b = buf[:m]
        _centre(chunk, mid, b)
        np.clip(b, -half, half, out=b)
        c = b2[:m]
        if squares:
            np.multiply(b, b, out=c)
            sq_scale(c)
            np.rint(c, out=c)
        scale(b)
        np.rint(b, out=b)
        # The NaN probe sums the rounded values (at most 2**52 in size: see the module),
        # never the centred ones, whose float sum overflows with huge bounds.
        chunk_total = float(add(b))
        if math.isnan(chunk_total):  # missing values in this chunk: count, then zero
            holes = np.isnan(b)
            if codes is None:
                missing[0] += int(np.count_nonzero(holes))
            else:
                missing += _bincount(codes[holes], size)
            b[holes] = 0.0
            if squares:
                c[holes] = 0.0
            if codes is None:
                chunk_total = float(add(b))
        if squares:
            if codes is None:
                sq.add_one(float(add(c)))
            else:
                sq.add(_bincount(codes, size, c))
        if codes is None:
            total.add_one(chunk_total)
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
    block = np.empty((p, min(core.CHUNK, max(n, 1))))
    tmp = np.empty(block.shape[1])
    totals = [_Accumulator(1) for _ in range(p)]
    prods = {ij: _Accumulator(1) for ij in pairs}
    missing = 0
    for start in range(0, n, core.CHUNK):
        m = min(core.CHUNK, n - start)
        b = block[:, :m]
        for i, x in enumerate(arrays):
            _centre(x[start : start + m], mid[i], b[i])
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


def _exact_inverse(step: float) -> float | None:
    """``1 / step`` when it is a finite power of two (then ``y * (1/step) == y / step``)."""
    inverse = 1.0 / step
    return inverse if math.isfinite(inverse) and inverse * step == 1.0 else None
