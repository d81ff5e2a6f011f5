"""``s.dp``: the Series accessor (see :mod:`pandas_dp.accessor` for the shared keywords).

Every release method is made from its catalogue entry
(:mod:`~pandas_dp.accessor._methods`): the class holds each one's text
(``_method_docs``) and the releases a Series does its own way; the rest it shares
with ``df.dp`` (:class:`~pandas_dp.accessor._base._Base`).
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable, Mapping
from typing import Any, ClassVar

import pandas as pd

from pandas_dp.accessor._arguments import Columns
from pandas_dp.accessor._base import _Base
from pandas_dp.accessor._docs import stamp_docs
from pandas_dp.accessor._methods import catalogue_methods
from pandas_dp.result.values import DPFloat, DPInt, attach
from pandas_dp.stats import numeric as st

#: What ``s.dp.agg`` releases: the methods of the same names.
_AGG_METHODS = ("count", "sum", "mean", "var", "std", "median")


@stamp_docs
@catalogue_methods("series")
class DPSeriesAccessor(_Base):
    """Differentially private aggregations of a Series: ``s.dp``.

    Examples
    --------
    >>> import pandas as pd, pandas_dp
    >>> s = pd.Series([23.0, 35.0, 51.0, 64.0], name="age")
    >>> m = s.dp.mean(epsilon=1.0, bounds=(0, 100), random_state=0)
    >>> isinstance(m, float)
    True
    """

    __slots__ = ()
    _obj: pd.Series

    _method_docs: ClassVar[dict[str, str]] = {
        "count": """Noisy number of non-missing values, like ``s.count()``.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> c = pd.Series([1.0, None, 3.0]).dp.count(epsilon=1.0, random_state=0)
        >>> isinstance(c, int)
        True
        """,
        "len": """Noisy length of the Series, like ``len(s)``.""",
        "value_counts": """Noisy counts of the declared categories, like ``s.value_counts()``.

        Every declared category is in the result, also one that does not occur in
        the data; a value that is not declared never is.

        Parameters
        ----------
        normalize : bool, default False
            Return proportions (summing to one, by ``method`` and ``via``) instead.
        sort, ascending : bool
            Order by the *released* counts, as pandas does by the exact ones.
        dropna : bool, default True
            With ``False``, missing values get a bucket of their own (index NaN).
        categories : list or dict, optional
            The public categories; else ``Check.isin`` of the schema, else the
            categories of a ``pd.CategoricalDtype``. Declare that dtype with its
            categories (``pd.CategoricalDtype([...])``): ``astype("category")``
            reads them off the data.
        other : label, optional
            Count undeclared values in a bucket with this label (else they are
            dropped). Either way the sensitivity is the same: one record moves
            one unit out of one bucket and into at most one other.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> s = pd.Series(["N", "S", "N", "E", "N", "X"] * 40, name="region")
        >>> vc = s.dp.value_counts(epsilon=1.0, categories=["N", "S", "E", "W"],
        ...                        other="other", random_state=0)
        >>> sorted(vc.index), str(vc.dtype)
        (['E', 'N', 'S', 'W', 'other'], 'int64')
        """,
        "proportions": """\
        Noisy proportions of the declared categories, in ``[0, 1]``, summing to one.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> s = pd.Series(["a", "b", "a", "a"] * 100)
        >>> p = s.dp.proportions(epsilon=1.0, categories=["a", "b", "c"], random_state=0)
        >>> bool(((p >= 0) & (p <= 1)).all()), round(float(p.sum()), 12)
        (True, 1.0)
        """,
        "quantile": """Noisy quantiles of a bounded numeric Series, like ``s.quantile(q)``.

        Each quantile is chosen among the edges of ``bins`` equal-width bins of
        the declared bounds by exact permute-and-flip on its rank; a list
        recursively, non-decreasing in ``q`` (see ``df.dp.quantile``).

        Parameters
        ----------
        q : float or list of float, default 0.5
            Quantiles in ``[0, 1]``.

        Returns
        -------
        float or Series
            A float for a float ``q``; a Series indexed by ``q`` for a list.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> s = pd.Series([23.0, 35.0, 51.0, 64.0] * 250, name="age")
        >>> qs = s.dp.quantile([0.1, 0.9], epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> list(qs.index), qs.name
        ([0.1, 0.9], 'age')
        """,
        "median": """Noisy median of a bounded numeric Series, like ``s.median()``.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> s = pd.Series([23.0, 35.0, 51.0, 64.0] * 250)
        >>> m = s.dp.median(epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> isinstance(m, float)
        True
        """,
        "describe": """A private ``s.describe()``: count, mean, std and percentiles of a bounded
        numeric Series, or the shares of a categorical one, in one release.

        The Series' column of ``s.to_frame().dp.describe(...)`` (see
        ``DataFrame.dp.describe``): where pandas prints ``min`` and ``max``, the
        declared bounds are shown, labelled as declared.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> s = pd.Series([23.0, 35.0, 51.0, 64.0] * 250, name="age")
        >>> d = s.dp.describe(epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> list(d.index)[:3], d.name
        (['count', 'mean', 'std'], 'age')
        """,
        "agg": """Several statistics in one release, like ``s.agg(func)``.

        One statistic (a string) is that method's release, a float; a list is one
        plan and one charge (see ``DataFrame.dp.agg``: the statistics share one
        measured count, centred sum and centred squares), a Series indexed by the
        statistics.

        Parameters
        ----------
        func : str or list of str
            Each one of ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``,
            ``"median"``.
        ddof : int, default 1
            Delta degrees of freedom of ``var`` and ``std``, as in pandas.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> s = pd.Series([23.0, 35.0, 51.0, 64.0] * 250, name="age")
        >>> t = s.dp.agg(["mean", "std"], epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> list(t.index), t.name
        (['mean', 'std'], 'age')
        """,
    }

    def _select(self, columns: Columns) -> tuple[dict[Hashable, pd.Series], bool]:
        return {self._obj.name: self._obj}, True

    def _schema_for(self, schema: Any) -> Any:
        """A lone Column/SeriesSchema describes this Series whatever its name."""
        if schema is None:  # no pandera import when no schema is used
            return schema
        import pandera.pandas as pa

        if isinstance(schema, pa.Column | pa.SeriesSchema):
            return {self._obj.name: schema}
        return schema

    def _own(self, declared: Any) -> Any:
        """A ``bounds``/``categories`` dict's entry for this Series, else as given."""
        if isinstance(declared, dict) and self._obj.name in declared:
            return declared[self._obj.name]
        return declared

    # -------------------------------------------------------------- releases
    def _release_count(self, statistic: str, arguments: Mapping[str, Any]) -> DPInt:
        settings = self._settings(arguments)
        result = st.release_count({self._obj.name: self._obj}, settings, scalar=True)
        assert isinstance(result, DPInt)
        return result

    def _release_categories(self, statistic: str, arguments: Mapping[str, Any]) -> pd.Series:
        return self._histogram(self._obj, statistic, arguments, self._settings(arguments))

    def _release_describe(self, statistic: str, arguments: Mapping[str, Any]) -> pd.Series:
        """The Series' column of ``s.to_frame().dp.describe(...)``."""
        kw = {k: v for k, v in arguments.items() if k not in ("self", "percentiles")}
        frame, label, kw["schema"] = self._as_frame(kw["schema"])
        kw["bounds"], kw["categories"] = self._own(kw["bounds"]), self._own(kw["categories"])
        describe = self._frame_accessor(frame).describe
        table: pd.DataFrame = describe([label], arguments["percentiles"], **kw)
        out: pd.Series = table[label].copy()
        out.name = self._obj.name
        return attach(out, table.attrs["dp"])

    def _release_agg(self, statistic: str, arguments: Mapping[str, Any]) -> Any:
        """One statistic: that method's release; a list: the column of ``df.dp.agg``."""
        func = arguments["func"]
        kw = {k: v for k, v in arguments.items() if k not in ("self", "func")}
        kw["bounds"] = self._own(kw["bounds"])
        if isinstance(func, Mapping) or callable(func):
            raise TypeError(
                f"a Series' agg takes a statistic or a list of them, e.g. 'mean' or "
                f"['mean', 'std']; got {func!r}. For several columns use df.dp.agg"
            )
        if isinstance(func, str):  # that method's own release
            method = getattr(self, func, None) if func in _AGG_METHODS else None
            if method is None:
                raise ValueError(f"agg does not release {func!r}; use one of {list(_AGG_METHODS)}")
            takes = inspect.signature(method).parameters
            out: DPFloat | DPInt = method(**{k: v for k, v in kw.items() if k in takes})
            return out
        frame, label, kw["schema"] = self._as_frame(kw["schema"])
        table: pd.DataFrame = self._frame_accessor(frame).agg({label: func}, **kw)
        series: pd.Series = table[label].copy()
        series.name = self._obj.name
        return attach(series, table.attrs["dp"])

    def _as_frame(self, schema: Any) -> tuple[pd.DataFrame, Hashable, Any]:
        """The Series as a one-column frame, its column's label, and ``schema`` for
        that frame (a lone Column or SeriesSchema describes the column). A privacy
        unit declared by the schema is refused first, as by every Series release."""
        self._contributions(None, None, schema)
        label = 0 if self._obj.name is None else self._obj.name
        own = self._schema_for(schema)
        if isinstance(own, dict):  # (keyed by the Series' name, which may be None)
            own = {label: next(iter(own.values()))}
        return self._obj.to_frame(label), label, own

    @staticmethod
    def _frame_accessor(frame: pd.DataFrame) -> Any:
        """``frame.dp`` (typed: pandas' stubs read ``.dp`` as a column)."""
        return frame.dp
