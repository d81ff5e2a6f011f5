"""``df.dp.groupby(by, keys=...)``: differentially private group-by releases.

Every method releases one value per *declared* key (sorted, a key absent from the
data included) or, with ``keys="private"``, per key kept by partition selection;
the shapes are pandas' own: a Series indexed by key for one column, a DataFrame
for several columns or for ``agg``, a (key, category) MultiIndex for
``value_counts``.

Every release method is made from its catalogue entry
(:mod:`~pandas_dp.accessor._methods`). :class:`DPGroupBy` holds the text and the
releases of the sizes, the counts and moments, ``agg`` and ``describe``; it
inherits the quantiles (:mod:`~pandas_dp.accessor._groupby_quantiles`) and the
categorical counts (:mod:`~pandas_dp.accessor._groupby_categorical`) from mixins
next to it, which share the grouping, settings and column selection of
:mod:`~pandas_dp.accessor._groupby_base`.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd

from pandas_dp.accessor._arguments import (
    agg_requests,
    check_min_count,
    moment_declarations,
    numeric_labels,
    release_described,
)
from pandas_dp.accessor._docs import stamp_docs
from pandas_dp.accessor._groupby_categorical import _GroupByCategorical
from pandas_dp.accessor._groupby_options import named_aggregation, named_columns, with_options
from pandas_dp.accessor._groupby_quantiles import _GroupByQuantiles
from pandas_dp.accessor._methods import catalogue_methods
from pandas_dp.result.values import attach
from pandas_dp.stats import auto_bounds, grouped
from pandas_dp.stats import numeric as st
from pandas_dp.stats.describe import check_percentiles
from pandas_dp.stats.describe_auto import check_selection_delta
from pandas_dp.stats.moments import check_ddof
from pandas_dp.stats.quantiles import agg as quantile_agg

__all__ = ["DPGroupBy"]


@stamp_docs
@with_options
@catalogue_methods("groupby")
class DPGroupBy(_GroupByQuantiles, _GroupByCategorical):
    """Grouped DP releases of a DataFrame: ``df.dp.groupby(by, keys=...)``.

    Parameters
    ----------
    frame : pandas.DataFrame
    by : label or list of labels
        The grouping columns.
    keys : list, Index, DataFrame, dict, "private" or None
        The public keys (see :func:`pandas_dp.request.grouping.resolve_grouping`);
        ``None``: from the schema (``isin``, a declared categorical dtype) or the
        two values of a boolean column.
    other : label, optional
        A group for rows whose key is not declared (default: such rows are dropped).
    delta : float, default 0.0
        With ``keys="private"``: the delta of partition selection.

    Examples
    --------
    >>> import pandas as pd, pandas_dp
    >>> df = pd.DataFrame({"sex": ["f", "m", "f", "m"] * 50,
    ...                    "age": [23.0, 35.0, 51.0, 64.0] * 50})
    >>> g = df.dp.groupby("sex", keys=["f", "m", "x"])
    >>> m = g.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
    >>> list(m.index), m.name
    (['f', 'm', 'x'], 'age')
    >>> list(m.attrs["dp"].interval(0.05).columns)
    ['lower', 'upper']
    """

    _bindable = True
    _doc_scope = "groupby"
    _method_docs: ClassVar[dict[str, str]] = {
        "len": """Noisy number of rows per group, like ``df.groupby(by).size()``.

        With private keys and one row per unit it is the count partition
        selection measured (no extra budget).

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"smoker": [True, False, True] * 100})
        >>> n = df.dp.groupby("smoker").len(epsilon=1.0, random_state=0)
        >>> list(n.index), str(n.dtype)
        ([False, True], 'int64')
        """,
        "count": """\
        Noisy number of non-missing values per group, like ``groupby(by)[columns].count()``.

        Parameters
        ----------
        columns : label or list of labels, optional
            One column (a scalar result) or several (a frame with a column each);
            ``None``: every column but the keys, of any dtype, like pandas.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 50, "age": [30.0, None] * 50,
        ...                    "town": ["a", "b"] * 50})
        >>> c = df.dp.groupby("sex", keys=["f", "m"]).count(epsilon=1.0, random_state=0)
        >>> list(c.columns), [str(t) for t in c.dtypes]
        (['age', 'town'], ['int64', 'int64'])
        """,
        "agg": """Several statistics per group in one release, like ``df.groupby(by).agg(func)``.

        Statistics of one column share their measurements: ``{"age": ["mean",
        "std"]}`` measures one pair of bound sums (count and centred sum) and one
        centred squares per group; a
        ``median`` is a permute-and-flip selection per group on the column's grid.
        Every column gets an equal share of ``epsilon``.

        Parameters
        ----------
        func : str, list of str or dict, optional
            A statistic or a list of them for every numeric column (the columns
            chosen by ``g[...]``, if any), or a dict ``column -> statistic`` or
            ``column -> [statistics]``; each one of ``"count"``, ``"sum"``,
            ``"mean"``, ``"var"``, ``"std"``, ``"median"``. Leave it out for
            named aggregations.
        **named : tuple or pandas.NamedAgg
            pandas' named aggregation: ``name=(column, statistic)`` or
            ``name=pd.NamedAgg(column, statistic)`` (on ``g["x"]``:
            ``name=statistic``); the result has one column per name, in the
            order given. The statistics are released as by ``func``.

        Returns
        -------
        pandas.DataFrame
            One row per key; columns ``column`` (all statistics given as strings),
            ``(column, statistic)`` (any given as a list), or the names of named
            aggregations, as pandas does.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 100, "age": [30.0, 50.0] * 100})
        >>> t = df.dp.groupby("sex", keys=["f", "m"]).agg(
        ...     {"age": ["mean", "std"]}, epsilon=1.0, bounds=(0, 100), random_state=0)
        >>> list(t.columns)
        [('age', 'mean'), ('age', 'std')]
        """,
        "describe": """A private ``df.groupby(by).describe()``: one plan, one charge.

        Per key: count, mean, std, the declared bounds (``min (declared)``, ``max
        (declared)``) and percentiles of each declared numeric column, shares of
        each declared categorical one; columns ``(column, statistic)``.

        Examples
        --------
        >>> import pandas as pd, pandas_dp
        >>> df = pd.DataFrame({"sex": ["f", "m"] * 200, "age": [30.0, 50.0] * 200})
        >>> d = df.dp.groupby("sex", keys=["f", "m"]).describe(
        ...     epsilon=2.0, bounds=(0, 100), random_state=0)
        >>> list(d.index), d.columns[:3].tolist()
        (['f', 'm'], [('age', 'count'), ('age', 'mean'), ('age', 'std')])
        """,
    }
    _method_docs["size"] = _method_docs["len"]  # pandas' other name for it

    def __repr__(self) -> str:
        kind = "private" if isinstance(self._keys, str) and self._keys == "private" else "declared"
        return f"<DPGroupBy by={self._by!r} keys={kind}>"

    def _release_moment(self, statistic: str, arguments: Mapping[str, Any]) -> Any:
        """The release of a catalogue moment method, per group."""
        check_min_count(arguments.get("min_count", 0))
        kw = {k: v for k, v in arguments.items() if k not in ("self", "columns")}
        cols, scalar = self._columns(arguments["columns"], self._grouping(kw["schema"]))
        if kw.get("numeric_only"):  # (dtypes are public)
            cols = numeric_labels(list(cols), self._frame)
        return self._moments({c: (statistic,) for c in cols}, kw, scalar)

    def _moments(
        self, requests: dict[Hashable, tuple[str, ...]], kw: dict[str, Any], scalar: bool
    ) -> Any:
        schema = kw.get("schema")
        grouping = self._grouping(schema)
        settings = self._settings(kw, schema)
        cols = {c: self._frame[c] for c in requests}
        wanted = {s for sts in requests.values() for s in sts}
        known: list[Hashable] = list(self._frame.columns)
        bounds = kw.get("bounds")
        if auto_bounds.is_auto(bounds):  # the release's own checks first: bounds cost budget
            check_ddof(kw.get("ddof", 1))
        # one range per column over every group's rows (REFERENCE §14)
        share = kw.get("bounds_epsilon_share", auto_bounds.DEFAULT_SHARE)  # (count: none)
        bounds, settings, auto = auto_bounds.resolve_if_auto(
            bounds, cols, settings, self._frame, bounds_epsilon_share=share
        )
        decls = moment_declarations(
            self._frame, cols, requests, bounds=bounds, schema=schema, known=known
        )
        extra = quantile_agg.agg_quantiles(requests, cols, decls, grouping)
        if extra is None and len(wanted) == 1 and all(len(v) == 1 for v in requests.values()):
            statistic = next(iter(wanted))
            out = st.release_moments(
                statistic,
                cols,
                decls,
                settings,
                scalar=scalar,
                ddof=kw.get("ddof", 1),
                grouping=grouping,
                frame=self._frame,
            )
        else:
            out = st.release_agg(
                requests,
                cols,
                decls,
                settings,
                ddof=kw.get("ddof", 1),
                grouping=grouping,
                frame=self._frame,
                extra=extra,
            )
        return auto_bounds.annotate(out, auto)

    # -------------------------------------------------------------- releases
    def _release_len(self, statistic: str, kw: dict[str, Any]) -> pd.Series:
        """``len`` (``size``): the noisy number of rows per group."""
        grouping = self._grouping(kw["schema"])
        return grouped.release_group_sizes(self._settings(kw, kw["schema"]), grouping, self._frame)

    def _release_count(self, statistic: str, kw: dict[str, Any]) -> pd.Series | pd.DataFrame:
        """``count``: non-missing values per group, of columns of any dtype."""
        cols, scalar = self._columns(kw["columns"], self._grouping(kw["schema"]), numeric=False)
        out: pd.Series | pd.DataFrame = self._moments({c: ("count",) for c in cols}, kw, scalar)
        return out

    def _release_agg(self, statistic: str, kw: dict[str, Any]) -> pd.DataFrame | pd.Series:
        func, named = kw["func"], kw.get("named") or {}
        if named:  # pandas' named aggregation: agg(m=("x", "mean"))
            if func is not None:
                raise TypeError(
                    "agg takes func or named aggregations (m=('x', 'mean')), not both, like pandas"
                )
            request, names = named_aggregation(named, self._selection)
            one = self._selection is not None and not isinstance(self._selection, list)
            # pandas' dtypes for the same statistics (g["x"].agg takes them as a list)
            plain = {**kw, "func": request[self._selection] if one else request, "named": None}
            table = self._like_pandas(statistic, lambda _, a: self._agg(request, dict(a)), plain)
            assert isinstance(table, pd.DataFrame)
            return named_columns(table, names)
        if func is None:
            raise TypeError(
                "agg needs the statistics: a name, a list, a dict column -> names, or "
                "named aggregations, e.g. g.agg(m=('x', 'mean'))"
            )
        return self._agg(func, kw)

    def _agg(self, func: Any, kw: dict[str, Any]) -> pd.DataFrame | pd.Series:
        """The release of ``agg(func)``, shaped like pandas'."""
        schema = kw["schema"]
        one = self._selection is not None and not isinstance(self._selection, list)
        if isinstance(func, str) or (isinstance(func, Sequence) and not isinstance(func, Mapping)):
            func = dict.fromkeys(self._columns(None, self._grouping(schema))[0], func)
        requests = agg_requests(func)
        self._columns(list(requests), self._grouping(schema))
        table: pd.DataFrame = self._moments(requests, kw, scalar=False)
        meta = table.attrs["dp"]  # the release's record, attached again to its new shape
        if not isinstance(table.columns, pd.MultiIndex):  # one statistic: (column, it)
            pairs = [(c, requests[c][0]) for c in table.columns]
            table.columns = pd.MultiIndex.from_tuples(pairs)
        if all(isinstance(v, str) for v in func.values()):
            table.columns = table.columns.get_level_values(0)
            if one:  # g["age"].agg("mean"): a Series by key, like pandas
                return attach(table.iloc[:, 0], meta)
        elif one:  # g["age"].agg(["mean", "std"]): one column per statistic
            table.columns = table.columns.get_level_values(1)
        return attach(table, meta)

    def _release_describe(self, statistic: str, kw: dict[str, Any]) -> pd.DataFrame:
        percentiles = check_percentiles(kw["percentiles"])
        selection_delta = None
        if auto_bounds.is_auto(kw["bounds"]) and kw["mechanism"] == "laplace":
            # pure-epsilon noise: the delta is the category selections' (describe_auto)
            selection_delta = check_selection_delta(kw["delta"])
            kw = {**kw, "delta": 0.0}
        grouping = self._grouping(kw["schema"])
        settings = self._settings(kw, kw["schema"])
        frame, columns = self._frame, self._selected(kw["columns"])
        wanted: list[Hashable]
        if columns is None:
            wanted = [c for c in frame.columns if c not in grouping.by]
        else:
            wanted = list(self._columns(columns, grouping)[0])
        out = release_described(
            frame,
            wanted,
            kw,
            settings,
            percentiles=percentiles,
            strict=columns is not None,
            schema=kw["schema"],
            known=list(frame.columns),
            grouping=grouping,
            selection_delta=selection_delta,
        )
        one = self._selection is not None and not isinstance(self._selection, list)
        if one and kw["columns"] is None and isinstance(out.columns, pd.MultiIndex):
            # g["age"].describe(): one column's statistics, without its label, like pandas
            meta = out.attrs["dp"]
            out.columns = out.columns.get_level_values(-1)
            out = attach(out, meta)
        return out
