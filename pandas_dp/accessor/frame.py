"""``df.dp``: the DataFrame accessor (see :mod:`pandas_dp.accessor` for the shared keywords)."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp import covariance as covmod
from pandas_dp import histograms as hist
from pandas_dp import quantiles as qmod
from pandas_dp import statistics as st
from pandas_dp.accessor._base import (
    Columns,
    _Base,
    _check_numeric,
    _is_numeric,
    agg_requests,
    describe_columns,
    moment_declarations,
)
from pandas_dp.accessor._docs import stamp_docs
from pandas_dp.accessor.groupby import DPGroupBy, contributions
from pandas_dp.budget import PrivacyBudget
from pandas_dp.declarations import (
    attached_schema,
    resolve_bounds,
)
from pandas_dp.describe import check_percentiles, release_describe
from pandas_dp.grouped import release_contingency
from pandas_dp.grouping import resolve_grouping
from pandas_dp.quantiles import DEFAULT_BINS
from pandas_dp.result import DPFloat, DPInt
from pandas_dp.settings import Contributions


def _declares_categories(column: Hashable, categories: Any) -> bool:
    return isinstance(categories, dict) and column in categories


def _check_unique(frame: pd.DataFrame, labels: Sequence[Hashable]) -> None:
    """Refuse labels the frame holds more than once (public: the frame's columns).

    ``frame[label]`` would be a DataFrame, which no release can read; checked
    before the budget is charged.
    """
    if frame.columns.is_unique:
        return
    repeated = sorted({str(c) for c in labels if int((frame.columns == c).sum()) > 1})
    if repeated:
        raise ValueError(
            f"column label(s) {repeated} appear more than once in the frame; a release "
            f"needs one column per label. Rename the columns (e.g. df.columns = [...]) "
            f"or drop the duplicates (df.loc[:, ~df.columns.duplicated()])"
        )


@stamp_docs
class DPFrameAccessor(_Base):
    """Differentially private aggregations of a DataFrame: ``df.dp``.

    Examples
    --------
    >>> import pandas as pd, pandas_dp
    >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0], "kids": [0, 2, 1, 3]})
    >>> m = df.dp.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
    >>> 0 <= m <= 100
    True
    >>> means = df.dp.mean(["age", "kids"], epsilon=1.0,
    ...                    bounds={"age": (0, 100), "kids": (0, 10)}, random_state=0)
    >>> list(means.index)
    ['age', 'kids']
    >>> means.attrs["dp"].statistic
    'mean'
    """

    __slots__ = ()
    _obj: pd.DataFrame

    def _known(self) -> list[Hashable]:
        return list(self._obj.columns)

    def _contributions(
        self, privacy_unit: Hashable | None, max_rows_per_unit: int | None, schema: Any
    ) -> Contributions:
        """The privacy unit and its bound, from the arguments or the schema (public)."""
        return contributions(self._obj, privacy_unit, max_rows_per_unit, schema=schema)

    def _select(self, columns: Columns) -> tuple[dict[Hashable, pd.Series], bool]:
        frame = self._obj
        labels: list[Hashable]
        if columns is None:
            _check_unique(frame, list(frame.columns))
            labels = [c for c in frame.columns if _is_numeric(frame[c])]
            if not labels:
                raise ValueError("the frame has no numeric columns; name the columns to release")
            scalar = False
        elif isinstance(columns, str) or not isinstance(columns, Sequence | pd.Index):
            labels, scalar = [columns], True
        else:
            labels, scalar = list(columns), False
            if not labels:
                raise ValueError("columns is empty; name at least one column")
        absent = [c for c in labels if c not in frame.columns]
        if absent:
            raise KeyError(f"column(s) {absent} not in the frame; it has {list(frame.columns)}")
        if len(set(labels)) != len(labels):
            raise ValueError(f"columns {labels} name a column twice")
        _check_unique(frame, labels)
        return {c: frame[c] for c in labels}, scalar

    # -------------------------------------------------------------- counts
    def count(
        self,
        *,
        epsilon: float,
        numeric_only: bool = False,
        delta: float = 0.0,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.Series:
        """Noisy number of non-missing values per column, like ``df.count()``.

        The counts are one release: one record can change every column's count,
        so the budget is shared by the columns. Counts stay integers (discrete
        noise) and are bounded to ``[0, n]`` (substitute) or ``[0, inf)``.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"a": [1.0, None, 3.0], "b": ["x", "y", None]})
        >>> c = df.dp.count(epsilon=1.0, random_state=0)
        >>> list(c.index), str(c.dtype)
        (['a', 'b'], 'int64')
        """
        settings = self._settings(locals())
        frame = self._obj
        labels = [c for c in frame.columns if not numeric_only or _is_numeric(frame[c])]
        if not labels:
            raise ValueError("the frame has no columns to count")
        _check_unique(frame, labels)
        selected: dict[Hashable, pd.Series] = {c: frame[c] for c in labels}
        result = st.release_count(selected, settings, scalar=False, frame=self._obj)
        assert isinstance(result, pd.Series)
        return result

    def len(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> DPInt:
        """Noisy number of rows, like ``len(df)``.

        Use it when the frame's length is private -- for instance after filtering
        rows by a condition on the data.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"a": range(1000)})
        >>> n = df.dp.len(epsilon=1.0, random_state=0)
        >>> isinstance(n, int), n >= 0
        (True, True)
        """
        settings = self._settings(locals())
        return st.release_len(settings, self._obj)

    # -------------------------------------------------------------- moments
    def sum(
        self,
        columns: Columns = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> DPFloat | DPInt | pd.Series:
        """Noisy sum of bounded numeric columns, like ``df[columns].sum()``.

        One column name gives a float; a list (or ``None``: every numeric column)
        gives a Series indexed by column.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"hours": [38.0, 40.0, 45.0, 20.0]})
        >>> s = df.dp.sum("hours", epsilon=1.0, bounds=(0, 80), random_state=0)
        >>> 0 <= s <= 4 * 80
        True
        """
        settings = self._settings(locals())
        return self._moment("sum", columns, bounds=bounds, schema=schema, settings=settings)

    def mean(
        self,
        columns: Columns = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        method: str = "auto",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> DPFloat | DPInt | pd.Series:
        """Noisy mean of bounded numeric columns, like ``df[columns].mean()``.

        Values are clamped to the declared bounds. With several columns the
        budget is shared (each column's share is in ``attrs["dp"].details``).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0]})
        >>> m = df.dp.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> lo, hi = m.attrs["dp"].interval(0.05)
        >>> lo <= m <= hi
        True
        """
        settings = self._settings(locals())
        return self._moment(
            "mean", columns, bounds=bounds, schema=schema, settings=settings, method=method
        )

    def var(
        self,
        columns: Columns = None,
        ddof: int = 1,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        method: str = "auto",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> DPFloat | DPInt | pd.Series:
        """Noisy sample variance (``ddof=1`` like pandas) of bounded numeric columns.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"x": [0.1, 0.4, 0.5, 0.9, 0.3]})
        >>> v = df.dp.var("x", epsilon=1.0, bounds=(0, 1), random_state=0)
        >>> 0 <= v <= v.attrs["dp"].output_bounds[1]
        True
        """
        settings = self._settings(locals())
        return self._moment(
            "var",
            columns,
            bounds=bounds,
            schema=schema,
            settings=settings,
            ddof=ddof,
            method=method,
        )

    def std(
        self,
        columns: Columns = None,
        ddof: int = 1,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        method: str = "auto",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> DPFloat | DPInt | pd.Series:
        """Noisy standard deviation: the square root of :meth:`var` (post-processing).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"x": [0.1, 0.4, 0.5, 0.9, 0.3]})
        >>> s = df.dp.std("x", epsilon=1.0, bounds=(0, 1), random_state=0)
        >>> s.attrs["dp"].statistic
        'std'
        """
        settings = self._settings(locals())
        return self._moment(
            "std",
            columns,
            bounds=bounds,
            schema=schema,
            settings=settings,
            ddof=ddof,
            method=method,
        )

    # -------------------------------------------------------------- matrices
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
        return self._quantile(columns, q, bounds, schema, (bins, method), settings, "quantile")

    def median(
        self,
        columns: Columns = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        bins: int | None = None,
        method: str = "exponential",
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
        out = self._quantile(columns, 0.5, bounds, schema, (bins, method), settings, "median")
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
        grid: tuple[int | None, str],
        settings: st.Settings,
        statistic: str,
    ) -> DPFloat | pd.Series | pd.DataFrame:
        qmod.check_q(q)
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
            frame=self._obj,
            statistic=statistic,
        )

    def cov(
        self,
        columns: Columns = None,
        ddof: int = 1,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        method: str = "auto",
        psd: str = "clip",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.DataFrame:
        """Noisy covariance matrix, like ``df[columns].cov(ddof=1)``.

        Positive semi-definite by construction (``psd="clip"``: eigenvalues
        clipped at zero; ``"higham"``: nearest matrix keeping the variances).

        Parameters
        ----------
        method : {"auto", "moments", "direct"}
            ``"direct"`` is Liu's procedure (variances first, then covariances
            bounded by the released variances); ``"moments"`` noises centred
            sums and sums of products in one release. ``"auto"`` (moments) was
            best or tied in 14 of 16 settings of the accuracy study (up to 2.6x
            better); direct won by 10-16 % only on data piled at one bound under
            substitution with n >= 1000.

        Examples
        --------
        >>> import numpy as np, pandas as pd, pandas_dp
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.uniform(-1, 1, (500, 3)), columns=["a", "b", "c"])
        >>> c = df.dp.cov(epsilon=1.0, bounds=(-1, 1), random_state=0)
        >>> c.shape, bool(np.all(np.linalg.eigvalsh(c.to_numpy()) >= -1e-12))
        ((3, 3), True)
        """
        return self._matrix(
            columns,
            ddof,
            epsilon,
            delta,
            bounds,
            schema,
            method,
            psd,
            mechanism,
            bounding,
            neighbouring,
            out_of_bounds,
            random_state,
            budget,
            privacy_unit,
            max_rows_per_unit,
            corr=False,
        )

    def corr(
        self,
        columns: Columns = None,
        *,
        epsilon: float,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        method: str = "auto",
        psd: str = "clip",
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.DataFrame:
        """Noisy Pearson correlation matrix: post-processing of :meth:`cov`.

        Unit diagonal, entries in ``[-1, 1]``. ``method`` is the covariance
        method (only Pearson correlation is offered).

        Examples
        --------
        >>> import numpy as np, pandas as pd, pandas_dp
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.uniform(-1, 1, (500, 2)), columns=["a", "b"])
        >>> r = df.dp.corr(epsilon=1.0, bounds=(-1, 1), random_state=0)
        >>> np.diag(r).tolist()
        [1.0, 1.0]
        """
        return self._matrix(
            columns,
            1,
            epsilon,
            delta,
            bounds,
            schema,
            method,
            psd,
            mechanism,
            bounding,
            neighbouring,
            out_of_bounds,
            random_state,
            budget,
            privacy_unit,
            max_rows_per_unit,
            corr=True,
        )

    def _matrix(
        self,
        columns: Columns,
        ddof: int,
        epsilon: float,
        delta: float,
        bounds: Any,
        schema: Any,
        method: str,
        psd: str,
        mechanism: str,
        bounding: str,
        neighbouring: str,
        out_of_bounds: str,
        random_state: int | np.random.Generator | None,
        budget: PrivacyBudget | None,
        privacy_unit: Hashable | None,
        max_rows_per_unit: int | None,
        *,
        corr: bool,
    ) -> pd.DataFrame:
        settings = self._settings(locals())
        selected, _ = self._select([columns] if isinstance(columns, str) else columns)
        name = "corr" if corr else "cov"
        _check_numeric(name, selected)
        attached = attached_schema(self._obj) if bounds is None and schema is None else None
        decls = resolve_bounds(
            selected, bounds=bounds, schema=schema, attached=attached, known=self._known()
        )
        return covmod.release_cov(
            selected,
            decls,
            settings,
            method=covmod.resolve_method(method),
            ddof=ddof,
            psd=psd,
            corr=corr,
            frame=self._obj,
        )

    def agg(
        self,
        func: Any,
        *,
        epsilon: float,
        ddof: int = 1,
        delta: float = 0.0,
        bounds: Any = None,
        schema: Any = None,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.Series | pd.DataFrame:
        """Several statistics of several columns in one release, like ``df.agg(func)``.

        One plan, one charge: the statistics of one column share one measured
        (count, centred sum, centred squares), so ``{"age": ["count", "mean",
        "std"]}`` costs what one ``std`` costs; a ``median`` is a permute-and-flip
        selection on the column's grid, as :meth:`quantile` makes it (with
        ``method="exponential"`` and the default grid). Every column gets an equal
        share of ``epsilon``; within a column the moments and the median get half
        each.

        Parameters
        ----------
        func : str, list of str or dict
            A statistic or a list of them for every numeric column, or a dict
            ``column -> statistic`` or ``column -> [statistics]``; each one of
            ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``, ``"median"``.
        ddof : int, default 1
            Delta degrees of freedom of ``var`` and ``std``, as in pandas.

        Returns
        -------
        Series or DataFrame
            As pandas returns: a Series indexed by column when every column gets one
            statistic given as a string; else a DataFrame with one row per statistic
            and one column per column (missing where a column's statistic was not
            asked for). ``attrs["dp"].interval(alpha)`` is indexed by (column,
            statistic).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 250})
        >>> t = df.dp.agg({"age": ["count", "mean", "std"]}, epsilon=1.0,
        ...               bounds=(0, 100), random_state=0)
        >>> list(t.index), list(t.columns)
        (['count', 'mean', 'std'], ['age'])
        """
        settings = self._settings(locals())
        if isinstance(func, str) or (isinstance(func, Sequence) and not isinstance(func, Mapping)):
            func = dict.fromkeys(self._select(None)[0], func)
        requests = agg_requests(func)
        selected, _ = self._select(list(requests))
        decls = moment_declarations(
            selected,
            requests,
            bounds=bounds,
            schema=schema,
            attached=attached_schema(self._obj) if bounds is None and schema is None else None,
            known=self._known(),
        )
        extra = qmod.agg_quantiles(requests, selected, decls, None)
        table = st.release_agg(
            requests, selected, decls, settings, ddof=ddof, frame=self._obj, extra=extra
        )
        row: dict[Any, Any] = {pair: table[pair].iloc[0] for pair in table.columns}
        if all(isinstance(v, str) for v in func.values()):
            out: pd.Series | pd.DataFrame = pd.Series(
                [row[(c, requests[c][0])] for c in requests], index=list(requests)
            )
        else:
            stats = list(dict.fromkeys(s for sts in requests.values() for s in sts))
            out = pd.DataFrame(
                {c: [row.get((c, s), np.nan) for s in stats] for c in requests}, index=stats
            )
        out.attrs["dp"] = table.attrs["dp"]
        return out

    def describe(
        self,
        columns: Columns = None,
        percentiles: Any = None,
        *,
        epsilon: float,
        bins: int = DEFAULT_BINS,
        delta: float = 0.0,
        bounds: Any = None,
        categories: Any = None,
        schema: Any = None,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        out_of_bounds: str = "clip",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
        privacy_unit: Hashable | None = None,
        max_rows_per_unit: int | None = None,
    ) -> pd.DataFrame:
        """A private ``df.describe()``: count, mean, std and percentiles of numeric
        columns, proportions of categorical ones, in one release.

        Where pandas prints ``min`` and ``max``, the declared bounds are shown
        (``min (declared)``, ``max (declared)``): the data's extremes are not
        private. With ``columns=None``: every numeric column, and every other
        column whose categories are declared. The split is in
        ``attrs["dp"].details`` and in the budget's ledger.

        Parameters
        ----------
        percentiles : list of float, optional
            As in pandas: the percentiles to include, in ``[0, 1]`` (the median is
            always included). Default ``[0.25, 0.5, 0.75]``.
        bins : int, default 1024
            Resolution of the public grid the percentiles are read from.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> from pandas_dp.datasets import load_survey, survey_schema
        >>> d = load_survey().dp.describe(["age", "region"], epsilon=2.0,
        ...                                schema=survey_schema(), random_state=0)
        >>> list(d.index)[:8]
        ['count', 'mean', 'std', 'min (declared)', '25%', '50%', '75%', 'max (declared)']
        """
        wanted_percentiles = check_percentiles(percentiles)
        settings = self._settings(locals())
        frame = self._obj
        attached = (
            attached_schema(frame)
            if bounds is None and schema is None and categories is None
            else None
        )
        schema = self._schema_for(schema)
        if columns is None:
            wanted: list[Hashable] = list(frame.columns)
            _check_unique(frame, wanted)
        else:
            wanted = list(self._select([columns] if isinstance(columns, str) else columns)[0])
        numeric, num_decls, categorical, cat_decls, undeclared = describe_columns(
            frame,
            wanted,
            strict=columns is not None,
            bounds=bounds,
            categories=categories,
            schema=schema,
            attached=attached,
            known=self._known(),
        )
        return release_describe(
            numeric,
            num_decls,
            categorical,
            cat_decls,
            settings,
            undeclared=undeclared,
            frame=self._obj,
            percentiles=wanted_percentiles,
            bins=bins,
        )

    # -------------------------------------------------------------- group-by
    def groupby(
        self,
        by: Hashable | Sequence[Hashable],
        keys: Any = None,
        *,
        other: Hashable | None = None,
        delta: float = 0.0,
    ) -> DPGroupBy:
        """Group by public keys, like ``df.groupby(by)``; see :class:`DPGroupBy`.

        Parameters
        ----------
        by : label or list of labels
            The grouping columns.
        keys : list, Index, DataFrame, dict, "private" or None
            The declared keys: a list (one column), an Index or MultiIndex, a
            DataFrame of key tuples, a dict ``column -> list`` (their product), or
            ``"private"`` to select keys from the data by partition selection
            (needs ``delta``). ``None``: from the schema (``isin``, a declared
            categorical dtype) or the two values of a boolean column.
        other : label, optional
            A group for rows whose key is not declared; by default they are dropped.
        delta : float, default 0.0
            With ``keys="private"``: the probability a key held by one unit is
            released.

        Returns
        -------
        DPGroupBy

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"region": ["N", "S"] * 100, "income": [30.0, 50.0] * 100})
        >>> s = df.dp.groupby("region", keys=["N", "S", "E"]).sum(
        ...     "income", epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> list(s.index)
        ['E', 'N', 'S']
        """
        return DPGroupBy(self._obj, by, keys, other=other, delta=delta)

    # -------------------------------------------------------------- categorical
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
            grouping = resolve_grouping(self._obj, list(column), keys=categories, schema=schema)
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
            its length) or a ``df.eval`` expression string. Each must be a
            *per-record* predicate: a mask built from an aggregate of the data
            (``df.age > df.age.mean()``) is not, and is not protected.
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
        queries = dict(queries)
        for name, q in queries.items():  # every check first, on no rows of the data
            self._mask(name, q, self._obj.iloc[:0] if isinstance(q, str) else self._obj)
        names = list(queries)
        lazy = partial(self._masks, queries)  # string queries are evaluated after the charge
        return hist.release_counts(lazy, names, settings, normalize=normalize, frame=self._obj)

    def _masks(self, queries: dict[Hashable, Any]) -> list[pd.Series]:
        out = []
        for name, q in queries.items():
            try:
                out.append(self._mask(name, q, self._obj))
            except Exception:  # checked on the frame's columns already: never by value
                out.append(pd.Series(False, index=self._obj.index))
        return out

    def _mask(self, name: Hashable, query: Any, frame: pd.DataFrame) -> pd.Series:
        if isinstance(query, str):
            query = frame.eval(query)
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
                raise ValueError(
                    f"query {name!r} must be a boolean mask of the frame's length "
                    f"{len(frame)}; got shape {values.shape}"
                )
            mask = pd.Series(values, index=frame.index)
        if not pd.api.types.is_bool_dtype(mask.dtype):
            raise TypeError(
                f"query {name!r} must be boolean (a predicate per record); got dtype "
                f"{mask.dtype}. Compare values, e.g. df.age > 30"
            )
        return mask
