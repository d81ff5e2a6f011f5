"""A measurement: one sufficient statistic of a plan, with everything public about it.

:class:`Measurement` is what a :class:`~pandas_dp.plan.plans.Plan` lists and an
engine reads (:class:`~pandas_dp.engines.protocol.MeasurementLike`): its source,
its sensitivity, its range and share of the budget, and, once calibrated, its
noise.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pandas_dp.engines.protocol import Source
from pandas_dp.noise.plans import NoisePlan

__all__ = ["Measurement"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class Measurement:
    """One sufficient statistic to measure: everything about it is public.

    Attributes
    ----------
    key : str
        ``"<column>: <statistic>"`` -- unique within a plan.
    statistic : str
        The row of the sensitivity table (``"count"``, ``"centred_sum"`` ...).
    source : Source
        What the engine reads (:class:`~pandas_dp.engines.protocol.Source`): a
        column's moments, several columns' products, a column's categories or grid,
        the masks or the rows; or, computed from other measurements, ``"derived"``
        (by a selection) and ``"recentred"`` (after their noise).
    size : int
        Number of entries (1, or one per category / predicate).
    sensitivity : float
        Per entry, rounding of the exact accumulation included.
    lower, upper : float
        Public range of each entry.
    integer : bool
        Counts: discrete noise, integer results.
    weight : float
        Relative share of the plan's budget.
    joint_l1, joint_l2 : float or None
        Sensitivity of the whole vector after dividing each entry by its own.
    noise : NoisePlan or None
        Set by :meth:`Plan.calibrate`.
    select : callable or None
        A private selection (quantiles): its measurement spends its epsilon, pure,
        through the callable instead of noise; a ``("derived", ...)`` source is
        computed by another measurement's selection, not by the engine.
    """

    key: str
    statistic: str
    source: Source
    size: int
    sensitivity: float
    lower: float
    upper: float
    integer: bool
    weight: float = 1.0
    joint_l1: float | None = None
    joint_l2: float | None = None
    index: int = 0
    noise: NoisePlan | None = None
    #: A private selection instead of additive noise: called after the charge with
    #: the exact vector (never released) and the plan; returns the released vectors
    #: by measurement key (its own, and any measurement it derives).
    select: Callable[[NDArray[Any], Any], dict[str, FloatArray]] | None = None

    @property
    def calibrated(self) -> NoisePlan:
        """The noise plan (after :meth:`Plan.calibrate`)."""
        if self.noise is None:
            raise RuntimeError(f"{self.key} is not calibrated yet; call Plan.calibrate()")
        return self.noise

    @property
    def epsilon(self) -> float:
        """The epsilon this measurement spends (after calibration)."""
        return self.calibrated.epsilon
