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
length 1; there is one code path. :func:`group_codes` maps rows onto a *public*
product of declared keys; :func:`observed_codes` factorizes a column whose keys
are private (its uniques must be thresholded before release).

Missing values (``NaN``, ``None``, ``pd.NA``) are counted apart and contribute
nothing; ``±inf`` are clamped to the bounds like any out-of-range value.

Examples
--------
>>> import pandas as pd
>>> m = moments(pd.Series([1.0, 5.0, None, 50.0]), 0.0, 10.0, squares=True)
>>> m.count, m.total_value, m.squares_value
(array([3]), array([1.]), array([41.]))
>>> g = group_codes([pd.Series(["a", "b", "a", "z"])], [["a", "b"]])
>>> g.codes, g.size
(array([ 0,  1,  0, -1]), 2)
>>> moments(pd.Series([1.0, 5.0, None, 50.0]), 0.0, 10.0, squares=False, groups=g).count
array([1, 1])
"""

from __future__ import annotations

import functools
import math
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, TypeVar

import numpy as np
import pandas as pd
from numpy.typing import NDArray

_T = TypeVar("_T")

__all__ = [
    "CHUNK",
    "STEP_BITS",
    "CategoryCounts",
    "Groups",
    "MomentSums",
    "ProductSums",
    "accumulation_step",
    "category_counts",
    "column_pieces",
    "column_values",
    "group_codes",
    "mask_counts",
    "moments",
    "observed_codes",
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
#: ... for columns of at least this many rows (below, compiling would not pay).
FAST_MIN_ROWS: int = 1 << 16
#: Up to this many categories, count codes by comparison rather than ``bincount``.
_FEW_CATEGORIES: Final = 32
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


def column_pieces(series: pd.Series) -> list[NDArray[Any]]:
    """The column as numpy arrays that, concatenated, are its values in row order.

    The one place where a column becomes what the kernels read. A numpy-backed
    numeric or boolean column is one array, itself (no copy). A numeric Arrow column
    (``pd.ArrowDtype`` of floats, integers or booleans) is one array per Arrow chunk:
    a zero-copy view of a ``double`` or integer chunk without nulls, its booleans
    unpacked for a boolean chunk without nulls, else a ``float64`` copy of that chunk
    alone with ``NaN`` for its nulls (so a null and a ``NaN`` are both missing, as
    they are for the ``float64`` conversion of any other extension dtype); runs of
    short chunks are joined into one array of at least :data:`CHUNK` rows. A column
    whose reading copied anything keeps its copies for the next read (a release
    reads a column once per kernel), so that it is converted once: at most 64 MiB of
    copies are kept, each only while its column exists. Any
    other extension dtype (nullable ``Int64``/``Float64``/``boolean``, ...) is one
    ``float64`` array with ``NaN`` for missing values.

    Every piece gives the kernels the values they would read from the one
    ``float64`` conversion of the whole column: an integer is converted to
    ``float64`` by the kernels as by the conversion, and the sums are exact for any
    split of the rows (see the module), so the results are identical.

    Parameters
    ----------
    series : pandas.Series
        A numeric or boolean column.

    Returns
    -------
    list of ndarray
        At least one array (an empty one for an empty column); read-only views
        into the column's memory where possible.

    Examples
    --------
    >>> import pyarrow as pa
    >>> chunks = pa.chunked_array([[1.0, None], [2.0, float("nan")]])
    >>> column_pieces(pd.Series(pd.arrays.ArrowExtensionArray(chunks)))
    [array([ 1., nan,  2., nan])]
    """
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "fiub":
        return [series.to_numpy(copy=False)]
    if isinstance(dtype, pd.ArrowDtype) and _arrow_numeric(dtype.pyarrow_dtype):
        return _arrow_pieces(series.array.__arrow_array__())
    return [series.to_numpy(dtype=np.float64, na_value=np.nan)]


def _arrow_numeric(kind: Any) -> bool:
    """An Arrow type read chunk by chunk: floats, integers, booleans."""
    import pyarrow as pa  # type: ignore[import-untyped]

    return bool(
        pa.types.is_floating(kind) or pa.types.is_integer(kind) or pa.types.is_boolean(kind)
    )


#: Arrow columns whose reading copied chunks (nulls, or a type numpy cannot view):
#: the copies, kept for the next read of the same column (a release reads a column
#: once per kernel, e.g. describe's moments and grid), so that each is converted
#: once. Keyed by the identity of the (immutable) ``pyarrow.ChunkedArray``; an entry
#: goes when its column is garbage collected, or when the oldest entries exceed
#: :data:`_KEPT_BYTES` (or :data:`_KEPT_COLUMNS` columns) together.
_KEPT: OrderedDict[int, tuple[weakref.ref[Any], list[NDArray[Any]], int]] = OrderedDict()
_KEPT_LOCK = threading.Lock()
#: Columns garbage collected since the last purge of :data:`_KEPT`.
_DEAD: list[tuple[int, weakref.ref[Any]]] = []
#: At most this many bytes of copies are kept (a larger conversion is not kept) ...
_KEPT_BYTES: int = 1 << 26
#: ... for at most this many columns.
_KEPT_COLUMNS: int = 16


def _arrow_pieces(chunked: Any) -> list[NDArray[Any]]:
    """:func:`column_pieces` of a numeric ``pyarrow.ChunkedArray``, its copies (if
    any) kept for the next read of the same column (see :data:`_KEPT`)."""
    key = id(chunked)
    with _KEPT_LOCK:
        _purge()
        kept = _KEPT.get(key)
        if kept is not None and kept[0]() is chunked:
            _KEPT.move_to_end(key)
            return kept[1]
    pieces, copied = _read_chunks(chunked)
    if 0 < copied <= _KEPT_BYTES:

        def forget(ref: weakref.ref[Any]) -> None:  # the column is garbage collected
            _DEAD.append((key, ref))
            # (a collection can run while this thread holds the lock: never wait)
            if _KEPT_LOCK.acquire(blocking=False):
                try:
                    _purge()
                finally:
                    _KEPT_LOCK.release()

        with _KEPT_LOCK:
            _purge()
            _KEPT[key] = (weakref.ref(chunked, forget), pieces, copied)
            total = sum(entry[2] for entry in _KEPT.values())
            while total > _KEPT_BYTES or len(_KEPT) > _KEPT_COLUMNS:
                total -= _KEPT.popitem(last=False)[1][2]
    return pieces


def _purge() -> None:
    """Drop the kept copies of garbage-collected columns (the lock held)."""
    while _DEAD:
        key, ref = _DEAD.pop()
        entry = _KEPT.get(key)
        if entry is not None and entry[0] is ref:
            del _KEPT[key]


def _read_chunks(chunked: Any) -> tuple[list[NDArray[Any]], int]:
    """The pieces of a numeric ``pyarrow.ChunkedArray``, and the bytes copied (a
    chunk copied then joined counts twice: an upper bound)."""
    pieces: list[NDArray[Any]] = []
    copied = 0
    run: list[NDArray[Any]] = []
    run_rows = 0

    def flush() -> None:
        nonlocal run, run_rows, copied
        if len(run) == 1:
            pieces.append(run[0])
        elif run:  # joined: a copy
            pieces.append(np.concatenate(run))
            copied += pieces[-1].nbytes
        run, run_rows = [], 0

    for chunk in chunked.chunks:
        if len(chunk) == 0:
            continue
        values, view = _chunk_values(chunk)
        copied += 0 if view else values.nbytes
        if values.shape[0] >= CHUNK:
            flush()
            pieces.append(values)
            continue
        run.append(values)
        run_rows += values.shape[0]
        if run_rows >= CHUNK:
            flush()
    flush()
    return pieces or [np.empty(0, dtype=np.float64)], copied


def _chunk_values(chunk: Any) -> tuple[NDArray[Any], bool]:
    """One Arrow chunk as numpy, and whether it is a view of the chunk: a zero-copy
    view when numpy can read its values buffer as it is, else a ``float64`` copy of
    this chunk alone, ``NaN`` for a null."""
    import pyarrow as pa  # type: ignore[import-untyped]
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    kind = chunk.type
    if chunk.null_count == 0:
        if pa.types.is_float64(kind) or pa.types.is_integer(kind):
            return chunk.to_numpy(zero_copy_only=True), True
        if pa.types.is_boolean(kind):  # bit-packed: unpacked, one byte per value
            return chunk.to_numpy(zero_copy_only=False), False
    if not pa.types.is_float64(kind):  # (an integer's conversion rounds as numpy's)
        chunk = chunk.cast(pa.float64(), safe=False)
    if chunk.null_count:
        chunk = pc.fill_null(chunk, math.nan)
    return chunk.to_numpy(zero_copy_only=True), False


def column_values(series: pd.Series) -> NDArray[Any]:
    """The column as one numpy array, without a copy when its dtype allows.

    Parameters
    ----------
    series : pandas.Series
        A numeric or boolean column.

    Returns
    -------
    ndarray
        The pieces of :func:`column_pieces`, joined: numpy-backed numeric and
        boolean columns as they are; extension dtypes (nullable
        ``Int64``/``Float64``/``boolean``) as ``float64`` with ``NaN`` for missing
        values; a numeric Arrow column likewise, except that an integer or boolean
        one without nulls keeps its own dtype (a view of a single chunk).

    Examples
    --------
    >>> column_values(pd.Series([1, None], dtype="Int64"))
    array([ 1., nan])
    """
    pieces = column_pieces(series)
    return pieces[0] if len(pieces) == 1 else np.concatenate(pieces)


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
            from pandas_dp.engines import _numba

            jobs.extend((piece[a:b], start + a, start + b) for a, b in _numba.spans(piece.shape[0]))
        else:
            jobs.append((piece, start, start + piece.shape[0]))
        start += piece.shape[0]
    if threads:
        from pandas_dp.engines import _numba

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
        from pandas_dp.engines import _numba

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
        from pandas_dp.engines import _numba

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
    fast = (
        _fast_kernels()
        if n >= FAST_MIN_ROWS and scale is not None and sq_scale is not None
        else None
    )

    def one(x: NDArray[Any], start: int, stop: int) -> MomentSums:
        part = _part(groups, start, stop)
        if (
            fast is not None
            and (x.dtype == np.float64 or x.dtype.kind in "iub")
            and x.dtype.isnative  # (the compiled kernels take native byte order only)
            and scale is not None
            and sq_scale is not None
        ):
            from pandas_dp.engines import _numba

            codes = None if part is None else part.codes
            size = 1 if part is None else part.size
            count, total, sq = _numba.moments(
                fast, x, codes, size, mid, half, scale, sq_scale, squares
            )
            return MomentSums(count, total, sq, step, sq_step)
        if part is None and x.shape[0] <= CHUNK:
            return _moments_one_chunk(x, mid, half, step, sq_step, squares)
        return _moments_numpy(x, mid, half, step, sq_step, squares, part)

    parts = _over_pieces(one, pieces, fast is not None)
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
    ``[-half, half]``, NaN kept), without its Python wrapper.
    """
    n = x.shape[0]
    add = np.add.reduce  # (``b.sum()`` without its Python wrapper)
    b = np.empty(n, dtype=np.float64)
    np.subtract(x, mid, out=b, casting="unsafe")
    np.maximum(b, -half, out=b)
    np.minimum(b, half, out=b)
    missing = 0
    if math.isnan(float(add(b))):  # missing values: count, then zero
        holes = np.isnan(b)
        missing = int(np.count_nonzero(holes))
        b[holes] = 0.0
    sq = 0
    if squares:
        c = np.multiply(b, b)
        _scaler(sq_step)(c)
        np.rint(c, out=c)
        sq = int(float(add(c)))  # exact: see the module
    _scaler(step)(b)
    np.rint(b, out=b)
    total = int(float(add(b)))
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


@dataclass(frozen=True)
class CategoryCounts:
    """Per-group counts of a column over its declared categories (all private).

    Attributes
    ----------
    counts : ndarray of int64, shape (size, K)
        Per group, one count per declared category, in declaration order.
    missing : ndarray of int64, shape (size,)
        Missing values per group.
    other : ndarray of int64, shape (size,)
        Values that are not missing and not among the declared categories
        (unhashable and incomparable values included), per group.
    """

    counts: NDArray[np.int64]
    missing: NDArray[np.int64]
    other: NDArray[np.int64]


def _is_missing(value: Any) -> bool:
    try:
        return bool(value is None or value is pd.NA or value is pd.NaT or value != value)
    except Exception:  # an incomparable value (e.g. Decimal('sNaN')) is not missing
        return False


def _first_positions(keys: Sequence[object]) -> dict[Any, int]:
    """Declared value -> its first position (unhashable declared values are skipped)."""
    index: dict[Any, int] = {}
    for i, c in enumerate(keys):
        try:
            index.setdefault(c, i)
        except TypeError:
            continue
    return index


def _integer_table(index: dict[Any, int], k: int) -> tuple[int, NDArray[np.intp]] | None:
    """For declared keys that are all integers in a small span: ``(lowest, table)``
    with ``table[v - lowest]`` the position of ``v`` and ``k`` past the last entry."""
    ints = [c for c in index if isinstance(c, int | np.integer) and not isinstance(c, bool)]
    if not ints or len(ints) != len(index):
        return None
    lo, hi = int(min(ints)), int(max(ints))
    span = hi - lo + 1
    if span > max(1 << 16, 8 * len(ints)) or lo < -(2**62) or hi > 2**62:
        return None
    table = np.full(span + 1, k, dtype=np.intp)
    for c, pos in index.items():
        table[int(c) - lo] = pos
    return lo, table


def _category_codes(series: pd.Series) -> NDArray[np.integer[Any]]:
    """A categorical column's integer codes (``-1``: missing), without a copy
    (``series.cat.codes`` copies them into a new Series)."""
    values = series.array
    codes: NDArray[np.integer[Any]] = (
        values.codes if isinstance(values, pd.Categorical) else series.cat.codes.to_numpy()
    )
    return codes


def _slot_function(index: dict[Any, int], k: int) -> Callable[[Any], int]:
    """A value's slot: its declared position, ``k`` if undeclared, ``k + 1`` if missing."""

    def slot(value: Any) -> int:
        try:
            found = index.get(value)
        except Exception:
            found = None
        if found is not None:
            return found
        return k + 1 if _is_missing(value) else k

    return slot


def _key_table(
    series: pd.Series, keys: Sequence[object]
) -> tuple[NDArray[np.integer[Any]], int, NDArray[np.intp]] | None:
    """For a categorical column, or integers declared over a small span:
    ``(values, low, table)``, integer values whose slot (see :func:`_slots`) is
    ``table[v - low]``, or the table's last entry when ``v - low`` is off it."""
    k = len(keys)
    index = _first_positions(keys)
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        slot = _slot_function(index, k)
        slots = [k + 1] + [slot(v) for v in dtype.categories] + [k]  # code -1: missing
        return _category_codes(series), -1, np.array(slots, dtype=np.intp)
    if isinstance(dtype, np.dtype) and (
        dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize < 8)
    ):  # (int64 wrap-around cannot make a match: both sides are in the int64 range)
        table = _integer_table(index, k)
        if table is not None:
            return series.to_numpy(copy=False), table[0], table[1]
    return None


def _slots(series: pd.Series, keys: Sequence[object]) -> NDArray[np.intp]:
    """Per row: the position of its value among ``keys``, ``K`` for any other
    value, ``K + 1`` for a missing one (``K = len(keys)``). Never raises on a value."""
    k = len(keys)
    index = _first_positions(keys)
    slot = _slot_function(index, k)
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        lookup = np.array([slot(v) for v in dtype.categories] + [k + 1], dtype=np.intp)
        by_code: NDArray[np.intp] = lookup[_category_codes(series)]  # code -1: last entry
        return by_code
    table = _key_table(series, keys)
    if table is not None:  # a small lookup table over the declared integers' span
        values, lo, lookup = table
        shifted = np.subtract(values, lo, dtype=np.int64)
        span = np.uint64(lookup.shape[0] - 1)
        found: NDArray[np.intp] = lookup[np.minimum(shifted.view(np.uint64), span)]
        return found
    if isinstance(dtype, np.dtype) and dtype.kind in "iufb":
        try:
            declared = pd.Index(list(index))
            pos = declared.get_indexer(series.to_numpy(copy=False))
            found = np.array(list(index.values()), dtype=np.intp)
            out = np.where(pos >= 0, found[pos], k)
            if dtype.kind == "f":
                out[(pos < 0) & np.isnan(series.to_numpy(copy=False))] = k + 1
            return out.astype(np.intp, copy=False)
        except Exception:  # mixed declared types: the generic path below
            pass
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
        lookup = np.array([slot(v) for v in uniques] + [k + 1], dtype=np.intp)
        return lookup[codes]
    except Exception:  # unhashable values: one by one
        return np.array([slot(v) for v in series.tolist()], dtype=np.intp).reshape(-1)


def category_counts(
    series: pd.Series, categories: Sequence[object], *, groups: Groups | None = None
) -> CategoryCounts:
    """Per group counts of the declared categories, of missing and of other values.

    The data's own distinct values never leave this function: only the counts of
    the declared categories, of missing values and of everything else do. No value
    makes it raise: what cannot be hashed or compared is "other". With ``groups``
    the codes of another column, this is a contingency table.

    Parameters
    ----------
    series : pandas.Series
        Any column (a categorical is read through its integer codes).
    categories : sequence
        The declared categories (public).
    groups : Groups, optional
        The group of each row; ``None``: one group of all rows.

    Returns
    -------
    CategoryCounts
        ``counts`` of shape ``(size, K)``, ``missing`` and ``other`` of shape ``(size,)``.

    Examples
    --------
    >>> c = category_counts(pd.Series(["a", "b", None, "a", "q"]), ["a", "b"])
    >>> c.counts, c.missing, c.other
    (array([[2, 1]]), array([1]), array([1]))
    """
    _check_groups(groups, len(series))
    k = len(categories)
    dtype = series.dtype
    if groups is None and isinstance(dtype, pd.CategoricalDtype):
        return _categorical_counts(series, dtype, categories)
    slots = _slots(series, categories)
    if groups is None:
        table = np.bincount(slots, minlength=k + 2).astype(np.int64).reshape(1, k + 2)
    else:
        size = groups.size
        cells = np.where(groups.codes >= 0, groups.codes * (k + 2) + slots, -1)
        table = _bincount(cells, size * (k + 2)).reshape(size, k + 2)
    return CategoryCounts(
        counts=np.ascontiguousarray(table[:, :k]),
        missing=np.ascontiguousarray(table[:, k + 1]),
        other=np.ascontiguousarray(table[:, k]),
    )


def _categorical_counts(
    series: pd.Series, dtype: pd.CategoricalDtype, categories: Sequence[object]
) -> CategoryCounts:
    """A categorical column, one group: counts of its integer codes (``-1`` = missing)."""
    codes = _category_codes(series)
    k = len(dtype.categories)
    fast = _fast_kernels() if codes.shape[0] >= FAST_MIN_ROWS and k < _TABLE_ROWS else None
    if fast is not None:  # one pass, per-thread tallies of the codes -1 .. k - 1
        from pandas_dp.engines import _numba

        tally = _numba.code_counts(fast, codes, -1, k + 1, trusted=True)
        per_code, missing = tally[1:], int(tally[0])
    elif k <= _FEW_CATEGORIES:  # a few passes over the narrow codes beat widening them
        per_code = np.array([np.count_nonzero(codes == c) for c in range(k)], dtype=np.int64)
        missing = int(codes.shape[0] - per_code.sum())
    else:
        tally = np.bincount(codes.astype(np.intp) + 1, minlength=k + 1)
        per_code, missing = tally[1:], int(tally[0])
    code_of = _first_positions(list(dtype.categories))
    found = np.array(
        [per_code[code_of[c]] if _has(code_of, c) else 0 for c in categories], dtype=np.int64
    )
    other = int(per_code.sum()) - int(found.sum())
    return CategoryCounts(
        counts=found.reshape(1, -1),
        missing=np.array([missing], dtype=np.int64),
        other=np.array([other], dtype=np.int64),
    )


def _has(index: dict[Any, int], key: object) -> bool:
    try:
        return key in index
    except TypeError:
        return False


def mask_counts(masks: Sequence[pd.Series], groups: Groups | None = None) -> NDArray[np.int64]:
    """Per group, the number of rows where each boolean mask is true.

    Parameters
    ----------
    masks : sequence of pandas.Series
        Boolean columns (missing counts as false).
    groups : Groups, optional
        The group of each row; ``None``: one group of all rows.

    Returns
    -------
    ndarray of int64, shape (size, len(masks))

    Examples
    --------
    >>> mask_counts([pd.Series([True, False, True])])
    array([[2]])
    """
    size = 1 if groups is None else groups.size
    out = np.empty((size, len(masks)), dtype=np.int64)
    for i, mask in enumerate(masks):
        if isinstance(mask.dtype, np.dtype) and mask.dtype.kind == "b":
            values = mask.to_numpy()
        else:
            values = mask.to_numpy(dtype=bool, na_value=False)
        if groups is None:
            out[0, i] = int(np.count_nonzero(values))
        else:
            _check_groups(groups, values.shape[0])
            out[:, i] = _bincount(groups.codes[values], size)
    return out


def group_codes(
    columns: Sequence[pd.Series], keys: Sequence[Sequence[object]], *, other: bool = False
) -> Groups:
    """Map each row's key tuple onto the public product of declared keys.

    The code of a row is the mixed-radix number of its keys' positions
    (``Σ pos_i · Π_{j>i} len(keys_j)``: the first column varies slowest, as in
    ``itertools.product`` and a sorted MultiIndex of sorted keys). A row whose key
    is missing in any column gets ``-1`` (skipped, as pandas' ``groupby`` drops
    missing keys) unless the missing value is itself declared. A row with an
    undeclared key gets ``-1``, or with ``other=True`` the extra last code
    ``Π len(keys_i)``. Nothing about undeclared values is returned, and no value
    makes it raise (NaN, None, unhashable and incomparable values are undeclared).

    Parameters
    ----------
    columns : sequence of pandas.Series
        The key columns, of equal length.
    keys : sequence of sequences
        Per column, the declared keys (public). A repeated key maps to its first
        position.
    other : bool, default False
        Whether undeclared keys form one more group (the last).

    Returns
    -------
    Groups
        ``size = Π len(keys_i)`` (``+ 1`` with ``other``).

    Examples
    --------
    >>> a = pd.Series(["x", "y", "y", None])
    >>> b = pd.Series([1, 2, 3, 1])
    >>> g = group_codes([a, b], [["x", "y"], [1, 2]], other=True)
    >>> g.codes, g.size
    (array([ 0,  3,  4, -1]), 5)
    """
    if len(columns) != len(keys) or not columns:
        raise ValueError(
            f"group_codes needs one list of keys per column; got {len(columns)} columns "
            f"and {len(keys)} lists"
        )
    radix = [len(k) for k in keys]
    product = math.prod(radix)
    if product + 1 > np.iinfo(np.intp).max // 2:
        raise ValueError(f"the product of the declared keys has {product} groups: too many")
    rows = len(columns[0])
    if any(len(column) != rows for column in columns):
        raise ValueError("the key columns differ in length")
    fast = _fast_kernels() if rows >= FAST_MIN_ROWS else None
    if fast is not None:
        tables = [
            _key_table(column, declared) for column, declared in zip(columns, keys, strict=True)
        ]
        if all(t is not None and t[0].dtype.isnative for t in tables):  # one compiled pass
            from pandas_dp.engines import _numba

            parts = [(*t, r) for t, r in zip(tables, radix, strict=True) if t is not None]
            code = _numba.key_codes(fast, parts, rows, product if other else -1)
            return Groups(code, product + 1 if other else product)
    code = np.zeros(rows, dtype=np.intp)
    undeclared = np.zeros(rows, dtype=bool)
    missing = np.zeros(rows, dtype=bool)
    for column, declared, r in zip(columns, keys, radix, strict=True):
        if len(column) != rows:
            raise ValueError("the key columns differ in length")
        slots = _slots(column, declared)
        code *= r
        np.add(code, slots, out=code, where=slots < r)
        undeclared |= slots == r
        missing |= slots == r + 1
    if other:
        code[undeclared] = product
        code[missing] = -1
        return Groups(code, product + 1)
    code[undeclared | missing] = -1
    return Groups(code, product)


def observed_codes(column: pd.Series, *, sort: bool = True) -> tuple[Groups, pd.Index]:
    """Factorize a column whose keys are private.

    The uniques are PRIVATE: they are the data's own values. The caller must not
    release any of them, nor their number, except through a differentially private
    selection (e.g. thresholding a noisy count of distinct units, REFERENCE.md §10).

    Parameters
    ----------
    column : pandas.Series
        The key column.
    sort : bool, default True
        Sort the uniques (when comparable). A caller that orders only the keys it
        keeps (partition selection) passes ``False`` and saves the sort.

    Returns
    -------
    groups : Groups
        Codes ``0 .. len(uniques) - 1``; ``-1`` for a missing key (and for an
        unhashable one).
    uniques : pandas.Index
        The distinct keys, sorted when they are comparable (then codes follow the
        sorted key order), else in order of first appearance. Private.

    Examples
    --------
    >>> g, u = observed_codes(pd.Series(["b", "a", None, "b"]))
    >>> g.codes, list(u)
    (array([ 1,  0, -1,  1]), ['a', 'b'])
    """
    try:
        try:
            codes, uniques = pd.factorize(column, sort=sort, use_na_sentinel=True)
        except TypeError:  # incomparable keys: first-appearance order
            codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=True)
        return Groups(codes.astype(np.intp, copy=False), len(uniques)), pd.Index(uniques)
    except Exception:  # unhashable keys: those rows are in no group
        index: dict[Any, int] = {}
        out = np.full(len(column), -1, dtype=np.intp)
        for i, value in enumerate(column.tolist()):
            try:
                if not _is_missing(value):
                    out[i] = index.setdefault(value, len(index))
            except TypeError:
                continue
        return Groups(out, len(index)), pd.Index(list(index), dtype=object)


def _fast_kernels() -> Any | None:
    """The compiled kernels of :mod:`pandas_dp.engines._numba`, or ``None``."""
    if not USE_NUMBA:
        return None
    from pandas_dp.engines import _numba

    return _numba.kernels()


def _exact_inverse(step: float) -> float | None:
    """``1 / step`` when it is a finite power of two (then ``y * (1/step) == y / step``)."""
    inverse = 1.0 / step
    return inverse if math.isfinite(inverse) and inverse * step == 1.0 else None
