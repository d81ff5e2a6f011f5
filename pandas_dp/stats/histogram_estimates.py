"""Estimates from noisy bucket counts: intervals, shares and proportions summing to one.

Post-processing of released histograms (value counts, proportions, workloads, their
grouped forms and describe's category shares): it costs no budget and reads no data.
Every interval is a union bound over the entries it uses (REFERENCE.md §5).

Examples
--------
>>> import numpy as np
>>> sum_to_one("project", np.array([0.7, 0.5, -0.1]), [3]).round(3).tolist()
[0.6, 0.4, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from pandas_dp.noise.bounding import halfwidth
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.stats import constraints

__all__ = [
    "count_bounds",
    "direct_interval",
    "divided_bounds",
    "entry_labels",
    "fixed_bounds",
    "proportion_bounds",
    "share_bounds",
    "sum_to_one",
    "tree_shapes",
]


def direct_interval(released: np.ndarray, plan: NoisePlan) -> Any:
    """The interval function of a release whose entries are the noisy values."""
    return partial(count_bounds, released, plan)


def count_bounds(
    released: np.ndarray, plan: NoisePlan, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each entry's interval at ``alpha``, within the measurement's range (whole
    numbers for integer counts)."""
    h = halfwidth(plan, alpha)
    lo = np.clip(released - h, plan.lower, plan.upper)
    hi = np.clip(released + h, plan.lower, plan.upper)
    if plan.integer:
        lo, hi = np.ceil(lo), np.floor(hi)
    return lo, hi


def share_bounds(plan: NoisePlan, noisy: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Bounds on each exact share ``c_i / sum(c)`` from the noisy counts.

    Every count's interval at ``alpha / K`` holds at once with probability
    ``1 - alpha``; ``c_i / (c_i + rest)`` grows with ``c_i`` and falls with the rest.
    """
    k = noisy.size
    lo, hi = count_bounds(noisy, plan, alpha / k)
    lo, hi = np.maximum(lo, 0.0), np.maximum(hi, 0.0)
    rest_lo, rest_hi = lo.sum() - lo, hi.sum() - hi
    with np.errstate(divide="ignore", invalid="ignore"):
        p_lo = np.where(lo + rest_hi > 0, lo / (lo + rest_hi), 0.0)
        p_hi = np.where(hi + rest_lo > 0, hi / (hi + rest_lo), 1.0)
    return np.clip(p_lo, 0.0, 1.0), np.clip(p_hi, 0.0, 1.0)


def proportion_bounds(
    plan: NoisePlan,
    raw: np.ndarray,
    leaf: slice,
    unit: float,
    all_but_one: bool,
    covered: bool,
    alpha: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-bucket bounds on ``count / n`` from the raw noisy entries (before repair).

    For ``all_but_one`` the last bucket's bound comes from the others' bounds at
    ``alpha / (K - 1)`` each; its lower end is 0 unless every row has a bucket.
    """
    if all_but_one:
        k = raw.size + 1
        h = halfwidth(plan, alpha / max(k - 1, 1)) / unit
        h_own = halfwidth(plan, alpha) / unit
        lo_e = np.clip(raw - h_own, 0.0, 1.0)
        hi_e = np.clip(raw + h_own, 0.0, 1.0)
        last_hi = 1.0 - float(np.clip(raw - h, 0.0, 1.0).sum())
        last_lo = 1.0 - float(np.clip(raw + h, 0.0, 1.0).sum()) if covered else 0.0
        lo_all = np.append(lo_e, min(max(last_lo, 0.0), 1.0))
        hi_all = np.append(hi_e, min(max(last_hi, 0.0), 1.0))
        return lo_all, np.maximum(hi_all, lo_all)
    h = halfwidth(plan, alpha)[leaf] / unit
    return np.clip(raw[leaf] - h, 0.0, 1.0), np.clip(raw[leaf] + h, 0.0, 1.0)


def fixed_bounds(value: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The interval of a value that is not noised (a single bucket's proportion)."""
    return value, value


def divided_bounds(
    fn: Callable[[float], tuple[np.ndarray, np.ndarray]], by: float, alpha: float
) -> tuple[np.ndarray, np.ndarray]:
    """``fn``'s interval divided by ``by`` (noisy counts of a workload over the public ``n``)."""
    lo, hi = fn(alpha)
    return lo / by, hi / by


def tree_shapes(k: int) -> list[np.ndarray]:
    """The node indices of each level of the hierarchical method's tree over ``k`` buckets."""
    return [np.unique(level) for level in constraints.tree_levels(k)]


def entry_labels(method: str, labels: list[Any], sizes: list[int]) -> list[Any]:
    """The labels of the noised entries: the buckets, all but the last, or tree nodes."""
    if method == "hierarchical":
        return [f"level {d + 1} node {j}" for d, size in enumerate(sizes) for j in range(size)]
    if method == "all_but_one":
        return labels[:-1]
    return labels


def sum_to_one(method: str, raw: np.ndarray, sizes: list[int]) -> np.ndarray:
    """Proportions summing to one from the noisy entries (along the last axis: one
    release per row of a 2-D ``raw``), by ``method`` (:mod:`pandas_dp.stats.constraints`;
    ``sizes``: the tree's level sizes)."""
    if method == "rescale":
        return constraints.rescale(raw)
    if method == "project":
        return constraints.project_simplex(raw)
    if method == "all_but_one":
        return constraints.complete_all_but_one(raw)
    cuts = list(np.cumsum(sizes)[:-1])
    return constraints.hierarchical_consistency(np.split(raw, cuts, axis=-1))
