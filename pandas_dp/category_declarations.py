"""What one column declares: its categories (the keys of a group-by too).

A :class:`CategoricalDeclaration` holds the public category list of one column.
It comes from ``categories=``, a schema's ``isin`` check, a
:class:`pandas.CategoricalDtype` *declared in the schema*, or the two values of a
boolean column. A data column's own categorical dtype is not a declaration
(``astype("category")`` reads the data); it is used only when asked for with
``categories="dtype"`` (:data:`DTYPE`).

The entry points, which resolve every column of a request and name all the
undeclared ones at once, are in :mod:`pandas_dp.declarations`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

from pandas_dp.declared_columns import _as_column, _bool_dtype, _isin_values, _pandera

if TYPE_CHECKING:
    import pandera.pandas as pa

__all__ = ["DTYPE", "CategoricalDeclaration"]

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
        return _as_column(self, _pandera().Check.isin(list(self.categories)))


def _category_list(column: Hashable, values: Any) -> tuple[Any, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(
            f"categories for column {column!r} must be a list of values (or "
            f"categories={DTYPE!r} for the column's own CategoricalDtype); got {values!r}"
        )
    items = tuple(values)
    if not items:
        raise ValueError(f"categories for column {column!r} is empty; declare at least one")
    if len(set(items)) != len(items):
        raise ValueError(f"categories for column {column!r} repeat a value: {list(items)}")
    return items


def _dtype_categories(column: Hashable, series: Any) -> tuple[Any, ...]:
    """``categories="dtype"``: the categories of the column's own dtype."""
    dtype = getattr(series, "dtype", None)
    if _bool_dtype(dtype):
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
    if _bool_dtype(inner):
        return _BOOLEAN_DOMAIN
    return None


def _schema_categories(col: Any) -> tuple[Any, ...] | None:
    for check in getattr(col, "checks", None) or []:
        allowed = _isin_values(check)
        if allowed is not None:
            return tuple(dict.fromkeys(allowed))
    return _schema_dtype_categories(col)


def _categories_of(
    columns: Mapping[Hashable, Any],
    column: Hashable,
    per_column: Mapping[Hashable, Any],
    sources: list[tuple[dict[Hashable, Any], str]],
) -> CategoricalDeclaration | None:
    """One column's declared categories, ``None`` if it has none."""
    if column in per_column:
        value = per_column[column]
        if isinstance(value, str) and value == DTYPE:
            cats = _dtype_categories(column, columns[column])
            return CategoricalDeclaration(column, cats, True, "dtype")
        return CategoricalDeclaration(column, _category_list(column, value), True, "categories")
    for cols, source in sources:
        if column in cols and (found := _schema_categories(cols[column])) is not None:
            col = cols[column]
            return CategoricalDeclaration(
                column, found, bool(getattr(col, "nullable", False)), source, col
            )
    if _bool_dtype(getattr(columns[column], "dtype", None)):
        return CategoricalDeclaration(column, _BOOLEAN_DOMAIN, True, "dtype")
    return None
