"""The ``.dp`` accessors on :class:`pandas.DataFrame` and :class:`pandas.Series`.

They parse arguments and hand over to :mod:`pandas_dp.statistics`; nothing else.
They are stateless and cheap to build (pandas builds one on every ``df.dp``).

Every method takes the same keyword-only DP parameters:

epsilon : float
    Privacy budget of this release (required).
delta : float, default 0.0
    Only with ``mechanism="gaussian"``.
bounds : (lower, upper) or dict, optional
    Public bounds, for every column or per column. Take precedence over ``schema``.
schema : pandera DataFrameSchema, DataFrameModel class, SeriesSchema or Column, optional
    Where bounds (``in_range``, ``between``, ``ge``/``gt``, ``le``/``lt``) and
    ``nullable`` are declared. Without ``bounds`` or ``schema``, the schema pandera
    attached with ``schema.validate(df)`` is used.
mechanism : {"laplace", "gaussian"}, default "laplace"
bounding : {"bit", "truncated", "none"}, default "bit"
    Output bounding mode (see :mod:`pandas_dp.bounding`).
neighbouring : {"substitute", "add_remove"}, default "substitute"
out_of_bounds : {"clip", "raise"}, default "clip"
    ``"raise"`` validates with pandera first and is **not** DP-safe.
random_state : int or numpy.random.Generator, optional
    Reproducible (not secure) noise, for tests and teaching.
budget : PrivacyBudget, optional
    Charge this budget instead of the active one (``with budget:``).
"""

from __future__ import annotations

from pandas_dp.accessor.frame import DPFrameAccessor
from pandas_dp.accessor.series import DPSeriesAccessor

__all__ = ["DPFrameAccessor", "DPSeriesAccessor"]
