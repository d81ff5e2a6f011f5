"""What one column declares: its categories (the keys of a group-by too).

A :class:`CategoricalDeclaration` holds the public category list of one column.
It comes from ``categories=``, a schema's ``isin`` check, a
:class:`pandas.CategoricalDtype` *declared in the schema*, or the two values of a
boolean column. A data column's own categorical dtype is not a declaration
(``astype("category")`` reads the data); it is used only when asked for with
``categories="dtype"`` (:data:`DTYPE`).

The entry points, which resolve every column of a request and name all the
undeclared ones at once, are in :mod:`pandas_dp.request.declarations`.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pandas_dp.request.declared_columns import as_column, bool_dtype, isin_values, pandera_module

if TYPE_CHECKING:
    import pandera.pandas as pa

__all__ = ["DTYPE", "CategoricalDeclaration", "check_declared_values"]

#: ``categories=DTYPE`` publishes the categories of the column's own
#: :class:`pandas.CategoricalDtype`; valid only if that dtype was set from public facts.
DTYPE = "dtype"
_BOOLEAN_DOMAIN: tuple[bool, bool] = (False, True)


@dataclass(frozen=True)
class CategoricalDeclaration:
    """The public category list of one column.

    Attributes
    ----------
    column : hashable
        The column label.
    categories : tuple
        Declared categories, in declaration order, without duplicates.
    nullable : bool
        Whether a missing value is a legal value of the column.
    source : str
        ``"categories"``, ``"schema"``, ``"attached schema"`` or ``"dtype"`` (a
        boolean column, or ``categories="dtype"``).
    schema_column : pandera Column or None
        The schema's own column when the declaration came from a schema.
    """

    column: Hashable
    categories: tuple[Any, ...]
    nullable: bool = True
    source: str = "categories"
    schema_column: Any = field(default=None, repr=False, compare=False)

    @cached_property
    def pandera_column(self) -> pa.Column:
        """The declaration as a pandera column (the user's own when from a schema)."""
        return as_column(self, pandera_module().Check.isin(list(self.categories)))


def _category_list(column: Hashable, values: Any) -> tuple[Any, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(
            f"categories for column {column!r} must be a list of values (or "
            f"categories={DTYPE!r} for the column's own CategoricalDtype); got {values!r}"
        )
    items = tuple(values)
    if not items:
        raise ValueError(f"categories for column {column!r} is empty; declare at least one")
    check_declared_values(column, items, None, "categories=")  # (hashable, not missing)
    if len(set(items)) != len(items):
        raise ValueError(f"categories for column {column!r} repeat a value: {list(items)}")
    return items


def _is_missing(value: Any) -> bool:
    """Whether a declared value is a missing value (None, NaN, ``pd.NA``, ``NaT``)."""
    if value is None or value is pd.NA:
        return True
    if not pd.api.types.is_scalar(value):  # a tuple key: compared element-wise
        return False
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _value_kind(dtype: Any) -> str | None:
    """What every value of a column of this (public) dtype is: ``"number"``,
    ``"bool"`` or ``"string"``; ``None`` when it may be anything (``object``) or for
    dtypes not sorted here (dates, intervals, ...). A categorical column: its
    categories' dtype."""
    if isinstance(dtype, pd.CategoricalDtype):
        categories = dtype.categories
        return None if categories is None else _value_kind(categories.dtype)
    if isinstance(dtype, np.dtype):
        if dtype.kind == "b":
            return "bool"
        return "number" if dtype.kind in "iufc" else None
    if isinstance(dtype, pd.StringDtype):
        return "string"
    if isinstance(dtype, pd.ArrowDtype):
        import pyarrow as pa  # type: ignore[import-untyped]

        kind = dtype.pyarrow_dtype
        if pa.types.is_boolean(kind):
            return "bool"
        if pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_decimal(kind):
            return "number"
        return "string" if pa.types.is_string(kind) or pa.types.is_large_string(kind) else None
    if isinstance(dtype, pd.BooleanDtype):
        return "bool"
    try:  # pandas' nullable numbers (Int64, Float64, ...)
        numeric = pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)
    except TypeError:  # not a dtype pandas knows
        return None
    return "number" if numeric else None


def _can_equal(value: Any, kind: str) -> bool:
    """Whether ``value`` could equal some value of a column of this kind (by type only).

    pandas matches ``1``, ``1.0``, ``True`` and ``numpy.int64(1)`` against a number;
    a boolean column holds only ``True`` and ``False`` (pandas' indexes, and these
    engines, do not match ``1`` against ``True``); a string column only ``str``.
    """
    if kind == "string":
        return isinstance(value, str)
    if kind == "bool":
        return isinstance(value, bool | np.bool_)
    return isinstance(value, numbers.Number | np.bool_)


_KIND_WORDS = {"number": "numbers", "bool": "booleans (True, False)", "string": "strings"}


def _example(bad: list[Any], kind: str) -> str:
    """Declared values converted to the column's kind, to show in a message."""
    if kind == "bool":
        return "[False, True]"
    if kind == "string":
        return repr([str(v) for v in bad[:3]])
    shown: list[Any] = []
    for v in bad[:3]:
        try:
            number = float(str(v))
            shown.append(int(number) if number.is_integer() else number)
        except (TypeError, ValueError, OverflowError):
            return "[1, 2]"
    return repr(shown)


def check_declared_values(column: Hashable, values: Iterable[Any], dtype: Any, where: str) -> None:
    """Refuse declared categories or keys that no row can ever match (before any charge).

    Only public facts are read: the declared values and the column's dtype, never its
    values.

    Parameters
    ----------
    column : hashable
        The column label.
    values : iterable
        The declared categories (or group-by keys) of the column.
    dtype : dtype or None
        The column's dtype (``None``: not known, no type check).
    where : str
        Where the values were declared, for the message (``"keys="``,
        ``"categories="``, ``"the schema's Check.isin"``).

    Raises
    ------
    TypeError
        A declared value is not hashable (``[["a", "b"]]``).
    ValueError
        No value is declared (``Check.isin([])``). Or a missing value (``None``,
        ``NaN``, ``pd.NA``, ``NaT``) is declared: missing
        values never fall in a declared category or group; they are skipped, as
        pandas' ``groupby`` and ``value_counts`` skip them. Or a value's type can
        never equal a value of the column's dtype (``"02139"`` on an integer column):
        its group would be empty, noise only.

    Examples
    --------
    >>> check_declared_values("k", ["a", "b"], np.dtype(object), "keys=")
    >>> check_declared_values("zip", [2139, 2140.0, True], np.dtype("int64"), "keys=")
    >>> check_declared_values("zip", ["02139"], np.dtype("int64"), "keys=")
    Traceback (most recent call last):
    ...
    ValueError: keys= of column 'zip' (dtype int64) declare ['02139'] (str), but ...
    """
    listed = list(values)
    example = "pa.Check.isin(['a', 'b'])" if "isin" in where else "['a', 'b']"
    if not listed:
        raise ValueError(
            f"{where} declares no categories for column {column!r} (an empty list); "
            f"declare at least one public category, e.g. {example}"
        )
    for value in listed:
        try:
            hash(value)
        except TypeError:
            raise TypeError(
                f"{where} of column {column!r} must list hashable scalars (strings, "
                f"numbers, booleans, tuples), but {value!r} (of type {type(value).__name__}) "
                f"is not; list each category as one value, e.g. {example} rather than "
                f"[['a', 'b']]"
            ) from None
    missing = [v for v in listed if _is_missing(v)]
    if missing:
        raise ValueError(
            f"{where} of column {column!r} declare a missing value ({missing[0]!r}), which "
            f"no row ever matches: missing values are skipped, as pandas' groupby "
            f"(dropna=True) and value_counts() skip them. Remove it from the declaration. "
            f"To count the missing values, use value_counts(..., dropna=False) or "
            f"proportions(..., dropna=False); to release them as a group, fill them first, "
            f"e.g. df[{column!r}] = df[{column!r}].fillna('missing'), and declare 'missing'"
        )
    kind = _value_kind(dtype)
    if kind is None:
        return
    bad = [v for v in listed if not _can_equal(v, kind)]
    if not bad:
        return
    types = ", ".join(dict.fromkeys(type(v).__name__ for v in bad))
    if kind == "string":
        convert = f"df[{column!r}] = pd.to_numeric(df[{column!r}])"
    else:
        convert = f"df[{column!r}] = df[{column!r}].astype(str)"
    raise ValueError(
        f"{where} of column {column!r} (dtype {dtype}) declare {bad[:5]!r} ({types}), but "
        f"the column holds {_KIND_WORDS[kind]}: no row can ever match them, and their "
        f"counts would be noise only. Declare values of the column's type, e.g. "
        f"{_example(bad, kind)}, or convert the column first (e.g. {convert})"
    )


def _dtype_categories(column: Hashable, series: Any) -> tuple[Any, ...]:
    """``categories="dtype"``: the categories of the column's own dtype."""
    dtype = getattr(series, "dtype", None)
    if bool_dtype(dtype):
        return _BOOLEAN_DOMAIN
    if not isinstance(dtype, pd.CategoricalDtype) or dtype.categories is None:
        raise ValueError(
            f"categories={DTYPE!r} needs a pd.CategoricalDtype column, but column "
            f"{column!r} has dtype {dtype}; declare its categories with categories=[...] "
            f"or a pandera schema's Check.isin([...])"
        )
    return _category_list(column, dtype.categories)


def _schema_dtype_categories(col: Any) -> tuple[Any, ...] | None:
    """Categories a schema column's declared dtype implies: a CategoricalDtype or bool."""
    dtype = getattr(col, "dtype", None)
    if dtype is None:
        return None
    inner = getattr(dtype, "type", dtype)  # pandera wraps the pandas dtype
    if isinstance(inner, pd.CategoricalDtype):
        if inner.categories is None or not len(inner.categories):
            return None  # pa.Column("category") declares no categories
        return tuple(inner.categories)
    if bool_dtype(inner):
        return _BOOLEAN_DOMAIN
    return None


def _schema_categories(col: Any) -> tuple[Any, ...] | None:
    for check in getattr(col, "checks", None) or []:
        allowed = isin_values(check)
        if allowed is not None:
            return tuple(dict.fromkeys(allowed))
    return _schema_dtype_categories(col)


def categories_of(
    columns: Mapping[Hashable, Any],
    column: Hashable,
    per_column: Mapping[Hashable, Any],
    sources: list[tuple[dict[Hashable, Any], str]],
) -> CategoricalDeclaration | None:
    """One column's declared categories, ``None`` if it has none."""
    dtype = getattr(columns[column], "dtype", None)
    if column in per_column:
        value = per_column[column]
        if isinstance(value, str) and value == DTYPE:
            cats = _dtype_categories(column, columns[column])
            return CategoricalDeclaration(column, cats, True, "dtype")
        listed = _category_list(column, value)
        check_declared_values(column, listed, dtype, "categories=")
        return CategoricalDeclaration(column, listed, True, "categories")
    for cols, source in sources:
        if column in cols and (found := _schema_categories(cols[column])) is not None:
            isin = any(isin_values(c) is not None for c in cols[column].checks or [])
            where = f"the {source}'s " + ("Check.isin" if isin else "CategoricalDtype")
            check_declared_values(column, found, dtype, where)
            col = cols[column]
            return CategoricalDeclaration(
                column, found, bool(getattr(col, "nullable", False)), source, col
            )
    if bool_dtype(getattr(columns[column], "dtype", None)):
        return CategoricalDeclaration(column, _BOOLEAN_DOMAIN, True, "dtype")
    return None
