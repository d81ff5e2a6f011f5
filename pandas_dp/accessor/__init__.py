"""The ``.dp`` accessors on :class:`pandas.DataFrame` and :class:`pandas.Series`.

They parse arguments and hand over to the release functions (:mod:`pandas_dp.stats.numeric`
and its siblings), which build a plan over noisy sufficient statistics
(:mod:`pandas_dp.plan.plans`); nothing else.
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
    categories (``isin``) are declared. Missing values are skipped whatever
    ``nullable`` says. Without ``bounds`` or ``schema``, the schema pandera
    attached with ``schema.validate(df)`` is used.
mechanism : {"laplace", "gaussian"}, default "laplace"
bounding : {"bit", "truncated", "none"}, default "bit"
    Output bounding mode (see :mod:`pandas_dp.noise.bounding`).
neighbouring : {"add_remove", "substitute"}, default "add_remove"
    ``"add_remove"``: neighbouring datasets differ by one person added or removed, and
    the number of rows is private (no value, interval or metadata field depends on
    ``len(df)``). ``"substitute"``: one person's rows changed; *declares* the frame's
    length public -- only for a frame whose length really is public (a published
    dataset), never one filtered on its data. Needed by ``method="direct"``.
out_of_bounds : {"clip", "raise"}, default "clip"
    ``"raise"`` validates with pandera after the budget is charged and raises
    ``ValueError`` on a violation; it is **not** DP-safe.
random_state : int or numpy.random.Generator, optional
    Reproducible (not secure) noise, for tests and teaching.
budget : PrivacyBudget, optional
    Charge this budget as well: a release charges the explicit budget and every
    active budget (``with budget:`` blocks, nested ones included, and the default
    budget) at once, or none of them.
"""

from __future__ import annotations

from pandas_dp.accessor.frame import DPFrameAccessor
from pandas_dp.accessor.groupby import DPGroupBy
from pandas_dp.accessor.series import DPSeriesAccessor

__all__ = ["DPFrameAccessor", "DPGroupBy", "DPSeriesAccessor"]
