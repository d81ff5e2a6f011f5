"""``df.dp.value_counts``, ``proportions`` and ``counts``: the categorical releases.

A mixin of :class:`~pandas_dp.accessor.frame.DPFrameAccessor`: counts of declared
categories (one column, or the contingency table of several), their proportions,
and a workload of counting queries (boolean masks or ``df.eval`` strings), each
handed over to :mod:`pandas_dp.stats.histograms` or :mod:`pandas_dp.stats.grouped`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.accessor._base import _Base, check_unique, counts_queries
from pandas_dp.budget.budgets import PrivacyBudget
from pandas_dp.request.grouping import resolve_grouping
from pandas_dp.request.queries import Query
from pandas_dp.stats import histograms as hist
from pandas_dp.stats.grouped import release_contingency


class _FrameCategorical(_Base):
    """The categorical releases of ``df.dp``, inherited by its accessor class."""

    __slots__ = ()
    _obj: pd.DataFrame

    def value_counts(
        self,
        column: Hashable,
        normalize: bool = False,
        sort: bool = True,
        ascending: bool = False,
        dropna: bool = True,
        *,
        epsilon: float,
        delta: float = 0.0,
        categories: Any = None,
        schema: Any = None,
        other: Any = None,
        method: str = hist.DEFAULT_METHOD,
        via: str = "counts",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.Series:
        """Noisy counts of declared categories, like ``df[column].value_counts()``.

        With a list of columns, the contingency table over the product of their
        declared domains, like ``df.value_counts(subset)``: a Series indexed by
        every combination (``categories`` may then be a dict ``column -> list``).
        See :meth:`DPSeriesAccessor.value_counts`.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 50, "smoker": [True, False] * 50})
        >>> t = df.dp.value_counts(["sex", "smoker"], epsilon=1.0,
        ...                        categories={"sex": ["f", "m"]}, sort=False, random_state=0)
        >>> t.index.tolist()
        [('f', False), ('f', True), ('m', False), ('m', True)]
        """
        settings = self._settings(locals())
        if isinstance(column, list | pd.Index):
            columns = list(column)
            check_unique(self._obj, columns)
            _contingency_options(dropna, other, method, via)
            if isinstance(categories, str):  # e.g. "dtype": for every column
                categories = dict.fromkeys(columns, categories)
            grouping = resolve_grouping(self._obj, columns, keys=categories, schema=schema)
            return release_contingency(
                settings, grouping, self._obj, normalize=normalize, sort=sort, ascending=ascending
            )
        series = self._select(column)[0][column]
        return self._histogram(
            series,
            normalize=normalize,
            sort=sort,
            ascending=ascending,
            dropna=dropna,
            categories=categories,
            schema=schema,
            other=other,
            method=method,
            via=via,
            settings=settings,
        )

    def proportions(
        self,
        column: Hashable,
        *,
        epsilon: float,
        delta: float = 0.0,
        categories: Any = None,
        schema: Any = None,
        method: str = hist.DEFAULT_METHOD,
        via: str = "counts",
        dropna: bool = True,
        other: Any = None,
        sort: bool = False,
        ascending: bool = False,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.Series:
        """Noisy proportions of one column's declared categories, summing to one.

        See :meth:`DPSeriesAccessor.proportions`.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"region": ["N", "S", "N", "E", "N", "S"] * 50})
        >>> p = df.dp.proportions("region", epsilon=1.0, categories=["N", "S", "E", "W"],
        ...                       random_state=0)
        >>> list(p.index), round(float(p.sum()), 12)
        (['N', 'S', 'E', 'W'], 1.0)
        """
        settings = self._settings(locals())
        series = self._select(column)[0][column]
        return self._histogram(
            series,
            normalize=True,
            sort=sort,
            ascending=ascending,
            dropna=dropna,
            categories=categories,
            schema=schema,
            other=other,
            method=method,
            via=via,
            settings=settings,
            proportions=True,
        )

    def counts(
        self,
        queries: Mapping[Hashable, Any],
        *,
        epsilon: float,
        normalize: bool = False,
        delta: float = 0.0,
        schema: Any = None,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.Series:
        """A workload of counting queries, released together.

        Parameters
        ----------
        queries : dict
            Name -> boolean mask (a Series aligned with the frame, or an array of
            its length) or an expression string such as ``"smoker and age > 60"``
            (:mod:`pandas_dp.request.queries`: column names, constants, comparisons,
            ``in`` a list, ``and`` / ``or`` / ``not`` and arithmetic, evaluated
            value by value; a value a comparison fails on, like a missing one,
            is not counted). Each must be a *per-record* predicate: a string
            query is one by construction (``"age > age.mean()"`` is refused); a
            mask built from an aggregate of the data (``df.age > df.age.mean()``)
            is not, and is not protected.
        normalize : bool, default False
            Release fractions of the ``n`` rows instead of counts.

        Notes
        -----
        One record may satisfy all ``k`` queries, so the L1 sensitivity is ``k``
        and each count gets Laplace noise of scale ``k / epsilon``. With
        probability ``1 - alpha`` every count is within ``(k/epsilon) ln(k/alpha)``
        (the simultaneous interval of the metadata).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"age": [25, 35, 45, 55] * 25, "smoker": [True, False] * 50})
        >>> c = df.dp.counts({"smokers": df.smoker, "old smokers": "smoker and age > 30"},
        ...                  epsilon=1.0, random_state=0)
        >>> list(c.index)
        ['smokers', 'old smokers']
        """
        settings = self._settings(locals())
        queries = counts_queries(queries)
        for name, q in queries.items():  # every check first, on no rows of the data
            if isinstance(q, str):
                queries[name] = parsed = Query.parse(q, self._obj.columns)
                parsed.check(self._obj)
            else:
                self._mask(name, q, self._obj)
        names = list(queries)
        lazy = partial(self._masks, queries)  # string queries are evaluated after the charge
        return hist.release_counts(lazy, names, settings, normalize=normalize, frame=self._obj)

    def _masks(self, queries: dict[Hashable, Any]) -> list[pd.Series]:
        """Each query's mask: a parsed string evaluated value by value where it must
        (never raises on a value); a mask as given (checked before the charge)."""
        return [
            q.evaluate(self._obj) if isinstance(q, Query) else self._mask(name, q, self._obj)
            for name, q in queries.items()
        ]

    def _mask(self, name: Hashable, query: Any, frame: pd.DataFrame) -> pd.Series:
        if isinstance(query, pd.Series):
            if not query.index.equals(frame.index):
                raise ValueError(
                    f"the mask of query {name!r} is not aligned with the frame's index; "
                    f"build it from the frame's own columns (e.g. df.age > 30)"
                )
            mask = query
        else:
            values = np.asarray(query)
            if values.ndim != 1 or len(values) != len(frame):
                # (neither length is printed: under add/remove the frame's is private)
                raise ValueError(
                    f"query {name!r} must be a one-dimensional boolean mask with one "
                    f"value per row of the frame; its length differs. Build it from the "
                    f"frame's own columns (e.g. df.age > 30)"
                )
            mask = pd.Series(values, index=frame.index)
        if not pd.api.types.is_bool_dtype(mask.dtype):
            raise TypeError(
                f"query {name!r} must be boolean (a predicate per record); got dtype "
                f"{mask.dtype}. Compare values, e.g. df.age > 30"
            )
        return mask


def _contingency_options(dropna: bool, other: Any, method: str, via: str) -> None:
    """What a contingency table (several columns) does not offer, refused before the
    charge rather than ignored."""
    unsupported = {
        "dropna=False": dropna is False,
        "other=": other is not None,
        f"method={method!r}": method != hist.DEFAULT_METHOD,
        f"via={via!r}": via != "counts",
    }
    asked = [name for name, given in unsupported.items() if given]
    if asked:
        raise NotImplementedError(
            f"value_counts of several columns does not support {', '.join(asked)}: it "
            f"counts the rows of every combination of declared values, missing values "
            f"and undeclared values dropped. Count one column at a time for those options"
        )
