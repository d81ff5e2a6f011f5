"""pandas' group-by options on ``df.dp.groupby(...)``: what each one means privately.

``as_index``, ``sort``, ``dropna``, ``observed`` and ``group_keys`` are checked here
from public facts only (the options, the keys' dtypes and whether keys are declared),
before any release, so that a refused option never costs budget:

* ``sort=False`` gives the keys in *declared* order (pandas' order of first
  appearance in the rows is private);
* ``dropna=False`` adds a missing key (``NaN``, ``NaT`` for a datetime column) to
  every grouping column's declared keys: its group is released whether or not a
  row holds a missing key, as every declared key is. A missing key may also be
  declared among the keys, and then only with ``dropna=False``;
* ``observed=True`` releases only the categories the data hold, which is private:
  with declared keys of a categorical column it is refused; with
  ``keys="private"`` (partition selection) it is what the selection does anyway;
* ``group_keys`` only matters for pandas' ``apply``: accepted, no effect;
* ``level=`` (grouping by the row index) is refused with the way to get it.

Rows are mapped onto a missing key through :data:`MISSING_KEY`, one object that
stands for "missing" in the key columns handed to the engine's key codes
(:func:`code_inputs`), since ``NaN`` equals nothing, not even itself.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import pandas as pd

__all__ = [
    "MISSING_KEY",
    "GroupByOptions",
    "check_options",
    "code_inputs",
    "is_missing_key",
    "last_missing",
    "missing_key",
    "missing_last",
    "one_missing",
    "refuse_missing",
]


class _MissingKey:
    """The key of rows whose key value is missing (one object, however copied)."""

    __slots__ = ()
    _instance: _MissingKey | None = None

    def __new__(cls) -> _MissingKey:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<missing key>"

    def __hash__(self) -> int:
        return hash("pandas_dp missing key")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _MissingKey)

    def __reduce__(self) -> tuple[Any, tuple[()]]:  # (a Dask worker gets the same one)
        return (_MissingKey, ())


#: Stands for a missing key value in the key columns the engine maps to codes.
MISSING_KEY = _MissingKey()


@dataclass(frozen=True)
class GroupByOptions:
    """pandas' group-by options, checked (see the module).

    Attributes
    ----------
    as_index : bool
        ``False``: the keys become columns of a frame with a default row index.
    sort : bool
        ``True``: keys sorted (a categorical column's in category order);
        ``False``: in declared order.
    dropna : bool
        ``False``: a missing key is a group of its own.
    observed : bool or None
        ``None`` or ``False``: every declared key; ``True``: private keys only.
    """

    as_index: bool = True
    sort: bool = True
    dropna: bool = True
    observed: bool | None = None


def is_missing_key(value: Any) -> bool:
    """Whether a declared key is a missing value (``None``, ``NaN``, ``pd.NA``, ``NaT``).

    Examples
    --------
    >>> [is_missing_key(v) for v in (None, float("nan"), pd.NA, pd.NaT, "a", (1, None))]
    [True, True, True, True, False, False]
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or isinstance(value, tuple):
        return False  # (the common keys, without pandas' slower test)
    if kind is float:
        return bool(value != value)
    try:
        return bool(pd.isna(value)) if np.ndim(value) == 0 else False
    except (TypeError, ValueError):  # (an object pandas cannot test: not missing)
        return False


def missing_key(dtype: Any) -> Any:
    """The label pandas gives a missing key of a column of ``dtype``: ``NaT`` for a
    datetime-like column, else ``NaN`` (one object each, so sets and dicts find it).

    Examples
    --------
    >>> missing_key(np.dtype("datetime64[ns]")) is pd.NaT, missing_key(np.dtype(object))
    (True, nan)
    """
    kind = getattr(dtype, "kind", None)
    return pd.NaT if kind in ("M", "m") else np.nan


def _flag(name: str, value: Any, *, none: bool = False) -> None:
    if isinstance(value, bool | np.bool_) or (none and value is None):
        return
    allowed = "True, False or None" if none else "True or False"
    raise TypeError(f"groupby's {name} must be {allowed}, like pandas'; got {value!r}")


def _key_dtype(frame: pd.DataFrame, by: Any) -> Any:
    """The dtype of a grouping column or Series (``None`` when there is none to read)."""
    if isinstance(by, pd.Series):
        return by.dtype
    try:
        return frame[by].dtype if by in frame.columns else None
    except TypeError:  # (an unhashable label: resolve_grouping refuses it later)
        return None


def check_options(
    frame: pd.DataFrame,
    by: Hashable | Sequence[Hashable],
    keys: Any,
    *,
    as_index: Any = True,
    sort: Any = True,
    dropna: Any = True,
    observed: Any = None,
    group_keys: Any = True,
    level: Any = None,
) -> GroupByOptions:
    """Check pandas' group-by options against public facts (before any charge).

    Parameters
    ----------
    frame : pandas.DataFrame
        Only its dtypes are read.
    by : label or list of labels
        The grouping columns (already labels).
    keys : Any
        The declared keys, ``"private"`` or ``None``.
    as_index, sort, dropna : bool
        pandas' options (see :class:`GroupByOptions`).
    observed : bool or None
        ``True`` is refused for a categorical grouping column with declared keys.
    group_keys : bool
        pandas' option for ``apply``; no effect here.
    level : None
        Grouping by the row index's levels: refused.

    Returns
    -------
    GroupByOptions

    Raises
    ------
    TypeError
        An option that is not a bool.
    ValueError
        ``level=``; ``observed=True`` with declared categorical keys;
        ``observed=False`` or ``dropna=False`` with private keys.

    Examples
    --------
    >>> df = pd.DataFrame({"k": pd.Categorical(["a", "b"])})
    >>> check_options(df, "k", ["a", "b"], sort=False).sort
    False
    >>> check_options(df, "k", ["a", "b"], observed=True)
    Traceback (most recent call last):
    ...
    ValueError: groupby(observed=True) releases only the categories the rows hold, ...
    """
    if level is not None:
        raise ValueError(
            f"groupby(level={level!r}) groups by the row index, whose values are read like "
            f"any column's; move the level into a column and declare its keys: "
            f"df.reset_index().dp.groupby(<level name>, keys=[...])"
        )
    for name, value in (("as_index", as_index), ("sort", sort), ("dropna", dropna)):
        _flag(name, value)
    _flag("group_keys", group_keys)
    _flag("observed", observed, none=True)
    private = isinstance(keys, str) and keys == "private"
    labels = list(by) if isinstance(by, list) else [by]
    if private and not dropna:
        raise ValueError(
            "groupby(dropna=False) with keys='private' is not supported: partition "
            "selection skips missing keys. Declare the keys (a missing key is then a "
            "group of its own with dropna=False), or fill the missing keys first, e.g. "
            "df[by] = df[by].fillna('missing')"
        )
    if private and observed is False:
        raise ValueError(
            "groupby(observed=False) releases every category of a categorical key, but "
            "keys='private' releases only keys the data hold (partition selection). "
            "Declare the keys instead (keys={column: 'dtype'} for a categorical column's "
            "own categories), or leave observed=False out"
        )
    if observed and not private:
        categorical = [
            c.name if isinstance(c, pd.Series) else c
            for c in labels
            if isinstance(_key_dtype(frame, c), pd.CategoricalDtype)
        ]
        if categorical:
            raise ValueError(
                f"groupby(observed=True) releases only the categories the rows hold, "
                f"which is private: which categories of {categorical} occur is not "
                f"known without reading the data. With declared keys every declared "
                f"category is released (pandas' observed=False): pass observed=False or "
                f"leave it out. To release only categories the data hold, opt in to "
                f"private keys: groupby(..., keys='private', delta=1e-6, observed=True)"
            )
    return GroupByOptions(bool(as_index), bool(sort), bool(dropna), observed)


def code_inputs(
    frame: pd.DataFrame,
    by: Sequence[Hashable],
    levels: Sequence[Sequence[Any]],
    missing: bool = False,
) -> tuple[list[pd.Series], list[Sequence[Any]]]:
    """The key columns and declared levels the engine maps onto codes.

    With ``missing`` (some level holds a missing key: ``dropna=False``), a level that
    holds one has it replaced by :data:`MISSING_KEY`, and its column (as objects) has
    every missing value replaced by it too, so a row with a missing key falls in that
    key's group. Other columns and levels are as they are (their fast paths kept).
    Run where the rows are (a Dask partition included).
    """
    if not missing:
        return [frame[c] for c in by], list(levels)
    columns: list[pd.Series] = []
    out: list[Sequence[Any]] = []
    for c, level in zip(by, levels, strict=True):
        column = frame[c]
        if any(is_missing_key(v) for v in level):
            absent = column.isna().to_numpy(dtype=bool)
            column = column.astype(object)
            column[absent] = MISSING_KEY
            level = [MISSING_KEY if is_missing_key(v) else v for v in level]
        columns.append(column)
        out.append(level)
    return columns, out


def last_missing(value: Any) -> tuple[int, Any]:
    """A sort key putting a missing key after every other value."""
    return (1, 0) if is_missing_key(value) else (0, value)


def missing_last(values: Sequence[Any]) -> list[Any]:
    """``values`` with any missing key moved to the end (declared order otherwise)."""
    return [v for v in values if not is_missing_key(v)] + [v for v in values if is_missing_key(v)]


def refuse_missing(column: Hashable, value: Any) -> NoReturn:
    """Refuse a declared missing key under ``dropna=True`` (its group would be
    empty: such rows are dropped), saying how to release it."""
    raise ValueError(
        f"the keys of column {column!r} declare a missing value ({value!r}), but with "
        f"dropna=True, the default, rows with a missing key are skipped, as pandas does: "
        f"its group would be noise only. Pass dropna=False (to groupby or value_counts) "
        f"to release the missing keys' group, or remove it from the keys (or fill the "
        f"missing keys first, e.g. df[{column!r}] = df[{column!r}].fillna('missing'), "
        f"and declare 'missing')"
    )


def one_missing(
    explicit: tuple[tuple[Any, ...], ...], by: tuple[Hashable, ...], nan: list[Any]
) -> tuple[tuple[Any, ...], ...]:
    """Key tuples with each missing value replaced by the column's one missing key
    (``dropna=False``), so that repeats are found; refused with ``dropna=True``."""
    out = []
    for key in explicit:
        if any(is_missing_key(v) for v in key):
            for i, v in enumerate(key):
                if is_missing_key(v) and nan[i] is None:
                    refuse_missing(by[i], v)
            key = tuple(nan[i] if is_missing_key(v) else v for i, v in enumerate(key))
        out.append(key)
    return tuple(out)
