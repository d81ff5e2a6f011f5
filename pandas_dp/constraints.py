"""Repair noisy releases so that they obey known constraints.

Everything here is *post-processing*: it takes numbers that have already been
noised and returns repaired ones, reading no data, so it costs no privacy. The
module knows nothing of pandas and draws no random numbers.

Sum-to-one procedures for a noisy vector of ``K`` proportions (REFERENCE.md §5):

:func:`rescale`
    Clip every entry to ``[0, 1]`` and divide by the sum.
:func:`complete_all_but_one`
    Only ``p_1 .. p_{K-1}`` were noised; ``p_K = 1 - sum``, then repaired.
:func:`project_simplex`
    Euclidean projection onto the probability simplex (least squares).
:func:`hierarchical_consistency`
    Hay et al. (2010) universal histogram: every level of a tree over the
    categories is noised; the levels are combined into consistent leaves.
    :func:`tree_levels`, :func:`noised_levels`, :func:`aggregate_levels` describe
    the tree and :func:`consistent_levels` exposes every level of the estimate.

Each of them returns a float64 vector with every entry in ``[0, 1]`` and a sum
equal to 1 within ``1e-12`` (a last rounding correction is put on the largest
entry). They work along the last axis, so an ``(R, K)`` array of ``R`` noisy
vectors is repaired in one call. ``K = 1`` always gives ``[1.0]``. A NaN or an
infinite input raises :class:`ValueError`: a noisy release is always finite.

Positive semi-definite repair of a noisy covariance matrix (REFERENCE.md §6):

:func:`nearest_psd`
    Clip the eigenvalues at 0: the nearest PSD matrix in Frobenius norm.
:func:`nearest_correlation`
    Higham (2002): the nearest correlation matrix (PSD, unit diagonal).
:func:`nearest_psd_covariance`
    Either of the two for a covariance matrix; ``"higham"`` keeps the variances.
:func:`cov_to_corr`
    A covariance matrix to a correlation matrix.

Examples
--------
>>> noisy = np.array([0.7, -0.1, 0.5])
>>> rescale(noisy)
array([0.58333333, 0.        , 0.41666667])
>>> project_simplex(noisy)
array([0.6, 0. , 0.4])
>>> complete_all_but_one(noisy[:2])
array([0.7, 0. , 0.3])
>>> nearest_psd(np.array([[1.0, 2.0], [2.0, 1.0]]))
array([[1.5, 1.5],
       [1.5, 1.5]])
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "COVARIANCE_METHODS",
    "aggregate_levels",
    "complete_all_but_one",
    "consistent_levels",
    "cov_to_corr",
    "hierarchical_consistency",
    "nearest_correlation",
    "nearest_psd",
    "nearest_psd_covariance",
    "noised_levels",
    "project_simplex",
    "rescale",
    "tree_levels",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.intp]

#: The ``method=`` values of :func:`nearest_psd_covariance`.
COVARIANCE_METHODS: tuple[str, ...] = ("clip", "higham")


# --------------------------------------------------------------------------- validation


def _finite(x: ArrayLike, name: str) -> FloatArray:
    """``x`` as a float64 array of at least one dimension, all entries finite."""
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0:
        raise ValueError(f"{name} must be an array (one entry per category); got a scalar")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        where = first[0] if len(first) == 1 else first
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite value(s) (the first at index "
            f"{where}); a noisy release is always finite, so look at the step that produced "
            f"these values"
        )
    return arr


def _categories(arr: FloatArray, name: str) -> int:
    """The number of categories (length of the last axis); at least one."""
    k = arr.shape[-1]
    if k == 0:
        raise ValueError(f"{name} has no entries; a proportion vector needs at least one category")
    return int(k)


def _square(a: ArrayLike, name: str) -> FloatArray:
    """``a`` as a finite square float64 matrix."""
    arr = _finite(a, name)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square 2-D matrix; got shape {arr.shape}")
    return arr


def _count(value: int, name: str, smallest: int) -> int:
    """``value`` as an int no smaller than ``smallest`` (bools rejected)."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer; got {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer; got {value!r}") from None
    if v < smallest:
        raise ValueError(f"{name} must be at least {smallest}; got {v}")
    return v


def _power_of_two_below(m: float) -> float:
    """The largest power of two ``<= m`` (``m > 0`` finite); 1 for ``m <= 0``.

    Dividing by it is exact and brings ``m`` into ``[1, 2)``.
    """
    if not m > 0:
        return 1.0
    _, exponent = math.frexp(m)
    return math.ldexp(1.0, exponent - 1)


# --------------------------------------------------------------------------- simplex core


def _fix_sum(x: FloatArray) -> FloatArray:
    """Put the rounding residual ``1 - sum`` on the largest entry of each row.

    ``x`` is non-negative and sums to 1 up to rounding; the result is clipped to
    ``[0, 1]`` and sums to 1 within a few units in the last place.
    """
    out = np.array(x, dtype=np.float64)
    residual = 1.0 - out.sum(axis=-1, keepdims=True)
    top = np.argmax(out, axis=-1)[..., None]
    np.put_along_axis(out, top, np.take_along_axis(out, top, axis=-1) + residual, axis=-1)
    return np.clip(out, 0.0, 1.0)


def _project_shifted(q: FloatArray) -> FloatArray:
    """Project rows whose maximum is 0 onto the simplex (entries may be ``-inf``).

    The projection is ``max(q - tau, 0)`` with ``tau`` chosen so the row sums to
    1 (Held, Wolfe & Crowder 1974; Duchi et al. 2008). The largest entry keeps
    at most 1, so ``tau >= max(q) - 1`` and an entry ``<= max(q) - 1`` always
    ends at 0; clamping such entries at ``-1`` leaves ``tau`` unchanged and
    keeps every sum below finite.
    """
    q = np.maximum(q, -1.0)
    k = q.shape[-1]
    desc = -np.sort(-q, axis=-1)
    excess = np.cumsum(desc, axis=-1) - 1.0
    j = np.arange(1, k + 1, dtype=np.float64)
    # support size rho: the last j with desc_j > excess_j / j (true at j = 1)
    active = desc * j > excess
    rho = k - np.argmax(active[..., ::-1], axis=-1)
    tau = np.take_along_axis(excess, (rho - 1)[..., None], axis=-1) / rho[..., None]
    return _fix_sum(np.maximum(q - tau, 0.0))


# --------------------------------------------------------------------------- sum to one


def rescale(p: ArrayLike) -> FloatArray:
    """Clip each noisy proportion to ``[0, 1]`` and divide by the sum.

    Liu (2019)'s normalisation. When every entry clips to 0 the sum is 0 and
    the uniform vector ``1/K`` is returned.

    Parameters
    ----------
    p : array_like of float, shape (..., K)
        Noisy proportions, one vector per row of the last axis.

    Returns
    -------
    numpy.ndarray of float64, shape (..., K)
        Entries in ``[0, 1]``, each row summing to 1.

    Raises
    ------
    ValueError
        If ``p`` is a scalar, has no categories, or holds NaN or infinity.

    Examples
    --------
    >>> rescale([0.5, 0.7, -0.2])
    array([0.41666667, 0.58333333, 0.        ])
    >>> rescale([-0.3, -0.1])
    array([0.5, 0.5])
    >>> rescale([[2.0, 1.0], [0.2, 0.2]])
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    arr = _finite(p, "p")
    k = _categories(arr, "p")
    clipped = np.clip(arr, 0.0, 1.0)
    total = clipped.sum(axis=-1, keepdims=True)
    positive = total > 0
    out = np.where(positive, clipped / np.where(positive, total, 1.0), 1.0 / k)
    return _fix_sum(out)


def project_simplex(p: ArrayLike) -> FloatArray:
    """Euclidean projection of each noisy vector onto the probability simplex.

    Returns the ``x`` with ``x >= 0`` and ``sum(x) = 1`` nearest to ``p`` in
    Euclidean distance: the least-squares estimate under both constraints. It
    is ``x = max(p - tau, 0)`` for the unique ``tau`` that makes ``x`` sum to 1,
    found exactly by sorting (``O(K log K)`` per row; Held, Wolfe & Crowder
    1974; Duchi et al. 2008). A point already on the simplex is returned
    unchanged (up to rounding), and the projection never moves a vector further
    from any point of the simplex (the true proportions in particular).

    Parameters
    ----------
    p : array_like of float, shape (K,) or (..., K)
        Noisy proportions. A 2-D array is projected row by row (any leading axes
        are allowed), e.g. the ``R`` repetitions of a benchmark at once.

    Returns
    -------
    numpy.ndarray of float64, same shape as ``p``

    Raises
    ------
    ValueError
        If ``p`` is a scalar, has no categories, or holds NaN or infinity.

    Examples
    --------
    >>> project_simplex([0.5, 0.7, -0.2])
    array([0.4, 0.6, 0. ])
    >>> project_simplex([[0.2, 0.3, 0.5], [3.0, 0.0, 0.0]])
    array([[0.2, 0.3, 0.5],
           [1. , 0. , 0. ]])
    """
    arr = _finite(p, "p")
    _categories(arr, "p")
    with np.errstate(over="ignore"):  # a gap beyond the float range becomes -inf: fine
        shifted = arr - arr.max(axis=-1, keepdims=True)
    return _project_shifted(shifted)


def complete_all_but_one(p_head: ArrayLike) -> FloatArray:
    """Complete ``K - 1`` noisy proportions with ``p_K = 1 - sum`` and repair.

    Only ``p_1 .. p_{K-1}`` were noised (REFERENCE.md §5, "all_but_one"). The
    repair is the least-squares estimate from the noised entries: the
    Euclidean projection of ``p_head`` onto ``{q >= 0, sum(q) <= 1}``, with
    ``p_K = 1 - sum(q)``. In practice:

    * if the negative entries set to 0 leave a sum ``<= 1``, those clipped
      entries are kept and ``p_K = 1 - sum >= 0``;
    * otherwise ``p_head`` is projected onto the simplex
      (:func:`project_simplex`) and ``p_K = 0``.

    Either way every entry, ``p_K`` included, lies in ``[0, 1]``. This equals
    "clip the head to ``[0, 1]``; if its sum exceeds 1, project the head onto the
    simplex".

    Parameters
    ----------
    p_head : array_like of float, shape (..., K - 1)
        The noisy proportions of the first ``K - 1`` categories (may be empty:
        then ``K = 1`` and the result is ``[1.0]``).

    Returns
    -------
    numpy.ndarray of float64, shape (..., K)

    Raises
    ------
    ValueError
        If ``p_head`` is a scalar or holds NaN or infinity.

    Examples
    --------
    >>> complete_all_but_one([0.2, -0.1, 0.3])
    array([0.2, 0. , 0.3, 0.5])
    >>> complete_all_but_one([0.9, 0.5])
    array([0.7, 0.3, 0. ])
    >>> complete_all_but_one([])
    array([1.])
    """
    head = _finite(p_head, "p_head")
    if head.shape[-1] == 0:
        return np.ones((*head.shape[:-1], 1), dtype=np.float64)
    kept = np.clip(head, 0.0, 2.0)  # an entry above 1 already makes the sum exceed 1
    total = kept.sum(axis=-1, keepdims=True)
    fits = total <= 1.0
    completed = np.concatenate([kept, 1.0 - np.minimum(total, 1.0)], axis=-1)
    if fits.all():
        return _fix_sum(completed)
    projected = np.concatenate([project_simplex(head), np.zeros_like(total)], axis=-1)
    return _fix_sum(np.where(fits, completed, projected))


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


# --------------------------------------------------------------------------- PSD repair


def _symmetric(arr: FloatArray) -> FloatArray:
    """The symmetric part ``(A + A^T) / 2``, without overflow."""
    return np.asarray(arr / 2.0 + arr.T / 2.0)


def _psd_part(sym: FloatArray) -> FloatArray:
    """Clip the eigenvalues of a symmetric matrix at 0 and reassemble it."""
    eigenvalues, vectors = np.linalg.eigh(sym)
    out = (vectors * np.maximum(eigenvalues, 0.0)) @ vectors.T
    return _symmetric(out)


def nearest_psd(a: ArrayLike) -> FloatArray:
    """The nearest positive semi-definite matrix in Frobenius norm (eigenvalue clipping).

    Symmetrise (``(A + A^T) / 2``), decompose with :func:`numpy.linalg.eigh`,
    set the negative eigenvalues to 0, reassemble and symmetrise again (Higham
    1988). The result's eigenvalues are ``>= 0`` up to rounding (about
    ``-1e-15 x`` the largest absolute entry). A PSD input comes back unchanged
    up to rounding. The diagonal can only grow: variances may rise slightly
    above their released values.

    Parameters
    ----------
    a : array_like of float, shape (m, m)

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)

    Raises
    ------
    ValueError
        If ``a`` is not square or holds NaN or infinity.

    Examples
    --------
    >>> nearest_psd([[2.0, 0.0], [0.0, -1.0]])
    array([[2., 0.],
           [0., 0.]])
    """
    arr = _square(a, "a")
    unit = _power_of_two_below(float(np.abs(arr).max(initial=0.0)))
    return np.asarray(_psd_part(_symmetric(arr / unit)) * unit)


def nearest_correlation(
    a: ArrayLike,
    *,
    tol: float = 1e-10,
    max_iter: int = 1000,
    weights: ArrayLike | None = None,
) -> FloatArray:
    """The nearest correlation matrix (PSD, unit diagonal): Higham (2002).

    Alternating projections with Dykstra's correction (Higham 2002, Algorithm
    3.3) between the PSD cone and the matrices with unit diagonal, both in the
    weighted Frobenius norm ``||W^{1/2} (A - X) W^{1/2}||_F`` with
    ``W = diag(weights)``. Starting from ``Y = A`` and ``dS = 0``, repeat
    ``R = Y - dS``, ``X = P_psd(R)``, ``dS = X - R``, ``Y = X`` with unit
    diagonal, until the relative changes of ``X`` and ``Y`` and the relative
    gap between them are at most ``tol``. The last PSD iterate ``X`` is then
    scaled to an exact unit diagonal (``D^{-1/2} X D^{-1/2}``, which keeps it
    PSD), so the result is a valid correlation matrix even if the iteration
    stops early.

    The convergence is linear. With off-diagonal entries inside ``[-1, 1]`` it
    takes some 20 to 200 iterations (``m`` up to 60); the count grows roughly in
    proportion to how far entries lie outside ``[-1, 1]`` (thousands for
    entries around 30), so bound each noisy covariance to ``+-sqrt(v_i v_j)``
    before converting it, as the covariance release does.

    Parameters
    ----------
    a : array_like of float, shape (m, m)
        A noisy correlation matrix; it is symmetrised first, its diagonal is
        ignored.
    tol : float, default 1e-10
        Relative convergence tolerance.
    max_iter : int, default 1000
        On reaching it a :class:`RuntimeWarning` is issued and the current
        iterate (a valid correlation matrix, not quite the nearest) returned.
    weights : array_like of float, shape (m,), optional
        Positive weights: the error in entry ``(i, j)`` counts
        ``weights[i] * weights[j]`` times, so a variable with a larger weight
        keeps its correlations closer to ``a``. Default: all equal.

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)
        Symmetric, PSD up to rounding, with diagonal exactly 1 and entries in
        ``[-1, 1]``.

    Raises
    ------
    ValueError
        If ``a`` is not square or not finite, or on invalid ``tol``,
        ``max_iter`` or ``weights``.

    Examples
    --------
    Higham (2002)'s example, section 4:

    >>> a = [[2, -1, 0, 0], [-1, 2, -1, 0], [0, -1, 2, -1], [0, 0, -1, 2]]
    >>> nearest_correlation(a).round(4)
    array([[ 1.    , -0.8084,  0.1916,  0.1068],
           [-0.8084,  1.    , -0.6562,  0.1916],
           [ 0.1916, -0.6562,  1.    , -0.8084],
           [ 0.1068,  0.1916, -0.8084,  1.    ]])
    """
    arr = _square(a, "a")
    if not (math.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be a positive number (e.g. 1e-10); got {tol}")
    max_iter = _count(max_iter, "max_iter", 1)
    m = arr.shape[0]
    if weights is None:
        root_w = np.ones(m)
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (m,) or not np.all(np.isfinite(w) & (w > 0)):
            raise ValueError(
                f"weights must be {m} positive finite numbers, one per variable; got {w!r}"
            )
        root_w = np.sqrt(w / w.max())
    outer_w = np.outer(root_w, root_w)

    # Work on A / unit with target diagonal 1 / unit: the same problem scaled by a
    # power of two (exact), so huge noisy entries cannot overflow a norm.
    unit = _power_of_two_below(max(1.0, float(np.abs(arr).max(initial=0.0))))
    target = 1.0 / unit
    y = _symmetric(arr / unit)
    correction = np.zeros_like(y)
    x_old = y_old = None
    x = y
    change = math.inf
    for _ in range(max_iter):
        r = y - correction
        x = _psd_part(r * outer_w) / outer_w
        correction = x - r
        y = x.copy()
        np.fill_diagonal(y, target)
        size = max(float(np.linalg.norm(y)), np.finfo(np.float64).tiny)
        change = float(np.linalg.norm(y - x)) / size
        if x_old is not None and y_old is not None:
            change = max(
                change,
                float(np.linalg.norm(x - x_old)) / size,
                float(np.linalg.norm(y - y_old)) / size,
            )
            if change <= tol:
                break
        x_old, y_old = x, y
    else:
        warnings.warn(
            f"nearest_correlation did not converge to tol={tol} in max_iter={max_iter} "
            f"iterations (relative change {change:.3g}); the result is a valid correlation "
            f"matrix but may not be the nearest. Raise max_iter or tol",
            RuntimeWarning,
            stacklevel=2,
        )
    return _unit_diagonal(x, floor=1e-8 * target)


def _unit_diagonal(x: FloatArray, *, floor: float) -> FloatArray:
    """``D^{-1/2} X D^{-1/2}`` with unit diagonal; variables with diagonal ``<= floor`` get 0."""
    d = np.diag(x)
    ok = d > floor
    s = np.where(ok, np.sqrt(np.where(ok, d, 1.0)), 1.0)
    with np.errstate(over="ignore"):  # a huge ratio is clipped to +-1 below
        out = x / s[:, None] / s[None, :]
    out[~ok, :] = 0.0
    out[:, ~ok] = 0.0
    out = np.clip(_symmetric(out), -1.0, 1.0)
    np.fill_diagonal(out, 1.0)
    return np.asarray(out)


def nearest_psd_covariance(
    cov: ArrayLike,
    method: str = "clip",
    *,
    tol: float = 1e-10,
    max_iter: int = 1000,
) -> FloatArray:
    """Repair a noisy covariance matrix to a positive semi-definite one.

    Parameters
    ----------
    cov : array_like of float, shape (m, m)
        Noisy covariance matrix (symmetrised first).
    method : {"clip", "higham"}, default "clip"
        ``"clip"``: :func:`nearest_psd`, the nearest PSD matrix in Frobenius
        norm; the variances may grow. ``"higham"``: keep the released variances
        exactly and repair only the covariances. The matrix is turned into a
        correlation matrix with its own diagonal (``C_ij / sqrt(v_i v_j)``, no
        clipping), :func:`nearest_correlation` finds the nearest correlation
        matrix ``R``, and the result is ``sqrt(v_i v_j) R_ij``. This is the
        nearest PSD matrix with the released diagonal in the norm
        ``||D^{-1/2} (C - X) D^{-1/2}||_F`` (errors in correlation units). A
        variable whose variance is 0 gets covariances 0 (the only PSD choice);
        a negative variance, impossible after bounding, is raised to 0 first.
    tol, max_iter : float, int
        Passed to :func:`nearest_correlation` (``"higham"`` only).

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)

    Raises
    ------
    ValueError
        If ``cov`` is not square or not finite, or ``method`` is unknown.

    Examples
    --------
    >>> noisy = [[1.0, 2.5], [2.5, 4.0]]
    >>> nearest_psd_covariance(noisy, "higham")
    array([[1., 2.],
           [2., 4.]])
    >>> nearest_psd_covariance([[1.0, 0.3], [0.3, 0.0]], "higham")
    array([[1., 0.],
           [0., 0.]])
    """
    arr = _square(cov, "cov")
    if method == "clip":
        return nearest_psd(arr)
    if method != "higham":
        raise ValueError(
            f"method={method!r} is not a PSD repair; use 'clip' (eigenvalue clipping) or "
            f"'higham' (nearest correlation matrix, keeps the variances)"
        )
    sym = _symmetric(arr)
    var = np.maximum(np.diag(sym), 0.0)
    keep = var > 0
    out = np.zeros_like(sym)
    if keep.any():
        s = np.sqrt(var[keep])
        block = np.ix_(keep, keep)
        corr = sym[block] / s[:, None] / s[None, :]
        near = nearest_correlation(corr, tol=tol, max_iter=max_iter)
        out[block] = near * np.outer(s, s)
    np.fill_diagonal(out, var)
    return out


def cov_to_corr(cov: ArrayLike) -> FloatArray:
    """Turn a covariance matrix into a correlation matrix.

    ``C_ij / sqrt(C_ii C_jj)``, clipped to ``[-1, 1]``, with a unit diagonal.
    A variable with variance ``<= 0`` (a constant, or a noisy variance bounded
    at 0) has no defined correlation: its correlations are set to 0 and its
    diagonal entry to 1. The input is symmetrised first. If ``cov`` is PSD
    (e.g. the output of :func:`nearest_psd_covariance`), so is the result.

    Parameters
    ----------
    cov : array_like of float, shape (m, m)

    Returns
    -------
    numpy.ndarray of float64, shape (m, m)

    Raises
    ------
    ValueError
        If ``cov`` is not square or holds NaN or infinity.

    Examples
    --------
    >>> cov_to_corr([[4.0, 2.0, 1.0], [2.0, 1.0, 3.0], [1.0, 3.0, 0.0]])
    array([[1., 1., 0.],
           [1., 1., 0.],
           [0., 0., 1.]])
    """
    arr = _square(cov, "cov")
    return _unit_diagonal(_symmetric(arr), floor=0.0)
