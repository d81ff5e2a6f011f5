"""The variance's clamp to the largest variance the noisy count and mean allow.

:func:`pandas_dp.stats.estimators.variance_cap` is the Bhatia-Davis bound
``(h² - d²) C / (C - ddof)`` for ``C`` values within ``h`` of the range's midpoint
whose mean is ``d`` from it. Clamping a noisy variance to it is post-processing;
these tests check that it never cuts an exact variance (it is a bound), that it is
reached (it is the tightest such bound), and that releases respect it.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp.stats import estimators as est


def exact_statistics(x: np.ndarray, lower: float, upper: float) -> tuple[float, float, float]:
    """The exact count, sum about the midpoint and squares about it."""
    mid = (lower + upper) / 2
    return float(x.size), float((x - mid).sum()), float(((x - mid) ** 2).sum())


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30),
    lower=st.floats(-1e6, 1e6),
    width=st.floats(1e-3, 1e6),
    ddof=st.sampled_from([0, 1]),
)
def test_the_cap_never_cuts_an_exact_variance(data, lower, width, ddof):
    """Exact statistics of any data in the bounds give back the data's variance:
    the cap holds for every data set (up to rounding)."""
    upper = lower + width
    x = lower + np.asarray(data) * width
    x = np.clip(x, lower, upper)
    c, s, q = exact_statistics(x, lower, upper)
    half = width / 2
    v = est.var_value(c, s, q, ddof=ddof, half_width=half, upper_range=np.inf, clamp=True)
    assert v == pytest.approx(float(np.var(x, ddof=ddof)), rel=1e-6, abs=1e-9 * half * half)


@pytest.mark.parametrize("ddof", [0, 1])
@pytest.mark.parametrize("n", [2, 3, 4, pytest.param(5, marks=pytest.mark.slow)])
def test_the_cap_is_the_largest_variance_of_each_sum_brute_force(n, ddof):
    """Over every data set of ``n`` values on a 9-point grid of [0, 8], the largest
    variance among those with a given sum is the cap where that sum can be reached
    with every value at an end, and never above the cap."""
    grid = np.arange(9.0)
    best: dict[float, float] = {}
    for x in itertools.product(grid, repeat=n):
        a = np.asarray(x)
        _, s, _ = exact_statistics(a, 0.0, 8.0)
        best[s] = max(best.get(s, 0.0), float(np.var(a, ddof=ddof)))
    for s, top in best.items():
        cap = est.variance_cap(float(n), s, ddof=ddof, half_width=4.0)
        assert top <= cap * (1 + 1e-12)
        # the sum of k values at 8 and n - k at 0, about the midpoint 4
        if any(s == 4.0 * k - 4.0 * (n - k) for k in range(n + 1)):
            assert top == pytest.approx(cap, rel=1e-12)


def piled_releases(n_seeds: int) -> list[tuple[float, float]]:
    """``(mean, std)`` of describe at epsilon = 0.1, data piled near the lower bound."""
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"x": np.clip(rng.exponential(5.0, 100), 0, 100)})
    out = []
    for seed in range(n_seeds):
        d = df.dp.describe(epsilon=0.1, bounds={"x": (0.0, 100.0)}, random_state=seed)
        out.append((float(d.loc["mean", "x"]), float(d.loc["std", "x"])))
    return out


def violations(releases: list[tuple[float, float]]) -> int:
    """Releases with ``std² > 2 (b - mean)(mean - a)``: a variance no data with the
    released mean can have (``C/(C - 1) <= 2``; up to ``1e-9 R²`` of rounding, as the
    mean is clamped into the bounds after its own rounding)."""
    return sum(std * std > 2.0 * (100.0 - m) * m + 1e-5 for m, std in releases)


def test_released_std_and_mean_are_a_pair_some_data_could_have(monkeypatch):
    """At a small epsilon the noisy variance often lands beyond what the released
    mean allows; the released std never does. Each release is a deterministic check
    (no false alarms); without the cap the same releases break it (the check is
    live)."""
    assert violations(piled_releases(100)) == 0
    monkeypatch.setattr(est, "variance_cap", lambda *a, **k: float("inf"))
    assert violations(piled_releases(100)) > 0


def test_the_cap_of_undefined_statistics_is_finite():
    assert est.variance_cap(float("inf"), 1e200, ddof=1, half_width=5.0) == 25.0
    assert est.variance_cap(float("nan"), float("nan"), ddof=1, half_width=5.0) == 50.0


def test_std_intervals_respect_the_cap_and_still_cover(monkeypatch):
    """The std's interval ends at the largest variance the box of the count's and
    sum's intervals allows: narrower on data piled near a bound at n = 100, and
    still covering. 400 releases: at a true coverage of 0.95 (the interval is
    conservative, so at least that) fewer than 363 hits has probability below 1e-4."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": np.clip(rng.exponential(5.0, 100), 0, 100)})
    truth = float(df["x"].std())

    def intervals(n: int) -> list[tuple[float, float]]:
        out = []
        for seed in range(n):
            r = df.dp.std("x", epsilon=0.3, bounds=(0.0, 100.0), random_state=seed)
            out.append(r.attrs["dp"].interval(0.05))
        return out

    capped = intervals(400)
    assert sum(lo <= truth <= hi for lo, hi in capped) >= 363
    monkeypatch.setattr(est, "variance_cap", lambda *a, **k: float("inf"))
    loose = intervals(100)
    width = [hi - lo for lo, hi in capped[:100]]
    assert all(w <= v - u + 1e-9 for w, (u, v) in zip(width, loose, strict=True))
    assert np.mean(width) < 0.9 * np.mean([v - u for u, v in loose])


def test_the_covariance_diagonal_respects_the_cap(monkeypatch):
    """``cov``'s variances are clamped the same way (the noisy count of complete rows
    and each column's noisy sum): at n = 50 on data piled near a bound the matrix's
    Frobenius error drops (100 releases, same seeds with and without the cap)."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame(np.clip(rng.exponential(0.2, (50, 3)) - 1.0, -1.0, 1.0), columns=list("abc"))
    truth = df.cov().to_numpy()

    def error() -> float:
        sq = []
        for seed in range(100):
            c = df.dp.cov(list("abc"), epsilon=1.0, bounds=(-1.0, 1.0), random_state=seed)
            sq.append(float(((c.to_numpy() - truth) ** 2).sum()))
        return float(np.sqrt(np.mean(sq)))

    capped = error()
    monkeypatch.setattr(est, "variance_cap", lambda *a, **k: float("inf"))
    assert capped < 0.9 * error()
