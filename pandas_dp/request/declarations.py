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

Categories come from ``categories=``, a schema's ``isin`` check, a
:class:`pandas.CategoricalDtype` *declared in the schema*, or the two values of a
boolean column. A data column's own categorical dtype is not a declaration
(``astype("category")`` reads the data); it is used only when asked for with
``categories="dtype"``.

This module holds the entry points: :func:`resolve_bounds`,
:func:`resolve_categories` and :func:`split_declared` (for ``describe``) resolve
every column a release reads, in the order above, and name all the undeclared
ones at once; :func:`schema_columns` and :func:`attached_schema` find the
schemas. What one column declares is read by :mod:`pandas_dp.request.declared_columns`
(bounds: which pandera checks declare them, how they are validated) and
:mod:`pandas_dp.request.category_declarations` (categories).

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

import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd

from pandas_dp.errors import InvalidBoundsError, MissingBoundsError
from pandas_dp.request.category_declarations import DTYPE, CategoricalDeclaration, categories_of
from pandas_dp.request.declared_columns import (
    NumericDeclaration,
    bool_dtype,
    bounds_of,
    bounds_pair,
    half_bounds,
    pandera_module,
)

__all__ = [
    "OUT_OF_BOUNDS",
    "DeclaredColumns",
    "attached_schema",
    "check_out_of_bounds",
    "resolve_bounds",
    "resolve_categories",
    "schema_columns",
    "split_declared",
]

OUT_OF_BOUNDS: tuple[str, ...] = ("clip", "raise")

_D = TypeVar("_D")


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


def schema_columns(schema: Any) -> dict[Hashable, Any]:
    """The ``name -> pandera Column`` mapping of any schema-like object.

    Parameters
    ----------
    schema : DataFrameSchema, DataFrameModel class, SeriesSchema, Column or dict
        A ``SeriesSchema`` or ``Column`` is keyed by its name; a dict maps
        column labels to pandera columns. An instance of a ``DataFrameModel``
        declares what its class declares.

    Returns
    -------
    dict
        Column label -> pandera column.

    Raises
    ------
    TypeError
        For anything else, such as a dict of ``(lower, upper)`` pairs (that is
        ``bounds=``); the message says to pass a model's class, not ``Model()``.
    """
    pa = pandera_module()
    if isinstance(schema, Mapping):  # column label -> pandera Column
        _check_schema_dict(schema, pa)
        return dict(schema)
    if isinstance(schema, pa.DataFrameModel):  # an instance: its class declares the columns
        schema = type(schema)
    if isinstance(schema, type) and issubclass(schema, pa.DataFrameModel):
        model: Any = schema
        schema = model.to_schema()
    if isinstance(schema, pa.DataFrameSchema):
        return dict(schema.columns)
    if isinstance(schema, pa.Column | pa.SeriesSchema):
        return {schema.name: schema}
    raise TypeError(
        f"schema must be a pandera DataFrameSchema or DataFrameModel class (pass the "
        f"class itself, Model, not Model()), a SeriesSchema, a Column or a dict column -> "
        f"pa.Column; got {type(schema).__name__}. For plain numbers use bounds=(lower, "
        f"upper) or bounds={{column: (lower, upper)}}"
    )


def _check_schema_dict(schema: Mapping[Hashable, Any], pa: Any) -> None:
    """Refuse a ``schema=`` dict whose values are not pandera columns (e.g. bounds)."""
    for label, value in schema.items():
        if not isinstance(value, pa.Column | pa.SeriesSchema):
            raise TypeError(
                f"schema must be a pandera DataFrameSchema or DataFrameModel class (or a "
                f"dict column -> pa.Column), but schema[{label!r}] is {value!r} (of type "
                f"{type(value).__name__}). Declare plain bounds with bounds={{{label!r}: "
                f"(lower, upper)}} and categories with categories={{{label!r}: [...]}}, or "
                f"use pa.DataFrameSchema({{{label!r}: pa.Column(float, "
                f"pa.Check.in_range(lower, upper))}})"
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


_Sources = list[tuple[dict[Hashable, Any], str]]


def _resolve(
    columns: Any,
    given: Any,
    name: str,
    per_column: Callable[[Any, list[Hashable]], Mapping[Hashable, Any]],
    find: Callable[[Any, Hashable, Mapping[Hashable, Any], _Sources], _D | None],
    *,
    schema: Any,
    attached: Any,
    known: Iterable[Hashable] | None,
    what: str,
    note: Callable[[Hashable, _Sources], str | None] | None = None,
) -> dict[Hashable, _D]:
    """The declaration ``find`` gives each column (:func:`resolve_bounds`,
    :func:`resolve_categories`): ``given`` (the ``name=`` argument, as
    ``per_column`` spreads it over the columns) first, then the schemas.

    Raises :class:`~pandas_dp.MissingBoundsError` naming every column without one,
    with ``note(column, sources)`` of each where it says more.
    """
    wanted = list(columns)
    _check_known(given, wanted, known, name)
    explicit = per_column(given, wanted)
    sources = _schema_sources(schema, attached)
    out: dict[Hashable, _D] = {}
    missing: list[str] = []
    for column in wanted:
        found = find(columns, column, explicit, sources)
        if found is None:
            missing.append(str(column))
        else:
            out[column] = found
    if missing:
        notes = [n for c in wanted if str(c) in missing and note and (n := note(c, sources))]
        raise MissingBoundsError(missing, what=what, note="; ".join(notes))
    return out


def _explicit_bounds(bounds: Any, wanted: list[Hashable]) -> Mapping[Hashable, Any]:
    if bounds is not None and not isinstance(bounds, Mapping):
        bounds = bounds_pair(bounds, wanted[0] if len(wanted) == 1 else "(every column)")
    return _per_column(bounds, wanted)


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
        Naming *every* column without bounds, with how to declare them (and which
        bound is missing where a schema declares only one).
    TypeError
        For a ``schema`` that is no pandera schema (see :func:`schema_columns`).
    InvalidBoundsError
        For NaN, infinite, non-numeric or not increasing bounds, bounds whose width
        overflows, or (with ``known``) a ``bounds`` key that is not a column.
    """
    return _resolve(
        columns,
        bounds,
        "bounds",
        _explicit_bounds,
        bounds_of,
        schema=schema,
        attached=attached,
        known=known,
        what="bounds",
        note=half_bounds,
    )


def resolve_categories(
    columns: Mapping[Hashable, Any],
    *,
    categories: Any,
    schema: Any,
    attached: Any,
    known: Iterable[Hashable] | None = None,
    what: str = "categories",
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
    what : {"categories", "keys"}, default "categories"
        What the caller calls the categories: ``"keys"`` (a group-by) makes a
        :class:`~pandas_dp.MissingBoundsError` explain ``groupby``'s ``keys=``.

    Returns
    -------
    dict
        Column label -> :class:`CategoricalDeclaration`, in the order of ``columns``.

    Raises
    ------
    MissingBoundsError
        Naming every column without declared categories.
    ValueError
        For an empty or repeating category list (``categories=`` or a schema's
        ``isin``), ``"dtype"`` on a column without a categorical dtype, or (with
        ``known``) a ``categories`` key that is not a column.
    TypeError
        For a category that is not hashable (``categories=[["a"]]``).
    """
    return _resolve(
        columns,
        categories,
        "categories",
        _per_column,
        categories_of,
        schema=schema,
        attached=attached,
        known=known,
        what=what,
    )


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
    return isinstance(dtype, pd.CategoricalDtype) or bool_dtype(dtype)


def _numeric_dtype(dtype: Any) -> bool:
    return bool(pd.api.types.is_numeric_dtype(dtype)) and not bool_dtype(dtype)


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
            num = bounds_of(columns, column, per_bounds, sources)
            if num is not None:
                numeric[column] = num
                continue
            if column not in named_bounds:  # e.g. a schema's CategoricalDtype([1, 2, 3])
                cat = categories_of(columns, column, {}, sources)
                if cat is not None:
                    categorical[column] = cat
                    continue
        else:
            cat = categories_of(columns, column, per_cats, sources)
            if cat is not None:
                categorical[column] = cat
                continue
        undeclared.append(column)
    if not numeric and not categorical:
        raise MissingBoundsError([str(c) for c in undeclared], what="bounds or categories")
    return DeclaredColumns(numeric, categorical, undeclared)
