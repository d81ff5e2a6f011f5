"""``df.dp.quantile`` and ``df.dp.median``: the DataFrame accessor's quantile releases.

A mixin of :class:`~pandas_dp.accessor.frame.DPFrameAccessor`: it parses the
arguments (columns, ``q``, bounds, the grid) and hands over to
:func:`pandas_dp.stats.quantiles.releases.release_quantiles`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.accessor._base import Columns, _Base, _check_numeric
from pandas_dp.budget.budgets import PrivacyBudget
from pandas_dp.request.declarations import attached_schema, resolve_bounds
from pandas_dp.result.values import DPFloat
from pandas_dp.stats import numeric as st
from pandas_dp.stats.quantiles import releases as qmod


class _FrameQuantiles(_Base):
    """The quantile releases of ``df.dp``, inherited by its accessor class."""

    __slots__ = ()
    _obj: pd.DataFrame

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
    ) -> DPFloat | pd.Series | pd.DataFrame:
        """Noisy quantiles of bounded numeric columns, like ``df[columns].quantile(q)``.

        The declared bounds are cut into ``bins`` equal-width bins, and each
        quantile is chosen among their edges by an exact permute-and-flip
        selection on its rank (no public ``n`` needed). A list of quantiles is
        selected recursively, the middle one first, then each half among the
        rows on its side, so ``Q`` quantiles cost ``log2(Q + 1)`` selections, not
        ``Q``, and come out non-decreasing. Values are clamped to the bounds;
        missing values are skipped.

        Parameters
        ----------
        columns : label or list of labels, optional
            One column or several; ``None``: every numeric column.
        q : float or list of float, default 0.5
            Quantiles in ``[0, 1]``.

        Returns
        -------
        float, Series or DataFrame
            pandas' shapes: a float for one column and a float ``q``; a Series
            indexed by ``q`` (one column) or by column (one ``q``); else a
            DataFrame indexed by ``q`` with one column per column.
            ``attrs["dp"].interval(alpha)`` bounds each quantile of the clamped
            values.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 250})
        >>> med = df.dp.quantile("age", 0.5, epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> 0 <= med <= 100
        True
        >>> qs = df.dp.quantile("age", [0.25, 0.75], epsilon=1.0, bounds=(0, 100),
        ...                     random_state=0)
        >>> list(qs.index), bool(qs.is_monotonic_increasing)
        ([0.25, 0.75], True)
        """
        settings = self._settings(locals())
        return self._quantile(
            columns, q, bounds, schema, (bins, method, interval), settings, "quantile"
        )

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
    ) -> DPFloat | pd.Series:
        """Noisy median of bounded numeric columns, like ``df[columns].median()``.

        The 0.5 quantile of :meth:`quantile` (same grid and estimator).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 250})
        >>> m = df.dp.median("age", epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> lo, hi = m.attrs["dp"].interval(0.05)
        >>> bool(lo <= hi)
        True
        """
        settings = self._settings(locals())
        out = self._quantile(
            columns, 0.5, bounds, schema, (bins, method, interval), settings, "median"
        )
        if isinstance(out, pd.Series):
            out.name = None  # pandas' df.median() has no name
        assert not isinstance(out, pd.DataFrame)
        return out

    def _quantile(
        self,
        columns: Columns,
        q: Any,
        bounds: Any,
        schema: Any,
        grid: tuple[int | None, str, bool],
        settings: st.Settings,
        statistic: str,
    ) -> DPFloat | pd.Series | pd.DataFrame:
        qmod.check_q(q)
        _q_for_columns(columns, self._obj.columns)
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
        return qmod.release_quantiles(
            selected,
            decls,
            q,
            settings,
            scalar=scalar,
            bins=grid[0],
            method=grid[1],
            interval=grid[2],
            frame=self._obj,
            statistic=statistic,
        )


def _q_for_columns(columns: Any, labels: pd.Index) -> None:
    """``df.dp.quantile(0.5)``: levels given where the columns go (pandas' ``q``
    comes first; here the columns do). Raises with the fix."""
    listed = columns if isinstance(columns, list | tuple) else [columns]
    numbers = [c for c in listed if isinstance(c, float) and 0.0 <= c <= 1.0]
    if listed and len(numbers) == len(listed) and not any(c in labels for c in listed):
        raise TypeError(
            f"{columns!r} looks like quantile levels, given where the columns go: name "
            f"the columns first, df.dp.quantile('age', {columns!r}), or pass q={columns!r}"
        )
