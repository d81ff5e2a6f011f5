"""Argument parsing shared by the DataFrame and Series accessors."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pandas_dp.errors import MissingBoundsError
from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.declarations import (
    attached_schema,
    resolve_bounds,
    resolve_categories,
    split_declared,
)
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.settings import Contributions, check_seed, check_skipna
from pandas_dp.request.unit_declarations import resolve_unit
from pandas_dp.result.values import DPFloat, DPInt
from pandas_dp.stats import histograms as hist
from pandas_dp.stats import numeric as st
from pandas_dp.stats.quantiles.agg import AGG_QUANTILES

Columns = Hashable | Sequence[Hashable] | None

#: A Series' contributions: each row its own unit (frozen, so one serves every call).
ONE_ROW_PER_UNIT = Contributions()


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


def moment_declarations(
    columns: dict[Hashable, pd.Series],
    requests: Mapping[Hashable, Sequence[str]],
    *,
    bounds: Any,
    schema: Any,
    attached: Any,
    known: list[Hashable] | None,
) -> dict[Hashable, NumericDeclaration]:
    """Declared bounds of the columns whose statistics need them (a count needs none)."""
    needing = {c: columns[c] for c, sts in requests.items() if set(sts) - {"count"}}
    if needing:
        wanted = {s for c in needing for s in requests[c]} - {"count"}
        _check_numeric("/".join(sorted(wanted)), needing)
    decls = (
        resolve_bounds(needing, bounds=bounds, schema=schema, attached=attached, known=known)
        if needing
        else {}
    )
    for c in columns:  # count alone reads no bounds
        decls.setdefault(c, NumericDeclaration(c, 0.0, 1.0))
    return decls


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


#: Keywords ``df.dp(...)`` may bind as defaults for every method that takes them.
BINDABLE: tuple[str, ...] = (
    "epsilon",
    "delta",
    "bounds",
    "categories",
    "schema",
    "mechanism",
    "bounding",
    "neighbouring",
    "out_of_bounds",
    "random_state",
    "budget",
    "privacy_unit",
    "max_rows_per_unit",
    "max_groups_per_unit",
    "max_rows_per_group",
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


#: Bound keywords a release may not drop: they declare who is protected.
_UNIT_KEYWORDS = ("privacy_unit", "max_rows_per_unit")


class BoundAccessor:
    """The accessor with keyword defaults bound: what ``df.dp(schema=..., ...)`` returns.

    Every method of the accessor is available; a bound keyword is passed to each
    method that takes it, unless the call gives it explicitly. An integer
    ``random_state`` becomes one generator, so successive releases draw fresh
    (reproducible) noise rather than the same noise again.

    Examples
    --------
    >>> import pandas as pd, pandas_dp
    >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 25})
    >>> dp = df.dp(bounds=(0, 100), random_state=0)
    >>> m = dp.mean("age", epsilon=1.0)
    >>> m.attrs["dp"].input_bounds
    {'age': (0.0, 100.0)}
    """

    __slots__ = ("_accessor", "_defaults")

    def __init__(self, accessor: Any, defaults: dict[str, Any]) -> None:
        self._accessor = accessor
        self._defaults = defaults

    def __call__(self, **defaults: Any) -> BoundAccessor:
        """More defaults on top of these."""
        bound: BoundAccessor = self._accessor(**{**self._defaults, **defaults})
        return bound

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._accessor, name)
        if name.startswith("_") or not callable(attr):
            return attr
        params = inspect.signature(attr).parameters
        bound = {k: v for k, v in self._defaults.items() if k in params}
        if name == "groupby":  # its delta is partition selection's, not a default's
            bound.pop("delta", None)
        # a release that cannot take a bound privacy unit must not drop it silently
        dropped = [k for k in _UNIT_KEYWORDS if k in self._defaults and k not in params]
        unit_lost = bool(dropped) and name != "groupby"  # (a group-by keeps the defaults)

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            if unit_lost:
                raise TypeError(
                    f"{name}() cannot honour the bound {dropped}: it has no privacy "
                    f"unit (a Series holds no unit column). Bind the unit on the frame's "
                    f"accessor, df.dp(privacy_unit=..., max_rows_per_unit=...)"
                )
            out = attr(*args, **{**bound, **kwargs})
            if getattr(out, "_bindable", False):  # a group-by keeps the defaults
                return BoundAccessor(out, self._defaults)
            return out

        return call

    def __getitem__(self, columns: Any) -> BoundAccessor:
        """``dp.groupby(k)[column]`` keeps the bound defaults."""
        return BoundAccessor(self._accessor[columns], self._defaults)

    def __dir__(self) -> list[str]:
        return [n for n in dir(self._accessor) if not n.startswith("_")]

    def __repr__(self) -> str:
        keys = ", ".join(sorted(self._defaults))
        return f"<{type(self._accessor).__name__} with defaults for {keys}>"


class _Base:
    """Shared argument parsing of the two accessors."""

    if TYPE_CHECKING:  # the catalogue's methods (sum, mean, var ...), installed by
        # pandas_dp.accessor._moment_methods: callables to a type checker

        def __getattr__(self, name: str) -> Callable[..., Any]: ...

    __slots__ = ("_obj",)

    def __init__(self, pandas_obj: pd.DataFrame | pd.Series) -> None:
        self._obj = pandas_obj

    def __call__(self, **defaults: Any) -> BoundAccessor:
        """Bind keyword defaults: ``dp = df.dp(schema=schema, budget=budget)``.

        Parameters
        ----------
        **defaults
            Any of ``epsilon``, ``delta``, ``bounds``, ``categories``, ``schema``,
            ``mechanism``, ``bounding``, ``neighbouring``, ``out_of_bounds``,
            ``random_state``, ``budget``.

        Returns
        -------
        BoundAccessor
        """
        unknown = sorted(set(defaults) - set(BINDABLE))
        if unknown:
            raise TypeError(
                f"df.dp(...) cannot bind {unknown}; it binds the shared keywords "
                f"{list(BINDABLE)}. Pass other arguments to the method itself"
            )
        rs = check_seed(defaults.get("random_state"))
        if isinstance(rs, int | np.integer) and not isinstance(rs, bool):
            defaults["random_state"] = np.random.default_rng(int(rs))
        return BoundAccessor(self, defaults)

    def _select(self, columns: Columns) -> tuple[dict[Hashable, pd.Series], bool]:
        raise NotImplementedError

    def _settings(self, kw: Mapping[str, Any]) -> st.Settings:
        """The privacy settings of a call, from its keyword arguments (``locals()``).

        Every method passes its own arguments here, so one place reads ``epsilon``,
        ``delta``, ``mechanism``, ``bounding``, ``neighbouring``, ``out_of_bounds``,
        ``random_state``, ``budget`` and the privacy unit (from the arguments or the
        schema) -- public facts only.
        """
        check_skipna(kw.get("skipna", True))
        neighbouring = kw["neighbouring"]
        return st.Settings(
            kw["epsilon"],
            kw["delta"],
            kw["mechanism"],
            kw["bounding"],
            neighbouring,
            kw.get("out_of_bounds", "clip"),
            kw["random_state"],
            kw["budget"],
            self._rows(neighbouring),
            self._contributions(
                kw.get("privacy_unit"), kw.get("max_rows_per_unit"), kw.get("schema")
            ),
        )

    def _contributions(
        self, privacy_unit: Hashable | None, max_rows_per_unit: int | None, schema: Any
    ) -> Contributions:
        """The privacy unit and its bound (a Series has no unit: one row per unit).

        A unit declared for it -- by argument, or by a frame's schema -- is refused:
        the Series does not hold the unit's column, so it cannot bound a unit's rows.
        """
        frame_schema = isinstance(schema, type) or hasattr(schema, "columns")
        declared = privacy_unit is not None or max_rows_per_unit is not None
        if not declared and frame_schema:
            declared = resolve_unit(schema=schema) is not None
        if declared:
            raise TypeError(
                "a privacy unit (privacy_unit=, or one declared by the schema's "
                "metadata) needs the frame that holds the unit column; call the "
                "DataFrame's accessor, e.g. df.dp.mean('column', ...), instead of the "
                "Series' (a Series release would count each row as a person)"
            )
        return ONE_ROW_PER_UNIT

    def _rows(self, neighbouring: str) -> int | None:
        """The frame's length for :class:`~pandas_dp.request.settings.Settings` (public only under
        ``"substitute"``; the Dask accessor computes it only then)."""
        return len(self._obj)

    def _schema_for(self, schema: Any) -> Any:
        return schema

    def _frame(self) -> pd.DataFrame | None:
        """The frame (where a privacy unit's column lives), or ``None`` for a Series."""
        return self._obj if isinstance(self._obj, pd.DataFrame) else None

    def _known(self) -> list[Hashable] | None:
        """The labels a ``bounds``/``categories`` dict may name (``None``: unchecked)."""
        return None

    def _release_moment(self, statistic: str, arguments: Mapping[str, Any]) -> Any:
        """The release of a catalogue moment method (``sum``, ``mean``, ``var`` ...,
        made by :mod:`pandas_dp.accessor._moment_methods`) from its arguments."""
        check_min_count(arguments.get("min_count", 0))
        columns = arguments.get("columns")
        frame = self._obj
        if (
            arguments.get("numeric_only")
            and isinstance(frame, pd.DataFrame)
            and columns is not None
        ):
            columns = numeric_labels(columns, frame)
        return self._moment(
            statistic,
            columns,
            bounds=arguments["bounds"],
            schema=arguments["schema"],
            settings=self._settings(arguments),
            ddof=arguments.get("ddof", 1),
            method=arguments.get("method", "auto"),
        )

    def _moment(
        self,
        statistic: str,
        columns: Columns,
        *,
        bounds: Any,
        schema: Any,
        settings: st.Settings,
        ddof: int = 1,
        method: str = "auto",
    ) -> DPFloat | DPInt | pd.Series:
        selected, scalar = self._select(columns)
        _check_numeric(statistic, selected)
        attached = attached_schema(self._obj) if bounds is None and schema is None else None
        decls = resolve_bounds(
            selected,
            bounds=bounds,
            schema=self._schema_for(schema),
            attached=attached,
            known=self._known(),
        )
        result = st.release_moments(
            statistic,
            selected,
            decls,
            settings,
            scalar=scalar,
            ddof=ddof,
            method=method,
            frame=self._frame(),
        )
        assert not isinstance(result, pd.DataFrame)  # ungrouped
        return result

    def _categorical(
        self, series: pd.Series, categories: Any, schema: Any
    ) -> CategoricalDeclaration:
        attached = attached_schema(self._obj) if categories is None and schema is None else None
        decls = resolve_categories(
            {series.name: series},
            categories=categories,
            schema=self._schema_for(schema),
            attached=attached,
            known=self._known(),
        )
        return decls[series.name]

    def _histogram(
        self,
        series: pd.Series,
        *,
        normalize: bool,
        sort: bool,
        ascending: bool,
        dropna: bool,
        categories: Any,
        schema: Any,
        other: Any,
        method: str,
        via: str,
        settings: st.Settings,
        proportions: bool = False,
    ) -> pd.Series:
        hist.check_method(method, via)
        decl = self._categorical(series, categories, schema)
        if normalize or proportions:
            return hist.release_proportions(
                series,
                decl,
                settings,
                method=method,
                via=via,
                dropna=dropna,
                other=other,
                sort=sort,
                ascending=ascending,
                frame=self._frame(),
            )
        return hist.release_value_counts(
            series,
            decl,
            settings,
            sort=sort,
            ascending=ascending,
            dropna=dropna,
            other=other,
            frame=self._frame(),
        )


def describe_columns(
    frame: pd.DataFrame,
    wanted: list[Hashable],
    *,
    strict: bool,
    bounds: Any,
    categories: Any,
    schema: Any,
    attached: Any,
    known: list[Hashable] | None,
) -> tuple[
    dict[Hashable, pd.Series],
    dict[Hashable, NumericDeclaration],
    dict[Hashable, pd.Series],
    dict[Hashable, CategoricalDeclaration],
    list[Hashable],
]:
    """describe's columns: numeric ones with bounds, others with categories (public).

    :func:`~pandas_dp.request.declarations.split_declared` sorts them; this returns the
    numeric columns and their declarations, then the categorical ones, then the
    undeclared labels. With ``strict`` (columns named by the caller) an undeclared
    column raises instead.
    """
    check_unique(frame, wanted)
    declared = split_declared(
        {c: frame[c] for c in wanted},
        bounds=bounds,
        categories=categories,
        schema=schema,
        attached=attached,
        known=known,
    )
    if strict and declared.undeclared:
        raise MissingBoundsError([str(c) for c in declared.undeclared], what="bounds or categories")
    numeric = {c: frame[c] for c in declared.numeric}
    _check_numeric("describe", numeric)  # a text column's values must never reach the engine
    categorical = {c: frame[c] for c in declared.categorical}
    return numeric, declared.numeric, categorical, declared.categorical, declared.undeclared
