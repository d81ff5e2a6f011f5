"""Noise calibration with a privacy unit: the worst shift vector one unit can make.

A unit keeps at most ``k`` rows, in at most ``g`` groups, at most ``c`` in each
(REFERENCE.md §9, §10). It may move several entries of a vector *partially*: three
group counts by ``(2, 2, 1)`` when ``k = 5, c = 2``, or ``k`` counts by one each
when its rows sit in ``k`` groups or categories. Every test here releases through
the public API, reads the calibrated noise scale from the metadata, and recomputes
the privacy loss exactly for every shift vector the contribution bounds allow,
independently of the library's formulas:

* the discrete Gaussian: the exact ``delta(epsilon)`` of ``N_Z(0, sigma^2)`` noise
  on each entry, from the convolved pmf of the privacy loss (CKS 2020, Theorem 7);
* the truncated discrete Laplace (``bounding="truncated"``): the pmf of each
  released entry, enumerated over the output grid for every true value, and the
  largest log-ratio between two true values ``d`` apart; independent entries add
  their losses, so a vector's worst loss is the sum of its entries' worst losses.

No Monte Carlo: every check is exact up to floating-point rounding (a relative
``1e-9`` is allowed for it).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest

RTOL = 1e-9


# ----------------------------------------------------------------------------- helpers


def shift_vectors(total: int, most: int, entries: int) -> Iterator[tuple[int, ...]]:
    """Every non-increasing vector of positive integer shifts: sum ``<= total``, each
    ``<= most``, at most ``entries`` of them (what one unit can do to the counts)."""

    def rec(left: int, cap: int, slots: int) -> Iterator[tuple[int, ...]]:
        yield ()
        if slots == 0:
            return
        for x in range(min(cap, left), 0, -1):
            for rest in rec(left - x, x, slots - 1):
                yield (x, *rest)

    for v in rec(total, most, entries):
        if v:
            yield v


def unit_frame(groups: int) -> pd.DataFrame:
    """One unit with a row in each of ``groups`` groups (the data play no part in the
    calibration: it is a function of public facts)."""
    return pd.DataFrame({"pid": [0] * groups, "g": list(range(groups))})


def discrete_gaussian_pmf(sigma: float) -> tuple[np.ndarray, int]:
    """``N_Z(0, sigma^2)`` on ``{-h..h}``, normalised by the exact sum (the tail
    beyond ``h = 40 sigma`` is below ``e^{-800}``)."""
    h = math.ceil(40.0 * sigma) + 10
    x = np.arange(-h, h + 1, dtype=np.float64)
    w = np.exp(-(x * x) / (2.0 * sigma * sigma))
    return w / w.sum(), h


def gaussian_delta(sigma: float, shifts: tuple[int, ...], epsilon: float) -> float:
    """Exact ``delta(epsilon)`` of independent ``N_Z(0, sigma^2)`` noises on entries
    moved by ``shifts``: with ``S = sum v_i x_i`` the loss is
    ``(sum v_i^2 - 2 S) / (2 sigma^2)``, and ``delta = E[(1 - e^{epsilon - L})_+]``."""
    p, h = discrete_gaussian_pmf(sigma)
    dist, low = np.ones(1), 0
    for v in shifts:
        spread = np.zeros(2 * h * v + 1)
        spread[::v] = p  # the pmf of v x on the integers
        dist, low = np.convolve(dist, spread), low - h * v
    s = np.arange(dist.size, dtype=np.float64) + low
    loss = (sum(v * v for v in shifts) - 2.0 * s) / (2.0 * sigma * sigma)
    hit = loss > epsilon
    return float(np.sum(dist[hit] * -np.expm1(epsilon - loss[hit])))


@cache
def truncated_entry_loss(t: float, lower: int, upper: float, d: int) -> float:
    """Largest ``|log P_a(x) / P_b(x)|`` over outputs ``x`` and true values ``a, b``
    with ``|a - b| = d``, for discrete Laplace noise of scale ``t`` resampled inside
    ``{lower..upper}`` (``P_a(x) = e^{-|x - a|/t} / Z(a)`` there).

    A one-sided range (``upper`` infinite) is enumerated up to ``lower + span`` with
    the normaliser's tail summed in closed form, and true values up to
    ``lower + 4 d + 40`` (further in, the loss only falls to ``d / t``).
    """
    span = 60 * math.ceil(t) + 200
    top = lower + span if math.isinf(upper) else int(upper)
    x = np.arange(lower, top + 1, dtype=np.float64)
    q = math.exp(-1.0 / t)
    last = top if not math.isinf(upper) else min(top, lower + 4 * d + 40)
    truths = np.arange(lower, last + 1, dtype=np.float64)
    log_pmf = {}
    for a in truths.tolist():
        w = -np.abs(x - a) / t
        z = float(np.exp(w).sum())
        if math.isinf(upper):  # sum over x > top of q^(x - a)
            z += q ** (top + 1 - a) / (1.0 - q)
        log_pmf[a] = w - math.log(z)
    worst = 0.0
    for a in truths.tolist():
        b = a + d
        if b in log_pmf:
            worst = max(worst, float(np.max(np.abs(log_pmf[a] - log_pmf[b]))))
    return worst


def truncated_worst_loss(
    t: float, lower: int, upper: float, total: int, most: int, entries: int
) -> tuple[float, tuple[int, ...]]:
    """The worst privacy loss over every shift vector one unit can make, and the vector."""
    return max(
        (sum(truncated_entry_loss(t, lower, upper, d) for d in v), v)
        for v in shift_vectors(total, most, entries)
    )


# ----------------------------------------------------------------------------- Gaussian


@pytest.mark.parametrize(
    ("k", "c", "g"),
    [
        (5, 2, 3),  # the audit's case: (2, 2, 1); 5 / 2 = 2.5 rounded to 2 entries
        (4, 3, 4),  # (3, 1); 4 / 3 rounded to 1 entry
        (7, 3, 3),  # (3, 3, 1)
        (9, 2, 5),  # (2, 2, 2, 2, 1); 4.5 rounded (to even) to 4 entries
        (9, 4, 3),  # (4, 4, 1)
    ],
)
def test_grouped_gaussian_counts_meet_their_delta_for_every_shift_vector(
    k: int, c: int, g: int
) -> None:
    """Grouped counts with a unit, discrete Gaussian noise, ``c`` not dividing ``k``:
    the exact delta of every shift vector the bounds allow (``k`` rows, ``c`` per
    group, ``g`` groups) at the release's epsilon is within the delta charged.
    Before the fix the noise was calibrated for ``round(k / c)`` groups moved by
    ``c``: the audit's ``(5, 2, 3)`` measured delta ``3.2e-6`` against ``1e-6``."""
    epsilon, delta = 1.0, 1e-6
    r = (
        unit_frame(g)
        .dp.groupby("g", keys=list(range(g + 2)))
        .len(
            epsilon=epsilon,
            delta=delta,
            mechanism="gaussian",
            privacy_unit="pid",
            max_rows_per_unit=k,
            max_rows_per_group=c,
            max_groups_per_unit=g,
            random_state=0,
        )
    )
    meta = r.attrs["dp"]
    assert meta.details["budget_split"] == {"rows": 1.0}
    assert float(meta.sensitivity.iloc[0]) == c
    sigma = float(meta.scale.iloc[0])
    worst = max((gaussian_delta(sigma, v, epsilon), v) for v in shift_vectors(min(k, g * c), c, g))
    assert worst[0] <= delta * (1.0 + RTOL), worst


# ----------------------------------------------------------------------------- truncated


def _truncated(
    release: str, k: int, epsilon: float, neighbouring: str = "add_remove", **bounds: int
) -> tuple[Any, int]:
    """A truncated release whose unit spreads ``k`` rows over ``k`` entries; its
    metadata and the number of entries."""
    kw: dict[str, Any] = {
        "epsilon": epsilon,
        "bounding": "truncated",
        "privacy_unit": "pid",
        "max_rows_per_unit": k,
        "neighbouring": neighbouring,
        "random_state": 0,
        **bounds,
    }
    entries = 2 * k + 2
    if release == "len":
        r = unit_frame(k).dp.groupby("g", keys=list(range(entries))).len(**kw)
    else:  # value_counts (or proportions, by their counts) over declared categories
        cats = [f"c{i}" for i in range(entries)]
        frame = pd.DataFrame({"pid": [0] * k, "c": cats[:k]})
        r = getattr(frame.dp, release)("c", categories={"c": cats}, **kw)
    return r.attrs["dp"], entries


@pytest.mark.parametrize(
    ("release", "k", "epsilon"),
    [
        ("len", 4, 1.0),  # the audit's case: loss 1.14
        ("len", 10, 3.0),  # loss 4.04
        ("value_counts", 4, 1.0),
        ("value_counts", 6, 2.0),
        ("proportions", 4, 1.0),  # release_proportions' own entries moved
    ],
)
def test_truncated_counts_with_a_unit_keep_epsilon(release: str, k: int, epsilon: float) -> None:
    """Grouped ``len`` / ``value_counts`` with a unit, ``bounding="truncated"``: the
    worst loss over every shift vector (``k`` rows, one entry each or stacked) is
    at most epsilon, computed over the output grid. Before the fix the truncation
    was calibrated for one entry moved by ``k``, and ``k`` entries moved by one
    each paid its renormalisation ``k`` times (1.14 at ``k = 4, epsilon = 1``)."""
    meta, entries = _truncated(release, k, epsilon)
    lo, hi = meta.output_bounds
    if release == "proportions":  # (the shares' range; the counts' is [0, inf))
        assert (lo, hi) == (0.0, 1.0)
    else:
        assert (lo, hi) == (0.0, math.inf)
    t = float(meta.scale.iloc[0])
    loss, vector = truncated_worst_loss(t, 0, math.inf, k, k, entries)
    assert loss <= epsilon * (1.0 + RTOL), (loss, vector)


def test_truncated_grouped_counts_with_bounds_keep_epsilon() -> None:
    """The same with ``c`` not dividing ``k`` and fewer groups than rows: ``k = 5``,
    ``c = 2``, ``g = 3`` (shift vectors ``(2, 2, 1)``, ``(2, 1, 1)``, ``(1, 1, 1)``...)."""
    epsilon, k, c, g = 1.0, 5, 2, 3
    meta, _ = _truncated("len", k, epsilon, max_rows_per_group=c, max_groups_per_unit=g)
    t = float(meta.scale.iloc[0])
    loss, vector = truncated_worst_loss(t, 0, math.inf, min(k, g * c), c, g)
    assert loss <= epsilon * (1.0 + RTOL), (loss, vector)


def test_truncated_grouped_counts_under_substitute_keep_epsilon() -> None:
    """Under ``substitute`` the frame's length ``n`` is public, each count lies in
    ``[0, n]`` (a finite range, enumerated whole), and a unit's old and new rows move
    up to ``2 k`` counts by one each."""
    epsilon, k = 1.0, 3
    meta, entries = _truncated("len", k, epsilon, neighbouring="substitute")
    lo, hi = meta.output_bounds
    assert (lo, hi) == (0.0, float(k))  # n = k rows
    t = float(meta.scale.iloc[0])
    # one group may lose c = k rows and another gain them: shifts up to k each, 2 k in all
    loss, vector = truncated_worst_loss(t, 0, hi, 2 * k, k, min(entries, 2 * k))
    assert loss <= epsilon * (1.0 + RTOL), (loss, vector)


def test_truncated_grouped_sums_with_a_unit_keep_epsilon() -> None:
    """Grouped sums on ``[0, 1]`` with a unit of ``k`` rows in ``k`` groups: each sum
    moves by at most 1 per row. The continuous truncated Laplace of scale ``s`` on a
    one-sided range loses ``d / s + log(2 - e^{-d/s})`` at shift ``d`` (REFERENCE.md
    §3, recomputed here); over shift vectors on a ``1/4`` lattice (sum at most
    ``k``, each at most ``k``, at most ``k`` entries) the worst loss is at most
    epsilon. Before the fix: ``4 x (1/s + log(2 - e^{-1/s}))`` = 1.16 at
    ``epsilon = 1``. (The grid rounding, ``2^-40`` of the scale, is below ``RTOL``.)"""
    epsilon, k = 1.0, 4
    frame = pd.DataFrame({"pid": [0] * k, "g": list(range(k)), "x": [1.0] * k})
    r = frame.dp.groupby("g", keys=list(range(2 * k))).sum(
        "x",
        bounds=(0.0, 1.0),
        epsilon=epsilon,
        bounding="truncated",
        privacy_unit="pid",
        max_rows_per_unit=k,
        random_state=0,
    )
    meta = r.attrs["dp"]
    assert meta.output_bounds == (0.0, math.inf)
    s = float(meta.scale.iloc[0])

    def entry(d: float) -> float:
        return d / s + math.log(2.0 - math.exp(-d / s))

    steps = 4
    worst = max(sum(entry(x / steps) for x in v) for v in shift_vectors(k * steps, k * steps, k))
    assert worst <= epsilon * (1.0 + RTOL)


def test_rounded_moves_of_a_real_gaussian_stay_within_the_calibrated_norm() -> None:
    """Real values are rounded to the noise grid, one step more per moved entry: the
    norm sigma is calibrated for covers every move vector the bounds allow, also
    when a unit moves several entries partially (the rounding adds up there)."""
    from pandas_dp.noise.plans import rounded_l2

    rng = np.random.default_rng(0)
    for _ in range(2000):
        moved = int(rng.integers(1, 9))
        rho = float(rng.choice([0.0, 1e-13, 1e-3, 0.2, 0.5]))
        f = rng.uniform(0.0, 1.0, moved) * (rng.uniform() < 0.5 or 1.0)
        l1, l2 = float(f.sum()), float(np.sqrt(np.sum(f * f)))
        shifted = f * (1.0 - rho) + rho  # each entry's worst rounded move
        assert float(np.sqrt(np.sum(shifted**2))) <= rounded_l2(l2, l1, moved, rho) * (1 + 1e-12)
    assert rounded_l2(2.0, 4.0, 4.0, 0.3) == 2.0  # four full moves: exactly two units


def test_a_partially_moved_real_gaussian_is_calibrated_for_the_rounding() -> None:
    from pandas_dp.noise import mechanisms as mech
    from pandas_dp.noise.plans import plan_noise, rounded_l2

    k = 4
    sens = np.full(k, 1.0)
    noise = plan_noise(
        sens, np.zeros(k), np.full(k, 10.0), epsilon=1.0, delta=1e-6,
        mechanism="gaussian", joint_l1=1.0, joint_l2=0.5, max_changed=k,
    )  # fmt: skip
    paid = sens + noise.granularity
    rho = float(np.max(noise.granularity / paid))
    need = rounded_l2(0.5, 1.0, k, rho)
    assert noise.l2_paid == need and need > 0.5
    assert np.all(noise.scale >= mech.gaussian_sigma(need, 1.0, 1e-6) * paid * (1 - 1e-12))
