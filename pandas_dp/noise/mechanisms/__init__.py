"""Noise samplers and their calibration.

This package knows nothing of pandas. It offers

* :class:`RandomSource` (:mod:`~pandas_dp.noise.mechanisms.source`) -- uniform bits from
  the operating system's CSPRNG (``os.urandom``), or from a seeded
  :class:`numpy.random.Generator` when a caller asks for reproducibility (then
  ``secure`` is ``False``);
* exact integer samplers (:mod:`~pandas_dp.noise.mechanisms.samplers`), vectorised over
  per-entry scales: :func:`discrete_laplace` and :func:`truncated_discrete_laplace`
  (Canonne, Kamath & Steinke 2020: exact Bernoulli(``exp(-gamma)``) coins from
  uniform integers, no floating point between the random words and a draw) and
  :func:`discrete_gaussian`, CKS's rejection sampler on top of the discrete
  Laplace. Vectors of a few entries go through :mod:`~pandas_dp.noise.mechanisms.small`,
  the same algorithm in pure Python (same words, same draws), and with numba the
  discrete Laplace draws of a secure source, few or many, through
  :mod:`~pandas_dp.noise.mechanisms._compiled` (again the same words and draws);
* calibration (:mod:`~pandas_dp.noise.mechanisms.calibration`):
  :func:`grid_granularity` -- the power-of-two grid on which real-valued releases
  are made, so that no output carries information in its low-order float bits
  (Mironov 2012); :func:`gaussian_sigma` (analytic Gaussian, Balle & Wang 2018),
  :func:`discrete_gaussian_delta` / :func:`discrete_gaussian_sigma`, and
  :func:`truncated_laplace_scale` / :func:`truncated_discrete_laplace_scale` (the
  scale at which Laplace noise truncated to a public range is still epsilon-DP;
  Holohan et al. 2020); for the worst vector of partial shifts one privacy unit can
  make (:mod:`~pandas_dp.noise.mechanisms.shift_vectors`): the truncated scale and the
  discrete Gaussian's sigma on its exact privacy curve;
* tail bounds used by the confidence intervals
  (:mod:`~pandas_dp.noise.mechanisms.intervals`): :func:`laplace_halfwidth`,
  :func:`gaussian_halfwidth`.

Examples
--------
>>> import numpy as np
>>> src = RandomSource(random_state=7)
>>> k = discrete_laplace(np.array([2.0, 2.0, 2.0]), src)
>>> k.dtype, k.shape
(dtype('int64'), (3,))
>>> round(gaussian_sigma(1.0, 1.0, 1e-5), 4)
3.7306
"""

from __future__ import annotations

from pandas_dp.noise.mechanisms.calibration import (
    discrete_gaussian_delta,
    discrete_gaussian_sigma,
    gaussian_sigma,
    grid_granularity,
    truncated_discrete_laplace_scale,
    truncated_laplace_scale,
)
from pandas_dp.noise.mechanisms.constants import (
    GRID_BITS,
    MAX_SCALE,
    MIN_SCALE,
    SCALE_BITS,
    TRUNCATED_FAILURE,
)
from pandas_dp.noise.mechanisms.intervals import gaussian_halfwidth, laplace_halfwidth
from pandas_dp.noise.mechanisms.samplers import (
    FloatArray,
    IntArray,
    discrete_gaussian,
    discrete_laplace,
    representable_scale,
    truncated_discrete_laplace,
)
from pandas_dp.noise.mechanisms.source import RandomSource

__all__ = [
    "GRID_BITS",
    "MAX_SCALE",
    "MIN_SCALE",
    "SCALE_BITS",
    "TRUNCATED_FAILURE",
    "FloatArray",
    "IntArray",
    "RandomSource",
    "discrete_gaussian",
    "discrete_gaussian_delta",
    "discrete_gaussian_sigma",
    "discrete_laplace",
    "gaussian_halfwidth",
    "gaussian_sigma",
    "grid_granularity",
    "laplace_halfwidth",
    "representable_scale",
    "truncated_discrete_laplace",
    "truncated_discrete_laplace_scale",
    "truncated_laplace_scale",
]
