"""Privacy units: keep a bounded number of each unit's rows, chosen by a keyed hash.

An engine module: it reads the data and draws no noise. With a privacy unit (a
column such as ``"patient_id"``), a release keeps at most ``k`` rows of each unit
(``max_rows_per_unit``) and, in a group-by, at most ``g`` groups of each unit
(``max_groups_per_unit``) with at most ``c`` rows of the unit in each group
(``max_rows_per_group``); the sensitivities of :mod:`pandas_dp.plan.sensitivity` are
multiplied accordingly (REFERENCE.md §9, §10).

How rows are chosen
-------------------
Every row gets a 64-bit *rank hash*, a keyed hash of its unit value, of its
values in the columns the release reads (``rows``) and of its group; a unit keeps
its rows of smallest rank hash. Groups of a unit are ranked the same way, by a
keyed hash of (unit value, group code). So

* the choice is a function of each unit's own rows only (and of the key and of
  the columns' dtypes, which are public): adding or removing a unit, or a row with
  a missing value anywhere, never changes which rows another unit keeps (what the
  sensitivity analysis needs);
* the kept *multiset of row contents* does not depend on row order, on the index,
  or on chunking or partitioning (rows of one unit with equal contents are
  interchangeable, and only which of them is kept can depend on their order);
* the choice is unpredictable without the key (drawn from the CSPRNG by
  :func:`hash_key`), and reproducible with a seeded source.

How values are hashed
---------------------
Each value hashes in a canonical form fixed by its column's dtype alone, never by
the other rows:

* a boolean (``bool``, ``boolean``, ``bool[pyarrow]``) as the integer ``0`` or ``1``;
* an integer of any integer dtype (numpy, ``Int64``, ``UInt8``, ``int64[pyarrow]``...)
  as its exact value: the 64 bits of an ``int64`` (signed dtypes) or of a
  ``uint64`` (unsigned dtypes);
* a float of any float dtype as the bits of its exact ``float64`` value, with
  ``0.0 == -0.0`` and one ``NaN`` (a ``NaN`` that is not missing: an Arrow float
  column can hold ``NaN`` beside its nulls);
* any other value (strings, objects, categoricals, dates and times...) as
  :func:`pandas.util.hash_pandas_object` hashes it (SipHash-2-4 keyed with the
  16-character key for strings and objects) in a column of the present values
  only, and in an object column of non-strings value by value, by ``str``;
* a missing value (``NaN``, ``None``, ``pd.NA``, ``NaT``) as one fixed value, in
  every dtype, so a Dask partition holding a ``str`` column as ``string[pyarrow]``
  keeps the same rows as pandas.

The 64 bits of a boolean, an integer or a float go through pandas' unkeyed
finaliser of numbers (so numpy's ``int64``, ``uint64``, ``float64`` and ``bool``
hash as pandas hashes them). Equal numbers of one kind hash alike across dtypes
(``-1`` in ``int8`` and in ``int64[pyarrow]``, ``1.5`` in ``float32`` and in
``Float64``); an integer and a float of equal value need not (``1`` and ``1.0``
hash apart; a column has one dtype). pandas' own hash cannot be used for numbers
as is: it converts an Arrow integer or boolean column holding a null anywhere
through ``float64`` or ``object``, so there ``2**53`` and ``2**53 + 1`` would hash
alike, and every value differently, as soon as one other row is missing. Every
column's hashes are then keyed here by a 64-bit mix (the splitmix64 finaliser, a
bijection).

Which rows are one unit
-----------------------
Two rows belong to one unit when their unit values hash equal: numbers compare
by value (exactly, whatever else the column holds), strings by content; an object
column mixing types is compared as pandas hashes it, by ``str()`` (``1`` and
``"1"`` are then one unit, so declare a unit column of one type). For numeric
units this is exact; for strings two different values share a 64-bit hash with
probability ``2**-64`` per pair.

**Rows with a missing unit** (``NaN``, ``None``, ``pd.NA``, ``NaT``) **are
dropped**: a person without an identifier cannot be protected as a person, and
dropping them is safe whoever they are (adding or removing such a row changes no
kept row).

Examples
--------
>>> import pandas as pd
>>> from pandas_dp.noise.mechanisms import RandomSource
>>> key = hash_key(RandomSource(7))
>>> len(key)
16
>>> df = pd.DataFrame({"pid": [1, 1, 1, 2, None], "x": [1.0, 2.0, 3.0, 4.0, 5.0]})
>>> keep = contribution_mask(df[["x"]], df["pid"], key=key, max_rows_per_unit=2)
>>> int(keep.sum()), bool(keep[3]), bool(keep[4])
(3, True, False)
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from typing import Final

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.noise.mechanisms import RandomSource

__all__ = ["KEY_ALPHABET", "contribution_mask", "distinct_units", "hash_key", "unit_codes"]

U64 = NDArray[np.uint64]

#: 64 characters (6 bits each): a key of 16 of them holds 96 random bits, and is
#: 16 bytes in UTF-8, as pandas' SipHash needs.
KEY_ALPHABET: Final = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_KEY_LENGTH: Final = 16
_M1: Final = np.uint64(0xBF58476D1CE4E5B9)
_M2: Final = np.uint64(0x94D049BB133111EB)
_GOLDEN: Final = 0x9E3779B97F4A7C15
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
#: pandas' own default key, for unit identities that need no secret
_PANDAS_KEY: Final = "0123456789123456"
#: the content hash of a missing value, of any dtype (before the keyed mixes); a
#: present value hashing so (one integer, or odds 2**-64) only ties with a missing
#: value of its own unit and row contents otherwise equal
_MISSING_CONTENT: Final = np.uint64(0x6D697373696E6700)
#: the canonical bits of every float NaN (numpy's ``nan``, as pandas canonicalises)
_NAN_BITS: Final = np.float64(np.nan).view(np.uint64)


def hash_key(source: RandomSource) -> str:
    """Draw a 16-character key for the keyed hashes of this module.

    Parameters
    ----------
    source : RandomSource
        The operating system's CSPRNG (``RandomSource()``), or a seeded source,
        which makes the choice of rows reproducible.

    Returns
    -------
    str
        16 characters of :data:`KEY_ALPHABET` (96 random bits); usable as
        ``hash_key=`` of :func:`pandas.util.hash_pandas_object`.

    Examples
    --------
    >>> hash_key(RandomSource(1)) == hash_key(RandomSource(1))
    True
    >>> hash_key(RandomSource()) == hash_key(RandomSource())
    False
    """
    words = source.bits(_KEY_LENGTH)
    return "".join(KEY_ALPHABET[int(w) >> 58] for w in words)


def _key_words(key: str, count: int) -> list[int]:
    """``count`` 64-bit words derived from ``key`` (BLAKE2b): the keys of the mixes.

    BLAKE2b gives at most 8 words per digest; block ``b > 0`` of 8 more words is
    personalised with ``b`` (the first block, all that 4 columns need, is unchanged).
    """
    words: list[int] = []
    block = 0
    while len(words) < count:
        take = min(8, count - len(words))
        person = b"pandas-dp-unit" + (block.to_bytes(2, "little") if block else b"")
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=8 * take, person=person).digest()
        words += [int.from_bytes(digest[8 * i : 8 * i + 8], "little") for i in range(take)]
        block += 1
    return words


def _mix(v: U64, word: int) -> U64:
    """Keyed splitmix64 finaliser, in place: ``v -> mix(v xor word)``, a bijection."""
    v ^= np.uint64(word)
    v ^= v >> _S30
    v *= _M1
    v ^= v >> _S27
    v *= _M2
    v ^= v >> _S31
    return v


def _check_key(key: str) -> str:
    if not isinstance(key, str) or len(key.encode("utf-8")) != _KEY_LENGTH:
        raise ValueError(
            f"key must be a string of 16 bytes in UTF-8 (use hash_key(source)); got {key!r}"
        )
    return key


def _pandas_hash(values: pd.Series, key: str, typed: bool = False) -> U64:
    """pandas' hash of a column, each value's hash a function of that value alone.

    Used for the dtypes without a canonical form here (strings, objects,
    categoricals, dates and times...), on their present values only
    (:func:`_content_hash`). pandas hashes an object column of strings (and bytes)
    value by value, but one holding anything else wholly by ``str`` -- so a value's
    hash would depend on the other rows (of the frame, or of a Dask partition). Such
    a column is hashed here value by value, by its text: so a value hashes as its
    ``str`` does, as after Dask's conversion of object columns to strings.
    ``typed=True`` prefixes every non-string value's text with its type, so that
    different keys with one text (``1`` and ``"1"``) hash apart. Never raises on a
    value.
    """
    try:
        mixed = values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) not in (
            "string",
            "empty",
        )
    except Exception:  # pragma: no cover - an exotic column: hash it by text
        mixed = True
    if mixed:  # strings as themselves (as pandas hashes them); others by their text
        as_text = _typed if typed else _text
        values = pd.Series([x if isinstance(x, str) else as_text(x) for x in values], dtype=object)
    try:
        out = pd.util.hash_pandas_object(values, index=False, hash_key=key, categorize=False)
        return np.array(out, dtype=np.uint64)
    except Exception:  # an extension type whose hashing fails: by text
        text = pd.Series([_text(x) for x in values], dtype=object)
        out = pd.util.hash_pandas_object(text, index=False, hash_key=key, categorize=False)
        return np.array(out, dtype=np.uint64)


def _typed(value: object) -> str:
    """A non-string value's text, prefixed by its type's name."""
    kind = type(value)
    return f"\x00{kind.__module__}.{kind.__qualname__}\x00{_text(value)}"


def _text(value: object) -> str:
    """``str(value)``, or a fixed text when ``str`` raises."""
    try:
        return str(value)
    except Exception:
        return "\x00pandas-dp: a value without text"


def _canonical_bits(values: pd.Series) -> U64 | None:
    """The canonical 64 bits of a boolean, integer or float column's values.

    The form is fixed by the dtype's kind alone, never by the other rows: a
    boolean as ``0`` or ``1``; an integer (numpy, ``Int*``/``UInt*``, Arrow...) as
    its exact value, the 64 bits of an ``int64`` (signed dtypes) or ``uint64``
    (unsigned dtypes); a float as the bits of its exact ``float64`` value, ``-0.0``
    as ``0.0`` and every ``NaN`` as one. (pandas hashes an Arrow integer or boolean
    column holding a null as float64 or object -- ``2**53 + 1`` as ``2**53`` -- so
    there a value's hash would depend on whether any other row is null.)

    Parameters
    ----------
    values : Series
        A column of any dtype.

    Returns
    -------
    numpy.ndarray of uint64, or None
        One entry per row; the entries of missing values are arbitrary (the caller
        replaces them). ``None`` for another kind of dtype, or when the column cannot
        be read so (an exotic extension type). The array may share memory with
        ``values``: never modify it in place.
    """
    dtype = values.dtype
    kind = getattr(dtype, "kind", "O")
    if kind not in ("b", "i", "u", "f") or isinstance(dtype, pd.CategoricalDtype):
        return None
    native = isinstance(dtype, np.dtype)  # numpy: no missing value but a float NaN
    try:
        if kind == "f":
            floats = values.to_numpy() if native else values.to_numpy(np.float64, na_value=np.nan)
            canonical = np.asarray(floats, dtype=np.float64) + 0.0  # a new array; -0.0 + 0.0 is 0.0
            bits: U64 = canonical.view(np.uint64)
            nan = np.isnan(canonical)
            if nan.any():
                bits[nan] = _NAN_BITS
            return bits
        if kind == "b":
            flags = values.to_numpy() if native else values.to_numpy(np.bool_, na_value=False)
            return np.asarray(flags, dtype=np.bool_).astype(np.uint64)
        target = np.int64 if kind == "i" else np.uint64
        ints = values.to_numpy() if native else values.to_numpy(target, na_value=0)
        return np.asarray(ints).astype(target, copy=False).view(np.uint64)
    except Exception:  # an extension type that cannot be read so: hash it as pandas does
        return None


def _finalise(bits: U64) -> U64:
    """pandas' unkeyed 64-bit finaliser of numbers (splitmix64's), into a new array."""
    v = bits ^ (bits >> _S30)
    v *= _M1
    v ^= v >> _S27
    v *= _M2
    v ^= v >> _S31
    return v


def _content_hash(values: pd.Series, key: str, typed: bool = False) -> U64:
    """Each value's hash, a function of the value and the column's dtype alone.

    A present value of a boolean, integer or float dtype hashes as its canonical
    bits (:func:`_canonical_bits`), finalised as pandas does; any other present
    value as pandas hashes it in a column of the present values only
    (:func:`_pandas_hash`), so never in a representation chosen because some other
    row is missing. Every missing value (``NaN``, ``None``, ``pd.NA``, ``NaT``)
    hashes as :data:`_MISSING_CONTENT`, whatever its dtype (a Dask frame holds
    pandas' ``str`` columns as ``string[pyarrow]``, ``NA`` for ``NaN``).

    Parameters
    ----------
    values : Series
        A column of any dtype.
    key : str
        The 16-character key of pandas' SipHash (strings and objects).
    typed : bool, default False
        Hash the non-string values of an object column with their type (group keys).

    Returns
    -------
    numpy.ndarray of uint64
        One hash per row, a new array.
    """
    missing = _missing(values)
    any_missing = bool(missing.any())
    bits = _canonical_bits(values)
    if bits is not None:
        out = _finalise(bits)
    elif not any_missing:
        out = _pandas_hash(values, key, typed)
    else:
        out = np.empty(len(values), dtype=np.uint64)
        present = np.flatnonzero(~missing)
        out[present] = _pandas_hash(values.iloc[present], key, typed)
    if any_missing:
        out[missing] = _MISSING_CONTENT
    return out


def _column_hash(values: pd.Series, key: str, word: int) -> U64:
    return _mix(_content_hash(values, key), word)


def unit_codes(unit: pd.Series, key: str = _PANDAS_KEY) -> tuple[NDArray[np.intp], int]:
    """Number the units: ``codes[i]`` is row ``i``'s unit, ``-1`` for a missing unit.

    Codes are in order of first appearance (they depend on row order; use them for
    grouping only, never for ranking).

    Parameters
    ----------
    unit : Series
        The privacy-unit column.
    key : str, optional
        The hash key (the identity of units does not depend on it, up to 64-bit
        collisions of strings).

    Returns
    -------
    codes : numpy.ndarray of intp
    count : int
        The number of distinct present units.

    Examples
    --------
    >>> codes, count = unit_codes(pd.Series(["a", "b", None, "a"]))
    >>> codes.tolist(), count
    ([0, 1, -1, 0], 2)
    """
    codes, count = _unit_codes(unit, _content_hash(unit, key))
    return codes, count


def _missing(unit: pd.Series) -> NDArray[np.bool_]:
    try:
        return np.asarray(unit.isna(), dtype=bool)
    except Exception:  # an exotic extension array: treat nothing as missing
        return np.zeros(len(unit), dtype=bool)


def _unit_codes(unit: pd.Series, hashed: U64) -> tuple[NDArray[np.intp], int]:
    codes, uniques = pd.factorize(hashed)
    codes = np.asarray(codes, dtype=np.intp)
    missing = _missing(unit)
    if not missing.any():
        return codes, len(uniques)
    # renumber densely: missing values held codes of their own
    used = np.zeros(len(uniques), dtype=bool)
    used[codes[~missing]] = True
    remap = np.cumsum(used, dtype=np.intp) - 1
    dense = np.where(missing, -1, remap[codes]).astype(np.intp)
    return dense, int(used.sum())


def _keep_lowest(
    codes: NDArray[np.intp], size: int, h: U64, limit: int, active: NDArray[np.bool_]
) -> NDArray[np.bool_]:
    """Among ``active`` rows, keep at most ``limit`` per code: those of smallest ``h``.

    Rows of codes with at most ``limit`` active rows are kept without sorting. For
    the others, one 64-bit key per row holds the code in its top bits and the top
    bits of ``h`` below; the keys are sorted (values only, no argsort), each code's
    ``limit``-th smallest key is its threshold, and a row is kept when its key is
    below the threshold. Rows whose key equals the threshold (equal contents, or
    hashes that agree in their top bits) are ranked exactly by their full hash, then
    by position, which only matters between rows of equal contents.
    """
    keep = active.copy()
    rows = np.flatnonzero(active)
    if len(rows) == 0:
        return keep
    c = codes[rows]
    counts = np.bincount(c, minlength=size)
    over = counts[c] > limit
    if not over.any():
        return keep
    sub = rows[over]
    present = np.flatnonzero(counts > limit)
    dense = np.zeros(size, dtype=np.intp)
    dense[present] = np.arange(len(present))
    c = dense[c[over]]
    hs = h[sub]
    bits = max(int(len(present) - 1).bit_length(), 1)
    if bits > 48:  # pragma: no cover - more than 2**48 units over the limit
        order = np.lexsort((hs, c))
        rank = np.arange(len(order)) - np.searchsorted(c[order], c[order])
        keep[sub[order[rank >= limit]]] = False
        return keep
    k64 = (c.astype(np.uint64) << np.uint64(64 - bits)) | (hs >> np.uint64(bits))
    ordered = np.sort(k64)
    sizes = counts[present]
    starts = np.cumsum(sizes) - sizes
    threshold = ordered[starts + (limit - 1)][c]
    keep[sub[k64 > threshold]] = False
    at = np.flatnonzero(k64 == threshold)
    if len(at) > len(present):  # ties at some threshold: rank them exactly
        below = np.bincount(c[k64 < threshold], minlength=len(present))
        room = limit - below  # >= 1 for every code
        tc = c[at]
        order = np.lexsort((at, hs[at], tc))
        tc = tc[order]
        rank = np.arange(len(order)) - np.searchsorted(tc, tc)
        keep[sub[at[order[rank >= room[tc]]]]] = False
    return keep


def _positive(value: int | None, name: str, required: bool) -> int | None:
    if value is None:
        if required:
            raise ValueError(f"{name} is required")
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1; got {value!r}")
    return int(value)


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
    """Which rows to keep so that every unit's contribution is bounded.

    Parameters
    ----------
    rows : DataFrame
        The columns the release reads, one row per row of the data (the group-by
        columns included). Only their values are read (not the index); their
        contents are what makes two rows of one unit interchangeable.
    unit : Series
        The privacy-unit column, aligned with ``rows`` by position. Rows with a
        missing unit are dropped (never kept).
    key : str
        The 16-character key (:func:`hash_key`).
    max_rows_per_unit : int
        ``k``: at most this many rows of each unit are kept.
    groups : numpy.ndarray of intp, optional
        The group code of each row, ``-1`` for a row in no group (never kept).
        Without ``group_by`` the codes are hashed, so they must be a function of
        the group's key alone (its position among declared keys), not of row order.
    group_by : sequence of labels, optional
        The columns of ``rows`` holding the group keys. When given, groups are
        ranked by their values, never by their codes: needed when the codes
        depend on row order (private keys, numbered by first appearance), as one
        added unit could otherwise renumber the keys and change which rows every
        other unit keeps.
    max_groups_per_unit : int, optional
        ``g``: at most this many groups of each unit keep rows (needs ``groups``).
        A unit's groups are ranked by a keyed hash of the unit and the group (the
        smallest over the unit's rows in the group): a function of the unit's own
        rows alone.
    max_rows_per_group : int, optional
        ``c``: at most this many rows of each unit in each group (needs ``groups``).

    Returns
    -------
    numpy.ndarray of bool
        ``True`` for the kept rows, one entry per row.

    Raises
    ------
    ValueError
        For an argument that is not a whole number >= 1, a key that is not 16
        bytes, lengths that disagree, or a group bound without ``groups``. Never
        for a value of the data.

    Examples
    --------
    >>> df = pd.DataFrame({"pid": ["a"] * 4 + ["b"], "g": [0, 0, 1, 2, 0]})
    >>> codes = df["g"].to_numpy()
    >>> keep = contribution_mask(
    ...     df, df["pid"], key="0123456789abcdef", max_rows_per_unit=3,
    ...     groups=codes, max_groups_per_unit=2, max_rows_per_group=1)
    >>> int(keep[:4].sum()), bool(keep[4])
    (2, True)
    """
    _check_key(key)
    k = _positive(max_rows_per_unit, "max_rows_per_unit", True)
    g = _positive(max_groups_per_unit, "max_groups_per_unit", False)
    c = _positive(max_rows_per_group, "max_rows_per_group", False)
    n = len(unit)
    if len(rows) != n:
        raise ValueError(f"rows has {len(rows)} rows and unit {n}; they must be aligned")
    if groups is None:
        if g is not None or c is not None:
            raise ValueError("max_groups_per_unit and max_rows_per_group need groups=")
        grp = None
    else:
        grp = np.asarray(groups).astype(np.intp, copy=False).ravel()
        if len(grp) != n:
            raise ValueError(f"groups has {len(grp)} entries and unit {n}; they must be aligned")
    assert k is not None
    words = _key_words(key, 4 + rows.shape[1])

    hu = _column_hash(unit, key, words[0])
    codes, nunits = _unit_codes(unit, hu)
    active = codes >= 0
    # rank hash: the unit, then every column's values (a function of the row alone)
    h = hu.copy()
    for i in range(rows.shape[1]):
        h += _content_hash(rows.iloc[:, i], key)
        _mix(h, words[4 + i])
    if grp is not None:
        active &= grp >= 0
        gh = _group_hash(rows, group_by, grp, key)
        if not group_by:  # the codes are public positions: rank by them too
            h += _mix(gh.copy(), words[2])
            _mix(h, words[1])
        if g is not None or c is not None:
            pairs, npairs = _pair_codes(codes, grp, nunits, active)
        if g is not None:
            # each (unit, group) pair ranked by the smallest keyed hash of (unit,
            # group) over its rows: one unit's groups tie only on a 64-bit collision
            hp = _mix(hu ^ _mix(gh, words[3]), words[1])
            pair_hash = np.full(npairs, np.iinfo(np.uint64).max, dtype=np.uint64)
            pair_unit = np.zeros(npairs, dtype=np.intp)
            np.minimum.at(pair_hash, pairs[active], hp[active])
            pair_unit[pairs[active]] = codes[active]
            chosen = _keep_lowest(pair_unit, nunits, pair_hash, g, np.ones(npairs, dtype=bool))
            active &= chosen[pairs]
        if c is not None:
            active = _keep_lowest(pairs, npairs, h, c, active)
    return _keep_lowest(codes, nunits, h, k, active)


def _group_hash(
    rows: pd.DataFrame, group_by: Sequence[Hashable], grp: NDArray[np.intp], key: str
) -> U64:
    """Each row's group as a 64-bit value: its key's contents, or else its code.

    Contents are hashed with their types: two keys of one text (``1``, ``"1"``) are
    different groups, and a tie between two groups of one unit would be broken by
    row position.
    """
    if not group_by:
        return grp.astype(np.uint64)
    out = np.zeros(len(rows), dtype=np.uint64)
    for i, col in enumerate(group_by):
        out += _content_hash(rows[col], key, typed=True)
        _mix(out, i + 1)
    return out


def _pair_codes(
    codes: NDArray[np.intp], grp: NDArray[np.intp], nunits: int, active: NDArray[np.bool_]
) -> tuple[NDArray[np.intp], int]:
    """Number the (unit, group) pairs of the active rows (inactive rows get code 0)."""
    out = np.zeros(len(codes), dtype=np.intp)
    if not active.any():
        return out, 1
    width = int(grp[active].max()) + 1
    if nunits * width < 2**62:
        pair_key = codes[active].astype(np.int64) * width + grp[active]
        found = np.asarray(pd.factorize(pair_key)[0], dtype=np.intp)
    else:  # too many for one integer: number (unit, group) as a structured key
        both = np.stack([codes[active], grp[active]], axis=1)
        found = np.unique(both, axis=0, return_inverse=True)[1].astype(np.intp).ravel()
    out[active] = found
    return out, int(found.max()) + 1


def distinct_units(unit: pd.Series, codes: NDArray[np.intp], size: int) -> NDArray[np.int64]:
    """The number of distinct present units in each group.

    Apply it to the rows :func:`contribution_mask` kept, so that each unit counts in
    at most ``max_groups_per_unit`` groups (partition selection relies on that).

    Parameters
    ----------
    unit : Series
        The privacy-unit column; missing units are not counted.
    codes : numpy.ndarray of intp
        Each row's group code in ``range(size)``, or ``-1`` (not counted).
    size : int
        The number of groups.

    Returns
    -------
    numpy.ndarray of int64
        ``size`` counts.

    Examples
    --------
    >>> unit = pd.Series(["a", "a", "b", None, "b"])
    >>> distinct_units(unit, np.array([0, 0, 0, 1, 1]), 3).tolist()
    [2, 1, 0]
    """
    if isinstance(size, bool) or not isinstance(size, int | np.integer) or size < 0:
        raise ValueError(f"size must be a whole number >= 0; got {size!r}")
    grp = np.asarray(codes).astype(np.intp, copy=False).ravel()
    if len(grp) != len(unit):
        raise ValueError(f"codes has {len(grp)} entries and unit {len(unit)}")
    if grp.size and (grp.max() >= size or grp.min() < -1):
        raise ValueError(f"group codes must lie in [-1, {size}); got {grp.min()}..{grp.max()}")
    ucodes, _ = unit_codes(unit)
    valid = (ucodes >= 0) & (grp >= 0)
    pair_key = ucodes[valid].astype(np.int64) * max(int(size), 1) + grp[valid]
    distinct = pd.unique(pair_key)
    return np.bincount(np.asarray(distinct) % max(int(size), 1), minlength=int(size)).astype(
        np.int64
    )[: int(size)]
