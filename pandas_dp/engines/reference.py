"""The reference engine: every exact statistic, row by row, in pure Python.

This module is the *oracle* the tests hold the other engines to. Each kernel of the
in-memory engine (:mod:`pandas_dp.engines.pandas`, :mod:`~pandas_dp.engines.sums`,
:mod:`~pandas_dp.engines.codes`, :mod:`~pandas_dp.engines.grid`) has a twin here with
the same signature and the same result type, written from the specification
(REFERENCE.md §13) in a few lines: the column is read into a Python list, its rows
are visited one at a time, and every sum is a Python integer or an exact
:class:`~fractions.Fraction`. No numpy arithmetic, no chunks, no threads, no
compiled code: nothing here can depend on the order of the rows, a chunk size or a
code path, which is what makes it a useful oracle -- and why it is slow: a few
microseconds per value for a count, tens for an exact sum (each row's rounding is a
:class:`~fractions.Fraction` division), about a thousand times the in-memory
engine's cost. Use it on small data, in tests.

The specification, per row of a numeric column:

* **Reading.** A missing value (``None``, ``pd.NA``, ``NaT``, ``NaN``) counts in no
  sum; any other value is read as the ``float64`` nearest to it (exact for
  ``float32`` and ``float16``, round-half-even for an integer beyond ``2**53``;
  ``True`` is 1). ``±inf`` are values like any other, clamped below.
* **Centring.** With the public half-width ``h = 0.5 * (upper - lower)`` and
  midpoint ``m = lower + h`` (both ``float64``), the centred value is
  ``y = clamp(x - m, -h, h)``, the difference taken in ``float64`` (correctly
  rounded; an overflow to ``±inf`` is clamped to ``±h``).
* **Rounding.** ``y`` counts as the integer ``round(y / q)`` (exactly, half to
  even), ``q`` the power-of-two step of :func:`accumulation_step` for ``h``. A
  square counts as ``round(y*y / q2)`` and a cross-product of two columns as
  ``round(y_i*y_j / q_ij)``, the product taken in ``float64`` and the steps those
  of ``h*h`` and ``h_i*h_j``; a ``p``-th power ``round(y*...*y / q_p)``, multiplied
  left to right in ``float64``, on the step of ``h**p`` (:func:`power_sums`).
* **Adding.** The integers are added exactly; a sum is that integer times its step.

The ``float64`` operations named above (the centring, the squares and products, and
the scaling of a grid count) are part of the specification: they are what every
engine must compute, bit for bit, so that a seeded release does not depend on the
engine. Everything after them is exact. (A centred value is thus rounded twice, to
a ``float64`` and then to the step; it stays within one step of the exact value, as
the sensitivity assumes, but a tie of the second rounding can differ from the
single rounding of the exact difference: see the tests.)

The other kernels, per row: a category count puts a missing value in *missing*
(even when a missing marker is declared), a present one at the first declared
category equal to it in Python (``1 == 1.0 == True``), anything else in *other*;
a grid count clamps a number to the bounds and counts it in one bin; a privacy
unit keeps its rows of smallest keyed hash (:func:`contribution_mask`, the hashes
of :mod:`pandas_dp.engines.units` computed value by value). A row in group ``-1``
counts nowhere.

Examples
--------
>>> import pandas as pd
>>> m = moments(pd.Series([1.0, 5.0, None, 50.0]), 0.0, 10.0, squares=True)
>>> m.count, m.total_exact, m.squares_exact
(array([3]), [Fraction(1, 1)], [Fraction(41, 1)])
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Hashable, Sequence
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines import in_memory
from pandas_dp.engines.codes import CategoryCounts
from pandas_dp.engines.pandas import STEP_BITS, Groups
from pandas_dp.engines.powers import PowerSums
from pandas_dp.engines.sums import MomentSums, ProductSums

__all__ = [
    "REFERENCE",
    "ReferenceEngine",
    "accumulation_step",
    "category_counts",
    "contribution_mask",
    "distinct_units",
    "grid_counts",
    "group_codes",
    "mask_counts",
    "moments",
    "observed_codes",
    "power_sums",
    "present_counts",
    "products",
    "row_counts",
]


# -- reading --------------------------------------------------------------------------


def is_missing(value: Any) -> bool:
    """Whether a value is missing: ``None``, ``pd.NA``, ``NaT`` or anything unequal
    to itself (``NaN`` of any kind). A value whose comparison raises is present.

    Parameters
    ----------
    value : object
        One value of a column.

    Returns
    -------
    bool

    Examples
    --------
    >>> is_missing(float("nan")), is_missing(pd.NA), is_missing(0.0), is_missing("")
    (True, True, False, False)
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    try:
        return bool(value != value)
    except Exception:
        return False


def _number(value: Any) -> float | None:
    """A numeric column's value as its nearest ``float64``, or ``None`` if missing."""
    return None if is_missing(value) else float(value)


def _rows(series: pd.Series) -> list[Any]:
    """The column's values as Python objects, in row order."""
    return list(series.tolist())


def _codes(groups: Groups | None, rows: int) -> tuple[list[int], int]:
    """Each row's group code (all ``0`` without groups) and the number of groups."""
    if groups is None:
        return [0] * rows, 1
    codes = [int(c) for c in groups.codes.tolist()]
    if len(codes) != rows:
        raise ValueError(f"the group codes have {len(codes)} entries; the data has {rows} rows")
    return codes, groups.size


def _int64(values: list[int]) -> NDArray[np.int64]:
    """A result vector in the in-memory engine's type (counts only, never sums)."""
    return np.array(values, dtype=np.int64).reshape(len(values))


# -- the arithmetic -------------------------------------------------------------------


def accumulation_step(magnitude: float) -> float:
    """The rounding step of a quantity of public size ``magnitude``: ``2**-STEP_BITS``
    times the smallest power of two above ``magnitude``.

    Parameters
    ----------
    magnitude : float
        The largest absolute value of the quantity (positive, finite).

    Returns
    -------
    float
        A power of two ``q`` with ``magnitude < 2**STEP_BITS * q <= 2 * magnitude``.

    Raises
    ------
    ValueError
        If ``magnitude`` is not positive and finite, or ``q`` is below the smallest
        ``float64``.

    Examples
    --------
    >>> accumulation_step(50.0) == 2.0**-32  # 50 < 64 = 2**6
    True
    >>> accumulation_step(64.0) == 2.0**-31
    True
    """
    if not (math.isfinite(magnitude) and magnitude > 0):
        raise ValueError(f"a rounding step needs a positive finite magnitude; got {magnitude}")
    _, exponent = math.frexp(magnitude)  # 2**(exponent - 1) <= magnitude < 2**exponent
    step = math.ldexp(1.0, exponent - STEP_BITS)  # exact, or 0.0 below the subnormals
    if step == 0.0:
        raise ValueError(f"the rounding step of a quantity of size {magnitude:g} underflows")
    return step


def _centred(x: float, mid: float, half: float) -> float:
    """``clamp(x - mid, -half, half)``, the difference in ``float64`` (an overflow is
    ``±inf``, then clamped)."""
    return min(max(x - mid, -half), half)


def _steps(y: float, step: float) -> int:
    """``y / step`` rounded to the nearest integer, half to even, exactly."""
    return round(Fraction(y) / Fraction(step))


def _bounds(lower: float, upper: float) -> tuple[float, float]:
    """The public midpoint and half-width, in ``float64``."""
    half = 0.5 * (upper - lower)
    return lower + half, half


# -- counts ---------------------------------------------------------------------------


def row_counts(groups: Groups | None, rows: int) -> NDArray[np.int64]:
    """Rows per group (``-1``: in no group).

    Parameters
    ----------
    groups : Groups or None
        Each row's group; ``None``: one group of all rows.
    rows : int
        The number of rows.

    Returns
    -------
    ndarray of int64, shape (size,)

    Examples
    --------
    >>> row_counts(Groups(np.array([0, 2, -1, 0]), 3), 4)
    array([2, 0, 1])
    """
    codes, size = _codes(groups, rows)
    counts = [0] * size
    for g in codes:
        if g >= 0:
            counts[g] += 1
    return _int64(counts)


def present_counts(series: pd.Series, groups: Groups | None) -> NDArray[np.int64]:
    """Non-missing values per group, of a column of any dtype.

    Parameters
    ----------
    series : pandas.Series
        Any column.
    groups : Groups or None
        Each row's group; ``None``: one group of all rows.

    Returns
    -------
    ndarray of int64, shape (size,)

    Examples
    --------
    >>> present_counts(pd.Series(["a", None, float("inf")]), None)
    array([2])
    """
    values = _rows(series)
    codes, size = _codes(groups, len(values))
    counts = [0] * size
    for v, g in zip(values, codes, strict=True):
        if g >= 0 and not is_missing(v):
            counts[g] += 1
    return _int64(counts)


def mask_counts(masks: Sequence[pd.Series], groups: Groups | None = None) -> NDArray[np.int64]:
    """Per group, the rows where each boolean mask is true (missing: false).

    Parameters
    ----------
    masks : sequence of pandas.Series
        Boolean columns.
    groups : Groups, optional
        Each row's group; ``None``: one group of all rows.

    Returns
    -------
    ndarray of int64, shape (size, len(masks))

    Examples
    --------
    >>> mask_counts([pd.Series([True, None, True], dtype="boolean")])
    array([[2]])
    """
    size = 1 if groups is None else groups.size
    table = [[0] * len(masks) for _ in range(size)]
    for i, mask in enumerate(masks):
        values = _rows(mask)
        codes, _ = _codes(groups, len(values))
        for v, g in zip(values, codes, strict=True):
            if g >= 0 and not is_missing(v) and bool(v):
                table[g][i] += 1
    return np.array(table, dtype=np.int64).reshape(size, len(masks))


# -- exact sums -----------------------------------------------------------------------


def moments(
    series: pd.Series,
    lower: float,
    upper: float,
    *,
    squares: bool,
    groups: Groups | None = None,
) -> MomentSums:
    """Per group: non-missing count, centred sum and centred squares, exactly.

    Parameters
    ----------
    series : pandas.Series
        A numeric or boolean column.
    lower, upper : float
        The declared bounds (public).
    squares : bool
        Whether to add the squares (else they are zeros, on step ``1.0``).
    groups : Groups, optional
        Each row's group; ``None``: one group of all rows.

    Returns
    -------
    MomentSums
        ``total[g] = Σ round(y / q)`` and ``squares[g] = Σ round(y*y / q2)`` over the
        group's present values (see the module for ``y``, ``q`` and ``q2``).

    Examples
    --------
    >>> g = Groups(np.array([0, 0, 1, -1]), 2)
    >>> m = moments(pd.Series([1.0, 2.0, None, 9.0]), 0.0, 4.0, squares=True, groups=g)
    >>> m.count, m.total_exact, m.squares_exact
    (array([2, 0]), [Fraction(-1, 1), Fraction(0, 1)], [Fraction(1, 1), Fraction(0, 1)])
    """
    mid, half = _bounds(lower, upper)
    step = accumulation_step(half)
    sq_step = accumulation_step(half * half) if squares else 1.0
    values = [_number(v) for v in _rows(series)]
    codes, size = _codes(groups, len(values))
    count, total, sq = [0] * size, [0] * size, [0] * size
    for x, g in zip(values, codes, strict=True):
        if g < 0 or x is None:
            continue
        y = _centred(x, mid, half)
        count[g] += 1
        total[g] += _steps(y, step)
        if squares:
            sq[g] += _steps(y * y, sq_step)
    return MomentSums(_int64(count), total, sq, step, sq_step)


def power_sums(
    series: pd.Series,
    lower: float,
    upper: float,
    power: int,
    *,
    groups: Groups | None = None,
) -> PowerSums:
    """Per group: the exact sum of the rounded ``power``-th powers of the centred values.

    Examples
    --------
    >>> power_sums(pd.Series([1.0, 4.0, None, 50.0]), 0.0, 10.0, 3).exact
    [Fraction(60, 1)]
    """
    mid, half = _bounds(lower, upper)
    magnitude = 1.0
    for _ in range(power):
        magnitude *= half
    step = accumulation_step(magnitude)
    values = [_number(v) for v in _rows(series)]
    codes, size = _codes(groups, len(values))
    sums = [0] * size
    for x, g in zip(values, codes, strict=True):
        if g < 0 or x is None:
            continue
        y = _centred(x, mid, half)
        p = y
        for _ in range(power - 1):
            p *= y
        sums[g] += _steps(p, step)
    return PowerSums(sums, step)


def products(
    columns: Sequence[pd.Series], lowers: Sequence[float], uppers: Sequence[float]
) -> ProductSums:
    """Over the complete rows of several columns: count, centred sums, cross-products.

    A row missing a value in any column counts in no sum (listwise deletion).

    Parameters
    ----------
    columns : sequence of pandas.Series
        Numeric columns of equal length.
    lowers, uppers : sequence of float
        The declared bounds of each column (public).

    Returns
    -------
    ProductSums
        ``totals[i] = Σ round(y_i / q_i)``, ``products[i, j] = Σ round(y_i*y_j / q_ij)``
        for ``i <= j`` (one group).

    Examples
    --------
    >>> p = products([pd.Series([0.0, 2.0, 1.0]), pd.Series([1.0, None, 2.0])], [0, 0], [2, 2])
    >>> sums, prods = p.exact()
    >>> p.count, [str(s) for s in sums], {ij: str(v) for ij, v in prods.items()}
    (array([2]), ['-1', '1'], {(0, 0): '1', (0, 1): '0', (1, 1): '1'})
    """
    centre = [_bounds(lo, up) for lo, up in zip(lowers, uppers, strict=True)]
    steps = [accumulation_step(half) for _, half in centre]
    pairs = [(i, j) for i in range(len(columns)) for j in range(i, len(columns))]
    psteps = {(i, j): accumulation_step(centre[i][1] * centre[j][1]) for i, j in pairs}
    table = [[_number(v) for v in _rows(c)] for c in columns]
    count, totals = 0, [0] * len(columns)
    prods = dict.fromkeys(pairs, 0)
    for row in zip(*table, strict=True):
        if any(x is None for x in row):
            continue
        y = [_centred(x, m, h) for x, (m, h) in zip(row, centre, strict=True)]  # type: ignore[arg-type]
        count += 1
        for i in range(len(y)):
            totals[i] += _steps(y[i], steps[i])
        for i, j in pairs:
            prods[(i, j)] += _steps(y[i] * y[j], psteps[(i, j)])
    return ProductSums(_int64([count]), totals, prods, steps, psteps)


# -- categories and keys --------------------------------------------------------------


def _hashable(value: Any) -> bool:
    """Whether ``hash(value)`` succeeds."""
    try:
        hash(value)
    except Exception:
        return False
    return True


def _position(value: Any, categories: Sequence[object]) -> int | None:
    """The first declared category equal to a present value (Python's ``==`` on
    hashable values, as a dictionary finds it: ``1 == 1.0 == True``), else ``None``.
    A value or category that cannot be hashed or compared matches nothing."""
    if not _hashable(value):
        return None
    for i, c in enumerate(categories):
        try:
            hash(c)
            if c is value or (hash(c) == hash(value) and bool(c == value)):
                return i
        except Exception:
            continue
    return None


def category_counts(
    series: pd.Series, categories: Sequence[object], *, groups: Groups | None = None
) -> CategoryCounts:
    """Per group: counts of each declared category, of other values and of missing ones.

    A missing value is *missing* even when a missing marker is declared; a present
    value counts at the first declared category equal to it, else as *other*.

    Parameters
    ----------
    series : pandas.Series
        Any column.
    categories : sequence
        The declared categories (public).
    groups : Groups, optional
        Each row's group; ``None``: one group of all rows.

    Returns
    -------
    CategoryCounts

    Examples
    --------
    >>> c = category_counts(pd.Series(["a", "b", None, "a", "q"]), ["a", "b"])
    >>> c.counts, c.missing, c.other
    (array([[2, 1]]), array([1]), array([1]))
    """
    values = _rows(series)
    codes, size = _codes(groups, len(values))
    k = len(categories)
    counts = [[0] * k for _ in range(size)]
    missing, other = [0] * size, [0] * size
    for v, g in zip(values, codes, strict=True):
        if g < 0:
            continue
        if is_missing(v):
            missing[g] += 1
        elif (i := _position(v, categories)) is None:
            other[g] += 1
        else:
            counts[g][i] += 1
    return CategoryCounts(
        np.array(counts, dtype=np.int64).reshape(size, k), _int64(missing), _int64(other)
    )


def group_codes(
    columns: Sequence[pd.Series], keys: Sequence[Sequence[object]], *, other: bool = False
) -> Groups:
    """Each row's position in the product of declared keys (first column slowest).

    A row with a missing key is in no group (``-1``); one with an undeclared key is
    in no group, or with ``other=True`` in the extra last group.

    Parameters
    ----------
    columns : sequence of pandas.Series
        The key columns.
    keys : sequence of sequences
        The declared keys of each column (public).
    other : bool, default False
        Whether the undeclared keys form one more group.

    Returns
    -------
    Groups

    Examples
    --------
    >>> g = group_codes([pd.Series(["x", "y", "y", None]), pd.Series([1, 2, 3, 1])],
    ...                 [["x", "y"], [1, 2]], other=True)
    >>> g.codes, g.size
    (array([ 0,  3,  4, -1]), 5)
    """
    product = math.prod(len(k) for k in keys)
    table = [_rows(c) for c in columns]
    out = []
    for row in zip(*table, strict=True):
        if any(is_missing(v) for v in row):
            out.append(-1)
            continue
        found = [_position(v, k) for v, k in zip(row, keys, strict=True)]
        if any(p is None for p in found):
            out.append(product if other else -1)
            continue
        code = 0
        for p, k in zip(found, keys, strict=True):
            code = code * len(k) + p  # type: ignore[operator]
        out.append(code)
    return Groups(np.array(out, dtype=np.intp).reshape(len(out)), product + 1 if other else product)


def observed_codes(column: pd.Series, *, sort: bool = True) -> tuple[Groups, pd.Index]:
    """The distinct present keys of a column (private) and each row's key number.

    Parameters
    ----------
    column : pandas.Series
        The key column (hashable values).
    sort : bool, default True
        Number the keys in sorted order (a categorical's: the order of its
        categories) when they are comparable, else (or with ``sort=False``) in order
        of first appearance.

    Returns
    -------
    groups : Groups
        ``-1`` for a missing key or one that cannot be hashed.
    uniques : pandas.Index
        The distinct keys, in code order.

    Examples
    --------
    >>> g, u = observed_codes(pd.Series(["b", "a", None, "b"]))
    >>> g.codes, list(u)
    (array([ 1,  0, -1,  1]), ['a', 'b'])
    """
    values = [v if _hashable(v) and not is_missing(v) else None for v in _rows(column)]
    keys: dict[Hashable, int] = {}
    for v in values:
        if v is not None:
            keys.setdefault(v, len(keys))
    order = list(keys)
    if sort and isinstance(column.dtype, pd.CategoricalDtype):  # the categories' order
        rank = {c: i for i, c in enumerate(column.dtype.categories)}
        order = sorted(order, key=rank.__getitem__)
    elif sort:
        with contextlib.suppress(TypeError):  # incomparable keys: first appearance
            order = sorted(order)  # type: ignore[type-var]
    number = {key: i for i, key in enumerate(order)}
    codes = [-1 if v is None else number[v] for v in values]
    return Groups(np.array(codes, dtype=np.intp).reshape(len(codes)), len(order)), pd.Index(order)


# -- the quantile grid ----------------------------------------------------------------


def _grid_number(value: Any) -> float | None:
    """A grid value as a ``float64``: a number, or a string ``float()`` reads; else
    (missing, or not a number) ``None``."""
    if is_missing(value):
        return None
    try:
        x = float(value)
    except Exception:
        return None
    return None if math.isnan(x) else x


def grid_counts(
    series: pd.Series,
    lower: float,
    upper: float,
    bins: int,
    *,
    groups: Groups | None = None,
) -> NDArray[np.int64]:
    """Per group, the clamped values in each of ``bins`` equal bins of ``[lower, upper]``.

    A value ``x`` is clamped to the bounds and falls in bin
    ``min(bins - 1, floor((x - lower) * s))``, the difference and the product taken
    in ``float64`` with ``s = bins / (upper - lower)`` (also in ``float64``): a value
    on an edge falls in the bin above it, ``upper`` in the last bin. A missing value
    or one that is not a number falls in none.

    Parameters
    ----------
    series : pandas.Series
        Any column.
    lower, upper : float
        The declared bounds (public, finite, ``lower < upper``).
    bins : int
        The number of bins.
    groups : Groups, optional
        Each row's group; ``None``: one group of all rows.

    Returns
    -------
    ndarray of int64, shape (size, bins)

    Examples
    --------
    >>> grid_counts(pd.Series([0.5, 1.0, 9.0, None, -3.0, "2"]), 0.0, 4.0, 4)
    array([[2, 1, 1, 1]])
    """
    if not (bins >= 1 and math.isfinite(lower) and math.isfinite(upper - lower) and lower < upper):
        raise ValueError(f"a grid needs bins >= 1, finite bounds; got {bins}, ({lower}, {upper})")
    scale = bins / (upper - lower)
    values = [_grid_number(v) for v in _rows(series)]
    codes, size = _codes(groups, len(values))
    table = [[0] * bins for _ in range(size)]
    for x, g in zip(values, codes, strict=True):
        if g < 0 or x is None:
            continue
        clamped = min(max(x, lower), upper)
        table[g][min(bins - 1, math.floor((clamped - lower) * scale))] += 1
    return np.array(table, dtype=np.int64).reshape(size, bins)


# -- privacy units: truncation by keyed hash -------------------------------------------

_WORD = 1 << 64
#: The content of a missing value, in every dtype (before the keyed mixes).
_MISSING_CONTENT = 0x6D697373696E6700
#: The bits of the canonical ``NaN`` (a NaN that is not missing: Arrow floats).
_NAN_BITS = 0x7FF8000000000000


def _finalise(v: int) -> int:
    """splitmix64's finaliser of a 64-bit word (pandas' finaliser of numbers)."""
    v ^= v >> 30
    v = (v * 0xBF58476D1CE4E5B9) % _WORD
    v ^= v >> 27
    v = (v * 0x94D049BB133111EB) % _WORD
    return v ^ (v >> 31)


def _mix(v: int, word: int) -> int:
    """The keyed mix: the finaliser of ``v xor word``."""
    return _finalise(v ^ word)


def _key_words(key: str, count: int) -> list[int]:
    """``count`` 64-bit words from the key: BLAKE2b digests of it, personalised
    ``pandas-dp-unit`` then ``pandas-dp-unit`` + the block number (2 bytes, little
    endian), 8 little-endian words per digest."""
    import hashlib

    words: list[int] = []
    for block in range((count + 7) // 8):
        take = min(8, count - len(words))
        person = b"pandas-dp-unit" + (block.to_bytes(2, "little") if block else b"")
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8 * take, person=person)
        raw = digest.digest()
        words += [int.from_bytes(raw[8 * i : 8 * i + 8], "little") for i in range(take)]
    return words


def _text_hash(text: str, key: str) -> int:
    """pandas' keyed SipHash of one string (``hash_pandas_object`` of the string alone)."""
    one = pd.Series([text], dtype=object)
    hashed = pd.util.hash_pandas_object(one, index=False, hash_key=key, categorize=False)
    return int(hashed.iloc[0])


def _content(column: pd.Series, key: str, typed: bool = False) -> list[int]:
    """Each value's 64-bit content, a function of the value and the dtype's kind alone.

    Missing (as ``isna``): a fixed word. A boolean: the finaliser of 0 or 1; an
    integer: of its two's complement (64 bits); a float: of its ``float64`` bits
    (``-0.0`` as ``0.0``, one NaN). Anything else: the SipHash of its text, the
    value itself for a string, ``str(value)`` otherwise (prefixed by its type with
    ``typed``, as group keys are).
    """
    dtype = column.dtype
    kind = "O" if isinstance(dtype, pd.CategoricalDtype) else getattr(dtype, "kind", "O")
    out = []
    for value, missing in zip(column.tolist(), column.isna().tolist(), strict=True):
        if missing:
            out.append(_MISSING_CONTENT)
        elif kind == "b":
            out.append(_finalise(int(bool(value))))
        elif kind in "iu":
            out.append(_finalise(int(value) % _WORD))
        elif kind == "f":
            x = float(value) + 0.0
            bits = _NAN_BITS if x != x else int.from_bytes(np.float64(x).tobytes(), "little")
            out.append(_finalise(bits))
        elif isinstance(value, str):
            out.append(_text_hash(value, key))
        elif typed:
            kind_of = type(value)
            prefix = f"\x00{kind_of.__module__}.{kind_of.__qualname__}\x00"
            out.append(_text_hash(prefix + str(value), key))
        else:
            out.append(_text_hash(str(value), key))
    return out


def _keep_lowest(rows: list[int], rank: list[int], limit: int) -> set[int]:
    """The ``limit`` rows of smallest ``(rank, row)``."""
    return set(sorted(rows, key=lambda i: (rank[i], i))[:limit])


def contribution_mask(
    rows: pd.DataFrame,
    unit: pd.Series,
    *,
    key: str,
    max_rows_per_unit: int,
    groups: NDArray[np.intp] | None = None,
    group_by: Sequence[Hashable] = (),
    max_groups_per_unit: int | None = None,
    max_rows_per_group: int | None = None,
) -> NDArray[np.bool_]:
    """The rows each privacy unit keeps: those of smallest keyed rank hash.

    Each row's *rank hash* mixes the content of its unit, of each column of ``rows``
    and of its group (its code, or with ``group_by`` the contents of those columns),
    with 64-bit words drawn from ``key``. A row with a missing unit, or in group
    ``-1``, is never kept. Then, in this order: each unit keeps the
    ``max_groups_per_unit`` groups of smallest pair hash (the smallest keyed hash of
    (unit, group) over its rows); in each kept (unit, group), the
    ``max_rows_per_group`` rows of smallest rank hash; of those, per unit, the
    ``max_rows_per_unit`` rows of smallest rank hash. Ties between equal hashes go
    to the earlier row (only rows of equal contents can tie).

    Parameters
    ----------
    rows : pandas.DataFrame
        The columns the release reads (the group-by columns included).
    unit : pandas.Series
        The privacy unit of each row.
    key : str
        The 16-byte key of the hashes.
    max_rows_per_unit : int
        Rows kept per unit.
    groups : ndarray of intp, optional
        Each row's group code (``-1``: none).
    group_by : sequence of labels, optional
        The columns of ``rows`` holding the group keys (then groups are hashed by
        their contents, not their codes).
    max_groups_per_unit, max_rows_per_group : int, optional
        Groups kept per unit; rows kept per unit and group.

    Returns
    -------
    ndarray of bool
        One flag per row: kept.

    Examples
    --------
    >>> df = pd.DataFrame({"pid": [1, 1, 1, 2, None], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
    >>> keep = contribution_mask(df[["x"]], df["pid"], key="0123456789abcdef",
    ...                          max_rows_per_unit=2)
    >>> int(keep.sum()), bool(keep[3]), bool(keep[4])
    (3, True, False)
    """
    n = len(unit)
    if groups is None and (max_groups_per_unit is not None or max_rows_per_group is not None):
        raise ValueError("max_groups_per_unit and max_rows_per_group need groups=")
    words = _key_words(key, 4 + rows.shape[1])
    unit_hash = [_mix(c, words[0]) for c in _content(unit, key)]
    rank = list(unit_hash)
    for i in range(rows.shape[1]):
        content = _content(rows.iloc[:, i], key)
        rank = [_mix((r + c) % _WORD, words[4 + i]) for r, c in zip(rank, content, strict=True)]
    active = [not m for m in unit.isna().tolist()]
    codes = [0] * n if groups is None else [int(g) for g in groups.tolist()]
    group_hash = [0] * n
    if groups is not None:
        active = [a and g >= 0 for a, g in zip(active, codes, strict=True)]
        if group_by:
            for i, col in enumerate(group_by):
                content = _content(rows[col], key, typed=True)
                group_hash = [
                    _mix((h + c) % _WORD, i + 1) for h, c in zip(group_hash, content, strict=True)
                ]
        else:  # the codes are public positions: the rank mixes them in too
            group_hash = [g % _WORD for g in codes]
            rank = [
                _mix((r + _mix(g, words[2])) % _WORD, words[1])
                for r, g in zip(rank, group_hash, strict=True)
            ]
    by_unit: dict[int, list[int]] = {}
    for i in range(n):
        if active[i]:
            by_unit.setdefault(unit_hash[i], []).append(i)
    kept: set[int] = set()
    for members in by_unit.values():
        if max_groups_per_unit is not None:
            pair_hash: dict[int, int] = {}  # group code -> smallest keyed (unit, group) hash
            for i in members:
                h = _mix(unit_hash[i] ^ _mix(group_hash[i], words[3]), words[1])
                pair_hash[codes[i]] = min(h, pair_hash.get(codes[i], h))
            first = list(dict.fromkeys(codes[i] for i in members))  # the pairs' order
            chosen = sorted(first, key=lambda g: (pair_hash[g], first.index(g)))
            allowed = set(chosen[:max_groups_per_unit])
            members = [i for i in members if codes[i] in allowed]
        if max_rows_per_group is not None:
            in_group: dict[int, list[int]] = {}
            for i in members:
                in_group.setdefault(codes[i], []).append(i)
            members = sorted(
                i for g in in_group.values() for i in _keep_lowest(g, rank, max_rows_per_group)
            )
        kept |= _keep_lowest(members, rank, max_rows_per_unit)
    return np.array([i in kept for i in range(n)], dtype=bool).reshape(n)


def distinct_units(unit: pd.Series, codes: NDArray[np.intp], size: int) -> NDArray[np.int64]:
    """The number of distinct present units in each group.

    Two rows are one unit when their unit values have equal content hashes (with
    pandas' default key): numbers by value, strings by their text.

    Parameters
    ----------
    unit : pandas.Series
        The privacy unit of each row.
    codes : ndarray of intp
        Each row's group in ``0 .. size - 1``, or ``-1`` (not counted).
    size : int
        The number of groups.

    Returns
    -------
    ndarray of int64, shape (size,)

    Examples
    --------
    >>> distinct_units(pd.Series(["a", "a", "b", None, "b"]), np.array([0, 0, 0, 1, 1]), 3)
    array([2, 1, 0])
    """
    identity = _content(unit, "0123456789123456")
    seen: list[set[int]] = [set() for _ in range(size)]
    for ident, missing, g in zip(identity, unit.isna().tolist(), codes.tolist(), strict=True):
        if g >= 0 and not missing:
            seen[g].add(ident)
    return _int64([len(s) for s in seen])


# -- the engine -----------------------------------------------------------------------


@in_memory.own_kernels(globals())
class ReferenceEngine(in_memory.PandasEngine):
    """The reference engine (:class:`~pandas_dp.engines.protocol.Engine`): a plan
    measured with this module's kernels.

    It is the in-memory engine with every kernel, and the counting of private keys,
    replaced by this module's (:func:`~pandas_dp.engines.in_memory.own_kernels`);
    the plan's row rules it is handed -- which declared key a row belongs to, which
    rows a privacy unit keeps -- run as the plan wrote them (:func:`group_codes` and
    :func:`contribution_mask` check those rules' kernels on their own). It is
    registered for no type: a test registers it for the data it runs, and compares
    the release with the in-memory engine's; with the same ``random_state`` the two
    must be bit-identical.

    Examples
    --------
    >>> import pandas as pd
    >>> from types import SimpleNamespace as NS
    >>> from pandas_dp.engines import EngineInput
    >>> from pandas_dp.engines.protocol import Source
    >>> m = NS(key="x: centred_sum", statistic="centred_sum", source=Source("moments", "x"))
    >>> decl = NS(lower=0.0, upper=10.0)
    >>> data = EngineInput(columns={"x": pd.Series([1.0, 9.0, 12.0])}, declarations={"x": decl})
    >>> REFERENCE.exact_values([m], data)
    {'x: centred_sum': array([Fraction(5, 1)], dtype=object)}
    """

    name = "reference"


#: The reference engine (stateless).
REFERENCE = ReferenceEngine()
