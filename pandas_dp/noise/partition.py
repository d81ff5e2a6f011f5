"""Partition selection: which group keys observed in the data may be released.

With ``keys="private"`` the group keys are not declared; releasing a key seen in
the data would reveal that someone holds it. Under ``add_remove`` with
``delta > 0`` (REFERENCE.md §10), each observed key's number of distinct units
(:func:`pandas_dp.engines.units.distinct_units`, after the truncation that keeps
every unit in at most ``g`` groups) gets discrete Laplace noise of scale
``g / epsilon``, and the key is kept when its noisy count exceeds an integer
threshold ``tau``:

* a unit changes the vector of distinct counts by at most 1 in each of at most
  ``g`` groups (L1 sensitivity ``g``), so the noisy counts of keys present in both
  neighbours are ``epsilon``-DP;
* a key held by one unit only (present in one neighbour and not in the other) has
  count 1 and survives with probability ``P(1 + K > tau) = q**tau / (1 + q)``,
  ``q = exp(-1/T)``, the exact discrete tail at the scale ``T`` the sampler really
  uses (:func:`pandas_dp.noise.mechanisms.representable_scale`); ``tau`` is the smallest
  integer making this ``<= delta / g``, so the ``<= g`` keys a unit can create
  are released with probability ``<= delta`` in all.

The kept keys' noisy counts may be released as their counts (post-processing);
the keys' other statistics need their own share of epsilon, and their noise
counts every kept key a unit can move -- up to ``min(g, k)`` of them, as for the
same keys declared (:meth:`pandas_dp.plan.calibration.PlanCalibration.max_changed`),
never one key only. Output order is the caller's (sorted by key).

Examples
--------
>>> sel = selection_threshold(1.0, 1e-6, 1)
>>> sel.scale, sel.threshold
(1.0, 14)
>>> from pandas_dp.noise.mechanisms import RandomSource
>>> kept, noisy = select(np.array([1, 500], dtype=np.int64), sel, RandomSource(3))
>>> kept.tolist()
[False, True]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pandas_dp.noise.mechanisms import RandomSource, discrete_laplace, representable_scale

__all__ = ["Selection", "continuous_threshold", "select", "selection_threshold"]


@dataclass(frozen=True)
class Selection:
    """A calibrated partition selection.

    Attributes
    ----------
    scale : float
        Discrete Laplace scale ``g / epsilon`` of the noisy distinct-unit counts.
    threshold : int
        ``tau``: a key is kept when its noisy count is ``> tau``.
    epsilon, delta : float
        The budget the selection spends.
    max_groups : int
        ``g``, the most groups one unit can hold.
    singleton_probability : float
        The exact probability that a key held by one unit is kept (``<= delta / g``).
    """

    scale: float
    threshold: int
    epsilon: float
    delta: float
    max_groups: int
    singleton_probability: float


def _log_tail(tau: int, scale: float) -> float:
    """``log P(K >= tau)`` for the discrete Laplace of ``scale`` and ``tau >= 1``."""
    log_q = -1.0 / scale
    return tau * log_q - math.log1p(math.exp(log_q))


def continuous_threshold(epsilon: float, delta: float, max_groups: int) -> float:
    """REFERENCE.md §10's threshold for continuous Laplace: ``1 + (g/ε) ln(g/(2δ))``.

    Examples
    --------
    >>> round(continuous_threshold(1.0, 1e-6, 1), 3)
    14.122
    """
    return 1.0 + (max_groups / epsilon) * math.log(max_groups / (2.0 * delta))


def selection_threshold(
    epsilon: float, delta: float, max_groups: int = 1, neighbouring: str = "add_remove"
) -> Selection:
    """Calibrate partition selection for ``epsilon``, ``delta`` and ``g = max_groups``.

    Parameters
    ----------
    epsilon : float
        The budget of the noisy distinct-unit counts (finite, > 0).
    delta : float
        The probability, in ``(0, 1)``, allowed for releasing a key held by one unit.
    max_groups : int, default 1
        ``max_groups_per_unit``: the most keys one unit holds after truncation.
    neighbouring : {"add_remove", "substitute"}
        Only ``"add_remove"``: the set of keys present is private under it.

    Returns
    -------
    Selection

    Raises
    ------
    ValueError
        ``delta <= 0`` (private keys need ``delta > 0``), ``neighbouring="substitute"``,
        or an invalid epsilon or ``max_groups``.

    Examples
    --------
    >>> s = selection_threshold(0.5, 1e-5, 3)
    >>> s.scale, s.threshold, s.singleton_probability <= 1e-5 / 3
    (6.0, 72, True)
    """
    if neighbouring != "add_remove":
        raise ValueError(
            f"private keys (partition selection) need neighbouring='add_remove'; got "
            f"{neighbouring!r}. Under 'substitute' a unit's rows may move to a key of "
            f"their own, so declare the keys (keys=[...] or a schema's isin) instead"
        )
    if isinstance(epsilon, bool) or not (
        isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0
    ):
        raise ValueError(f"epsilon must be a finite number > 0; got {epsilon!r}")
    if isinstance(delta, bool) or not isinstance(delta, int | float) or not delta > 0:
        raise ValueError(
            f"private keys need delta > 0 (the probability of releasing a key held by "
            f"one person), e.g. delta=1e-6 or below 1/n for n people; got delta={delta!r}. "
            f"With delta=0, declare the keys instead (keys=[...] or a schema's isin)"
        )
    if not delta < 1:
        raise ValueError(f"delta must be below 1; got {delta!r}")
    if isinstance(max_groups, bool) or not isinstance(max_groups, int) or max_groups < 1:
        raise ValueError(f"max_groups must be a whole number >= 1; got {max_groups!r}")
    scale = float(max_groups) / float(epsilon)
    actual = float(representable_scale(scale)[0])  # the sampler's own scale, >= scale
    target = math.log(delta / max_groups)
    q = math.exp(-1.0 / actual)
    tau = max(1, math.ceil(actual * (math.log1p(q) - target)))
    while _log_tail(tau, actual) > target:  # float rounding: step up until it holds
        tau += 1
    while tau > 1 and _log_tail(tau - 1, actual) <= target:
        tau -= 1
    return Selection(
        scale=scale,
        threshold=tau,
        epsilon=float(epsilon),
        delta=float(delta),
        max_groups=max_groups,
        singleton_probability=math.exp(_log_tail(tau, actual)),
    )


def select(
    counts: NDArray[np.int64], selection: Selection, source: RandomSource
) -> tuple[NDArray[np.bool_], NDArray[np.int64]]:
    """Noise the distinct-unit counts of the observed keys and keep those above ``tau``.

    Parameters
    ----------
    counts : numpy.ndarray of int64
        Distinct units per observed key, after truncation (a key whose count is 0
        is held by nobody and is never kept, though it gets its noise draw).
    selection : Selection
        From :func:`selection_threshold`.
    source : RandomSource
        Where the noise comes from.

    Returns
    -------
    kept : numpy.ndarray of bool
        The keys to release.
    noisy : numpy.ndarray of int64
        Every key's noisy count (release only ``noisy[kept]``).
    """
    exact = np.asarray(counts, dtype=np.int64).ravel()
    noise = discrete_laplace(np.full(len(exact), selection.scale), source)
    noisy = exact + noise
    kept = (noisy > selection.threshold) & (exact > 0)
    return kept, noisy
