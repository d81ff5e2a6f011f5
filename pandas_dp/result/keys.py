"""The dtype of a release's text keys: the key column's own, as pandas keeps it.

pandas labels a group-by's (or ``value_counts``') keys with the key column's dtype: a
``string[pyarrow]`` column gives a ``string`` index, a ``str`` column a ``str`` one.
The keys of a release are built from the declared keys (a list, which pandas types
as ``str``); :func:`like_key_dtypes` then casts every index level named by a text
column -- and, with ``as_index=False``, every key column -- to that column's dtype.
Only the declared (or released) keys and the column's dtype are read, both public.

A caller passes the dtype to keep for each key column (or ``None`` to leave it):
the Dask accessors leave text that Dask itself turned into ``string[pyarrow]``
(``dataframe.convert-string``), so that a Dask release equals the in-memory release
of the pandas frame it came from.

Examples
--------
>>> import pandas as pd
>>> out = pd.Series([3, 1], index=pd.Index(["a", "b"], name="k"))
>>> str(like_key_dtypes(out, {"k": pd.StringDtype("pyarrow")}.get).index.dtype)
'string'
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import pandas as pd

from pandas_dp.result.values import attach

__all__ = ["like_key_dtypes", "text_dtype"]


def text_dtype(dtype: Any) -> pd.StringDtype | None:
    """``dtype`` if it is a text dtype (:class:`pandas.StringDtype`), else ``None``."""
    return dtype if isinstance(dtype, pd.StringDtype) else None


def _holds_text(values: pd.Index) -> bool:
    """Whether every label is a string or missing (so a text dtype holds them all)."""
    if isinstance(values.dtype, pd.StringDtype):
        return True
    return pd.api.types.infer_dtype(values, skipna=True) in ("string", "empty")


def _cast(level: pd.Index, dtype: Any) -> pd.Index:
    """``level`` in ``dtype`` when it differs and holds only text; else as it is."""
    if dtype is None or level.dtype == dtype or not _holds_text(level):
        return level
    try:
        cast: pd.Index = level.astype(dtype)
        return cast
    except (TypeError, ValueError):  # (never raise after the charge: labels as built)
        return level


def _index(index: pd.Index, dtype_of: Callable[[Hashable], Any]) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        levels = [
            _cast(level, _safe(dtype_of, name)) if name is not None else level
            for level, name in zip(index.levels, index.names, strict=True)
        ]
        if all(a is b for a, b in zip(levels, index.levels, strict=True)):
            return index
        return index.set_levels(levels, verify_integrity=False)  # type: ignore[arg-type]
    if index.name is None:
        return index
    return _cast(index, _safe(dtype_of, index.name))


def like_key_dtypes(out: Any, dtype_of: Callable[[Hashable], Any]) -> Any:
    """``out`` with its text keys in their column's dtype, as pandas labels them.

    Parameters
    ----------
    out : Series, DataFrame or scalar
        A release; a scalar is returned as it is.
    dtype_of : callable
        The text dtype to keep for a label's column (:func:`text_dtype` of the
        column's dtype), or ``None`` for a label that is no key column or whose
        keys stay as built. Called with index level names (and, for a frame with a
        default row index, its column labels: ``as_index=False``).

    Returns
    -------
    Series, DataFrame or scalar
        The same values and metadata; only the key labels' dtype may change.
    """
    if not isinstance(out, pd.Series | pd.DataFrame):
        return out
    index = _index(out.index, dtype_of)
    columns = None
    if isinstance(out, pd.DataFrame) and isinstance(out.index, pd.RangeIndex):
        columns = {
            c: dtype
            for c in out.columns
            if isinstance(out[c], pd.Series)
            and (dtype := _safe(dtype_of, c)) is not None
            and out[c].dtype != dtype
            and _holds_text(pd.Index(out[c]))
        }
    if index is out.index and not columns:
        return out
    meta = out.attrs.get("dp")
    shaped = out.copy(deep=False)
    shaped.index = index
    for c, dtype in (columns or {}).items():
        try:
            shaped[c] = shaped[c].astype(dtype)
        except (TypeError, ValueError):
            continue
    shaped.attrs = {}
    return attach(shaped, meta) if meta is not None else shaped


def _safe(dtype_of: Callable[[Hashable], Any], label: Any) -> Any:
    """``dtype_of(label)``, ``None`` for an unhashable label or one it cannot look up."""
    try:
        return dtype_of(label)
    except (AttributeError, KeyError, TypeError, ValueError):
        return None
