"""``df.dp.quantile`` and ``df.dp.median``: the DataFrame accessor's quantile releases.

A mixin of :class:`~pandas_dp.accessor.frame.DPFrameAccessor`: the text of both
methods (made from the catalogue, :mod:`pandas_dp.accessor._methods`) and the one
check a frame adds to the release the Series shares
(:meth:`~pandas_dp.accessor._base._Base._release_quantile`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pandas as pd

from pandas_dp.accessor._base import _Base


class _FrameQuantiles(_Base):
    """The quantile releases of ``df.dp``, inherited by its accessor class."""

    __slots__ = ()
    _obj: pd.DataFrame

    _method_docs: ClassVar[dict[str, str]] = {
        "quantile": """Noisy quantiles of bounded numeric columns, like ``df[columns].quantile(q)``.

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
        """,
        "median": """Noisy median of bounded numeric columns, like ``df[columns].median()``.

        The 0.5 quantile of :meth:`quantile` (same grid and estimator).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 250})
        >>> m = df.dp.median("age", epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> lo, hi = m.attrs["dp"].interval(0.05)
        >>> bool(lo <= hi)
        True
        """,
    }

    def _release_quantile(self, statistic: str, arguments: Mapping[str, Any]) -> Any:
        _q_for_columns(arguments["columns"], self._obj.columns)
        return super()._release_quantile(statistic, arguments)


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
