"""``df.dp.groupby(...).value_counts`` and ``.proportions``: categories per group.

A mixin of :class:`~pandas_dp.accessor.groupby.DPGroupBy`: the text of both methods
(made from the catalogue, :mod:`pandas_dp.accessor._methods`) and their release,
which resolves the column's declared categories and hands over to
:func:`pandas_dp.stats.grouped.release_group_counts` (every (key, category) pair).
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from pandas_dp.accessor._arguments import declared_categories, missing_dropped
from pandas_dp.accessor._groupby_base import _GroupByBase
from pandas_dp.stats import grouped


class _GroupByCategorical(_GroupByBase):
    """The categorical releases of a group-by.

    Inherited by :class:`~pandas_dp.accessor.groupby.DPGroupBy`.
    """

    _method_docs: ClassVar[dict[str, str]] = {
        "value_counts": """Noisy counts of a column's declared categories per group.

        Like ``df.groupby(by)[column].value_counts()``: a Series indexed by
        (key, category), every declared key and category present. With
        ``normalize=True``, shares within each group (summing to one per group).
        """,
        "proportions": """\
        Conditional distribution of a column within each group, summing to one per group.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 100, "smoker": [True, False, True, True] * 50})
        >>> p = df.dp.groupby("sex", keys=["f", "m"]).proportions(
        ...     "smoker", epsilon=1.0, random_state=0)
        >>> p.groupby(level="sex").sum().round(12).tolist()
        [1.0, 1.0]
        """,
    }

    def _release_categories(self, statistic: str, kw: dict[str, Any]) -> pd.Series:
        """``value_counts`` (``normalize=True``: shares) or ``proportions`` per group."""
        normalize = statistic == "proportions" or kw["normalize"]
        schema = kw.get("schema")
        grouping = self._grouping(schema)
        column = self._selected(kw["column"])
        if column is None or isinstance(column, list):
            raise TypeError(
                f"name one column to count: g.value_counts('region') or "
                f"g['region'].value_counts(); got {column!r}"
            )
        if column not in self._frame.columns:
            raise KeyError(
                f"column {column!r} not in the frame; it has {list(self._frame.columns)}"
            )
        if column in grouping.by:
            raise ValueError(f"{column!r} is a group-by column; count another column")
        series = self._frame[column]
        known = list(self._frame.columns)
        decl = declared_categories(self._frame, series, kw["categories"], schema, known)
        settings = self._settings(kw, schema)
        return grouped.release_group_counts(
            series,
            decl,
            settings,
            grouping,
            self._frame,
            normalize=normalize,
            dropna=missing_dropped(kw.get("dropna", True), series.dtype),
            other=kw.get("other"),
            sort=bool(kw.get("sort", False)),
            ascending=bool(kw.get("ascending", False)),
        )
