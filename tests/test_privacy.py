"""Empirical privacy tests on worst-case neighbours, end to end.

Each test calibrates noise with the library's public path
(:func:`pandas_dp.bounding.plan_noise`, with the sensitivity and the output range
from :mod:`pandas_dp.sensitivity`), releases the exact values of two neighbouring
datasets many times with :func:`pandas_dp.bounding.apply_noise`, and compares the
two output distributions bin by bin.

Method. The number of draws from each neighbour is itself Poisson (mean ``M``), so
the bin counts ``c_A``, ``c_B`` are independent Poisson variables and, given
``T = c_A + c_B``, ``c_A`` is exactly Binomial(``T``, ``p_A / (p_A + p_B)``). An
epsilon-DP release has ``p_A <= e^eps p_B`` in every bin, i.e. a success probability
at most ``e^eps / (1 + e^eps)``; the exact binomial tail gives a p-value for every
bin and both directions. A test fails when the smallest p-value is below
``1e-4 / (2 * bins)``: the false-alarm rate of each test is at most 1e-4
(Bonferroni). The same test, pointed at the paper's naive truncation (scale
``Delta / epsilon``), rejects with a p-value far below 1e-6, which shows the method
has the power to see a privacy loss above epsilon.

Neighbours are chosen at the edge of the output range, differing by the full
sensitivity (all records at a bound versus one record moved to the other bound),
where bounding modes lose the most. Point masses of BIT at the range ends get
their own bins.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp.bounding import NoisePlan, apply_noise, plan_noise
from pandas_dp.mechanisms import RandomSource
from pandas_dp.sensitivity import output_range, sensitivity

ALPHA = 1e-4
DRAWS = 200_000
EPS = 1.0


# ----------------------------------------------------------------------------- helpers


def tiled(plan: NoisePlan, m: int) -> NoisePlan:
    """The one-entry ``plan`` repeated for ``m`` independent releases of one value."""
    return dataclasses.replace(
        plan,
        scale=np.repeat(plan.scale, m),
        granularity=np.repeat(plan.granularity, m),
        lower=np.repeat(plan.lower, m),
        upper=np.repeat(plan.upper, m),
    )


def releases(plan: NoisePlan, theta: float, seed: int, draws: int = DRAWS) -> np.ndarray:
    """A Poisson(``draws``) number of independent releases of ``theta`` under ``plan``."""
    m = int(np.random.default_rng(seed).poisson(draws))
    return apply_noise(np.full(m, theta), tiled(plan, m), RandomSource(seed))


def real_bins(x: np.ndarray, plan: NoisePlan, bins: int = 40) -> np.ndarray:
    """Bin labels: the range ends on their own (BIT's point masses), equal-width bins
    inside the range; for ``none`` also equal-width bins six scales beyond it and two
    open tails."""
    lo, hi = float(plan.lower[0]), float(plan.upper[0])
    s = float(plan.scale[0])
    if plan.bounding == "none":
        edges = np.linspace(lo - 6 * s, hi + 6 * s, bins + 1)
        return np.searchsorted(edges, x, side="right")  # 0 and bins + 1 are the tails
    assert np.all((x >= lo) & (x <= hi))
    inside = 2 + np.minimum(((x - lo) / (hi - lo) * bins).astype(np.int64), bins - 1)
    return np.where(x == lo, 0, np.where(x == hi, 1, inside))


def integer_bins(x: np.ndarray, plan: NoisePlan, top: int) -> np.ndarray:
    """One bin per integer from the lower end up to ``top``; larger values share one."""
    lo = float(plan.lower[0])
    assert np.all(x == np.round(x)) and np.all(x >= lo)
    return np.minimum(x - lo, top - lo + 1).astype(np.int64)


def loss_pvalues(a: np.ndarray, b: np.ndarray, eps: float) -> tuple[float, float, np.ndarray]:
    """Smallest p-value of "log p_A/p_B <= eps" and of "log p_B/p_A <= eps" over bins.

    Returns (smallest p-value, number of tests, estimated log ratios per bin).
    """
    size = int(max(a.max(initial=0), b.max(initial=0))) + 1
    ca = np.bincount(a, minlength=size)
    cb = np.bincount(b, minlength=size)
    used = (ca + cb) > 0
    total = ca[used] + cb[used]
    pi0 = math.exp(eps) / (1 + math.exp(eps))
    p_ab = stats.binom.sf(ca[used] - 1, total, pi0)
    p_ba = stats.binom.sf(cb[used] - 1, total, pi0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.log(ca / a.size) - np.log(cb / b.size)  # indexed by bin label
    return float(min(p_ab.min(), p_ba.min())), 2 * int(used.sum()), ratio


def assert_eps_dp(a: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    p, tests, ratio = loss_pvalues(a, b, eps)
    finite = ratio[np.isfinite(ratio)]  # bins empty on one side show up as p-values
    assert p >= ALPHA / tests, (
        f"a bin's log probability ratio exceeds eps={eps} (p={p:.3g}); largest estimated "
        f"|log ratio| {np.abs(finite).max():.3f}"
    )
    return ratio


def plan_for(statistic, relation, a, b, n, bounding, *, integer=False, eps=EPS):
    """The library's plan for one release of ``statistic`` (public inputs only)."""
    sens = sensitivity(statistic, relation, a, b, n)
    lo, hi = output_range(statistic, a, b, n, relation)
    plan = plan_noise(
        np.array([sens]),
        np.array([lo]),
        np.array([hi]),
        epsilon=eps,
        bounding=bounding,
        integer=integer,
    )
    return sens, plan


# ----------------------------------------------------------------------------- real-valued


MEAN_PAIRS = [
    # mean on [0, 1], n = 4: all records at 0 (mean 0) versus one at 1 (mean 1/4),
    # and the mirror image at the top of the range
    pytest.param(0.0, 0.25, id="bottom"),
    pytest.param(1.0, 0.75, id="top"),
]


@pytest.mark.parametrize("bounding", ["none", "bit", "truncated"])
@pytest.mark.parametrize(("theta", "theta2"), MEAN_PAIRS)
def test_mean_worst_case_neighbours(bounding, theta, theta2):
    """Mean on [0, 1] with n = 4 (sensitivity 1/4): every bin's log ratio <= eps.

    False-alarm rate 1e-4 (exact conditional binomial tests, Bonferroni over bins).
    """
    sens, plan = plan_for("mean", "substitute", 0.0, 1.0, 4, bounding)
    assert sens == 0.25
    assert abs(theta - theta2) == sens
    a = real_bins(releases(plan, theta, 1), plan)
    b = real_bins(releases(plan, theta2, 2), plan)
    assert_eps_dp(a, b, EPS)


@pytest.mark.parametrize("bounding", ["none", "bit", "truncated"])
def test_var_worst_case_neighbours(bounding):
    """Variance on [0, 1], n = 3: var(0,0,0) = 0 versus var(0,0,1) = 1/3, which is both
    the sensitivity R²/n and the top of the range (n+1)R²/(4n). alpha = 1e-4."""
    sens, plan = plan_for("var", "substitute", 0.0, 1.0, 3, bounding)
    theta, theta2 = np.var([0.0, 0.0, 0.0], ddof=1), np.var([0.0, 0.0, 1.0], ddof=1)
    assert theta2 - theta == pytest.approx(sens)
    assert float(plan.upper[0]) == pytest.approx(theta2)
    a = real_bins(releases(plan, theta, 3), plan)
    b = real_bins(releases(plan, min(theta2, float(plan.upper[0])), 4), plan)
    assert_eps_dp(a, b, EPS)


@pytest.mark.parametrize("bounding", ["bit", "truncated"])
def test_sum_add_remove_worst_case(bounding):
    """Sum on [-3, 1] under add/remove, n = 5: five records at -3 (sum -15, the bottom
    of the range) versus four (sum -12); sensitivity max(|a|, |b|) = 3. alpha = 1e-4."""
    sens, plan = plan_for("sum", "add_remove", -3.0, 1.0, 5, bounding, eps=0.7)
    assert sens == 3.0
    assert float(plan.lower[0]) == -15.0
    a = real_bins(releases(plan, -15.0, 5), plan)
    b = real_bins(releases(plan, -12.0, 6), plan)
    assert_eps_dp(a, b, 0.7)


def test_bit_point_mass_ratio_is_e_to_the_eps():
    """BIT's mass at the lower end is 1/2 for θ = c0 and e^{-ε}/2 for θ = c0 + Δ: the
    boundary bin is the binding one, with log ratio ε (up to the grid's Δ/(Δ+γ)).
    Two-sided z-check on the log ratio at 1e-4."""
    _, plan = plan_for("mean", "substitute", 0.0, 1.0, 4, "bit")
    a = releases(plan, 0.0, 7)
    b = releases(plan, 0.25, 8)
    pa, pb = np.mean(a == 0.0), np.mean(b == 0.0)
    se = math.sqrt((1 - pa) / (pa * a.size) + (1 - pb) / (pb * b.size))
    assert abs(math.log(pa / pb) - EPS) <= stats.norm.isf(ALPHA / 2) * se
    assert pa == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize(("theta", "theta2"), MEAN_PAIRS)
def test_naive_truncation_exceeds_eps_while_calibrated_does_not(theta, theta2):
    """The paper's truncation with scale Δ/ε is not ε-DP; the calibrated scale is.

    Mean on [0, 1] with n = 4 (Δ = 1/4, ε = 1). With scale Δ/ε the renormalising
    constants are C(0) ≈ 0.491 and C(1/4) ≈ 0.791, so near the bound the density ratio
    reaches e^ε · 0.791/0.491 (log ≈ 1.48). The bin next to the boundary must show a log
    ratio significantly above ε (p < 1e-6), the calibrated plan must not (alpha = 1e-4).
    """
    sens, calibrated = plan_for("mean", "substitute", 0.0, 1.0, 4, "truncated")
    naive = dataclasses.replace(calibrated, scale=np.array([sens / EPS]))
    assert float(calibrated.scale[0]) > sens / EPS * 1.1

    a = real_bins(releases(naive, theta, 11), naive)
    b = real_bins(releases(naive, theta2, 12), naive)
    p, _, ratio = loss_pvalues(a, b, EPS)
    assert p < 1e-6, "the naive truncation should visibly exceed epsilon"
    edge = 2 if theta == 0.0 else 2 + 39  # the interior bin next to the shared bound
    assert ratio[edge] > EPS + 0.25, ratio[edge]

    a = real_bins(releases(calibrated, theta, 13), calibrated)
    b = real_bins(releases(calibrated, theta2, 14), calibrated)
    ratio = assert_eps_dp(a, b, EPS)
    assert abs(ratio[2 if theta == 0.0 else 41]) < EPS + 0.1


# ----------------------------------------------------------------------------- integer-valued


@pytest.mark.parametrize("bounding", ["none", "bit", "truncated"])
@pytest.mark.parametrize(("theta", "theta2"), [(0, 1), (3, 2)])
def test_count_substitute_worst_case(bounding, theta, theta2):
    """Non-null count, n = 3 under substitute: range [0, 3], neighbours at a bound.
    Each integer is its own bin. alpha = 1e-4."""
    sens, plan = plan_for("count", "substitute", 0.0, 1.0, 3, bounding, integer=True)
    assert sens == 1.0 and plan.integer
    top = 3 if bounding != "none" else 12
    if bounding == "none":
        plan_lo = dataclasses.replace(plan, lower=np.array([-12.0]))
        a = integer_bins(np.maximum(releases(plan, theta, 21), -12), plan_lo, top)
        b = integer_bins(np.maximum(releases(plan, theta2, 22), -12), plan_lo, top)
    else:
        a = integer_bins(releases(plan, theta, 21), plan, top)
        b = integer_bins(releases(plan, theta2, 22), plan, top)
    assert_eps_dp(a, b, EPS)


@pytest.mark.parametrize("statistic", ["count", "len"])
@pytest.mark.parametrize("bounding", ["bit", "truncated"])
def test_count_add_remove_one_sided_range(statistic, bounding):
    """Counts under add/remove live on [0, inf): 0 versus 1. alpha = 1e-4."""
    _, plan = plan_for(statistic, "add_remove", 0.0, 1.0, 5, bounding, integer=True)
    assert math.isinf(float(plan.upper[0]))
    a = integer_bins(releases(plan, 0, 31), plan, 15)
    b = integer_bins(releases(plan, 1, 32), plan, 15)
    assert_eps_dp(a, b, EPS)


def test_naive_integer_truncation_exceeds_eps():
    """Truncating discrete Laplace with t = Δ/ε = 1 to {0..3}: at output 0 the loss is
    1 + ln(Z(1)/Z(0)) ≈ 1.19 > ε; the calibrated t passes (alpha = 1e-4)."""
    _, calibrated = plan_for("count", "substitute", 0.0, 1.0, 3, "truncated", integer=True)
    naive = dataclasses.replace(calibrated, scale=np.array([1.0 / EPS]))
    a = integer_bins(releases(naive, 0, 41), naive, 3)
    b = integer_bins(releases(naive, 1, 42), naive, 3)
    p, _, ratio = loss_pvalues(a, b, EPS)
    assert p < 1e-6
    assert ratio[0] > EPS + 0.1
    q = math.exp(-1.0)
    z0, z1 = 1 + q + q**2 + q**3, 1 + 2 * q + q**2
    assert ratio[0] == pytest.approx(1 + math.log(z1 / z0), abs=0.03)

    a = integer_bins(releases(calibrated, 0, 43), calibrated, 3)
    b = integer_bins(releases(calibrated, 1, 44), calibrated, 3)
    assert_eps_dp(a, b, EPS)


# ----------------------------------------------------------------------------- the accessor


def test_accessor_mean_bit_worst_case():
    """df.dp.mean on [0, 1] with n = 1: [0.0] versus [1.0] (Δ = 1 = the range).

    Through the public accessor, 10 000 (Poisson) releases of each frame; bins are the
    point masses at 0 and 1 and ten interior bins. alpha = 1e-4.
    """
    rng = np.random.default_rng(99)
    frames = [pd.DataFrame({"x": [0.0]}), pd.DataFrame({"x": [1.0]})]
    labels = []
    for df in frames:
        m = int(rng.poisson(10_000))
        x = np.array(
            [float(df.dp.mean("x", epsilon=EPS, bounds=(0, 1), random_state=rng)) for _ in range(m)]
        )
        assert np.all((x >= 0) & (x <= 1))
        labels.append(np.where(x == 0, 0, np.where(x == 1, 1, 2 + np.minimum(x * 10, 9))))
    a, b = (lab.astype(np.int64) for lab in labels)
    ratio = assert_eps_dp(a, b, EPS)
    # and the boundary mass ratio is really near e^eps (the test is not vacuous)
    assert ratio[0] == pytest.approx(EPS, abs=0.15)
    meta = frames[0].dp.mean("x", epsilon=EPS, bounds=(0, 1), random_state=0).attrs["dp"]
    assert meta.sensitivity == 1.0 and meta.bounding == "bit"
