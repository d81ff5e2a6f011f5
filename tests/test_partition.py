"""Partition selection for private keys (pandas_dp.noise.partition, REFERENCE.md §10)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pandas_dp.noise.mechanisms import RandomSource, representable_scale
from pandas_dp.noise.partition import continuous_threshold, select, selection_threshold


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-9, 1e-5, 0.05])
@pytest.mark.parametrize("groups", [1, 3, 10])
def test_threshold_is_the_smallest_that_holds(epsilon: float, delta: float, groups: int) -> None:
    """Exact discrete tail at tau is <= delta/g and above it at tau - 1."""
    sel = selection_threshold(epsilon, delta, groups)
    scale = float(representable_scale(groups / epsilon)[0])
    q = math.exp(-1.0 / scale)

    def tail(tau: int) -> float:  # P(1 + K > tau) = P(K >= tau), tau >= 1
        return q**tau / (1.0 + q)

    assert sel.threshold >= 1
    assert tail(sel.threshold) <= delta / groups
    assert sel.singleton_probability == pytest.approx(tail(sel.threshold), rel=1e-9)
    if sel.threshold > 1:
        assert tail(sel.threshold - 1) > delta / groups
    # the continuous threshold of REFERENCE §10 is within one unit (plus rounding)
    tau_c = continuous_threshold(epsilon, delta, groups)
    assert tau_c - 2 <= sel.threshold <= math.ceil(tau_c) + 1


def test_singleton_key_released_with_probability_at_most_delta() -> None:
    """Count 1, epsilon = 1, delta = 0.05, g = 1, over 40 000 trials.

    The exact release probability is 0.0364 (tau = 3). The test alarms if the
    observed rate exceeds delta + 4.5 sd of a Binomial(40 000, delta) proportion
    (0.0531): were the rate exactly delta, the false-alarm rate is about 3e-6; at the
    true 0.0364 it is far smaller. It also checks the rate against the exact value
    (two-sided, 5 sd: false alarm about 6e-7).
    """
    sel = selection_threshold(1.0, 0.05, 1)
    assert sel.threshold == 3
    trials = 40_000
    kept, noisy = select(np.ones(trials, dtype=np.int64), sel, RandomSource())
    rate = kept.mean()
    sd_delta = math.sqrt(0.05 * 0.95 / trials)
    assert rate <= 0.05 + 4.5 * sd_delta, rate
    p = sel.singleton_probability
    assert abs(rate - p) <= 5 * math.sqrt(p * (1 - p) / trials), (rate, p)
    assert np.array_equal(kept, noisy > 3)


def test_singleton_keys_of_a_unit_in_several_groups() -> None:
    """g = 4: each of a unit's 4 keys survives w.p. <= delta/4; the union <= delta.

    40 000 units with 4 singleton keys each; the rate of units with any key released
    must stay under delta + 4.5 sd (false alarm about 3e-6 at rate delta).
    """
    sel = selection_threshold(1.0, 0.05, 4)
    trials = 40_000
    kept, _ = select(np.ones(4 * trials, dtype=np.int64), sel, RandomSource())
    any_kept = kept.reshape(trials, 4).any(axis=1).mean()
    assert any_kept <= 0.05 + 4.5 * math.sqrt(0.05 * 0.95 / trials), any_kept


def test_large_counts_are_kept() -> None:
    """Count 100 at scale 1 and threshold 3: a miss needs K <= -97 (probability ~1e-42)."""
    sel = selection_threshold(1.0, 0.05, 1)
    kept, noisy = select(np.full(5_000, 100, dtype=np.int64), sel, RandomSource())
    assert kept.all()
    assert abs(noisy.mean() - 100) < 0.2  # sd of the mean 0.024: 8 sd


def test_zero_counts_never_kept() -> None:
    sel = selection_threshold(0.01, 0.5, 1)  # huge noise: zeros would often pass
    kept, noisy = select(np.zeros(1000, dtype=np.int64), sel, RandomSource(1))
    assert not kept.any() and (noisy > sel.threshold).any()


def test_reproducible_with_a_seed() -> None:
    sel = selection_threshold(1.0, 1e-6, 2)
    counts = np.arange(50, dtype=np.int64)
    a = select(counts, sel, RandomSource(9))
    b = select(counts, sel, RandomSource(9))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((1.0, 0.0, 1), "delta > 0"),
        ((1.0, -1e-6, 1), "delta > 0"),
        ((1.0, 1.0, 1), "below 1"),
        ((0.0, 1e-6, 1), "epsilon"),
        ((math.inf, 1e-6, 1), "epsilon"),
        ((1.0, 1e-6, 0), "max_groups"),
        ((1.0, 1e-6, 1, "substitute"), "add_remove"),
    ],
)
def test_errors(args: tuple[object, ...], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        selection_threshold(*args)  # type: ignore[arg-type]
