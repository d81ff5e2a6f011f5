"""What the DataFrame and Series accessors share: the call's settings, the column
declarations, and the releases a Series makes as a frame's column does.

The methods themselves are made from the catalogue (:mod:`pandas_dp.accessor._methods`);
each hands its arguments to a ``_release_<family>`` here or in the accessor's class.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pandas_dp.accessor._arguments import (
    Columns,
    _check_numeric,
    check_min_count,
    check_not_boolean,
    declared_bounds,
    declared_categories,
    missing_dropped,
    numeric_labels,
)
from pandas_dp.accessor._bound import BINDABLE, BoundAccessor
from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.settings import Contributions, check_seed, check_skipna
from pandas_dp.request.unit_declarations import resolve_unit
from pandas_dp.result.dtypes import all_plain, like_pandas
from pandas_dp.result.keys import like_key_dtypes, text_dtype
from pandas_dp.result.labels import VALUE_ROWS, like_frame_columns
from pandas_dp.result.values import DPFloat, DPInt
from pandas_dp.stats import auto_bounds
from pandas_dp.stats import histograms as hist
from pandas_dp.stats import numeric as st
from pandas_dp.stats.moments import check_ddof
from pandas_dp.stats.quantiles import releases as qmod

#: A Series' contributions: each row its own unit (frozen, so one serves every call).
ONE_ROW_PER_UNIT = Contributions()


class _Base:
    """Shared argument parsing of the two accessors."""

    if TYPE_CHECKING:  # the catalogue's methods (sum, mean, quantile ...), installed
        # by pandas_dp.accessor._methods: callables to a type checker

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

    def _text_keys(self, dtype: Any) -> Any:
        """The dtype a release's keys of a column of ``dtype`` keep: the column's own
        for text (:func:`~pandas_dp.result.keys.text_dtype`), else ``None``."""
        return text_dtype(dtype)

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

    def _own(self, declared: Any) -> Any:
        """A ``bounds`` argument as this accessor reads it (a Series: its own entry)."""
        return declared

    def _declare(
        self, selected: dict[Hashable, pd.Series], bounds: Any, schema: Any
    ) -> dict[Hashable, NumericDeclaration]:
        """The declared bounds of the selected columns (public facts only)."""
        return declared_bounds(self._obj, selected, bounds, self._schema_for(schema), self._known())

    def _like_pandas(
        self, name: str, release: Callable[[str, Mapping[str, Any]], Any], arguments: Any
    ) -> Any:
        """``release(name, arguments)`` with the value dtypes pandas gives for the same
        call on this frame or Series (:func:`~pandas_dp.result.dtypes.like_pandas`;
        plain numpy columns need no look)."""
        out = release(name, arguments)
        if not isinstance(out, pd.Series | pd.DataFrame):  # a scalar: a Python number
            return out
        obj: Any = self._obj
        if self._frame() is not None:  # the frame's column structure on the label axes
            out = like_frame_columns(out, obj.columns, rows=name not in VALUE_ROWS)
            out = like_key_dtypes(out, lambda c: self._text_keys(obj[c].dtype))
        else:
            out = like_key_dtypes(
                out, lambda c: self._text_keys(obj.dtype) if c == obj.name else None
            )
        if all_plain(obj.dtype if self._frame() is None else obj.dtypes):
            return out
        meta = out.attrs.get("dp")
        if meta is None:
            return out
        if self._frame() is None:
            return like_pandas(
                out, name, arguments, lambda c: obj.dtype, columns=meta.columns, series=True
            )
        return like_pandas(out, name, arguments, lambda c: obj[c].dtype, columns=meta.columns)

    def _release_moment(self, statistic: str, arguments: Mapping[str, Any]) -> Any:
        """The release of a catalogue moment method (``sum``, ``mean``, ``var`` ...,
        made by :mod:`pandas_dp.accessor._methods`) from its arguments."""
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
            bounds=self._own(arguments["bounds"]),
            schema=arguments["schema"],
            settings=self._settings(arguments),
            ddof=arguments.get("ddof", 1),
            method=arguments.get("method", "auto"),
            share=arguments.get("bounds_epsilon_share", auto_bounds.DEFAULT_SHARE),
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
        share: float = auto_bounds.DEFAULT_SHARE,
    ) -> DPFloat | DPInt | pd.Series:
        selected, scalar = self._select(columns)
        _check_numeric(statistic, selected)
        if auto_bounds.is_auto(bounds):  # the release's own checks first: the bounds cost budget
            st.resolve_method(method, settings)
            check_ddof(ddof)
        bounds, settings, auto = auto_bounds.resolve_if_auto(
            bounds, selected, settings, self._frame(), bounds_epsilon_share=share
        )
        decls = self._declare(selected, bounds, schema)
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
        annotated: DPFloat | DPInt | pd.Series = auto_bounds.annotate(result, auto)
        return annotated

    def _release_len(self, statistic: str, arguments: Mapping[str, Any]) -> DPInt:
        """``len``: the noisy number of rows."""
        return st.release_len(self._settings(arguments), self._frame())

    def _release_quantile(self, statistic: str, arguments: Mapping[str, Any]) -> Any:
        """``quantile`` and ``median`` (the 0.5 quantile) of the selected columns."""
        settings = self._settings(arguments)
        q = arguments.get("q", 0.5)
        qmod.check_q(q)
        selected, scalar = self._select(arguments.get("columns"))
        _check_numeric(statistic, selected)
        check_not_boolean(statistic, selected)  # like pandas: before any charge
        bounds = self._own(arguments["bounds"])
        if auto_bounds.is_auto(bounds):  # the release's own checks first: the bounds cost budget
            qmod.check_method(arguments["method"])
            qmod.check_interval(arguments["interval"])
            if arguments["bins"] is not None:
                qmod.check_bins(arguments["bins"], {})
        bounds, settings, auto = auto_bounds.resolve_if_auto(
            bounds,
            selected,
            settings,
            self._frame(),
            bounds_epsilon_share=arguments["bounds_epsilon_share"],
        )
        out = qmod.release_quantiles(
            selected,
            self._declare(selected, bounds, arguments["schema"]),
            q,
            settings,
            scalar=scalar,
            bins=arguments["bins"],
            method=arguments["method"],
            interval=arguments["interval"],
            frame=self._frame(),
            statistic=statistic,
        )
        if statistic == "median" and isinstance(out, pd.Series):
            out.name = None  # pandas' df.median() has no name
        return auto_bounds.annotate(out, auto)

    def _categorical(
        self, series: pd.Series, categories: Any, schema: Any
    ) -> CategoricalDeclaration:
        return declared_categories(
            self._obj, series, categories, self._schema_for(schema), self._known()
        )

    def _histogram(
        self,
        series: pd.Series,
        statistic: str,
        arguments: Mapping[str, Any],
        settings: st.Settings,
    ) -> pd.Series:
        """``value_counts`` (``normalize=True``: proportions) or ``proportions`` of
        one column's declared categories."""
        method, via = arguments["method"], arguments["via"]
        hist.check_method(method, via)
        decl = self._categorical(series, arguments["categories"], arguments["schema"])
        shown = {k: arguments[k] for k in ("sort", "ascending", "dropna", "other")}
        shown["dropna"] = missing_dropped(shown["dropna"], series.dtype)
        if statistic == "proportions" or arguments["normalize"]:
            return hist.release_proportions(
                series, decl, settings, method=method, via=via, frame=self._frame(), **shown
            )
        return hist.release_value_counts(series, decl, settings, frame=self._frame(), **shown)
