"""Statistics: what each release measures and how it is estimated from noisy values.

Moments (:mod:`~pandas_dp.stats.numeric`, :mod:`~pandas_dp.stats.moments`,
:mod:`~pandas_dp.stats.moment_weights`, :mod:`~pandas_dp.stats.estimators`,
:mod:`~pandas_dp.stats.shrinkage`), categories
(:mod:`~pandas_dp.stats.histograms`, :mod:`~pandas_dp.stats.histogram_estimates`,
:mod:`~pandas_dp.stats.grouped`), :mod:`~pandas_dp.stats.covariance`,
:mod:`~pandas_dp.stats.quantiles`, :mod:`~pandas_dp.stats.describe`, and the
post-processing :mod:`~pandas_dp.stats.constraints`.
"""
