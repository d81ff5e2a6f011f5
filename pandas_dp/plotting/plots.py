"""Plots of releases and of the output bounding modes (needs matplotlib).

matplotlib is imported only when a plot is drawn, so ``import pandas_dp`` works
without it; install it with ``pip install "pandas-dp[plot]"``.

:func:`plot_release`
    A release with its confidence interval, read from ``result.attrs["dp"]``:
    a point with an error bar for a scalar, one error bar per entry for a
    Series, an annotated heatmap for a matrix (``cov``, ``corr``).
:func:`plot_groups`
    A grouped release (``df.dp.groupby(by, keys=...).mean(column, ...)``) with
    its interval per key: the keys of the first grouping column along the x
    axis, those of a second one side by side in colours.
:func:`plot_bounding_modes`
    The distribution of many releases of one exact value under each output
    bounding mode (``"none"``, ``"bit"``, ``"truncated"``), with the bias of each,
    from the samples of :func:`simulate_bounding_modes`.

Every function draws on the :class:`~matplotlib.axes.Axes` it is given (``ax=``)
or on a new figure, and returns the Axes. A new figure uses matplotlib's
constrained layout, so ``ax.figure.savefig(path)`` keeps the legends and labels
on the canvas; on your own figure, create it with ``layout="constrained"`` (or
save it with ``bbox_inches="tight"``) to get the same.

The entries of a category release (``value_counts``, ``proportions``) are drawn
in the order the categories were declared (an ordered ``pd.CategoricalDtype``
keeps its order), not sorted by their noisy values.

The release plots live here; the bounding modes (:func:`plot_bounding_modes`,
:func:`simulate_bounding_modes`) in :mod:`pandas_dp.plotting.bounding`, exported
here, and the figure every plot opens without ``ax=`` in
:mod:`pandas_dp.plotting.axes`.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import pandas as pd, pandas_dp
>>> from pandas_dp.plotting.plots import plot_release
>>> s = pd.Series(["N", "S", "N", "E", "N", "S"] * 50, name="region")
>>> p = s.dp.proportions(epsilon=1.0, categories=["N", "S", "E", "W"], random_state=0)
>>> ax = plot_release(p)
>>> [t.get_text() for t in ax.get_xticklabels()]
['N', 'S', 'E', 'W']
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from pandas_dp.plotting.axes import new_axes
from pandas_dp.plotting.bounding import plot_bounding_modes, simulate_bounding_modes
from pandas_dp.result.values import DPMetadata

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_bounding_modes", "plot_groups", "plot_release", "simulate_bounding_modes"]


def _metadata(result: Any) -> DPMetadata:
    attrs = getattr(result, "attrs", None)
    meta = attrs.get("dp") if isinstance(attrs, dict) else None
    if not isinstance(meta, DPMetadata):
        raise TypeError(
            f"plot_release draws a pandas-dp release (a value returned by a .dp method, "
            f"which carries its metadata in attrs['dp']); got {type(result).__name__} "
            f"without it"
        )
    return meta


def _title(meta: DPMetadata) -> str:
    columns = ", ".join(str(c) for c in meta.columns)
    budget = f"ε={meta.epsilon:g}" + (f", δ={meta.delta:g}" if meta.delta else "")
    what = f"{meta.statistic}({columns})" if columns else meta.statistic
    return f"{what}, {meta.mechanism}, {budget}"


def _interval_frame(meta: DPMetadata, alpha: float, simultaneous: bool) -> pd.DataFrame | None:
    try:
        frame = meta.interval(alpha, simultaneous=simultaneous)
    except NotImplementedError:
        return None
    return frame if isinstance(frame, pd.DataFrame) else None


def _label(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "missing"
    return str(value)


def plot_release(
    result: Any,
    ax: Axes | None = None,
    alpha: float = 0.05,
    exact: Any = None,
    *,
    simultaneous: bool = False,
    annotate: bool = True,
    order: str | Sequence[Any] = "declared",
) -> Axes:
    """Draw a release with its ``1 - alpha`` confidence interval.

    What is drawn depends on the shape of the release:

    * a scalar (:class:`~pandas_dp.DPFloat`, :class:`~pandas_dp.DPInt`): a point
      with an error bar;
    * a :class:`pandas.Series` (``value_counts``, ``proportions``, ``counts``,
      several means ...): one point with an error bar per entry, a category
      release in the declared order of its categories (see ``order``);
    * a square :class:`pandas.DataFrame` (``cov``, ``corr``): a heatmap, each cell
      annotated with its value.

    The intervals are those of ``result.attrs["dp"].interval``: they cover the
    exact statistic *of the data clamped to the declared bounds*.

    Parameters
    ----------
    result : DPFloat, DPInt, pandas.Series or pandas.DataFrame
        A value returned by a ``.dp`` method, with its ``attrs["dp"]`` metadata.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure by default.
    alpha : float, default 0.05
        One minus the confidence level of the error bars.
    exact : float, pandas.Series or pandas.DataFrame, optional
        The exact statistic, drawn as crosses (or written under each heatmap
        value) -- for teaching and testing only: never publish it.
    simultaneous : bool, default False
        For a vector release, draw intervals that hold for all entries at once.
    annotate : bool, default True
        Write the values into the cells of a heatmap.
    order : {"declared", "result"} or sequence, default "declared"
        The order of the entries of a Series. ``"declared"``: the declared
        categories of a ``value_counts`` or ``proportions`` release in their
        declared order (the order of an ordered ``pd.CategoricalDtype``), even
        when the release was sorted by its noisy values, then any ``other`` or
        missing-value bucket; other Series as they are. ``"result"``: as the
        Series is ordered. A sequence: these labels, each entry of the Series
        exactly once.

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If ``result`` carries no pandas-dp metadata.
    ValueError
        For a DataFrame that is not a square matrix (e.g. ``describe``), or an
        ``order`` that is not ``"declared"``, ``"result"`` or a rearrangement of
        the Series' labels.
    ImportError
        If matplotlib is not installed.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd, pandas_dp
    >>> from pandas_dp.plotting.plots import plot_release
    >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 25})
    >>> m = df.dp.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
    >>> ax = plot_release(m, exact=df["age"].mean())
    >>> len(ax.lines) > 0
    True
    """
    meta = _metadata(result)
    if isinstance(result, pd.DataFrame):
        return _plot_matrix(result, meta, ax, exact, annotate)
    if isinstance(result, pd.Series):
        return _plot_vector(result, meta, ax, alpha, exact, simultaneous, order)
    return _plot_scalar(float(result), meta, ax, alpha, exact)


def plot_groups(
    result: pd.Series,
    ax: Axes | None = None,
    alpha: float = 0.05,
    exact: Any = None,
    *,
    simultaneous: bool = False,
) -> Axes:
    """Draw a grouped release with the ``1 - alpha`` confidence interval of every key.

    For a release grouped by one column the keys are along the x axis; for two
    columns (a two-level :class:`~pandas.MultiIndex`, e.g. ``groupby(["region",
    "smoker"])``) the keys of the first column are along the x axis and those of
    the second are drawn side by side, one colour each, with a legend. Keys are
    drawn in the release's (sorted) order.

    Parameters
    ----------
    result : pandas.Series
        A grouped release of one column (``count``, ``len``, ``sum``, ``mean``,
        ``var``, ``std`` of a :class:`~pandas_dp.accessor.groupby.DPGroupBy`), with its
        ``attrs["dp"]`` metadata.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure by default.
    alpha : float, default 0.05
        One minus the confidence level of the error bars.
    exact : pandas.Series, optional
        The exact statistic per key (e.g. ``df.groupby(by)[column].mean()``),
        drawn as crosses -- for teaching and testing only: never publish it.
    simultaneous : bool, default False
        Intervals that hold for all keys at once (a union bound over the keys).

    Returns
    -------
    matplotlib.axes.Axes

    Raises
    ------
    TypeError
        If ``result`` is not a Series carrying pandas-dp metadata.
    ValueError
        If the Series is indexed by more than two levels.
    ImportError
        If matplotlib is not installed.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd, pandas_dp
    >>> from pandas_dp.plotting.plots import plot_groups
    >>> df = pd.DataFrame({"sex": ["f", "m"] * 100, "smoker": [True, True, False, False] * 50,
    ...                    "age": [30.0, 50.0, 40.0, 60.0] * 50})
    >>> m = df.dp.groupby(["sex", "smoker"], keys={"sex": ["f", "m"]}).mean(
    ...     "age", epsilon=1.0, bounds=(0, 100), random_state=0)
    >>> ax = plot_groups(m)
    >>> [t.get_text() for t in ax.get_xticklabels()]
    ['f', 'm']
    >>> ax.get_legend_handles_labels()[1]
    ['smoker = False', 'smoker = True']
    """
    meta = _metadata(result)
    if not isinstance(result, pd.Series):
        raise TypeError(
            f"plot_groups draws a grouped release of one column (a Series); got "
            f"{type(result).__name__}. Select one column of a DataFrame release first"
        )
    index = result.index
    if index.nlevels > 2:
        raise ValueError(
            f"plot_groups draws one or two grouping columns; this release is indexed by "
            f"{index.nlevels} ({list(index.names)})"
        )
    frame = _interval_frame(meta, alpha, simultaneous)
    values = result.to_numpy(dtype=np.float64)
    if frame is not None and len(frame) == len(result):
        lower = frame["lower"].to_numpy(dtype=np.float64)
        upper = frame["upper"].to_numpy(dtype=np.float64)
    else:
        lower = upper = values
    exact_values = (
        None if exact is None else pd.Series(exact).reindex(index).to_numpy(dtype=np.float64)
    )
    if index.nlevels == 1:
        outer = list(dict.fromkeys(index))
        inner: list[Any] = [None]
        pairs = [(key, None) for key in index]
    else:
        outer = list(dict.fromkeys(index.get_level_values(0)))
        inner = list(dict.fromkeys(index.get_level_values(1)))
        pairs = list(index)
    width = 0.7 / len(inner)
    axes = new_axes(ax, (max(3.5, 0.6 * len(pairs) + 2.0), 3.6))
    for j, second in enumerate(inner):
        rows = np.array([i for i, (_, b) in enumerate(pairs) if b == second], dtype=np.intp)
        x = np.array([outer.index(pairs[i][0]) for i in rows], dtype=np.float64)
        x += (j - (len(inner) - 1) / 2) * width
        yerr = _yerr(values[rows], lower[rows], upper[rows])
        label = (
            "release, " + _intervals(alpha, simultaneous)
            if second is None
            else f"{index.names[1]} = {_label(second)}"
        )
        axes.errorbar(x, values[rows], yerr=yerr, fmt="o", color=f"C{j}", capsize=4, label=label)
        if exact_values is not None:
            axes.plot(
                x,
                exact_values[rows],
                "x",
                color="k",
                markersize=8,
                label="exact" if j == len(inner) - 1 else None,
            )
    title = _title(meta)
    if len(inner) > 1:
        title += ", " + _intervals(alpha, simultaneous)
    return _finish(axes, outer, index.names[0], result, meta, title)


def _intervals(alpha: float, simultaneous: bool) -> str:
    """What the error bars of a vector are (in legends and titles)."""
    return f"{1 - alpha:.0%} {'simultaneous ' if simultaneous else ''}intervals"


def _yerr(values: np.ndarray, lower: Any, upper: Any) -> np.ndarray:
    """The error bars' lengths below and above ``values`` (never negative)."""
    return np.vstack([np.maximum(values - lower, 0.0), np.maximum(upper - values, 0.0)])


def _finish(
    axes: Axes, keys: Sequence[Any], name: Any, result: pd.Series, meta: DPMetadata, title: str
) -> Axes:
    """Label the x axis with ``keys`` (at 0, 1, ...) and ``name``, then the y axis,
    the title and the legend of a vector's plot."""
    n = len(keys)
    axes.set_xticks(np.arange(n, dtype=np.float64))
    axes.set_xticklabels([_label(v) for v in keys], rotation=0 if n <= 8 else 45)
    axes.set_xlim(-0.6, n - 0.4)
    if name is not None:
        axes.set_xlabel(str(name))
    axes.set_ylabel(str(result.name) if result.name is not None else meta.statistic)
    axes.set_title(title, fontsize="medium")
    axes.legend(fontsize="small")
    return axes


def _plot_scalar(value: float, meta: DPMetadata, ax: Axes | None, alpha: float, exact: Any) -> Axes:
    axes = new_axes(ax, (3.2, 3.6))
    lo, hi = meta.interval(alpha)
    label = f"release, {1 - alpha:.0%} interval"
    yerr = _yerr(np.array([value]), lo, hi)
    axes.errorbar([0.0], [value], yerr=yerr, fmt="o", color="C0", capsize=6, label=label)
    if exact is not None:
        axes.plot([0.0], [float(exact)], "x", color="k", markersize=9, label="exact")
    axes.set_xticks([0.0])
    axes.set_xticklabels([", ".join(str(c) for c in meta.columns) or meta.statistic])
    axes.set_xlim(-1.0, 1.0)
    axes.set_ylabel(meta.statistic)
    axes.set_title(_title(meta), fontsize="medium")
    axes.legend(fontsize="small")
    return axes


def _plot_vector(
    result: pd.Series,
    meta: DPMetadata,
    ax: Axes | None,
    alpha: float,
    exact: Any,
    simultaneous: bool,
    order: str | Sequence[Any],
) -> Axes:
    k = len(result)
    positions = _entry_order(result, meta, order)
    frame = _interval_frame(meta, alpha, simultaneous)
    if frame is not None and len(frame) == k and not frame.index.equals(result.index):
        frame = frame.reindex(result.index)
    result = result.iloc[positions]
    axes = new_axes(ax, (max(3.5, 0.7 * k + 2.0), 3.6))
    x = np.arange(k, dtype=np.float64)
    values = result.to_numpy(dtype=np.float64)
    if frame is not None and len(frame) == k:
        frame = frame.iloc[positions]
        lower = frame["lower"].to_numpy(dtype=np.float64)
        upper = frame["upper"].to_numpy(dtype=np.float64)
        yerr = _yerr(values, lower, upper)
        label = "release, " + _intervals(alpha, simultaneous)
        axes.errorbar(x, values, yerr=yerr, fmt="o", color="C0", capsize=5, label=label)
    else:
        axes.plot(x, values, "o", color="C0", label="release")
    if exact is not None:
        exact_values = pd.Series(exact).reindex(result.index).to_numpy(dtype=np.float64)
        axes.plot(x, exact_values, "x", color="k", markersize=9, label="exact")
    return _finish(axes, list(result.index), result.index.name, result, meta, _title(meta))


def _entry_order(result: pd.Series, meta: DPMetadata, order: str | Sequence[Any]) -> np.ndarray:
    """Positions of ``result``'s entries in the order to draw them."""
    k = len(result)
    if isinstance(order, str):
        if order == "result":
            return np.arange(k)
        if order != "declared":
            raise ValueError(
                f'order={order!r} is not supported; use "declared", "result" or a list '
                f"of the Series' labels"
            )
        declared = meta.details.get("categories")
        if not isinstance(declared, list):
            return np.arange(k)  # not a category release: as it is
        wanted: list[Any] = declared
    else:
        wanted = list(order)
    found = result.index.get_indexer(pd.Index(wanted, dtype=object))
    picked = [int(i) for i in found if i >= 0]
    if isinstance(order, str):
        # the declared categories first, then the ``other`` and missing buckets
        seen = set(picked)
        rest = [i for i in range(k) if i not in seen]
        return np.array(picked + rest, dtype=np.intp)
    if len(wanted) != k or len(set(picked)) != k:
        raise ValueError(
            f"order must list each label of the Series exactly once; got {wanted!r} "
            f"for the labels {list(result.index)!r}"
        )
    return np.array(picked, dtype=np.intp)


def _plot_matrix(
    result: pd.DataFrame, meta: DPMetadata, ax: Axes | None, exact: Any, annotate: bool
) -> Axes:
    if result.shape[0] != result.shape[1] or not result.index.equals(result.columns):
        raise ValueError(
            f"plot_release draws a DataFrame as a matrix (cov, corr); this "
            f"{meta.statistic} release has shape {result.shape}. Plot its statistics "
            f"one by one instead (e.g. plot_release(df.dp.mean(columns, ...)))"
        )
    p = result.shape[0]
    axes = new_axes(ax, (1.1 * p + 2.5, 1.0 * p + 1.5))
    values = result.to_numpy(dtype=np.float64)
    limit = 1.0 if meta.statistic == "corr" else float(np.max(np.abs(values))) or 1.0
    image = axes.imshow(values, cmap="RdBu_r", vmin=-limit, vmax=limit)
    axes.figure.colorbar(image, ax=axes, shrink=0.8)
    labels = [str(c) for c in result.columns]
    axes.set_xticks(np.arange(p))
    axes.set_yticks(np.arange(p))
    axes.set_xticklabels(labels, rotation=45 if p > 3 else 0)
    axes.set_yticklabels(labels)
    exact_values = None
    if exact is not None:
        exact_values = (
            pd.DataFrame(exact).reindex(index=result.index, columns=result.columns).to_numpy()
        )
    if annotate:
        for i in range(p):
            for j in range(p):
                text = f"{values[i, j]:.3g}"
                if exact_values is not None:
                    text += f"\n(exact {float(exact_values[i, j]):.3g})"
                dark = abs(values[i, j]) > 0.6 * limit
                axes.text(
                    j,
                    i,
                    text,
                    ha="center",
                    va="center",
                    fontsize="small",
                    color="white" if dark else "black",
                )
    axes.set_title(_title(meta), fontsize="medium")
    return axes
