"""Empirical privacy and interval coverage of value_counts and proportions.

The releases go through the public accessor, on neighbouring datasets: under
``neighbouring="substitute"`` one record moved between two categories, under the
default ``"add_remove"`` one record added.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp.stats.histograms import METHODS

CATS = ["a", "b", "c"]


def frame(counts: dict[str, int]) -> pd.Series:
    return pd.Series([c for c, k in counts.items() for _ in range(k)], name="g")


D = frame({"a": 10, "b": 5, "c": 5})
D_PRIME = frame({"a": 9, "b": 6, "c": 5})  # substitute: one record moved from a to b
D_PLUS = frame({"a": 11, "b": 5, "c": 5})  # add_remove: one record "a" added
NEIGHBOUR = {"substitute": D_PRIME, "add_remove": D_PLUS}
#: (method, relation): Liu's all_but_one and hierarchical divide by the public n.
PROPORTION_CASES = [("project", "add_remove"), ("rescale", "add_remove")] + [
    (m, "substitute") for m in METHODS
]


@pytest.mark.slow
@pytest.mark.parametrize(("rel", "l1"), [("substitute", 2.0), ("add_remove", 1.0)])
def test_value_counts_noise_has_the_calibrated_scale(rel: str, l1: float) -> None:
    """The changed count's pmf ratio at its mode is ``e^{epsilon / L1}``.

    With epsilon = 1 each count gets discrete Laplace noise of scale L1 (2 under
    substitute, 1 under add_remove), so ``P_D(a = 10) / P_D'(a = 10) =
    P(K = 0) / P(K = 1) = e^{1 / L1}``. 12,000 releases per side estimate the log
    ratio with a standard error of at most about 0.036; the test allows 0.18 (5
    standard errors, false alarm < 1e-6), which a factor-of-two error in the scale
    (log ratio doubled or halved) cannot pass.
    """
    reps = 12_000
    gen = np.random.default_rng(2024)

    def counts(s: pd.Series) -> np.ndarray:
        return np.array(
            [
                s.dp.value_counts(
                    epsilon=1.0, categories=CATS, sort=False, neighbouring=rel, random_state=gen
                )["a"]
                for _ in range(reps)
            ]
        )

    a_d, a_p = counts(D), counts(NEIGHBOUR[rel])
    ratio = math.log(np.mean(a_d == 10) / np.mean(a_p == 10))
    assert abs(ratio - 1.0 / l1) < 0.18, ratio
    # and the whole marginal never shows more than epsilon (with the same margin)
    for x in range(6, 15):
        pd_, pp = np.mean(a_d == x), np.mean(a_p == x)
        if min(pd_, pp) > 0.02:
            assert abs(math.log(pd_ / pp)) < 1.0 + 0.2


@pytest.mark.slow
@pytest.mark.parametrize(("method", "rel"), PROPORTION_CASES)
def test_proportions_privacy_loss_is_bounded(method: str, rel: str) -> None:
    """The released share of the changed category shows no loss above epsilon.

    4,000 releases per side, the share binned in 10 bins; bins with at least 5 %
    of the mass on both sides have a log-ratio standard error below about 0.1, and
    the test allows epsilon + 0.45 (4.5 standard errors; false alarm < 1e-4 over
    the bins). A release that ignored the sensitivity (e.g. one level of the
    hierarchical tree charged for all) would exceed it.
    """
    eps, reps = 1.0, 4000
    gen = np.random.default_rng(7)

    def shares(s: pd.Series) -> np.ndarray:
        return np.array(
            [
                s.dp.proportions(
                    epsilon=eps,
                    categories=CATS,
                    method=method,
                    neighbouring=rel,
                    random_state=gen,
                )["a"]
                for _ in range(reps)
            ]
        )

    x, y = shares(D), shares(NEIGHBOUR[rel])
    edges = np.quantile(np.concatenate([x, y]), np.linspace(0, 1, 11))
    edges[0], edges[-1] = -np.inf, np.inf
    hx = np.histogram(x, edges)[0] / reps
    hy = np.histogram(y, edges)[0] / reps
    ok = (hx > 0.05) & (hy > 0.05)
    assert ok.sum() >= 4
    worst = np.max(np.abs(np.log(hx[ok] / hy[ok])))
    assert worst < eps + 0.45, worst


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("via", [pytest.param("proportions", marks=pytest.mark.slow), "counts"])
def test_proportion_interval_coverage_substitute(method: str, via: str) -> None:
    """Each category's 90 % interval covers its true share of n >= 90 % of the time.

    Under substitute (n public, every row in a declared bucket). 800 releases; a
    one-sided binomial test at false-alarm rate 1e-4 per category allows down to
    about 86.1 %.
    """
    s = frame({"a": 30, "b": 15, "c": 4, "d": 1})
    truth = np.array([0.6, 0.3, 0.08, 0.02])
    gen = np.random.default_rng(99)
    hits = np.zeros(4)
    for _ in range(800):
        p = s.dp.proportions(
            epsilon=0.5,
            categories=["a", "b", "c", "d"],
            method=method,
            via=via,
            neighbouring="substitute",
            random_state=gen,
        )
        iv = p.attrs["dp"].interval(0.1)
        hits += (iv["lower"].to_numpy() <= truth) & (truth <= iv["upper"].to_numpy())
    assert (hits / 800 >= 0.861).all(), hits / 800


@pytest.mark.parametrize("method", ["project", pytest.param("rescale", marks=pytest.mark.slow)])
def test_proportion_interval_coverage_add_remove(method: str) -> None:
    """Default add_remove: shares of the declared buckets, covered >= 90 % of the time.

    The frame also holds 20 undeclared values and 10 missing ones, which are not
    in any bucket: the exact shares are of the 50 declared rows (0.6, 0.3, 0.08,
    0.02), not of the 80 rows. Every release sums to one within [0, 1]. 800
    releases at epsilon = 0.5; a one-sided binomial test at false-alarm rate 1e-4
    allows down to about 86.1 % for each category and for all four at once (the
    bounds are simultaneous by construction, a union bound over the counts).
    """
    s = pd.concat(
        [frame({"a": 30, "b": 15, "c": 4, "d": 1}), pd.Series(["z"] * 20 + [None] * 10)],
        ignore_index=True,
    ).rename("g")
    truth = np.array([0.6, 0.3, 0.08, 0.02])
    gen = np.random.default_rng(2718)
    hits, joint = np.zeros(4), 0
    for _ in range(800):
        p = s.dp.proportions(
            epsilon=0.5, categories=["a", "b", "c", "d"], method=method, random_state=gen
        )
        assert p.attrs["dp"].neighbouring == "add_remove" and p.attrs["dp"].n is None
        assert ((p >= 0) & (p <= 1)).all() and math.isclose(p.sum(), 1.0, abs_tol=1e-12)
        iv = p.attrs["dp"].interval(0.1)
        inside = (iv["lower"].to_numpy() <= truth) & (truth <= iv["upper"].to_numpy())
        hits += inside
        joint += bool(inside.all())
    assert (hits / 800 >= 0.861).all(), hits / 800
    assert joint / 800 >= 0.861, joint / 800
