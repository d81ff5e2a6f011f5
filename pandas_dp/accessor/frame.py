"""``df.dp``: the DataFrame accessor (see :mod:`pandas_dp.accessor` for the shared keywords).

:class:`DPFrameAccessor` holds the column selection, the counts, ``agg``, ``describe``
and ``groupby``; it inherits the other families of releases from mixins next to it:
quantiles (:mod:`~pandas_dp.accessor._frame_quantiles`), covariance and correlation
matrices (:mod:`~pandas_dp.accessor._frame_matrix`) and categorical counts
(:mod:`~pandas_dp.accessor._frame_categorical`). Every release method is made from
its catalogue entry (:mod:`~pandas_dp.accessor._methods`): the class holds each
one's text (``_method_docs``) and its release (``_release_<family>``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from pandas_dp.accessor._arguments import (
    Columns,
    _is_numeric,
    agg_requests,
    check_unique,
    moment_declarations,
    release_described,
    select_columns,
)
from pandas_dp.accessor._docs import stamp_docs
from pandas_dp.accessor._frame_categorical import _FrameCategorical
from pandas_dp.accessor._frame_matrix import _FrameMatrices
from pandas_dp.accessor._frame_quantiles import _FrameQuantiles
from pandas_dp.accessor._groupby_base import contributions
from pandas_dp.accessor._groupby_options import named_aggregation, named_rows
from pandas_dp.accessor._methods import catalogue_methods
from pandas_dp.accessor.groupby import DPGroupBy
from pandas_dp.request.grouping_options import check_options
from pandas_dp.request.settings import Contributions
from pandas_dp.result.values import attach
from pandas_dp.stats import auto_bounds
from pandas_dp.stats import numeric as st
from pandas_dp.stats.describe import check_percentiles
from pandas_dp.stats.describe_auto import check_selection_delta
from pandas_dp.stats.moments import check_ddof
from pandas_dp.stats.quantiles import agg as quantile_agg


@stamp_docs
@catalogue_methods("frame")
class DPFrameAccessor(_FrameQuantiles, _FrameMatrices, _FrameCategorical):
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

    _method_docs: ClassVar[dict[str, str]] = {
        "count": """Noisy number of non-missing values per column, like ``df.count()``.

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
        """,
        "len": """Noisy number of rows, like ``len(df)``.

        Use it when the frame's length is private -- for instance after filtering
        rows by a condition on the data.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"a": range(1000)})
        >>> n = df.dp.len(epsilon=1.0, random_state=0)
        >>> isinstance(n, int), n >= 0
        (True, True)
        """,
        "agg": """Several statistics of several columns in one release, like ``df.agg(func)``.

        One plan, one charge: the statistics of one column share one measured
        count and centred sum (under add/remove with Laplace noise, the column's
        two bound sums, which give both) and centred squares, so ``{"age":
        ["count", "mean", "std"]}`` costs what one ``std`` costs; a ``median`` is a permute-and-flip
        selection on the column's grid, as :meth:`quantile` makes it (with
        ``method="exponential"`` and the default grid). Every column gets an equal
        share of ``epsilon``; within a column the moments and the median get half
        each.

        Parameters
        ----------
        func : str, list of str or dict, optional
            A statistic or a list of them for every numeric column, or a dict
            ``column -> statistic`` or ``column -> [statistics]``; each one of
            ``"count"``, ``"sum"``, ``"mean"``, ``"var"``, ``"std"``, ``"median"``.
            Leave it out for named aggregations.
        ddof : int, default 1
            Delta degrees of freedom of ``var`` and ``std``, as in pandas.
        **named : tuple or pandas.NamedAgg
            pandas' named aggregation: ``name=(column, statistic)`` or
            ``name=pd.NamedAgg(column, statistic)``; one row per name (in the order
            given) and one column per column, missing elsewhere, as pandas gives.

        Returns
        -------
        Series or DataFrame
            As pandas returns: a Series indexed by column when every column gets one
            statistic given as a string; else a DataFrame with one row per statistic
            (per name, for named aggregations) and one column per column (missing
            where a column's statistic was not asked for).
            ``attrs["dp"].interval(alpha)`` is indexed by (column, statistic).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 250})
        >>> t = df.dp.agg({"age": ["count", "mean", "std"]}, epsilon=1.0,
        ...               bounds=(0, 100), random_state=0)
        >>> list(t.index), list(t.columns)
        (['count', 'mean', 'std'], ['age'])
        """,
        "describe": """A private ``df.describe()``: count, mean, std and percentiles of numeric
        columns, proportions of categorical ones, in one release.

        Where pandas prints ``min`` and ``max``, the declared bounds are shown
        (``min (declared)``, ``max (declared)``): the data's extremes are not
        private. With ``columns=None``: every numeric column, and every other
        column whose categories are declared. The split is in
        ``attrs["dp"].details`` and in the budget's ledger.

        With ``bounds="auto"`` nothing need be declared: an undeclared numeric
        column's bounds and an undeclared text or categorical column's categories
        are released privately first (partition selection: a value few people hold
        never appears; it needs ``delta > 0``), each step its own ledger row, then
        the describe on them; ``attrs["dp"].details["auto"]["declared"]`` holds what
        was released, to declare next time.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> from pandas_dp.datasets import load_survey, survey_schema
        >>> d = load_survey().dp.describe(["age", "region"], epsilon=2.0,
        ...                                schema=survey_schema(), random_state=0)
        >>> list(d.index)[:8]
        ['count', 'mean', 'std', 'min (declared)', '25%', '50%', '75%', 'max (declared)']
        """,
    }

    def _known(self) -> list[Hashable]:
        return list(self._obj.columns)

    def _contributions(
        self, privacy_unit: Hashable | None, max_rows_per_unit: int | None, schema: Any
    ) -> Contributions:
        """The privacy unit and its bound, from the arguments or the schema (public)."""
        return contributions(self._obj, privacy_unit, max_rows_per_unit, schema=schema)

    def _select(self, columns: Columns) -> tuple[dict[Hashable, pd.Series], bool]:
        frame = self._obj
        none = "the frame has no numeric columns; name the columns to release"
        return select_columns(frame, columns, lambda c: _is_numeric(frame[c]), none)

    # -------------------------------------------------------------- releases
    def _release_count(self, statistic: str, arguments: Mapping[str, Any]) -> pd.Series:
        settings = self._settings(arguments)
        frame = self._obj
        numeric_only = arguments["numeric_only"]
        labels = [c for c in frame.columns if not numeric_only or _is_numeric(frame[c])]
        if not labels:
            raise ValueError("the frame has no columns to count")
        check_unique(frame, labels)
        selected: dict[Hashable, pd.Series] = {c: frame[c] for c in labels}
        result = st.release_count(selected, settings, scalar=False, frame=self._obj)
        assert isinstance(result, pd.Series)
        return result

    def _release_agg(self, statistic: str, arguments: Mapping[str, Any]) -> Any:
        named = arguments.get("named") or {}
        if named:  # pandas' named aggregation: agg(m=("x", "mean"))
            if arguments["func"] is not None:
                raise TypeError(
                    "agg takes func or named aggregations (m=('x', 'mean')), not both, like pandas"
                )
            request, names = named_aggregation(named, None)
            plain = {**arguments, "func": request, "named": None}
            table = self._like_pandas(statistic, self._release_agg, plain)  # pandas' dtypes
            return named_rows(table, names)
        if arguments["func"] is None:
            raise TypeError(
                "agg needs the statistics: a name, a list, a dict column -> names, or "
                "named aggregations, e.g. df.dp.agg(m=('x', 'mean'))"
            )
        settings = self._settings(arguments)
        func, bounds, schema = (arguments[k] for k in ("func", "bounds", "schema"))
        if isinstance(func, str) or (isinstance(func, Sequence) and not isinstance(func, Mapping)):
            # every numeric column, like pandas; a count alone counts every column
            counts_only = set([func] if isinstance(func, str) else func) == {"count"}
            labels = list(self._obj.columns) if counts_only else list(self._select(None)[0])
            func = dict.fromkeys(labels, func)
        requests = agg_requests(func)
        selected, _ = self._select(list(requests))
        if auto_bounds.is_auto(bounds):  # the release's own checks first: bounds cost budget
            check_ddof(arguments["ddof"])
        bounds, settings, auto = auto_bounds.resolve_if_auto(
            bounds,
            selected,
            settings,
            self._obj,
            bounds_epsilon_share=arguments["bounds_epsilon_share"],
        )
        decls = moment_declarations(
            self._obj, selected, requests, bounds=bounds, schema=schema, known=self._known()
        )
        extra = quantile_agg.agg_quantiles(requests, selected, decls, None)
        table = st.release_agg(
            requests,
            selected,
            decls,
            settings,
            ddof=arguments["ddof"],
            frame=self._obj,
            extra=extra,
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
        return auto_bounds.annotate(attach(out, table.attrs["dp"]), auto)

    def _release_describe(self, statistic: str, arguments: Mapping[str, Any]) -> pd.DataFrame:
        percentiles = check_percentiles(arguments["percentiles"])
        selection_delta = None
        if auto_bounds.is_auto(arguments["bounds"]) and arguments["mechanism"] == "laplace":
            # pure-epsilon noise: the delta is partition selection's (describe_auto)
            selection_delta = check_selection_delta(arguments["delta"])
            arguments = {**arguments, "delta": 0.0}
        settings = self._settings(arguments)
        frame, columns = self._obj, arguments["columns"]
        if columns is None:
            wanted: list[Hashable] = list(frame.columns)
            check_unique(frame, wanted)
        else:
            wanted = list(self._select([columns] if isinstance(columns, str) else columns)[0])
        return release_described(
            frame,
            wanted,
            arguments,
            settings,
            percentiles=percentiles,
            strict=columns is not None,
            schema=self._schema_for(arguments["schema"]),
            known=self._known(),
            selection_delta=selection_delta,
        )

    # -------------------------------------------------------------- group-by
    def groupby(
        self,
        by: Hashable | Sequence[Hashable],
        keys: Any = None,
        *,
        other: Hashable | None = None,
        delta: float = 0.0,
        as_index: bool = True,
        sort: bool = True,
        dropna: bool = True,
        observed: bool | None = None,
        group_keys: bool = True,
        level: None = None,
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
        as_index : bool, default True
            ``False``: the keys become the leading columns of a frame with a
            default row index, as in pandas (a group's size in a column ``size``).
        sort : bool, default True
            Keys sorted (a categorical column's in its declared categories' order);
            ``False``: in *declared* order -- pandas' order of first appearance in
            the rows is private.
        dropna : bool, default True
            Rows with a missing key are dropped, as in pandas. ``False``: a missing
            key (``NaN``; ``NaT`` for a datetime column) is a group of every
            grouping column, released always -- noise only when no row has a
            missing key, as for any declared key. A missing key may also be
            declared among the keys, with ``dropna=False`` only.
        observed : bool, optional
            For categorical keys. ``None`` or ``False``: every declared category is
            released (pandas' ``observed=False``). ``True`` releases only the
            categories the rows hold, which is private: refused with declared
            keys, and what ``keys="private"`` (partition selection) does.
        group_keys : bool, default True
            pandas' option for ``apply``, which releases do not have: no effect.
        level : None
            Grouping by the row index's levels is refused: move the level into a
            column (``df.reset_index()``) and declare its keys.

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
        options = check_options(
            self._obj,
            by,
            keys,
            as_index=as_index,
            sort=sort,
            dropna=dropna,
            observed=observed,
            group_keys=group_keys,
            level=level,
        )
        return DPGroupBy(self._obj, by, keys, other=other, delta=delta, options=options)
