"""The selection's defaults (grid, margin, base weights) against OpenDP, computed exactly.

Usage::

    python benchmarks/quantile_defaults.py --check          # the engine against the library
    python benchmarks/quantile_defaults.py --draws 100      # the wide table
    python benchmarks/quantile_defaults.py --draws 20 --quick

Writes ``benchmarks/results/quantile_defaults.md`` (the table) and
``benchmarks/results/quantile_defaults.json`` (every cell's numbers).

Everything here is exact over the mechanism: a release's distribution over the
candidates is computed, not sampled, and its expected squared error against the
data's quantile (numpy's linear interpolation) is averaged over fresh data sets (the
only sampling noise is the data's, the same for every rule: the ratios are paired,
their 95 % intervals a bootstrap over the data sets).

Permute-and-flip is report-noisy-max with exponential noise (Ding et al. 2021), so
candidate ``i`` wins with probability ``a_i int_0^1 prod_{k != i} (1 - a_k y) dy``,
``a_k = exp(-rate * gap_k)``: one integral per distinct gap, by quadrature on nodes
dense near 0 (the probabilities sum to 1 within 1e-4, checked). OpenDP's
``make_private_quantile`` is the same mechanism at the same rate on its own score,
``|(d - m) #below - m #above|`` for ``alpha = m / d`` (values equal to a candidate on
neither side), checked against its output frequencies (:func:`check_opendp`).

What the issue-35 measurements found (``quantile_scoring.py --issue35``): on a grid
much finer than the rank noise, long runs of edges share one score and permute-and-flip
becomes the exponential mechanism (2**17 bins: 1.10x OpenDP at n = 1000, epsilon =
0.5, like the exponential mechanism's 1.10x; on the 1 000-cell grid, where each step
crosses a few ranks, permute-and-flip beats the exponential mechanism by 12 %). The
rule the library adopted (:data:`LIBRARY`, the row ``today``; the former rule is
the row ``old``) keeps a fine grid but gives it a public base penalty, so that the
1 000-cell grid decides unless the data are dense enough to pay for a finer edge, and
adds OpenDP's score on each edge's cell to the point-or-pile score.

The library's rule is re-implemented here (:func:`grid_gaps`, :func:`penalty`,
independently of the library's code): the half cells of a grid of ``bins`` cells
over the bounds, the smallest of the point, cell and pile scores, the base penalty
in whole units, the rate ``epsilon / (2 max(m, d - m))`` rounded down as
:func:`pandas_dp.noise.mechanisms.selection.selection_rate` does. :func:`check_library`
captures the gaps and the rate a real ``s.dp.median`` / ``s.dp.quantile`` hands to
permute-and-flip and asserts they are the ones computed here (so the probabilities
are the same), and compares a few thousand seeded releases with them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: The former default selection grid (one group) and pile margin (the ``old`` row).
OLD_BINS = 1 << 17
OLD_MARGIN = 2
#: OpenDP's candidates in the issue: 1 001 equally spaced points on the bounds.
OPENDP_CANDIDATES = 1001
#: quadrature nodes on [0, 1] for the permute-and-flip integral (dense near 0)
_Y = np.concatenate([[0.0], np.logspace(-15, 0, 2500)])


# ----------------------------------------------------------------------------- mechanism


def selection_rate(rate: float) -> float:
    """The rate permute-and-flip runs at: ``rate`` rounded down to 24 significant bits
    (the library's rule, re-done here so the engine needs no import of the library)."""
    _, e = math.frexp(rate)
    j = 24 - e
    s = math.floor(math.ldexp(rate, j))
    if s >= 1 << 24:
        s, j = s >> 1, j - 1
    return math.ldexp(float(s), -j)


def pf_probabilities(gaps: IntArray, rate: float) -> FloatArray:
    """Permute-and-flip's output distribution over candidates with integer ``gaps``."""
    g = np.asarray(gaps, dtype=np.int64)
    u = rate * (g - g.min()).astype(float)
    keep = u < 40.0  # exp(-40) times 10**6 candidates: below 1e-11
    a = np.exp(-u[keep])
    values, inverse, counts = np.unique(a, return_inverse=True, return_counts=True)
    # log(1 - a y), finite at a = y = 1 (a factor 1e-300 there, cancelled by its own
    # exclusion below; any other such factor makes the product 0 to the last digit)
    logs = np.log(np.clip(1.0 - np.outer(values, _Y), 1e-300, None))
    total_log = counts @ logs
    # trapezoid weights of the nodes: per[i] = a_i * int exp(total_log - logs[i]) dy
    w = np.zeros(_Y.size)
    dy = np.diff(_Y)
    w[:-1] += dy / 2.0
    w[1:] += dy / 2.0
    logs -= total_log  # in place: -(the others' log product), one row per value
    np.negative(logs, out=logs)
    np.exp(logs, out=logs)
    per = values * (logs @ w)
    out = np.zeros(g.size)
    out[np.flatnonzero(keep)] = per[inverse]
    total = float(out.sum())
    assert abs(total - 1.0) < 1e-4, total
    return out / total


def rate_fraction(rate: float) -> tuple[int, int]:
    """``rate`` (a :func:`selection_rate`, 24 significant bits) as ``(s, j)``,
    ``rate = s / 2**j`` exactly."""
    m, e = math.frexp(rate)
    s, j = int(math.ldexp(m, 53)), 53 - e
    while s % 2 == 0 and j > 0:
        s, j = s // 2, j - 1
    return s, j


def em_probabilities(gaps: IntArray, rate: float) -> FloatArray:
    """The exponential mechanism's distribution at the same rate (for comparison)."""
    w = np.exp(-rate * (np.asarray(gaps) - np.min(gaps)).astype(float))
    return np.asarray(w / w.sum(), dtype=np.float64)


# ----------------------------------------------------------------------------- scores


def alpha_ratio(alpha: float) -> tuple[int, int]:
    """``alpha`` as ``(m, d)`` (the library's and OpenDP's rational level)."""
    f = Fraction(alpha).limit_denominator(1 << 16)
    return f.numerator, f.denominator


def fine_counts(x: FloatArray, lower: float, upper: float, cells: int) -> IntArray:
    """Counts of the clamped values in ``cells`` equal cells (the library's binning)."""
    idx = np.floor((np.clip(x, lower, upper) - lower) * (cells / (upper - lower)))
    idx = np.clip(idx, 0, cells - 1).astype(np.intp)
    return np.bincount(idx, minlength=cells).astype(np.int64)


def edge_values(lower: float, upper: float, bins: int) -> FloatArray:
    """The ``bins + 1`` edges, the last one the upper bound (the library's values)."""
    j = np.arange(bins + 1)
    return np.where(j >= bins, upper, lower + j * ((upper - lower) / bins))


def grid_gaps(
    counts2: IntArray,
    bins: int,
    m: int,
    d: int,
    margin: float = OLD_MARGIN,
    neutral: bool = False,
    shrink: tuple[int, int] = (0, 1),
    with_point: bool = True,
    cap: int | None = None,
) -> IntArray:
    """Point-or-pile scores of the ``bins + 1`` edges from the counts of the
    ``2 bins`` half cells, minus the best (units of ``1 / d``).

    Edge ``j``'s cell is half cells ``2j - 1`` and ``2j``; with ``cum[k]`` the values in
    half cells below ``k``: point ``|d cum[2j] - m N|``; pile
    ``max(0, d cum[2j - 1] - m N, m N - d cum[2j + 1]) + margin d``; score the smaller.
    ``neutral`` adds a third, OpenDP's score with the cell's values on neither side,
    ``|(d - m) cum[2j - 1] - m (N - cum[2j + 1])|`` (a value in the cell moves it by 0,
    below it by ``d - m``, above it by ``m``: the same sensitivity ``max(m, d - m)``).

    ``shrink = (a, b)`` measures the pile's distance from its ranks shrunk by ``a / b``
    of the pile at each end, ``[A + t C, A + (1 - t) C]`` (``t = a / b <= 1/2``; ``t = 1/2``
    is OpenDP's cell score), every score then in units of ``1 / (b d)`` (a value in the
    cell moves a shrunk end by ``t d - m`` or ``m - (1 - t) d``, at most
    ``max(m, d - m)`` in size: the sensitivity is unchanged).
    """
    a, b = shrink
    cum = np.concatenate([[0], np.cumsum(counts2)])
    n = int(cum[-1])
    j = np.arange(bins + 1)
    point = np.abs(b * d * cum[2 * j] - b * m * n)
    if math.isinf(margin):
        s = point
    else:
        lo = cum[np.clip(2 * j - 1, 0, 2 * bins)]
        hi = cum[np.clip(2 * j + 1, 0, 2 * bins)]
        cut = a * (hi - lo)  # the trim at each end, in units of 1 / b rank
        if cap is not None:  # at most ``cap`` ranks
            cut = np.minimum(cut, b * cap)
        pile = np.maximum(
            np.maximum(d * (b * lo + cut) - b * m * n, b * m * n - d * (b * hi - cut)), 0
        )
        pile += int(margin) * b * d
        s = np.minimum(point, pile) if with_point else pile
        if neutral:  # OpenDP's score on the cell: its values on neither side
            np.minimum(s, b * np.abs((d - m) * lo - m * (n - hi)), out=s)
    return np.asarray(s - s.min(), dtype=np.int64)


def opendp_gaps(xs: FloatArray, cands: FloatArray, m: int, d: int) -> IntArray:
    """OpenDP's scores, minus the best: ``|(d - m) #below - m #above|`` (``xs`` sorted)."""
    below = np.searchsorted(xs, cands, side="left")
    above = xs.size - np.searchsorted(xs, cands, side="right")
    s = np.abs((d - m) * below - m * above)
    return np.asarray(s - s.min(), dtype=np.int64)


def finer_levels(bins: int, halvings: int) -> IntArray:
    """Per edge ``j`` of a ``bins``-cell grid, how many halvings finer than the grid of
    ``bins / 2**halvings`` cells it is: ``max(0, halvings - v2(j))``, ``v2(j)`` the
    trailing zero bits of ``j`` (the bounds, ``j = 0`` and ``bins``, are on every grid)."""
    assert bins % (1 << halvings) == 0, (bins, halvings)
    j = np.arange(bins + 1, dtype=np.int64)
    low = j & -j  # the lowest set bit (0 for j = 0)
    v2 = np.where(j > 0, np.log2(np.maximum(low, 1)).round().astype(np.int64), halvings)
    out: IntArray = np.maximum(halvings - v2, 0).astype(np.int64)
    return out


# ----------------------------------------------------------------------------- rules


@dataclass(frozen=True)
class Rule:
    """A selection rule: a grid or OpenDP's candidates, a score, a base penalty."""

    name: str
    kind: str = "grid"  # "grid" (the library's score) or "opendp"
    bins: int = OLD_BINS  # grid cells, or (opendp) candidates - 1
    margin: float = OLD_MARGIN
    #: public base penalty of an edge ``l >= 1`` halvings finer than the grid of
    #: ``bins / 2**halvings`` cells (:func:`finer_levels`): ``theta0 + theta (l - 1)``
    #: nats, as ``ceil(nats / rate)`` units of score
    theta: float = 0.0
    halvings: int = 7
    theta0: float | None = None  # None: theta (a penalty of theta nats per level)
    mechanism: str = "pf"  # "pf" or "em"
    offset: float = 0.0  # (opendp) candidates shifted by this fraction of a step
    neutral: bool = False  # also OpenDP's score on each edge's cell (grid_gaps)
    collapse: bool = False  # diagnostic: one candidate per run of equal scores
    shrink: tuple[int, int] = (0, 1)  # the pile's ranks shrunk by a / b at each end
    rounding: str = "up"  # the base penalty in whole units: "up" or "nearest"
    cap: int | None = None  # the trim at most this many ranks at each end
    with_point: bool = True  # the point score in the minimum (never below the unshrunk pile's)


def penalty(rule: Rule, rate: float) -> IntArray:
    """The public base penalty of each edge (units of score at ``rate`` per unit), 0
    without ``theta``; rounded up, or to the nearest unit (``rule.rounding``)."""
    if rule.theta <= 0 and not rule.theta0:
        return np.zeros(rule.bins + 1, dtype=np.int64)
    first = rule.theta if rule.theta0 is None else rule.theta0
    nats = np.array([0.0] + [first + rule.theta * (lv - 1) for lv in range(1, rule.halvings + 1)])
    # whole units, rounded up exactly: rate = s / 2**j (selection_rate), nats whole
    s, j = rate_fraction(rate)
    if rule.rounding == "nearest":  # floor(nats / rate + 1/2), exactly
        units = np.array([((2 * round(float(v)) << j) + s) // (2 * s) for v in nats])
    else:
        units = np.array([-((-round(float(v)) << j) // s) if v else 0 for v in nats])
    units = units.astype(np.int64)
    assert np.allclose(nats, np.round(nats)), "whole nats only"
    return units[finer_levels(rule.bins, rule.halvings)]


def rule_gaps(
    rule: Rule, xs: FloatArray, lower: float, upper: float, alpha: float, eps: float
) -> tuple[FloatArray, IntArray, float]:
    """(candidate values, their gaps with the best at 0, the rate) under ``rule``."""
    m, d = alpha_ratio(alpha)
    rate = selection_rate(eps / 2.0 / max(m, d - m))
    if rule.kind == "opendp":
        step = (upper - lower) / rule.bins
        cands = np.linspace(lower, upper, rule.bins + 1) + rule.offset * step
        cands = cands[cands <= upper]
        gaps = opendp_gaps(xs, cands, m, d)
    else:
        cands = edge_values(lower, upper, rule.bins)
        counts2 = fine_counts(xs, lower, upper, 2 * rule.bins)
        gaps = grid_gaps(
            counts2,
            rule.bins,
            m,
            d,
            rule.margin,
            rule.neutral,
            rule.shrink,
            rule.with_point,
            rule.cap,
        )
        rate = selection_rate(rate / rule.shrink[1])  # units of 1 / (b d): exact for b = 2**k
        if rule.theta > 0 or rule.theta0:
            gaps = gaps + penalty(rule, rate)
            gaps -= gaps.min()
    return cands, gaps, rate


def distribution(
    rule: Rule, xs: FloatArray, lower: float, upper: float, alpha: float, eps: float
) -> tuple[FloatArray, FloatArray]:
    """(candidate values, their probabilities) of one release under ``rule``."""
    cands, gaps, rate = rule_gaps(rule, xs, lower, upper, alpha, eps)
    if rule.collapse:  # not private: the runs of equal score as single candidates
        change = np.flatnonzero(np.diff(gaps) != 0) + 1
        starts = np.concatenate([[0], change])
        stops = np.concatenate([change, [gaps.size]])
        mid = (starts + stops - 1) // 2
        cands, gaps = cands[mid], gaps[starts]
    probs = (pf_probabilities if rule.mechanism == "pf" else em_probabilities)(gaps, rate)
    return cands, probs


def expected_sq_errors(
    rules: list[Rule],
    x: FloatArray,
    lower: float,
    upper: float,
    alpha: float,
    eps: float,
) -> list[float]:
    """Per rule, the exact expected squared error of one release on ``x``."""
    xs = np.sort(np.clip(x, lower, upper))
    truth = float(np.quantile(xs, alpha))
    out = []
    for r in rules:
        cands, probs = distribution(r, xs, lower, upper, alpha, eps)
        out.append(float(probs @ (cands - truth) ** 2))
    return out


# ----------------------------------------------------------------------------- data


#: Data kinds: name -> (draw(n, rng), tight bounds, loose bounds).
def _clipped(f: Callable[[np.random.Generator, int], FloatArray], lo: float, hi: float) -> Any:
    return lambda n, rng: np.clip(f(rng, n), lo, hi)


DATA: dict[str, tuple[Any, tuple[float, float], tuple[float, float]]] = {
    "uniform": (_clipped(lambda r, n: r.uniform(0, 100, n), 0, 100), (0, 100), (-1000, 1000)),
    "normal": (_clipped(lambda r, n: r.normal(50, 12, n), 0, 100), (0, 100), (-1000, 1000)),
    "lognormal": (_clipped(lambda r, n: r.lognormal(2.5, 0.7, n), 0, 100), (0, 100), (0, 1000)),
    "ages": (lambda n, r: r.integers(18, 91, n).astype(float), (0, 100), (0, 1000)),
    "likert": (
        lambda n, r: r.choice([1.0, 2.0, 3.0, 4.0, 5.0], n, p=[0.1, 0.2, 0.4, 0.2, 0.1]),
        (1, 5),
        (0, 100),
    ),
}


def bootstrap_ratio(
    num: FloatArray, den: FloatArray, rng: np.random.Generator, reps: int = 2000
) -> tuple[float, float, float]:
    """RMSE ratio ``sqrt(mean num / mean den)`` and its 95 % bootstrap interval over
    the data sets (paired)."""
    num, den = np.asarray(num), np.asarray(den)
    if den.mean() <= 0:
        return (math.nan, math.nan, math.nan)
    r = math.sqrt(num.mean() / den.mean())
    idx = rng.integers(0, num.size, (reps, num.size))
    boots = np.sqrt(num[idx].mean(axis=1) / np.maximum(den[idx].mean(axis=1), 1e-300))
    lo, hi = np.quantile(boots, [0.025, 0.975])
    return r, float(lo), float(hi)


# ----------------------------------------------------------------------------- checks


def check_library(releases: int = 2000) -> list[str]:
    """The engine against the library: the gaps and rate a real release hands to
    permute-and-flip equal :func:`distribution`'s (so the output distribution is the
    same), and ``releases`` seeded releases agree with the exact expectation."""
    import pandas as pd

    import pandas_dp  # noqa: F401  (the accessor)
    from pandas_dp.stats.quantiles import search

    seen: list[tuple[IntArray, float]] = []
    real = getattr(search, "permute_and_flip")  # noqa: B009  (patched below)

    def spy(gaps: Any, rate: Any, src: Any) -> int:
        seen.append((np.asarray(gaps).copy(), float(rate)))
        return int(real(gaps, rate, src))

    lines = []
    rng = np.random.default_rng(35)
    cases = [
        ("normal", 1000, 0.5, 0.5, (0.0, 100.0)),
        ("lognormal", 1000, 0.5, 0.5, (0.0, 100.0)),
        ("ages", 300, 1.0, 0.25, (0.0, 100.0)),
        ("likert", 500, 0.1, 0.9, (1.0, 5.0)),
        ("uniform", 10_000, 2.0, 0.9, (-1000.0, 1000.0)),
    ]
    setattr(search, "permute_and_flip", spy)  # noqa: B010
    try:
        for kind, n, eps, alpha, (lo, hi) in cases:
            x = DATA[kind][0](n, rng)
            s = pd.Series(x)
            seen.clear()
            s.dp.quantile(alpha, epsilon=eps, bounds=(lo, hi), interval=False, random_state=1)
            gaps, rate = seen[0]
            _, mine, my_rate = rule_gaps(LIBRARY, np.sort(x), lo, hi, alpha, eps)
            assert np.array_equal(gaps, mine), (kind, np.flatnonzero(gaps != mine)[:5])
            assert rate == my_rate, (rate, my_rate)
            lines.append(
                f"{kind}, n = {n}, ε = {eps}, q = {alpha}, bounds ({lo:g}, {hi:g}): the "
                f"library's {gaps.size:,} gaps and its rate {rate!r} are the engine's (equal)."
            )
    finally:
        setattr(search, "permute_and_flip", real)  # noqa: B010
    # seeded releases against the exact expectation (one data set)
    x = DATA["normal"][0](1000, rng)
    s = pd.Series(x)
    truth = float(np.quantile(x, 0.5))
    got = np.array(
        [
            float(s.dp.median(epsilon=0.5, bounds=(0, 100), interval=False, random_state=i))
            for i in range(releases)
        ]
    )
    want = expected_sq_errors([LIBRARY], x, 0.0, 100.0, 0.5, 0.5)[0]
    e2 = (got - truth) ** 2
    se = float(e2.std(ddof=1) / math.sqrt(releases))
    lines.append(
        f"{releases} seeded medians (normal, n = 1000, ε = 0.5): mean squared error "
        f"{e2.mean():.5f} ± {se:.5f} (one standard error); exact {want:.5f} "
        f"({(e2.mean() - want) / se:+.1f} standard errors)."
    )
    return lines


def check_opendp(reps: int = 20_000) -> list[str]:
    """OpenDP's ``make_private_quantile`` frequencies against :func:`pf_probabilities`
    on :func:`opendp_gaps` (median and a quartile, a few candidates)."""
    import opendp.prelude as dp
    import quantiles as qb

    dp.enable_features("contrib")
    data = np.array([float(i) for i in range(100)])
    cands = [10.5, 20.5, 22.5, 24.5, 26.5, 30.5, 49.5, 52.5]
    lines = []
    for alpha, eps in ((0.5, 1.0), (0.25, 1.0)):
        meas = qb.opendp_quantile(dp, alpha, eps, cands)
        picks = np.array([meas(list(data)) for _ in range(reps)])
        seen = np.array([np.mean(picks == c) for c in cands])
        m, d = alpha_ratio(alpha)
        want = pf_probabilities(
            opendp_gaps(data, np.array(cands), m, d), selection_rate(eps / 2 / max(m, d - m))
        )
        worst = float(np.abs(seen - want).max())
        lines.append(
            f"OpenDP q = {alpha}, ε = {eps}, data 0..99, candidates {cands}: frequencies over "
            f"{reps} releases {np.round(seen, 4).tolist()}, engine {np.round(want, 4).tolist()} "
            f"(largest difference {worst:.4f}; 3 SE at most {3 * math.sqrt(0.25 / reps):.4f})."
        )
    return lines


# ----------------------------------------------------------------------------- table

#: The library's rule from session 20 to the trim (issue 35): 128 000 = 1000 * 2**7
#: cells (OpenDP's 1 001 candidates, and every multiple of a thousandth of the range,
#: are edges); the edges of the 1 000-cell grid cost nothing, an edge ``l`` halvings
#: finer costs ``8 + (l - 1)`` nats; the score is the smallest of the point's, OpenDP's
#: on the edge's cell (``neutral``) and the pile's (margin 0: measured against margins
#: 1, 2 and 4, it is the best on piled data and level on continuous data once the base
#: penalty is there; at margin 0 the pile's is never above the other two).
UNTRIMMED = Rule(
    "untrimmed", bins=128_000, margin=0, neutral=True, theta=1.0, theta0=8.0, halvings=7
)
#: The library's rule (``pandas_dp.stats.quantiles.search``): the same grid and base
#: penalty; the score the pile's distance with the pile's ranks trimmed by 1/8 of the
#: pile but at most one rank at each end (``PILE_TRIM``, ``TRIM_CAP``), or OpenDP's on
#: the cell where smaller, in units of 1/8 of the former (chosen by ``--variants``:
#: ``results/quantile_variants.md``).
LIBRARY = replace(UNTRIMMED, name="today", shrink=(1, 8), with_point=False, cap=1)
PROPOSED = LIBRARY
#: The rule before issue 35: 2**17 bins, point-or-pile (margin 2), no penalty.
OLD = Rule("old")
#: The reference and the rules compared (see the module text).
RULES: dict[str, Rule] = {
    "OpenDP": Rule("OpenDP", kind="opendp", bins=OPENDP_CANDIDATES - 1),
    "old": OLD,
    "today": LIBRARY,
}
#: Candidate changes to the untrimmed rule (issue 35, ``--variants``): the pile's ranks
#: trimmed by ``t`` of the pile at each end (the point score dropped: with the trim it
#: would make an edge just below a pile look like a median; untrimmed it is never below
#: the pile's), and the base penalty rounded to the nearest unit instead of up.
VARIANTS: dict[str, Rule] = {
    "OpenDP": RULES["OpenDP"],
    "untrimmed": UNTRIMMED,
    "nearest": replace(UNTRIMMED, name="nearest", rounding="nearest"),
    "shrink 1/8": replace(UNTRIMMED, name="shrink 1/8", shrink=(1, 8), with_point=False),
    "shrink 1/4": replace(UNTRIMMED, name="shrink 1/4", shrink=(1, 4), with_point=False),
    "trim 1/8 cap 1": replace(
        UNTRIMMED, name="trim 1/8 cap 1", shrink=(1, 8), with_point=False, cap=1
    ),
}
#: What each rule's column is, for the report.
DESCRIPTIONS = {
    "old": "the library before issue 35: 2**17 bins, point-or-pile score (margin 2), "
    "permute-and-flip",
    "untrimmed": "the library's rule from session 20 (issue 35) to the trim: 128,000 bins, "
    "the smallest of the point score, OpenDP's score on the edge's cell and the pile's "
    "(margin 0), plus the base penalty",
    "today": "the library's rule: 128,000 bins, the distance of the rank from the ranks of "
    "the edge's cell trimmed by 1/8 of its values but at most one rank at each end, or "
    "OpenDP's score on the cell where smaller, plus the base penalty",
    "nearest": "`untrimmed` with the base penalty rounded to the nearest unit instead of up",
    "shrink 1/8": "`untrimmed` with the pile's ranks trimmed by 1/8 at each end and no point score",
    "shrink 1/4": "`untrimmed` with the pile's ranks trimmed by 1/4 at each end and no point score",
    "trim 1/8 cap 1": "`untrimmed` with the pile's ranks trimmed by 1/8 of the pile but at "
    "most one rank at each end, and no point score",
}
ALPHAS = (0.5, 0.25, 0.9)


def run_cell(
    kind: str,
    loose: bool,
    n: int,
    eps: float,
    draws: int,
    rules: dict[str, Rule],
    alphas: tuple[float, ...] = ALPHAS,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One (data, bounds, n, epsilon): per level, each rule's RMSE over ``draws`` data
    sets and its ratio to OpenDP's with a 95 % bootstrap interval."""
    draw, tight_b, loose_b = DATA[kind]
    lo, hi = loose_b if loose else tight_b
    rng = np.random.default_rng([seed, n, int(eps * 1000), int(loose), len(kind)])
    errs = np.zeros((len(alphas), draws, len(rules)))
    for t in range(draws):
        x = draw(n, rng)
        for a, alpha in enumerate(alphas):
            errs[a, t] = expected_sq_errors(list(rules.values()), x, lo, hi, alpha, eps)
    out = []
    names = list(rules)
    ref = names.index("OpenDP")
    for a, alpha in enumerate(alphas):
        cell: dict[str, Any] = {
            "data": kind,
            "bounds": f"({lo:g}, {hi:g})",
            "loose": loose,
            "n": n,
            "epsilon": eps,
            "q": alpha,
            "draws": draws,
            "rmse": {k: math.sqrt(float(errs[a, :, i].mean())) for i, k in enumerate(names)},
            "ratio": {},
        }
        for i, k in enumerate(names):
            if i != ref:
                cell["ratio"][k] = bootstrap_ratio(errs[a, :, i], errs[a, :, ref], rng)
        out.append(cell)
    return out


#: The table's cells: (data, loose bounds, n, epsilon); every one at each of ALPHAS.
def table_cells(quick: bool) -> list[tuple[str, bool, int, float]]:
    """A representative subset of the issue's table (the time allowed no more): every
    kind on tight bounds at n = 10**2, 10**3, 10**5 and epsilon 0.1, 1, 10; normal and
    ages also at n = 10**4 and 10**6; every kind on loose bounds at n = 10**3 and
    10**5, epsilon 1, and normal and Likert at n = 10**3, epsilon 0.1 and 10
    (``quick``: n = 10**3 only)."""
    eps3 = (0.1, 1.0, 10.0)
    out: list[tuple[str, bool, int, float]] = []
    for kind in DATA:
        sizes: tuple[int, ...] = (1_000,) if quick else (100, 1_000, 100_000)
        if kind in ("normal", "ages") and not quick:
            sizes = (100, 1_000, 10_000, 100_000, 1_000_000)
        out += [(kind, False, n, e) for n, e in itertools.product(sizes, eps3)]
    for kind in DATA:
        out += [(kind, True, n, 1.0) for n in ((1_000,) if quick else (1_000, 100_000))]
    for kind in ("normal", "likert"):
        out += [(kind, True, 1_000, e) for e in (0.1, 10.0)]
    return out


def draws_for(n: int, draws: int) -> int:
    """Fewer data sets for the largest n (each costs a sort of 10**6 values)."""
    return draws if n <= 10_000 else max(10, draws // 2)


def _work(args: tuple[tuple[str, bool, int, float], int]) -> list[dict[str, Any]]:
    (kind, loose, n, eps), draws = args
    return run_cell(kind, loose, n, eps, draws_for(n, draws), RULES)


#: Ratios below this count as this in the geometric mean (a cell where pandas-dp is
#: exact and OpenDP is not would otherwise decide the mean alone).
FLOOR = 0.01


def geometric_mean(cells: list[dict[str, Any]], rule: str, kinds: tuple[str, ...] = ()) -> float:
    """Geometric mean over the cells (of ``kinds``, or all) of ``rule``'s RMSE ratio to
    OpenDP's, each clipped below at :data:`FLOOR` (both 0 to rounding: 1)."""
    logs = []
    for c in cells:
        if kinds and c["data"] not in kinds:
            continue
        ours, ref = c["rmse"][rule], c["rmse"]["OpenDP"]
        if ours <= 1e-9 and ref <= 1e-9:
            logs.append(0.0)
        elif ref > 1e-9:
            logs.append(math.log(max(ours / ref, FLOOR)))
        else:
            logs.append(math.log(1e3))  # OpenDP exact, pandas-dp not: counted as 1000x
    return math.exp(float(np.mean(logs))) if logs else math.nan


def verdict(c: dict[str, Any], rule: str) -> str:
    """``ok`` if ``rule`` is at most OpenDP's or its interval holds 1, else ``WORSE``."""
    ours, ref = c["rmse"][rule], c["rmse"]["OpenDP"]
    if ours <= ref * (1 + 1e-9) or (ours <= 1e-9 and ref <= 1e-9):
        return "ok"
    lo = c["ratio"][rule][1]
    return "ok" if lo <= 1.0 else "WORSE"


def report(cells: list[dict[str, Any]], draws: int, seconds: float, header: list[str]) -> str:
    """The markdown table."""
    import run as base

    ours = [k for k in RULES if k != "OpenDP"]
    lines = [
        "# The selection's defaults against OpenDP: exact expected RMSE",
        "",
        f"`python benchmarks/quantile_defaults.py --draws {draws}` -- {seconds:.0f} s "
        f"(data sets per cell: {draws}, {max(10, draws // 2)} for n >= 10**5).",
        "",
        "| machine | |\n|:--|--:|",
        *(f"| {k} | {v} |" for k, v in base.machine_info().items()),
        "",
        *header,
        "",
        "Rules: " + "; ".join(f"`{k}` -- {DESCRIPTIONS[k]}" for k in ours) + "; the base penalty "
        f"{LIBRARY.theta0:g} nats for an edge one halving finer than the 1 000-cell grid, "
        f"{LIBRARY.theta:g} more per further halving, in whole units of score; OpenDP -- "
        "1 001 candidates on the bounds. RMSE over the data sets of the exact expectation; "
        "ratio = RMSE / OpenDP's, 95 % bootstrap interval over the data sets.",
        "",
        "| data | bounds | n | ε | q | OpenDP RMSE | "
        + " | ".join(f"{k} / OpenDP [95 %] | " for k in ours)
        + "",
        "|---|---|---:|---:|---:|---:|" + "---:|---|" * len(ours),
    ]
    for c in cells:
        row = (
            f"| {c['data']} | {c['bounds']} | {c['n']:,} | {c['epsilon']:g} | {c['q']:g} | "
            f"{c['rmse']['OpenDP']:.3g} |"
        )
        for k in ours:
            r, lo, hi = c["ratio"][k]
            txt = (
                "0 / 0"
                if c["rmse"][k] <= 1e-9 and c["rmse"]["OpenDP"] <= 1e-9
                else (
                    f"{r:.3g} [{lo:.3g}, {hi:.3g}]"
                    if math.isfinite(r)
                    else f"{c['rmse'][k]:.3g} / 0"
                )
            )
            row += f" {txt} | {verdict(c, k)} |"
        lines.append(row)
    lines.append("")
    cont = ("uniform", "normal", "lognormal")
    for k in ours:
        bad = [c for c in cells if verdict(c, k) != "ok"]
        real = [c for c in bad if c["ratio"][k][0] > 1.001 or not math.isfinite(c["ratio"][k][0])]
        lines.append(
            f"`{k}`: geometric mean of the ratio over the {len(cells)} cells "
            f"{geometric_mean(cells, k):.3f} (ratios clipped below at {FLOOR}; a cell where "
            f"OpenDP is exact and `{k}` is not counts 1000x), over the continuous data "
            f"alone {geometric_mean(cells, k, cont):.3f}; cells worse than OpenDP with an "
            f"interval above 1: {len(bad)}, of which {len(real)} by more than 0.1 %"
            + (
                " ("
                + "; ".join(
                    f"{c['data']} {c['bounds']} n={c['n']} ε={c['epsilon']:g} "
                    f"q={c['q']:g}: {c['ratio'][k][0]:.3f}"
                    for c in real[:12]
                )
                + ")"
                if real
                else ""
            )
            + "."
        )
    lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="n = 10**3 and 10**5 only")
    parser.add_argument("--check", action="store_true", help="the engine against the library")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--report", action="store_true", help="re-render the saved JSON")
    parser.add_argument("--variants", action="store_true", help="the VARIANTS rules")
    parser.add_argument("--rules", default="", help="with --variants: these rules only")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parent / "results"
    stem = "quantile_defaults"
    if args.variants:  # (the pool's workers are forked: they see the rebound global)
        global RULES
        RULES, stem = VARIANTS, "quantile_variants"
        if args.rules:  # a subset (merged into the saved table by hand)
            RULES = {k: v for k, v in VARIANTS.items() if k in args.rules.split(",")}
            stem = "quantile_variants_part"
    if args.report:
        saved = json.loads((here / f"{stem}.json").read_text())
        text = report(saved["cells"], saved["draws"], saved["seconds"], saved["header"])
        (here / f"{stem}.md").write_text(text)
        print(text)
        return 0
    if args.check:
        print("\n".join(check_library() + check_opendp()))
        return 0
    import os
    from multiprocessing import Pool

    start = time.perf_counter()
    header = [
        "Load average at the start: " + " ".join(f"{v:.2f}" for v in os.getloadavg()) + ".",
        "",
        *check_opendp(),
    ]
    todo = [(c, args.draws) for c in table_cells(args.quick)]
    cells: list[dict[str, Any]] = []
    with Pool(args.jobs) as pool:
        for part in pool.imap(_work, todo):
            cells += part
            c = part[0]
            print(c["data"], c["bounds"], c["n"], c["epsilon"], flush=True)
    header.insert(
        1, "Load average at the end: " + " ".join(f"{v:.2f}" for v in os.getloadavg()) + "."
    )
    seconds = time.perf_counter() - start
    text = report(cells, args.draws, seconds, header)
    (here / f"{stem}.md").write_text(text)
    saved = {"draws": args.draws, "seconds": seconds, "header": header, "cells": cells}
    (here / f"{stem}.json").write_text(json.dumps(saved, indent=1))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
