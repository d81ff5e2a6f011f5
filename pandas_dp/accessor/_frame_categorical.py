"""``df.dp.value_counts``, ``proportions`` and ``counts``: the categorical releases.

A mixin of :class:`~pandas_dp.accessor.frame.DPFrameAccessor`: counts of declared
categories (one column, or the contingency table of several), their proportions,
and a workload of counting queries (boolean masks or ``df.eval`` strings), each
handed over to :mod:`pandas_dp.stats.histograms` or :mod:`pandas_dp.stats.grouped`.
The methods themselves are made from the catalogue (:mod:`pandas_dp.accessor._methods`);
this holds their text and their releases.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from pandas_dp.accessor._arguments import check_unique, counts_queries
from pandas_dp.accessor._base import _Base
from pandas_dp.request.grouping import resolve_grouping
from pandas_dp.request.queries import Query
from pandas_dp.request.settings import Settings
from pandas_dp.result.values import attach
from pandas_dp.stats import histograms as hist
from pandas_dp.stats.grouped import release_contingency


class _FrameCategorical(_Base):
    """The categorical releases of ``df.dp``, inherited by its accessor class."""

    __slots__ = ()
    _obj: pd.DataFrame

    _method_docs: ClassVar[dict[str, str]] = {
        "value_counts": """Noisy counts of declared categories, like ``df[column].value_counts()``.

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
        """,
        "proportions": """Noisy proportions of one column's declared categories, summing to one.

        See :meth:`DPSeriesAccessor.proportions`.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"region": ["N", "S", "N", "E", "N", "S"] * 50})
        >>> p = df.dp.proportions("region", epsilon=1.0, categories=["N", "S", "E", "W"],
        ...                       random_state=0)
        >>> list(p.index), round(float(p.sum()), 12)
        (['N', 'S', 'E', 'W'], 1.0)
        """,
        "counts": """A workload of counting queries, released together.

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
        """,
    }

    def _release_categories(self, statistic: str, arguments: Mapping[str, Any]) -> pd.Series:
        """``value_counts`` (of one column, or the contingency table of a list) and
        ``proportions``."""
        settings = self._settings(arguments)
        column = arguments["column"]
        if statistic == "value_counts" and isinstance(column, list | pd.Index):
            return self._contingency(list(column), arguments, settings)
        series = self._select(column)[0][column]
        return self._histogram(series, statistic, arguments, settings)

    def _contingency(
        self, columns: list[Hashable], arguments: Mapping[str, Any], settings: Settings
    ) -> pd.Series:
        check_unique(self._obj, columns)
        _contingency_options(arguments)
        categories = arguments["categories"]
        if isinstance(categories, str):  # e.g. "dtype": for every column
            categories = dict.fromkeys(columns, categories)
        grouping = resolve_grouping(self._obj, columns, keys=categories, schema=arguments["schema"])
        out = release_contingency(
            settings,
            grouping,
            self._obj,
            normalize=arguments["normalize"],
            sort=arguments["sort"],
            ascending=arguments["ascending"],
        )
        if len(columns) == 1 and not isinstance(out.index, pd.MultiIndex):
            meta = out.attrs.get("dp")  # pandas' one-level MultiIndex (post-processing)
            out = pd.Series(
                out.to_numpy(), index=pd.MultiIndex.from_arrays([out.index]), name=out.name
            )
            if meta is not None:
                out = attach(out, meta)
        return out

    def _release_counts(self, statistic: str, arguments: Mapping[str, Any]) -> pd.Series:
        """A workload of counting queries, released together."""
        settings = self._settings(arguments)
        queries = counts_queries(arguments["queries"])
        for name, q in queries.items():  # every check first, on no rows of the data
            if isinstance(q, str):
                queries[name] = parsed = Query.parse(q, self._obj.columns)
                parsed.check(self._obj)
            else:
                self._mask(name, q, self._obj)
        names = list(queries)
        lazy = partial(self._masks, queries)  # string queries are evaluated after the charge
        normalize = arguments["normalize"]
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


def _contingency_options(arguments: Mapping[str, Any]) -> None:
    """What a contingency table (several columns) does not offer, refused before the
    charge rather than ignored."""
    dropna, other, method, via = (arguments[k] for k in ("dropna", "other", "method", "via"))
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
