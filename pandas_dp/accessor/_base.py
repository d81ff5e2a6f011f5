"""Argument parsing shared by the DataFrame and Series accessors."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import pandas as pd

from pandas_dp import histograms as hist
from pandas_dp import statistics as st
from pandas_dp.declarations import (
    CategoricalDeclaration,
    attached_schema,
    resolve_bounds,
    resolve_categories,
)
from pandas_dp.result import DPFloat, DPInt

Columns = Hashable | Sequence[Hashable] | None


def _is_numeric(series: pd.Series) -> bool:
    dtype = series.dtype
    return bool(pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype))


def _check_numeric(statistic: str, columns: dict[Hashable, pd.Series]) -> None:
    for label, series in columns.items():
        if not _is_numeric(series):
            raise TypeError(
                f"{statistic} needs numeric columns, but column {label!r} has dtype "
                f"{series.dtype}. Convert it (e.g. with pd.to_numeric) or select numeric "
                f"columns only"
            )


class _Base:
    """Shared argument parsing of the two accessors."""

    __slots__ = ("_obj",)

    def __init__(self, pandas_obj: pd.DataFrame | pd.Series) -> None:
        self._obj = pandas_obj

    def _select(self, columns: Columns) -> tuple[dict[Hashable, pd.Series], bool]:
        raise NotImplementedError

    def _schema_for(self, schema: Any) -> Any:
        return schema

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
            selected, bounds=bounds, schema=self._schema_for(schema), attached=attached
        )
        return st.release_moments(
            statistic, selected, decls, settings, scalar=scalar, ddof=ddof, method=method
        )

    def _categorical(
        self, series: pd.Series, categories: Any, schema: Any
    ) -> CategoricalDeclaration:
        attached = attached_schema(self._obj) if categories is None and schema is None else None
        decls = resolve_categories(
            {series.name: series},
            categories=categories,
            schema=self._schema_for(schema),
            attached=attached,
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
            )
        return hist.release_value_counts(
            series,
            decl,
            settings,
            sort=sort,
            ascending=ascending,
            dropna=dropna,
            other=other,
        )
