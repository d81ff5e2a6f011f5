"""pandas keywords read with pandas' meaning, or refused with the reason.

The catalogue's methods (:mod:`~pandas_dp.accessor._methods`, ``PANDAS_KEYWORDS``)
list these keywords in their signatures with the default ``None`` (pandas' default
meaning); a call that passes one goes through :func:`translate` first thing, before the charge:

* ``axis``: ``0``/``"index"`` is pandas' default (a statistic of each column);
  ``1``/``"columns"`` is refused (a statistic of each row is one record's own
  values, released once per record);
* ``numeric_only`` (``median``, ``quantile``, ``cov``, ``corr``): the numeric
  columns among those named (every column when none are), dtypes being public;
* ``min_periods`` (``cov``, ``corr``): refused (``NaN`` below ``k`` rows would
  reveal the private count);
* ``include``/``exclude`` (``describe``): the columns of the dtypes named, as
  pandas' ``select_dtypes`` picks them; ignored on a Series, as pandas ignores them;
* ``subset`` (``value_counts`` of a frame or group-by): the columns to count
  (``df.dp.value_counts()`` with none counts every column, like pandas);
* ``bins`` (``value_counts`` of a Series or ``g[col]``): refused, with the recipe
  of a private histogram on the declared range (pandas cuts the data's own range).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import pandas as pd

from pandas_dp.accessor._arguments import column_labels, numeric_labels

__all__ = ["translate"]

_ROWS = (
    "a statistic of each row is computed from one record's own values and released "
    "once per record, which has no private meaning. Leave axis= out (a statistic of "
    "each column, axis=0), or make the row-wise value a column first "
    "(df.assign(t=df[cols].sum(axis=1))) and release a statistic of that column"
)
_MIN_PERIODS = (
    "pandas answers NaN when fewer than min_periods complete rows are present, which "
    "would reveal the private count of rows. The matrix is released whatever the "
    "count; leave min_periods= out (its interval, attrs['dp'].interval(), says how "
    "little a few rows are worth)"
)
_BINS = (
    "pandas cuts the range between the data's own minimum and maximum into equal "
    "bins, and those extremes are private. Cut a declared (public) range into bins "
    "yourself and count them: b = pd.cut(s.clip(lo, hi), np.linspace(lo, hi, k + 1), "
    "include_lowest=True); b.dp.value_counts(categories='dtype', ...) (the same bins "
    "in every release, whatever the data)"
)


def _refuse(method: str, name: str, value: Any, reason: str) -> None:
    raise ValueError(
        f"{method}({name}={value!r}) has no private meaning: {reason}. Nothing was charged"
    )


def translate(owner: Any, kind: str, method: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The call's arguments with pandas' keywords read (or refused, before the charge).

    Parameters
    ----------
    owner : accessor
        The frame or Series accessor, or the group-by, the method was called on.
    kind : str
        ``"frame"``, ``"series"`` or ``"groupby"``.
    method : str
        The method called.
    arguments : mapping
        The call's arguments (the method's ``locals()``).

    Returns
    -------
    dict
        The arguments the release reads, pandas' keywords turned into its own.

    Raises
    ------
    ValueError
        A keyword's value has no private meaning (with the reason and the way out).
    TypeError
        ``numeric_only=True`` leaves no column, or a keyword is given twice over.
    """
    from pandas_dp.accessor._methods import PANDAS_KEYWORDS

    mine = set(PANDAS_KEYWORDS.get(f"{kind}.{method}", ()))
    given = {k: v for k, v in arguments.items() if k != "translate"}  # (the import)
    args = {k: v for k, v in given.items() if k not in mine}
    ours = {k: v for k, v in given.items() if k in mine}
    axis = ours.get("axis")
    if axis is not None and axis not in (0, "index"):
        _refuse(method, "axis", axis, _ROWS)
    periods = ours.get("min_periods")
    if periods is not None:
        _refuse(method, "min_periods", periods, _MIN_PERIODS)
    bins = ours.get("bins")
    if bins is not None:
        _refuse(method, "bins", bins, _BINS)
    if ours.get("numeric_only"):
        _numeric_only(owner, kind, method, args)
    include, exclude = ours.get("include"), ours.get("exclude")
    if (include is not None or exclude is not None) and not _one_column(owner, kind):
        args["columns"] = _by_dtypes(owner, kind, args.get("columns"), include, exclude)
    if method == "value_counts" and kind != "series":
        _subset(owner, kind, ours.get("subset"), args)
    return args


def _one_column(owner: Any, kind: str) -> bool:
    """A Series, or ``g[col]`` (one column chosen): pandas ignores ``include=``."""
    if kind == "series":
        return True
    selection = getattr(owner, "_selection", None) if kind == "groupby" else None
    return selection is not None and not isinstance(selection, list)


def _frame_of(owner: Any, kind: str) -> Any:
    return owner._frame if kind == "groupby" else owner._obj


def _numeric_only(owner: Any, kind: str, method: str, args: dict[str, Any]) -> None:
    """``numeric_only=True``: the numeric columns among those named (dtypes are public)."""
    frame = _frame_of(owner, kind)
    if kind == "series":
        if not pd.api.types.is_numeric_dtype(frame.dtype):  # (bool: the release decides)
            raise TypeError(
                f"{method}(numeric_only=True) of a Series of dtype {frame.dtype}: the "
                f"Series is not numeric, and pandas refuses it too. Leave numeric_only= out"
            )
        return
    columns = args.get("columns")
    if _one_column(owner, kind):  # g["x"]: only checked (its first argument may be q)
        numeric_labels(owner._selection, frame)
        return
    if kind == "groupby":
        columns = owner._selected(columns)
        if columns is None:
            by = owner._by if isinstance(owner._by, list) else [owner._by]
            columns = [c for c in frame.columns if not any(_same(c, b) for b in by)]
    elif columns is None:
        columns = list(frame.columns)
    args["columns"] = numeric_labels(columns, frame)


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) if not isinstance(b, pd.Series) else a == b.name
    except (TypeError, ValueError):
        return False


def _by_dtypes(owner: Any, kind: str, columns: Any, include: Any, exclude: Any) -> list[Hashable]:
    """pandas' ``describe(include=, exclude=)``: the columns of the dtypes named, as
    ``select_dtypes`` picks them (``include="all"``: every column), among the columns
    a group-by releases (not its keys). Only dtypes are read."""
    if columns is not None:
        raise TypeError(
            "describe takes the columns to describe or include=/exclude= (which pick "
            "them by dtype, like pandas'), not both; pass one"
        )
    frame = _frame_of(owner, kind)
    meta = getattr(frame, "_meta", None)  # (a Dask frame: its empty pandas frame)
    empty = meta if isinstance(meta, pd.DataFrame) else frame.iloc[:0]
    if kind == "groupby" and owner._selection is not None:
        chosen, _ = column_labels(owner._selection, empty.columns)
        empty = empty[chosen]
    if isinstance(include, str) and include == "all":
        if exclude is not None:
            raise ValueError("describe: exclude must be None when include is 'all', like pandas")
        labels = list(empty.columns)
    else:
        labels = list(empty.select_dtypes(include=include, exclude=exclude).columns)
    if kind == "groupby":
        by = owner._by if isinstance(owner._by, list) else [owner._by]
        labels = [c for c in labels if not any(_same(c, b) for b in by)]
    if not labels:
        raise ValueError(
            f"describe(include={include!r}, exclude={exclude!r}) selects no column "
            f"(the columns' dtypes: {dict(empty.dtypes.astype(str))}); name dtypes the "
            f"frame has, or the columns"
        )
    return labels


def _subset(owner: Any, kind: str, subset: Any, args: dict[str, Any]) -> None:
    """``value_counts(subset=)``: the columns counted (a frame's: every column when
    neither ``subset`` nor a column is named, like pandas)."""
    if subset is not None and args.get("column") is not None:
        raise TypeError("value_counts takes the column(s) to count or subset=, not both; pass one")
    if subset is not None:
        labels, _ = column_labels(subset, _frame_of(owner, kind).columns)
        args["column"] = labels[0] if kind == "groupby" and len(labels) == 1 else labels
        args["subset"] = labels  # (pandas' answer is then the frame group-by's: its dtypes)
    elif kind == "frame" and args.get("column") is None:
        args["column"] = list(owner._obj.columns)
