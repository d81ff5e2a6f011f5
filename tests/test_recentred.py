"""The two-stage mean (add/remove with ``bounding="truncated"`` or the Gaussian): its
second stage's centre, its estimate, and degenerate inputs.

The sensitivity of the recentred sum is proven in ``test_sensitivity.py`` (and
grouped in ``test_sensitivity_grouped.py``); its privacy loss, through the release,
in ``test_privacy.py`` (the mean's worst-case pairs under ``truncated``); its
accuracy against one stage in ``test_bound_sums.py``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp.stats import estimators as est

FINITE = st.floats(allow_nan=False, allow_infinity=False, width=64)
POSITIVE = st.floats(min_value=1e-300, max_value=1e300)


@settings(max_examples=300, deadline=None)
@given(
    c=FINITE,
    s=FINITE,
    t=FINITE,
    variances=st.tuples(POSITIVE, POSITIVE, POSITIVE),
    lower=st.floats(min_value=-1e300, max_value=1e300),
    width=st.floats(min_value=1e-300, max_value=1e300),
)
def test_the_estimate_is_finite_and_inside_the_bounds(c, s, t, variances, lower, width):
    """Released values of any size (the noise is unbounded) and bounds anywhere in the
    float range: the estimate never raises and lies in the bounds."""
    upper = lower + width
    if not math.isfinite(upper) or upper <= lower:
        return
    centre = est.recentre(c, s, variances[:2], lower, upper)
    assert lower <= centre <= upper
    value = est.recentred_mean_value(c, s, t, variances, lower, upper, clamp=True)
    assert lower <= value <= upper


def test_the_centre_stays_at_the_midpoint_when_the_first_stage_is_noise():
    """A first-stage mean within one standard error of the midpoint moves nothing."""
    # C = 10 +- 20 (variance 800), S = -100 +- 1414: the first mean is 40, se about 141
    assert est.recentre(10.0, -100.0, (800.0, 2e6), 0.0, 100.0) == 50.0
    # a precise first stage: the centre is the first mean less one standard error
    c = est.recentre(1e6, -4e7, (2.0, 2.0), 0.0, 100.0)
    assert c == pytest.approx(10.0, abs=1e-3) and c > 10.0


def test_exact_measurements_give_the_exact_mean():
    """Noise-free values (the three agree) give the mean whatever the weights."""
    n, mean, lower, upper = 500.0, 12.5, 0.0, 100.0
    s = n * (mean - 50.0)
    for variances in ((1.0, 1.0, 1.0), (100.0, 1e6, 1e-3), (1e-3, 1e-3, 1e3)):
        centre = est.recentre(n, s, variances[:2], lower, upper)
        h = est.reach(centre, lower, upper)
        t = n * (mean - centre) / h  # what T measures about that centre
        got = est.recentred_mean_value(n, s, t, variances, lower, upper, clamp=True)
        assert got == pytest.approx(mean, rel=1e-12)
