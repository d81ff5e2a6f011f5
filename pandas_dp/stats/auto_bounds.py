"""Bounds estimated privately: ``bounds="auto"`` (REFERENCE.md §14).

A column's range is released privately, then used as if it had been declared
(sequential composition: after its release the estimate is public).

The bands and the reading of their noisy counts are :mod:`~pandas_dp.stats.auto_bands`.

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
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

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
from pandas_dp.stats.auto_bands import (
    BANDS,
    DEFAULT_BETA,
    DEFAULT_SHARE,
    FALLBACK,
    HIGH_EXPONENT,
    INCLUDE_ZERO,
    LOW_EXPONENT,
    band_edges,
    band_index,
    read_bounds,
    threshold,
)

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
    "check_share",
    "check_total",
    "private_bounds",
    "read_bounds",
    "refuse_raise",
    "resolve_auto",
    "resolve_if_auto",
    "shared_randomness",
    "threshold",
]

#: The band labels, in value order (public, the same for every column).
_CATEGORIES = pd.Index(np.arange(BANDS), dtype=np.int64)
_CATEGORY_LIST: tuple[int, ...] = tuple(range(BANDS))

FloatArray = NDArray[np.float64]


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


def refuse_raise(settings: Settings) -> None:
    """Refuse ``out_of_bounds="raise"`` with estimated bounds, which clip the most
    extreme values by design: raising on a value outside them would reveal it."""
    if settings.out_of_bounds == "raise":
        raise ValueError(
            "bounds='auto' cannot be combined with out_of_bounds='raise': estimated bounds "
            "clip the most extreme values by design, and raising when a value lies outside "
            "them would reveal it. Use out_of_bounds='clip' (the default), or declare the "
            "bounds the data must satisfy"
        )


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
    share = check_share(bounds_epsilon_share)
    threshold(1.0, beta)
    refuse_raise(settings)
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


def check_share(share: Any) -> float:
    """``bounds_epsilon_share`` checked: a number in (0, 1), else a ``ValueError``.

    Examples
    --------
    >>> check_share(0.25)
    0.25
    """
    if type(share) is bool or not isinstance(share, int | float) or not 0.0 < share < 1.0:
        raise ValueError(
            f"bounds_epsilon_share must be a number in (0, 1), the share of epsilon "
            f'spent on the bounds of bounds="auto" (default {DEFAULT_SHARE}); got {share!r}'
        )
    return float(share)


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
        See :func:`resolve_auto`; checked whatever ``bounds`` is (a call's
        keyword is refused when wrong, even where it is not used).

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
    check_share(bounds_epsilon_share)
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
