"""Bounds estimated privately: ``bounds="auto"`` (REFERENCE.md §14).

A column's range is released privately, then used as if it had been declared
(sequential composition: after its release the estimate is public).

Bands
    Every value is mapped to one of :data:`BANDS` public bands by a row-wise
    function of the value alone (:func:`band_index`): the *zero band*
    ``|x| < 2**-LOW_EXPONENT``, and for each sign and each integer ``j`` in
    ``[-LOW_EXPONENT, HIGH_EXPONENT)`` the band ``2**j <= |x| < 2**(j + 1)``; values
    at or beyond ``2**HIGH_EXPONENT``, and the infinities, go to the outermost band
    of their sign; a missing value (NaN, ``pd.NA``) to no band. The bands are
    numbered in value order, so band ``0`` holds the most negative values and band
    ``BANDS - 1`` the most positive ones. Which bands exist never depends on the data.

Measurement
    The band histogram is a histogram over public categories: one
    ``category_counts`` measurement of a :class:`~pandas_dp.plan.plans.Plan` per
    column, so the charge, the ledger row, the privacy unit's truncation, the
    neighbouring relation and the engines (pandas and Dask) are those of every
    count release. One row sits in one band: a unit of ``c`` rows moves at most
    ``c`` counts by one each under add/remove (L1 ``c``), twice that under
    substitute. Every band is noised with discrete Laplace noise, the empty ones
    included. The release is always pure epsilon-DP (Laplace, ``bounding="bit"``,
    no delta), whatever the mechanism of the release that uses the bounds.

Reading (post-processing, :func:`read_bounds`)
    With the scale ``T`` the noise was drawn with, an empty band's noisy count is at
    least an integer ``m`` with probability ``exp(-m / T) / (1 + exp(-1 / T))``.
    :func:`threshold` is the smallest whole ``t`` such that a count above ``t`` has
    that probability at most ``beta / BANDS``; so with probability at least ``1 - beta``
    no empty band passes. ``t`` is within one of REFERENCE.md's
    ``T ln(B / (2 beta))`` (the continuous Laplace tail) and exact for the discrete
    noise. The lower bound is the lower edge of the first band whose noisy count
    exceeds ``t``, the upper bound the upper edge of the last one; by default
    (:data:`INCLUDE_ZERO`) they are then stretched to include zero, which stops the
    bands near zero -- narrow, each holding fewer than ``t`` values, together
    possibly many -- from clipping a positive column's lower tail (measured in
    ``benchmarks/auto_bounds.py``). When no band passes, the bounds fall back to
    :data:`FALLBACK` and the record says so; nothing raises after the charge.

Cost
    Useful when a band holds well over ``t`` values (``t`` is about
    ``18.4 c / epsilon_b`` at the default ``beta``), and for data whose spread is
    not small against its distance from zero: a column of years (1910 ... 2040)
    gets ``[0, 2048]`` (``[1024, 2048]`` without the stretch to zero), 16-25 (8-12)
    times its range; declare such bounds, or centre the column first.

Examples
--------
>>> import numpy as np
>>> band_edges(band_index(np.array([3.0, -0.75]))).tolist()
[[2.0, 4.0], [-1.0, -0.5]]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from pandas_dp.budget.amounts import RELATIVE_TOLERANCE
from pandas_dp.budget.budgets import PrivacyBudget, active_budgets
from pandas_dp.engines.protocol import Kernels
from pandas_dp.engines.registry import engine_for
from pandas_dp.errors import BudgetExceededError
from pandas_dp.noise.mechanisms import representable_scale
from pandas_dp.plan.plans import Plan, engine_input
from pandas_dp.request.grouping_facts import grouping_facts
from pandas_dp.request.settings import Settings
from pandas_dp.result.values import DPFloat, DPInt, DPMetadata, attach

__all__ = [
    "BANDS",
    "DEFAULT_BETA",
    "DEFAULT_SHARE",
    "FALLBACK",
    "HIGH_EXPONENT",
    "INCLUDE_ZERO",
    "LOW_EXPONENT",
    "AutoBounds",
    "EstimatedBounds",
    "annotate",
    "band_edges",
    "band_index",
    "bounds_settings",
    "budgets_of",
    "check_total",
    "private_bounds",
    "read_bounds",
    "resolve_auto",
    "resolve_if_auto",
    "shared_randomness",
    "threshold",
]

#: ``k``: the zero band holds ``|x| < 2**-LOW_EXPONENT`` (about 2.3e-10). Values
#: this small are zero for every bound a release needs: the bands above start at
#: the smallest magnitude a user would tell from zero.
LOW_EXPONENT: int = 32
#: ``K``: the outermost bands start at ``2**(HIGH_EXPONENT - 1)`` (about 9.2e18):
#: past the int64 range and any count or amount of money (values beyond fall in
#: the outermost band).
HIGH_EXPONENT: int = 64
#: ``B = 2 (k + K) + 1`` bands: 96 per sign and the zero band.
BANDS: int = 2 * (LOW_EXPONENT + HIGH_EXPONENT) + 1
#: The position of the zero band (the bands are numbered in value order).
ZERO_BAND: int = LOW_EXPONENT + HIGH_EXPONENT
#: The probability that some empty band passes the threshold, which would widen
#: the bounds to an arbitrary band, up to ``2**64``: a ruined release (its interval
#: shows it). One in a million costs a threshold of ``18.4 T`` against ``14.5 T`` at
#: ``1e-4`` and ``11.5 T`` at ``1e-3``; ``benchmarks/auto_bounds.py`` measured the
#: pooled median error ratio 2.01 / 1.82 / 1.71 for the three (share 0.3): a modest
#: gain for a thousand times more ruined releases.
DEFAULT_BETA: float = 1e-6
#: The share of a release's epsilon spent on its bounds (``bounds_epsilon_share``).
#: Chosen in ``benchmarks/auto_bounds.py`` (``results/auto_bounds.md``): 0.3 and 0.4
#: tie over the settings with ``n epsilon >= 1000`` (pooled median error ratio to
#: the true range declared 1.8-2.0; 0.2, and 0.5 in a first run, worse on the mean,
#: 0.2 falling back far more often at small ``n epsilon``); 0.3 costs less
#: where the data are plentiful (the release keeps 70 % of epsilon), 0.4 falls back
#: less where they are scarce (``n epsilon`` near 100).
DEFAULT_SHARE: float = 0.3
#: Whether the bounds are stretched to include zero (:func:`read_bounds`'s ``zero``),
#: chosen in ``benchmarks/auto_bounds.py``.
INCLUDE_ZERO: bool = True
#: The bounds used when no band passes the threshold: the bands of ``|x| < 1``.
FALLBACK: tuple[float, float] = (-1.0, 1.0)

#: The band labels, in value order (public, the same for every column).
_CATEGORIES = pd.Index(np.arange(BANDS), dtype=np.int64)
_CATEGORY_LIST: tuple[int, ...] = tuple(range(BANDS))
_TINY = 2.0**-LOW_EXPONENT

IntArray = NDArray[np.intp]
FloatArray = NDArray[np.float64]


# ----------------------------------------------------------------------------- bands


def band_index(values: ArrayLike) -> IntArray:
    """The band of each value, in value order (``-1`` for a missing value).

    A pure, public, row-wise function: ``0`` is the outermost negative band
    (``x <= -2**(K-1)``, ``-inf`` included), :data:`ZERO_BAND` the zero band
    (``|x| < 2**-k``), ``BANDS - 1`` the outermost positive one. ``-0.0`` is in
    the zero band; subnormals too.

    Parameters
    ----------
    values : array_like of float
        Values (converted to float64; NaN is missing).

    Returns
    -------
    numpy.ndarray of intp
        One band per value, ``-1`` for NaN.

    Examples
    --------
    >>> band_index([0.0, 1.0, 1.5, 2.0, -1.0, float("inf"), float("nan")]).tolist()
    [96, 129, 129, 130, 63, 192, -1]
    """
    x = np.asarray(values, dtype=np.float64)
    _, exponent = np.frexp(x)  # |x| in [2**(e - 1), 2**e) for finite non-zero x
    band = np.clip(exponent.astype(np.intp) - 1, -LOW_EXPONENT, HIGH_EXPONENT - 1)
    magnitude = band + (LOW_EXPONENT + 1)  # 1 ... k + K
    with np.errstate(invalid="ignore"):
        magnitude = np.where(np.isinf(x), LOW_EXPONENT + HIGH_EXPONENT, magnitude)
        magnitude = np.where(np.abs(x) < _TINY, 0, magnitude)
    out = ZERO_BAND + np.where(np.signbit(x), -magnitude, magnitude)
    out = np.where(np.isnan(x), -1, out)
    return np.asarray(out, dtype=np.intp)


def band_edges(bands: ArrayLike) -> FloatArray:
    """The ``(lower, upper)`` edges of each band (public).

    The outermost bands' outer edges are ``-2**K`` and ``2**K`` (the values beyond,
    which the band also holds, are clipped by bounds read from it).

    Parameters
    ----------
    bands : array_like of int
        Band numbers in ``[0, BANDS)``.

    Returns
    -------
    numpy.ndarray of float64
        Shape ``(..., 2)``: lower and upper edge.

    Examples
    --------
    >>> band_edges([96, 129]).tolist()
    [[-2.3283064365386963e-10, 2.3283064365386963e-10], [1.0, 2.0]]
    """
    b = np.asarray(bands, dtype=np.int64)
    if np.any((b < 0) | (b >= BANDS)):
        raise ValueError(f"band numbers are in [0, {BANDS}); got {b.tolist()}")
    s = b - ZERO_BAND
    low = np.ldexp(1.0, np.abs(s) - LOW_EXPONENT - 1)  # the band's smaller magnitude
    high = np.ldexp(1.0, np.abs(s) - LOW_EXPONENT)
    lower = np.where(s > 0, low, np.where(s < 0, -high, -_TINY))
    upper = np.where(s > 0, high, np.where(s < 0, -low, _TINY))
    return np.stack([lower, upper], axis=-1).astype(np.float64)


# ----------------------------------------------------------------------------- reading


def threshold(scale: float, beta: float, bands: int = BANDS) -> float:
    """The count an empty band exceeds with probability at most ``beta / bands``.

    For discrete Laplace noise of scale ``T`` (``P(k) ~ exp(-|k| / T)``),
    ``P(noise >= m) = exp(-m / T) / (1 + exp(-1 / T))`` for integers ``m >= 1``.
    With ``m*`` where that equals ``beta / bands``, the threshold is
    ``ceil(m*) - 1``: a noisy count passes when it is *above* it (at least
    ``ceil(m*)``). ``m*`` is at most half a count above REFERENCE.md's
    ``T ln(B / (2 beta))``.

    Parameters
    ----------
    scale : float
        The scale ``T`` the noise was drawn with (positive, finite).
    beta : float
        The probability, over all bands, that some empty band passes (in (0, 1)).
    bands : int, default BANDS
        The number of bands.

    Returns
    -------
    float
        The threshold ``t`` (a whole number).

    Examples
    --------
    >>> threshold(1.0, 1e-3), round(math.log(BANDS / 2e-3), 2)
    (11.0, 11.48)
    """
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"the noise scale must be positive and finite; got {scale}")
    if not 0.0 < beta < 1.0:
        raise ValueError(f"beta must be in (0, 1), e.g. beta=1e-6; got {beta}")
    if bands < 1:
        raise ValueError(f"there must be at least one band; got {bands}")
    m_star = scale * (math.log(bands / beta) - math.log1p(math.exp(-1.0 / scale)))
    return float(max(math.ceil(m_star) - 1, 0))


def read_bounds(
    noisy: ArrayLike, scale: float, beta: float = DEFAULT_BETA, *, zero: bool = False
) -> tuple[float, float, bool]:
    """The bounds the noisy band counts show (post-processing; never raises on counts).

    Parameters
    ----------
    noisy : array_like of float
        The :data:`BANDS` noisy counts, in band order (any values: negative, zero,
        NaN -- which never passes).
    scale : float
        The scale the counts were noised with.
    beta : float, default DEFAULT_BETA
        The probability that an empty band passes (see :func:`threshold`).
    zero : bool, default False
        Stretch the bounds to include zero (a lower bound above zero becomes zero,
        an upper bound below zero becomes zero): a public rule, post-processing.

    Returns
    -------
    lower, upper : float
        The lower edge of the first band above the threshold and the upper edge of
        the last one; :data:`FALLBACK` if none is.
    fell_back : bool
        Whether no band passed.

    Examples
    --------
    >>> counts = np.zeros(BANDS); counts[[129, 131]] = 50
    >>> read_bounds(counts, 1.0, 1e-3)
    (1.0, 8.0, False)
    >>> read_bounds(np.zeros(BANDS), 1.0, 1e-3)
    (-1.0, 1.0, True)
    """
    counts = np.asarray(noisy, dtype=np.float64).reshape(-1)
    if counts.size != BANDS:
        raise ValueError(f"expected {BANDS} band counts; got {counts.size}")
    t = threshold(scale, beta)
    with np.errstate(invalid="ignore"):
        passing = np.flatnonzero(counts > t)
    if passing.size == 0:
        return FALLBACK[0], FALLBACK[1], True
    edges = band_edges([passing[0], passing[-1]])
    lower, upper = float(edges[0, 0]), float(edges[1, 1])
    if zero:
        lower, upper = min(lower, 0.0), max(upper, 0.0)
    return lower, upper, False


# ----------------------------------------------------------------------------- release


@dataclass(frozen=True)
class EstimatedBounds:
    """One column's private range estimate (public: computed from a release).

    Attributes
    ----------
    column : hashable
    lower, upper : float
        The estimated bounds.
    fell_back : bool
        No band passed the threshold: the bounds are :data:`FALLBACK`.
    epsilon : float
        The epsilon this column's histogram spent.
    scale : float
        The scale its noise was drawn with.
    threshold : float
        The count a band had to exceed.
    beta : float
        The probability that an empty band passes.
    """

    column: Hashable
    lower: float
    upper: float
    fell_back: bool
    epsilon: float
    scale: float
    threshold: float
    beta: float

    @property
    def bounds(self) -> tuple[float, float]:
        """``(lower, upper)``."""
        return (self.lower, self.upper)

    def as_dict(self) -> dict[str, Any]:
        """The record as plain values (for metadata)."""
        return {
            "bounds": self.bounds,
            "fell_back": self.fell_back,
            "epsilon": self.epsilon,
            "scale": self.scale,
            "threshold": self.threshold,
            "beta": self.beta,
        }


def bounds_settings(settings: Settings, epsilon: float) -> Settings:
    """The settings of the bounds release: ``settings``' relation, unit, budget and
    randomness, with ``epsilon``, pure Laplace noise and ``bounding="bit"``."""
    return Settings(
        epsilon,
        0.0,
        "laplace",
        "bit",
        settings.neighbouring,
        settings.out_of_bounds,
        settings.random_state,
        settings.budget,
        settings.rows,
        settings.contributions,
    )


def _floats(series: pd.Series) -> FloatArray:
    """A numeric (or boolean) column's values as float64, missing as NaN."""
    if isinstance(series.dtype, np.dtype):
        return np.asarray(series.to_numpy(dtype=np.float64), dtype=np.float64)
    return np.asarray(series.to_numpy(dtype=np.float64, na_value=np.nan), dtype=np.float64)


def band_counts(
    series: pd.Series, groups: Any = None, *, kernels: Kernels | None = None
) -> FloatArray:
    """The exact band counts of a column, one row per group (engine call, after the charge).

    The bands are read value by value (:func:`band_index`) as a categorical column
    of the public band labels, which the engine counts like any declared
    categories: per partition on Dask, with the privacy unit's truncation in
    ``groups``.

    Parameters
    ----------
    series : pandas.Series
        A numeric column (a partition's, on Dask).
    groups : Groups, optional
        Each row's group code (``-1``: dropped by the unit's contribution bound).
    kernels : Kernels, optional
        The engine counting (default: the series' engine).

    Returns
    -------
    numpy.ndarray of float64
        Shape ``(groups, BANDS)``.
    """
    counter = engine_for(series) if kernels is None else kernels
    codes = band_index(_floats(series))
    labels = pd.Series(
        pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(_CATEGORIES)),
        index=series.index,
        name=series.name,
    )
    found = counter.category_counts(labels, _CATEGORY_LIST, groups=groups)
    return np.asarray(found.counts, dtype=np.float64).reshape(-1, BANDS)


def _key(column: Hashable) -> str:
    return f"{column}: category_counts"


def private_bounds(
    columns: pd.Series | Mapping[Any, pd.Series],
    settings: Settings,
    *,
    frame: pd.DataFrame | None = None,
    beta: float = DEFAULT_BETA,
    zero: bool = INCLUDE_ZERO,
) -> tuple[dict[Hashable, tuple[float, float]], DPMetadata]:
    """Release the range of each column privately, spending ``settings.epsilon``.

    One plan and one charge (one ledger row, statistic ``"bounds"``) for all the
    columns: each column's band histogram gets an equal share. The noise is pure
    (discrete Laplace, ``bounding="bit"``) whatever ``settings`` names
    (:func:`bounds_settings`); its privacy unit, relation, budget and randomness
    are ``settings``'.

    Parameters
    ----------
    columns : Series or mapping label -> Series
        The numeric columns (a Series: its own name labels it).
    settings : Settings
        The call's settings; ``settings.epsilon`` is what the bounds cost.
    frame : DataFrame, optional
        The frame holding the columns and the privacy unit's column (required
        with a privacy unit).
    beta : float, default DEFAULT_BETA
        The probability that an empty band widens a column's bounds.
    zero : bool, default INCLUDE_ZERO
        Stretch each column's bounds to include zero (see :func:`read_bounds`).

    Returns
    -------
    bounds : dict
        ``column -> (lower, upper)``.
    record : DPMetadata
        The release's metadata: statistic ``"bounds"``, epsilon, the scale and the
        threshold, the bounds (``output_bounds``) and, per column in ``details``,
        ``fell_back``, ``beta`` and the noisy band counts.

    Raises
    ------
    BudgetExceededError
        Before any data is read, if a budget cannot pay ``settings.epsilon``.
    ValueError
        For no columns or a ``beta`` outside (0, 1) (before the charge).

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.Series(np.linspace(10.0, 90.0, 1000), name="age")
    >>> bounds, record = private_bounds(s, Settings(epsilon=1.0, random_state=0))
    >>> bounds, record.statistic
    ({'age': (0.0, 128.0)}, 'bounds')
    """
    selected = dict(columns) if isinstance(columns, Mapping) else {columns.name: columns}
    if not selected:
        raise ValueError("private_bounds needs at least one column")
    threshold(1.0, beta)  # (validates beta before the charge)
    own = bounds_settings(settings, settings.epsilon)
    plan = Plan(own)
    keys = {c: plan.categories(c, BANDS) for c in selected}
    plan.calibrate()
    readers = {("categories", c): partial(band_counts, s) for c, s in selected.items()}
    data = engine_input(selected, {}, own, None, frame, readers)
    noisy = plan.run(data, "bounds", tuple(selected))  # charged here, then read
    found: dict[Hashable, EstimatedBounds] = {}
    for c, key in keys.items():
        m = plan.measurements[key]
        assert m.noise is not None
        scale = float(np.max(representable_scale(m.noise.scale)))
        lo, hi, fell = read_bounds(noisy[key], scale, beta, zero=zero)
        found[c] = EstimatedBounds(
            c, lo, hi, fell, own.epsilon / len(selected), scale, threshold(scale, beta), beta
        )
    record = _record(own, plan, found, noisy, keys, zero)
    return {c: e.bounds for c, e in found.items()}, record


def _record(
    settings: Settings,
    plan: Plan,
    found: Mapping[Hashable, EstimatedBounds],
    noisy: Mapping[str, FloatArray],
    keys: Mapping[Hashable, str],
    zero: bool,
) -> DPMetadata:
    """The metadata of a bounds release (public values only)."""
    labels = [str(c) for c in found]
    per_entry = {c: float(plan.measurements[keys[c]].sensitivity) for c in found}
    details = {
        "bands": {
            "count": BANDS,
            "zero band": f"|x| < 2**-{LOW_EXPONENT}",
            "outermost": f"|x| >= 2**{HIGH_EXPONENT - 1}",
            "exponent range": (-LOW_EXPONENT, HIGH_EXPONENT),
        },
        "noised": "rows per band (integer, discrete Laplace noise, every band)",
        "l1 sensitivity": plan.histogram_l1(),
        "budget_split": plan.split(),
        "reading": "the outer edges of the bands above the threshold"
        + (", stretched to include zero" if zero else ""),
        "fallback": FALLBACK,
        "columns": {str(c): e.as_dict() for c, e in found.items()},
        "band counts": {str(c): noisy[keys[c]].astype(np.int64) for c in found},
    }
    return DPMetadata(
        **grouping_facts(settings.contributions, None),
        statistic="bounds",
        columns=tuple(found),
        mechanism="laplace",
        epsilon=settings.epsilon,
        delta=0.0,
        neighbouring=settings.neighbouring,
        n=settings.public_n,
        sensitivity=pd.Series([per_entry[c] for c in found], index=labels),
        scale=pd.Series([e.scale for e in found.values()], index=labels),
        input_bounds={},
        output_bounds={c: e.bounds for c, e in found.items()},
        bounding="bit",
        secure=settings.source.secure,
        value=np.array([e.bounds for e in found.values()], dtype=np.float64),
        details=details,
    )


# ----------------------------------------------------------------------------- bounds="auto"


@dataclass(frozen=True)
class AutoBounds:
    """What ``bounds="auto"`` resolved: the bounds, and the settings of the release.

    Attributes
    ----------
    bounds : dict
        ``column -> (lower, upper)``, to be used as declared bounds.
    settings : Settings
        The call's settings with the epsilon left for the release itself (and the
        call's whole delta); a seeded call's generator continues where the bounds
        release left it.
    record : DPMetadata
        The bounds release's metadata.
    share : float
        The share of the call's epsilon the bounds spent.
    """

    bounds: dict[Hashable, tuple[float, float]]
    settings: Settings
    record: DPMetadata
    share: float

    @property
    def fell_back(self) -> tuple[Hashable, ...]:
        """The columns whose bounds are :data:`FALLBACK` (no band passed): a caller
        may release nothing for them rather than spend the rest of epsilon on a
        guess (a decision on released values only)."""
        per = self.record.details["columns"]
        return tuple(c for c in self.bounds if per[str(c)]["fell_back"])

    def details(self) -> dict[str, Any]:
        """What the release that used the bounds records of them (its ``details``)."""
        rec = self.record
        return {
            "bounds": "auto (estimated privately, REFERENCE.md §14)",
            "bounds_epsilon_share": self.share,
            "bounds_release": {
                "epsilon": rec.epsilon,
                "columns": rec.details["columns"],
                "fallback": FALLBACK,
            },
            "epsilon_total": rec.epsilon + self.settings.epsilon,
        }


def _shared_randomness(settings: Settings) -> Any:
    """One generator for the two releases of a seeded call (an int seed would give
    both the same noise words); a generator or ``None`` (secure) as it is."""
    rs = settings.random_state
    if isinstance(rs, int | np.integer) and not isinstance(rs, bool):
        return np.random.default_rng(int(rs))
    return rs


def _budgets(settings: Settings) -> list[PrivacyBudget]:
    """The budgets a release with ``settings`` would be charged to (each once)."""
    out: list[PrivacyBudget] = []
    for b in (settings.budget, *active_budgets()):
        if isinstance(b, PrivacyBudget) and all(b is not o for o in out):
            out.append(b)
    return out


#: The budgets a release with given settings would be charged to (public name).
budgets_of = _budgets
#: One generator for the several releases of a seeded call (public name).
shared_randomness = _shared_randomness


def check_total(settings: Settings, epsilon_bounds: float) -> None:
    """Refuse, before any charge, a ``bounds="auto"`` call no budget can pay in full.

    The call spends ``epsilon_bounds`` (pure) on the bounds, then the rest of
    ``settings.epsilon`` (and all of ``settings.delta``) on the release. A
    ``"basic"`` budget must have all of ``settings.epsilon`` and ``delta`` left; a
    ``"zcdp"`` one the bounds' rho ``epsilon_bounds**2 / 2`` plus, for a Laplace
    release, its ``epsilon**2 / 2`` (a Gaussian release's rho is known only once
    calibrated: its own charge checks it). Read from each budget's ``remaining``:
    a concurrent release may still spend in between, and then the second charge
    is refused after the first (a charge without a release, which is safe).

    Parameters
    ----------
    settings : Settings
        The call's settings (its whole epsilon and delta).
    epsilon_bounds : float
        The part of ``settings.epsilon`` the bounds spend.

    Raises
    ------
    BudgetExceededError
        Naming the budget that cannot pay, and what the call needs.
    """
    rest = settings.epsilon - epsilon_bounds
    for budget in _budgets(settings):
        left = budget.remaining
        name = f" {budget.name!r}" if budget.name else ""
        if budget.accounting == "basic":
            slack_e = RELATIVE_TOLERANCE * budget.epsilon
            slack_d = RELATIVE_TOLERANCE * budget.delta
            if left.epsilon + slack_e < settings.epsilon or left.delta + slack_d < settings.delta:
                raise BudgetExceededError(
                    f"bounds='auto' spends epsilon={settings.epsilon:g} in all "
                    f"({epsilon_bounds:g} on the bounds, {rest:g} on the release) and "
                    f"delta={settings.delta:g}, but only epsilon={left.epsilon:g}, "
                    f"delta={left.delta:g} remain of the budget{name}; nothing was spent. "
                    f"Lower epsilon, or declare bounds=(lower, upper) to spend none on them"
                )
            continue
        need = epsilon_bounds**2 / 2 + (rest**2 / 2 if settings.mechanism == "laplace" else 0.0)
        rho_cap = budget.rho_budget or 0.0
        if left.rho + RELATIVE_TOLERANCE * rho_cap < need:
            raise BudgetExceededError(
                f"bounds='auto' needs rho={need:g} (epsilon={epsilon_bounds:g} on the "
                f"bounds, {rest:g} on the release), but only rho={left.rho:g} remains of "
                f"the zCDP budget{name}; nothing was spent. Lower epsilon, or declare "
                f"bounds=(lower, upper)"
            )


def resolve_auto(
    columns: pd.Series | Mapping[Any, pd.Series],
    settings: Settings,
    *,
    bounds_epsilon_share: float = DEFAULT_SHARE,
    beta: float = DEFAULT_BETA,
    zero: bool = INCLUDE_ZERO,
    frame: pd.DataFrame | None = None,
) -> AutoBounds:
    """``bounds="auto"``: release the columns' bounds with a share of the call's epsilon.

    Checks that the budgets can pay the whole call (:func:`check_total`), releases
    the bounds (:func:`private_bounds`) with ``bounds_epsilon_share`` of
    ``settings.epsilon``, and returns them with the settings of the release that
    uses them (the rest of epsilon, all of delta).

    Parameters
    ----------
    columns : Series or mapping label -> Series
        The numeric columns of the release.
    settings : Settings
        The call's settings: its whole epsilon and delta.
    bounds_epsilon_share : float, default DEFAULT_SHARE
        The share of ``settings.epsilon`` spent on the bounds, in (0, 1).
    beta : float, default DEFAULT_BETA
        The probability that an empty band widens a column's bounds.
    zero : bool, default INCLUDE_ZERO
        Stretch each column's bounds to include zero (see :func:`read_bounds`).
    frame : DataFrame, optional
        The frame holding the columns (and the privacy unit's column).

    Returns
    -------
    AutoBounds

    Raises
    ------
    BudgetExceededError
        Before any charge, if a budget cannot pay the whole call.
    ValueError
        For a share outside (0, 1), no columns, or ``out_of_bounds="raise"`` (whose
        check after the charge would reveal values outside the estimate); before
        any charge.

    Examples
    --------
    >>> import pandas as pd
    >>> s = pd.Series(np.linspace(10.0, 90.0, 1000), name="age")
    >>> auto = resolve_auto(s, Settings(epsilon=1.0, random_state=0))
    >>> auto.bounds, round(auto.settings.epsilon, 3)
    ({'age': (0.0, 128.0)}, 0.7)
    """
    share = bounds_epsilon_share
    if type(share) is bool or not isinstance(share, int | float) or not 0.0 < share < 1.0:
        raise ValueError(
            f"bounds_epsilon_share must be a number in (0, 1), the share of epsilon "
            f"spent on the bounds (default {DEFAULT_SHARE}); got {share!r}"
        )
    threshold(1.0, beta)
    if settings.out_of_bounds == "raise":
        raise ValueError(
            "bounds='auto' cannot be combined with out_of_bounds='raise': estimated bounds "
            "clip the most extreme values by design, and raising when a value lies outside "
            "them would reveal it. Use out_of_bounds='clip' (the default), or declare the "
            "bounds the data must satisfy"
        )
    if isinstance(columns, Mapping) and not columns:
        raise ValueError("bounds='auto' needs at least one column")
    eps_b = settings.epsilon * float(share)
    check_total(settings, eps_b)
    rs = _shared_randomness(settings)
    first = dataclasses.replace(settings, random_state=rs)
    bounds, record = private_bounds(
        columns, bounds_settings(first, eps_b), frame=frame, beta=beta, zero=zero
    )
    rest = dataclasses.replace(first, epsilon=settings.epsilon - eps_b)
    return AutoBounds(bounds, rest, record, float(share))


def is_auto(bounds: Any) -> bool:
    """Whether a call's ``bounds`` asks for them to be estimated (``"auto"``).

    Examples
    --------
    >>> is_auto("auto"), is_auto((0, 1))
    (True, False)
    """
    return isinstance(bounds, str) and bounds == "auto"


def resolve_if_auto(
    bounds: Any,
    columns: Mapping[Any, pd.Series],
    settings: Settings,
    frame: pd.DataFrame | None = None,
    *,
    bounds_epsilon_share: float = DEFAULT_SHARE,
) -> tuple[Any, Settings, AutoBounds | None]:
    """The accessor's one call: ``bounds="auto"`` resolved, anything else as it is.

    Parameters
    ----------
    bounds : any
        The call's ``bounds`` argument.
    columns : mapping label -> Series
        The selected columns.
    settings : Settings
        The call's settings.
    frame : DataFrame, optional
        The frame holding the columns (and the privacy unit's column).
    bounds_epsilon_share : float, default DEFAULT_SHARE
        See :func:`resolve_auto`.

    Returns
    -------
    bounds, settings, auto
        For ``bounds="auto"``: the estimated bounds (a dict by column), the settings
        with the epsilon left and the :class:`AutoBounds`; otherwise ``bounds`` and
        ``settings`` unchanged and ``None``.

    Examples
    --------
    >>> resolve_if_auto((0, 1), {}, Settings(epsilon=1.0))[::2]
    ((0, 1), None)
    """
    if not is_auto(bounds):
        return bounds, settings, None
    auto = resolve_auto(columns, settings, bounds_epsilon_share=bounds_epsilon_share, frame=frame)
    return auto.bounds, auto.settings, auto


def annotate(result: Any, auto: AutoBounds | None) -> Any:
    """``result`` (a release made on ``auto``'s bounds) with them in its metadata.

    Its record's ``details`` gain :meth:`AutoBounds.details`; everything else,
    its epsilon included (the release's own), is unchanged.

    Parameters
    ----------
    result : DPFloat, DPInt, Series or DataFrame
        A release with a :class:`DPMetadata` record in ``attrs["dp"]``.
    auto : AutoBounds or None
        ``None`` (bounds not estimated): ``result`` is returned as it is.

    Returns
    -------
    object
        ``result``, its record replaced.
    """
    if auto is None:
        return result
    meta = result.attrs.get("dp")
    if not isinstance(meta, DPMetadata):
        return result
    new = dataclasses.replace(meta, details={**meta.details, **auto.details()})
    if isinstance(result, DPFloat | DPInt):
        result.attrs["dp"] = new
        return result
    return attach(result, new)
