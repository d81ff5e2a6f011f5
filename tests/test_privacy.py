"""Empirical privacy tests on worst-case neighbours, end to end.

Two kinds of test:

* The noise layer: calibrate with the library's public path
  (:func:`pandas_dp.noise.plans.plan_noise`, with the sensitivity and the output range
  from :mod:`pandas_dp.plan.sensitivity`), release the exact values of two neighbouring
  datasets many times with :func:`pandas_dp.noise.bounding.apply_noise`, and compare the
  two output distributions bin by bin. Liu's direct releases (public ``n``) are
  tested under ``neighbouring="substitute"``, the relation they are defined for.
* The default releases (``add_remove``: the frame's length private): the plan the
  library builds for ``mean`` / ``var`` (noisy count, centred sum, centred squares),
  run on frames differing by one added row, the statistic estimated by
  :mod:`pandas_dp.stats.estimators`; the released *value* is binned. The fast path is
  checked to reproduce the accessor's release exactly for the same seed.

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
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp import engines
from pandas_dp.noise.bounding import apply_noise, apply_noise_exact
from pandas_dp.noise.mechanisms import RandomSource
from pandas_dp.noise.plans import NoisePlan, plan_noise
from pandas_dp.plan import recentring
from pandas_dp.plan.plans import direct_allowance
from pandas_dp.plan.sensitivity import output_range, sensitivity
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.settings import Settings
from pandas_dp.stats import estimators as est
from pandas_dp.stats.moments import plan_moments
from pandas_dp.stats.shrinkage import variance_noise_sd

ALPHA = 1e-4
DRAWS = 200_000
EPS = 1.0
# Truncated noise is drawn by rejection: its cases are the long ones. They run with
# `pytest -m slow`; the bit and none cases of the same tests stay in the default run.
TRUNCATED = pytest.param("truncated", marks=pytest.mark.slow)


# ----------------------------------------------------------------------------- helpers


def releases(plan: NoisePlan, theta: float, seed: int, draws: int = DRAWS) -> np.ndarray:
    """A Poisson(``draws``) number of independent releases of ``theta`` under ``plan``."""
    m = int(np.random.default_rng(seed).poisson(draws))
    return apply_noise(np.full(m, theta), plan.tiled(m), RandomSource(seed))


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
    """The library's plan for one release of ``statistic`` (public inputs only).

    ``n`` is the public row count (``None`` under add/remove, where it is private).
    """
    sens = sensitivity(statistic, relation, a, b, n)
    lo, hi = output_range(statistic, a, b, n)
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


@pytest.mark.parametrize("bounding", ["none", "bit", TRUNCATED])
@pytest.mark.parametrize(("theta", "theta2"), MEAN_PAIRS)
def test_mean_worst_case_neighbours(bounding, theta, theta2):
    """Liu's direct mean on [0, 1] under substitute, n = 4 (sensitivity 1/4): every
    bin's log ratio <= eps.

    False-alarm rate 1e-4 (exact conditional binomial tests, Bonferroni over bins).
    """
    sens, plan = plan_for("mean_direct", "substitute", 0.0, 1.0, 4, bounding)
    assert sens == 0.25
    assert abs(theta - theta2) == sens
    a = real_bins(releases(plan, theta, 1), plan)
    b = real_bins(releases(plan, theta2, 2), plan)
    assert_eps_dp(a, b, EPS)


@pytest.mark.parametrize("bounding", ["none", "bit", TRUNCATED])
def test_var_worst_case_neighbours(bounding):
    """Liu's direct variance on [0, 1] under substitute, n = 3: var(0,0,0) = 0 versus
    var(0,0,1) = 1/3, which is both the sensitivity R²/n and the top of the range
    (n+1)R²/(4n). alpha = 1e-4."""
    sens, plan = plan_for("var_direct", "substitute", 0.0, 1.0, 3, bounding)
    theta, theta2 = np.var([0.0, 0.0, 0.0], ddof=1), np.var([0.0, 0.0, 1.0], ddof=1)
    assert theta2 - theta == pytest.approx(sens)
    assert float(plan.upper[0]) == pytest.approx(theta2)
    a = real_bins(releases(plan, theta, 3), plan)
    b = real_bins(releases(plan, min(theta2, float(plan.upper[0])), 4), plan)
    assert_eps_dp(a, b, EPS)


@pytest.mark.parametrize("bounding", ["bit", TRUNCATED])
def test_sum_add_remove_worst_case(bounding):
    """Sum on [0, 3] under add/remove (n private): the public range is one-sided,
    [0, inf). The empty frame (sum 0, at the bound: BIT's point mass) versus one
    record at 3 (sum 3); sensitivity max(|a|, |b|) = 3. Bins: 0 on its own, then
    width 0.3 up to 30, one tail bin. alpha = 1e-4."""
    sens, plan = plan_for("sum", "add_remove", 0.0, 3.0, None, bounding, eps=0.7)
    assert sens == 3.0
    assert float(plan.lower[0]) == 0.0 and math.isinf(float(plan.upper[0]))

    def bins(x: np.ndarray) -> np.ndarray:
        assert np.all(x >= 0)
        return np.where(x == 0, 0, 1 + np.minimum((x / 0.3).astype(np.int64), 100))

    a = bins(releases(plan, 0.0, 5))
    b = bins(releases(plan, 3.0, 6))
    assert_eps_dp(a, b, 0.7)


def test_bit_point_mass_ratio_is_e_to_the_eps():
    """BIT's mass at the lower end is 1/2 for θ = c0 and e^{-ε}/2 for θ = c0 + Δ: the
    boundary bin is the binding one, with log ratio ε (up to the grid's Δ/(Δ+γ)).
    Two-sided z-check on the log ratio at 1e-4."""
    _, plan = plan_for("mean_direct", "substitute", 0.0, 1.0, 4, "bit")
    a = releases(plan, 0.0, 7)
    b = releases(plan, 0.25, 8)
    pa, pb = np.mean(a == 0.0), np.mean(b == 0.0)
    se = math.sqrt((1 - pa) / (pa * a.size) + (1 - pb) / (pb * b.size))
    assert abs(math.log(pa / pb) - EPS) <= stats.norm.isf(ALPHA / 2) * se
    assert pa == pytest.approx(0.5, abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(("theta", "theta2"), MEAN_PAIRS)
def test_naive_truncation_exceeds_eps_while_calibrated_does_not(theta, theta2):
    """The paper's truncation with scale Δ/ε is not ε-DP; the calibrated scale is.

    Mean on [0, 1] with n = 4 (Δ = 1/4, ε = 1). With scale Δ/ε the renormalising
    constants are C(0) ≈ 0.491 and C(1/4) ≈ 0.791, so near the bound the density ratio
    reaches e^ε · 0.791/0.491 (log ≈ 1.48). The bin next to the boundary must show a log
    ratio significantly above ε (p < 1e-6), the calibrated plan must not (alpha = 1e-4).
    """
    sens, calibrated = plan_for("mean_direct", "substitute", 0.0, 1.0, 4, "truncated")
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


@pytest.mark.parametrize("bounding", ["none", "bit", TRUNCATED])
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


@pytest.mark.parametrize("statistic", ["count", "rows"])
@pytest.mark.parametrize("bounding", ["bit", TRUNCATED])
def test_count_add_remove_one_sided_range(statistic, bounding):
    """Counts under add/remove live on [0, inf): 0 versus 1. alpha = 1e-4."""
    _, plan = plan_for(statistic, "add_remove", 0.0, 1.0, None, bounding, integer=True)
    assert math.isinf(float(plan.upper[0]))
    a = integer_bins(releases(plan, 0, 31), plan, 15)
    b = integer_bins(releases(plan, 1, 32), plan, 15)
    assert_eps_dp(a, b, EPS)


@pytest.mark.slow
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


@pytest.mark.slow
def test_accessor_direct_mean_bit_worst_case():
    """df.dp.mean(method="direct", neighbouring="substitute") on [0, 1] with n = 1:
    [0.0] versus [1.0] (a substitution; Δ = 1 = the range).

    Through the public accessor, 10 000 (Poisson) releases of each frame; bins are the
    point masses at 0 and 1 and ten interior bins. alpha = 1e-4.
    """
    rng = np.random.default_rng(99)
    frames = [pd.DataFrame({"x": [0.0]}), pd.DataFrame({"x": [1.0]})]
    kw = {"epsilon": EPS, "bounds": (0, 1), "method": "direct", "neighbouring": "substitute"}
    labels = []
    for df in frames:
        m = int(rng.poisson(10_000))
        x = np.array([float(df.dp.mean("x", **kw, random_state=rng)) for _ in range(m)])
        assert np.all((x >= 0) & (x <= 1))
        labels.append(np.where(x == 0, 0, np.where(x == 1, 1, 2 + np.minimum(x * 10, 9))))
    a, b = (lab.astype(np.int64) for lab in labels)
    ratio = assert_eps_dp(a, b, EPS)
    # and the boundary mass ratio is really near e^eps (the test is not vacuous)
    assert ratio[0] == pytest.approx(EPS, abs=0.15)
    meta = frames[0].dp.mean("x", **kw, random_state=0).attrs["dp"]
    # the table's R/n = 1 plus the exact accumulation's rounding allowance q/n
    allowance = direct_allowance("mean_direct", 1.0, 1)
    assert 0 < allowance < 1e-10
    assert meta.sensitivity["x: mean_direct"] == 1.0 + allowance and meta.bounding == "bit"
    assert meta.n == 1 and meta.neighbouring == "substitute"


# ----------------------------------------------------------------------------- default releases
#
# The default mean and var (add_remove: the length is private) are plans over the
# noisy count C, centred sum S and centred squares Q of the column, estimated as
# m + S/max(C, 1) and (Q - S²/C')/(C' - ddof); with Laplace noise and bounding bit
# or none, C and S come from the two bound sums (Σ (x - a), Σ (b - x)), one vector.
# Neighbours differ by one added row.
# The released value is a post-processing of (C, S, Q), each calibrated to its share
# of epsilon, so its privacy loss is at most epsilon; the test checks that the
# release the library builds keeps it there.


def default_releases(statistic, values, seed, draws=DRAWS, *, eps=EPS, shrink=1.0, bounding="bit"):
    """A Poisson(``draws``) number of default releases of ``statistic`` of ``values``
    on [0, 1].

    Builds the plan the accessor builds (:func:`pandas_dp.stats.moments.plan_moments`),
    takes the exact sufficient statistics from the engine, noises each of them with
    its calibrated :class:`NoisePlan` (its scale times ``shrink``: 1 is the library's
    calibration, below 1 a deliberately broken one) and estimates the statistic with
    :mod:`pandas_dp.stats.estimators`. With ``draws=None`` it makes one release with
    ``RandomSource(seed)``, drawing in the plan's order, as the accessor does.
    """
    settings = Settings(epsilon=eps, bounding=bounding)
    decl = NumericDeclaration("x", 0.0, 1.0)
    plan, entries = plan_moments([statistic], {"x": decl}, settings, "moments")
    plan.calibrate()
    keys = entries[("x", statistic)].keys
    sums = engines.moments(pd.Series(values, dtype=float), 0.0, 1.0, squares=True)
    exact = {
        "count": float(sums.count[0]),
        "centred_sum": sums.total_value[0],
        "centred_squares": sums.squares_value[0],
    }
    m = 1 if draws is None else int(np.random.default_rng(seed).poisson(draws))
    src = RandomSource(seed)
    noisy = {}
    shrunk = {}
    for stat, key in keys.items():  # the plan's measurement order
        noise = plan.measurements[key].noise
        shrunk[stat] = noise = dataclasses.replace(noise, scale=noise.scale * shrink)
        if stat == "recentred_sum":  # a second stage, below
            continue
        if stat == "bound_sums":
            # the pair (Σ (x - a), Σ (b - x)) composed from the engine's exact sums as
            # the plan composes it, noised as one vector per release
            mid = Fraction(1, 2)  # the engine's midpoint of [0, 1]
            n, total = int(sums.count[0]), sums.total_exact[0]
            pairs = np.empty(2 * m, dtype=object)
            pairs[0::2], pairs[1::2] = total + n * mid, n * mid - total
            out = apply_noise_exact(pairs, noise.tiled(m), src)
            noisy["p"], noisy["q"] = out[0::2], out[1::2]
            continue
        theta = np.clip(np.full(m, exact[stat]), noise.lower[0], noise.upper[0])
        noisy[stat] = apply_noise(theta, noise.tiled(m), src)
    clamp = bounding != "none"
    if "bound_sums" in keys:  # the count and the centred sum the pair gives
        pq = (noisy["p"], noisy["q"])
        noisy["count"] = np.frompyfunc(lambda p, q: est.bound_sums_count(p, q, 0.0, 1.0), 2, 1)(*pq)
        noisy["centred_sum"] = np.frompyfunc(est.bound_sums_centred, 2, 1)(*pq)
    if statistic == "mean" and "bound_sums" in keys:
        fn = np.frompyfunc(
            lambda p, q: est.bound_sums_mean_value(p, q, 0.0, 1.0, clamp=clamp), 2, 1
        )
        return fn(noisy["p"], noisy["q"]).astype(np.float64)
    if statistic == "mean":
        # the second stage as the plan runs it: the exact sum about the centre the
        # released count and sum give, per release, then its noise
        first = (
            plan.measurements[keys["count"]].noise,
            plan.measurements[keys["centred_sum"]].noise,
        )
        variances = tuple(p.variance for p in first)
        recentred = plan.measurements[keys["recentred_sum"]]
        exact_runs = {
            keys["count"]: np.full(m, exact["count"]),
            keys["centred_sum"]: np.full(m, sums.total_exact[0], dtype=object),
        }
        released = {keys["count"]: noisy["count"], keys["centred_sum"]: noisy["centred_sum"]}
        values = recentring.recentred_values(recentred.source, exact_runs, released, variances)
        noisy["recentred_sum"] = apply_noise_exact(values, shrunk["recentred_sum"].tiled(m), src)
        t_var = recentred.calibrated.variance
        fn = np.frompyfunc(
            lambda c, s, t: est.recentred_mean_value(
                c, s, t, (*variances, t_var), 0.0, 1.0, clamp=clamp
            ),
            3,
            1,
        )
        return fn(noisy["count"], noisy["centred_sum"], noisy["recentred_sum"]).astype(np.float64)
    top = output_range("var", 0.0, 1.0, ddof=1)[1]
    # the noises' variances as the plan publishes them (on [0, 1]: R = 1)
    q_var = plan.measurements[keys["centred_squares"]].calibrated.variance
    if "bound_sums" in keys:
        pv = plan.measurements[keys["bound_sums"]].calibrated.variance
        variances = (2.0 * pv, pv / 2.0, q_var)
    else:
        c_var, s_var = (
            plan.measurements[keys[k]].calibrated.variance for k in ("count", "centred_sum")
        )
        variances = (c_var, s_var, q_var)
    fn = np.frompyfunc(
        lambda c, s, q: est.var_value(
            c,
            s,
            q,
            ddof=1,
            half_width=0.5,
            upper_range=top,
            clamp=clamp,
            noise_sd=variance_noise_sd(c, s, q, variances, 1),
        ),
        3,
        1,
    )
    return fn(noisy["count"], noisy["centred_sum"], noisy["centred_squares"]).astype(np.float64)


def value_bins(x: np.ndarray, top: float, bins: int = 40) -> np.ndarray:
    """The range ends on their own (the clamp's point masses), ``bins`` equal bins
    inside ``[0, top]``."""
    assert np.all((x >= 0) & (x <= top))
    inside = 2 + np.minimum((x / top * bins).astype(np.int64), bins - 1)
    return np.where(x == 0, 0, np.where(x == top, 1, inside))


@pytest.mark.parametrize("statistic", ["mean", "var"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_fast_path_is_the_accessor(statistic, seed):
    """The simulation below is the accessor's release: same plan, same draws, same
    estimate, bit for bit, for the same seed."""
    for values in ([1.0], [0.0, 1.0], [0.2, 0.9, 0.4]):
        df = pd.DataFrame({"x": values})
        got = float(getattr(df.dp, statistic)("x", epsilon=EPS, bounds=(0, 1), random_state=seed))
        assert default_releases(statistic, values, seed, draws=None)[0] == got


# Worst-case pairs, found by a search over small frames (the empty frame, one or two
# rows at the bounds or the midpoint, plus one row at a bound): the largest estimated
# log ratio of the released mean was 0.96 (eps = 1) for [1] vs [1, 1] and [1] vs
# [1, 0]; of the variance 1.02 at eps = 2 for [0] vs [0, 1] (the variance jumps from
# "one value" to the top of its range [0, R²/2]).
DEFAULT_PAIRS = [
    pytest.param("mean", [1.0], [1.0, 1.0], 1.0, id="mean-top-add-top", marks=pytest.mark.slow),
    pytest.param("mean", [1.0], [1.0, 0.0], 1.0, id="mean-top-add-bottom", marks=pytest.mark.slow),
    pytest.param("mean", [], [1.0], 1.0, id="mean-empty-add-top"),
    pytest.param("var", [0.0], [0.0, 1.0], 2.0, id="var-bottom-add-top", marks=pytest.mark.slow),
    pytest.param("var", [], [1.0], 2.0, id="var-empty-add-top", marks=pytest.mark.slow),
]


@pytest.mark.parametrize(("statistic", "small", "large", "eps"), DEFAULT_PAIRS)
@pytest.mark.parametrize("bounding", ["bit", TRUNCATED])
def test_default_mean_var_add_remove_worst_case(statistic, small, large, eps, bounding):
    """The default mean / var on frames differing by one added row: the estimated
    privacy loss of the released value stays <= eps in every bin.

    200 000 (Poisson) releases per frame; 40 equal bins inside the public range plus
    its two ends; exact conditional binomial tests, Bonferroni over bins: false-alarm
    rate 1e-4 per test.
    """
    top = 1.0 if statistic == "mean" else output_range("var", 0.0, 1.0, ddof=1)[1]
    a = value_bins(default_releases(statistic, small, 51, eps=eps, bounding=bounding), top)
    b = value_bins(default_releases(statistic, large, 52, eps=eps, bounding=bounding), top)
    assert_eps_dp(a, b, eps)


@pytest.mark.slow
@pytest.mark.parametrize(("statistic", "small", "large", "eps"), DEFAULT_PAIRS[::3])
def test_default_worst_case_detects_half_the_noise(statistic, small, large, eps):
    """Power: the same test sees a loss above eps when the plan's noise is halved
    (loss up to 2 eps): p < 1e-6 on the same pairs, so the test above can fail.

    The variance's noise is quartered instead (loss up to 4 eps): on these one- and
    two-row frames its noise dominates, so the released variance is the posterior
    mean over its range (:mod:`pandas_dp.stats.shrinkage`), a smooth function of the
    noisy statistics that loses less than they do (at half the noise: p = 0.88).
    """
    shrink = 0.5 if statistic == "mean" else 0.25
    top = 1.0 if statistic == "mean" else output_range("var", 0.0, 1.0, ddof=1)[1]
    a = value_bins(default_releases(statistic, small, 53, eps=eps, shrink=shrink), top)
    b = value_bins(default_releases(statistic, large, 54, eps=eps, shrink=shrink), top)
    p, _, _ = loss_pvalues(a, b, eps)
    assert p < 1e-6, p


# ----------------------------------------------------------------------------- intervals


def coverage_floor(releases: int, nominal: float, alpha: float) -> int:
    """The fewest hits a one-sided binomial test of "coverage >= nominal" accepts at
    false-alarm rate ``alpha``: ``P(Binomial(releases, nominal) < floor) <= alpha``."""
    return int(stats.binom.ppf(alpha, releases, nominal))


COVERAGE_DATA = {
    # 3 values (the count and the clamp dominate), 40 values piled at the top bound
    # (the clamp's bias), 2000 values (informative intervals), missing values skipped
    "tiny": [0.1, 0.5, 0.95],
    "top": list(np.clip(np.random.default_rng(3).normal(0.95, 0.05, 40), 0, 1)),
    "large": list(np.random.default_rng(4).beta(2, 5, 2000)),
    "missing": [0.2, None, 0.7, None, 0.9, 0.4, None, 0.6],
}


@pytest.mark.parametrize("data", sorted(COVERAGE_DATA))
@pytest.mark.parametrize("statistic", ["mean", "var", "std"])
@pytest.mark.parametrize("bounding", ["bit", pytest.param("none", marks=pytest.mark.slow)])
def test_default_interval_coverage(data, statistic, bounding):
    """The default (add_remove) mean / var / std: the 90 % interval covers pandas'
    exact value (missing values skipped) in >= 90 % of 1000 releases.

    One-sided binomial test of coverage >= 0.90: false-alarm rate 1e-4 per test.
    The interval never has lower > upper (bounding="none" can release values
    outside the public range).
    """
    series = pd.Series(COVERAGE_DATA[data], dtype=float)
    exact = float(getattr(series, statistic)())
    releases, hits, widths = 1000, 0, []
    for seed in range(releases):
        r = getattr(series.dp, statistic)(
            epsilon=EPS, bounds=(0, 1), bounding=bounding, random_state=seed
        )
        lo, hi = (float(v) for v in np.asarray(r.attrs["dp"].interval(0.1), dtype=float).ravel())
        assert lo <= hi
        hits += lo <= exact <= hi
        widths.append(hi - lo)
    assert hits >= coverage_floor(releases, 0.9, 1e-4), hits / releases
    if data == "large":  # not vacuous
        assert np.mean(widths) < 0.1 * (1.0 if statistic == "mean" else exact * 2)


@pytest.mark.parametrize("bounding", ["bit", TRUNCATED, "none"])
def test_count_interval_is_never_inverted(bounding):
    """A noisy count of 3 values at epsilon = 0.05: with bounding="none" it often
    falls below 0, outside its range [0, inf); its interval must stay an interval
    (the core bug fixed in b9f62eb: lower > upper in 192 of 1500 releases) and cover
    the exact count in >= 70 % of 1500 releases (alpha = 0.3; one-sided binomial test,
    false-alarm rate 1e-4)."""
    series = pd.Series([0.5, 0.5, 0.5])
    hits = 0
    for seed in range(1500):
        r = series.dp.count(epsilon=0.05, bounding=bounding, random_state=seed)
        lo, hi = (float(v) for v in np.asarray(r.attrs["dp"].interval(0.3), dtype=float).ravel())
        assert lo <= hi, (lo, hi, int(r))
        hits += lo <= 3 <= hi
    assert hits >= coverage_floor(1500, 0.7, 1e-4), hits / 1500


# ----------------------------------------------------------------------------- group-by


def grouped_count_plan(contrib: Any, eps: float = EPS, bounding: str = "bit") -> NoisePlan:
    """The library's noise plan of a grouped row count over two declared keys."""
    from pandas_dp.plan.plans import Plan
    from pandas_dp.request.grouping import Grouping

    grouping = Grouping(("k",), pd.Index(["a", "b"], name="k"), (("a", "b"),))
    plan = Plan(Settings(epsilon=eps, bounding=bounding, contributions=contrib), grouping)
    key = plan.rows()
    plan.calibrate()
    return plan.measurements[key].calibrated


def joint_releases(plan: NoisePlan, theta: np.ndarray, seed: int, draws: int) -> np.ndarray:
    """Poisson(``draws``) independent releases of the vector ``theta``, one per row."""
    m = int(np.random.default_rng(seed).poisson(draws))
    k = theta.shape[0]
    out = apply_noise(np.tile(theta, m), plan.tiled(m), RandomSource(seed))
    return out.reshape(m, k)


def joint_bins(x: np.ndarray, top: int) -> np.ndarray:
    """One label per pair of integers in ``[0, top]`` (larger values share the last)."""
    c = np.minimum(x, top + 1).astype(np.int64)
    return c[:, 0] * (top + 2) + c[:, 1]


@pytest.mark.parametrize("bounding", ["bit", TRUNCATED])
def test_grouped_count_unit_in_two_groups_worst_case(bounding: str) -> None:
    """A unit with one row in each of two groups (k = 2, g = 2, c = 1) added: both
    counts move by one. The grouped plan's L1 of 2 must hold the joint output to eps."""
    from pandas_dp.request.settings import Contributions

    contrib = Contributions("pid", rows=2, groups=2, rows_per_group=1)
    plan = grouped_count_plan(contrib, bounding=bounding)
    assert plan.bounding == bounding
    small = joint_releases(plan, np.array([3.0, 3.0]), 11, 100_000)
    large = joint_releases(plan, np.array([4.0, 4.0]), 12, 100_000)
    assert_eps_dp(joint_bins(small, 12), joint_bins(large, 12), EPS)


def test_grouped_count_without_contribution_bounds_is_detected() -> None:
    """The same neighbours under the one-row-per-unit plan (groups in parallel, L1 1):
    the privacy loss is 2 eps, and the test sees it (power check)."""
    from pandas_dp.request.settings import Contributions

    plan = grouped_count_plan(Contributions())
    small = joint_releases(plan, np.array([3.0, 3.0]), 13, 100_000)
    large = joint_releases(plan, np.array([4.0, 4.0]), 14, 100_000)
    p, _, _ = loss_pvalues(joint_bins(small, 12), joint_bins(large, 12), EPS)
    assert p < 1e-6


@pytest.mark.slow
def test_grouped_mean_frames_with_different_group_sizes() -> None:
    """End to end on the accessor: frames whose group 'a' holds 10 or 11 rows (the extra
    row at the top bound); the released mean of 'a' is eps-DP (binned values)."""
    base = pd.DataFrame({"k": ["a"] * 10 + ["b"] * 10, "x": [0.0] * 20})
    extra = pd.concat([base, pd.DataFrame({"k": ["a"], "x": [1.0]})], ignore_index=True)
    draws = 2000

    def means(frame: pd.DataFrame, offset: int) -> np.ndarray:
        g = frame.dp.groupby("k", keys=["a", "b"])
        return np.array(
            [
                float(g.mean("x", epsilon=EPS, bounds=(0, 1), random_state=offset + i)["a"])
                for i in range(draws)
            ]
        )

    a, b = means(base, 0), means(extra, 10_000)
    edges = np.linspace(0.0, 1.0, 11)
    la = np.searchsorted(edges, a, side="right")
    lb = np.searchsorted(edges, b, side="right")
    assert_eps_dp(la, lb, EPS)
