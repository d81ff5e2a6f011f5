"""``df.dp.groupby(...).quantile`` and ``.median``: quantiles per group.

A mixin of :class:`~pandas_dp.accessor.groupby.DPGroupBy`: the text of both methods
(made from the catalogue, :mod:`pandas_dp.accessor._methods`) and their release,
which parses the arguments (columns, ``q``, bounds, the grid) and hands over to
:func:`pandas_dp.stats.quantiles.releases.release_quantiles` with the grouping.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from pandas_dp.accessor._arguments import _check_numeric, check_not_boolean, declared_bounds
from pandas_dp.accessor._groupby_base import _GroupByBase
from pandas_dp.stats import auto_bounds
from pandas_dp.stats.quantiles import releases as qmod


class _GroupByQuantiles(_GroupByBase):
    """The quantile releases of a group-by.

    Inherited by :class:`~pandas_dp.accessor.groupby.DPGroupBy`.
    """

    _method_docs: ClassVar[dict[str, str]] = {
        "quantile": """Noisy quantiles per group, like ``df.groupby(by)[columns].quantile(q)``.

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
        """,
        "median": """Noisy median per group, like ``df.groupby(by)[columns].median()``.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 500, "age": [30.0, 50.0] * 500})
        >>> m = df.dp.groupby("sex", keys=["f", "m"]).median(
        ...     "age", epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> bool(((m >= 0) & (m <= 100)).all())
        True
        """,
    }

    def _release_quantile(self, statistic: str, kw: dict[str, Any]) -> pd.Series | pd.DataFrame:
        """``quantile`` and ``median`` (the 0.5 quantile) per group."""
        columns, q = kw["columns"], kw.get("q", 0.5)
        if statistic == "quantile" and _is_q(columns, self._selection):
            # g["age"].quantile(0.5): pandas' q first
            columns, q = None, columns
        qmod.check_q(q)
        schema = kw.get("schema")
        grouping = self._grouping(schema)
        cols, scalar = self._columns(columns, grouping)
        _check_numeric(statistic, cols)
        # like pandas' group-by: a bool column refused, a nullable boolean one answered
        check_not_boolean(statistic, cols, nullable=False)
        settings = self._settings(kw, schema)
        bounds = kw["bounds"]
        if auto_bounds.is_auto(bounds):  # the release's own checks first: bounds cost budget
            qmod.check_method(kw.get("method", "exponential"))
            qmod.check_interval(kw.get("interval", True))
            if kw.get("bins") is not None:
                qmod.check_bins(kw["bins"], {})
        bounds, settings, auto = auto_bounds.resolve_if_auto(
            bounds, cols, settings, self._frame, bounds_epsilon_share=kw["bounds_epsilon_share"]
        )
        out = qmod.release_quantiles(
            cols,
            declared_bounds(self._frame, cols, bounds, schema, list(self._frame.columns)),
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
        annotated: pd.Series | pd.DataFrame = auto_bounds.annotate(out, auto)
        return annotated


def _is_q(first: Any, selection: Any) -> bool:
    """Whether ``g[...].quantile(first)`` passed quantiles, not columns: a number or
    a list of numbers that are not labels of the selected columns (public)."""
    if selection is None or first is None:
        return False
    labels = selection if isinstance(selection, list) else [selection]
    values = list(first) if isinstance(first, list | tuple) else [first]
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in values)
    return bool(values) and numbers and not all(v in labels for v in values)
