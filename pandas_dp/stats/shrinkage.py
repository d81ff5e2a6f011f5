"""The spread where the noise outweighs it: a posterior mean over the feasible range.

A noisy variance ``V`` whose noise is comparable to the range ``[0, T]`` the
released count and mean allow (:func:`~pandas_dp.stats.estimators.variance_cap`) says
little; clamped into that range, it lands at one end or the other about as often
as not, and the square root of an end is a poor standard deviation (0, or the
largest any data could have). There the estimate is instead the mean of the
standard deviation ``sigma`` given ``V``, for ``sigma`` uniform on ``[0, sqrt(T)]``
a priori and ``V`` normal about ``sigma**2`` with the delta-method standard
deviation ``D`` of its noise (:func:`variance_noise_sd`; the noise is a sum of
Laplace or Gaussian noises, taken as normal): the estimate with the least mean
squared error averaged over every spread the bounds allow. The
variance is its square, so a std and a variance from the same measurements agree
as pandas' do.

Only where ``D > SHRINK_FROM * T``. With less noise the data speak, the posterior
mean comes close to the clamped estimate, and where it differs (the normal
approximation, the prior's pull away from the range's ends) it measured worse, so
the clamped estimate is kept. Everything
here is post-processing of noisy statistics, public noise scales and declared
bounds.

Measured in ``benchmarks/accuracy.py`` (section 4: describe's std on uniform,
normal, piled and two-point data on [0, 100], n = 100, 1000, 10 000, epsilon 0.1,
1, 10; 500 releases per cell): the RMSE of the std is 0.44x, 0.56x and 0.57x the
clamped estimate's at n = 100, epsilon = 0.1 on uniform, normal and piled data,
0.58x and 0.61x on piled data at n epsilon = 100, the same in the 30 other
settings, and 1.18x on two-point data (every value at a bound: the largest spread
there is, which the posterior mean pulls into the range) at n = 100, epsilon = 0.1
-- still 0.63x the former describe's there, and every setting's std at most
0.97x of it. The threshold was chosen offline on the same releases' noisy
statistics: 0.5 leaves the gains at n epsilon = 100 (0.97x), 0.05 costs 1.2x to
1.5x at n epsilon = 100 on uniform and two-point data; 0.25 keeps every gain and
none of those costs.

Examples
--------
>>> round(shrunk_variance(raw=0.0, noise_sd=1e9, top=2500.0), 1)  # nothing known
625.0
>>> shrunk_variance(raw=400.0, noise_sd=10.0, top=2500.0)  # the data speak
400.0
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["SHRINK_FROM", "shrunk_variance", "variance_noise_sd"]

#: The posterior mean replaces the clamped variance where the noise's standard
#: deviation exceeds this share of the feasible range (see the module's text).
SHRINK_FROM = 0.25
#: Points of the standard deviation's grid (the posterior's quadrature).
_GRID = 513
_SIGMAS = np.linspace(0.0, 1.0, _GRID)
_SQUARES = _SIGMAS * _SIGMAS


def variance_noise_sd(
    c: float,
    s: float,
    q: float,
    variances: tuple[float, float, float],
    ddof: int,
) -> float:
    """The delta-method standard deviation of ``(Q - S²/C')/(C' - ddof)``'s noise.

    ``variances`` are the noise variances of the count, the centred sum and the
    centred squares (uncorrelated), ``C' = max(C, ddof + 1)``. NaN where the noisy
    statistics leave it undefined (never an error or a warning).

    Examples
    --------
    >>> variance_noise_sd(101.0, 0.0, 2500.0, (0.0, 0.0, 400.0), ddof=1)
    0.2
    """
    cc = max(c, ddof + 1.0)
    d = s / cc
    v = (q - d * s) / (cc - ddof)
    c_var, s_var, q_var = variances
    # (products, not powers: a Python float's ** raises where a product is inf)
    gap = d * d - v
    total = q_var + 4.0 * d * d * s_var + gap * gap * c_var
    return math.sqrt(total) / (cc - ddof) if total >= 0.0 else math.nan


def shrunk_variance(raw: float, noise_sd: float, top: float) -> float:
    """The square of the posterior mean of ``sigma`` on ``[0, sqrt(top)]``.

    ``raw`` is the unclamped noisy variance, ``noise_sd`` its noise's standard
    deviation, ``top`` the largest feasible variance. Where ``noise_sd`` is at most
    :data:`SHRINK_FROM` times ``top`` (or undefined), the clamped ``raw``.
    """
    clamped = min(max(raw, 0.0), top)
    if not (noise_sd > SHRINK_FROM * top and top > 0.0 and math.isfinite(top)):
        return clamped
    # in units of ``top``: sigma² = u on [0, 1], the noise's sd ``spread`` > SHRINK_FROM
    spread = noise_sd / top
    lead = raw / top / spread  # (Python floats: an overflow is inf, never a warning)
    if math.isnan(lead):  # (sums near the float range: nothing known)
        weights = np.ones(_GRID)
    else:
        z = min(max(lead, -1e150), 1e150) - _SQUARES / spread
        log_w = -0.5 * z * z
        weights = np.exp(log_w - log_w.max())
    weights[0] *= 0.5  # the trapezoid rule
    weights[-1] *= 0.5
    mean = float(np.dot(weights, _SIGMAS) / weights.sum())
    return min(mean * mean * top, top)
