"""Counts over declared categories and group codes: the in-memory engine's keys.

:func:`category_counts` counts a column over its declared categories (a missing
value and an undeclared one land in buckets of their own); :func:`mask_counts`
counts boolean masks; :func:`group_codes` maps rows onto a *public* product of
declared keys (``-1``: no released group); :func:`observed_codes` factorizes a
column whose keys are private (its uniques must be thresholded before release).
Nothing here raises on a value of the data: an unhashable object, ``NaN`` or a
string in a numeric column lands somewhere defined. A categorical column is read
through its integer codes, and an Arrow-backed string column through the positions
Arrow's ``index_in`` finds for its values among the declared strings; both then count
and map like small integers.

Examples
--------
>>> import pandas as pd
>>> g = group_codes([pd.Series(["a", "b", "a", "z"])], [["a", "b"]])
>>> g.codes, g.size
(array([ 0,  1,  0, -1]), 2)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import _numba
from pandas_dp.engines import pandas as core
from pandas_dp.engines.pandas import Groups, _bincount, _check_groups

__all__ = [
    "CategoryCounts",
    "category_counts",
    "factorize_safely",
    "group_codes",
    "mask_counts",
    "observed_codes",
]

#: Up to this many categories, count codes by comparison rather than ``bincount``.
_FEW_CATEGORIES: Final = 32


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
    """For a categorical column, integers declared over a small span, or Arrow-backed
    strings declared as strings (:func:`_arrow_string_positions`): ``(values, low,
    table)``, integer values whose slot (see :func:`_slots`) is ``table[v - low]``,
    or the table's last entry when ``v - low`` is off it."""
    k = len(keys)
    index = _first_positions(keys)
    dtype = series.dtype
    found = _arrow_string_positions(series, index)
    if found is not None:  # -2 missing, -1 undeclared, i the i-th distinct key
        slots = [k + 1, k, *index.values()]
        return found, -2, np.array(slots, dtype=np.intp)
    if isinstance(dtype, pd.CategoricalDtype):
        slot = _slot_function(index, k)
        slots = [k + 1] + [slot(v) for v in dtype.categories] + [k]  # code -1: missing
        return _category_codes(series), -1, np.array(slots, dtype=np.intp)
    if _int64_values(dtype):  # (wrap-around cannot match: both sides are in int64's range)
        table = _integer_table(index, k)
        if table is not None:
            return series.to_numpy(copy=False), table[0], table[1]
    return None


def _int64_values(dtype: Any) -> TypeGuard[np.dtype[Any]]:
    """Whether every value of a column of ``dtype`` is an integer in int64's range."""
    return isinstance(dtype, np.dtype) and (
        dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize < 8)
    )


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


#: Key types whose equality and hashing are exactly those of their characters (a
#: subclass of ``str`` could redefine them; numpy's ``str_`` does not).
_STRINGS: Final = (str, np.str_)


def _arrow_strings(series: pd.Series) -> Any | None:
    """The ``pyarrow.ChunkedArray`` of an Arrow-backed string column (pandas' ``str``
    and ``string[pyarrow]`` dtypes, ``pd.ArrowDtype`` of a string type), else None."""
    dtype = series.dtype
    if isinstance(dtype, pd.StringDtype):
        return series.array.__arrow_array__() if dtype.storage == "pyarrow" else None
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa  # type: ignore[import-untyped]

        kind = dtype.pyarrow_dtype
        if pa.types.is_string(kind) or pa.types.is_large_string(kind):
            return series.array.__arrow_array__()
    return None


def _arrow_string_positions(series: pd.Series, index: dict[Any, int]) -> NDArray[np.int32] | None:
    """Per row of an Arrow-backed string column whose declared keys are all strings:
    the position of its value among ``index``'s distinct keys, ``-1`` if undeclared,
    ``-2`` if missing. One ``pyarrow.compute.index_in`` over the column's chunks
    (Arrow's hash lookup in C++, about twice as fast as factorizing the column
    first). Two strings are equal in Arrow exactly when they are in Python (the same
    code points, as UTF-8). None where it does not apply (another dtype, a key that
    is not a ``str`` or numpy ``str_``, or one with no UTF-8 form): the generic path
    then decides."""
    if not all(type(key) in _STRINGS for key in index):
        return None
    values = _arrow_strings(series)
    if values is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc  # type: ignore[import-untyped]

    try:
        keys = pa.array(list(index), type=values.type)
    except (pa.ArrowException, UnicodeError):  # (a lone surrogate has no UTF-8 form)
        return None
    found = pc.index_in(values, value_set=keys)
    if values.null_count:  # a missing value is -2, an undeclared one -1
        found = pc.if_else(values.is_null(), pa.scalar(-2, pa.int32()), found.fill_null(-1))
    else:
        found = found.fill_null(-1)
    out: NDArray[np.int32] = found.to_numpy(zero_copy_only=False)
    return out


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
        The declared categories (public). A repeated category is counted at its
        first position (the later ones count 0), whatever the column's dtype.
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
    coded = None
    if groups is None and (
        isinstance(dtype, pd.CategoricalDtype) or _arrow_strings(series) is not None
    ):
        coded = _key_table(series, categories)  # every value on the table
    if coded is not None:  # (a categorical's last table entry is for no code of its own)
        occurring = len(dtype.categories) + 1 if isinstance(dtype, pd.CategoricalDtype) else None
        return _table_counts(*coded, k, occurring=occurring)
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


def _table_counts(
    codes: NDArray[np.integer[Any]],
    low: int,
    table: NDArray[np.intp],
    k: int,
    *,
    occurring: int | None = None,
) -> CategoryCounts:
    """One group: counts of integer codes that are all on ``table`` (a categorical's
    codes, ``-1`` missing; or Arrow's positions, :func:`_arrow_string_positions`),
    each code's count added to its slot ``table[code - low]``. ``occurring``: only
    the codes ``low .. low + occurring - 1`` can occur (the others count 0)."""
    size = table.shape[0]
    fast = (
        core._fast_kernels()
        if codes.shape[0] >= core.FAST_MIN_ROWS and size < _numba.TABLE_ROWS
        else None
    )
    if fast is not None:  # one pass, per-thread tallies of the codes
        tally = _numba.code_counts(fast, codes, low, size, trusted=True)
    elif size <= _FEW_CATEGORIES:  # a few passes over the narrow codes beat widening them
        used = size if occurring is None else min(occurring, size)
        tally = np.zeros(size, dtype=np.int64)
        tally[:used] = _few_code_counts(codes, low, used)
    else:
        tally = np.bincount(codes.astype(np.intp) - low, minlength=size).astype(np.int64)
    per_slot = np.zeros(k + 2, dtype=np.int64)
    np.add.at(per_slot, table, tally)
    return CategoryCounts(
        counts=per_slot[:k].reshape(1, k),
        missing=per_slot[k + 1 :].copy(),
        other=per_slot[k : k + 1].copy(),
    )


#: Bytes of codes per chunk of :func:`_few_code_counts` (with as many flags: in L2).
CODE_CHUNK_BYTES: int = 1 << 18


def _few_code_counts(codes: NDArray[np.integer[Any]], low: int, size: int) -> NDArray[np.int64]:
    """Counts of the codes ``low .. low + size - 1``, every code in that range (a few).

    numpy, in cache-sized chunks, each read once from memory and then worked on in
    cache: its smallest and largest code (two quick reductions) bound the codes to
    count; of those, a code ``0`` is counted by ``count_nonzero`` of the codes
    themselves, any other by one comparison and a count, and one (not ``0``) as the
    chunk's rows left over. A long column is split into parts counted in the
    engine's threads (numpy releases the GIL in its loops), added exactly.
    """
    n = codes.shape[0]
    if size <= 1:
        return np.full(size, n, dtype=np.int64)
    parts = _numba.run_parts(lambda start, stop: _few_counts_part(codes[start:stop], low, size), n)
    tally: NDArray[np.int64] = parts[0] if len(parts) == 1 else np.sum(parts, axis=0)
    return tally


def _few_counts_part(codes: NDArray[np.integer[Any]], low: int, size: int) -> NDArray[np.int64]:
    """:func:`_few_code_counts` of one part, in one thread."""
    n = codes.shape[0]
    chunk = max(1, min(n, CODE_CHUNK_BYTES // max(1, codes.itemsize)))
    hits = np.empty(chunk, dtype=bool)
    tally = [0] * size
    count, lowest, highest = np.count_nonzero, np.minimum.reduce, np.maximum.reduce
    for start in range(0, n, chunk):
        part = codes[start : start + chunk]
        m = part.shape[0]
        flags = hits if m == chunk else hits[:m]
        first = max(int(lowest(part)), low)  # (every code is in range: no clamp bites)
        last = min(int(highest(part)), low + size - 1)
        rest = last if last != 0 else last - 1  # the code counted as the rows left over
        left = m
        for code in range(first, last + 1):
            if code == rest:
                continue
            if code == 0:
                found = m - int(count(part))
            else:
                np.equal(part, code, out=flags)
                found = int(count(flags))
            tally[code - low] += found
            left -= found
        if first <= rest:
            tally[rest - low] += left
    return np.array(tally, dtype=np.int64)


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
    fast = core._fast_kernels() if rows >= core.FAST_MIN_ROWS else None
    if fast is not None:
        tables = [
            _key_table(column, declared) for column, declared in zip(columns, keys, strict=True)
        ]
        if all(t is not None and t[0].dtype.isnative for t in tables):  # one compiled pass
            parts = [(*t, r) for t, r in zip(tables, radix, strict=True) if t is not None]
            code = _numba.key_codes(fast, parts, rows, product if other else -1)
            return Groups(code, product + 1 if other else product)
    code = np.zeros(rows, dtype=np.intp)
    undeclared = np.zeros(rows, dtype=bool)
    missing = np.zeros(rows, dtype=bool)
    for column, declared, r in zip(columns, keys, radix, strict=True):
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
        keeps (partition selection) passes ``False`` and saves the sort: the uniques
        then come in order of first appearance.

    Returns
    -------
    groups : Groups
        Codes ``0 .. len(uniques) - 1``; ``-1`` for a missing key (and for one
        whose ``__hash__`` raises, whatever it raises). A key whose ``==`` raises
        is a key of its own.
    uniques : pandas.Index
        The distinct keys, sorted when they are comparable (then codes follow the
        sorted key order), else in order of first appearance. Private.

    Examples
    --------
    >>> g, u = observed_codes(pd.Series(["b", "a", None, "b"]))
    >>> g.codes, list(u)
    (array([ 1,  0, -1,  1]), ['a', 'b'])
    """
    found = _integer_observed(column, sort)
    if found is not None:
        return found
    try:
        try:
            codes, uniques = pd.factorize(column, sort=sort, use_na_sentinel=True)
        except TypeError:  # incomparable keys: first-appearance order
            codes, uniques = pd.factorize(column, sort=False, use_na_sentinel=True)
        return Groups(codes.astype(np.intp, copy=False), len(uniques)), pd.Index(uniques)
    except Exception:  # unhashable keys (or hostile ones): value by value
        index: dict[_Key, int] = {}
        out = np.full(len(column), -1, dtype=np.intp)
        for i, value in enumerate(column.tolist()):
            if _is_missing(value):
                continue
            try:
                hashed = hash(value)
            except Exception:  # whatever __hash__ raises: the row is in no group
                continue
            out[i] = index.setdefault(_Key(value, hashed), len(index))
        return Groups(out, len(index)), pd.Index([k.value for k in index], dtype=object)


def factorize_safely(values: Sequence[Any]) -> tuple[NDArray[np.intp], list[Any]]:
    """Codes and uniques of ``values`` in order of first appearance, never raising.

    For labels already released (an index to build), whatever their objects do:
    equal values (:class:`_Key`'s equality) share a code, and a value whose
    ``__hash__`` raises is a unique of its own at each of its positions.

    Examples
    --------
    >>> codes, uniques = factorize_safely(["b", "a", "b"])
    >>> codes.tolist(), uniques
    ([0, 1, 0], ['b', 'a'])
    """
    index: dict[Any, int] = {}
    out = np.empty(len(values), dtype=np.intp)
    uniques: list[Any] = []
    for i, value in enumerate(values):
        try:
            key: Any = _Key(value, hash(value))
        except Exception:  # (no hash: a key of its own)
            key = object()
        code = index.setdefault(key, len(uniques))
        if code == len(uniques):
            uniques.append(value)
        out[i] = code
    return out, uniques


class _Key:
    """A private key as a dictionary key that never raises.

    Its hash is the value's, computed once by the caller (a value whose
    ``__hash__`` raises is in no group, like an unhashable one). Two keys are
    equal when they are the same object or when ``==`` gives a truth value; a
    comparison that raises (or whose result has no truth value) makes them
    different keys. So what happens to a row is decided by its own value (and,
    only for values that compare equal, by theirs), never by an exception.
    """

    __slots__ = ("hashed", "value")

    def __init__(self, value: Any, hashed: int) -> None:
        self.value = value
        self.hashed = hashed

    def __hash__(self) -> int:
        return self.hashed

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Key):
            return NotImplemented
        if self.value is other.value:
            return True
        try:
            return bool(self.value == other.value)
        except Exception:
            return False


def _integer_observed(column: pd.Series, sort: bool) -> tuple[Groups, pd.Index] | None:
    """:func:`observed_codes` of a long integer column over a short span, compiled.

    One pass finds each value's first row over the values' span ``min .. max`` (at
    most twice the rows, and at most ``16 *``
    :data:`~pandas_dp.engines._numba.TABLE_ROWS`); the values present, in
    increasing order or in order of first appearance, are the uniques,
    exactly as ``pd.factorize`` orders them, and a second pass looks each row's code
    up in a table over the span. Measured at 10**7 rows of 10**5 keys: about 40 ms
    against 108 ms for ``pd.factorize``. ``None`` (the caller factorizes) without
    the compiled kernels, for a short column, another dtype or a wide span.
    """
    dtype = column.dtype
    rows = len(column)
    if not (_int64_values(dtype) and rows >= core.FAST_MIN_ROWS):
        return None
    fast = core._fast_kernels()
    if fast is None:
        return None
    values = column.to_numpy(copy=False)
    low, high = int(values.min()), int(values.max())
    span = high - low + 1
    if span > min(2 * rows, 16 * _numba.TABLE_ROWS):
        return None
    parts = _numba.run_parts(
        lambda start, stop: fast.first_rows(values[start:stop], low, span, start), rows
    )
    first = np.minimum.reduce(parts) if len(parts) > 1 else parts[0]
    present = np.flatnonzero(first < rows)  # in increasing order of value
    if not sort:
        present = present[np.argsort(first[present])]
    table = np.full(span + 1, -1, dtype=np.intp)  # (the last entry: off the span, none)
    table[present] = np.arange(present.size)
    code = np.empty(rows, dtype=np.intp)
    _numba.run_parts(
        lambda start, stop: fast.table_codes(values[start:stop], low, table, code[start:stop]),
        rows,
    )
    uniques = (present + low).astype(dtype)
    return Groups(code, int(uniques.size)), pd.Index(uniques)
