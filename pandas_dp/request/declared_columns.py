"""What one column declares: its bounds, from a ``(lower, upper)`` pair or a schema.

A :class:`NumericDeclaration` holds the public bounds of one numeric column and
whether it may be missing. Bounds are checked here -- real numbers (not booleans
or strings), finite, increasing, with a finite width -- whatever they came from:
an explicit pair, or the checks of a pandera column. Checks are recognised by
name (``in_range``, ``between``, ``ge``/``gt``/``le``/``lt`` and their long
names, ``isin`` of numbers, which declares its smallest and largest value) or,
for a renamed check, by the shape of its ``statistics``; several checks on one
column intersect. A boolean column lies in ``[0, 1]`` by its type.

The entry points, which resolve every column of a request and name all the
missing ones at once, are in :mod:`pandas_dp.request.declarations`. pandera is imported
here only when a pandera object is built.
"""

from __future__ import annotations

import decimal
import importlib
import math
import numbers
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pandas as pd

from pandas_dp.errors import InvalidBoundsError

if TYPE_CHECKING:
    import pandera.pandas as pa

__all__ = ["NumericDeclaration"]

_LOWER = {"greater_than", "greater_than_or_equal_to", "ge", "gt"}
_UPPER = {"less_than", "less_than_or_equal_to", "le", "lt"}
_RANGE = {"in_range", "between"}
_RANGE_KEYS = {"min_value", "max_value", "include_min", "include_max"}


def pandera_module() -> ModuleType:
    """``pandera.pandas``, imported on first use (it costs ~0.15 s to import)."""
    return importlib.import_module("pandera.pandas")


@dataclass(frozen=True)
class NumericDeclaration:
    """The public facts about one numeric column.

    Attributes
    ----------
    column : hashable
        The column label.
    lower, upper : float
        Declared bounds, ``lower < upper``, both finite, with a finite width.
    nullable : bool
        Whether a missing value is a legal value of the column.
    source : str
        ``"bounds"``, ``"schema"``, ``"attached schema"`` or ``"dtype"``.
    integer : bool
        Whether the column's dtype holds whole numbers only (an integer or boolean
        dtype: public, like the dtype itself). With whole-number bounds its sum is
        released as an integer (:func:`pandas_dp.plan.calibration.integer_sum`).
    schema_column : pandera Column or None
        The schema's own column when the declaration came from a schema.
    """

    column: Hashable
    lower: float
    upper: float
    nullable: bool = False
    source: str = "bounds"
    integer: bool = False
    schema_column: Any = field(default=None, repr=False, compare=False)

    @property
    def midpoint(self) -> float:
        """The centre of the bounds; a missing value of a non-nullable column becomes it."""
        return 0.5 * self.lower + 0.5 * self.upper  # lower + upper may overflow

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower

    @cached_property
    def pandera_column(self) -> pa.Column:
        """The declaration as a pandera column (the user's own when it came from a schema)."""
        return as_column(self, pandera_module().Check.in_range(self.lower, self.upper))


def as_column(decl: Any, check: Any) -> pa.Column:
    """A declaration as a pandera column: the user's own when it came from a schema."""
    if decl.schema_column is not None:
        column: pa.Column = decl.schema_column
        return column
    made: pa.Column = pandera_module().Column(
        checks=check, nullable=decl.nullable, name=decl.column
    )
    return made


def _is_number(value: Any) -> bool:
    """A real number that is not a boolean (numbers, numpy numbers, Decimal)."""
    if type(value) is float or type(value) is int:  # the usual case, without the ABCs
        return True
    return isinstance(value, numbers.Real | decimal.Decimal) and not isinstance(value, bool)


def _is_nan(value: Any) -> bool:
    if isinstance(value, decimal.Decimal):
        return value.is_nan()
    return bool(value != value)


def _as_float(value: Any, column: Hashable, which: str) -> float:
    if not _is_number(value):
        raise InvalidBoundsError(
            f"the {which} bound of column {column!r} is {value!r} (of type "
            f"{type(value).__name__}), which is not a number; declare numeric bounds "
            f"such as (0, 100), not strings, booleans or None"
        )
    try:
        number = float(value)
    except (ValueError, OverflowError):  # 10**400, Decimal("sNaN")
        number = math.nan if _is_nan(value) else math.inf
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
    if not math.isfinite(hi - lo):
        raise InvalidBoundsError(
            f"the bounds of column {column!r} are ({lo}, {hi}), whose width upper - lower "
            f"overflows to infinity; the width must be finite (the sensitivity grows with "
            f"it). Declare narrower bounds, or rescale the column"
        )
    return lo, hi


def bounds_pair(value: Any, column: Hashable) -> tuple[Any, Any]:
    if type(value) is tuple and len(value) == 2:  # the usual case, without the ABCs
        return value[0], value[1]
    if isinstance(value, str) and value == "auto":
        raise ValueError(
            f"bounds='auto' (bounds estimated privately) is offered by sum, mean, var, std, "
            f"sem, skew, median, quantile and agg, on a frame, a Series or a group-by, and "
            f"not by this release (column {column!r}): declare (lower, upper) bounds, "
            f"e.g. the ones a bounds='auto' release put in its attrs['dp'].input_bounds"
        )
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


def _check_name(check: Any) -> set[Any]:
    name = getattr(check, "name", None)
    original = str(getattr(check, "error", "") or "").split("(", 1)[0]
    return {name, original}


def isin_values(check: Any) -> list[Any] | None:
    """The allowed values of an ``isin`` check (by name or statistics), else ``None``."""
    stats = getattr(check, "statistics", None) or {}
    if ("isin" in _check_name(check) or set(stats) == {"allowed_values"}) and (
        "allowed_values" in stats
    ):
        return list(stats["allowed_values"])
    return None


def _check_bounds(check: Any, column: Hashable) -> tuple[Any, Any] | None:
    """The (lower, upper) a pandera check declares, ``None`` if it declares no bound."""
    stats = getattr(check, "statistics", None) or {}
    names = _check_name(check)
    keys = set(stats)
    if names & _RANGE or keys == _RANGE_KEYS:
        return stats.get("min_value"), stats.get("max_value")
    if names & _LOWER or keys == {"min_value"}:
        return stats.get("min_value"), None
    if names & _UPPER or keys == {"max_value"}:
        return None, stats.get("max_value")
    allowed = isin_values(check)
    if allowed and all(_is_number(v) for v in allowed):  # isin of numbers: (min, max)
        # a NaN among them allows missing values; it is no bound
        values = [_as_float(v, column, "isin") for v in allowed if not _is_nan(v)]
        if values:
            return min(values), max(values)
    return None


def _from_schema_column(
    column: Hashable, col: Any, source: str
) -> NumericDeclaration | tuple[float | None, float | None]:
    lower: float | None = None
    upper: float | None = None
    for check in getattr(col, "checks", None) or []:
        found = _check_bounds(check, column)
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


def bounds_of(
    columns: Any,
    column: Hashable,
    per_column: Mapping[Hashable, Any],
    sources: list[tuple[dict[Hashable, Any], str]],
) -> NumericDeclaration | None:
    """One column's declared bounds, ``None`` if it has none: ``per_column`` first,
    then the schemas in order, then ``(0, 1)`` for a boolean column; ``integer``
    where the column's dtype holds whole numbers."""
    found: NumericDeclaration | None = None
    if column in per_column:
        lo, hi = _checked_pair(column, *bounds_pair(per_column[column], column))
        found = NumericDeclaration(column, lo, hi, False, "bounds")
    else:
        for cols, source in sources:
            schema = _from_schema_column(column, cols[column], source) if column in cols else None
            if isinstance(schema, NumericDeclaration):
                found = schema
                break
        else:
            if _is_boolean(columns, column):  # True/False lie in [0, 1] by type
                found = NumericDeclaration(column, 0.0, 1.0, False, "dtype")
    if found is None or not whole_dtype(columns, column):
        return found
    return replace(found, integer=True)


def half_bounds(column: Hashable, sources: list[tuple[dict[Hashable, Any], str]]) -> str | None:
    """What a schema declares of a column with only one bound, ``None`` if not that.

    For the message of a missing declaration: a ``Check.ge(0)`` without an upper
    bound is a declaration that is not enough, not a missing one.
    """
    for cols, source in sources:
        if column not in cols:
            continue
        found = _from_schema_column(column, cols[column], source)
        if isinstance(found, NumericDeclaration) or found == (None, None):
            continue
        lower, upper = found
        if upper is None:
            return (
                f"the {source} declares a lower bound ({lower:g}) of column {column!r} but "
                f"no upper bound; add one, e.g. pa.Check.le(upper) next to the lower one, "
                f"or declare both with pa.Check.in_range(lower, upper) "
                f"(pa.Field(ge=..., le=...) in a DataFrameModel)"
            )
        return (
            f"the {source} declares an upper bound ({upper:g}) of column {column!r} but "
            f"no lower bound; add one, e.g. pa.Check.ge(lower) next to the upper one, "
            f"or declare both with pa.Check.in_range(lower, upper) "
            f"(pa.Field(ge=..., le=...) in a DataFrameModel)"
        )
    return None


def _is_boolean(columns: Any, column: Hashable) -> bool:
    series = columns.get(column) if isinstance(columns, Mapping) else None
    return bool_dtype(getattr(series, "dtype", None))


def whole_dtype(columns: Any, column: Hashable) -> bool:
    """Whether ``columns[column]`` has an integer or boolean dtype (numpy, nullable
    or Arrow-backed), so that every value it holds is a whole number."""
    series = columns.get(column) if isinstance(columns, Mapping) else None
    dtype = getattr(series, "dtype", None)
    if dtype is None or isinstance(dtype, pd.CategoricalDtype):
        return False
    try:
        return bool(pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))
    except TypeError:  # a pandera DataType that pandas does not understand
        return False


def bool_dtype(dtype: Any) -> bool:
    """numpy ``bool`` or pandas ``"boolean"`` (not a categorical of booleans)."""
    if dtype is None or isinstance(dtype, pd.CategoricalDtype):
        return False
    try:
        return bool(pd.api.types.is_bool_dtype(dtype))
    except TypeError:  # a pandera DataType that pandas does not understand
        return False
