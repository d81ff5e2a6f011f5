"""How a column becomes the arrays the kernels read: :func:`column_pieces`.

A numpy-backed column is read as it is. A numeric Arrow column (``pd.ArrowDtype``
of floats, integers or booleans) is read chunk by chunk: a chunk without nulls as
a zero-copy view of its values, a chunk with nulls (or of a type numpy cannot view,
e.g. ``float32``) as a ``float64`` copy of that chunk alone, its nulls ``NaN``.
Copies are kept for the next read of the same column within a release (at most
``_KEPT_BYTES`` and ``_KEPT_COLUMNS``, dropped with their column), so a release
converts a column once. Other extension dtypes (nullable ``Int64``, ``Float64``,
``boolean``) become one ``float64`` array with ``NaN`` for missing values.

Examples
--------
>>> import pandas as pd
>>> column_values(pd.Series([1, None], dtype="Int64"))
array([ 1., nan])
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict
from typing import Any, Final

import numpy as np
import pandas as pd
from numpy.typing import NDArray

__all__ = ["MIN_PIECE_ROWS", "column_pieces", "column_values"]

#: Runs of Arrow chunks shorter than this are joined into one array (a kernel call
#: per tiny chunk would cost more than the copy).
MIN_PIECE_ROWS: Final = 1 << 14


def column_pieces(series: pd.Series) -> list[NDArray[Any]]:
    """The column as numpy arrays that, concatenated, are its values in row order.

    The one place where a column becomes what the kernels read. A numpy-backed
    numeric or boolean column is one array, itself (no copy). A numeric Arrow column
    (``pd.ArrowDtype`` of floats, integers or booleans) is one array per Arrow chunk:
    a zero-copy view of a ``double`` or integer chunk without nulls, its booleans
    unpacked for a boolean chunk without nulls, else a ``float64`` copy of that chunk
    alone with ``NaN`` for its nulls (so a null and a ``NaN`` are both missing, as
    they are for the ``float64`` conversion of any other extension dtype); runs of
    short chunks are joined into one array of at least ``MIN_PIECE_ROWS`` rows. A column
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
    if isinstance(dtype, pd.ArrowDtype) and arrow_numeric(dtype.pyarrow_dtype):
        return _arrow_pieces(series.array.__arrow_array__())
    return [series.to_numpy(dtype=np.float64, na_value=np.nan)]


def arrow_numeric(kind: Any) -> bool:
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
        if values.shape[0] >= MIN_PIECE_ROWS:
            flush()
            pieces.append(values)
            continue
        run.append(values)
        run_rows += values.shape[0]
        if run_rows >= MIN_PIECE_ROWS:
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
