"""Public declarations: bounds (and nullability) of the columns a release reads.

Bounds come, per column and in this order, from

1. ``bounds=`` -- a ``(lower, upper)`` pair for every column, or a dict
   ``column -> (lower, upper)``;
2. ``schema=`` -- a :class:`pandera.api.pandas.container.DataFrameSchema`, a
   ``DataFrameModel`` class, a ``SeriesSchema`` or a single ``Column``;
3. the schema pandera attached to the frame (``schema.validate(df)`` does that);

and never from the data. Explicit bounds are turned into the same pandera
objects a schema holds (``Column(checks=Check.in_range(lower, upper))``), so
there is one representation: what ``out_of_bounds="raise"`` validates with and
what the metadata reports.

Checks are recognised by name (``in_range``, ``between``, ``ge``/``gt``/``le``/
``lt`` and their long names) or, for a renamed check, by the shape of its
``statistics``. Several checks on one column intersect.

Examples
--------
>>> import pandera.pandas as pa
>>> schema = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(0, 100))})
>>> decls = resolve_bounds(["age"], bounds=None, schema=schema, attached=None)
>>> decls["age"].lower, decls["age"].upper, decls["age"].nullable
(0.0, 100.0, False)
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd
import pandera.pandas as pa

from pandas_dp.errors import InvalidBoundsError, MissingBoundsError

__all__ = [
    "OUT_OF_BOUNDS",
    "CategoricalDeclaration",
    "NumericDeclaration",
    "attached_schema",
    "check_out_of_bounds",
    "resolve_bounds",
    "resolve_categories",
    "schema_columns",
]

OUT_OF_BOUNDS: tuple[str, ...] = ("clip", "raise")

_LOWER = {"greater_than", "greater_than_or_equal_to", "ge", "gt"}
_UPPER = {"less_than", "less_than_or_equal_to", "le", "lt"}
_RANGE = {"in_range", "between"}
_RANGE_KEYS = {"min_value", "max_value", "include_min", "include_max"}


@dataclass(frozen=True)
class NumericDeclaration:
    """The public facts about one numeric column.

    Attributes
    ----------
    column : hashable
        The column label.
    lower, upper : float
        Declared bounds, ``lower < upper``, both finite.
    nullable : bool
        Whether a missing value is a legal value of the column.
    source : str
        ``"bounds"``, ``"schema"`` or ``"attached schema"``.
    """

    column: Hashable
    lower: float
    upper: float
    nullable: bool = False
    source: str = "bounds"
    schema_column: Any = field(default=None, repr=False, compare=False)

    @property
    def midpoint(self) -> float:
        """The centre of the bounds; a missing value of a non-nullable column becomes it."""
        return 0.5 * (self.lower + self.upper)

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower

    @cached_property
    def pandera_column(self) -> pa.Column:
        """The declaration as a pandera column (the user's own when it came from a schema)."""
        return _as_column(self, pa.Check.in_range(self.lower, self.upper))


def _as_column(decl: Any, check: pa.Check) -> pa.Column:
    """A declaration as a pandera column: the user's own when it came from a schema."""
    if decl.schema_column is not None:
        column: pa.Column = decl.schema_column
        return column
    return pa.Column(checks=check, nullable=decl.nullable, name=decl.column)


def check_out_of_bounds(policy: str) -> str:
    """Return ``policy`` if it is an input policy, else raise ``ValueError``."""
    if policy not in OUT_OF_BOUNDS:
        raise ValueError(
            f"out_of_bounds={policy!r} is not an input policy; use 'clip' (default, "
            f"DP-safe: values are clamped to the declared bounds) or 'raise' (validate "
            f"with pandera first; not DP-safe)"
        )
    return policy


def _as_float(value: Any, column: Hashable, which: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidBoundsError(
            f"the {which} bound of column {column!r} is {value!r}, which is not a number; "
            f"declare numeric bounds such as (0, 100)"
        ) from None
    if not math.isfinite(number):
        raise InvalidBoundsError(
            f"the {which} bound of column {column!r} is {number}; bounds must be finite "
            f"numbers (the sensitivity of a statistic grows with the width of its bounds)"
        )
    return number


def _checked_pair(column: Hashable, lower: Any, upper: Any) -> tuple[float, float]:
    lo = _as_float(lower, column, "lower")
    hi = _as_float(upper, column, "upper")
    if not lo < hi:
        raise InvalidBoundsError(
            f"the bounds of column {column!r} are ({lo}, {hi}); expected lower < upper. "
            f"Swap them if they are inverted"
        )
    return lo, hi


def _pair(value: Any, column: Hashable) -> tuple[Any, Any]:
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(
            f"bounds for column {column!r} must be a (lower, upper) pair; got {value!r}"
        )
    items = list(value)
    if len(items) != 2:
        raise ValueError(
            f"bounds for column {column!r} must be a (lower, upper) pair; got {len(items)} "
            f"values: {value!r}"
        )
    return items[0], items[1]


def _check_bounds(check: Any) -> tuple[float | None, float | None] | None:
    """The (lower, upper) a pandera check declares, ``None`` if it declares no bound."""
    stats = getattr(check, "statistics", None) or {}
    name = getattr(check, "name", None)
    original = str(getattr(check, "error", "") or "").split("(", 1)[0]
    names = {name, original}
    keys = set(stats)
    if names & _RANGE or keys == _RANGE_KEYS:
        return stats.get("min_value"), stats.get("max_value")
    if names & _LOWER or keys == {"min_value"}:
        return stats.get("min_value"), None
    if names & _UPPER or keys == {"max_value"}:
        return None, stats.get("max_value")
    return None


def schema_columns(schema: Any) -> dict[Hashable, Any]:
    """The ``name -> pandera Column`` mapping of any schema-like object.

    Accepts a ``DataFrameSchema``, a ``DataFrameModel`` class, a ``SeriesSchema``
    or ``Column`` (keyed by its name), or a dict ``label -> Column``.
    """
    if isinstance(schema, type) and issubclass(schema, pa.DataFrameModel):
        schema = schema.to_schema()
    if isinstance(schema, pa.DataFrameSchema):
        return dict(schema.columns)
    if isinstance(schema, pa.Column | pa.SeriesSchema):
        return {schema.name: schema}
    if isinstance(schema, Mapping):  # column label -> pandera Column
        return dict(schema)
    raise TypeError(
        f"schema must be a pandera DataFrameSchema, DataFrameModel class, SeriesSchema, "
        f"Column or a dict of Columns; got {type(schema).__name__}"
    )


def attached_schema(obj: Any) -> Any:
    """The schema pandera attached to ``obj`` with ``validate()``, or ``None``."""
    try:
        return obj.pandera.schema
    except AttributeError:
        return None


def _from_schema_column(
    column: Hashable, col: Any, source: str
) -> NumericDeclaration | tuple[float | None, float | None]:
    lower: float | None = None
    upper: float | None = None
    for check in getattr(col, "checks", None) or []:
        found = _check_bounds(check)
        if found is None:
            continue
        lo, hi = found
        if lo is not None:
            lo = _as_float(lo, column, "lower")
            lower = lo if lower is None else max(lower, lo)
        if hi is not None:
            hi = _as_float(hi, column, "upper")
            upper = hi if upper is None else min(upper, hi)
    if lower is None or upper is None:
        return (lower, upper)
    lo, hi = _checked_pair(column, lower, upper)
    return NumericDeclaration(
        column, lo, hi, bool(getattr(col, "nullable", False)), source, schema_column=col
    )


def _per_column(value: Any, wanted: list[Hashable]) -> Mapping[Hashable, Any]:
    """An explicit declaration as ``column -> value`` (one value for all, or a dict)."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return value
    return dict.fromkeys(wanted, value)


def _schema_sources(schema: Any, attached: Any) -> list[tuple[dict[Hashable, Any], str]]:
    """The schemas to look in, in order: ``schema=``, then the attached one."""
    sources = []
    if schema is not None:
        sources.append((schema_columns(schema), "schema"))
    if attached is not None:
        sources.append((schema_columns(attached), "attached schema"))
    return sources


def resolve_bounds(
    columns: Iterable[Hashable],
    *,
    bounds: Any,
    schema: Any,
    attached: Any,
) -> dict[Hashable, NumericDeclaration]:
    """Resolve the public bounds of every column in ``columns``.

    ``columns`` is a list of labels or a mapping label -> Series; with a mapping,
    an undeclared boolean column gets the bounds ``(0, 1)`` its type implies.

    Raises
    ------
    MissingBoundsError
        Naming *every* column without bounds, with how to declare them.
    InvalidBoundsError
        For NaN, infinite, non-numeric or not increasing bounds.
    """
    wanted = list(columns)
    if bounds is not None and not isinstance(bounds, Mapping):
        bounds = _pair(bounds, wanted[0] if len(wanted) == 1 else "(every column)")
    per_column = _per_column(bounds, wanted)
    sources = _schema_sources(schema, attached)

    out: dict[Hashable, NumericDeclaration] = {}
    missing: list[str] = []
    for column in wanted:
        if column in per_column:
            lo, hi = _checked_pair(column, *_pair(per_column[column], column))
            out[column] = NumericDeclaration(column, lo, hi, False, "bounds")
            continue
        for cols, source in sources:
            if column in cols:
                found = _from_schema_column(column, cols[column], source)
                if isinstance(found, NumericDeclaration):
                    out[column] = found
                    break
        else:
            if _is_boolean(columns, column):  # True/False lie in [0, 1] by type
                out[column] = NumericDeclaration(column, 0.0, 1.0, False, "dtype")
            else:
                missing.append(str(column))
    if missing:
        raise MissingBoundsError(missing)
    return out


def _is_boolean(columns: Any, column: Hashable) -> bool:
    series = columns.get(column) if isinstance(columns, Mapping) else None
    dtype = getattr(series, "dtype", None)
    return dtype is not None and bool(pd.api.types.is_bool_dtype(dtype))


# ----------------------------------------------------------------------------- categories


@dataclass(frozen=True)
class CategoricalDeclaration:
    """The public category list of one column.

    Attributes
    ----------
    column : hashable
    categories : tuple
        Declared categories, in declaration order, without duplicates.
    nullable : bool
        Whether a missing value is a legal value of the column.
    source : str
        ``"categories"``, ``"schema"``, ``"attached schema"`` or ``"dtype"``.
    """

    column: Hashable
    categories: tuple[Any, ...]
    nullable: bool = True
    source: str = "categories"
    schema_column: Any = field(default=None, repr=False, compare=False)

    @cached_property
    def pandera_column(self) -> pa.Column:
        """The declaration as a pandera column (the user's own when from a schema)."""
        return _as_column(self, pa.Check.isin(list(self.categories)))


def _category_list(column: Hashable, values: Any) -> tuple[Any, ...]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise ValueError(
            f"categories for column {column!r} must be a list of values; got {values!r}"
        )
    items = tuple(values)
    if not items:
        raise ValueError(f"categories for column {column!r} is empty; declare at least one")
    if len(set(items)) != len(items):
        raise ValueError(f"categories for column {column!r} repeat a value: {list(items)}")
    return items


def _schema_categories(col: Any) -> tuple[Any, ...] | None:
    for check in getattr(col, "checks", None) or []:
        stats = getattr(check, "statistics", None) or {}
        name = getattr(check, "name", None)
        if name == "isin" or set(stats) == {"allowed_values"}:
            return tuple(dict.fromkeys(stats["allowed_values"]))
    return None


def resolve_categories(
    columns: Mapping[Hashable, Any],
    *,
    categories: Any,
    schema: Any,
    attached: Any,
) -> dict[Hashable, CategoricalDeclaration]:
    """Resolve the public categories of every column in ``columns`` (label -> Series).

    Order: ``categories=`` (a list for every column, or a dict column -> list) >
    ``schema=`` (``Check.isin``) > the attached schema > the column's
    :class:`pandas.CategoricalDtype`. Never the values in the data.

    Raises
    ------
    MissingBoundsError
        Naming every column without declared categories.
    """
    wanted = list(columns)
    per_column = _per_column(categories, wanted)
    sources = _schema_sources(schema, attached)

    out: dict[Hashable, CategoricalDeclaration] = {}
    missing: list[str] = []
    for column in wanted:
        if column in per_column:
            cats = _category_list(column, per_column[column])
            out[column] = CategoricalDeclaration(column, cats, True, "categories")
            continue
        found = None
        for cols, source in sources:
            if column in cols and (cats_s := _schema_categories(cols[column])) is not None:
                col = cols[column]
                nullable = bool(getattr(col, "nullable", False))
                found = CategoricalDeclaration(column, cats_s, nullable, source, col)
                break
        if found is None:
            dtype = getattr(columns[column], "dtype", None)
            if isinstance(dtype, pd.CategoricalDtype) and len(dtype.categories):
                found = CategoricalDeclaration(column, tuple(dtype.categories), True, "dtype")
        if found is None:
            missing.append(str(column))
        else:
            out[column] = found
    if missing:
        raise MissingBoundsError(missing, what="categories")
    return out
