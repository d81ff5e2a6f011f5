"""How a moment release splits its budget: the weights and the choice between them.

:data:`MOMENT_WEIGHTS` holds the budget weights of the sufficient statistics behind
count, sum, mean, var, std, describe and cov, each chosen by measurement in
``benchmarks/accuracy.py``. :func:`weights_name` picks a statistic's entry from its
method, relation, mechanism and bounding mode; :func:`pair_allowed` says where a
column's count and centred sum are measured as its two bound sums, and
:func:`pair_count_is_better` where describe measures a count of its own instead;
:func:`statistic_weights` lets statistics requested together read one
measurement. All of it reads public facts only. The plan entries and the
estimates that use these weights are in :mod:`pandas_dp.stats.moments`.
"""

from __future__ import annotations

from collections.abc import Sequence

from pandas_dp.noise.plans import NoisePlan
from pandas_dp.request.settings import Settings
from pandas_dp.stats import estimators as est
from pandas_dp.stats.catalogue import moment

__all__ = [
    "METHODS",
    "MOMENT_WEIGHTS",
    "pair_allowed",
    "pair_count_is_better",
    "resolve_method",
    "statistic_weights",
    "weights_name",
]

#: Budget weights of the sufficient statistics behind each statistic (add/remove).
#: Measured in ``benchmarks/accuracy.py`` (section "splits", results in
#: ``benchmarks/results/accuracy.md``): RMSE over 500 seeded releases of every
#: candidate weighting, bounds [0, 100], n in {100, 1000, 10000}, epsilon in
#: {0.1, 1, 10}, data uniform / normal centred / piled near a bound (and two-point
#: for the variance), bounding bit and truncated. The defaults minimise the worst
#: ratio to the best weighting of each setting (minimax regret). A one-stage mean
#: ``m + S/C`` errs by the sum's noise plus the count's noise times the distance of
#: the mean from the midpoint ``m``, so its best split depends on the (private)
#: data (1:9 on centred data, 1:1 on piled data; 1:2 was the minimax). Under
#: add/remove with Laplace noise (bounding ``bit`` or ``none``) the mean measures
#: no split at all: the two sums from the bounds, ``(Σ (x - a), Σ (b - x))``, to
#: which one row adds ``b - a`` in all, noised as one vector at the whole epsilon
#: (``bound_sums``; ``benchmarks/mean_pair.py``: more accurate than Liu's
#: public-n mean in every setting, up to 2x more than the two stages below, at
#: most 10 % less on centred data with n epsilon >= 1000). With the truncated
#: mode or the Gaussian mechanism (whose calibrations read a per-entry
#: sensitivity) the mean keeps two stages (``mean_two_stages``): the sum about
#: the first stage's mean (``recentred_sum``,
#: :func:`~pandas_dp.stats.estimators.recentre`), whose noise the count no longer
#: multiplies by a large distance; count : centred_sum : recentred_sum = 2:1:13
#: minimises the worst ratio over the informative settings (the best candidate's
#: RMSE at most 1 % of the bounds' width: 36 of 54): 1.05x, against 2.18x for the
#: one-stage 1:2. Under substitute (where a sum about any centre is as noisy as
#: about the midpoint) the mean keeps 1:2 (``mean_substitute``). Variance and std:
#: under add/remove with Laplace noise (bit or none) the count and the centred sum
#: come from the bound sums too (``(P + Q)/R`` and ``(P - Q)/2``, uncorrelated
#: noise, variances ``4/e²`` and ``R²/e²`` at a share ``e``); bound_sums :
#: centred_squares = 2:3 (worst 1.34x over 36 settings; 1:1 1.41x), against the
#: separate 5:4:9 at equal epsilon: 0.77-0.91x RMSE in 25 of 36 settings,
#: 1.00-1.02x on two-point data at epsilon <= 1, up to 1.35x where the estimate is
#: mostly noise (n = 100, epsilon = 0.1) and 1.26x on two-point data at epsilon =
#: 10 (the variance at the top of its public range). With the
#: truncated mode, the Gaussian or substitute, count : centred_sum :
#: centred_squares = 5:4:9 (``var_separate``; worst 1.40x, former 1:1:2 1.54x).
#: ``describe`` measures, per column, its count and centred sum (as the bound
#: sums), its centred squares, and its percentiles' grid (``grid``):
#: bound_sums : centred_squares : grid = 2:1:1 (issue 33). Chosen in
#: ``benchmarks/accuracy.py --only describe_split`` (``results/accuracy.md``,
#: section 5b; ages, Likert 1..5, log-normal incomes and piled counts, n = 300 to
#: 30 000, epsilon 0.3 to 3, 28 settings, 200 releases) against what a user
#: splitting the column's budget by hand gets: ``count``, ``mean``, ``std`` and
#: ``quantile`` each at a quarter. Minimax of describe's RMSE over the
#: standalone's, over rows and settings, among (grid 1/4 or 3/8) x (bound sums :
#: squares 2:1 or 3:1): 2:1:1 has the worst ratio 1.00 (count 0.80-0.91x, mean
#: 0.53-0.88x, std 0.23-0.99x, percentiles 1.00x: the standalone quantile at the
#: same share), against 1.04 for 10:5:9 (grid 3/8; count 1.01x, std 1.04x,
#: percentiles 0.83x median), 1.05 for 9:3:4 (std) and 1.11 for 7.5:2.5:6; the
#: former 10:3:5 with the tree 541 (percentiles; its count, mean and std
#: 0.23-1.00x). 2:1:1 still gives the count, the centred sum and the squares at
#: least the shares of the describe before the bound sums (three releases at
#: epsilon/3). Where a count of its own is more accurate
#: (:func:`pair_count_is_better`: a large epsilon, above about 2.9 per column
#: with these weights, 4.8 with the former 10:3:5, where integer noise is mostly
#: exactly 0 while a count read off two real-valued sums is not) describe
#: measures count : centred_sum : centred_squares : grid = 6:4:4:4
#: (``describe_separate``, also the truncated mode's, the Gaussian's and
#: substitute's): the count and the sum keep the shares of those three releases
#: (1/3, 2/9), the squares and the grid split the rest. (The study's epsilon = 3
#: settings measured this design, with the moments then at 6:4:3.) Both entries
#: weigh 18 in all, so every column, and a categorical column's histogram
#: (``describe.CATEGORICAL_WEIGHT``), gets an equal share of describe's epsilon.
#: ``cov`` and ``corr`` (a weight per entry: 1 count, p sums, p squares and
#: p(p-1)/2 cross-products): 4 x 4 on [-1, 1], n = 1000, epsilon = 1, 1000
#: releases, Frobenius RMSE on correlated data / data piled at -1: equal weights
#: 0.0831 / 0.0910, 1:1:1.2:1.5 0.0754 / 0.1048 (the most off-diagonal weight
#: correlated data rewards, 1:1:3:3, costs piled data 1.9x; the sums and count
#: carry the piled data's large means). Chosen: 1:1:1.2:1.5, worst ratio to the
#: best candidate of either shape 1.15x (equal weights: 1.19x).
MOMENT_WEIGHTS: dict[str, dict[str, float]] = {
    "count": {"count": 1.0},
    "sum": {"sum": 1.0},
    # the whole budget; 3, the one-stage total (a partition selection, weight 1,
    # keeps its quarter of a grouped mean's budget)
    "mean": {"bound_sums": 3.0},
    # 2:1:13, scaled to the same total
    "mean_two_stages": {"count": 0.375, "centred_sum": 0.1875, "recentred_sum": 2.4375},
    "mean_substitute": {"count": 1.0, "centred_sum": 2.0},
    # 2:3, scaled to the separate split's total
    "var": {"bound_sums": 7.2, "centred_squares": 10.8},
    "var_separate": {"count": 5.0, "centred_sum": 4.0, "centred_squares": 9.0},
    # 2:1:1 and 6:4:4:4, scaled to the former total (18)
    "describe": {"bound_sums": 9.0, "centred_squares": 4.5, "grid": 4.5},
    "describe_separate": {"count": 6.0, "centred_sum": 4.0, "centred_squares": 4.0, "grid": 4.0},
    "cov": {"count": 1.0, "centred_sum": 1.0, "centred_squares": 1.2, "cross_products": 1.5},
    # skew: count : centred_sum : centred_squares : centred_cubes = 2:4:4:5, measured in
    # ``benchmarks/skew_split.py`` (``results/skew_split.md``: 11 candidates, 12 cells,
    # 200 releases each): worst ratio to the best candidate 1.38x (symmetric data),
    # against 1.48x for 1:3:3:3 and 3.24x for 1:2:3:5, the split error propagation
    # gives for data centred in the bounds; data piled far from the midpoint need the
    # count and the sum, whose noise the cubes' recentring multiplies by the distance
    "skew": {"count": 2.0, "centred_sum": 4.0, "centred_squares": 4.0, "centred_cubes": 5.0},
    "mean_direct": {"mean_direct": 1.0},
    "var_direct": {"var_direct": 1.0},
}
#: The ways of estimating a mean or a variance (:func:`resolve_method`).
METHODS: tuple[str, ...] = ("auto", "moments", "direct")


def resolve_method(method: str, settings: Settings) -> str:
    """The method a release uses: ``"auto"`` is ``"moments"``; ``"direct"`` is checked.

    Parameters
    ----------
    method : {"auto", "moments", "direct"}
        As passed by the caller.
    settings : Settings
        The call's settings; ``"direct"`` needs a public ``n``, which only
        ``neighbouring="substitute"`` declares.

    Returns
    -------
    str
        ``"moments"`` (noisy sufficient statistics) or ``"direct"`` (Liu's releases).

    Raises
    ------
    ValueError
        For an unknown method, or ``"direct"`` without a public length.

    Examples
    --------
    >>> resolve_method("auto", Settings(1.0))
    'moments'
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r} is not supported; use 'auto', 'moments' or 'direct'")
    if method == "direct" and settings.neighbouring != "substitute":
        raise ValueError(
            "method='direct' (Liu's R/n releases) needs the frame's length to be public; "
            "declare neighbouring='substitute' for a frame whose length really is public, "
            "or use the default method"
        )
    return "moments" if method == "auto" else method


def weights_name(
    statistic: str,
    method: str,
    neighbouring: str = "add_remove",
    mechanism: str = "laplace",
    bounding: str = "bit",
) -> str:
    """The :data:`MOMENT_WEIGHTS` entry that splits ``statistic``'s budget.

    Parameters
    ----------
    statistic : str
        ``"count"``, ``"sum"``, ``"mean"``, ``"var"`` or ``"std"`` (which reads the
        variance's measurements), or ``"describe"``.
    method : str
        ``"moments"`` or ``"direct"`` (the mean and the variance only; the other
        statistics have one way).
    neighbouring : str, default "add_remove"
        The relation: under ``"substitute"`` the mean measures a count and a
        centred sum (``"mean_substitute"``).
    mechanism, bounding : str, default "laplace", "bit"
        Under add/remove with Laplace noise and bounding ``"bit"`` or ``"none"``
        (:func:`pair_allowed`) the mean, the variance and describe measure a
        column's two bound sums (``"mean"``, ``"var"``, ``"describe"``; describe
        only where :func:`pair_count_is_better`); otherwise the mean measures two
        stages (``"mean_two_stages"``) and the others a count and a centred sum
        (``"var_separate"``, ``"describe_separate"``).

    Returns
    -------
    str

    Examples
    --------
    >>> weights_name("std", "moments"), weights_name("mean", "direct")
    ('var', 'mean_direct')
    >>> weights_name("mean", "moments", "substitute")
    'mean_substitute'
    >>> weights_name("mean", "moments", "add_remove", "gaussian")
    'mean_two_stages'
    >>> weights_name("var", "moments", "add_remove", "laplace", "truncated")
    'var_separate'
    """
    base = moment(statistic).reads
    way = method if base in ("mean", "var") else "moments"
    if way == "direct":
        return f"{base}_direct"
    if base not in ("mean", "var", "describe"):
        return base
    pair = pair_allowed(neighbouring, mechanism, bounding)
    if base != "mean":
        return base if pair else f"{base}_separate"
    if neighbouring == "substitute":
        return "mean_substitute"
    return "mean" if pair else "mean_two_stages"


def pair_allowed(neighbouring: str, mechanism: str, bounding: str) -> bool:
    """Whether a column's count and centred sum are measured as its two bound sums.

    Under add/remove with Laplace noise and bounding ``"bit"`` or ``"none"``: the
    pair's calibration (one vector, a per-entry sensitivity and a joint L1 norm)
    is the Laplace one, and its saving is the private count's (under substitute
    the count costs nothing extra to a sum's neighbours, and the mean keeps 1:2).

    Examples
    --------
    >>> pair_allowed("add_remove", "laplace", "bit"), pair_allowed("substitute", "laplace", "bit")
    (True, False)
    """
    return neighbouring == "add_remove" and mechanism == "laplace" and bounding != "truncated"


#: What a mean reads of a variance's measurements.
_FIRST_STAGE = ("bound_sums", "count", "centred_sum")


def statistic_weights(
    statistic: str,
    together: Sequence[str],
    method: str,
    neighbouring: str,
    mechanism: str = "laplace",
    bounding: str = "bit",
) -> dict[str, float]:
    """The budget weights of ``statistic``'s measurements, requested with ``together``.

    :data:`MOMENT_WEIGHTS`'s entry (:func:`weights_name`), except that a mean or a
    count asked for with a variance or std of the same column reads the
    variance's measurements of them (its bound sums, or its count and centred
    sum), and a count asked for with a mean measured as bound sums reads those:
    what is measured once is paid for once, at the variance's (or the mean's)
    weights.

    Examples
    --------
    >>> statistic_weights("mean", ("mean",), "moments", "add_remove")
    {'bound_sums': 3.0}
    >>> statistic_weights("mean", ("mean", "std"), "moments", "add_remove")
    {'bound_sums': 7.2}
    >>> statistic_weights("count", ("count", "mean"), "moments", "add_remove")
    {'bound_sums': 3.0}
    >>> statistic_weights("mean", ("mean", "var"), "moments", "add_remove", "gaussian")
    {'count': 5.0, 'centred_sum': 4.0}
    """
    name = weights_name(statistic, method, neighbouring, mechanism, bounding)
    wanted = set(together)
    reader = None  # the statistic whose measurements this one reads
    if name in ("mean", "mean_two_stages", "count") and any(
        moment(x).reads == "var" for x in wanted
    ):
        reader = weights_name("var", method, neighbouring, mechanism, bounding)
    elif name == "count" and "mean" in wanted:
        reader = weights_name("mean", method, neighbouring, mechanism, bounding)
    if reader is not None and not reader.endswith("_direct"):
        read = MOMENT_WEIGHTS[reader]
        shared = ("bound_sums", "count") if statistic == "count" else _FIRST_STAGE
        if "bound_sums" in read or reader.startswith("var"):
            return {k: v for k, v in read.items() if k in shared}
    return dict(MOMENT_WEIGHTS[name])


def pair_count_is_better(pair: NoisePlan, count: NoisePlan, width: float) -> bool:
    """Whether a count read off the bound sums (noise plan ``pair``, bounds of width
    ``width``) has at most the mean squared error of a count of its own (``count``).

    A choice between two plans by their public noise scales alone. At a large
    epsilon a count's integer noise is mostly exactly 0, which a count rounded
    from two real-valued sums does not match (:func:`~pandas_dp.stats.estimators.integer_count_mse`,
    :func:`~pandas_dp.stats.estimators.bound_sums_count_mse`); describe then measures a
    count of its own.

    Examples
    --------
    >>> import numpy as np
    >>> from pandas_dp.noise.plans import plan_noise
    >>> def pair(e): return plan_noise(np.full(2, 0.5), np.zeros(2), np.full(2, np.inf), epsilon=e)
    >>> def count(e): return plan_noise(np.ones(1), np.zeros(1), np.full(1, np.inf), epsilon=e,
    ...                                 integer=True)
    >>> pair_count_is_better(pair(0.5), count(1 / 3), 1.0)
    True
    >>> pair_count_is_better(pair(5.0), count(10 / 3), 1.0)
    False
    """
    return est.bound_sums_count_mse(pair, width) <= est.integer_count_mse(count)
