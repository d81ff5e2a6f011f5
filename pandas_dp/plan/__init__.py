"""Plans: which sufficient statistics a release measures, with what sensitivity and noise.

:mod:`~pandas_dp.plan.plans` holds :class:`Plan` and :class:`Measurement`;
:mod:`~pandas_dp.plan.sensitivity` the sensitivity table;
:mod:`~pandas_dp.plan.calibration` the budget split and noise scales;
:mod:`~pandas_dp.plan.running` the charge, the engine call and the noise;
:mod:`~pandas_dp.plan.measure` the engine's input and the exact values;
:mod:`~pandas_dp.plan.records` the metadata record of a planned release.
"""

from pandas_dp.plan.plans import Measurement, Plan

__all__ = ["Measurement", "Plan"]
