"""The metadata record of a planned release (:class:`~pandas_dp.result.values.DPMetadata`).

Everything in a record is public: the settings, the plan's measurements with their
sensitivities, noise scales and budget split, the bounds, and what each
measurement noised. pandas objects in it are built on first read, and a cached
plan computes its part of every record once (:meth:`~pandas_dp.plan.plans.Plan.kept`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.plan.plans import Measurement, Plan
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.grouping_facts import grouping_facts
from pandas_dp.request.settings import Settings
from pandas_dp.result.values import DPMetadata, deferred

__all__ = ["build_metadata", "settings_fields"]


def build_metadata(
    statistic: str,
    labels: Sequence[Hashable],
    plan: Plan,
    value: Any,
    *,
    input_bounds: dict[Hashable, tuple[float, float]],
    output_bounds: Any,
    interval: Any,
    index: pd.Index | list[Any] | None,
    details: dict[str, Any] | None = None,
) -> DPMetadata:
    """The metadata record of a planned release: what was noised, with what scale.

    Parameters
    ----------
    statistic : str
        The statistic released (``"mean"``, ``"describe"``, ``"agg"`` ...).
    labels : sequence of hashable
        The columns released.
    plan : Plan
        The plan that was run: its settings, measurements, sensitivities, scales and
        budget split go into the record.
    value : object
        The released value(s).
    input_bounds : dict
        Column -> its declared ``(lower, upper)``.
    output_bounds : tuple or dict
        The public range of the statistic (per column for several).
    interval : callable
        ``alpha -> (lowers, uppers)``, what ``DPMetadata.interval`` reads.
    index : pandas.Index, list or None
        The entries of a vector release (``None`` for a scalar).
    details : dict, optional
        Further public facts of the release (method, ddof, grouping ...).

    Returns
    -------
    DPMetadata
        Filled on its first read (:meth:`DPMetadata.later`): every argument is
        public, and the plan is not changed after its run.
    """

    def fields() -> dict[str, Any]:
        """The record's fields, by name."""
        s = plan.settings
        sens_of, scale_of, noised = plan.kept("metadata", partial(_record_parts, plan))
        # pandas objects are built on first read (deferred): most records are never read
        info: dict[str, Any] = {
            "budget_split": plan.split(),
            "noised": dict(noised),
            "missing values": "skipped; the non-missing count is a noisy sufficient statistic",
        }
        c = s.contributions
        if c.unit is not None and plan.grouping is None:
            info["privacy unit"] = str(c.unit)
            info["contribution bounds"] = {"max_rows_per_unit": c.rows}
        info.update(details or {})
        grouping = plan.grouping
        return settings_fields(
            s,
            grouping,
            plan.released_groups if grouping is not None else None,
            delta=s.delta + (grouping.delta if grouping is not None else 0.0),
            statistic=statistic,
            columns=tuple(labels),
            sensitivity=deferred(sens_of),
            scale=deferred(scale_of),
            input_bounds=input_bounds,
            output_bounds=output_bounds,
            value=value,
            details=info,
            _interval=interval,
            _index=index,
            rho=plan.rho(),
        )

    return DPMetadata.later(fields)


def settings_fields(
    settings: Settings,
    grouping: Grouping | None = None,
    released: int | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """The fields of a record that come from the release's settings, and ``fields``.

    Parameters
    ----------
    settings : Settings
        The release's settings: its mechanism, budget, neighbouring relation,
        public number of rows, bounding mode, noise source and contribution bounds.
    grouping : Grouping, optional
        The release's grouping, if any (:func:`grouping_facts`).
    released : int, optional
        How many keys partition selection released (:func:`grouping_facts`).
    **fields
        The record's other fields, by name; they replace those of ``settings``
        (``epsilon=0.0`` for a release that spends nothing).

    Returns
    -------
    dict
        Keyword arguments of :class:`~pandas_dp.result.values.DPMetadata`.
    """
    return {
        "mechanism": settings.mechanism,
        "epsilon": settings.epsilon,
        "delta": settings.delta,
        "neighbouring": settings.neighbouring,
        "n": settings.public_n,
        "bounding": settings.bounding,
        "secure": settings.source.secure,
        **grouping_facts(settings.contributions, grouping, released),
        **fields,
    }


def _record_parts(
    plan: Plan,
) -> tuple[Callable[[], pd.Series], Callable[[], pd.Series], dict[str, str]]:
    """What a record reads of its plan alone: the builders of its sensitivity and
    scale Series (each record builds its own, on first read) and what each
    measurement noised (a cached plan computes these once: :meth:`Plan.kept`)."""
    ms = list(plan.measurements.values())
    names = [m.key for m in ms]
    sens = partial(pd.Series, [_sensitivity(m) for m in ms], index=names, dtype=float)
    return sens, partial(_scales, ms, names), {m.key: _unit(m.statistic) for m in ms}


def _sensitivity(m: Measurement) -> float:
    """What the record shows: the per-entry sensitivity, or for the bound sums the
    L1 norm of a unit's change to the pairs (calibrated in units of ``L1 / 2t``,
    :meth:`~pandas_dp.plan.plans.Plan.moments`)."""
    if m.statistic == "bound_sums" and m.joint_l1 is not None:
        return m.sensitivity * m.joint_l1
    return m.sensitivity


def _scales(ms: list[Measurement], names: list[str]) -> pd.Series:
    """Per measurement, its largest noise scale (built on first read: the plans are
    immutable, so a later build gives what an eager one would have). A private
    selection adds no noise to its counts: its scale is NaN."""
    return pd.Series(
        [math.nan if m.select is not None else float(np.max(m.calibrated.scale)) for m in ms],
        index=names,
        dtype=float,
    )


_UNITS = {
    "count": "rows (integer, discrete noise)",
    "rows": "rows (integer, discrete noise)",
    "distinct_units": "distinct units per observed key (integer, discrete noise; selection)",
    "category_counts": "rows per bucket (integer, discrete noise)",
    "centred_sum": "column units: sum of (x - midpoint)",
    "sum": "column units: sum of x",
    "recentred_sum": "units of h: sum of (x - c) / h, c the mean the count and centred sum "
    "give (released), h = max(c - lower, upper - c); the noise in column units is h times this",
    "bound_sums": "column units: the pair (sum of (x - lower), sum of (upper - x)) per group, "
    "one Laplace vector (sensitivity: the L1 norm of the pair's change)",
    "centred_squares": "squared column units: sum of (x - midpoint)^2",
    "cross_products": "product of column units",
    "mean_direct": "column units (Liu's direct mean)",
    "var_direct": "squared column units (Liu's direct variance)",
    "grid_selection": "grid edges chosen by exact permute-and-flip on rank scores "
    "(no additive noise: no scale)",
}


def _unit(statistic: str) -> str:
    return _UNITS.get(statistic, statistic)
