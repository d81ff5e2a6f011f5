"""Public declarations: bounds, categories (and nullability) of the columns a release reads.

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
``lt`` and their long names, ``isin`` of numbers, which declares its smallest and
largest value) or, for a renamed check, by the shape of its ``statistics``.
Several checks on one column intersect.

Categories come from ``categories=``, a schema's ``isin`` check, a
:class:`pandas.CategoricalDtype` *declared in the schema*, or the two values of a
boolean column. A data column's own categorical dtype is not a declaration
(``astype("category")`` reads the data); it is used only when asked for with
``categories="dtype"``.

pandera is imported only when a schema is given or a pandera object is built, so
``import pandas_dp`` does not pay for it.

Examples
--------
>>> import pandera.pandas as pa
>>> schema = pa.DataFrameSchema({"age": pa.Column(float, pa.Check.in_range(0, 100))})
>>> decls = resolve_bounds(["age"], bounds=None, schema=schema, attached=None)
>>> decls["age"].lower, decls["age"].upper, decls["age"].nullable
(0.0, 100.0, False)
"""

from __future__ import annotations

import decimal
import importlib
import math
import numbers
import sys
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pandas as pd

from pandas_dp.errors import InvalidBoundsError, MissingBoundsError

if TYPE_CHECKING:
    import pandera.pandas as pa

__all__ = [
    "DTYPE",
    "OUT_OF_BOUNDS",
    "CategoricalDeclaration",
    "DeclaredColumns",
    "NumericDeclaration",
    "attached_schema",
    "check_out_of_bounds",
    "resolve_bounds",
    "resolve_categories",
    "schema_columns",
    "split_declared",
]

OUT_OF_BOUNDS: tuple[str, ...] = ("clip", "raise")

#: ``categories=DTYPE`` publishes the categories of the column's own
#: :class:`pandas.CategoricalDtype`; valid only if that dtype was set from public facts.
DTYPE = "dtype"

_LOWER = {"greater_than", "greater_than_or_equal_to", "ge", "gt"}
_UPPER = {"less_than", "less_than_or_equal_to", "le", "lt"}
_RANGE = {"in_range", "between"}
_RANGE_KEYS = {"min_value", "max_value", "include_min", "include_max"}
_BOOLEAN_DOMAIN: tuple[bool, bool] = (False, True)


def _pandera() -> ModuleType:
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
    schema_column : pandera Column or None
        The schema's own column when the declaration came from a schema.
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
        return 0.5 * self.lower + 0.5 * self.upper  # lower + upper may overflow

    @property
    def width(self) -> float:
        """``upper - lower``."""
        return self.upper - self.lower

    @cached_property
    def pandera_column(self) -> pa.Column:
        """The declaration as a pandera column (the user's own when it came from a schema)."""
        return _as_column(self, _pandera().Check.in_range(self.lower, self.upper))


def _as_column(decl: Any, check: Any) -> pa.Column:
    """A declaration as a pandera column: the user's own when it came from a schema."""
    if decl.schema_column is not None:
        column: pa.Column = decl.schema_column
        return column
    made: pa.Column = _pandera().Column(checks=check, nullable=decl.nullable, name=decl.column)
    return made


def check_out_of_bounds(policy: str) -> str:
    """Return ``policy`` if it is an input policy, else raise ``ValueError``.

    Parameters
    ----------
    policy : str
        ``"clip"`` or ``"raise"``.

    Returns
    -------
    str
        ``policy`` unchanged.
    """
    if policy not in OUT_OF_BOUNDS:
        raise ValueError(
            f"out_of_bounds={policy!r} is not an input policy; use 'clip' (default, "
            f"DP-safe: values are clamped to the declared bounds) or 'raise' (validate "
            f"with pandera first; not DP-safe)"
        )
    return policy


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


def _pair(value: Any, column: Hashable) -> tuple[Any, Any]:
    if type(value) is tuple and len(value) == 2:  # the usual case, without the ABCs
        return value[0], value[1]
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


def _isin_values(check: Any) -> list[Any] | None:
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
    allowed = _isin_values(check)
    if allowed and all(_is_number(v) for v in allowed):  # isin of numbers: (min, max)
        # a NaN among them allows missing values; it is no bound
        values = [_as_float(v, column, "isin") for v in allowed if not _is_nan(v)]
        if values:
            return min(values), max(values)
    return None


def schema_columns(schema: Any) -> dict[Hashable, Any]:
    """The ``name -> pandera Column`` mapping of any schema-like object.

    Parameters
    ----------
    schema : DataFrameSchema, DataFrameModel class, SeriesSchema, Column or dict
        A ``SeriesSchema`` or ``Column`` is keyed by its name; a dict maps
        column labels to pandera columns.

    Returns
    -------
    dict
        Column label -> pandera column.
    """
    if isinstance(schema, Mapping):  # column label -> pandera Column
        return dict(schema)
    pa = _pandera()
    if isinstance(schema, type) and issubclass(schema, pa.DataFrameModel):
        model: Any = schema
        schema = model.to_schema()
    if isinstance(schema, pa.DataFrameSchema):
        return dict(schema.columns)
    if isinstance(schema, pa.Column | pa.SeriesSchema):
        return {schema.name: schema}
    raise TypeError(
        f"schema must be a pandera DataFrameSchema, DataFrameModel class, SeriesSchema, "
        f"Column or a dict of Columns; got {type(schema).__name__}"
    )


def attached_schema(obj: Any) -> Any:
    """The schema pandera attached to ``obj`` with ``validate()``, or ``None``.

    Parameters
    ----------
    obj : DataFrame or Series
        The data (only its pandera accessor is looked at; no value is read).

    Returns
    -------
    pandera schema or None
        ``None`` also when pandera was never imported (then nothing was attached).
    """
    if "pandera" not in sys.modules:  # pandera's accessor exists only once it is imported
        return None
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


def _check_known(
    declared: Any, wanted: list[Hashable], known: Iterable[Hashable] | None, what: str
) -> None:
    """Raise if a key of a ``what=`` dict is not a column at all (a typo)."""
    if known is None or not isinstance(declared, Mapping):
        return
    labels = list(known)
    unknown = [key for key in declared if key not in wanted and key not in labels]
    if unknown:
        error: type[ValueError] = InvalidBoundsError if what == "bounds" else ValueError
        raise error(
            f"{what}= declares {', '.join(repr(k) for k in unknown)}, which "
            f"{'is not a column' if len(unknown) == 1 else 'are not columns'} of the data; "
            f"the columns requested are {wanted!r} (all columns: {labels!r}). "
            f"Check the spelling of the {what}= keys"
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


def _explicit_bounds(bounds: Any, wanted: list[Hashable]) -> Mapping[Hashable, Any]:
    if bounds is not None and not isinstance(bounds, Mapping):
        bounds = _pair(bounds, wanted[0] if len(wanted) == 1 else "(every column)")
    return _per_column(bounds, wanted)


def _bounds_of(
    columns: Any,
    column: Hashable,
    per_column: Mapping[Hashable, Any],
    sources: list[tuple[dict[Hashable, Any], str]],
) -> NumericDeclaration | None:
    """One column's declared bounds, ``None`` if it has none."""
    if column in per_column:
        lo, hi = _checked_pair(column, *_pair(per_column[column], column))
        return NumericDeclaration(column, lo, hi, False, "bounds")
    for cols, source in sources:
        if column in cols:
            found = _from_schema_column(column, cols[column], source)
            if isinstance(found, NumericDeclaration):
                return found
    if _is_boolean(columns, column):  # True/False lie in [0, 1] by type
        return NumericDeclaration(column, 0.0, 1.0, False, "dtype")
    return None


def resolve_bounds(
    columns: Iterable[Hashable],
    *,
    bounds: Any,
    schema: Any,
    attached: Any,
    known: Iterable[Hashable] | None = None,
) -> dict[Hashable, NumericDeclaration]:
    """Resolve the public bounds of every column in ``columns``.

    Parameters
    ----------
    columns : iterable of hashable, or mapping hashable -> Series
        The columns to resolve; with a mapping, an undeclared boolean column gets
        the bounds ``(0, 1)`` its type implies.
    bounds : pair, dict or None
        ``(lower, upper)`` for every column, or ``column -> (lower, upper)``.
    schema : pandera schema-like or None
        See :func:`schema_columns`.
    attached : pandera schema or None
        The schema attached to the data (:func:`attached_schema`).
    known : iterable of hashable, optional
        Every column label of the data. When given, a key of a ``bounds`` dict that
        is none of them (a typo) raises; keys naming other columns of the data are
        allowed (one dict may serve several calls). ``None`` skips that check.

    Returns
    -------
    dict
        Column label -> :class:`NumericDeclaration`, in the order of ``columns``.

    Raises
    ------
    MissingBoundsError
        Naming *every* column without bounds, with how to declare them.
    InvalidBoundsError
        For NaN, infinite, non-numeric or not increasing bounds, bounds whose width
        overflows, or (with ``known``) a ``bounds`` key that is not a column.
    """
    wanted = list(columns)
    _check_known(bounds, wanted, known, "bounds")
    per_column = _explicit_bounds(bounds, wanted)
    sources = _schema_sources(schema, attached)

    out: dict[Hashable, NumericDeclaration] = {}
    missing: list[str] = []
    for column in wanted:
        found = _bounds_of(columns, column, per_column, sources)
        if found is None:
            missing.append(str(column))
        else:
            out[column] = found
    if missing:
        raise MissingBoundsError(missing)
    return out


def _is_boolean(columns: Any, column: Hashable) -> bool:
    series = columns.get(column) if isinstance(columns, Mapping) else None
    return _bool_dtype(getattr(series, "dtype", None))


def _bool_dtype(dtype: Any) -> bool:
    """numpy ``bool`` or pandas ``"boolean"`` (not a categorical of booleans)."""
    if dtype is None or isinstance(dtype, pd.CategoricalDtype):
        return False
    try:
        return bool(pd.api.types.is_bool_dtype(dtype))
    except TypeError:  # a pandera DataType that pandas does not understand
        return False


# ----------------------------------------------------------------------------- categories


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


def resolve_categories(
    columns: Mapping[Hashable, Any],
    *,
    categories: Any,
    schema: Any,
    attached: Any,
    known: Iterable[Hashable] | None = None,
) -> dict[Hashable, CategoricalDeclaration]:
    """Resolve the public categories of every column in ``columns`` (label -> Series).

    Order: ``categories=`` > ``schema=`` (``Check.isin``, then a declared
    ``pd.CategoricalDtype`` or boolean dtype) > the attached schema > the two values
    of a boolean column. Never the values in the data, and never the data column's
    own categorical dtype unless asked for with ``categories="dtype"``.

    Parameters
    ----------
    columns : mapping hashable -> Series
        The columns to resolve (only their dtypes are looked at).
    categories : list, dict, "dtype" or None
        A list of categories for every column, a dict ``column -> list``, or
        ``"dtype"`` (for every column, or as a dict value) to publish the categories
        of the column's own :class:`pandas.CategoricalDtype`. ``"dtype"`` is only
        valid when that dtype was set from public information: ``astype("category")``
        reads the categories off the data, and publishing them is not private.
    schema : pandera schema-like or None
        See :func:`schema_columns`.
    attached : pandera schema or None
        The schema attached to the data (:func:`attached_schema`).
    known : iterable of hashable, optional
        Every column label of the data; when given, a key of a ``categories`` dict
        that is none of them raises ``ValueError``. ``None`` skips that check.

    Returns
    -------
    dict
        Column label -> :class:`CategoricalDeclaration`, in the order of ``columns``.

    Raises
    ------
    MissingBoundsError
        Naming every column without declared categories.
    ValueError
        For an empty or repeating category list, ``"dtype"`` on a column without a
        categorical dtype, or (with ``known``) a ``categories`` key that is not a column.
    """
    wanted = list(columns)
    _check_known(categories, wanted, known, "categories")
    per_column = _per_column(categories, wanted)
    sources = _schema_sources(schema, attached)

    out: dict[Hashable, CategoricalDeclaration] = {}
    missing: list[str] = []
    for column in wanted:
        found = _categories_of(columns, column, per_column, sources)
        if found is None:
            missing.append(str(column))
        else:
            out[column] = found
    if missing:
        raise MissingBoundsError(missing, what="categories")
    return out


# ----------------------------------------------------------------------------- describe


@dataclass(frozen=True)
class DeclaredColumns:
    """Which columns of a frame have public declarations (:func:`split_declared`).

    Attributes
    ----------
    numeric : dict
        Column label -> :class:`NumericDeclaration`, for columns with declared bounds.
    categorical : dict
        Column label -> :class:`CategoricalDeclaration`, for columns with declared
        categories.
    undeclared : list
        The other columns, in frame order: nothing public is known about them.
    """

    numeric: dict[Hashable, NumericDeclaration]
    categorical: dict[Hashable, CategoricalDeclaration]
    undeclared: list[Hashable]


def _has_dtype_categories(series: Any) -> bool:
    dtype = getattr(series, "dtype", None)
    return isinstance(dtype, pd.CategoricalDtype) or _bool_dtype(dtype)


def _numeric_dtype(dtype: Any) -> bool:
    return bool(pd.api.types.is_numeric_dtype(dtype)) and not _bool_dtype(dtype)


def split_declared(
    columns: Mapping[Hashable, Any],
    *,
    bounds: Any = None,
    categories: Any = None,
    schema: Any = None,
    attached: Any = None,
    known: Iterable[Hashable] | None = None,
) -> DeclaredColumns:
    """Split a frame's columns into declared numeric, declared categorical and undeclared.

    For ``describe``: only what is declared is described, the rest is listed. A
    column is numeric if it is named in a ``bounds`` dict, or has a numeric
    (non-boolean) dtype and is not named in a ``categories`` dict; a numeric column
    is declared when it has bounds (:func:`resolve_bounds`). Every other column
    (boolean, categorical, string, ...) is declared when it has categories
    (:func:`resolve_categories`; a boolean column always has ``(False, True)``).
    A single bounds pair applies to the numeric columns, a single category list to
    the others. Only dtypes are looked at, never values.

    Parameters
    ----------
    columns : mapping hashable -> Series
        The frame's columns (``dict(df.items())``).
    bounds, categories, schema, attached
        As in :func:`resolve_bounds` and :func:`resolve_categories`.
    known : iterable of hashable, optional
        Every column label of the data, if ``columns`` is a selection of them; a
        ``bounds`` or ``categories`` key that is neither raises. Defaults to the
        labels of ``columns``.

    Returns
    -------
    DeclaredColumns
        The three groups, each in the order of ``columns``.

    Raises
    ------
    MissingBoundsError
        When no column at all is declared.
    InvalidBoundsError, ValueError
        For an invalid declaration, or a ``bounds``/``categories`` key that is not
        a column.
    """
    wanted = list(columns)
    labels = wanted if known is None else list(known)
    _check_known(bounds, wanted, labels, "bounds")
    _check_known(categories, wanted, labels, "categories")
    named_bounds = bounds if isinstance(bounds, Mapping) else {}
    named_cats = categories if isinstance(categories, Mapping) else {}

    numeric_cols = [
        c
        for c in wanted
        if c in named_bounds
        or (c not in named_cats and _numeric_dtype(getattr(columns[c], "dtype", None)))
    ]
    other_cols = [c for c in wanted if c not in numeric_cols]
    per_bounds = _explicit_bounds(bounds, numeric_cols) if numeric_cols else {}
    if isinstance(categories, str) and categories == DTYPE:  # only where there is one
        per_cats: Mapping[Hashable, Any] = {
            c: DTYPE for c in other_cols if _has_dtype_categories(columns[c])
        }
    else:
        per_cats = _per_column(categories, other_cols)
    sources = _schema_sources(schema, attached)

    numeric: dict[Hashable, NumericDeclaration] = {}
    categorical: dict[Hashable, CategoricalDeclaration] = {}
    undeclared: list[Hashable] = []
    for column in wanted:
        if column in numeric_cols:
            num = _bounds_of(columns, column, per_bounds, sources)
            if num is not None:
                numeric[column] = num
                continue
            if column not in named_bounds:  # e.g. a schema's CategoricalDtype([1, 2, 3])
                cat = _categories_of(columns, column, {}, sources)
                if cat is not None:
                    categorical[column] = cat
                    continue
        else:
            cat = _categories_of(columns, column, per_cats, sources)
            if cat is not None:
                categorical[column] = cat
                continue
        undeclared.append(column)
    if not numeric and not categorical:
        raise MissingBoundsError([str(c) for c in undeclared], what="bounds or categories")
    return DeclaredColumns(numeric, categorical, undeclared)
