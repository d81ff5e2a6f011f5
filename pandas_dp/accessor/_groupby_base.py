"""The base of the group-by accessor: its frame, keys, settings and columns.

:class:`_GroupByBase` holds what every release of ``df.dp.groupby(by, keys=...)``
reads first -- the grouping (declared or private keys), the privacy settings of the
call with its privacy unit and contribution bounds (:func:`contributions`, also used
by ``df.dp`` and the command line), and the columns to release. The releases
themselves are in :class:`~pandas_dp.accessor.groupby.DPGroupBy` and the mixins next
to it (:mod:`~pandas_dp.accessor._groupby_quantiles`,
:mod:`~pandas_dp.accessor._groupby_categorical`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd
from pandas.api.types import is_numeric_dtype

from pandas_dp.accessor._arguments import Columns, check_unique, select_columns
from pandas_dp.request.declarations import attached_schema
from pandas_dp.request.grouping import Grouping, resolve_grouping
from pandas_dp.request.grouping_options import GroupByOptions
from pandas_dp.request.settings import Contributions, check_skipna
from pandas_dp.request.unit_declarations import resolve_unit
from pandas_dp.result.dtypes import all_plain, like_pandas
from pandas_dp.result.keys import like_key_dtypes, text_dtype
from pandas_dp.result.labels import like_frame_columns
from pandas_dp.stats import numeric as st

__all__ = ["contributions"]


def contributions(
    frame: pd.DataFrame,
    privacy_unit: Hashable | None,
    max_rows_per_unit: int | None,
    max_groups_per_unit: int | None = None,
    max_rows_per_group: int | None = None,
    *,
    schema: Any = None,
) -> Contributions:
    """The privacy unit and contribution bounds of a release (public; before any charge).

    Explicit arguments win over a schema's ``metadata={"pandas_dp": {...}}``
    (:func:`~pandas_dp.request.unit_declarations.resolve_unit`). Without a unit every row is its
    own unit (all bounds 1); with one, the group bounds default to (and are capped
    by) ``max_rows_per_unit``.
    """
    unit = resolve_unit(
        privacy_unit,
        max_rows_per_unit,
        schema,
        list(frame.columns),
        max_groups_per_unit=max_groups_per_unit,
        max_rows_per_group=max_rows_per_group,
        attached=attached_schema(frame) if schema is None else None,
    )
    if unit is None:
        return Contributions()
    check_unique(frame, [unit.column])
    k = unit.max_rows_per_unit
    g = min(unit.max_groups_per_unit or k, k)
    c = min(unit.max_rows_per_group or k, k)
    return Contributions(unit.column, k, g, c)


class _GroupByBase:
    """What the group-by releases share: the frame, ``by``, the keys and the helpers."""

    if TYPE_CHECKING:  # the catalogue's methods (sum, mean, quantile ...), installed
        # by pandas_dp.accessor._methods: callables to a type checker

        def __getattr__(self, name: str) -> Callable[..., Any]: ...

    def __init__(
        self,
        frame: pd.DataFrame,
        by: Any,
        keys: Any = None,
        *,
        other: Hashable | None = None,
        delta: float = 0.0,
        options: GroupByOptions | None = None,
    ) -> None:
        by = [by] if isinstance(by, tuple) else by  # a tuple is one label, as in pandas
        self._frame, self._by = _with_key_series(frame, by)
        self._keys = keys
        self._other = other
        self._delta = delta
        #: pandas' group-by options (as_index, sort, dropna, observed), checked
        self._options = options or GroupByOptions()
        #: The columns chosen by ``g[column]`` (``None``: not chosen)
        self._selection: Any = None

    def __getitem__(self, columns: Any) -> Any:
        """``g[column]`` or ``g[[columns]]``: the same group-by, releasing those columns
        by default, like pandas' ``df.groupby(by)[column]``."""
        if isinstance(columns, slice) or columns is None:
            raise TypeError(
                f"select columns by label, g['age'] or g[['age', 'income']]; got {columns!r}"
            )
        chosen = copy.copy(self)
        chosen._selection = list(columns) if isinstance(columns, pd.Index) else columns
        return chosen

    def _selected(self, columns: Any) -> Any:
        """``columns`` if given, else those chosen by ``g[...]`` (else ``None``)."""
        return self._selection if columns is None else columns

    def _like_pandas(
        self, name: str, release: Callable[[str, Mapping[str, Any]], Any], arguments: Any
    ) -> Any:
        """``release(name, arguments)`` with the value dtypes pandas gives for the same
        group-by call (:func:`~pandas_dp.result.dtypes.like_pandas`)."""
        out = release(name, arguments)
        frame = self._frame
        out = like_frame_columns(out, frame.columns, rows=False)  # the rows hold keys
        out = like_key_dtypes(out, lambda c: self._text_keys(frame[c].dtype))
        if not isinstance(out, pd.Series | pd.DataFrame) or all_plain(frame.dtypes):
            return out
        meta = out.attrs.get("dp")
        if meta is None:
            return out
        one = self._selection is not None and not isinstance(self._selection, list)
        return like_pandas(
            out,
            name,
            arguments,
            lambda c: frame[c].dtype,
            columns=meta.columns,
            groups=meta.groups,
            one=one,
        )

    # -------------------------------------------------------------- helpers
    def _text_keys(self, dtype: Any) -> Any:
        """The dtype a release's keys of a column of ``dtype`` keep: the column's own
        for text (:func:`~pandas_dp.result.keys.text_dtype`), else ``None``."""
        return text_dtype(dtype)

    def _rows(self, neighbouring: str) -> int | None:
        """The frame's length for the settings (the Dask group-by: only if public)."""
        return len(self._frame)

    def _grouping(self, schema: Any) -> Grouping:
        by = self._by
        check_unique(self._frame, list(by) if isinstance(by, list | tuple | pd.Index) else [by])
        return resolve_grouping(
            self._frame,
            self._by,
            keys=self._keys,
            schema=schema,
            other=self._other,
            delta=self._delta,
            sort=self._options.sort,
            dropna=self._options.dropna,
        )

    def _settings(self, kw: dict[str, Any], schema: Any) -> st.Settings:
        check_skipna(kw.get("skipna", True))
        frame = self._frame
        return st.Settings(
            kw["epsilon"],
            kw.get("delta", 0.0),
            kw.get("mechanism", "laplace"),
            kw.get("bounding", "bit"),
            kw.get("neighbouring", "add_remove"),
            kw.get("out_of_bounds", "clip"),
            kw.get("random_state"),
            kw.get("budget"),
            self._rows(kw.get("neighbouring", "add_remove")),
            contributions(
                frame,
                kw.get("privacy_unit"),
                kw.get("max_rows_per_unit"),
                kw.get("max_groups_per_unit"),
                kw.get("max_rows_per_group"),
                schema=schema,
            ),
        )

    def _columns(
        self, columns: Columns, grouping: Grouping, *, numeric: bool = True
    ) -> tuple[dict[Hashable, pd.Series], bool]:
        """The columns named (``None``: every column but the keys, the numeric
        ones only when ``numeric``) and whether one was named as a scalar."""
        frame = self._frame

        def default(c: Hashable) -> bool:
            return c not in grouping.by and (not numeric or is_numeric_dtype(frame[c]))

        none = "no columns to release; name at least one column"
        return select_columns(frame, self._selected(columns), default, none, none)


def _with_key_series(frame: pd.DataFrame, by: Any) -> tuple[pd.DataFrame, Any]:
    """``by`` as column labels: a pandas Series among them (``groupby(df["g"])``)
    joins the frame as the column of its name, aligned on the index as pandas
    aligns it (a row without a key has a missing key, in no declared group).

    The check is on the Series' name only (public): it needs one, the label of the
    result's index.
    """
    items = by if isinstance(by, list) else [by]
    series = [b for b in items if isinstance(b, pd.Series)]
    if not series:
        return frame, by
    if any(b.name is None for b in series):
        raise ValueError(
            "groupby by a Series needs a named Series (its name labels the result's "
            "index): df.dp.groupby(s.rename('key'), ...), or group by a column label"
        )
    frame = frame.copy(deep=False)
    for b in series:
        frame[b.name] = b  # aligned on the index
    labels = [b.name if isinstance(b, pd.Series) else b for b in items]
    return frame, labels if isinstance(by, list) else labels[0]
