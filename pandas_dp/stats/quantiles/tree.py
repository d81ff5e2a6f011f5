"""Quantiles on a public grid: a noisy hierarchical histogram (REFERENCE.md §12).

Planning. The declared bounds ``[a, b]`` of a column are cut into ``bins``
equal-width bins (a public grid). A ``branching``-ary tree is laid over the bins:
level ``h`` (the leaves) holds the bins, level ``l`` nodes of ``branching**(h - l)``
bins each (the last node of a level may be partial), and the root -- the number
of non-missing values -- is not measured. The counts of every node of every
level are one measurement of the plan (:meth:`~pandas_dp.plan.plans.Plan.grid`): one
row lands in one node per level, so its joint L1 sensitivity is ``h`` times a
histogram's (``h`` under add/remove, ``2h`` under substitute, times the
contribution bounds; L2 ``sqrt(h)`` times). The counts get discrete Laplace or
discrete Gaussian noise, exact, from the CSPRNG, like every count.

Estimating (post-processing, free of budget). The noisy tree is made consistent
by least squares (two passes: bottom-up inverse-variance averaging of a node with
the sum of its children, then top-down distribution of each parent's surplus in
proportion to the children's variances; Hay et al. 2010, with partial nodes and
an unmeasured root). The cumulative counts of the consistent leaves are made
non-decreasing (isotonic regression, pool adjacent violators) and clipped to
``[0, T]``, ``T`` the consistent root: the noisy number of non-missing values
(under ``add_remove`` there is no public ``n``). The ``q``-quantile is the value at
which this noisy CDF reaches ``q T``, interpolated linearly within its bin.
Several quantiles are read from one tree, and are non-decreasing in ``q``.

Intervals (honest, from the raw noisy counts). At bin edge ``e`` the statistic
``D(e) = B(e) - q N`` -- ``B(e)`` the count below ``e``, a sum of at most
``branching - 1`` nodes per level, ``N`` the sum of the top level -- is a weighted
sum of node counts, and its noise is bounded one-sidedly by a Chernoff bound
(discrete Laplace) or the sub-Gaussian tail (discrete Gaussian). The quantile of
the clamped values (pandas' linear interpolation) is at least ``e`` when
``D(e) <= -q`` and at most ``e`` when ``D(e) >= 1 - q``; each end of the interval
can only fail through the noise at one fixed edge, so two one-sided events at
``alpha / 2`` cover it (:func:`rank_band`). (Bounding ``B(e)`` and ``N`` apart took
four events at ``alpha / 4`` and added their widths.)

Examples
--------
>>> t = Tree(bins=8, branching=2)
>>> t.sizes, t.counts
((4, 2, 1), (2, 4, 8))
>>> exact = tree_counts(np.array([[1, 0, 2, 0, 0, 0, 3, 1]]), t)
>>> exact.tolist()
[[3, 4, 1, 2, 0, 4, 1, 0, 2, 0, 0, 0, 3, 1]]
>>> leaves, total = consistent_leaves(exact.astype(float), t)
>>> leaves.tolist(), total.tolist()
([[1.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0, 1.0]], [7.0])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp import engines
from pandas_dp.engines.in_memory import PANDAS
from pandas_dp.engines.protocol import Kernels
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.stats.constraints.monotone import isotonic

__all__ = [
    "Tree",
    "consistent_leaves",
    "quantile_interval",
    "rank_band",
    "read_quantiles",
    "tail_width",
    "tree_counts",
    "weighted_tail_width",
]

FloatArray = NDArray[np.float64]

# ----------------------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Tree:
    """The shape of a ``branching``-ary tree over ``bins`` leaves (public).

    Attributes
    ----------
    bins : int
        Leaves (grid bins).
    branching : int
        Children per node.
    """

    bins: int
    branching: int

    @cached_property
    def sizes(self) -> tuple[int, ...]:
        """Leaves per node, level 1 (below the root) to the leaves (size 1)."""
        h = 1
        while self.branching**h < self.bins:
            h += 1
        return tuple(self.branching ** (h - 1 - level) for level in range(h))

    @cached_property
    def counts(self) -> tuple[int, ...]:
        """Nodes per level, level 1 to the leaves."""
        return tuple(-(-self.bins // s) for s in self.sizes)

    @property
    def levels(self) -> int:
        """Measured levels (the root is not measured)."""
        return len(self.sizes)

    @property
    def nodes(self) -> int:
        """Measured nodes per group."""
        return int(sum(self.counts))

    @cached_property
    def offsets(self) -> tuple[int, ...]:
        """Where each level starts in the concatenated vector (and its end)."""
        return (0, *np.cumsum(self.counts).tolist())

    def level(self, vector: FloatArray, level: int) -> FloatArray:
        """Level ``level`` (0: just below the root) of a ``(groups, nodes)`` array."""
        return vector[:, self.offsets[level] : self.offsets[level + 1]]

    def child_starts(self, level: int) -> NDArray[np.intp]:
        """Positions in level ``level`` where each parent's children start."""
        return np.arange(0, self.counts[level], self.branching if level else self.counts[0])

    @cached_property
    def prefix_nodes(self) -> NDArray[np.int64]:
        """Per bin edge ``e_0 .. e_bins``: nodes summed for the count below it."""
        j = np.arange(self.bins + 1)
        covered = np.zeros_like(j)
        k = np.zeros_like(j)
        for s in self.sizes:
            upto = (j // s) * s
            k += (upto - covered) // s
            covered = upto
        return k


def tree_counts(leaves: NDArray[Any], tree: Tree) -> NDArray[np.int64]:
    """Every level's node counts from the leaf counts, concatenated (one row per group)."""
    rows = np.asarray(leaves, dtype=np.int64).reshape(-1, tree.bins)
    parts = [np.add.reduceat(rows, np.arange(0, tree.bins, s), axis=1) for s in tree.sizes]
    return np.concatenate(parts, axis=1) if rows.shape[0] else np.zeros((0, tree.nodes), np.int64)


def exact_grid(
    series: pd.Series,
    lower: float,
    upper: float,
    bins: int,
    groups: engines.Groups | None,
    kernels: Kernels | None = None,
) -> NDArray[np.int64]:
    """The engine call (after the charge): the grid's counts, group after group
    (``kernels``: the engine measuring the plan's)."""
    counter = PANDAS if kernels is None else kernels
    return counter.grid_counts(series, lower, upper, bins, groups=groups)


def exact_tree(
    series: pd.Series,
    decl: NumericDeclaration,
    tree: Tree,
    groups: engines.Groups | None,
    kernels: Kernels | None = None,
) -> NDArray[np.float64]:
    """The exact tree, group after group: :func:`exact_grid`'s leaves summed into nodes."""
    leaves = exact_grid(series, decl.lower, decl.upper, tree.bins, groups, kernels)
    return tree_counts(leaves, tree).astype(np.float64).reshape(-1)


def consistent_leaves(noisy: FloatArray, tree: Tree) -> tuple[FloatArray, FloatArray]:
    """Least-squares consistent leaves and root of noisy trees (one row per group).

    Every node has the same noise variance; the root is unmeasured. Returns the
    leaves ``(groups, bins)`` and the root ``(groups,)``.
    """
    rows = np.asarray(noisy, dtype=np.float64).reshape(-1, tree.nodes)
    h = tree.levels
    z: list[FloatArray] = [np.empty(0)] * h
    var: list[FloatArray] = [np.empty(0)] * h
    z[h - 1] = tree.level(rows, h - 1)
    var[h - 1] = np.ones(tree.counts[h - 1])
    for level in range(h - 2, -1, -1):  # bottom-up: own count and children's sum
        starts = tree.child_starts(level + 1)
        s = np.add.reduceat(z[level + 1], starts, axis=1)
        vs = np.add.reduceat(var[level + 1], starts)
        z[level] = (tree.level(rows, level) + s / vs) / (1.0 + 1.0 / vs)
        var[level] = 1.0 / (1.0 + 1.0 / vs)
    root = z[0].sum(axis=1)
    parent = root[:, None]
    for level in range(h):  # top-down: each parent's surplus, shared by variance
        starts = tree.child_starts(level)
        diff = parent - np.add.reduceat(z[level], starts, axis=1)
        vs = np.add.reduceat(var[level], starts)
        owner = np.repeat(np.arange(len(starts)), np.diff(np.append(starts, tree.counts[level])))
        parent = z[level] + (var[level] / vs[owner]) * diff[:, owner]
    return parent, root


def read_quantiles(
    leaves: FloatArray, total: float, qs: Sequence[float], lower: float, upper: float
) -> FloatArray:
    """Quantiles of one group from its consistent leaves: non-decreasing in ``q``.

    The cumulative counts are made non-decreasing and clipped to ``[0, total]``;
    the ``q``-quantile is where they reach ``q total``, interpolated in its bin.
    With a non-positive total (no data, or noise) the grid carries no
    information: the quantiles of the uniform distribution on the bounds.
    """
    bins = leaves.shape[0]
    q = np.asarray(qs, dtype=np.float64)
    if not total > 0:
        return np.asarray(lower + q * (upper - lower), dtype=np.float64)
    cdf = np.empty(bins + 1)
    cdf[0] = 0.0
    cdf[1:] = np.cumsum(leaves)
    cdf[1:-1] = isotonic(cdf[1:-1])
    cdf[-1] = total
    np.clip(cdf, 0.0, total, out=cdf)
    cdf = np.maximum.accumulate(cdf)
    target = q * total
    j = np.clip(np.searchsorted(cdf[1:], target, side="left"), 0, bins - 1)
    mass = cdf[j + 1] - cdf[j]
    frac = np.where(mass > 0, (target - cdf[j]) / np.where(mass > 0, mass, 1.0), 0.0)
    width = (upper - lower) / bins
    values = lower + (j + np.clip(frac, 0.0, 1.0)) * width
    order = np.argsort(q, kind="stable")
    values[order] = np.maximum.accumulate(values[order])
    return np.asarray(np.clip(values, lower, upper), dtype=np.float64)


# ----------------------------------------------------------------------------- intervals


def tail_width(noise: NoisePlan, k: NDArray[Any], alpha: float) -> FloatArray:
    """Per entry of ``k``: ``w`` with ``P(sum of k noise draws >= w) <= alpha`` (one side).

    Discrete Laplace with scale ``s`` (``P(x) ∝ exp(-|x|/s)``): the Chernoff bound
    ``exp(-λ w) M(λ)^k`` with the moment generating function
    ``M(λ) = (1 - p)² / ((1 - p e^λ)(1 - p e^-λ))``, ``p = e^{-1/s}``, minimised over
    a grid of ``λ < 1/s`` (any ``λ`` gives a valid bound). Discrete Gaussian with
    ``sigma``: sub-Gaussian, ``w = sigma sqrt(2 k ln(1/alpha))`` (Canonne, Kamath
    & Steinke 2020). Rounded up to whole counts.

    Examples
    --------
    >>> from pandas_dp.noise.plans import plan_noise
    >>> plan = plan_noise(np.ones(1), np.array([-np.inf]), np.array([np.inf]),
    ...                   epsilon=1.0, bounding="none", integer=True)
    >>> tail_width(plan, np.array([1, 4]), 0.05).tolist()
    [5.0, 8.0]
    """
    w = weighted_tail_width(noise, [1.0], np.asarray(k, dtype=np.float64)[None, :], alpha)
    slack = 0.0 if noise.mechanism == "gaussian" else 1e-9  # (the grid minimum's rounding)
    return np.asarray(np.ceil(w - slack), dtype=np.float64)


def weighted_tail_width(
    noise: NoisePlan, weights: Sequence[float], k: NDArray[Any], alpha: float
) -> FloatArray:
    """Per column ``e`` of ``k``: ``w`` with ``P(sum_g weights[g] S_ge >= w) <= alpha``.

    ``S_ge`` is a sum of ``k[g, e]`` independent draws of ``noise`` (all independent),
    so a weighted sum of noise draws; one side (the noise is symmetric, so the
    other side has the same bound). Discrete Laplace with scale ``s``: the Chernoff
    bound ``exp(-λ w) prod_g M(λ |weights[g]|)^k[g, e]`` with :func:`tail_width`'s
    ``M``, minimised over a grid of ``λ < 1 / (s max |weights|)``. Discrete
    Gaussian: sub-Gaussian with variance proxy ``sigma² sum_g weights[g]² k[g, e]``.
    Not rounded (a weighted sum of counts need not be a whole number).

    Parameters
    ----------
    noise : NoisePlan
        One count's noise (its first entry's scale).
    weights : sequence of float
        One weight per row of ``k``.
    k : ndarray, shape (len(weights), E)
        Numbers of draws.
    alpha : float
        The one-sided failure probability.

    Returns
    -------
    ndarray, shape (E,)

    Examples
    --------
    >>> from pandas_dp.noise.plans import plan_noise
    >>> plan = plan_noise(np.ones(1), np.array([-np.inf]), np.array([np.inf]),
    ...                   epsilon=1.0, bounding="none", integer=True)
    >>> w = weighted_tail_width(plan, [0.5, 0.5], np.array([[2], [2]]), 0.05)
    >>> bool(w[0] < tail_width(plan, np.array([4]), 0.05)[0])
    True
    """
    kk = np.asarray(k, dtype=np.float64)
    ww = np.abs(np.asarray(weights, dtype=np.float64))
    s = float(noise.scale[0])
    log_a = math.log(1.0 / alpha)
    if noise.mechanism == "gaussian":
        return np.asarray(s * np.sqrt(2.0 * ((ww**2) @ kk) * log_a), dtype=np.float64)
    top = float(ww.max())
    if top == 0.0:
        return np.zeros(kk.shape[1])
    lam = np.linspace(1e-3, 1.0 - 1e-3, 400)[:, None] / (s * top)
    total = np.zeros((lam.shape[0], kk.shape[1]))
    for weight, row in zip(ww, kk, strict=True):
        total += row[None, :] * _laplace_log_mgf(lam * weight, s)
    return np.asarray(np.min((total + log_a) / lam, axis=0), dtype=np.float64)


def _laplace_log_mgf(lam: FloatArray, s: float) -> FloatArray:
    """``log M(λ)`` of the discrete Laplace with scale ``s``, ``0 <= λ < 1/s``."""
    inv = 1.0 / s
    return np.asarray(
        2.0 * np.log(-np.expm1(-inv))
        - np.log(-np.expm1(lam - inv))
        - np.log(-np.expm1(-lam - inv)),
        dtype=np.float64,
    )


def _raw_prefix(noisy: FloatArray, tree: Tree) -> FloatArray:
    """Per bin edge, the noisy count below it from the raw (inconsistent) nodes."""
    j = np.arange(tree.bins + 1)
    out = np.zeros(tree.bins + 1)
    covered = np.zeros_like(j)
    row = noisy.reshape(1, -1)
    for level, s in enumerate(tree.sizes):
        cum = np.concatenate([[0.0], np.cumsum(tree.level(row, level)[0])])
        upto = (j // s) * s
        out += cum[upto // s] - cum[covered // s]
        covered = upto
    return out


def quantile_interval(
    noisy: FloatArray,
    tree: Tree,
    noise: NoisePlan,
    qs: Sequence[float],
    lower: float,
    upper: float,
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """``1 - alpha`` intervals for the quantiles of one group's clamped values.

    From the raw noisy tree ``noisy`` (one group's nodes); see the module text.
    Each interval holds with probability at least ``1 - alpha`` on its own.

    Per inner edge ``e``, ``D(e) = B(e) - q N`` with ``B(e)`` the noisy count below
    ``e`` (a sum of prefix nodes) and ``N`` the noisy total (the top level's nodes):
    a top-level node wholly below ``e`` enters ``D`` with weight ``1 - q``, a deeper
    prefix node with weight 1, any other top-level node with ``-q``, so its noise
    is bounded by :func:`weighted_tail_width` at ``alpha / 2`` and
    :func:`rank_band` reads the ends.
    """
    step = (upper - lower) / tree.bins
    edges = np.asarray(lower + np.arange(tree.bins + 1) * step, dtype=np.float64)
    edges[-1] = upper
    below = _raw_prefix(noisy, tree)[1:-1]
    total = float(np.sum(tree.level(noisy.reshape(1, -1), 0)))
    inner = np.arange(1, tree.bins)
    top = inner // tree.sizes[0]  # top-level nodes wholly below the edge
    deep = tree.prefix_nodes[1:-1] - top
    terms = np.vstack([top, deep, tree.counts[0] - top])
    los, his = [], []
    for q in qs:
        w = weighted_tail_width(noise, (1.0 - q, 1.0, q), terms, alpha / 2.0)
        lo, hi = rank_band(edges, below - q * total, w, q)
        los.append(lo)
        his.append(hi)
    return np.array(los), np.array(his)


def rank_band(values: FloatArray, d: FloatArray, w: FloatArray, q: float) -> tuple[float, float]:
    """An interval for the ``q``-quantile from noisy ``D(e) = B(e) - q N`` at the
    inner edges of a partition.

    ``values`` are the partition's ``T + 1`` edge values (the bounds at both ends);
    ``d[i]`` the noisy ``D`` at inner edge ``i + 1`` (``B(e)``: values below ``e``,
    ``N``: all of them), ``w[i]`` a bound its noise exceeds, on each side, with
    probability at most ``alpha / 2``. The exact ``D`` is non-decreasing in ``e``;
    the quantile of the clamped values (pandas' linear interpolation) is at least
    ``e`` when ``D(e) <= -q`` and at most ``e`` when ``D(e) >= 1 - q``. The lower
    end is the edge before the first whose noisy ``D`` plus its bound exceeds
    ``-q``: it can only be too high through the noise at one fixed edge (the first
    whose exact ``D`` exceeds ``-q``), probability at most ``alpha / 2``; the upper
    end likewise, so the interval holds with probability at least ``1 - alpha``.
    """
    bins = len(values) - 1
    fail = np.flatnonzero(d + w > -q)
    j_lo = int(fail[0]) if fail.size else bins - 1
    short = np.flatnonzero(d - w < 1.0 - q)
    j_hi = int(short[-1]) + 2 if short.size else 1
    lo, hi = float(values[j_lo]), float(values[min(j_hi, bins)])
    return min(lo, hi), max(lo, hi)
