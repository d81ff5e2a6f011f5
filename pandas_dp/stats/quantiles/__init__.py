"""Quantiles on a public grid (REFERENCE.md §12).

:mod:`~pandas_dp.stats.quantiles.releases` (the releases and their shapes),
:mod:`~pandas_dp.stats.quantiles.search` (private selection on a fine grid),
:mod:`~pandas_dp.stats.quantiles.tree` (a noisy hierarchical histogram),
:mod:`~pandas_dp.stats.quantiles.estimators` (one column's plan, selection and
intervals) and :mod:`~pandas_dp.stats.quantiles.agg` (medians inside ``agg``).
"""
