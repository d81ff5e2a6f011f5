"""Group-by keys: the public facts of ``df.dp.groupby(by, keys=...)`` (REFERENCE.md §10).

A grouped release lists every *declared* key, in sorted order (a categorical
column's in the declared order, as a :class:`~pandas.CategoricalIndex`: pandas
orders such groups by the dtype's categories, which here are the declared ones --
the column's own category list is read off the data), whether or not the data
hold it; rows whose key is not declared are dropped, or counted in an
``other`` group on request. Keys come from the caller or a schema, never from the
data:

* ``keys=`` -- a list (one column), an :class:`~pandas.Index` or
  :class:`~pandas.MultiIndex`, a DataFrame of key tuples, or a dict
  ``column -> list`` (the product of the per-column domains);
* a schema's ``isin`` check or declared :class:`~pandas.CategoricalDtype`, the two
  values of a boolean column -- per column, several columns giving the product;
* ``keys="private"``: the keys are chosen from the data by partition selection
  (``delta > 0``, add/remove only).

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"sex": ["f", "m", "f"], "smoker": [True, False, True]})
>>> g = resolve_grouping(df, ["sex", "smoker"], keys={"sex": ["m", "f"]}, schema=None)
>>> list(g.keys)
[('f', False), ('f', True), ('m', False), ('m', True)]
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from fractions import Fraction
from numbers import Number
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.request.category_declarations import check_declared_values
from pandas_dp.request.declarations import attached_schema, resolve_categories
from pandas_dp.request.grouping_options import (
    is_missing_key,
    last_missing,
    missing_key,
    missing_last,
    one_missing,
    refuse_missing,
)
from pandas_dp.result.labels import labels_index, safe_multiindex

__all__ = [
    "PRIVATE",
    "Grouping",
    "canonical_key",
    "labels_index",
    "resolve_grouping",
    "safe_multiindex",
]

#: ``keys="private"``: keys chosen from the data by partition selection.
PRIVATE = "private"


@dataclass(frozen=True)
class Grouping:
    """The public facts of a group-by.

    Attributes
    ----------
    by : tuple of labels
        The grouping columns.
    keys : pandas.Index or None
        The declared keys in output order (sorted; a MultiIndex for several
        columns); ``None`` for private keys, chosen by partition selection.
    levels : tuple of tuples
        Per grouping column, its declared values (the product of the levels holds
        every key).
    positions : ndarray or None
        For each point of the product of ``levels`` (mixed radix, first column
        slowest), the position of that key in ``keys``, or ``-1`` when the key is
        not declared. ``None`` when ``keys`` is the product itself in that order.
    other : label or None
        The label of a group for rows with an undeclared key; ``None`` drops them.
    delta : float
        Private keys: the delta partition selection spends (a key held by one
        unit is released with probability at most ``delta``).
    missing : bool
        Whether a level may hold a missing key (``dropna=False``): rows with a
        missing key then fall in its group.
    """

    by: tuple[Hashable, ...]
    keys: pd.Index | None
    levels: tuple[tuple[Any, ...], ...] = ()
    positions: NDArray[np.intp] | None = None
    other: Hashable | None = None
    delta: float = 0.0
    missing: bool = False

    @property
    def private(self) -> bool:
        """Whether the keys are chosen from the data (partition selection)."""
        return self.keys is None

    @property
    def size(self) -> int:
        """Number of released groups (1 per entry for private keys, before selection)."""
        if self.keys is None:
            return 1
        return len(self.keys) + (self.other is not None)

    @property
    def labels(self) -> pd.Index:
        """The result's index: the declared keys, then ``other`` if asked for."""
        assert self.keys is not None
        if self.other is None:
            return self.keys
        if len(self.by) == 1:
            return self.keys.append(pd.Index([self.other], name=self.by[0], tupleize_cols=False))
        return self.keys.append(_tuples([tuple(self.other for _ in self.by)], self.by))


def canonical_key(key: Any) -> Any:
    """One label for every key that compares equal to ``key``, whatever its type.

    pandas groups ``1``, ``1.0``, ``True`` and ``numpy.int64(1)`` together and labels
    the group with whichever came first in the rows. A private key released with
    that label would tell which row came first: one added person could flip it.
    The label is therefore a function of the group alone: a number becomes the
    ``int`` it equals, else the ``float``, else the exact ``Fraction``; tuples and
    frozensets are mapped element by element; ``numpy.str_`` is the ``str``, a
    datetime-like the ``pd.Timestamp`` (a timedelta-like the ``pd.Timedelta``);
    anything else is kept.

    Examples
    --------
    >>> [canonical_key(k) for k in (True, 1.0, np.int64(1), 0.5, ("a", 2.0), "1")]
    [1, 1, 1, 0.5, ('a', 2), '1']
    """
    if isinstance(key, tuple):
        return tuple(canonical_key(k) for k in key)
    if isinstance(key, frozenset):
        return frozenset(canonical_key(k) for k in key)
    if isinstance(key, np.str_ | np.bytes_):  # equal to the str / bytes, so labelled so
        return key.item()
    if isinstance(key, datetime | np.datetime64):  # one group with the Timestamp
        return _timestamp(key)
    if isinstance(key, timedelta | np.timedelta64):
        return _timestamp(key, pd.Timedelta)
    if isinstance(key, str | bytes) or not isinstance(key, Number):
        return key
    try:
        value: Any = key.item() if isinstance(key, np.generic) else key
        if isinstance(value, complex):
            if value.imag != 0:
                return value
            value = value.real
        if value == int(value):
            return int(value)
        as_float = float(value)
        return as_float if as_float == value else Fraction(value)
    except Exception:  # NaN, inf, exotic (or hostile: a private key never raises here)
        return key


def _timestamp(key: Any, kind: Any = pd.Timestamp) -> Any:
    """``pd.Timestamp(key)`` (or ``pd.Timedelta``); the key itself where pandas
    cannot convert it (``NaT`` stays as it is, a missing key is never released)."""
    try:
        return kind(key)
    except Exception:  # (a subclass whose conversion raises anything: kept as it is)
        return key


def _tuples(values: Sequence[tuple[Any, ...]], names: Sequence[Hashable] | None = None) -> pd.Index:
    return pd.MultiIndex.from_tuples(list(values), names=None if names is None else list(names))


def _sorted(values: Sequence[Any], key: Any = None, *, sort: bool = True) -> list[Any]:
    """Sorted like pandas sorts group keys; declaration order where values do not
    compare or with ``sort=False``. A missing key comes last when sorted, as in pandas."""
    if not sort:
        return list(values)
    try:
        return sorted(values, key=key)
    except TypeError:
        return list(values)


def _check_by(frame: pd.DataFrame, by: Any) -> tuple[Hashable, ...]:
    labels = [by] if isinstance(by, str) or not isinstance(by, Sequence | pd.Index) else list(by)
    if not labels:
        raise ValueError("by is empty; name at least one column to group by")
    absent = [c for c in labels if c not in frame.columns]
    if absent:
        raise KeyError(
            f"group-by column(s) {absent} not in the frame; it has {list(frame.columns)}"
        )
    if len(set(labels)) != len(labels):
        raise ValueError(f"by={labels} names a column twice")
    return tuple(labels)


def _level_values(
    column: Hashable,
    values: Any,
    dtype: Any,
    *,
    sort: bool = True,
    missing: Any = None,
) -> tuple[Any, ...]:
    """One column's declared keys, sorted (a categorical column's in declaration
    order; every column's with ``sort=False``); refused when empty, repeated, or of a
    type no value of the column's (public) ``dtype`` can equal. ``missing``: the
    missing key (``dropna=False``), kept where declared or added last; ``None``: a
    declared missing key is refused."""
    listed = list(values)
    if not listed:
        raise ValueError(f"the declared keys of {column!r} are empty; declare at least one")
    if missing is not None:
        had = any(is_missing_key(v) for v in listed)
        listed = [missing if is_missing_key(v) else v for v in listed]
        if not had:
            listed.append(missing)
    else:
        for v in listed:
            if is_missing_key(v):
                refuse_missing(column, v)
    present = [v for v in listed if not is_missing_key(v)]
    if present:  # (first: hashable, then the set)
        check_declared_values(column, present, dtype, "keys=")
    if len(set(listed)) != len(listed):
        raise ValueError(f"the declared keys of {column!r} repeat a value: {listed}")
    if _categorical(dtype) or not sort:
        return tuple(missing_last(listed) if sort and missing is not None else listed)
    return tuple(_sorted(listed, key=None if missing is None else last_missing))


def _categorical(dtype: Any) -> bool:
    return isinstance(dtype, pd.CategoricalDtype)


def _typed(values: Sequence[Any], level: tuple[Any, ...], dtype: Any) -> Any:
    """A column's keys as pandas labels its group-by: a categorical column's as a
    :class:`~pandas.Categorical` of the declared categories ``level`` (with the dtype's
    order flag); another extension dtype's (nullable, Arrow numbers) as an array of
    that dtype where it holds every key exactly; else a list, which pandas types
    itself (text too: Dask holds a text column as ``string[pyarrow]``, pandas as
    ``str``, and their releases must be equal).
    A function of the declared keys and the column's dtype (both public)."""
    if _categorical(dtype):
        categories = [v for v in level if not is_missing_key(v)]
        return pd.Categorical(list(values), categories=categories, ordered=bool(dtype.ordered))
    listed = list(values)
    if (
        not isinstance(dtype, pd.api.extensions.ExtensionDtype)
        or isinstance(dtype, pd.StringDtype)  # text as pandas infers it: Dask's alike
        or not listed
    ):
        return listed
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            typed = pd.array(listed, dtype=dtype)  # type: ignore[call-overload]
            same = all(_same_key(a, b) for a, b in zip(typed, listed, strict=True))
    except Exception:  # (a key the dtype cannot hold: labels as declared)
        return listed
    return typed if same else listed


def _same_key(held: Any, declared: Any) -> bool:
    """Whether an array's element is the declared key (missing for missing)."""
    if pd.isna(held) or pd.isna(declared):
        return bool(pd.isna(held) and pd.isna(declared))
    return bool(held == declared)


def _dtype_keys(frame: pd.DataFrame, given: dict[Hashable, Any]) -> dict[Hashable, Any]:
    """A dict of keys with ``"dtype"`` entries replaced by the column's declared
    categorical dtype's categories; any other string refused (it is not a list of
    keys: it would be read as its characters)."""
    for c, v in given.items():
        if isinstance(v, str | bytes) and v != "dtype":
            raise TypeError(
                f"the keys of {c!r} must be a list of values (or 'dtype' for the "
                f"categories of its declared CategoricalDtype); got the string {v!r}. "
                f"Write [{v!r}] for one key"
            )
    named = [c for c, v in given.items() if isinstance(v, str)]
    if named:
        decls = resolve_categories(
            {c: frame[c] for c in named},
            categories=dict.fromkeys(named, "dtype"),
            schema=None,
            attached=None,
            what="keys",
        )
        given.update({c: d.categories for c, d in decls.items()})
    return given


def _dtype(frame: pd.DataFrame, column: Hashable) -> Any:
    """The dtype of a column (public), ``None`` if it has none to read."""
    return getattr(frame[column], "dtype", None)


def _explicit(by: tuple[Hashable, ...], keys: Any) -> tuple[tuple[Any, ...], ...] | None:
    """Key tuples given as an Index, a MultiIndex, a DataFrame or a list (or None)."""
    if isinstance(keys, pd.DataFrame):
        missing = [c for c in by if c not in keys.columns]
        if missing:
            raise ValueError(
                f"the keys DataFrame has no column(s) {missing}; give one column per "
                f"group-by column {list(by)}"
            )
        return tuple(tuple(row) for row in keys[list(by)].itertuples(index=False, name=None))
    if isinstance(keys, Mapping):
        return None
    if isinstance(keys, str) or not isinstance(keys, Sequence | pd.Index | np.ndarray):
        raise TypeError(
            f"keys must be a list, an Index, a DataFrame of key tuples, a dict column -> "
            f"list or 'private'; got {type(keys).__name__}"
        )
    listed = list(keys)
    if len(by) == 1:
        return tuple((k,) for k in listed)
    bad = [k for k in listed if not (isinstance(k, tuple) and len(k) == len(by))]
    if bad:
        raise ValueError(
            f"with {len(by)} group-by columns every key is a tuple of {len(by)} values; "
            f"got {bad[:3]}"
        )
    return tuple(listed)


def resolve_grouping(
    frame: pd.DataFrame,
    by: Any,
    *,
    keys: Any,
    schema: Any,
    other: Hashable | None = None,
    delta: float = 0.0,
    sort: bool = True,
    dropna: bool = True,
) -> Grouping:
    """Turn ``by`` and the declared keys into a :class:`Grouping` (before any charge).

    Parameters
    ----------
    frame : pandas.DataFrame
        Only its column labels and dtypes are read.
    by : label or list of labels
        The grouping columns.
    keys : list, Index, DataFrame, dict, "private" or None
        The declared keys (see the module); ``None``: from ``schema`` (or the schema
        attached to the frame) and boolean dtypes.
    schema : pandera schema-like or None
    other : label, optional
        A group for rows whose key is not declared.
    delta : float, default 0.0
        Private keys only: the delta of partition selection, in ``(0, 1)``.
    sort : bool, default True
        Keys sorted (a categorical column's in its declared categories' order), as
        pandas sorts them; ``False``: in declared order (pandas' order of first
        appearance is private).
    dropna : bool, default True
        ``False``: a missing key (``NaN``; ``NaT`` for a datetime-like column) is a
        key of every grouping column, released like any declared key (last when
        sorted); with key tuples of several columns, the tuples declared (which may
        hold one). ``True``: a declared missing key is refused.

    Raises
    ------
    KeyError
        A ``by`` column is not in the frame.
    MissingBoundsError
        No keys are declared for a grouping column.
    ValueError
        Empty or repeated keys, malformed tuples, ``other`` equal to a declared key.
    """
    labels = _check_by(frame, by)
    if isinstance(keys, str) and keys == PRIVATE:
        if other is not None:
            raise ValueError("other= needs declared keys; private keys have no 'other' group")
        if len(labels) != 1:
            raise ValueError(
                "private keys are selected for one group-by column; declare the keys of "
                "the others, or group by one column"
            )
        if isinstance(delta, bool) or not isinstance(delta, int | float) or not 0 < delta < 1:
            raise ValueError(
                f"keys='private' selects keys from the data, which needs 0 < delta < 1 "
                f"(e.g. groupby(..., keys='private', delta=1e-6)); got delta={delta!r}. "
                f"Or declare the keys (keys=[...] or a schema's isin)"
            )
        return Grouping(labels, None, delta=float(delta))
    if delta:
        raise ValueError(
            f"delta={delta!r} is for partition selection (keys='private'); declared keys "
            f"need no delta"
        )
    explicit = None if keys is None else _explicit(labels, keys)
    dtypes = [_dtype(frame, c) for c in labels]
    nan = [None if dropna else missing_key(d) for d in dtypes]
    if explicit is not None:
        if not explicit:
            raise ValueError("keys is empty; declare at least one key")
        explicit = one_missing(explicit, labels, nan)
        if len(labels) == 1 and nan[0] is not None and (nan[0],) not in explicit:
            explicit = (*explicit, (nan[0],))  # dropna=False: the missing key too
        for i, c in enumerate(labels):  # (hashable, not missing, of the dtype: before the set)
            present = [t[i] for t in explicit if not is_missing_key(t[i])]
            if present:
                check_declared_values(c, present, dtypes[i], "keys=")
        if len(set(explicit)) != len(explicit):
            raise ValueError("keys repeat a key; declare each key once")
        levels = tuple(
            # (checked against the dtype above; None here skips a second check)
            tuple(missing_last(list(dict.fromkeys(t[i] for t in explicit))))
            if _categorical(dtypes[i])
            else _level_values(c, dict.fromkeys(t[i] for t in explicit), None, missing=nan[i])
            for i, c in enumerate(labels)
        )
        rank = [{v: r for r, v in enumerate(level)} for level in levels]
        ordered = _sorted(
            list(explicit),
            key=lambda k: tuple(
                rank[i][v] if _categorical(dtypes[i]) else (v if dropna else last_missing(v))
                for i, v in enumerate(k)
            ),
            sort=sort,
        )
    else:
        per_column = dict(keys) if isinstance(keys, Mapping) else None
        unknown = sorted(str(k) for k in (per_column or {}) if k not in labels)
        if unknown:
            raise ValueError(
                f"keys names column(s) {unknown} that are not group-by columns {list(labels)}"
            )
        given = _dtype_keys(frame, dict(per_column or {}))
        rest = [c for c in labels if c not in given]
        found = {}
        if rest:
            attached = attached_schema(frame) if schema is None else None
            decls = resolve_categories(
                {c: frame[c] for c in rest},
                categories=None,
                schema=schema,
                attached=attached,
                what="keys",
            )
            found = {c: d.categories for c, d in decls.items()}
        levels = tuple(
            _level_values(
                c, given[c] if c in given else found[c], dtypes[i], sort=sort, missing=nan[i]
            )
            for i, c in enumerate(labels)
        )
        ordered = None
    radix = [len(v) for v in levels]
    if ordered is None:
        typed = [_typed(v, v, d) for v, d in zip(levels, dtypes, strict=True)]
        keys_index = (
            pd.Index(typed[0], name=labels[0], tupleize_cols=False)
            if len(labels) == 1
            else pd.MultiIndex.from_product(typed, names=list(labels))
        )
        positions = None
    else:
        columns = [
            _typed([t[i] for t in ordered], levels[i], dtypes[i]) for i in range(len(labels))
        ]
        keys_index = (
            pd.Index(columns[0], name=labels[0], tupleize_cols=False)
            if len(labels) == 1
            else pd.MultiIndex.from_arrays(columns, names=list(labels))
        )
        positions = np.full(int(np.prod(radix)), -1, dtype=np.intp)
        where = [{v: i for i, v in enumerate(level)} for level in levels]
        for pos, key in enumerate(ordered):
            code = 0
            for i, value in enumerate(key):
                code = code * radix[i] + where[i][value]
            positions[code] = pos
        if np.array_equal(positions, np.arange(len(positions))):
            positions = None  # the keys are the whole product, in its order
    grouping = Grouping(labels, keys_index, levels, positions, other, missing=not dropna)
    if other is not None and other in set(keys_index.tolist()):
        raise ValueError(f"other={other!r} is also a declared key; pick a label that is not")
    return grouping
