"""The universal histogram of Hay et al. (2010) with the root fixed (REFERENCE.md §5).

The tree over the categories, its exact levels, and the consistent estimate of
the leaves from noisy levels; post-processing only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from pandas_dp.stats.constraints._checks import (
    FloatArray,
    IntArray,
    _categories,
    _count,
    _finite,
    _project_shifted,
)

# --------------------------------------------------------------------------- the tree


def noised_levels(k: int, branching: int = 2) -> int:
    """Number of levels noised by the hierarchical method over ``k`` categories.

    The tree has height ``h = ceil(log_branching(k))``: the root (fixed, not
    noised) and ``h`` levels below it, the last being the ``k`` leaves. Every
    level partitions the records, so each level is a histogram with the leaf
    histogram's sensitivity, and releasing all levels costs
    ``h x (per-level sensitivity)``: ``h`` is the sensitivity multiplier.
    ``k = 1`` gives 0: the single proportion is 1 and nothing is released.

    Examples
    --------
    >>> noised_levels(8), noised_levels(5), noised_levels(2), noised_levels(1)
    (3, 3, 1, 0)
    >>> noised_levels(9, branching=3)
    2
    """
    k = _count(k, "k", 1)
    b = _count(branching, "branching", 2)
    height, width = 0, 1
    while width < k:
        width *= b
        height += 1
    return height


def _level_sizes(k: int, branching: int) -> list[int]:
    """Number of nodes on each level below the root, top to bottom."""
    h = noised_levels(k, branching)
    return [-(-k // branching ** (h - d)) for d in range(1, h + 1)]


def tree_levels(k: int, branching: int = 2) -> list[IntArray]:
    """Describe the tree of the hierarchical method: leaf -> node, level by level.

    The tree is the complete ``branching``-ary tree over ``branching**h`` leaves
    (``h = noised_levels(k, branching)``) with every node that covers only
    padding leaves removed. Those nodes are known to be empty, a public fact, so
    they are neither noised nor estimated. Node ``j`` of level ``d`` covers the
    leaves ``j * b**(h-d)`` up to (not including) ``(j + 1) * b**(h-d)`` (fewer at
    the right edge), and its parent is node ``j // b`` of level ``d - 1``. Every
    leaf stays at depth ``h``; a node at the right edge may have fewer than
    ``b`` children (even one: then both are noised and both count).

    Parameters
    ----------
    k : int
        Number of categories (leaves), at least 1.
    branching : int, default 2
        Children per node, at least 2.

    Returns
    -------
    list of numpy.ndarray of intp
        One array per level below the root, top to bottom (``h`` arrays, empty
        list for ``k = 1``). Entry ``i`` of array ``d - 1`` is the node of level
        ``d`` holding leaf ``i``; the last array is ``arange(k)``. The values of
        level ``d`` are ``np.bincount(levels[d - 1], weights=leaves)``.

    Examples
    --------
    >>> tree_levels(5)
    [array([0, 0, 0, 0, 1]), array([0, 0, 1, 1, 2]), array([0, 1, 2, 3, 4])]
    """
    k = _count(k, "k", 1)
    b = _count(branching, "branching", 2)
    h = noised_levels(k, b)
    leaves = np.arange(k, dtype=np.intp)
    return [leaves // b ** (h - d) for d in range(1, h + 1)]


def _group_sum(x: FloatArray, branching: int) -> FloatArray:
    """Sum each run of ``branching`` consecutive entries of the last axis (parents)."""
    n = x.shape[-1]
    m = -(-n // branching)
    pad = np.zeros((*x.shape[:-1], m * branching - n), dtype=np.float64)
    full = np.concatenate([x, pad], axis=-1)
    return np.asarray(full.reshape((*x.shape[:-1], m, branching)).sum(axis=-1))


def aggregate_levels(leaves: ArrayLike, branching: int = 2) -> list[FloatArray]:
    """The exact node values of every level below the root, from the leaf values.

    What the hierarchical method noises: apply one release to each returned
    array (or to their concatenation). Works along the last axis.

    Parameters
    ----------
    leaves : array_like of float, shape (..., k)
        Leaf values (e.g. the exact proportions, or counts).
    branching : int, default 2

    Returns
    -------
    list of numpy.ndarray of float64
        ``noised_levels(k, branching)`` arrays, top to bottom, with the node
        counts of :func:`tree_levels`; the last is ``leaves`` itself.

    Examples
    --------
    >>> aggregate_levels([0.1, 0.2, 0.3, 0.4])
    [array([0.3, 0.7]), array([0.1, 0.2, 0.3, 0.4])]
    >>> aggregate_levels([1.0])
    []
    """
    x = _finite(leaves, "leaves")
    k = _categories(x, "leaves")
    b = _count(branching, "branching", 2)
    h = noised_levels(k, b)
    if h == 0:
        return []
    levels = [x]
    for _ in range(h - 1):
        levels.append(_group_sum(levels[-1], b))
    return levels[::-1]


def _tree_estimate(
    noisy_levels: Sequence[ArrayLike],
    branching: int,
    root: float,
    variances: Sequence[float] | None,
) -> tuple[list[FloatArray], FloatArray]:
    """Consistent levels in units of ``unit`` (a power of two per tree), and ``unit``."""
    b = _count(branching, "branching", 2)
    if not (math.isfinite(root) and root > 0):
        raise ValueError(f"root must be a positive finite number (1 for proportions); got {root}")
    levels = [_finite(x, f"noisy_levels[{i}]") for i, x in enumerate(noisy_levels)]
    if not levels:
        return [], np.ones(1)
    k = _categories(levels[-1], "the leaf level noisy_levels[-1]")
    sizes = _level_sizes(k, b)
    got = [x.shape[-1] for x in levels]
    if got != sizes:
        raise ValueError(
            f"noisy_levels must hold {len(sizes)} level(s) with {sizes} nodes (the tree over "
            f"k={k} leaves with branching={b}, top to bottom, root excluded); got {got}. "
            f"Build the levels with aggregate_levels(leaves, branching={b})"
        )
    batch = levels[-1].shape[:-1]
    if any(x.shape[:-1] != batch for x in levels):
        raise ValueError(
            "every level of noisy_levels must have the same leading shape (one tree per "
            f"row); got shapes {[x.shape for x in levels]}"
        )
    h = len(levels)
    if variances is None:
        var = np.ones(h)
    else:
        var = np.asarray(variances, dtype=np.float64).ravel()
        if var.size != h or not np.all(np.isfinite(var) & (var > 0)):
            raise ValueError(
                f"variances must hold {h} positive finite numbers, the noise variance of "
                f"each level top to bottom; got {list(np.asarray(variances).ravel())}"
            )
        # only ratios matter; keep them in a range where sums neither overflow nor vanish
        var = np.maximum(var / var.max(), 1e-200)

    # per tree, a power of two (exact scaling) that brings every value to at most 2
    biggest = np.max([np.abs(x).max(axis=-1) for x in levels], axis=0)[..., None]
    _, exponent = np.frexp(np.maximum(biggest, root))
    unit = np.ldexp(1.0, exponent - 1)
    xs = [x / unit for x in levels]

    # bottom-up: z is the best estimate of each node from its own subtree, v its variance
    z: list[FloatArray] = [xs[-1]]
    v: list[FloatArray] = [np.full(xs[-1].shape, var[-1])]
    for d in range(h - 2, -1, -1):
        below = _group_sum(z[0], b)
        below_var = _group_sum(v[0], b)
        w = below_var / (var[d] + below_var)  # weight of the node's own noisy value
        z.insert(0, w * xs[d] + (1.0 - w) * below)
        v.insert(0, var[d] * w)

    # top-down: spread each parent's gap over its children in proportion to their variance
    parent = root / unit
    out: list[FloatArray] = []
    for d in range(h):
        idx = np.arange(sizes[d]) // b
        gap = parent - _group_sum(z[d], b)
        share = v[d] / _group_sum(v[d], b)[..., idx]
        parent = z[d] + share * gap[..., idx]
        out.append(parent)
    return out, unit


def consistent_levels(
    noisy_levels: Sequence[ArrayLike],
    branching: int = 2,
    root: float = 1.0,
    variances: Sequence[float] | None = None,
) -> list[FloatArray]:
    """Least-squares consistent estimates of every level of a noisy tree.

    Hay et al. (2010)'s two passes, generalised to unequal level variances and
    to the pruned tree of :func:`tree_levels`:

    1. Bottom-up weighted averaging. A leaf keeps its noisy value ``z = x``, of
       variance ``V = sigma^2``. An inner node at level ``d`` combines its own
       noisy value ``x`` (variance ``sigma_d^2``) with the sum ``s`` of its
       children's ``z`` (variance ``S``, the sum of their ``V``) by inverse
       variance: ``z = w x + (1 - w) s`` with ``w = S / (sigma_d^2 + S)`` and
       ``V = sigma_d^2 w``. For equal variances and a full ``b``-ary tree this is
       Hay et al.'s ``z = (b^l - b^{l-1}) / (b^l - 1) x
       + (b^{l-1} - 1) / (b^l - 1) sum z[children]`` at height ``l``.
    2. Top-down mean consistency. The root is fixed at ``root``; each node's
       children get ``z_c + V_c / S (parent - sum z)``, so they sum exactly to the
       parent's final value (equal shares ``1/b`` for equal variances).

    With independent noise this is the minimum-variance unbiased linear estimate
    of the node values under the constraints "children sum to their parent,
    the root equals ``root``". The estimates are not clipped: they may be
    negative (use :func:`hierarchical_consistency` for proportions).

    Parameters
    ----------
    noisy_levels : sequence of array_like of float
        The noisy values of every level below the root, top to bottom, shaped
        like :func:`aggregate_levels`'s output (all with the same leading axes;
        the last array holds the leaves). Empty for a single category.
    branching : int, default 2
    root : float, default 1.0
        The known total (1 for proportions, the public ``n`` for counts).
    variances : sequence of float, optional
        The noise variance of each level, top to bottom. By default all levels
        are assumed to be noised with the same variance (one release split
        evenly), and then the scale is irrelevant; only ratios matter.

    Returns
    -------
    list of numpy.ndarray of float64
        The consistent values, shaped like ``noisy_levels``.

    Raises
    ------
    ValueError
        On a NaN or infinite value, a ``root`` that is not positive, level sizes
        that do not match the tree, or invalid ``variances``.

    Examples
    --------
    Four categories, a binary tree: level 1 holds two nodes, level 2 the leaves.
    Bottom-up, node 0 becomes ``2/3 * 0.2 + 1/3 * (0.25 - 0.2) = 0.15`` and node 1
    ``2/3 * 0.7 + 1/3 * 0.75 = 0.7167``; top-down, the gap to the root
    (``1 - 0.8667``) is split evenly, and so on down:

    >>> top, leaves = consistent_levels([[0.2, 0.7], [0.25, -0.2, 0.3, 0.45]])
    >>> top
    array([0.21666667, 0.78333333])
    >>> leaves
    array([ 0.33333333, -0.11666667,  0.31666667,  0.46666667])
    """
    out, unit = _tree_estimate(noisy_levels, branching, root, variances)
    return [x * unit for x in out]


def hierarchical_consistency(
    noisy_levels: Sequence[ArrayLike],
    branching: int = 2,
    root: float = 1.0,
    variances: Sequence[float] | None = None,
) -> FloatArray:
    """Consistent, non-negative leaves from the noisy levels of a tree (Hay et al. 2010).

    The universal-histogram procedure with the root fixed at ``root``
    (REFERENCE.md §5): :func:`consistent_levels` (bottom-up weighted averaging,
    top-down mean consistency), after which the leaves sum to ``root`` but may
    be negative. A final repair projects them onto the simplex scaled to
    ``root`` (:func:`project_simplex`): since they already sum to ``root``, this
    subtracts a common ``tau >= 0`` from the positive leaves and sets the rest to
    0, the least change in Euclidean distance.

    Parameters
    ----------
    noisy_levels : sequence of array_like of float
        The noisy node values of every level below the root, top to bottom, as
        returned by :func:`aggregate_levels` and then noised; the last array
        holds the ``k`` leaves. Extra leading axes hold independent trees. For
        ``k = 1`` there is nothing to noise: pass ``[]``.
    branching : int, default 2
    root : float, default 1.0
        The known total; the result sums to it.
    variances : sequence of float, optional
        The noise variance of each level, top to bottom (default: equal).

    Returns
    -------
    numpy.ndarray of float64, shape (..., k)
        Leaves in ``[0, root]`` summing to ``root``.

    Raises
    ------
    ValueError
        As :func:`consistent_levels`.

    Examples
    --------
    >>> exact = [0.1, 0.2, 0.3, 0.4]
    >>> hierarchical_consistency(aggregate_levels(exact))
    array([0.1, 0.2, 0.3, 0.4])
    >>> hierarchical_consistency([[0.2, 0.7], [0.25, -0.2, 0.3, 0.45]])
    array([0.29444444, 0.        , 0.27777778, 0.42777778])
    >>> hierarchical_consistency([])
    array([1.])
    """
    levels, unit = _tree_estimate(noisy_levels, branching, root, variances)
    if not levels:
        return np.array([float(root)])
    leaves = levels[-1]
    with np.errstate(over="ignore", invalid="ignore"):
        gap = leaves - leaves.max(axis=-1, keepdims=True)
        shifted = np.where(gap == 0.0, 0.0, gap * (unit / root))
    out = _project_shifted(shifted)
    return out if root == 1.0 else np.asarray(out * root)
