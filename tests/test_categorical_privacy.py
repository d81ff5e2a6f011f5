"""Empirical privacy and interval coverage of value_counts and proportions.

The releases go through the public accessor, on neighbouring datasets that
differ in one record moved between two categories (substitution).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp.histograms import METHODS

CATS = ["a", "b", "c"]


def frame(counts: dict[str, int]) -> pd.Series:
    return pd.Series([c for c, k in counts.items() for _ in range(k)], name="g")


D = frame({"a": 10, "b": 5, "c": 5})
D_PRIME = frame({"a": 9, "b": 6, "c": 5})  # one record moved from a to b


def test_value_counts_noise_has_the_calibrated_scale() -> None:
    """The changed count's pmf ratio at its mode is ``e^{epsilon / 2}`` (L1 = 2).

    With epsilon = 1 each count gets discrete Laplace noise of scale 2, so
    ``P_D(a = 10) / P_D'(a = 10) = P(K = 0) / P(K = 1) = e^{1/2}``. 12,000
    releases per side estimate the log ratio with a standard error of about
    0.036; the test allows 0.18 (5 standard errors, false alarm < 1e-6), which a
    factor-of-two error in the scale (log ratio 1 or 0.25) cannot pass.
    """
    reps = 12_000
    gen = np.random.default_rng(2024)
    a_d = np.array(
        [
            D.dp.value_counts(epsilon=1.0, categories=CATS, sort=False, random_state=gen)["a"]
            for _ in range(reps)
        ]
    )
    a_p = np.array(
        [
            D_PRIME.dp.value_counts(epsilon=1.0, categories=CATS, sort=False, random_state=gen)["a"]
            for _ in range(reps)
        ]
    )
    ratio = math.log(np.mean(a_d == 10) / np.mean(a_p == 10))
    assert abs(ratio - 0.5) < 0.18, ratio
    # and the whole marginal never shows more than epsilon (with the same margin)
    for x in range(6, 14):
        pd_, pp = np.mean(a_d == x), np.mean(a_p == x)
        if min(pd_, pp) > 0.02:
            assert abs(math.log(pd_ / pp)) < 1.0 + 0.2


@pytest.mark.parametrize("method", METHODS)
def test_proportions_privacy_loss_is_bounded(method: str) -> None:
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
                s.dp.proportions(epsilon=eps, categories=CATS, method=method, random_state=gen)["a"]
                for _ in range(reps)
            ]
        )

    x, y = shares(D), shares(D_PRIME)
    edges = np.quantile(np.concatenate([x, y]), np.linspace(0, 1, 11))
    edges[0], edges[-1] = -np.inf, np.inf
    hx = np.histogram(x, edges)[0] / reps
    hy = np.histogram(y, edges)[0] / reps
    ok = (hx > 0.05) & (hy > 0.05)
    assert ok.sum() >= 4
    worst = np.max(np.abs(np.log(hx[ok] / hy[ok])))
    assert worst < eps + 0.45, worst


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("via", ["proportions", "counts"])
def test_proportion_interval_coverage(method: str, via: str) -> None:
    """Each category's 90 % interval covers its true share >= 90 % of the time.

    800 releases; a one-sided binomial test at false-alarm rate 1e-4 per
    category allows down to about 86.1 %.
    """
    s = frame({"a": 30, "b": 15, "c": 4, "d": 1})
    truth = np.array([0.6, 0.3, 0.08, 0.02])
    gen = np.random.default_rng(99)
    hits = np.zeros(4)
    for _ in range(800):
        p = s.dp.proportions(
            epsilon=0.5, categories=["a", "b", "c", "d"], method=method, via=via, random_state=gen
        )
        iv = p.attrs["dp"].interval(0.1)
        hits += (iv["lower"].to_numpy() <= truth) & (truth <= iv["upper"].to_numpy())
    assert (hits / 800 >= 0.861).all(), hits / 800
