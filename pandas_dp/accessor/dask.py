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
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

from pandas_dp import statistics as st
from pandas_dp.accessor.frame import DPFrameAccessor
from pandas_dp.accessor.groupby import DPGroupBy
from pandas_dp.accessor.series import DPSeriesAccessor
from pandas_dp.budget import PrivacyBudget
from pandas_dp.result import DPInt

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


def _checked(cls: type[_T]) -> type[_T]:
    """Give ``cls`` its base's public methods, each refusing what Dask cannot do yet."""
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
                return method(self, *args, **kwargs)

            return call

        if name not in cls.__dict__:  # an override below checks for itself
            setattr(cls, name, wrap(attr))
    return cls


def _public_length(obj: Any, neighbouring: str) -> int | None:
    """``len(ddf)`` where the length is declared public, else ``None`` (never computed)."""
    return len(obj) if neighbouring == "substitute" else None


@_checked
class DaskGroupBy(DPGroupBy):
    """``ddf.dp.groupby(by, keys=...)``: the group-by of :class:`DPGroupBy` on Dask.

    Each partition maps its rows onto the declared keys itself. With private keys
    the observed keys are gathered first (one ``compute``, after the charge), and
    every partition numbers its rows by them.
    """

    def _rows(self, neighbouring: str) -> int | None:
        return _public_length(self._frame, neighbouring)


@_checked
class DaskFrameAccessor(DPFrameAccessor):
    """``ddf.dp``: the methods of :class:`~pandas_dp.DPFrameAccessor` on a Dask DataFrame."""

    __slots__ = ()

    def _rows(self, neighbouring: str) -> int | None:
        return _public_length(self._obj, neighbouring)

    def _frame(self) -> Any:
        return self._obj

    def groupby(
        self, by: Any, keys: Any = None, *, other: Hashable | None = None, delta: float = 0.0
    ) -> DaskGroupBy:
        """Group by declared or private keys: see :meth:`pandas_dp.DPFrameAccessor.groupby`.

        Examples
        --------
        >>> import pandas as pd, dask.dataframe as dd, pandas_dp
        >>> ddf = dd.from_pandas(pd.DataFrame({"k": ["a", "b"] * 50}), npartitions=3)
        >>> n = ddf.dp.groupby("k", keys=["a", "b"]).len(epsilon=1.0, random_state=0)
        >>> list(n.index)
        ['a', 'b']
        """
        g = super().groupby(by, keys, other=other, delta=delta)
        return DaskGroupBy(g._frame, g._by, g._keys, other=g._other, delta=g._delta)


@_checked
class DaskSeriesAccessor(DPSeriesAccessor):
    """``dseries.dp``: the methods of :class:`~pandas_dp.DPSeriesAccessor` on a Dask Series."""

    __slots__ = ()

    def _rows(self, neighbouring: str) -> int | None:
        return _public_length(self._obj, neighbouring)

    def len(
        self,
        *,
        epsilon: float,
        delta: float = 0.0,
        schema: Any = None,
        mechanism: str = "laplace",
        bounding: str = "bit",
        neighbouring: str = "add_remove",
        random_state: int | np.random.Generator | None = None,
        budget: PrivacyBudget | None = None,
    ) -> DPInt:
        """Noisy number of rows, like ``len(s)``: see :meth:`pandas_dp.DPSeriesAccessor.len`.

        Examples
        --------
        >>> import pandas as pd, dask.dataframe as dd, pandas_dp
        >>> s = dd.from_pandas(pd.Series(range(1000)), npartitions=3)
        >>> s.dp.len(epsilon=1.0, random_state=0) >= 0
        True
        """
        settings = self._settings(locals())
        return st.release_len(settings, self._obj.to_frame())


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
