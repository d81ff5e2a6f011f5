"""Exact samplers, finite scales, the discrete Gaussian's own calibration, centred grids.

Sampling tests use fixed seeds, so they are deterministic; each states the false-alarm
rate it would have for a seed chosen at random (the probability that a correct
sampler fails it). Calibration tests recompute delta independently, by brute-force
summation over the joint output space.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import partial

import numpy as np
import pytest
from scipy import stats

from pandas_dp.noise import bounding
from pandas_dp.noise.bounding import apply_noise, halfwidth
from pandas_dp.noise.mechanisms import (
    RandomSource,
    _compiled,
    discrete_gaussian,
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
    discrete_laplace,
    gaussian_sigma,
    representable_scale,
    small,
    truncated_discrete_laplace,
)
from pandas_dp.noise.mechanisms import samplers as mech
from pandas_dp.noise.mechanisms.constants import SMALL_SIZE
from pandas_dp.noise.plans import plan_noise

ALPHA = 1e-4  # false-alarm rate of each sampling test


def chi_square(counts: np.ndarray, probs: np.ndarray, n: int) -> float:
    """p-value of a chi-square fit; cells with expected count < 20 are merged into
    their neighbour (from either end), so every cell has at least 20."""
    exp = list(probs * n)
    obs = list(counts.astype(float))
    while len(exp) > 1 and exp[-1] < 20:
        e, o = exp.pop(), obs.pop()
        exp[-1] += e
        obs[-1] += o
    while len(exp) > 1 and exp[0] < 20:
        e, o = exp.pop(0), obs.pop(0)
        exp[0] += e
        obs[0] += o
    return float(stats.chisquare(obs, exp).pvalue)


def truncated_pmf(scale: float, below: int, above: int) -> np.ndarray:
    k = np.arange(-below, above + 1)
    w = np.exp(-np.abs(k) / scale)
    return w / w.sum()


# ----------------------------------------------------------------------------- 1. finite


@pytest.mark.parametrize(
    ("sens", "eps", "integer"),
    [
        (1e6, 1e-310, False),  # sensitivity / epsilon overflows to inf
        (np.inf, 1.0, False),  # an infinite sensitivity (e.g. an infinite width)
        (1e6, 1e-310, True),
        (1.0, 1e-17, True),  # finite, but 1e17 integer steps: beyond the samplers
    ],
)
def test_plan_refuses_infinite_or_out_of_range_scales(sens, eps, integer):
    """The plan raises before anything is drawn, naming what overflowed; before,
    a scale of inf was planned and the sampler released ``value - 2**63``."""
    with pytest.raises(ValueError, match=r"epsilon=.*(scale|step|sensitivity)"):
        plan_noise(
            np.array([sens]), np.array([0.0]), np.array([10.0]), epsilon=eps, integer=integer
        )


def test_plan_refuses_infinite_gaussian_scale():
    with pytest.raises(ValueError, match="scale"):
        plan_noise(
            np.array([1e300]),
            np.array([0.0]),
            np.array([1.0]),
            epsilon=1e-10,
            delta=1e-5,
            mechanism="gaussian",
        )


@pytest.mark.parametrize("bad", [np.inf, np.nan, -1.0, 0.0, 2.0**53, 1e300])
def test_samplers_refuse_bad_scales(bad):
    src = RandomSource(0)
    with pytest.raises(ValueError):
        discrete_laplace(np.array([1.0, bad]), src)
    with pytest.raises(ValueError):
        discrete_gaussian(np.array([bad]), src)
    with pytest.raises(ValueError):
        truncated_discrete_laplace(np.array([bad]), 0.0, 5.0, src)


def test_sampler_accepts_its_largest_scale():
    k = discrete_laplace(np.full(1000, mech.MAX_SCALE), RandomSource(1))
    assert np.all(np.abs(k) < 2**62)
    assert np.abs(k).max() > 2**50  # drawn at the stated scale, not cut


# ----------------------------------------------------------------------------- 2. exact


@pytest.mark.parametrize("scale", [1 / 3, 0.2, 1.0, 2.5, 7.3])
def test_discrete_laplace_pmf_exact(scale):
    """Chi-square of |K| and of the sign against the exact pmf; alpha = 1e-4 in total.

    The scale used is ``representable_scale(scale)`` (a rational a hair above)."""
    t = float(representable_scale(scale)[0])
    assert scale <= t < scale * (1 + 2.0**-38)
    n = 200_000
    k = discrete_laplace(np.full(n, scale), RandomSource(11))
    top = int(40 * t) + 2
    support = np.arange(-top, top + 1)
    p = np.exp(-np.abs(support) / t)
    p /= p.sum()
    counts = np.bincount(np.clip(k, -top, top) + top, minlength=support.size)
    assert chi_square(counts, p, n) > ALPHA / 2
    pos, neg = int((k > 0).sum()), int((k < 0).sum())
    assert stats.binomtest(pos, pos + neg).pvalue > ALPHA / 2


def test_geometric_building_block_exact():
    """P(V = v) = e^{-v} (1 - e^{-1}): chi-square over v = 0..14; alpha = 1e-4."""
    n = 300_000
    v = mech._geometric_e1(n, RandomSource(5)).astype(np.int64)
    probs = np.exp(-np.arange(15.0)) * (1 - math.exp(-1))
    probs = np.append(probs, math.exp(-15.0))
    counts = np.bincount(np.minimum(v, 15), minlength=16)
    assert chi_square(counts, probs, n) > ALPHA


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(3, 8), Fraction(1, 2), Fraction(1)])
def test_bernoulli_exp_pow2_exact(gamma):
    """Frequency of Bernoulli(exp(-gamma)) within a two-sided z-test; alpha = 1e-4."""
    n = 200_000
    j = 40
    num = np.full(n, int(gamma * 2**j), dtype=np.uint64)
    assert Fraction(int(num[0]), 2**j) == gamma
    b = mech._bernoulli_exp_pow2(num, np.full(n, j, dtype=np.int64), RandomSource(8))
    p = math.exp(-float(gamma))
    z = stats.norm.isf(ALPHA / 2)
    assert abs(b.mean() - p) <= z * math.sqrt(p * (1 - p) / n) + 1e-12


@pytest.mark.parametrize(("num", "den"), [(0, 1), (1, 3), (7, 3), (10**30 + 1, 10**30), (5, 2)])
def test_bernoulli_exp_rational_exact(num, den):
    """Bernoulli(exp(-num/den)) with Python integers (the discrete Gaussian's
    acceptance test); two-sided z-test, alpha = 1e-4."""
    n = 100_000
    b = mech._bernoulli_exp_rational([num] * n, [den] * n, RandomSource(9))
    p = math.exp(-num / den)
    z = stats.norm.isf(ALPHA / 2)
    assert abs(b.mean() - p) <= z * math.sqrt(max(p * (1 - p), 1e-12) / n) + 1e-12


class _TieSource(RandomSource):
    """Every 64-bit word equal to ``w``, except words drawn in batches of one
    (the big-integer tie break), which come from a seeded generator."""

    def __init__(self, w: int, seed: int) -> None:
        super().__init__(seed)
        self.w = np.uint64(w)

    def bits(self, size: int) -> np.ndarray:
        if size == 1:
            return super().bits(1)
        return np.full(size, self.w, dtype=np.uint64)


def test_bernoulli_exp_rational_tie_break_is_exact():
    """When the first word equals floor(2^64 r / den), the rest of the uniform is
    compared exactly. With r/den = 1/3, a word equal to floor(2^64/3) ties term 1;
    the tie succeeds with probability frac(2^64/3) = 1/3 (z-test, alpha = 1e-4)."""
    w = (1 << 64) // 3
    wins = 0
    n = 3000
    for seed in range(n):
        # one entry, gamma = 1/3; the geometric part (size 3 draws) sees words w ...
        src = _TieSource(w, seed)
        coin = mech._bernoulli_exp_rational([1], [3], src)
        wins += int(coin[0])
    # term 1 succeeds iff the tie break succeeds (prob. 1/3, given (2^64 mod 3) = 1);
    # terms 2.. compare w with floor(F / k) < w: they fail, so the series stops at
    # k = 2 (even: reject) after a success, or at k = 1 (odd: accept) after a failure;
    # the geometric part needs V >= 0, always true.
    p = 2 / 3
    z = stats.norm.isf(ALPHA / 2)
    assert abs(wins / n - p) <= z * math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize(
    ("scale", "below", "above"),
    [
        pytest.param(1.7, 0, 40, marks=pytest.mark.slow),  # two-sided proposal, lower end
        pytest.param(1.7, 6, 9, marks=pytest.mark.slow),  # two-sided proposal, value inside
        (50.0, 3, 10),  # uniform proposal: range narrower than the scale
        (4.0, 2, 6),  # uniform proposal, N = 2T exactly at the switch
        (0.3, 0, 1),
    ],
)
def test_truncated_discrete_laplace_exact_pmf(scale, below, above):
    """Chi-square against the exact truncated pmf; alpha = 1e-4."""
    t = float(representable_scale(scale)[0])
    n = 150_000
    k = truncated_discrete_laplace(np.full(n, scale), below, above, RandomSource(21))
    assert k.min() >= -below and k.max() <= above
    counts = np.bincount(k + below, minlength=below + above + 1)
    assert chi_square(counts, truncated_pmf(t, below, above), n) > ALPHA


@pytest.mark.slow
def test_truncated_discrete_laplace_one_sided():
    """An infinite side: P(k) proportional to e^{-|k|/t} on k >= -3; alpha = 1e-4."""
    n = 150_000
    k = truncated_discrete_laplace(np.full(n, 2.0), 3.0, np.inf, RandomSource(4))
    assert k.min() >= -3
    top = 60
    p = truncated_pmf(2.0, 3, 2000)[: top + 3 + 1]
    p = np.append(p, 1 - p.sum())
    counts = np.bincount(np.minimum(k + 3, top + 4), minlength=top + 5)
    assert chi_square(counts, p, n) > ALPHA


def _forced(monkeypatch, target: int, j: int, s: int) -> RandomSource:
    """A source and a geometric draw forcing the exact sampler's proposal to ``target``.

    The proposal is ``+-floor((U + 2^j V) / s)``; for ``X = |target| s`` take
    ``V = X // 2^j`` (the geometric part, stubbed) and ``U = X mod 2^j``, the top ``j``
    bits of every word, whose lowest bit is the sign. ``U`` is kept with probability
    ``exp(-U / 2^j) > 0`` (the stub's words make that Bernoulli succeed), and
    ``P(V = v) = e^{-v}(1 - e^{-1}) > 0``: the forced outcome has positive probability.
    """
    x = abs(target) * s
    v, u = divmod(x, 1 << j)
    monkeypatch.setattr(mech, "_geometric_e1", lambda size, src: np.full(size, v, dtype=np.uint64))
    monkeypatch.setattr(small, "geometric_e1", lambda size, src: [v] * size)
    word = (u << (64 - j)) | int(target < 0)

    class Words(RandomSource):
        def bits(self, size: int) -> np.ndarray:
            return np.full(size, word, dtype=np.uint64)

    return Words(0)


@pytest.mark.parametrize("theta", [0.0, 1.0])
def test_every_point_of_a_truncated_range_is_reachable(monkeypatch, theta):
    """Count (sensitivity 1) truncated to [0, 300]: from the neighbours theta = 0 and
    theta = 1, every integer of the range -- up to ~230 noise scales away -- comes out
    for some random outcome of positive probability. The old 53-bit inverse CDF
    reached nothing beyond ~37 scales, and which far points it reached depended on
    theta."""
    plan = plan_noise(
        np.array([1.0]),
        np.array([0.0]),
        np.array([300.0]),
        epsilon=1.0,
        bounding="truncated",
        integer=True,
    )
    t = float(plan.scale[0])
    j, s = mech._split_scale(np.array([t]))
    reached = set()
    for target in range(0, 301):
        src = _forced(monkeypatch, int(target - theta), int(j[0]), int(s[0]))
        out = apply_noise(np.array([theta]), plan, src)
        reached.add(int(out[0]))
    assert reached == set(range(301))
    assert 300 / t > 200


def test_truncated_real_release_far_out(monkeypatch):
    """A real-valued truncated release lands ~30 scales from the true value."""
    plan = plan_noise(
        np.array([0.01]), np.array([0.0]), np.array([1.0]), epsilon=1.0, bounding="truncated"
    )
    s_real = float(plan.scale[0])
    g = float(plan.granularity[0])
    units = s_real / g
    j, s = mech._split_scale(np.array([units]))
    steps = round(30 * units)
    out = apply_noise(np.array([0.2]), plan, _forced(monkeypatch, steps, int(j[0]), int(s[0])))
    assert out[0] - 0.2 == pytest.approx(30 * s_real, rel=1e-6)
    assert 0.0 <= out[0] <= 1.0


# ----------------------------------------------------------------------------- 3. Gaussian


def brute_delta(sigma: float, shift: int, eps: float, coords: int) -> float:
    """sum_x max(0, p(x) - e^eps q(x)) over the joint grid of ``coords`` coordinates,
    p = N_Z(0, sigma^2)^coords, q shifted by ``shift`` in every coordinate."""
    half = int(30 * sigma) + shift + 5
    x = np.arange(-half, half + 1)
    logw = -(x.astype(float) ** 2) / (2 * sigma**2)
    logz = np.logaddexp.reduce(logw)
    logp1 = logw - logz
    logq1 = -((x - shift).astype(float) ** 2) / (2 * sigma**2) - logz
    logp = logp1
    logq = logq1
    for _ in range(coords - 1):
        logp = np.add.outer(logp, logp1)
        logq = np.add.outer(logq, logq1)
    diff = np.exp(logp) - np.exp(eps + logq)
    return float(diff[diff > 0].sum())


@pytest.mark.parametrize(
    ("sigma", "shift", "eps", "coords"),
    [(0.5, 1, 1.0, 1), (2.0, 1, 0.5, 1), (1.3, 2, 2.0, 1), (0.7, 1, 3.0, 2), (1.1, 1, 0.3, 3)],
)
def test_discrete_gaussian_delta_matches_brute_force(sigma, shift, eps, coords):
    got = discrete_gaussian_delta(sigma, shift, eps, coords)
    want = brute_delta(sigma, shift, eps, coords)
    assert got == pytest.approx(want, rel=1e-9, abs=1e-15)
    assert got >= want - 1e-15  # never below


def test_continuous_sigma_understates_discrete_delta():
    """REFERENCE §11 check cases: a count at (8, 1e-2) with the continuous sigma has
    delta 2.86e-2; a histogram (two unit shifts) at (16, 1e-5) has 2x the delta."""
    s = gaussian_sigma(1.0, 8.0, 1e-2)
    assert brute_delta(s, 1, 8.0, 1) == pytest.approx(2.86e-2, rel=2e-3)
    assert discrete_gaussian_delta(s, 1, 8.0) == pytest.approx(2.86e-2, rel=2e-3)
    s = gaussian_sigma(math.sqrt(2), 16.0, 1e-5)
    assert brute_delta(s, 1, 16.0, 2) == pytest.approx(2e-5, rel=0.01)


@pytest.mark.parametrize(
    ("eps", "delta", "coords", "joint_l1"),
    [(8.0, 1e-2, 1, None), (16.0, 1e-5, 2, 2.0), (1.0, 1e-5, 1, None), (2.0, 1e-3, 3, 3.0)],
)
def test_integer_gaussian_plan_meets_its_delta(eps, delta, coords, joint_l1):
    """plan_noise(integer=True, mechanism='gaussian') is (eps, delta)-DP by brute
    force; 0.99 times its sigma is not (the calibration is tight). Fails before: the
    continuous sigma was used."""
    k = coords
    plan = plan_noise(
        np.ones(k),
        np.zeros(k),
        np.full(k, np.inf),
        epsilon=eps,
        delta=delta,
        mechanism="gaussian",
        bounding="none",
        integer=True,
        joint_l1=joint_l1,
        joint_l2=None if joint_l1 is None else math.sqrt(joint_l1),
    )
    sigma = float(plan.scale[0])
    assert np.all(plan.scale == sigma)
    assert sigma == discrete_gaussian_sigma(1, eps, delta, k)
    assert brute_delta(sigma, 1, eps, k) <= delta
    assert brute_delta(0.99 * sigma, 1, eps, k) > delta


# ----------------------------------------------------------------------------- 4. grid


@pytest.mark.parametrize(("lo", "hi"), [(1e15, 1e15 + 1), (0.0, 1.0), (-3e9, -3e9 + 2)])
def test_noise_inflation_follows_the_width(lo, hi):
    """Effective scale / nominal scale stays ~1 however large the bounds are (was
    ~2500 for (1e15, 1e15+1) at sensitivity 1e-4: the grid followed max |bound|)."""
    sens = 1e-4
    plan = plan_noise(np.array([sens]), np.array([lo]), np.array([hi]), epsilon=1.0)
    assert float(plan.scale[0]) / sens < 1 + 1e-6


def test_centred_release_is_honest_near_1e15():
    """Releases around 1e15 stay within the stated half-width (95%: at most 5% out,
    one-sided binomial test, alpha = 1e-4) and in the range."""
    lo, hi = 1e15, 1e15 + 1
    m = 20_000
    theta = 1e15 + 0.375
    plan = plan_noise(np.full(m, 0.3), np.full(m, lo), np.full(m, hi), epsilon=1.0, joint_l1=1.0)
    out = apply_noise(np.full(m, theta), plan, RandomSource(2))
    assert np.all((out >= lo) & (out <= hi))
    h = halfwidth(plan, 0.05)
    miss = int((np.abs(out - theta) > h).sum())
    assert stats.binomtest(miss, m, 0.05, alternative="greater").pvalue > ALPHA
    assert abs(float(np.mean(out)) - theta) < 0.05


def test_exact_grid_rounding():
    """round((x - c) / g) is computed exactly (against Fractions), including values
    far from the centre where x - c is not a double."""
    rng = np.random.default_rng(0)
    c = np.array([5e14 - 0.5, 0.1, 1e15 + 0.5, -7.25])
    g = np.array([2.0**-3, 2.0**-50, 2.0**-52, 2.0**-10])
    for _ in range(50):
        x = c + rng.normal(size=4) * np.array([5e14, 1e-3, 0.5, 3.0])
        x[0] = rng.choice([-1.0, 0.1, 3.3e14])
        for mode in ("round", "floor", "ceil"):
            got = bounding._grid_units(x, c, g, mode)
            for xi, ci, gi, ni in zip(x, c, g, got, strict=True):
                q = (Fraction(float(xi)) - Fraction(float(ci))) / Fraction(float(gi))
                if mode == "floor":
                    assert ni == math.floor(q)
                elif mode == "ceil":
                    assert ni == math.ceil(q)
                else:
                    assert abs(Fraction(int(ni)) - q) <= Fraction(1, 2)


# ----------------------------------------------------------------------------- 5. small path
#
# Vectors of at most SMALL_SIZE entries are drawn by pandas_dp.noise.mechanisms.small, a
# pure-Python transcription of the vectorised samplers that reads the same words in
# the same order. Two kinds of test: (a) the two paths return identical draws for the
# same word stream -- including streams rigged to make the rare branches (alternating
# series tails, rejected uniforms, big geometric draws) common; (b) the small path's
# own draws fit the exact pmf (so a bug shared by both paths would still be caught).


def _rig(w: np.ndarray) -> np.ndarray:
    """A third of the words pushed to extremes: tiny (every comparison succeeds, so
    alternating series run long) or within 15 of 2**64 (every uniform below 24 or 720
    is rejected). Each word's fate depends on the word alone, so a rigged stream does
    not depend on how reads are split."""
    w = w.copy()
    kind = w % np.uint64(3)
    w[kind == 1] >>= np.uint64(58)
    w[kind == 2] = np.uint64(2**64 - 1) - (w[kind == 2] >> np.uint64(60))
    return w


class _RiggedSource(RandomSource):
    """Seeded words, rigged (:func:`_rig`)."""

    def bits(self, size: int) -> np.ndarray:
        return _rig(super().bits(size))


def _both_paths(monkeypatch, draw, scales, source):
    """(small-path draws, vectorised draws) of ``draw`` on ``scales``."""
    assert 0 < len(scales) <= mech.SMALL_SIZE == SMALL_SIZE
    fast = draw(np.array(scales), source()).tolist()
    monkeypatch.setattr(mech, "SMALL_SIZE", 0)
    slow = draw(np.array(scales), source()).tolist()
    monkeypatch.setattr(mech, "SMALL_SIZE", SMALL_SIZE)
    return fast, slow


SCALE_SETS = [
    [2.0],
    [1 / 3, 7.3],
    [2.0**-20, 2.0**52],
    [8.6e11],
    [0.01, 5.0, 1e3, 2.0**40],
    [0.5] * 16,
]


@pytest.mark.parametrize("rigged", [False, True])
def test_small_path_draws_equal_vectorised_laplace(monkeypatch, rigged):
    """Same seed, same draws on both paths (deterministic; fails if one word is
    read out of order)."""
    kind = _RiggedSource if rigged else RandomSource
    for seed in range(300):
        scales = SCALE_SETS[seed % len(SCALE_SETS)]
        fast, slow = _both_paths(monkeypatch, discrete_laplace, scales, partial(kind, seed))
        assert fast == slow, (seed, scales)


@pytest.mark.parametrize("rigged", [False, True])
def test_small_path_draws_equal_vectorised_gaussian(monkeypatch, rigged):
    kind = _RiggedSource if rigged else RandomSource
    for seed in range(150):
        sigmas = [[1.0], [3.7, 0.2], [1e6], [50.0] * 5, [1e-3]][seed % 5]
        fast, slow = _both_paths(monkeypatch, discrete_gaussian, sigmas, partial(kind, seed))
        assert fast == slow, (seed, sigmas)


def test_small_building_blocks_equal_vectorised():
    """Each building block, entry for entry, on both ordinary and rigged words."""
    for seed in range(200):
        n = 1 + seed % 7
        for kind in (RandomSource, _RiggedSource):
            geo = mech._geometric_e1(n, kind(seed)).tolist()
            assert small.geometric_e1(n, kind(seed)) == geo
            one = mech._bernoulli_exp_one(n, kind(seed)).tolist()
            assert small.bernoulli_exp_one(n, kind(seed)) == one
            num = [int(x) for x in np.random.default_rng(seed).integers(0, 2**40, n)]
            pow2 = mech._bernoulli_exp_pow2(
                np.array(num, dtype=np.uint64), np.full(n, 40), kind(seed)
            ).tolist()
            assert small.bernoulli_exp_pow2(num, [40] * n, kind(seed)) == pow2
            nums, dens = [seed % 13 + 1] * n, [3] * n
            rat = mech._bernoulli_exp_rational(nums, dens, kind(seed)).tolist()
            assert small.bernoulli_exp_rational(nums, dens, kind(seed)) == rat


def test_small_path_tie_break_equals_vectorised():
    """The exact tie break of the rational Bernoulli (words equal to the threshold)
    reads its extra words in the same order on both paths."""
    w = (1 << 64) // 3
    for seed in range(200):
        a = mech._bernoulli_exp_rational([1], [3], _TieSource(w, seed)).tolist()
        assert small.bernoulli_exp_rational([1], [3], _TieSource(w, seed)) == a


@pytest.mark.parametrize("scale", [1 / 3, 2.5])
def test_small_path_discrete_laplace_pmf_exact(scale):
    """One draw per call, as a scalar release makes them, from the OS CSPRNG:
    chi-square against the exact pmf, alpha = 1e-4 (not seeded: the false-alarm rate
    is the stated one on every run)."""
    t = float(representable_scale(scale)[0])
    n = 40_000
    src = RandomSource()
    k = np.array([discrete_laplace(np.array([scale]), src)[0] for _ in range(n)])
    top = int(40 * t) + 2
    support = np.arange(-top, top + 1)
    p = np.exp(-np.abs(support) / t)
    p /= p.sum()
    counts = np.bincount(np.clip(k, -top, top) + top, minlength=support.size)
    assert chi_square(counts, p, n) > ALPHA


def test_small_path_discrete_gaussian_pmf_exact():
    """Scalar discrete Gaussian draws (sigma = 1.5) against N_Z(0, 1.5^2);
    chi-square, alpha = 1e-4, OS CSPRNG."""
    sigma, n = 1.5, 20_000
    src = RandomSource()
    k = np.array([discrete_gaussian(np.array([sigma]), src)[0] for _ in range(n)])
    top = 12
    support = np.arange(-top, top + 1)
    p = np.exp(-(support**2) / (2 * sigma**2))
    p /= p.sum()  # the mass beyond +-12 is below 1e-14
    counts = np.bincount(np.clip(k, -top, top) + top, minlength=support.size)
    assert chi_square(counts, p, n) > ALPHA


def test_small_geometric_building_block_exact():
    """The pure-Python geometric: P(V = v) = e^{-v}(1 - e^{-1}); alpha = 1e-4."""
    n = 200_000
    v = np.array(small.geometric_e1(n, RandomSource(15)))
    probs = np.exp(-np.arange(15.0)) * (1 - math.exp(-1))
    probs = np.append(probs, math.exp(-15.0))
    counts = np.bincount(np.minimum(v, 15), minlength=16)
    assert chi_square(counts, probs, n) > ALPHA


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(3, 8), Fraction(1)])
def test_small_bernoulli_exp_pow2_exact(gamma):
    """The pure-Python Bernoulli(exp(-gamma)); two-sided z-test, alpha = 1e-4."""
    n, j = 100_000, 40
    b = small.bernoulli_exp_pow2([int(gamma * 2**j)] * n, [j] * n, RandomSource(18))
    p = math.exp(-float(gamma))
    z = stats.norm.isf(ALPHA / 2)
    assert abs(float(np.mean(b)) - p) <= z * math.sqrt(p * (1 - p) / n) + 1e-12


class _FakeUrandom:
    """``os.urandom`` as a seeded stream (rigged by :func:`_rig` if asked): a secure
    source then reads known words, in the same order however its reads are split."""

    def __init__(self, seed: int, rigged: bool) -> None:
        self.rng, self.rigged = np.random.default_rng(seed), rigged

    def __call__(self, n: int) -> bytes:
        w = np.frombuffer(self.rng.bytes(n), dtype=np.uint64)
        return (_rig(w) if self.rigged else w).tobytes()


@pytest.mark.skipif(_compiled.kernel() is None, reason="numba is not installed")
@pytest.mark.parametrize("rigged", [False, True])
@pytest.mark.parametrize("size", [1, 2, pytest.param(3, marks=pytest.mark.slow)])
def test_compiled_laplace_draws_equal_python(monkeypatch, rigged, size):
    """A secure source's small draws (1 to 3 entries of different scales), compiled
    where the kernel decides and in Python where it gives up, are the Python
    sampler's draws word for word, and leave the source at the same word
    (deterministic; fails if the kernel reads one word out of order, or consumes
    words when it gives up). Rigged words make the kernel give up often (rejected
    uniforms, long series); ordinary words let it decide most draws (about 97 %
    of one-entry ones, fewer for more entries, all of whose proposals must stay in
    its usual case), which is checked too."""
    import os

    kernel = _compiled.kernel()
    decided = []

    def counting(*args):
        out = kernel(*args)
        decided.append(out[1] >= 0)
        return out

    monkeypatch.setattr(_compiled, "ready", lambda: counting)
    scales = [2.0**-20, 1 / 3, 2.5, 3.0, 6.4e11, 2.0**40, 2.0**52]
    for seed, scale in enumerate(scales):
        js = small.laplace_split([scale, *scales[seed + 1 : seed + size]][:size] * size)[:size]
        j, s = zip(*js, strict=True)
        monkeypatch.setattr(os, "urandom", _FakeUrandom(seed, rigged))
        src = RandomSource()
        fast = [small.discrete_laplace_split(js, src) for _ in range(1500)] + [src.words(3)]
        monkeypatch.setattr(os, "urandom", _FakeUrandom(seed, rigged))
        src = RandomSource()
        slow = [small.discrete_laplace_js(list(j), list(s), src) for _ in range(1500)]
        assert fast == [*slow, src.words(3)], js
    share = np.mean(decided)
    assert (share < 0.5) if rigged else (share > 0.95 - 0.1 * size)


def _long_series(w: np.ndarray) -> np.ndarray:
    """A third of the words made tiny (every comparison succeeds, so alternating
    series run past their first block) and none rejected: streams on which the
    kernel decides every draw through its rare branches."""
    w = w.copy()
    tiny = w % np.uint64(3) == np.uint64(1)
    w[tiny] >>= np.uint64(58)
    return w


def _consumed(draw, words: np.ndarray) -> tuple[list[int], int]:
    """``draw(source)`` on a source serving ``words`` (then zeros): the draws, and
    how many words it read."""
    read = [0]

    class Served(RandomSource):
        def bits(self, size: int) -> np.ndarray:
            out = words[read[0] : read[0] + size]
            read[0] += size
            return np.concatenate([out, np.zeros(size - out.size, dtype=np.uint64)])

    return draw(Served(0)).tolist(), read[0]


@pytest.mark.skipif(_compiled.kernel() is None, reason="numba is not installed")
@pytest.mark.parametrize("stream", ["plain", "long series", "rigged"])
def test_compiled_vector_draws_equal_numpy_word_for_word(stream):
    """The kernel on a block of words returns the numpy sampler's draws on the same
    words and stops at the word where it stopped (deterministic: fails if one word
    is read out of order), through every branch: long alternating series (the
    acceptance test's and the geometric trials'), several rounds, mixed scales.
    On rigged streams (rejected uniforms) it gives up, having read nothing."""
    kernel = _compiled.kernel()
    outcomes = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        size = [17, 40, 300, 2000][seed % 4]
        scales = np.exp(rng.uniform(np.log(2.0**-20), np.log(2.0**52), size))
        j, s = mech._split_scale(scales)
        w = np.frombuffer(rng.bytes(8 * 40 * size), dtype=np.uint64)
        w = {"plain": w, "long series": _long_series(w), "rigged": _rig(w)}[stream]
        draws, end = kernel(w, 0, _compiled.params(tuple(zip(j.tolist(), s.tolist(), strict=True))))
        outcomes.append(end >= 0)
        if end >= 0:
            assert (draws.tolist(), end) == _consumed(partial(mech._discrete_laplace_js, j, s), w)
        else:
            assert end == -1
    assert all(outcomes) if stream != "rigged" else not any(outcomes)


@pytest.mark.skipif(_compiled.kernel() is None, reason="numba is not installed")
@pytest.mark.parametrize("rigged", [False, True])
def test_secure_vector_draws_are_the_numpy_samplers(monkeypatch, rigged):
    """``discrete_laplace`` on a secure source, compiled: the numpy sampler's draws
    on the same stream of CSPRNG words, including when the kernel gives up (rigged
    words: the numpy sampler then reads the kernel's words again) and when it asks
    for more words (a few entries: a small block). Seeded sources never run it."""
    import os

    calls = []
    kernel = _compiled.kernel()

    def counting(*args):
        out = kernel(*args)
        calls.append(out[1])
        return out

    monkeypatch.setattr(_compiled, "kernel", lambda: counting)
    monkeypatch.setattr(_compiled, "_WORDS_PER_ROUND", 1.0)
    for seed in range(30):
        size = [17, 18, 500][seed % 3]
        scales = np.geomspace(2.0**-5, 2.0**45, size)
        monkeypatch.setattr(os, "urandom", _FakeUrandom(seed, rigged))
        fast = discrete_laplace(scales, RandomSource()).tolist()
        monkeypatch.setattr(os, "urandom", _FakeUrandom(seed, rigged))
        slow = mech._discrete_laplace_js(*mech._split_scale(scales), RandomSource()).tolist()
        assert fast == slow, seed
    assert set(calls) >= ({-1} if rigged else {-2}) and any(c >= 0 for c in calls) != rigged
    calls.clear()
    discrete_laplace(np.full(100, 2.0), RandomSource(5))
    assert calls == []


@pytest.mark.skipif(_compiled.kernel() is None, reason="numba is not installed")
def test_compiled_vector_draws_pmf_exact():
    """The compiled vector path's own draws (OS CSPRNG, not seeded) against the exact
    pmf at scale 2.5: chi-square of the values, alpha = 1e-4."""
    assert "numba" in __import__("sys").modules
    t = float(representable_scale(2.5)[0])
    n = 200_000
    k = discrete_laplace(np.full(n, 2.5), RandomSource())
    top = 102
    support = np.arange(-top, top + 1)
    p = np.exp(-np.abs(support) / t)
    p /= p.sum()
    counts = np.bincount(np.clip(k, -top, top) + top, minlength=support.size)
    assert chi_square(counts, p, n) > ALPHA


def test_the_kernel_is_loaded_after_its_warm_draws(monkeypatch):
    """A process that draws a few times never imports numba for it; after
    WARM_DRAWS one-entry draws the sampler asks for the kernel."""
    monkeypatch.setattr(_compiled, "_asked", 0)
    monkeypatch.setattr(_compiled, "kernel", lambda: "loaded")
    asked = [_compiled.ready() for _ in range(_compiled.WARM_DRAWS + 1)]
    assert asked == [None] * _compiled.WARM_DRAWS + ["loaded"]


@pytest.mark.skipif(_compiled.kernel() is None, reason="numba is not installed")
def test_seeded_sources_never_run_the_kernel():
    """A seeded source reads its generator exactly as far as asked: the compiled
    sampler, which needs words read ahead, is not run on it."""
    src = RandomSource(3)
    assert src.run_kernel(_compiled.kernel(), _compiled.params((small.split_scale(2.0),))) is None
    assert src.words(2) == RandomSource(3).words(2)


def test_words_follow_the_seeded_stream():
    """Seeded words are the generator's stream however the reads are split, so
    a seeded release is the same on either path."""
    a, b = RandomSource(4), RandomSource(4)
    split = a.words(3) + a.words(1) + a.words(12) + a.bits(5).tolist()
    assert split == b.words(21)


def test_secure_words_are_not_shared_across_a_fork(monkeypatch):
    """A secure source drops its read-ahead block when the process id changes (a
    forked child must not reuse its parent's noise)."""
    import os

    src = RandomSource()
    first = src.words(4)
    block = src._array.tolist()
    assert block[:4] == first
    monkeypatch.setattr(os, "getpid", lambda: -12345)
    child = src.words(4)
    assert child != block[4:8]
    assert src._array[:4].tolist() == child


def test_the_shared_secure_source():
    """Releases with secure noise share one source (its unread words serve the next
    release); a seeded release gets its own."""
    from pandas_dp.noise.mechanisms.source import secure_source
    from pandas_dp.request.settings import Settings

    assert Settings(1.0).source is secure_source() and secure_source().secure
    assert Settings(1.0, random_state=3).source is not secure_source()
    src = secure_source()
    src.words(1)
    left = src._array[src._pos :].tolist()
    assert src.words(len(left)) == left  # no word is dropped or served twice


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_fork_never_inherits_the_shared_sources_lock():
    """A child forked while another thread holds the shared source's lock can still
    draw (it gets a fresh lock, and its own words); without the reset it would
    wait forever, which the child's 10 s alarm turns into a failure."""
    import os
    import threading

    from pandas_dp.noise.mechanisms.source import secure_source

    src = secure_source()
    parent = src.words(2)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with src._lock:
            held.set()
            release.wait(30)

    thread = threading.Thread(target=hold)
    thread.start()
    held.wait(30)
    try:
        pid = os.fork()
        if pid == 0:  # the child: draw, exit 0 if it could and got fresh words
            import signal

            signal.alarm(10)
            ok = False
            try:
                ok = src.words(2) != parent and src._pid == os.getpid()
            finally:
                os._exit(0 if ok else 1)
    finally:
        release.set()
        thread.join()
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status


def test_secure_words_look_uniform():
    """Every bit position of secure words is fair: 20_000 words, each of the 64
    bit frequencies within a two-sided z-test at alpha = 1e-4 / 64."""
    src = RandomSource()
    w = np.array([src.words(1)[0] for _ in range(10_000)] + src.words(10_000), dtype=np.uint64)
    bits = (w[:, None] >> np.arange(64, dtype=np.uint64)) & np.uint64(1)
    freq = bits.mean(axis=0)
    z = stats.norm.isf(ALPHA / 128)
    assert np.all(np.abs(freq - 0.5) <= z * math.sqrt(0.25 / w.size))


def test_sources_copy_without_their_noise():
    """A copied or pickled seeded source continues the same stream; a secure one
    comes back empty (its read-ahead noise is never serialised)."""
    import copy
    import pickle

    a = RandomSource(9)
    assert pickle.loads(pickle.dumps(a)).words(3) == a.words(3)
    s = RandomSource()
    s.words(2)
    twin = copy.deepcopy(s)
    assert twin.secure and twin._array.size == 0 and twin._block is None
