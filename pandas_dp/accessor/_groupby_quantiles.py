"""``df.dp.groupby(...).quantile`` and ``.median``: quantiles per group.

A mixin of :class:`~pandas_dp.accessor.groupby.DPGroupBy`: it parses the arguments
(columns, ``q``, bounds, the grid) and hands over to
:func:`pandas_dp.stats.quantiles.releases.release_quantiles` with the grouping.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.accessor._base import Columns, _check_numeric
from pandas_dp.accessor._groupby_base import _GroupByBase
from pandas_dp.budget.budgets import PrivacyBudget
from pandas_dp.request.declarations import attached_schema, resolve_bounds
from pandas_dp.stats.quantiles import releases as qmod


class _GroupByQuantiles(_GroupByBase):
    """The quantile releases of a group-by.

    Inherited by :class:`~pandas_dp.accessor.groupby.DPGroupBy`.
    """

    def quantile(
        self,
        columns: Columns = None,
        q: float | Sequence[float] = 0.5,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        bins: int | None = None,
        method: str = "exponential",
        interval: bool = True,
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
    ) -> pd.Series | pd.DataFrame:
        """Noisy quantiles per group, like ``df.groupby(by)[columns].quantile(q)``.

        Per group and column, each quantile is chosen among the edges of
        ``bins`` equal-width bins of the declared bounds by exact
        permute-and-flip (see ``df.dp.quantile``); the groups share the budget
        like every grouped count.

        Parameters
        ----------
        columns : label or list of labels, optional
            One column (a Series) or several (a DataFrame); ``None``: every
            numeric column that is not a group-by column. After ``g[column]`` the
            first argument is ``q``, as in pandas (``g["age"].quantile(0.9)``),
            unless it names a selected column.
        q : float or list of float, default 0.5
            Quantiles in ``[0, 1]``.

        Returns
        -------
        Series or DataFrame
            Indexed by key for a float ``q``, by (key, ``q``) for a list.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 500, "age": [30.0, 50.0, 40.0, 60.0] * 250})
        >>> g = df.dp.groupby("sex", keys=["f", "m"])
        >>> med = g.quantile("age", 0.5, epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> list(med.index), med.name
        (['f', 'm'], 'age')
        >>> qs = g.quantile("age", [0.25, 0.75], epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> list(qs.index)
        [('f', 0.25), ('f', 0.75), ('m', 0.25), ('m', 0.75)]
        """
        kw = dict(locals())
        del kw["self"], kw["columns"], kw["q"]
        if _is_q(columns, self._selection):  # g["age"].quantile(0.5): pandas' q first
            return self._quantile(None, columns, kw, "quantile")
        return self._quantile(columns, q, kw, "quantile")

    def median(
        self,
        columns: Columns = None,
        *,
        epsilon: float,
        skipna: bool = True,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        bins: int | None = None,
        method: str = "exponential",
        interval: bool = True,
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
    ) -> pd.Series | pd.DataFrame:
        """Noisy median per group, like ``df.groupby(by)[columns].median()``.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 500, "age": [30.0, 50.0] * 500})
        >>> m = df.dp.groupby("sex", keys=["f", "m"]).median(
        ...     "age", epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> bool(((m >= 0) & (m <= 100)).all())
        True
        """
        kw = dict(locals())
        del kw["self"], kw["columns"]
        return self._quantile(columns, 0.5, kw, "median")

    def _quantile(
        self, columns: Columns, q: Any, kw: dict[str, Any], statistic: str
    ) -> pd.Series | pd.DataFrame:
        qmod.check_q(q)
        schema = kw.get("schema")
        grouping = self._grouping(schema)
        cols, scalar = self._columns(columns, grouping)
        _check_numeric(statistic, cols)
        settings = self._settings(kw, schema)
        bounds = kw.get("bounds")
        attached = attached_schema(self._frame) if bounds is None and schema is None else None
        decls = resolve_bounds(
            cols, bounds=bounds, schema=schema, attached=attached, known=list(self._frame.columns)
        )
        out = qmod.release_quantiles(
            cols,
            decls,
            q,
            settings,
            scalar=scalar,
            bins=kw.get("bins"),
            method=kw.get("method", "exponential"),
            interval=kw.get("interval", True),
            grouping=grouping,
            frame=self._frame,
            statistic=statistic,
        )
        assert not isinstance(out, float)
        return out


def _is_q(first: Any, selection: Any) -> bool:
    """Whether ``g[...].quantile(first)`` passed quantiles, not columns: a number or
    a list of numbers that are not labels of the selected columns (public)."""
    if selection is None or first is None:
        return False
    labels = selection if isinstance(selection, list) else [selection]
    values = list(first) if isinstance(first, list | tuple) else [first]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    return bool(values) and numbers and not all(v in labels for v in values)
