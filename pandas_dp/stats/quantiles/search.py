"""Quantiles by private selection on a fine public grid (REFERENCE.md §12).

The candidates are the ``bins + 1`` edges ``e_0 < ... < e_bins`` of an
equal-width grid over the declared bounds; the data enter only through their
counts in the halves of the cells centred on the edges: ``L_j`` values just below
``e_j`` and ``R_j`` at or just above it, the bins of the grid twice as fine (one
pass, mergeable across chunks, partitions and groups; :func:`half_cells`).

One quantile ``alpha`` (a rational ``p / q``) is selected by exact
permute-and-flip (:mod:`pandas_dp.noise.mechanisms.selection`) on an integer score
(:func:`quantile_scores`): the distance of the rank ``alpha N`` from the ranks of the
values in the edge's cell, those ranks trimmed at each end by ``1 / PILE_TRIM`` of
the cell's values but at most :data:`TRIM_CAP` rank (or OpenDP's score of the cell,
where smaller: never at the median). On continuous data (few values per cell) it tells an edge from
its neighbours by the values between them, as the edge's own rank would; where
values pile up on one point (an integer or a constant column) the pile's edge is
the one that fits, instead of a stretch of edges in the gap around it with equal
scores, and the trim ranks a neighbouring pile up to a rank further off than its
nearest value.
No public ``n`` is needed. Adding or removing one row moves the distance by at most
``max(p, q - p)`` -- the ``quantile_score`` row of the sensitivity table, in units of
``1 / q`` (the scores are in units of ``1 / (PILE_TRIM q)``).

To the score each edge adds a public *base penalty* (:func:`base_penalty`): the
edges of the coarse grid of ``bins / 2**h`` cells (:func:`grid_halvings`; 1 000 cells
for the default 128 000) cost nothing, an edge ``l`` halvings finer costs
``PENALTY_FIRST + PENALTY_STEP (l - 1)`` nats, in whole units of score. On a grid
much finer than the rank noise, long runs of edges share one score and
permute-and-flip degenerates to the exponential mechanism (``benchmarks/
quantile_defaults.py``); the penalty lets the coarse grid decide unless the data
are dense enough to pay for a finer edge (rounded up, a finer edge costs at least
one unit of score however large epsilon is: ``1 / (8 q)`` of a rank, so a finer edge
holding the data still wins over coarse edges half a rank off). It depends on the
bounds' grid, ``q`` and the selection's rate alone (public), so the score's
sensitivity is unchanged: with ``L`` the histogram's L1 sensitivity (rows a unit may
add or remove, over all cells) the selection's rate is
``epsilon / (2 L PILE_TRIM max(p, q - p))`` per unit of score.

Several quantiles share the budget by recursion (Kaplan, Schnapp & Stemmer
2022): the middle quantile is selected first; the quantiles below it are then
selected among the edges up to it, on the rows below it, and those above
likewise. The values at the selected edge (a pile, on integer or zero-inflated
data) go to one side or the other by a coin each, whose bias is where the rank
``alpha N`` falls within the pile, read off three noisy counts (below, at and above
the edge; :data:`SPLIT_SHARE` of the level's epsilon) -- so a pile holding the
median near its top sends most of its values down, as the sides' quantiles need.
Given the noisy counts the coins are data-independent (each value's own: per half
cell a Binomial count goes down), and the rows of the two sides are disjoint, so
one level of the recursion costs one level's epsilon (parallel composition), and
``Q`` quantiles cost ``ceil(log2(Q + 1))`` levels instead of ``Q`` selections.
The results are non-decreasing in ``q`` by construction.

Intervals. A selected edge carries no information about the data's spread, so
an interval needs a measurement of its own: a noisy histogram over a *ladder*
of cells around the selected edges (cell boundaries at ``j ± 2**t``), whose
layout is public once the selections are. From its noisy counts, per ladder
boundary, the rank of the boundary relative to the quantile, ``(1 - q)`` times
the values below it minus ``q`` times those above, with a Chernoff bound on its
noise (:func:`ladder_interval`).

Examples
--------
>>> from pandas_dp.noise.mechanisms.source import RandomSource
>>> halves = np.array([[0, 0], [5, 5], [20, 20], [30, 30], [5, 5], [0, 0], [0, 0], [0, 0]])
>>> edges = select_quantiles(halves, (0.5,), 5.0, 1.0, RandomSource(0))
>>> edges.tolist()
[3]
>>> ladder_edges(np.array([3]), 8).tolist()
[0, 1, 2, 3, 4, 5, 7, 8]
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from pandas_dp.noise.mechanisms.samplers import discrete_laplace, representable_scale
from pandas_dp.noise.mechanisms.selection import Rate, permute_and_flip, selection_rate
from pandas_dp.noise.mechanisms.source import RandomSource
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.sensitivity import sensitivity
from pandas_dp.stats.quantiles.tree import rank_band, weighted_tail_width

__all__ = [
    "BASE_CELLS",
    "DENOMINATOR",
    "PENALTY_FIRST",
    "PENALTY_STEP",
    "PILE_TRIM",
    "TRIM_CAP",
    "base_penalty",
    "check_rates",
    "finer_levels",
    "grid_halvings",
    "half_cells",
    "ladder_edges",
    "ladder_interval",
    "levels",
    "quantile_scores",
    "score_rational",
    "select_quantiles",
    "selection_gaps",
]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Share of each inner level's budget that measures where the chosen edge's pile
#: holds the quantile's rank (three noisy counts per node: below, at, above), so
#: that the pile is split between the two sides in the right proportion. At 10 % the
#: counts' noise (scale ``l1 / (0.1 epsilon_level)``, about 21 rows for quartiles
#: at epsilon = 1) is far below a pile worth splitting; the level's selection keeps
#: 90 %.
SPLIT_SHARE = 0.1
#: The score measures the rank's distance from the ranks of an edge's cell trimmed by
#: ``1 / PILE_TRIM`` of the cell's values at each end (:func:`quantile_scores`), in
#: units of ``1 / (PILE_TRIM q)``. Chosen by the exact expected error of
#: ``benchmarks/quantile_defaults.py --variants`` (213 cells against OpenDP,
#: ``results/quantile_variants.md``; with :data:`TRIM_CAP` geometric mean of the RMSE
#: ratio 0.293 against 0.299 untrimmed): untrimmed, a small pile next to the median's
#: pile was one rank off (integer ages on (0, 1000), n = 1000, median: 1.41x OpenDP's
#: RMSE, now 0.86x). A power of two, so that the rate per unit is exact.
PILE_TRIM = 8
#: ... but at most this many ranks off each end (:func:`quantile_scores`): trimmed
#: by 1/8 of a large pile, the quantile's own pile lost to the empty edges beside it
#: wherever the rank fell within an eighth of the pile from its end (geometric mean
#: 0.357 without the cap).
TRIM_CAP = 1
#: The coarse grid the base penalty leaves free: a grid of ``bins`` cells is
#: ``bins / 2**h`` of these halved ``h`` times (:func:`grid_halvings`).
BASE_CELLS = 1000
#: Base penalty, in nats, of an edge one halving finer than the coarse grid, and the
#: nats each further halving adds (:func:`base_penalty`). Measured in
#: ``benchmarks/quantile_defaults.py`` (geometric mean of the RMSE ratio to OpenDP
#: over 213 cells 0.30, against 0.58 with no penalty, margin 2 and 2**17 bins).
PENALTY_FIRST = 8
PENALTY_STEP = 1
#: Quantile levels are scored as rationals with denominators up to this (``0.1`` is
#: ``1/10``; a level that is not such a rational moves by less than ``2**-32``).
DENOMINATOR = 1 << 16


def levels(count: int) -> int:
    """Recursion levels for ``count`` quantiles: ``ceil(log2(count + 1))``.

    Examples
    --------
    >>> [levels(q) for q in (1, 2, 3, 4, 7, 8)]
    [1, 2, 2, 3, 3, 4]
    """
    return max(1, math.ceil(math.log2(count + 1)))


def score_rational(alpha: float) -> tuple[int, int]:
    """``alpha`` as ``(p, q)``, ``p / q`` within ``2**-32`` of it, ``q <= DENOMINATOR``.

    Examples
    --------
    >>> score_rational(0.25), score_rational(0.1), score_rational(1.0)
    ((1, 4), (1, 10), (1, 1))
    """
    f = Fraction(alpha).limit_denominator(DENOMINATOR)
    return f.numerator, f.denominator


def _relative_levels(qs: Sequence[float]) -> list[float]:
    """The level each selection of the recursion scores, in the order they run.

    A function of ``qs`` alone (public): the ``alpha`` of a quantile within the rows
    between its parents' selected edges.
    """
    out: list[float] = []

    def walk(first: int, last: int, a_lo: float, a_hi: float) -> None:
        if first >= last:
            return
        mid = (first + last) // 2
        alpha = qs[mid]
        out.append(0.0 if a_hi <= a_lo else min(max((alpha - a_lo) / (a_hi - a_lo), 0.0), 1.0))
        walk(first, mid, a_lo, alpha)
        walk(mid + 1, last, alpha, a_hi)

    walk(0, len(qs), 0.0, 1.0)
    return out


def check_rates(qs: Sequence[float], epsilon: float, l1: float) -> None:
    """Raise, before any charge, if a selection's rate (or, for several quantiles,
    the split counts' noise scale) is not representable.

    Examples
    --------
    >>> check_rates((0.25, 0.5, 0.75), 1.0, 1.0)
    """
    level = epsilon / levels(len(qs))
    # an inner node's selection runs at (1 - SPLIT_SHARE) of the level: the smaller rate
    rate = level * (1.0 - SPLIT_SHARE if len(qs) > 1 else 1.0) / (2.0 * l1)
    for rel in _relative_levels(qs):
        p, q = score_rational(rel)
        delta = sensitivity("quantile_score", "add_remove", p / q) * q * PILE_TRIM
        selection_rate(rate / delta)
    if len(qs) > 1:
        representable_scale(l1 / (level * SPLIT_SHARE))


def quantile_scores(
    halves: IntArray, p: int, q: int, trim: int = PILE_TRIM, cap: int = TRIM_CAP
) -> IntArray:
    """The selection's scores before the base penalty, lower is better, in units of
    ``1 / (trim q)``.

    ``halves`` holds, per candidate ``j``, the values in the lower and the upper
    half of its cell: ``L_j`` just below ``e_j``, ``R_j`` at or just above it (shape
    ``(candidates, 2)``). With ``A_j`` the values in the cells below, ``C_j = L_j + R_j``
    and ``N`` all of them, the cell's values occupy the ranks ``[A_j, A_j + C_j]``. The
    score is the distance of the rank ``alpha N`` from those ranks *trimmed* at each
    end by ``D_j = min(C_j / trim, cap)`` ranks (:data:`PILE_TRIM`, :data:`TRIM_CAP`);
    with ``d_j = trim D_j = min(C_j, trim cap)``,

    ``max(0, q (trim A_j + d_j) - trim p N, trim p N - q (trim (A_j + C_j) - d_j))``,

    or, where smaller, OpenDP's score of the cell's values, the rank ``alpha N`` against
    the point ``alpha`` of the way through them, ``trim |q A_j + p C_j - p N|`` (the
    values on neither side: ``|(q - p) A_j - p B_j|``, ``B_j`` the values above the
    cell; at the median never below the trimmed distance).

    On continuous data (a value or none per cell) this is the distance from the
    edge's own rank to within an eighth of a rank. Where values pile up on one point
    (an integer or a constant column) the pile's edge scores 0 wherever the rank falls
    in the pile, but for up to a rank at each end, and a neighbouring pile is ranked
    up to one rank further off than its nearest value: untrimmed, a small pile next to
    the median's pile was one rank off, and integer ages on (0, 1000) had 1.41x
    OpenDP's error; trimmed by ``C / 8`` without the cap, a large pile holding the
    quantile a few hundred ranks from its end lost to the empty edges beside it.
    Untrimmed, the score was never above the edge's point score
    ``|q (A_j + L_j) - p N|``, which it replaced.

    Each term moves by at most ``trim max(p, q - p)`` when one row is added or removed:
    a row below the cell moves the first by ``trim (q - p)`` and the second by
    ``-trim (q - p)``, one above by ``-trim p`` and ``trim p``, one in the cell (``d_j``
    grows by 0 or 1) by ``-trim p`` or ``q - trim p``, and by ``trim (p - q)`` or
    ``trim p - (trim - 1) q`` (each at most ``trim max(p, q - p)`` in size for
    ``trim >= 2``); so does their maximum with 0. OpenDP's moves by ``trim (q - p)``,
    ``0`` or ``trim p``; so does the smaller of the two. The sensitivity in units of
    ``1 / q`` is the table's ``max(alpha, 1 - alpha)``, unchanged.

    Examples
    --------
    A pile of 60 values at the middle edge holds the median: it scores 0 (units of
    1/16 rank); a pile of 60 values split evenly about the middle edge as well; the
    piles of 20 either side are 30 ranks off, plus the trim's one rank:

    >>> quantile_scores(np.array([[0, 20], [0, 60], [0, 20]]), 1, 2).tolist()
    [496, 0, 496]
    >>> quantile_scores(np.array([[0, 20], [30, 30], [0, 20]]), 1, 2).tolist()
    [496, 0, 496]
    """
    if trim < 2 or cap < 0:
        raise ValueError(
            f"trim must be an integer of at least 2 (1 / trim of the pile off each end) "
            f"and cap at least 0 ranks; got trim={trim}, cap={cap}"
        )
    h = np.asarray(halves, dtype=np.int64).reshape(-1, 2)
    # (in place, over few arrays: a fresh megabyte-sized temporary costs more in
    # page faults than the arithmetic on it)
    ranks = np.zeros(h.shape[0] + 1, dtype=np.int64)  # trim q (values below edge j's cell)
    np.add(h[:, 0], h[:, 1], out=ranks[1:])  # (first the cells' own counts C)
    near = np.minimum(ranks[1:], trim * cap)  # d = min(C, trim cap), as q d
    near *= q
    cell = None
    if 2 * p != q:  # OpenDP's, trim |q A + p C - p N| (at the median never smaller)
        cell = np.multiply(ranks[1:], trim * p)
    np.cumsum(ranks[1:], out=ranks[1:])
    target = trim * p * int(ranks[-1])  # trim p N
    ranks *= trim * q
    # max(lo, hi) = q d + max(trim q A - trim p N, trim p N - trim q (A + C))
    out: IntArray = np.subtract(ranks[:-1], target)
    if cell is not None:
        cell += ranks[:-1]
        cell -= target
        np.abs(cell, out=cell)
    far = np.subtract(target, ranks[1:], out=ranks[1:])  # (``ranks`` is not read again)
    np.maximum(out, far, out=out)
    out += near
    np.maximum(out, 0, out=out)
    if cell is not None:
        np.minimum(out, cell, out=out)
    return out


def grid_halvings(bins: int) -> int:
    """How many times a grid of ``bins`` cells halves the coarse grid of the base
    penalty: the largest ``h`` with ``bins / 2**h`` a whole number of at least
    :data:`BASE_CELLS` cells (``0``: no base penalty). A function of ``bins`` alone.

    Examples
    --------
    >>> grid_halvings(128_000), grid_halvings(2**17), grid_halvings(1000), grid_halvings(1024)
    (7, 7, 0, 0)
    """
    h = 0
    while bins % (2 << h) == 0 and bins >> (h + 1) >= BASE_CELLS:
        h += 1
    return h


def finer_levels(bins: int) -> NDArray[np.int8]:
    """Per edge ``0 .. bins``, how many halvings finer than the coarse grid of
    ``bins / 2**h`` cells (:func:`grid_halvings`) it is: ``max(0, h - v)``, ``v`` the
    trailing zero bits of its index (the bounds are on every grid). Public; read-only
    (kept for the grids of the last few ``(bins, BASE_CELLS)``).

    Examples
    --------
    >>> finer_levels(4000).tolist()[:9]
    [0, 2, 1, 2, 0, 2, 1, 2, 0]
    """
    return _finer_levels(bins, BASE_CELLS)


@functools.lru_cache(maxsize=8)
def _finer_levels(bins: int, base: int) -> NDArray[np.int8]:
    """:func:`finer_levels` (``base`` is :data:`BASE_CELLS`, a key of the cache)."""
    h = grid_halvings(bins)
    out = np.zeros(bins + 1, dtype=np.int8)
    step = 1 << h
    for level in range(1, h + 1):  # the edges odd multiples of 2**(h - level)
        out[step >> level :: step >> (level - 1)] = level
    out.flags.writeable = False
    return out


def base_penalty(levels: NDArray[np.int8], rate: Rate) -> IntArray:
    """The public base penalty of each edge, in units of score, at ``rate`` per unit:
    ``PENALTY_FIRST + PENALTY_STEP (l - 1)`` nats at level ``l >= 1``
    (:func:`finer_levels`), rounded up to whole units (``0`` at level 0).

    A function of the grid and of the selection's rate (``epsilon``, ``q`` and the
    histogram's sensitivity): never of the data.

    Examples
    --------
    >>> base_penalty(np.array([0, 1, 2], dtype=np.int8), selection_rate(0.25)).tolist()
    [0, 32, 36]
    """
    top = int(levels.max(initial=0))
    units = np.zeros(top + 1, dtype=np.int64)
    for level in range(1, top + 1):
        nats = PENALTY_FIRST + PENALTY_STEP * (level - 1)
        units[level] = -((-nats << rate.j) // rate.s)  # ceil(nats / (s / 2**j)), exactly
    out: IntArray = units[levels]
    return out


def selection_gaps(
    halves: IntArray, levels: NDArray[np.int8], alpha: float, rate: float
) -> tuple[IntArray, Rate]:
    """What one selection hands to permute-and-flip: per candidate its gap (the
    score of :func:`quantile_scores` plus the base penalty of its ``levels``,
    :func:`base_penalty`, minus the best), and the rational rate per unit of gap.

    ``rate`` is ``epsilon / (2 L)`` (``L`` the histogram's L1 sensitivity); it is
    divided by the score's sensitivity ``PILE_TRIM max(p, q - p)`` (units of
    ``1 / (PILE_TRIM q)``) and rounded down
    (:func:`~pandas_dp.noise.mechanisms.selection.selection_rate`).

    Examples
    --------
    The middle edge is the median (score 0, the outer ones 38 in units of 1/16: 2.375
    ranks), but it is one halving finer than the coarse grid: 8 nats at 0.5 / 8 per
    unit cost it 128:

    >>> halves = np.array([[0, 3], [2, 2], [3, 0]])
    >>> gaps, r = selection_gaps(halves, np.array([0, 1, 0], dtype=np.int8), 0.5, 0.5)
    >>> gaps.tolist(), float(r)
    ([0, 90, 0], 0.0625)
    """
    p, q = score_rational(alpha)
    gaps = quantile_scores(halves, p, q)
    # the table's per-row score sensitivity, max(alpha, 1 - alpha), in units of
    # 1 / (PILE_TRIM q)
    delta = sensitivity("quantile_score", "add_remove", p / q) * q * PILE_TRIM
    r = selection_rate(rate / delta)
    if levels.size and levels.max() > 0:
        gaps += base_penalty(levels, r)
    gaps -= gaps.min()
    return gaps, r


def _select_one(
    halves: IntArray, levels: NDArray[np.int8], alpha: float, rate: float, src: RandomSource
) -> int:
    """The ``alpha``-quantile of the values counted in ``halves``: one of its indices
    (``levels``: each candidate's :func:`finer_levels`, for its base penalty)."""
    gaps, r = selection_gaps(halves, levels, alpha, rate)
    return permute_and_flip(gaps, r, src)


def _fair_split(count: int, src: RandomSource) -> int:
    """How many of ``count`` fair coins land heads: a Binomial(``count``, 1/2) draw,
    exactly (the ones among ``count`` random bits)."""
    if count <= 0:
        return 0
    words = src.bits((count + 63) // 64)
    spare = 64 * words.size - count
    if spare:
        words = words.copy()
        words[-1] >>= np.uint64(spare)
    return int(np.bitwise_count(words).sum())


#: The pile's split probability is a multiple of ``2**-SPLIT_BITS``.
SPLIT_BITS = 16


def _biased_split(count: int, share: int, src: RandomSource) -> int:
    """How many of ``count`` values go to the lower side when each goes there with
    probability ``share / 2**SPLIT_BITS``, independently: a Binomial draw, exactly.

    A value's coin compares ``SPLIT_BITS`` random bits ``U`` with ``share``. Bit by
    bit, the values whose bits so far equal ``share``'s split by a fair coin: where
    ``share``'s bit is 1 the zeros are decided lower (``U < share``) and the ones go
    on; where it is 0 the ones are decided upper and the zeros go on; those equal to
    the end are upper. About two random bits per value.
    """
    if share >= 1 << SPLIT_BITS:
        return count
    lower, active = 0, count
    for i in range(SPLIT_BITS - 1, -1, -1):
        if active == 0:
            break
        zeros = active - _fair_split(active, src)
        if (share >> i) & 1:
            lower += zeros
            active -= zeros
        else:
            active = zeros
    return lower


def _pile_share(cells: IntArray, j: int, alpha: float, scale: float, src: RandomSource) -> int:
    """The lower side's share of the values at edge ``j``, from noisy counts.

    The counts below, at and above ``j`` get discrete Laplace noise of ``scale``
    (a histogram over three buckets: the selection's ``l1``); the rank ``alpha N``
    falls at ``(alpha N - A) / C`` of the way through the pile, which is the share
    (clamped to ``[0, 1]``; one half when the noisy pile is empty), as a multiple of
    ``2**-SPLIT_BITS``. A function of the noisy counts only: the coins it sets are
    data-independent given them.
    """
    below, at = int(cells[:j].sum()), int(cells[j])
    exact = np.array([below, at, int(cells.sum()) - below - at], dtype=np.float64)
    a, c, b = (exact + discrete_laplace(np.full(3, scale), src)).tolist()
    share = 0.5 if c <= 0 else min(max((alpha * (a + c + b) - a) / c, 0.0), 1.0)
    return round(share * (1 << SPLIT_BITS))


def select_quantiles(
    halves: Sequence[Sequence[int]] | IntArray,
    qs: Sequence[float],
    epsilon: float,
    l1: float,
    src: RandomSource,
) -> IntArray:
    """The selected edge of each quantile, recursively (see the module text).

    Parameters
    ----------
    halves : array_like of int, shape (candidates, 2)
        Exact counts of one group per candidate edge: the values in the lower and
        the upper half of the cell centred on it (:func:`half_cells`; never released).
    qs : sequence of float
        Distinct quantile levels in ``[0, 1]``, increasing.
    epsilon : float
        The whole selection's budget: every level of the recursion spends
        ``epsilon / levels(len(qs))``.
    l1 : float
        The histogram's L1 sensitivity: rows one unit may add or remove, counted
        over all cells (``k`` under add/remove, ``2 k`` under substitute).
    src : RandomSource

    Returns
    -------
    numpy.ndarray of int64
        One candidate index (``0 .. len(halves) - 1``) per quantile, non-decreasing.
    """
    h = np.asarray(halves, dtype=np.int64).reshape(-1, 2)
    fine = finer_levels(h.shape[0] - 1)  # the base penalty's levels (public)
    level = epsilon / levels(len(qs))
    # per level: rate = epsilon_level / (2 l1), per unit of (score / sensitivity); a
    # node with quantiles below it keeps SPLIT_SHARE of its level for its split counts
    # (the nodes of a level hold disjoint rows: each spends at most epsilon_level)
    rate = level / (2.0 * l1)
    inner = level * (1.0 - SPLIT_SHARE) / (2.0 * l1)
    split_scale = l1 / (level * SPLIT_SHARE)
    out = np.zeros(len(qs), dtype=np.int64)
    rels = iter(_relative_levels(qs))  # the same walk, in the same order

    def recurse(first: int, last: int, lo: int, cells: IntArray) -> None:
        """Quantiles ``first .. last - 1`` among candidates ``lo ..``, whose half
        cells hold ``cells`` (the end cells may hold part of a selected edge's values)."""
        if first >= last:
            return
        mid = (first + last) // 2
        alpha = next(rels)
        leaf = last - first == 1
        part = fine[lo : lo + cells.shape[0]]
        j = _select_one(cells, part, alpha, rate if leaf else inner, src)
        out[mid] = lo + j
        if leaf:
            return
        share = _pile_share(cells[:, 0] + cells[:, 1], j, alpha, split_scale, src)
        # every value at edge j goes down by its own coin: per half, a Binomial
        down = np.array([_biased_split(int(c), share, src) for c in cells[j]], dtype=np.int64)
        below, above = cells[: j + 1].copy(), cells[j:].copy()
        below[-1], above[0] = down, cells[j] - down
        recurse(first, mid, lo, below)
        recurse(mid + 1, last, lo + j, above)

    recurse(0, len(qs), 0, h)
    return out


def half_cells(counts: IntArray, bins: int) -> IntArray:
    """Per candidate edge ``0 .. bins`` of a ``bins``-bin grid, the values in the
    lower and upper half of its cell, from the counts of the ``2 * bins`` bins of
    the grid twice as fine (shape ``(..., 2 * bins)`` to ``(..., bins + 1, 2)``).

    The first edge has no lower half and the last no upper half: the values
    clamped to the bounds are in the half inside them.

    Examples
    --------
    >>> half_cells(np.array([1, 2, 3, 4]), 2).tolist()
    [[0, 1], [2, 3], [4, 0]]
    """
    c = np.asarray(counts, dtype=np.int64)
    pad = np.zeros((*c.shape[:-1], 1), dtype=np.int64)
    both = np.concatenate([pad, c.reshape(*c.shape[:-1], 2 * bins), pad], axis=-1)
    return both.reshape(*c.shape[:-1], bins + 1, 2)


def ladder_edges(selected: IntArray, bins: int) -> IntArray:
    """The ladder's edges: ``0``, ``bins`` and ``j ± 2**t`` around every selected ``j``.

    Public once the selections are released; its bins partition the grid, so one
    row lands in one ladder bin (a histogram's sensitivity).
    """
    steps = 1 << np.arange(max(1, math.ceil(math.log2(bins))) + 1)
    parts = [np.array([0, bins])]
    for j in np.asarray(selected, dtype=np.int64).reshape(-1):
        parts.append(np.array([j]))
        parts.append(j - steps)
        parts.append(j + steps)
    edges = np.unique(np.clip(np.concatenate(parts), 0, bins))
    return edges.astype(np.int64)


def ladder_interval(
    values: FloatArray,
    noisy: FloatArray,
    noise: NoisePlan,
    qs: Sequence[float],
    alpha: float,
) -> tuple[FloatArray, FloatArray]:
    """Intervals for the ``q``-quantiles from the ladder's noisy bin counts.

    Per inner edge ``e`` of the ladder, ``D(e) = B(e) - q N`` -- ``B(e)`` the values
    below ``e``, ``N`` all of them -- is ``(1 - q) B(e) - q A(e)`` with ``A(e)`` the
    values above: its noise is ``1 - q`` times that of the bins left of ``e`` and
    ``-q`` times that of the bins right of it, bounded at ``alpha / 2`` by
    :func:`~pandas_dp.stats.quantiles.tree.weighted_tail_width`; the ends are read by
    :func:`~pandas_dp.stats.quantiles.tree.rank_band` (two one-sided events).

    Parameters
    ----------
    values : ndarray
        The ladder's ``T + 1`` edge values (the bounds at both ends).
    noisy : ndarray
        The ``T`` noisy bin counts, each with ``noise``'s additive noise (no clamp).
    noise : NoisePlan
        One bin's noise.
    qs : sequence of float
        The quantile levels.
    alpha : float
        Each interval holds with probability at least ``1 - alpha``.

    Returns
    -------
    tuple of ndarray
        Lower and upper ends, one per level.
    """
    bins = noisy.size
    below = np.cumsum(noisy)[:-1]  # the noisy count below inner edge i + 1
    total = float(np.sum(noisy))
    left = np.arange(1, bins)
    counts = np.vstack([left, bins - left])
    los, his = [], []
    for q in qs:
        w = weighted_tail_width(noise, (1.0 - q, q), counts, alpha / 2.0)
        lo, hi = rank_band(values, below - q * total, w, q)
        los.append(lo)
        his.append(hi)
    return np.array(los), np.array(his)


def ladder_counts(counts: IntArray, edges: IntArray) -> IntArray:
    """Exact counts of the ladder's bins from the grid's (never released as they are)."""
    below = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64))])
    return np.diff(below[edges]).astype(np.int64)
