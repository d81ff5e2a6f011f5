"""``df.dp.groupby(...).value_counts`` and ``.proportions``: categories per group.

A mixin of :class:`~pandas_dp.accessor.groupby.DPGroupBy`: it resolves the column's
declared categories and hands over to :func:`pandas_dp.stats.grouped.release_group_counts`,
which counts every (key, category) pair.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.accessor._groupby_base import _GroupByBase
from pandas_dp.budget.budgets import PrivacyBudget
from pandas_dp.request.declarations import attached_schema, resolve_categories
from pandas_dp.stats import grouped


class _GroupByCategorical(_GroupByBase):
    """The categorical releases of a group-by.

    Inherited by :class:`~pandas_dp.accessor.groupby.DPGroupBy`.
    """

    def value_counts(
        self,
        column: Hashable = None,
        normalize: bool = False,
        dropna: bool = True,
        *,
        epsilon: float,
        delta: float = 0.0,
        categories: Any = None,
        schema: Any = None,
        other: Any = None,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
        max_groups_per_unit: int | None = None,
        max_rows_per_group: int | None = None,
    ) -> pd.Series:
        """Noisy counts of a column's declared categories per group.

        Like ``df.groupby(by)[column].value_counts()``: a Series indexed by
        (key, category), every declared key and category present. With
        ``normalize=True``, shares within each group (summing to one per group).
        """
        kw = dict(locals())
        del kw["self"]
        return self._histogram(kw, normalize=normalize)

    def proportions(
        self,
        column: Hashable = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        categories: Any = None,
        schema: Any = None,
        dropna: bool = True,
        other: Any = None,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
        max_groups_per_unit: int | None = None,
        max_rows_per_group: int | None = None,
    ) -> pd.Series:
        """Conditional distribution of a column within each group, summing to one per group.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 100, "smoker": [True, False, True, True] * 50})
        >>> p = df.dp.groupby("sex", keys=["f", "m"]).proportions(
        ...     "smoker", epsilon=1.0, random_state=0)
        >>> p.groupby(level="sex").sum().round(12).tolist()
        [1.0, 1.0]
        """
        kw = dict(locals())
        del kw["self"]
        return self._histogram(kw, normalize=True)

    def _histogram(self, kw: dict[str, Any], *, normalize: bool) -> pd.Series:
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
        categories = kw.get("categories")
        attached = attached_schema(self._frame) if categories is None and schema is None else None
        decl = resolve_categories(
            {column: series},
            categories=categories,
            schema=schema,
            attached=attached,
            known=list(self._frame.columns),
        )[column]
        settings = self._settings(kw, schema)
        return grouped.release_group_counts(
            series,
            decl,
            settings,
            grouping,
            self._frame,
            normalize=normalize,
            dropna=kw.get("dropna", True),
            other=kw.get("other"),
        )
