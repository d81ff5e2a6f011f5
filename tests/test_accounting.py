"""zCDP accounting (pandas_dp.budget.accounting): rho of releases, rho <-> (epsilon, delta).

The conversions are checked against REFERENCE.md §11's values, against a brute-force
minimisation over a fine grid of orders written independently of the module, and
against the exact privacy curve of the Gaussian mechanism (a rho-zCDP mechanism
whose true delta must never exceed what the conversion claims). All deterministic.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import norm

from pandas_dp.budget.accounting import (
    delta_for,
    epsilon_for,
    epsilon_simple,
    rho_for,
    rho_of_gaussian,
    rho_of_noise,
    rho_of_pure,
    rho_of_vector,
)
from pandas_dp.noise.plans import plan_noise

RHOS = [1e-6, 1e-4, 1e-3, 0.01, 0.05, 0.5, 1.0, 3.0, 20.0]
DELTAS = [1e-12, 1e-9, 1e-6, 1e-3, 0.05]

#: alpha - 1 from 1e-7 to 1e10, 1.7e-4 apart in log: fine enough for 1e-7 relative
ALPHA_MINUS_1 = np.logspace(-7, 10, 400_001)


def brute_epsilon(rho: float, delta: float) -> float:
    """CKS 2020 Prop. 12 solved for epsilon, minimised over a fine grid of alpha."""
    a = 1.0 + ALPHA_MINUS_1
    eps = a * rho + (math.log(1 / delta) + a * np.log1p(-1 / a) - np.log(a - 1)) / (a - 1)
    return float(eps.min())


def brute_delta(rho: float, epsilon: float) -> float:
    """CKS 2020 Prop. 12's delta, minimised over the same grid (in logs)."""
    a = 1.0 + ALPHA_MINUS_1
    log_delta = (a - 1) * (a * rho - epsilon) - np.log(a - 1) + a * np.log1p(-1 / a)
    return float(min(math.exp(float(log_delta.min())), 1.0))


def gaussian_exact_delta(rho: float, epsilon: float) -> float:
    """The exact delta(epsilon) of N(0, sigma^2) noise on a sensitivity-1 query.

    Balle & Wang 2018, Theorem 8, with ``sigma = 1 / sqrt(2 rho)`` (so rho-zCDP).
    """
    sigma = 1.0 / math.sqrt(2.0 * rho)
    return float(
        norm.cdf(0.5 / sigma - epsilon * sigma)
        - math.exp(epsilon) * norm.cdf(-0.5 / sigma - epsilon * sigma)
    )


# --------------------------------------------------------------------------- check values


def test_reference_check_values() -> None:
    assert epsilon_simple(0.5, 1e-6) == pytest.approx(5.757, abs=5e-4)
    assert epsilon_for(0.5, 1e-6) == pytest.approx(5.22, abs=5e-3)


def test_rho_of_releases() -> None:
    assert rho_of_gaussian(1.0, 1.0) == pytest.approx(0.5, rel=1e-14)
    assert rho_of_gaussian(3.0, 2.0) == pytest.approx(9 / 8, rel=1e-14)
    assert rho_of_gaussian(1.0, 1.0) >= 0.5  # rounded up, never down
    assert rho_of_pure(0.2) == pytest.approx(0.02, rel=1e-14)
    # proportional scales: joint L2 / ratio; the smallest ratio counts otherwise
    assert rho_of_vector([1.0, 2.0], [2.0, 4.0]) == pytest.approx(2 / 8, rel=1e-14)
    assert rho_of_vector([1.0, 2.0], [2.0, 8.0]) == pytest.approx(2 / 8, rel=1e-14)
    assert rho_of_vector([1.0] * 4, [2.0] * 4, joint_l2=1.0) == pytest.approx(1 / 8, rel=1e-14)
    for bad in ([], [0.0]):
        with pytest.raises(ValueError):
            rho_of_vector(bad, [1.0] * len(bad))
    with pytest.raises(ValueError):
        rho_of_gaussian(1.0, 0.0)
    with pytest.raises(ValueError):
        rho_of_vector([1.0], [1.0, 2.0])


@pytest.mark.parametrize("integer", [True, False])
def test_rho_of_noise_matches_the_calibrated_plan(integer: bool) -> None:
    sens = np.array([1.0, 1.0, 1.0]) if integer else np.array([0.5, 2.0, 1.0])
    noise = plan_noise(
        sens,
        np.zeros(3),
        np.full(3, 100.0),
        epsilon=1.0,
        delta=1e-6,
        mechanism="gaussian",
        integer=integer,
        joint_l1=1.0 if integer else None,
        joint_l2=1.0 if integer else None,
    )
    paid = sens if integer else sens + noise.granularity
    l2 = 1.0 if integer else math.sqrt(3)
    # sigma is proportional to the paid sensitivity: rho = l2^2 / (2 (sigma/paid)^2)
    ratio = noise.scale / paid
    assert np.allclose(ratio, ratio[0], rtol=1e-12)
    expected = l2 * l2 / (2 * float(ratio.min()) ** 2)
    assert rho_of_noise(noise, sens, 1.0 if integer else None) == pytest.approx(expected, 1e-12)
    laplace = plan_noise(sens, np.zeros(3), np.full(3, 100.0), epsilon=1.0, integer=integer)
    assert rho_of_noise(laplace, sens) is None


# --------------------------------------------------------------------------- conversions


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("rho", RHOS)
def test_epsilon_matches_brute_force_and_is_never_below_it(rho: float, delta: float) -> None:
    eps = epsilon_for(rho, delta)
    brute = max(brute_epsilon(rho, delta), 0.0)  # below 0 the bound says epsilon = 0
    # as tight as the grid's minimum (within 1e-7 of the true one), and not far below
    # it -- not below the true minimum is shown by the exact Gaussian test below
    assert eps >= brute - 1e-7 * max(brute, 1.0)
    assert eps <= brute + 1e-7 * max(brute, 1.0)
    assert eps <= epsilon_simple(rho, delta)
    assert epsilon_simple(rho, delta) == pytest.approx(
        rho + 2 * math.sqrt(rho * math.log(1 / delta)), rel=1e-12
    )


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("rho", RHOS)
def test_delta_matches_brute_force_and_inverts_epsilon(rho: float, delta: float) -> None:
    eps = epsilon_for(rho, delta)
    assert delta_for(rho, eps) <= delta * (1 + 1e-9)
    for e in (0.5 * eps, eps, 2 * eps):
        d = delta_for(rho, e)
        brute = brute_delta(rho, e)
        assert brute * (1 - 1e-6) <= d <= brute * (1 + 1e-6) + 1e-300


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("rho", RHOS)
def test_conversion_is_valid_for_the_exact_gaussian(rho: float, delta: float) -> None:
    """A Gaussian with sigma = 1/sqrt(2 rho) is rho-zCDP: its true delta is within the claim."""
    eps = epsilon_for(rho, delta)
    assert gaussian_exact_delta(rho, eps) <= delta * (1 + 1e-9)
    # ... and the claim is not far off: the Gaussian needs a delta above delta/50 there
    # (unless epsilon is already about 0: the total variation is below delta)
    if eps > 1e-3:
        assert gaussian_exact_delta(rho, eps) > delta / 50


@pytest.mark.slow
def test_monotone() -> None:
    rhos = np.geomspace(1e-8, 100, 60)
    for delta in DELTAS:
        eps = [epsilon_for(float(r), delta) for r in rhos]
        assert all(b >= a for a, b in itertools.pairwise(eps))
    deltas = np.geomspace(1e-15, 0.5, 60)
    for rho in RHOS:
        eps = [epsilon_for(rho, float(d)) for d in deltas]
        assert all(b <= a for a, b in itertools.pairwise(eps))
    epsilons = np.geomspace(1e-4, 50, 40)
    for delta in DELTAS:
        rs = [rho_for(float(e), delta) for e in epsilons]
        assert all(b >= a for a, b in itertools.pairwise(rs))
    for epsilon in (0.1, 1.0, 5.0):
        rs = [rho_for(epsilon, float(d)) for d in deltas]
        assert all(b >= a for a, b in itertools.pairwise(rs))


@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("epsilon", [1e-3, 0.1, 1.0, 5.22, 30.0])
def test_rho_for_is_the_largest_rho_within_epsilon(epsilon: float, delta: float) -> None:
    rho = rho_for(epsilon, delta)
    assert rho > 0
    assert epsilon_for(rho, delta) <= epsilon  # conservative: never over
    assert epsilon_for(rho * (1 + 1e-7), delta) > epsilon * (1 - 1e-9)  # and nearly the largest
    # round trip the other way
    assert rho_for(epsilon_for(rho, delta), delta) == pytest.approx(rho, rel=1e-7)


def test_edges() -> None:
    assert epsilon_for(0.0, 1e-6) == 0.0 and epsilon_simple(0.0, 0.0) == 0.0
    assert epsilon_for(0.1, 0.0) == math.inf and epsilon_for(math.inf, 1e-6) == math.inf
    assert delta_for(0.0, 1.0) == 0.0 and delta_for(1.0, 0.0) <= 1.0
    assert rho_for(1.0, 0.0) == 0.0 and rho_for(0.0, 1e-6) == 0.0
    assert rho_for(1.0, 1e-6) == pytest.approx(rho_for(1.0, 1e-6))  # deterministic
    with pytest.raises(ValueError):
        epsilon_for(-1.0, 1e-6)
    with pytest.raises(ValueError):
        epsilon_for(0.5, 2.0)
    with pytest.raises(ValueError):
        rho_for(float("nan"), 1e-6)
