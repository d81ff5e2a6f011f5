"""pandas' group-by ``as_index`` and named aggregation on the group-by accessor.

* ``agg`` also takes pandas' named aggregation, ``g.agg(m=("x", "mean"))`` or
  ``pd.NamedAgg("x", "mean")`` (:func:`named_aggregation`): one release of the
  statistics named, its columns then chosen and renamed (:func:`named_columns`,
  post-processing);
* with ``groupby(..., as_index=False)`` the keys become the leading columns of a
  frame with a default row index, as pandas does (:func:`keys_as_columns`), for
  every release: :func:`with_options` wraps the class's ``_release_<family>``
  methods (the public methods stay those the catalogue made,
  :mod:`~pandas_dp.accessor._methods`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from pandas_dp.result.values import attach

__all__ = ["keys_as_columns", "named_aggregation", "named_columns", "named_rows", "with_options"]

T = TypeVar("T", bound=type)


def named_aggregation(
    named: Mapping[str, Any], selection: Any
) -> tuple[dict[Hashable, list[str]], list[tuple[str, Hashable, str]]]:
    """pandas' named aggregation as an ``agg`` request and the columns to make.

    Parameters
    ----------
    named : mapping
        ``name -> (column, statistic)`` (a tuple or :class:`pandas.NamedAgg`), or
        ``name -> statistic`` on one selected column (``g["x"].agg(m="mean")``).
    selection : label, list or None
        The column chosen by ``g[...]``, if one.

    Returns
    -------
    request : dict
        ``column -> [statistics]`` for ``agg`` (each pair once).
    columns : list of tuples
        ``(name, column, statistic)`` in the order named.

    Examples
    --------
    >>> named_aggregation({"m": ("x", "mean"), "s": pd.NamedAgg("y", "sum")}, None)
    ({'x': ['mean'], 'y': ['sum']}, [('m', 'x', 'mean'), ('s', 'y', 'sum')])
    """
    one = selection is not None and not isinstance(selection, list)
    request: dict[Hashable, list[str]] = {}
    columns: list[tuple[str, Hashable, str]] = []
    for name, spec in named.items():
        if isinstance(spec, pd.NamedAgg):  # (pandas 3's has args and kwargs too)
            column, statistic = spec.column, spec.aggfunc
            if any(getattr(spec, f, None) for f in ("args", "kwargs")):
                raise TypeError(
                    f"named aggregation {name}=: a statistic takes no arguments here; "
                    f"got pd.NamedAgg(..., args/kwargs). Pass the statistic's own keywords "
                    f"(ddof=, bounds=) to agg"
                )
        elif isinstance(spec, tuple) and len(spec) == 2:
            column, statistic = spec
        elif one and isinstance(spec, str):
            column, statistic = selection, spec
        else:
            form = "name='mean'" if one else "name=('column', 'mean')"
            raise TypeError(
                f"named aggregation {name}={spec!r} must be {form} (or "
                f"pd.NamedAgg(column, statistic)), like pandas'"
            )
        if not isinstance(statistic, str):
            raise TypeError(
                f"named aggregation {name}=: the statistic must be named by a string "
                f"('mean', 'sum' ...); got {statistic!r}. A function would read the rows"
            )
        wanted = request.setdefault(column, [])
        if statistic not in wanted:
            wanted.append(statistic)
        columns.append((name, column, statistic))
    return request, columns


def _renamed(meta: Any, entries: list[tuple[Any, list[Any]]]) -> Any:
    """The record ``meta`` with its interval's entries chosen and relabelled:
    ``entries`` lists ``(new label, [labels it may have in meta])`` in the new order.
    Post-processing of the released record; the record as it is when an entry is not
    found (never raises after the charge)."""
    old = getattr(meta, "_index", None)
    if old is None or getattr(meta, "_interval", None) is None:
        return meta
    where: dict[Any, int] = {}
    for i, label in enumerate(old):
        try:
            where.setdefault(label, i)
        except TypeError:  # (an unhashable label: that entry cannot be named)
            continue
    order = []
    for _, candidates in entries:
        found = [where[c] for c in candidates if c in where]
        if not found:
            return meta
        order.append(found[0])
    return dataclasses.replace(
        meta,
        _interval=functools.partial(_chosen, meta._interval, np.asarray(order, dtype=np.intp)),
        _index=[label for label, _ in entries],
    )


def _chosen(
    interval: Callable[[float], tuple[np.ndarray, np.ndarray]], order: np.ndarray, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = interval(alpha)
    return np.asarray(lo)[order], np.asarray(hi)[order]


def _cell(column: Hashable, statistic: str, one: bool) -> list[Any]:
    """The labels a ``(column, statistic)`` entry may have in an ``agg`` record: with
    the statistic, or without it where the column has one statistic only."""
    return [(column, statistic), (column,)] if one else [(column, statistic)]


def _single(columns: list[tuple[str, Hashable, str]]) -> dict[Hashable, bool]:
    """Whether each named column is asked for one statistic only."""
    stats: dict[Hashable, set[str]] = {}
    for _, c, stat in columns:
        stats.setdefault(c, set()).add(stat)
    return {c: len(v) == 1 for c, v in stats.items()}


def named_columns(table: pd.DataFrame, columns: list[tuple[str, Hashable, str]]) -> pd.DataFrame:
    """The released table's ``(column, statistic)`` columns, renamed and in order; the
    record's interval labelled ``(key, name)`` like the table's cells."""
    meta = table.attrs.get("dp")
    if meta is not None:
        one = _single(columns)
        entries = [
            ((key, name), [(key, *cell) for cell in _cell(c, s, one[c])])
            for key in table.index
            for name, c, s in columns
        ]
        meta = _renamed(meta, entries)
    if isinstance(table.columns, pd.MultiIndex):
        depth = table.columns.nlevels  # MultiIndex columns' levels, then the statistic
        picked = table.loc[
            :,
            [
                (*c, s) if isinstance(c, tuple) and len(c) + 1 == depth else (c, s)
                for _, c, s in columns
            ],
        ]
    else:  # g["x"].agg(...): one column per statistic
        picked = table.loc[:, [s for _, _, s in columns]]
    picked.columns = pd.Index([n for n, _, _ in columns])
    return attach(picked, meta) if meta is not None else picked


def named_rows(table: pd.DataFrame, rows: list[tuple[str, Hashable, str]]) -> pd.DataFrame:
    """A frame's named aggregation, like pandas' ``df.agg(m=("x", "mean"))``: one row
    per name, one column per column named, the statistic where the name asked for
    it and missing elsewhere (post-processing of ``table``, statistics by column); the
    record's interval labelled ``(name, column)`` like the cells released."""
    meta = table.attrs.get("dp")
    if meta is not None:
        one = _single(rows)
        meta = _renamed(meta, [((n, c), _cell(c, s, one[c])) for n, c, s in rows])
    columns = list(dict.fromkeys(c for _, c, _ in rows))
    values = np.full((len(rows), len(columns)), np.nan)
    for i, (_, column, stat) in enumerate(rows):
        values[i, columns.index(column)] = table[column].to_numpy(dtype=float)[
            list(table.index).index(stat)
        ]
    out = pd.DataFrame(values, index=pd.Index([n for n, _, _ in rows]), columns=columns)
    return attach(out, meta) if meta is not None else out


def keys_as_columns(out: Any, method: str) -> Any:
    """``as_index=False``: the keys as the leading columns, a default row index (like
    pandas; a group's size in a column ``"size"``)."""
    if not isinstance(out, pd.Series | pd.DataFrame):
        return out
    meta = out.attrs.get("dp")
    if isinstance(out, pd.Series) and method in ("len", "size"):
        frame = out.reset_index(name="size")
    else:
        frame = out.reset_index()
    frame.attrs = {}
    return attach(frame, meta) if meta is not None else frame


def with_options(cls: T) -> T:
    """Class decorator: every ``_release_<family>`` of a group-by class (and of its
    mixins) returns its release with the keys as columns under ``as_index=False``."""
    for name in dir(cls):
        if name.startswith("_release_") and callable(getattr(cls, name)):
            setattr(cls, name, _shaping(getattr(cls, name)))
    return cls


def _shaping(release: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(release)
    def shaped(self: Any, statistic: str, arguments: Any) -> Any:
        out = release(self, statistic, arguments)
        return out if self._options.as_index else keys_as_columns(out, statistic)

    return shaped
