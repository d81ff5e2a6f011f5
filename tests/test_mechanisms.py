"""Statistical and exact tests of the noise samplers and their calibration.

Sampling tests use fixed seeds (``RandomSource(random_state=seed)``), so they are
deterministic; each docstring states the false-alarm rate the test would have for a
seed chosen at random (the probability that a correct sampler fails it). Calibration
tests are exact: they recompute the privacy loss from closed-form densities or by
enumerating the truncated discrete Laplace pmf, independently of the library's own
formula.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from pandas_dp.noise.mechanisms import (
    GRID_BITS,
    RandomSource,
    discrete_gaussian,
    discrete_laplace,
    gaussian_halfwidth,
    gaussian_sigma,
    grid_granularity,
    laplace_halfwidth,
    truncated_discrete_laplace_scale,
    truncated_laplace_scale,
)

ALPHA = 1e-4  # false-alarm rate of each sampling test
Z_ONE_SIDED = stats.norm.isf(ALPHA)  # 3.719


# ----------------------------------------------------------------------------- helpers


def discrete_laplace_pmf(t: float, support: np.ndarray) -> np.ndarray:
    q = math.exp(-1.0 / t)
    return (1 - q) / (1 + q) * q ** np.abs(support)


def discrete_gaussian_pmf(sigma: float, support: np.ndarray) -> np.ndarray:
    wide = np.arange(-int(40 * sigma) - 50, int(40 * sigma) + 51)
    z = np.exp(-(wide.astype(float) ** 2) / (2 * sigma**2)).sum()
    return np.exp(-(support.astype(float) ** 2) / (2 * sigma**2)) / z


def chi_square_pvalue(samples: np.ndarray, pmf, half_width: int, bins: int = 60) -> float:
    """Chi-square goodness of fit of integer samples to ``pmf`` over binned support.

    Bins are runs of consecutive integers of roughly equal exact probability, with the
    two tails open-ended; every bin has an expected count of at least 20.
    """
    support = np.arange(-half_width, half_width + 1)
    p = pmf(support)
    cdf = np.cumsum(p)
    levels = np.linspace(0, 1, bins + 1)[1:-1]
    # right edges (inclusive) of the interior bins, as integers
    edges = np.unique(support[np.searchsorted(cdf, levels)])
    edges = edges[edges < support[-1]]
    n = samples.size
    while edges.size > 1 and cdf[edges[0] - support[0]] * n < 20:
        edges = edges[1:]  # merge a thin left tail into its neighbour
    while edges.size > 1 and (1 - cdf[edges[-1] - support[0]]) * n < 20:
        edges = edges[:-1]  # and a thin right tail
    cum_at_edges = cdf[edges - support[0]]
    probs = np.diff(np.concatenate([[0.0], cum_at_edges, [1.0]]))
    counts = np.bincount(np.searchsorted(edges, samples, side="left"), minlength=edges.size + 1)
    expected = probs * samples.size
    assert expected.min() >= 20, expected.min()
    assert counts.sum() == samples.size
    return float(stats.chisquare(counts, expected).pvalue)


# ----------------------------------------------------------------------------- uniform bits


def test_uniform_is_the_documented_map_of_the_bits():
    """u = (top 53 bits + 1) / 2^53 exactly: values in (0, 1] on a 2^-53 grid."""
    n = 100_000
    bits = RandomSource(5).bits(n)
    u = RandomSource(5).uniform(n)
    assert u.dtype == np.float64
    expect = ((bits >> np.uint64(11)).astype(np.float64) + 1.0) * 2.0**-53
    np.testing.assert_array_equal(u, expect)
    assert np.all(u > 0) and np.all(u <= 1)
    k = u * 2.0**53
    np.testing.assert_array_equal(k, np.floor(k))
    assert k.min() >= 1 and k.max() <= 2.0**53


def test_uniform_uses_all_53_bits():
    """Each of the 53 bits of u * 2^53 - 1 is a fair coin.

    alpha = 1e-4 for the whole test (two-sided binomial z-test per bit, Bonferroni
    over 53 bits); a 52-bit or 32-bit uniform fails on its low bits.
    """
    n = 200_000
    u = RandomSource(17).uniform(n)
    k = (u * 2.0**53 - 1).astype(np.uint64)
    z = stats.norm.isf(ALPHA / (2 * 53))
    for j in range(53):
        ones = int(((k >> np.uint64(j)) & np.uint64(1)).sum())
        assert abs(ones - n / 2) <= z * math.sqrt(n / 4), f"bit {j}: {ones} ones of {n}"


def test_uniform_distribution_ks():
    """Kolmogorov-Smirnov against U(0, 1); alpha = 1e-4."""
    u = RandomSource(23).uniform(200_000)
    assert stats.kstest(u, "uniform").pvalue > ALPHA


def test_random_source_types_and_reproducibility():
    a = RandomSource(3).uniform(10)
    b = RandomSource(np.random.default_rng(3)).uniform(10)
    np.testing.assert_array_equal(a, b)
    assert not RandomSource(3).secure
    assert RandomSource().secure
    for bad in (True, 1.5, "3"):
        with pytest.raises(TypeError):
            RandomSource(bad)


# ----------------------------------------------------------------------------- discrete Laplace


@pytest.mark.parametrize("t", [0.5, 3.0, 1e3])
def test_discrete_laplace_pmf(t):
    """P(k) ∝ exp(-|k|/t): chi-square over binned support; alpha = 1e-4."""
    samples = discrete_laplace(np.full(200_000, t), RandomSource(101))
    assert samples.dtype == np.int64
    p = chi_square_pvalue(samples, lambda k: discrete_laplace_pmf(t, k), int(40 * t) + 10)
    assert p > ALPHA, p


def test_discrete_laplace_mixed_scales_in_one_vector():
    """Per-entry scales are honoured when entries of different scales are interleaved.

    alpha = 1e-4 in total (two chi-square tests at 5e-5).
    """
    n = 200_000
    ts = np.where(np.arange(n) % 2 == 0, 0.7, 25.0)
    samples = discrete_laplace(ts, RandomSource(7))
    for t in (0.7, 25.0):
        part = samples[ts == t]
        p = chi_square_pvalue(part, lambda k, t=t: discrete_laplace_pmf(t, k), int(40 * t) + 10)
        assert p > ALPHA / 2, (t, p)


def test_discrete_laplace_wrong_scale_is_detected():
    """The chi-square test has power: samples at scale 3 are rejected as scale 3.1."""
    samples = discrete_laplace(np.full(200_000, 3.0), RandomSource(101))
    p = chi_square_pvalue(samples, lambda k: discrete_laplace_pmf(3.1, k), 130)
    assert p < 1e-6


def test_discrete_laplace_rejects_bad_scales():
    with pytest.raises(ValueError):
        discrete_laplace(np.array([1.0, 0.0]), RandomSource(0))
    with pytest.raises(ValueError):
        discrete_laplace(np.array([-1.0]), RandomSource(0))


# ----------------------------------------------------------------------------- discrete Gaussian


@pytest.mark.parametrize("sigma", [pytest.param(0.4, marks=pytest.mark.slow), 2.0, 30.0])
def test_discrete_gaussian_pmf(sigma):
    """P(k) ∝ exp(-k²/(2σ²)): chi-square over binned support; alpha = 1e-4."""
    samples = discrete_gaussian(np.full(200_000, sigma), RandomSource(202))
    assert samples.dtype == np.int64
    p = chi_square_pvalue(samples, lambda k: discrete_gaussian_pmf(sigma, k), int(12 * sigma) + 10)
    assert p > ALPHA, p


def test_discrete_gaussian_mixed_sigmas_in_one_vector():
    """Rejected entries are redrawn with their own sigma; alpha = 1e-4 in total."""
    n = 200_000
    sig = np.where(np.arange(n) % 3 == 0, 1.3, 8.0)
    samples = discrete_gaussian(sig, RandomSource(9))
    for s in (1.3, 8.0):
        part = samples[sig == s]
        p = chi_square_pvalue(part, lambda k, s=s: discrete_gaussian_pmf(s, k), int(12 * s) + 10)
        assert p > ALPHA / 2, (s, p)


# ----------------------------------------------------------------------------- tails


@pytest.mark.parametrize("t", [0.8, 1.0, 3.7, 50.0])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_laplace_halfwidth_holds_for_discrete_laplace(t, alpha):
    """P(|K| > h) <= alpha for the discrete Laplace: exactly from the pmf, and empirically.

    ``laplace_halfwidth(t, alpha, granularity=1)`` is the half-width integer
    releases use. The exact tail is ``P(|K| > h) = 2 q^(floor(h)+1) / (1 + q)``,
    ``q = e^(-1/t)``, which can exceed the continuous ``e^(-h/t)``: the continuous
    half-width ``t ln(1/alpha)`` is not enough (checked below for the cases where it
    fails). t = 1 is a count with epsilon = 1. Empirical check: one-sided binomial
    z-test, false-alarm rate 1e-4.
    """
    h = float(laplace_halfwidth(t, alpha, granularity=1.0))
    q = math.exp(-1 / t)
    assert h == pytest.approx(t * math.log(2 / ((1 + q) * alpha)))
    naive = t * math.log(1 / alpha)
    if 2 * q ** (math.floor(naive) + 1) / (1 + q) > alpha:
        assert h > naive  # the widening is what makes it hold
    exact_tail = 2 * q ** (math.floor(h) + 1) / (1 + q)
    assert exact_tail <= alpha
    n = 200_000
    k = discrete_laplace(np.full(n, t), RandomSource(31))
    frac = float(np.mean(np.abs(k) > h))
    assert frac <= alpha + Z_ONE_SIDED * math.sqrt(alpha * (1 - alpha) / n)


@pytest.mark.parametrize("sigma", [pytest.param(0.7, marks=pytest.mark.slow), 2.5, 40.0])
@pytest.mark.parametrize("alpha", [0.05, 0.01])
def test_gaussian_halfwidth_holds_for_discrete_gaussian(sigma, alpha):
    """P(|K| > h) <= alpha for the discrete Gaussian; exact and empirical (alpha 1e-4)."""
    h = float(gaussian_halfwidth(sigma, alpha))
    support = np.arange(-int(50 * sigma) - 50, int(50 * sigma) + 51)
    p = discrete_gaussian_pmf(sigma, support)
    assert p[np.abs(support) > h].sum() <= alpha
    # and for the continuous Gaussian it claims too
    assert 2 * stats.norm.sf(h / sigma) <= alpha
    n = 200_000
    k = discrete_gaussian(np.full(n, sigma), RandomSource(37))
    frac = float(np.mean(np.abs(k) > h))
    assert frac <= alpha + Z_ONE_SIDED * math.sqrt(alpha * (1 - alpha) / n)


def test_reference_halfwidths():
    """REFERENCE.md §4: 99% -> 4.605 s, 95% -> 2.996 s (not the seed note's 0.683 s)."""
    assert float(laplace_halfwidth(1.0, 0.01)) == pytest.approx(4.605, abs=1e-3)
    assert float(laplace_halfwidth(1.0, 0.05)) == pytest.approx(2.996, abs=1e-3)


# ----------------------------------------------------------------------------- secure source


def test_secure_source_loose_checks():
    """The OS CSPRNG path works and is roughly right (6-sigma checks: alpha < 1e-8)."""
    src = RandomSource()
    assert src.secure
    u = src.uniform(50_000)
    assert np.all((u > 0) & (u <= 1))
    assert abs(u.mean() - 0.5) < 6 * math.sqrt(1 / 12 / u.size)
    t = 3.0
    n = 50_000
    k = discrete_laplace(np.full(n, t), src)
    q = math.exp(-1 / t)
    var = 2 * q / (1 - q) ** 2
    assert abs(k.mean()) < 6 * math.sqrt(var / n)
    # the sample variance of a discrete Laplace has relative sd ~ sqrt(5/n) (kurtosis 6)
    assert abs(k.var() / var - 1) < 6 * math.sqrt(6 / n)
    g = discrete_gaussian(np.full(20_000, 2.0), src)
    assert abs(g.mean()) < 6 * 2.0 / math.sqrt(g.size)
    assert not np.array_equal(RandomSource().bits(4), RandomSource().bits(4))


# ----------------------------------------------------------------------------- the grid


@pytest.mark.parametrize("scale", [1e-12, 3e-5, 0.1, 1.0, 7.3, 1e6, 1e15])
def test_grid_is_power_of_two_2_to_40_finer(scale):
    """gamma = 2^ceil(log2(s / 2^40)): a power of two with s/gamma in (2^39, 2^40]."""
    gamma = float(grid_granularity(scale, 0.0)[0])
    mant, _ = math.frexp(gamma)
    assert mant == 0.5
    assert GRID_BITS == 40
    assert 2.0**39 < scale / gamma <= 2.0**40


@pytest.mark.parametrize(
    ("scale", "magnitude"),
    [(1.0, 100.0), (1e-3, 1e3), (1e-9, 1e6), (5.0, 1e9), (2.0, 0.3), (1e-6, 4e4)],
)
def test_grid_multiples_up_to_magnitude_are_exact(scale, magnitude):
    """Every k*gamma with |k*gamma| <= magnitude is an exact double; rounding a value to
    the grid and adding integer multiples of gamma is exact arithmetic."""
    gamma = float(grid_granularity(scale, magnitude)[0])
    assert math.frexp(gamma)[0] == 0.5
    assert gamma >= scale * 2.0**-GRID_BITS
    assert gamma < 2 * max(scale * 2.0**-GRID_BITS, magnitude * 2.0**-52)
    top = math.floor(magnitude / gamma)
    assert top <= 2**53  # all integers up to it are exact doubles
    rng = np.random.default_rng(0)
    ks = [0, 1, 2, 3, top - 1, top, *rng.integers(0, top + 1, size=200).tolist()]
    g = Fraction(gamma)
    for k in ks:
        for sign in (1, -1):
            x = float(sign * k) * gamma
            assert Fraction(x) == sign * k * g
    thetas = rng.uniform(-magnitude, magnitude, 200)
    snapped = np.rint(thetas / gamma) * gamma
    for th, s in zip(thetas, snapped, strict=True):
        assert Fraction(float(s)) / g == round(Fraction(float(s)) / g)
        assert abs(s - th) <= gamma / 2
        k = round(Fraction(float(s)) / g)
        assert Fraction(float(s + 5 * gamma)) == (k + 5) * g


def test_grid_vectorised_and_infinite_magnitude():
    s = np.array([1.0, 1e-3, 1e3])
    g = grid_granularity(s, np.array([1.0, np.inf, 10.0]))
    assert g.shape == (3,)
    np.testing.assert_array_equal(g, grid_granularity(s, np.zeros(3)))


# ----------------------------------------------------------------------------- Gaussian


def balle_wang_delta(sigma: float, sens: float, eps: float) -> float:
    a, b = sens / (2 * sigma), eps * sigma / sens
    return float(stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b))


def test_gaussian_sigma_check_value():
    sigma = gaussian_sigma(1.0, 1.0, 1e-5)
    assert round(sigma, 4) == 3.7306
    classical = math.sqrt(2 * math.log(1.25 / 1e-5))
    assert round(classical, 4) == 4.8448


@pytest.mark.parametrize(
    ("sens", "eps", "delta"),
    [
        (1.0, 1.0, 1e-5),
        (2.0, 0.5, 1e-6),
        (0.1, 3.0, 1e-3),
        (1.0, 0.1, 1e-8),
        (5.0, 10.0, 1e-5),
        (0.01, 0.9, 1e-10),
    ],
)
def test_gaussian_sigma_is_the_smallest_balle_wang_sigma(sens, eps, delta):
    """sigma satisfies Balle & Wang's condition (scipy's Phi); 0.999 sigma does not."""
    sigma = gaussian_sigma(sens, eps, delta)
    assert balle_wang_delta(sigma, sens, eps) <= delta * (1 + 1e-9)
    assert balle_wang_delta(0.999 * sigma, sens, eps) > delta
    # linear in the sensitivity
    assert gaussian_sigma(3 * sens, eps, delta) == pytest.approx(3 * sigma, rel=1e-9)
    if eps < 1:
        classical = math.sqrt(2 * math.log(1.25 / delta)) * sens / eps
        assert sigma < classical


@pytest.mark.parametrize(
    ("sens", "eps", "delta"), [(0.0, 1.0, 1e-5), (1.0, 0.0, 1e-5), (1.0, 1.0, 0.0), (1, 1, 1)]
)
def test_gaussian_sigma_rejects_bad_parameters(sens, eps, delta):
    with pytest.raises(ValueError):
        gaussian_sigma(sens, eps, delta)


# ----------------------------------------------------------------------------- truncation


def test_truncated_laplace_scale_check_values():
    assert round(float(truncated_laplace_scale(1.0, 10.0, 1.0)[0]), 4) == 1.6116
    assert round(float(truncated_laplace_scale(0.1, 1.0, 0.5)[0]), 4) == 0.3528
    for sens, eps in [(1.0, 1.0), (0.3, 0.2), (2.0, 4.0)]:
        one_sided = float(truncated_laplace_scale(sens, np.inf, eps)[0])
        assert one_sided == pytest.approx(sens / math.log((1 + math.exp(eps)) / 2), rel=1e-9)


def truncated_laplace_loss(s: float, sens: float, c0: float, c1: float) -> float:
    """Largest |ln p(x|θ)/p(x|θ')| of Laplace(θ, s) truncated to [c0, c1].

    Closed-form densities p(x|θ) = exp(-|x-θ|/s) / (2 s C(θ)) with
    C(θ) = 1 - e^{-(θ-c0)/s}/2 - e^{-(c1-θ)/s}/2, maximised over a fine grid of
    true values θ, neighbours θ' with |θ - θ'| <= Δ inside the range, and outputs x.
    """
    theta = np.linspace(c0, c1, 401)
    shifts = np.linspace(-sens, sens, 41)
    x = np.linspace(c0, c1, 801)

    def log_c(th):
        return np.log1p(-0.5 * np.exp(-(th - c0) / s) - 0.5 * np.exp(-(c1 - th) / s))

    worst = 0.0
    for d in shifts:
        other = np.clip(theta + d, c0, c1)  # still within Δ of θ
        th, ot = theta[:, None], other[:, None]
        loss = (np.abs(x - ot) - np.abs(x - th)) / s + log_c(ot) - log_c(th)
        worst = max(worst, float(np.abs(loss).max()))
    return worst


TRUNC_CASES = [
    # (Δ, c0, c1, ε)
    (1.0, 0.0, 10.0, 1.0),
    (0.1, 0.0, 1.0, 0.5),
    (0.25, 0.0, 1.0, 1.0),
    (2.0, 0.0, 1.0, 1.0),  # Δ > D: Δ' = D
    (1.0, -5.0, 5.0, 0.3),  # ε < ln 2: the bracket must widen
    (0.5, 0.0, 1.0, 3.0),
]


@pytest.mark.parametrize(("sens", "c0", "c1", "eps"), TRUNC_CASES)
def test_truncated_laplace_scale_privacy_loss(sens, c0, c1, eps):
    """At the calibrated scale the truncated Laplace loss is <= ε (and reaches it);
    at 0.99 times the scale it exceeds ε."""
    s = float(truncated_laplace_scale(sens, c1 - c0, eps)[0])
    loss = truncated_laplace_loss(s, sens, c0, c1)
    assert loss <= eps + 1e-9
    assert loss >= eps - 1e-6  # the scale is the smallest one, not just a safe one
    assert truncated_laplace_loss(0.99 * s, sens, c0, c1) > eps


@pytest.mark.parametrize("eps", [0.5, 1.0, 2.0])
def test_naive_truncation_scale_is_not_eps_dp(eps):
    """The paper's scale Δ/ε loses ε + ln(2 - e^{-ε}) when the range is wide."""
    sens, c0, c1 = 1.0, 0.0, 40.0
    loss = truncated_laplace_loss(sens / eps, sens, c0, c1)
    expect = eps + math.log(2 - math.exp(-eps))
    assert loss == pytest.approx(expect, abs=1e-3)
    assert loss > eps + 0.3
    if eps == 1.0:
        assert round(expect, 2) == 1.49


def truncated_discrete_laplace_loss(t: float, sens: int, points: int) -> float:
    """Exact largest |ln p(x|θ)/p(x|θ')| over integer θ, θ' in {0..N}, |θ-θ'| <= Δ,
    x in {0..N}, for p(x|θ) ∝ exp(-|x-θ|/t) normalised on {0..N}."""
    x = np.arange(points + 1)
    theta = np.arange(points + 1)
    logits = -np.abs(x[None, :] - theta[:, None]) / t
    logp = logits - np.logaddexp.reduce(logits, axis=1, keepdims=True)
    worst = 0.0
    for d in range(1, sens + 1):
        if d > points:
            break
        diff = logp[d:] - logp[:-d]
        worst = max(worst, float(np.abs(diff).max()))
    return worst


DISCRETE_CASES = [
    # (Δ, N, ε)
    (1, 3, 1.0),
    (1, 10, 0.5),
    (2, 7, 1.0),
    (3, 2, 1.0),  # Δ > N
    (1, 1, 2.0),
    (5, 50, 0.2),  # ε < ln 2
    (1, 600, 1.0),  # effectively infinite: q^N is below 1e-200
    (4, 600, 2.0),
]


@pytest.mark.parametrize(("sens", "points", "eps"), DISCRETE_CASES)
def test_truncated_discrete_laplace_scale_by_enumeration(sens, points, eps):
    """Enumerate the truncated discrete Laplace pmf for every θ: loss <= ε at the
    returned scale (and equal to it), > ε at 0.99 times the scale."""
    t = float(truncated_discrete_laplace_scale(sens, points, eps)[0])
    loss = truncated_discrete_laplace_loss(t, sens, points)
    assert loss <= eps + 1e-9
    assert loss >= eps - 1e-6
    assert truncated_discrete_laplace_loss(0.99 * t, sens, points) > eps


@pytest.mark.parametrize(("sens", "eps"), [(1, 1.0), (4, 2.0), (1, 0.3)])
def test_truncated_discrete_laplace_infinite_range(sens, eps):
    """points=inf agrees with a huge finite range, and its loss holds on {0..N}."""
    t_inf = float(truncated_discrete_laplace_scale(sens, np.inf, eps)[0])
    t_big = float(truncated_discrete_laplace_scale(sens, 2000, eps)[0])
    assert t_inf == pytest.approx(t_big, rel=1e-9)
    assert truncated_discrete_laplace_loss(t_inf, sens, 2000) <= eps + 1e-9
    if sens == 1 and eps == 1.0:
        assert round(t_inf, 4) == 1.285


# ----------------------------------------------------------------------------- small releases
#
# Releases of at most SMALL_SIZE entries take a Python-number path in
# pandas_dp.noise.bounding (integer arithmetic for exact sums, floats for counts). It must
# give the very numbers of the numpy/Fraction path: same seed, same release.


def _release_both_ways(monkeypatch, apply, values, plan, seed):
    from pandas_dp.noise import bounding
    from pandas_dp.noise.mechanisms.constants import SMALL_SIZE

    fast = apply(values, plan, RandomSource(seed))
    monkeypatch.setattr(bounding, "SMALL_SIZE", 0)
    slow = apply(values, plan, RandomSource(seed))
    monkeypatch.setattr(bounding, "SMALL_SIZE", SMALL_SIZE)
    return fast, slow


def _exact_cases(mechanism, bounding_mode):
    """(plan, values) of 120 trials: exact sums (Fractions, ints, floats; inside,
    outside and on the ends of the range; exactly half a grid step from a grid
    point, where rounding goes to even), finite and infinite ranges."""
    from pandas_dp.noise.plans import plan_noise, range_centre

    rng = np.random.default_rng(3)
    delta = 1e-6 if mechanism == "gaussian" else 0.0
    ranges = [(-50.0, 50.0), (0.0, 1e15), (-np.inf, np.inf), (2.5, np.inf), (-3e9, -3e9 + 2)]
    for trial in range(120):
        k = 1 + trial % 4
        lo_hi = [ranges[(trial + i) % len(ranges)] for i in range(k)]
        lo = np.array([r[0] for r in lo_hi])
        hi = np.array([r[1] for r in lo_hi])
        sens = rng.uniform(0.01, 10.0, k)
        plan = plan_noise(
            sens, lo, hi, epsilon=1.0, delta=delta, mechanism=mechanism, bounding=bounding_mode
        )
        c, _ = range_centre(lo, hi)
        values: list[object] = []
        for i in range(k):
            g = Fraction(float(plan.granularity[i]))
            centre = Fraction(float(c[i]))
            choice = trial % 5
            if choice == 0:  # a tie: half a step from a grid point
                values.append(centre + g * (int(rng.integers(-1000, 1000)) + Fraction(1, 2)))
            elif choice == 1:  # far outside any finite range
                values.append(Fraction(int(rng.integers(-(10**18), 10**18)), 3))
            elif choice == 2:
                values.append(int(rng.integers(-100, 100)))
            elif choice == 3:
                values.append(float(rng.normal(0.0, 30.0)))
            else:
                values.append(Fraction(int(rng.integers(-(10**6), 10**6)), 2**40 + 1))
        yield trial, plan, values


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("bounding_mode", ["bit", "none"])
def test_exact_release_in_integers_equals_fraction_arithmetic(mechanism, bounding_mode):
    """The integer arithmetic of an exact release (any size, bit or none) gives the
    numbers of the plain Fraction arithmetic: clamp, ``M = round((x - c) / g)``
    (ties to even), ``c + g (M + K)`` rounded once to a double, then the clamp of
    the release for ``bit``; for the same draws, bit for bit."""
    from pandas_dp.noise import bounding
    from pandas_dp.noise.plans import range_centre

    rng = np.random.default_rng(4)
    for trial, plan, values in _exact_cases(mechanism, bounding_mode):
        draws = [int(d) for d in rng.integers(-(10**9), 10**9, len(values))]
        got = bounding._apply_exact_integers(np.array(values, dtype=object), plan, draws)
        c, _ = range_centre(plan.lower, plan.upper)
        want = []
        for i, v in enumerate(values):
            lo, hi = float(plan.lower[i]), float(plan.upper[i])
            x = Fraction(v)
            x = max(x, Fraction(lo)) if math.isfinite(lo) else x
            x = min(x, Fraction(hi)) if math.isfinite(hi) else x
            ci, gi = Fraction(float(c[i])), Fraction(float(plan.granularity[i]))
            m0 = round((x - ci) / gi)
            release = bounding._ratio(*(ci + gi * (m0 + draws[i])).as_integer_ratio())
            want.append(min(max(release, lo), hi) if bounding_mode == "bit" else release)
        assert got.tolist() == want, (trial, values)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("bounding_mode", ["bit", "none"])
def test_small_exact_release_equals_vector_path(monkeypatch, mechanism, bounding_mode):
    """A few exact sums drawn by the small-vector sampler and by the vector sampler
    (as for any number of entries): bit-identical releases for the same seed."""
    from pandas_dp.noise.bounding import apply_noise_exact

    for trial, plan, values in _exact_cases(mechanism, bounding_mode):
        arr = np.array(values, dtype=object)
        fast, slow = _release_both_ways(monkeypatch, apply_noise_exact, arr, plan, trial)
        assert fast.tolist() == slow.tolist(), (trial, values)


@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
@pytest.mark.parametrize("bounding_mode", ["bit", "none"])
def test_small_count_release_equals_numpy_path(monkeypatch, mechanism, bounding_mode):
    """Counts (integer plans) of one to a few entries: the same releases on both paths."""
    from pandas_dp.noise.bounding import apply_noise
    from pandas_dp.noise.plans import plan_noise

    delta = 1e-6 if mechanism == "gaussian" else 0.0
    for trial in range(150):
        k = 1 + trial % 5
        upper = np.full(k, np.inf) if trial % 2 else np.full(k, 20.0)
        plan = plan_noise(
            np.ones(k),
            np.zeros(k),
            upper,
            epsilon=0.3 + trial % 3,
            delta=delta,
            mechanism=mechanism,
            bounding=bounding_mode,
            integer=True,
        )
        theta = np.arange(k, dtype=np.float64) * 7.0
        fast, slow = _release_both_ways(monkeypatch, apply_noise, theta, plan, trial)
        assert fast.tolist() == slow.tolist()
        assert fast.dtype == slow.dtype and fast.shape == slow.shape
