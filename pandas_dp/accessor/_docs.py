"""Shared parameter text, stamped into every accessor method's docstring once.

pandas does the same with its ``Appender``/``doc`` decorators: the text of a
keyword that many methods take lives here, in one place, and
:func:`stamp_docs` adds it to the ``Parameters`` section of each method that
takes the keyword and does not document it itself -- so ``help(df.dp.mean)``
describes ``epsilon``, ``bounds``, ``schema`` ... without copies in the source.
"""

from __future__ import annotations

import functools
import inspect
from typing import TypeVar

from pandas_dp._docstrings import add_parameters
from pandas_dp.stats.auto_bands import DEFAULT_SHARE
from pandas_dp.stats.describe import DESCRIBE_METHOD, DESCRIBE_METHOD_NOTE
from pandas_dp.stats.describe_histogram import HISTOGRAM_SHARE
from pandas_dp.stats.describe_shares import SHARES_AUTO_MAX
from pandas_dp.stats.quantiles.estimators import INTERVAL_SHARE
from pandas_dp.stats.quantiles.releases import SELECT_BINS

__all__ = ["SHARED", "stamp_docs"]

T = TypeVar("T", bound=type)


def _quantile_method(default: str, note: str = "") -> str:
    return (
        f'method : {{"exponential", "tree"}}, default "{default}"\n'
        '    How quantiles are released. ``"exponential"``: exact permute-and-flip\n'
        "    selections among the grid's edges (several quantiles recursively, the\n"
        f"    median first), with {INTERVAL_SHARE:.0%} of the budget on the counts the\n"
        "    intervals read.\n"
        '    ``"tree"``: one noisy hierarchical histogram over the grid (16-ary),\n'
        "    every quantile and interval read off it." + note
    )


_QUANTILE_METHOD = _quantile_method("exponential")
_DESCRIBE_METHOD = _quantile_method(DESCRIBE_METHOD, DESCRIBE_METHOD_NOTE)

#: ``keyword -> numpydoc entry``; ``"method.keyword"`` for one method's own text.
SHARED: dict[str, str] = {
    "columns": "columns : label or list of labels, optional\n"
    "    One column (a scalar result) or several (a Series indexed by column);\n"
    "    ``None``: every numeric column, each with declared bounds (an undeclared\n"
    "    one raises).",
    "groupby.columns": "columns : label or list of labels, optional\n"
    "    One column (a Series indexed by key) or several (a DataFrame, a column\n"
    "    each); ``None``: every numeric column but the keys, each with declared\n"
    "    bounds.",
    "describe.columns": "columns : label or list of labels, optional\n"
    "    The columns to describe. ``None``: every column with declared bounds or\n"
    "    categories (and boolean columns); the others are skipped and listed in\n"
    '    the metadata. With ``bounds="auto"``: every numeric, boolean, text and\n'
    "    categorical column.",
    "groupby.describe.columns": "columns : label or list of labels, optional\n"
    "    The columns to describe per key. ``None``: every column but the keys with\n"
    "    declared bounds or categories; the others are skipped and listed in the\n"
    "    metadata.",
    **dict.fromkeys(
        ("cov.columns", "corr.columns"),
        "columns : list of labels, optional\n"
        "    The matrix's columns; ``None``: every numeric column, each with declared\n"
        "    bounds.",
    ),
    "value_counts.column": "column : label or list of labels\n"
    "    The column whose declared categories are counted; a list of columns gives\n"
    "    their contingency table (every combination of their declared values), like\n"
    "    ``df.value_counts(subset)``.",
    "percentiles": "percentiles : list of float, optional\n"
    "    As in pandas: the percentiles to include, in ``[0, 1]``. Default\n"
    "    ``[0.25, 0.5, 0.75]``. As pandas 3 does, only those given; before pandas 3\n"
    "    the median is added, as pandas 2 does.",
    "column": "column : label\n    The column to release.",
    "bins": "bins : int, optional\n"
    "    The grid's resolution: the declared bounds are cut into ``bins`` equal-width\n"
    f"    bins and quantiles are read off their edges. Default: {SELECT_BINS} for\n"
    '    ``method="exponential"`` (fewer per group of a group-by, 1000 for private\n'
    "    keys; edges finer than a grid of about 1000 bins pay a public penalty in the\n"
    '    selection\'s score), 1024 for ``method="tree"``.',
    "interval": "interval : bool, default True\n"
    '    Give the result intervals (``attrs["dp"].interval(alpha)``). With\n'
    f'    ``method="exponential"`` they cost {INTERVAL_SHARE:.0%} of the budget; ``False``\n'
    "    spends the whole budget on the quantiles (their error, where it scales as\n"
    f"    ``1 / epsilon``, {INTERVAL_SHARE:.0%} lower) and the result has no intervals.",
    "ddof": "ddof : int, default 1\n    Delta degrees of freedom, as in pandas.",
    "skipna": "skipna : bool, default True\n"
    "    Missing values are skipped, as in pandas; their number is a noisy\n"
    "    sufficient statistic of the release. ``False`` is refused: it would answer\n"
    "    NaN as soon as one value is missing, revealing it without noise.",
    "epsilon": "epsilon : float\n"
    "    Privacy budget of this release (required, > 0). Smaller is more private\n"
    "    and noisier.",
    "shares": 'shares : {"auto", True, False}, default "auto"\n'
    "    The share of each declared value for numeric columns whose schema declares\n"
    "    their values (``pa.Check.isin([1, 2, 3, 4, 5])``, an answer scale): rows\n"
    "    ``share 1`` ... after the column's numeric rows, as a categorical column's.\n"
    f'    ``"auto"``: columns with at most {SHARES_AUTO_MAX} declared values; ``True``: every\n'
    "    column with declared values; ``False``: none. A column's shares are one\n"
    "    histogram that weighs as much as a numeric column's measurements (so the\n"
    "    column takes two columns' part of ``epsilon``, half for its shares).",
    "histogram": "histogram : int, optional\n"
    "    Also release each numeric column's histogram: this many equal bins of its\n"
    '    declared range (2 to 1000), kept in ``attrs["dp"].details["histograms"]``\n'
    "    (edges and noisy counts; the table's shape is unchanged). With\n"
    '    ``method="tree"`` it is read off the percentiles\' noisy tree, free; with\n'
    f"    the selection it spends {HISTOGRAM_SHARE:.0%} of each numeric column's part of\n"
    "    ``epsilon`` (its other rows keep the rest). ``None``: none, nothing spent.",
    "delta": "delta : float, default 0.0\n"
    '    Only with ``mechanism="gaussian"``: the probability the epsilon bound may fail.',
    "bounds": 'bounds : (lower, upper), dict or "auto", optional\n'
    "    Public bounds, for every column or per column (``{column: (lower, upper)}``).\n"
    "    Values outside are clamped. They take precedence over ``schema`` and must\n"
    '    never be read off the data. ``"auto"`` (sum, mean, var, std, sem, skew,\n'
    "    median, quantile and agg): each column's range is first released privately,\n"
    "    over all rows, with ``bounds_epsilon_share`` of ``epsilon`` (REFERENCE §14;\n"
    "    recorded in the ledger\n"
    '    and in ``attrs["dp"].details``), then the statistic with the rest on it.\n'
    '    describe (not grouped) takes ``"auto"`` too: each undeclared numeric column\n'
    "    gets such bounds, each undeclared text or categorical column categories by\n"
    "    partition selection (needs ``delta > 0``; rare values never appear), each\n"
    "    with ``bounds_epsilon_share`` of its share of ``epsilon``; declared columns\n"
    "    keep their declarations.",
    "bounds_epsilon_share": f"bounds_epsilon_share : float, default {DEFAULT_SHARE}\n"
    '    With ``bounds="auto"``: the share of ``epsilon`` spent on estimating the\n'
    "    bounds (describe: of each estimated column's part, on its bounds or its\n"
    "    categories), in (0, 1); the release gets the rest. The default was measured\n"
    "    (``benchmarks/results/auto_bounds.md``). Recorded in the metadata\n"
    '    (``details["bounds_epsilon_share"]``, describe\'s ``details["auto"]["auto_share"]``).\n'
    "    Checked before anything is spent, also when ``bounds`` are declared.",
    "categories": 'categories : list, dict or "dtype", optional\n'
    '    Public categories (per column with a dict). ``"dtype"`` publishes the\n'
    "    column's own categorical dtype: only valid when that dtype was set from\n"
    "    public information.",
    "schema": "schema : pandera DataFrameSchema, DataFrameModel, SeriesSchema or Column, optional\n"
    "    Where bounds (``in_range``, ``between``, ``ge``/``gt`` + ``le``/``lt``, ``isin``)\n"
    "    and categories are declared. Without ``bounds``/``schema``, the schema pandera\n"
    "    attached with ``schema.validate(df)`` is used.",
    **dict.fromkeys(
        ("count.schema", "len.schema", "size.schema", "counts.schema"),
        "schema : pandera DataFrameSchema or DataFrameModel, optional\n"
        '    Read for its privacy unit only (``metadata={"pandas_dp": {"privacy_unit":\n'
        '    ..., "max_rows_per_unit": ...}}``); a counting release needs no bounds. On a\n'
        "    Series a declared unit is refused (the Series holds no unit column).",
    ),
    **dict.fromkeys(
        ("value_counts.method", "proportions.method"),
        'method : {"project", "rescale", "all_but_one", "hierarchical"}, default "project"\n'
        "    How the proportions are made to sum to one (REFERENCE.md §5); with\n"
        '    ``normalize=True`` for ``value_counts``. ``"project"``, the Euclidean\n'
        "    projection onto the simplex, was best or tied (within 2 %) in all 48\n"
        '    settings of the accuracy study with ``bounding="bit"`` and in 88 of 96\n'
        '    overall; ``"rescale"`` did up to 20 % better at small ``n * epsilon`` with\n'
        '    ``"truncated"`` or ``"none"``.',
    ),
    "method": 'method : str, default "auto"\n'
    '    How the statistic is estimated: ``"auto"``/``"moments"`` from noisy\n'
    '    sufficient statistics (private ``n``); ``"direct"``: Liu\'s releases with\n'
    '    sensitivity ``R/n``, only under ``neighbouring="substitute"``. For\n'
    "    proportions: the sum-to-one procedure.",
    "mechanism": 'mechanism : {"laplace", "gaussian"}, default "laplace"\n'
    "    Laplace (pure epsilon-DP; discrete for counts) or Gaussian (needs delta).",
    "bounding": 'bounding : {"bit", "truncated", "none"}, default "bit"\n'
    '    Output bounding: clamp the estimate to its public range (``"bit"``),\n'
    '    resample inside it with a re-calibrated scale (``"truncated"``), or not.',
    "neighbouring": 'neighbouring : {"add_remove", "substitute"}, default "add_remove"\n'
    '    ``"add_remove"``: one person added or removed; the number of rows is\n'
    '    private. ``"substitute"``: one person\'s rows changed; *declares* the\n'
    "    frame's length public (only for frames whose length really is public).",
    "out_of_bounds": 'out_of_bounds : {"clip", "raise"}, default "clip"\n'
    '    ``"raise"`` validates with pandera first: not DP-safe, and the budget is\n'
    "    charged before the check.",
    "random_state": "random_state : int or numpy.random.Generator, optional\n"
    "    Reproducible, *insecure* noise for tests and teaching (``secure=False``\n"
    "    in the metadata). Default: the operating system's CSPRNG.",
    "budget": "budget : PrivacyBudget, optional\n"
    "    Charged together with every active budget (``with budget:``).",
    "normalize": "normalize : bool, default False\n    Release shares instead of counts.",
    "sort": "sort : bool\n    Sort by the released values, like pandas.",
    "ascending": "ascending : bool, default False\n    Sort order when ``sort`` is true.",
    "dropna": "dropna : bool, default True\n"
    "    Leave missing values out (else they get a bucket of their own).",
    "other": "other : label, optional\n    A bucket for values outside the declared categories.",
    "via": 'via : {"counts", "proportions"}, default "counts"\n'
    "    Noise integer counts and divide by their noisy total (the default), or noise\n"
    "    Liu's ``count / n`` entries (sensitivity ``1/n`` each; substitute only).\n"
    "    Under substitution both add the same noise; under add/remove the counts\n"
    "    need half as much (their histogram has L1 sensitivity 1, the proportion\n"
    "    vector ``2/n``, as ``n`` changes with the record).",
    "psd": 'psd : {"clip", "higham"}, default "clip"\n    Positive semi-definite repair.',
    "numeric_only": "numeric_only : bool, default False\n    Count numeric columns only.",
    **dict.fromkeys(
        (f"{name}.numeric_only" for name in ("sum", "mean", "var", "std", "sem")),
        "numeric_only : bool, default False\n"
        "    Leave out the named columns that are not numeric, as pandas does (``None``\n"
        "    already selects the numeric columns only).",
    ),
    "interpolation": "interpolation : None\n"
    "    pandas' interpolation between data values, which a private quantile never\n"
    "    does (it is chosen by rank on the public grid): any value is refused before\n"
    "    the charge.",
    "engine": "engine : None\n"
    "    pandas' computing engine; a release runs pandas-dp's own: any value is\n"
    "    refused before the charge.",
    "engine_kwargs": "engine_kwargs : None\n"
    "    Options of pandas' numba engine: any value is refused before the charge.",
    "axis": 'axis : {0, "index"}, optional\n'
    "    pandas' default, a statistic of each column. A statistic of each row\n"
    '    (``1``/``"columns"``) is one record\'s own values, released once per record:\n'
    "    refused before the charge.",
    "min_periods": "min_periods : None\n"
    "    pandas answers NaN below this many complete rows, which would reveal the\n"
    "    private count: any value is refused before the charge.",
    **dict.fromkeys(
        (f"{name}.numeric_only" for name in ("median", "quantile", "cov", "corr")),
        "numeric_only : bool, optional\n"
        "    Only the numeric columns among those named (every column when none are),\n"
        "    as pandas does; on a Series or ``g[col]``, a column that is not numeric is\n"
        "    refused, as pandas refuses it.",
    ),
    "include": "include : 'all', dtype or list of dtypes, optional\n"
    "    Describe the columns of these dtypes, as pandas' ``select_dtypes`` picks\n"
    "    them (``'all'``: every column); instead of naming the columns. Ignored on a\n"
    "    Series and ``g[col]``, like pandas.",
    "exclude": "exclude : dtype or list of dtypes, optional\n"
    "    Leave the columns of these dtypes out (with or without ``include``).",
    "subset": "subset : label or list of labels, optional\n"
    "    pandas' name for the columns to count (instead of ``column``); a frame's\n"
    "    ``value_counts()`` with neither counts every column, like pandas.",
    "value_counts.bins": "bins : None\n"
    "    pandas cuts the data's own [min, max] range into equal bins, and those\n"
    "    extremes are private: any value is refused before the charge. Cut a declared\n"
    "    range with ``pd.cut`` and count the bins (``categories='dtype'``) instead.",
    "min_count": "min_count : int, default 0\n"
    "    Only pandas' default, 0, is supported: pandas answers NaN when fewer values\n"
    "    are present, which would reveal the private count.",
    "queries": "queries : dict\n"
    "    Name -> boolean mask or query string (:mod:`pandas_dp.request.queries`).",
    "privacy_unit": "privacy_unit : label, optional\n"
    "    The column identifying a person (a unit), when one person may hold several\n"
    "    rows; needs ``max_rows_per_unit``. Default: every row is its own unit. May be\n"
    '    declared once in the schema: ``metadata={"pandas_dp": {"privacy_unit": ...}}``.',
    "max_rows_per_unit": "max_rows_per_unit : int, optional\n"
    "    ``k``: at most this many rows of one unit are kept (chosen by a keyed hash,\n"
    "    whatever the row order); the sensitivities grow ``k``-fold. Choose it from\n"
    "    public knowledge, not from the data.",
    "max_groups_per_unit": "max_groups_per_unit : int, optional\n"
    "    ``g``: groups one unit may contribute to (default ``max_rows_per_unit``).",
    "quantile.method": _QUANTILE_METHOD,
    "median.method": _QUANTILE_METHOD,
    "describe.method": _DESCRIBE_METHOD,
    "describe.delta": "delta : float, default 0.0\n"
    '    With ``mechanism="gaussian"``: the probability the epsilon bound may fail.\n'
    '    With ``bounds="auto"`` (not grouped) it is also partition selection\'s: the\n'
    "    probability that a value one person holds is shown as a category; it must be\n"
    "    above 0 when a text or categorical column has no declared categories (Laplace\n"
    "    noise: the selections spend all of it; Gaussian noise: half).",
    "max_rows_per_group": "max_rows_per_group : int, optional\n"
    "    ``c``: rows one unit may contribute to one group (default ``max_rows_per_unit``).",
}


def _entry(scope: str, name: str, param: str) -> str | None:
    """The most specific text: ``scope.name.param``, ``scope.param``, ``name.param``,
    then ``param``."""
    for key in (f"{scope}.{name}.{param}", f"{scope}.{param}", f"{name}.{param}", param):
        if key in SHARED:
            return SHARED[key]
    return None


def stamp_docs(cls: T) -> T:
    """Class decorator: stamp the shared parameter text into every public method.

    The methods the class inherits (from the mixins that hold a family of its
    releases) are stamped too; stamping a docstring twice changes nothing. A
    class's ``_doc_scope`` (``"groupby"``) selects its own entries first. A method
    of a private mixin takes the class's name in its ``__qualname__``, which
    Python's own messages print (``DPFrameAccessor.quantile() got an unexpected
    keyword argument``, not the mixin's name).
    """
    scope = getattr(cls, "_doc_scope", "")
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if not name.startswith("_"):
            add_parameters(member, functools.partial(_entry, scope, name))
            if member.__qualname__.startswith("_"):
                member.__qualname__ = f"{cls.__name__}.{name}"
    return cls
