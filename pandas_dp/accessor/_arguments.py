"""What the accessors check and resolve in a call's arguments, before any charge.

Column labels as pandas reads them, the checks on dtypes and on pandas keywords
that have no private meaning, ``agg``'s and ``counts``' arguments, and the public
declarations (bounds, categories) of the columns a release reads -- functions of
public facts only (labels, dtypes, declarations), shared by every accessor.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.errors import MissingBoundsError
from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.declarations import (
    DeclaredColumns,
    attached_schema,
    resolve_bounds,
    resolve_categories,
    split_declared,
)
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings
from pandas_dp.stats import numeric as st
from pandas_dp.stats.auto_bounds import check_share, is_auto
from pandas_dp.stats.describe import release_describe
from pandas_dp.stats.describe_auto import auto_columns, release_describe_auto
from pandas_dp.stats.quantiles.agg import AGG_QUANTILES

Columns = Hashable | Sequence[Hashable] | None


def _is_numeric(series: pd.Series) -> bool:
    dtype = series.dtype
    if isinstance(dtype, np.dtype):  # numpy: numbers and booleans (not datetimes)
        return dtype.kind in "biufc"
    return bool(pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


def _check_real(statistic: str, columns: Mapping[Hashable, pd.Series]) -> None:
    """Refuse a complex column (its dtype is public: checked before any charge)."""
    for label, series in columns.items():
        if pd.api.types.is_complex_dtype(series.dtype):
            raise TypeError(
                f"{statistic} needs real-valued columns, but column {label!r} has the "
                f"complex dtype {series.dtype}: pandas-dp would discard its imaginary "
                f"parts. Release the real and imaginary parts as two columns (e.g. "
                f"df.assign(re=np.real(s), im=np.imag(s))), or leave the column out"
            )


def _check_numeric(statistic: str, columns: dict[Hashable, pd.Series]) -> None:
    _check_real(statistic, columns)
    for label, series in columns.items():
        if not _is_numeric(series):
            raise TypeError(
                f"{statistic} needs numeric columns, but column {label!r} has dtype "
                f"{series.dtype}. Convert it (e.g. with pd.to_numeric) or select numeric "
                f"columns only"
            )


def check_not_boolean(
    statistic: str, columns: dict[Hashable, pd.Series], *, nullable: bool = True
) -> None:
    """Refuse a ``quantile`` of a boolean column, as pandas does (before any charge).

    pandas' ``quantile`` interpolates by subtracting values, which True/False do not
    support, and raises ``TypeError``; so does this, with what to use instead.
    pandas' ``median`` of booleans and its group-by quantile of a nullable
    ``boolean`` column do answer, and so are not refused (``nullable=False``).

    Parameters
    ----------
    statistic : str
        The method (``"quantile"``; anything else passes).
    columns : dict
        Label -> column (Series); only the dtypes are read.
    nullable : bool, default True
        Refuse nullable ``boolean`` columns too (pandas' frame and Series quantile).

    Raises
    ------
    TypeError
        If ``statistic`` is ``"quantile"`` and a column is boolean.
    """
    if statistic != "quantile":
        return
    for label, series in columns.items():
        dtype = series.dtype
        if pd.api.types.is_bool_dtype(dtype) and (nullable or dtype == np.dtype(bool)):
            raise TypeError(
                f"quantile of the boolean column {label!r} (dtype {dtype}): pandas raises "
                f"here too, since True/False cannot be interpolated. Use "
                f"proportions({label!r}) for the shares of False and True, or cast the "
                f"column to int first (df.astype({{{label!r}: int}})) for a quantile of 0/1"
            )


#: The statistics ``agg`` releases (the moments from one count, centred sum and
#: centred squares per column; medians from the column's grid).
AGGREGATIONS: tuple[str, ...] = (*st.MOMENT_STATISTICS, *AGG_QUANTILES)


def agg_requests(func: Any) -> dict[Hashable, tuple[str, ...]]:
    """``column -> statistic(s)`` of an ``agg`` call, checked (before any charge)."""
    if not isinstance(func, Mapping) or not func:
        raise TypeError(
            "agg takes a non-empty dict column -> statistic or list of statistics, "
            "e.g. {'age': ['mean', 'std']}"
        )
    requests: dict[Hashable, tuple[str, ...]] = {}
    for column, stats in func.items():
        if callable(stats) or (
            not isinstance(stats, str) and not isinstance(stats, Sequence | pd.Index)
        ):
            raise TypeError(
                f"agg takes statistics by name for {column!r}, e.g. 'mean' or "
                f"['mean', 'std'], not {stats!r}: a function of the data cannot be made "
                f"private; use any of {list(AGGREGATIONS)}"
            )
        listed = (stats,) if isinstance(stats, str) else tuple(stats)
        unknown = [s for s in listed if s not in AGGREGATIONS]
        if unknown or not listed:
            raise ValueError(
                f"agg: unknown statistic(s) {unknown} for {column!r}; use any of "
                f"{list(AGGREGATIONS)}"
            )
        requests[column] = listed
    return requests


def counts_queries(queries: Any) -> dict[Hashable, Any]:
    """The queries of a ``counts`` call as a new dict, or a ``TypeError`` (before any charge).

    ``counts`` takes a dict ``label -> query``, a query being an expression string or
    a boolean mask; a list, a single string or a single mask has no labels.
    """
    if isinstance(queries, Mapping):
        return dict(queries)
    fix = "{'over 30': 'age > 30', 'smokers': df.smoker}"
    if isinstance(queries, str):
        fix = f"{{{queries!r}: {queries!r}}}"
    elif isinstance(queries, list | tuple) and all(isinstance(q, str) for q in queries):
        fix = "{q: q for q in queries}"
    raise TypeError(
        f"counts takes a dict {{label: query}}, each query an expression string such as "
        f"'age > 30' or a boolean mask such as df.age > 30; got a {type(queries).__name__}. "
        f"Label each query, e.g. df.dp.counts({fix}, epsilon=...)"
    )


def column_labels(columns: Columns, known: pd.Index) -> tuple[list[Hashable], bool]:
    """The column labels a ``columns`` argument names, and whether it named one.

    Like pandas' ``df[...]``: a string, a scalar or a tuple that is a column label
    names one column (the result is then a scalar or a Series); a list, tuple or
    Index names several. With MultiIndex columns a label must be a full tuple
    (``df[("g", "x")]``): a partial one would select a whole frame.
    """
    named_one = isinstance(columns, str) or not isinstance(columns, Sequence | pd.Index)
    if not named_one and isinstance(columns, tuple):
        try:
            named_one = columns in known
        except TypeError:  # an unhashable element: a list of labels after all
            named_one = False
    labels = [columns] if named_one else list(columns)  # type: ignore[arg-type]
    if isinstance(known, pd.MultiIndex):
        partial = [c for c in labels if not (isinstance(c, tuple) and len(c) == known.nlevels)]
        if partial:
            raise KeyError(
                f"the frame's columns are a MultiIndex of {known.nlevels} levels, and "
                f"{partial} is not a full column label; name each column by its tuple, e.g. "
                f"{known[0]!r}, or flatten the columns first "
                f"(df.columns = ['_'.join(map(str, c)) for c in df.columns])"
            )
    return labels, named_one


def check_min_count(min_count: Any) -> None:
    """pandas' ``sum(min_count=...)``: only its default, 0, has a private meaning."""
    if isinstance(min_count, bool) or min_count != 0:
        raise ValueError(
            f"min_count={min_count!r} is not supported: pandas answers NaN when fewer than "
            f"min_count values are present, which would reveal the private count. "
            f"pandas-dp releases the sum whatever the count (min_count=0, pandas' default)"
        )


def numeric_labels(columns: Columns, frame: pd.DataFrame) -> Any:
    """``columns`` less its non-numeric ones (``numeric_only=True``; dtypes are public):
    a label if ``columns`` named one, else a list."""
    labels, one = column_labels(columns, frame.columns)
    kept = [c for c in labels if c in frame.columns and _is_numeric(frame[c])]
    if not kept:
        raise TypeError(
            f"numeric_only=True leaves none of the columns {labels}: none is numeric. "
            f"Name a numeric column"
        )
    return kept[0] if one else kept


def check_unique(frame: pd.DataFrame, labels: Sequence[Hashable]) -> None:
    """Refuse labels the frame holds more than once (public: the frame's columns).

    ``frame[label]`` would be a DataFrame, which no release can read; checked
    before the budget is charged.
    """
    if frame.columns.is_unique:
        return
    repeated = sorted({str(c) for c in labels if int((frame.columns == c).sum()) > 1})
    if repeated:
        raise ValueError(
            f"column label(s) {repeated} appear more than once in the frame; a release "
            f"needs one column per label. Rename the columns (e.g. df.columns = [...]) "
            f"or drop the duplicates (df.loc[:, ~df.columns.duplicated()])"
        )


def select_columns(
    frame: pd.DataFrame,
    columns: Columns,
    default: Callable[[Hashable], bool],
    none: str,
    empty: str = "columns is empty; name at least one column",
) -> tuple[dict[Hashable, pd.Series], bool]:
    """The columns ``columns`` names -- with ``None``, every column ``default`` keeps
    -- and whether it named one; ``none`` and ``empty`` say why none is selected."""
    labels: list[Hashable]
    if columns is None:
        check_unique(frame, list(frame.columns))
        labels, scalar = [c for c in frame.columns if default(c)], False
        if not labels:
            raise ValueError(none)
    else:
        labels, scalar = column_labels(columns, frame.columns)
        if not labels:
            raise ValueError(empty)
    return named_columns(frame, labels), scalar


def named_columns(frame: pd.DataFrame, labels: list[Hashable]) -> dict[Hashable, pd.Series]:
    """The columns ``labels`` name, each once and present (else raises)."""
    absent = [c for c in labels if c not in frame.columns]
    if absent:
        raise KeyError(f"column(s) {absent} not in the frame; it has {list(frame.columns)}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"columns {labels} name a column twice")
    check_unique(frame, labels)
    return {c: frame[c] for c in labels}


def declared_bounds(
    data: Any, columns: dict[Hashable, pd.Series], bounds: Any, schema: Any, known: Any
) -> dict[Hashable, NumericDeclaration]:
    """The public bounds of ``columns``: ``bounds``, else ``schema``, else the schema
    pandera attached to ``data``."""
    attached = attached_schema(data) if bounds is None and schema is None else None
    return resolve_bounds(columns, bounds=bounds, schema=schema, attached=attached, known=known)


def declared_categories(
    data: Any, series: pd.Series, categories: Any, schema: Any, known: Any
) -> CategoricalDeclaration:
    """The public categories of one column, as :func:`declared_bounds` finds bounds."""
    attached = attached_schema(data) if categories is None and schema is None else None
    return resolve_categories(
        {series.name: series},
        categories=categories,
        schema=schema,
        attached=attached,
        known=known,
    )[series.name]


def moment_declarations(
    data: Any,
    columns: dict[Hashable, pd.Series],
    requests: Mapping[Hashable, Sequence[str]],
    *,
    bounds: Any,
    schema: Any,
    known: list[Hashable] | None,
) -> dict[Hashable, NumericDeclaration]:
    """Declared bounds of the columns whose statistics need them (a count needs none)."""
    needing = {c: columns[c] for c, sts in requests.items() if set(sts) - {"count"}}
    if needing:
        wanted = {s for c in needing for s in requests[c]} - {"count"}
        _check_numeric("/".join(sorted(wanted)), needing)
    decls = declared_bounds(data, needing, bounds, schema, known) if needing else {}
    for c in columns:  # count alone reads no bounds
        decls.setdefault(c, NumericDeclaration(c, 0.0, 1.0))
    return decls


def release_described(
    frame: pd.DataFrame,
    wanted: list[Hashable],
    arguments: Mapping[str, Any],
    settings: Settings,
    *,
    percentiles: tuple[float, ...],
    strict: bool,
    schema: Any,
    known: list[Hashable] | None,
    grouping: Grouping | None = None,
    selection_delta: float | None = None,
) -> pd.DataFrame:
    """``describe`` of the ``wanted`` columns: numeric ones with bounds, others with
    categories (public), in one release.

    :func:`~pandas_dp.request.declarations.split_declared` sorts them; with ``strict``
    (columns named by the caller) an undeclared column raises, else it is skipped
    and listed in the metadata. ``bounds="auto"``: what is not declared is
    estimated privately first (:mod:`pandas_dp.stats.describe_auto`), with
    ``selection_delta`` (Laplace noise) the delta of its category selections.
    """
    bounds, categories = arguments["bounds"], arguments["categories"]
    check_share(arguments["bounds_epsilon_share"])  # also where no bounds are estimated
    auto = is_auto(bounds)
    if auto:  # what is declared stays declared; the rest is estimated (describe_auto)
        bounds = None
    undeclared = bounds is None and arguments["schema"] is None and categories is None
    check_unique(frame, wanted)
    columns = {c: frame[c] for c in wanted}
    try:
        declared = split_declared(
            columns,
            bounds=bounds,
            categories=categories,
            schema=schema,
            attached=attached_schema(frame) if undeclared else None,
            known=known,
        )
    except MissingBoundsError:
        if not auto:
            raise
        declared = DeclaredColumns({}, {}, list(wanted))
    left = declared.undeclared
    if auto and strict:  # named columns: only those auto cannot describe are missing
        left = auto_columns(columns, declared.undeclared).other
    if strict and left:
        raise MissingBoundsError([str(c) for c in left], what="bounds or categories")
    numeric = {c: frame[c] for c in declared.numeric}
    _check_numeric("describe", numeric)  # a text column's values must never reach the engine
    if auto:
        return release_describe_auto(
            frame,
            declared.numeric,
            declared.categorical,
            declared.undeclared,
            settings,
            percentiles=percentiles,
            bins=arguments["bins"],
            method=arguments["method"],
            grouping=grouping,
            selection_delta=selection_delta,
            shares=arguments["shares"],
            histogram=arguments["histogram"],
            bounds_epsilon_share=arguments["bounds_epsilon_share"],
        )
    return release_describe(
        numeric,
        declared.numeric,
        {c: frame[c] for c in declared.categorical},
        declared.categorical,
        settings,
        undeclared=declared.undeclared,
        frame=frame,
        percentiles=percentiles,
        bins=arguments["bins"],
        method=arguments["method"],
        grouping=grouping,
        shares=arguments["shares"],
        histogram=arguments["histogram"],
    )


def missing_dropped(dropna: Any, dtype: Any) -> Any:
    """``dropna`` as a release reads it: ``True`` also for a dtype that holds no
    missing value (numpy integers and booleans), whose missing bucket pandas never
    shows (the dtype is public, so nothing is learned from leaving the bucket out)."""
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        return True
    return dropna
