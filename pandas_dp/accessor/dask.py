"""``ddf.dp`` and ``dseries.dp``: the ``.dp`` accessor on Dask DataFrames and Series.

The same methods, arguments and results as ``df.dp`` / ``s.dp`` (they *are* the
pandas accessors' methods): only the engine differs. The plan is built and checked
on the client from public facts (bounds, keys, the frame's columns and dtypes),
the budget is charged, then :mod:`pandas_dp.engines.dask` computes the exact
sufficient statistics partition by partition in one ``dask.compute``, and the
noise is added once, on the client.

What needs the frame's length reads it only where the length is public
(``neighbouring="substitute"``: ``len(ddf)``, one pass, before the charge).

Privacy units (``privacy_unit=``, or one declared by a schema) shuffle the rows by
unit inside the engine, after the charge; private group-by keys (``keys="private"``)
take two more passes (the observed keys, their counts) before the kept keys are
measured. Either way the release equals the pandas accessor's on the same rows.

Not yet on Dask (refused before the budget is charged): predicate counts
(``ddf.dp.counts``), ``out_of_bounds="raise"`` and ``method="direct"`` covariances.

Dask reads the data only when it computes, after the charge. What the frame's meta
(its public dtypes, ``ddf.dtypes``) rules out is refused before: a numeric
statistic of a text column, with the Dask way to convert it. A failure while
computing (a value that does not parse as its column's meta dtype: ``dd.read_csv``
infers the dtypes from the first block only) raises a
:class:`~pandas_dp.errors.ComputeError` that names the call, the columns read and
their meta dtypes, never a value or a row: the original error is dropped. (A
``distributed`` worker still writes its own task failures, with the original
message, to its log, the ``distributed.worker`` logger: keep worker logs as private
as the data, or read text columns as text and convert them with
``dd.to_numeric(..., errors="coerce")`` so that no record can fail.)

Examples
--------
>>> import pandas as pd, dask.dataframe as dd, pandas_dp
>>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 25, "sex": ["f", "m"] * 50})
>>> ddf = dd.from_pandas(df, npartitions=4)
>>> m = ddf.dp.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
>>> m == df.dp.mean("age", epsilon=1.0, bounds=(0, 100), random_state=0)
True
>>> g = ddf.dp.groupby("sex", keys=["f", "m"]).mean("age", epsilon=1.0, bounds=(0, 100))
>>> list(g.index)
['f', 'm']
>>> ddf["age"].dp.len(epsilon=1.0, random_state=0) >= 0
True
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Mapping
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from pandas_dp.accessor._arguments import _is_numeric
from pandas_dp.accessor.frame import DPFrameAccessor
from pandas_dp.accessor.groupby import DPGroupBy
from pandas_dp.accessor.series import DPSeriesAccessor
from pandas_dp.engines.dask.partitions import compute_error
from pandas_dp.errors import ComputeError
from pandas_dp.result.keys import text_dtype
from pandas_dp.result.values import DPInt
from pandas_dp.stats import numeric as st
from pandas_dp.stats.catalogue import METHODS, MOMENTS

__all__ = ["DaskFrameAccessor", "DaskGroupBy", "DaskSeriesAccessor", "register"]

_T = TypeVar("_T")

#: Methods of ``df.dp`` that do not run on Dask yet.
_NOT_YET = {
    "counts": "predicate counts (ddf.dp.counts) are not available on Dask yet; "
    "compute the masks as boolean columns and use value_counts",
}


def _refuse(method: str, kwargs: dict[str, Any]) -> None:
    """Raise for what the Dask engine cannot do yet (before any charge)."""
    if method in _NOT_YET:
        raise NotImplementedError(_NOT_YET[method])
    if kwargs.get("out_of_bounds") == "raise":
        raise NotImplementedError(
            "out_of_bounds='raise' (pandera validation) is not available on Dask; "
            "use the default out_of_bounds='clip'"
        )
    if method in ("cov", "corr") and kwargs.get("method") == "direct":
        raise NotImplementedError(
            f"{method}(method='direct') is not available on Dask yet; use method='moments'"
        )


#: Statistics whose columns (the first argument) must be numeric: the catalogue's
#: moments (a count takes any column), the quantiles and the matrices.
_NUMERIC = frozenset(
    {
        *(s.name for s in MOMENTS.values() if not s.integer),
        *(m.name for m in METHODS.values() if m.numeric),
    }
)


def _labels(columns: Any) -> list[Hashable]:
    """The labels a ``columns`` argument names (``None``: the numeric ones, by dtype)."""
    if columns is None:
        return []
    if isinstance(columns, list | pd.Index | np.ndarray | pd.Series):
        return list(columns)
    return [columns]


def _statistics(func: Any) -> set[str]:
    """The statistics an ``agg`` argument names (anything else: left to the shared checks)."""
    if isinstance(func, str):
        return {func}
    if isinstance(func, list | tuple):
        return {s for s in func if isinstance(s, str)}
    return set()


def _needs_numeric(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Hashable]:
    """The columns named by a call of a frame or group-by method that must be numeric."""
    if method in _NUMERIC:
        return _labels(args[0] if args else kwargs.get("columns"))
    if method == "agg":
        func = args[0] if args else kwargs.get("func")
        if isinstance(func, dict):
            return [c for c, stats in func.items() if _statistics(stats) - {"count"}]
    if method == "describe" and isinstance(kwargs.get("bounds"), dict):
        return list(kwargs["bounds"])  # a column named in a bounds dict is numeric
    return []


def _series_needs_numeric(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    if method in _NUMERIC:
        return True
    func = args[0] if args else kwargs.get("func")
    return method == "agg" and bool(_statistics(func) - {"count"})


def _check_meta(owner: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse, from the meta's public dtypes, a numeric statistic of a text column.

    Runs before the charge and reads nothing: Dask would read the data only after
    it, and fail on the first value that does not parse (the shared checks that
    follow refuse the same calls, with the pandas way to convert a column).
    """
    if isinstance(owner, DaskSeriesAccessor):
        series = owner._obj
        named = {series.name: series} if _series_needs_numeric(method, args, kwargs) else {}
    else:
        frame = owner._frame if isinstance(owner, DaskGroupBy) else owner._obj
        wanted = _needs_numeric(method, args, kwargs)
        named = {c: frame[c] for c in wanted if _has(frame, c)}
    for label, column in named.items():
        if not _is_numeric(column):  # reads the meta's dtype only
            raise TypeError(
                f"{owner._CALL}.{method} needs numeric columns, but column {label!r} has "
                f"dtype {column.dtype} in the Dask frame's meta (ddf.dtypes: declared or inferred "
                f"when the data were read). Expected a numeric or boolean dtype; nothing "
                f"was charged and nothing was read. To fix: convert it so that a value "
                f"that does not parse becomes a missing value, ddf[{label!r}] = "
                f"dd.to_numeric(ddf[{label!r}], errors='coerce'); or, if every value is "
                f"known to parse, declare its dtype where the data are read "
                f"(dd.read_csv(..., dtype={{{label!r}: 'float64'}})) or convert it with "
                f".astype('float64')"
            )


def _has(frame: Any, label: Hashable) -> bool:
    """Whether ``label`` is a column of the Dask frame (a missing one: refused later)."""
    try:
        return label in frame.columns
    except TypeError:  # an unhashable label: the shared checks refuse it
        return False


def _checked(cls: type[_T]) -> type[_T]:
    """Wrap ``cls``'s public methods: refuse what Dask cannot do yet or what the meta
    rules out (before any charge), and name the call in a failed computation's
    content-free error."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        attr = getattr(cls, name)
        if not callable(attr) or isinstance(attr, type):
            continue

        def wrap(method: Callable[..., Any], name: str = name) -> Callable[..., Any]:
            @functools.wraps(method)
            def call(self: Any, *args: Any, **kwargs: Any) -> Any:
                _refuse(name, kwargs)
                _check_meta(self, name, args, kwargs)
                try:
                    return method(self, *args, **kwargs)
                except ComputeError as exc:  # content-free already: add the call's name
                    columns, charged = exc.columns, exc.charged
                # raised outside the handler: no exception chained to it
                release = f"{self._CALL}.{name}"
                raise compute_error(columns, release=release, charged=charged) from None

            return call

        setattr(cls, name, wrap(attr))
    return cls


def _public_length(obj: Any, neighbouring: str) -> int | None:
    """``len(ddf)`` where the length is declared public, else ``None`` (never computed).

    It is computed before the charge: a failure there is content-free as well.
    """
    if neighbouring != "substitute":
        return None
    try:
        return len(obj)
    except Exception:  # dropped unread: its message may quote a private value
        pass
    columns = obj.dtypes.astype(str).to_dict() if hasattr(obj, "columns") else {}
    if not columns:
        columns = {obj.name: str(obj.dtype)}
    raise compute_error(columns, charged=False)


def _length_if_public(self: Any, neighbouring: str) -> int | None:
    """``_rows`` of the Dask frame and Series accessors: their length, if public."""
    return _public_length(self._obj, neighbouring)


def _dask_text_keys(self: Any, dtype: Any) -> Any:
    """``_text_keys`` on Dask: the column's text dtype, except the ``string[pyarrow]``
    Dask makes of every text column itself (``dataframe.convert-string``, its
    default): its keys stay pandas' ``str``, the in-memory release of the frame Dask
    read (Dask cannot tell a converted ``str`` column from a ``string[pyarrow]`` one)."""
    from dask.dataframe.utils import pyarrow_strings_enabled

    converted = dtype == pd.StringDtype("pyarrow") and pyarrow_strings_enabled()
    return None if converted else text_dtype(dtype)


@_checked
class DaskGroupBy(DPGroupBy):
    """``ddf.dp.groupby(by, keys=...)``: the group-by of :class:`DPGroupBy` on Dask.

    Each partition maps its rows onto the declared keys itself. With private keys
    the observed keys are gathered first (one ``compute``, after the charge), and
    every partition numbers its rows by them.
    """

    #: How a call is named in error messages.
    _CALL = "ddf.dp.groupby(...)"

    _text_keys = _dask_text_keys

    def _rows(self, neighbouring: str) -> int | None:
        return _public_length(self._frame, neighbouring)


@_checked
class DaskFrameAccessor(DPFrameAccessor):
    """``ddf.dp``: the methods of :class:`~pandas_dp.DPFrameAccessor` on a Dask DataFrame."""

    __slots__ = ()
    _CALL = "ddf.dp"
    _rows = _length_if_public
    _text_keys = _dask_text_keys

    def _frame(self) -> Any:
        return self._obj

    def groupby(
        self,
        by: Any,
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
    ) -> DaskGroupBy:
        """Group by declared or private keys, with pandas' options: see
        :meth:`pandas_dp.DPFrameAccessor.groupby`.

        Examples
        --------
        >>> import pandas as pd, dask.dataframe as dd, pandas_dp
        >>> ddf = dd.from_pandas(pd.DataFrame({"k": ["a", "b"] * 50}), npartitions=3)
        >>> n = ddf.dp.groupby("k", keys=["a", "b"]).len(epsilon=1.0, random_state=0)
        >>> list(n.index)
        ['a', 'b']
        """
        g = super().groupby(
            by,
            keys,
            other=other,
            delta=delta,
            as_index=as_index,
            sort=sort,
            dropna=dropna,
            observed=observed,
            group_keys=group_keys,
            level=level,
        )
        return DaskGroupBy(
            g._frame, g._by, g._keys, other=g._other, delta=g._delta, options=g._options
        )


@_checked
class DaskSeriesAccessor(DPSeriesAccessor):
    """``dseries.dp``: the methods of :class:`~pandas_dp.DPSeriesAccessor` on a Dask Series."""

    __slots__ = ()
    _CALL = "dseries.dp"
    _rows = _length_if_public
    _text_keys = _dask_text_keys

    def _release_len(self, statistic: str, arguments: Mapping[str, Any]) -> DPInt:
        """``len(s)``, counted on the Series as a one-column frame."""
        return st.release_len(self._settings(arguments), self._obj.to_frame())


def register() -> None:
    """Register ``.dp`` on Dask DataFrames and Series (``import pandas_dp`` does it).

    Examples
    --------
    >>> register()  # idempotent
    """
    import warnings

    from dask.dataframe.extensions import (
        register_dataframe_accessor,
        register_series_accessor,
    )

    with warnings.catch_warnings():  # re-registering warns
        warnings.simplefilter("ignore", UserWarning)
        register_dataframe_accessor("dp")(DaskFrameAccessor)
        register_series_accessor("dp")(DaskSeriesAccessor)
