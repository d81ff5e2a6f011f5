"""Plans: a request turned into noisy sufficient statistics (DESIGN.md, "Every release").

A :class:`Plan` lists the sufficient statistics a release needs -- counts,
clamped centred sums, centred squares, cross-products, counts over declared
categories, counts of predicates, the number of rows -- each a
:class:`Measurement` with its sensitivity from :mod:`pandas_dp.sensitivity`
(rounding of the exact accumulation included), its public range, its share of
the budget and, once calibrated, its :class:`~pandas_dp.bounding.NoisePlan`. All
of it is built from public facts, so every error a plan can raise is raised
before the budget is charged and before the data is read.

Statistics requested together share measurements: a mean and a standard
deviation of one column are both computed from one (count, centred sum,
centred squares) triple, measured once.

Running a plan (:meth:`Plan.run`) charges the budget for the whole plan at once,
asks the engine (:mod:`pandas_dp.engines`) for the exact values -- one pass per
column or block -- and adds the noise, once, here on the client.

Examples
--------
>>> import pandas as pd
>>> from pandas_dp.declarations import NumericDeclaration
>>> s = Settings(epsilon=1.0, random_state=0)
>>> plan = Plan(s)
>>> decl = NumericDeclaration("age", 0.0, 100.0)
>>> keys = plan.moments(decl, ("count", "centred_sum"))
>>> plan.calibrate()
>>> data = series_data({"age": pd.Series([20.0, 40.0, None])}, {"age": decl})
>>> noisy = plan.run(data, "mean", ("age",))
>>> sorted(noisy)
['age: centred_sum', 'age: count']
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp import engines
from pandas_dp.accounting import rho_of_noise
from pandas_dp.bounding import NoisePlan, apply_noise, apply_noise_exact, check_mode, plan_noise
from pandas_dp.budget import PrivacyBudget, charge_all
from pandas_dp.declarations import NumericDeclaration, check_out_of_bounds
from pandas_dp.mechanisms import RandomSource
from pandas_dp.sensitivity import check_neighbouring, output_range, pair_sensitivity, sensitivity

__all__ = ["Measurement", "Plan", "Settings", "direct_allowance", "series_data"]

FloatArray = NDArray[np.float64]

#: The sufficient statistics one pass over a column yields.
MOMENTS: tuple[str, ...] = ("count", "centred_sum", "centred_squares", "sum")


@dataclass(frozen=True)
class Settings:
    """The privacy keyword arguments of a call, validated once (public facts only).

    Attributes
    ----------
    epsilon, delta : float
        The budget of the whole release.
    mechanism : {"laplace", "gaussian"}
    bounding : {"bit", "truncated", "none"}
    neighbouring : {"add_remove", "substitute"}
        ``"add_remove"`` (default): the number of rows is private.
        ``"substitute"``: the frame's length is declared public.
    out_of_bounds : {"clip", "raise"}
    random_state : None, int or Generator
        ``None``: noise from the OS CSPRNG.
    budget : PrivacyBudget or None
    rows : int or None
        The frame's length where it is public (``substitute``), else ``None``.
    """

    epsilon: float
    delta: float = 0.0
    mechanism: str = "laplace"
    bounding: str = "bit"
    neighbouring: str = "add_remove"
    out_of_bounds: str = "clip"
    random_state: Any = None
    budget: PrivacyBudget | None = None
    rows: int | None = None
    source: RandomSource = field(init=False, repr=False)

    def __post_init__(self) -> None:
        eps = self.epsilon
        if isinstance(eps, bool) or not isinstance(eps, int | float | np.number):
            raise TypeError(
                f"epsilon must be a number (e.g. epsilon=1.0); got {type(eps).__name__}"
            )
        if not (math.isfinite(eps) and eps > 0):
            raise ValueError(
                f"epsilon must be a positive finite number (e.g. epsilon=1.0); got {eps}"
            )
        dlt = self.delta
        if isinstance(dlt, bool) or not isinstance(dlt, int | float | np.number):
            raise TypeError(f"delta must be a number (e.g. delta=1e-6); got {type(dlt).__name__}")
        object.__setattr__(self, "epsilon", float(eps))
        object.__setattr__(self, "delta", float(dlt))
        check_mode(self.mechanism, self.bounding, self.delta)
        check_neighbouring(self.neighbouring)
        check_out_of_bounds(self.out_of_bounds)
        object.__setattr__(self, "source", RandomSource(self.random_state))

    def noise(
        self, sensitivity: Any, lower: Any, upper: Any, *, share: float = 1.0, **options: Any
    ) -> NoisePlan:
        """Calibrate noise for a vector with ``share`` of this call's epsilon and delta.

        ``options`` go to :func:`~pandas_dp.bounding.plan_noise` (``integer``,
        ``joint_l1``, ``joint_l2``, ``max_changed``, ``bounding``).
        """
        options.setdefault("bounding", self.bounding)
        return plan_noise(
            np.asarray(sensitivity, dtype=np.float64),
            np.asarray(lower, dtype=np.float64),
            np.asarray(upper, dtype=np.float64),
            epsilon=self.epsilon * share,
            delta=self.delta * share,
            mechanism=self.mechanism,
            **options,
        )

    @property
    def public_n(self) -> int | None:
        """The frame's length, where the relation declares it public."""
        return self.rows if self.neighbouring == "substitute" else None


@dataclass(frozen=True)
class Measurement:
    """One sufficient statistic to measure: everything about it is public.

    Attributes
    ----------
    key : str
        ``"<column>: <statistic>"`` -- unique within a plan.
    statistic : str
        The row of the sensitivity table (``"count"``, ``"centred_sum"`` ...).
    source : tuple
        What the engine reads: ``("moments", column)``, ``("products", columns)``,
        ``("categories", column)``, ``("masks",)`` or ``("rows",)``.
    size : int
        Number of entries (1, or one per category / predicate).
    sensitivity : float
        Per entry, rounding of the exact accumulation included.
    lower, upper : float
        Public range of each entry.
    integer : bool
        Counts: discrete noise, integer results.
    weight : float
        Relative share of the plan's budget.
    joint_l1, joint_l2 : float or None
        Sensitivity of the whole vector after dividing each entry by its own.
    noise : NoisePlan or None
        Set by :meth:`Plan.calibrate`.
    """

    key: str
    statistic: str
    source: tuple[Any, ...]
    size: int
    sensitivity: float
    lower: float
    upper: float
    integer: bool
    weight: float = 1.0
    joint_l1: float | None = None
    joint_l2: float | None = None
    index: int = 0
    noise: NoisePlan | None = None

    @property
    def calibrated(self) -> NoisePlan:
        """The noise plan (after :meth:`Plan.calibrate`)."""
        if self.noise is None:
            raise RuntimeError(f"{self.key} is not calibrated yet; call Plan.calibrate()")
        return self.noise

    @property
    def epsilon(self) -> float:
        """The epsilon this measurement spends (after calibration)."""
        return self.calibrated.epsilon


def _label(column: Hashable) -> str:
    return str(column)


class Plan:
    """A set of measurements with a budget split, calibrated and run together.

    Parameters
    ----------
    settings : Settings
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.measurements: dict[str, Measurement] = {}

    # ------------------------------------------------------------------ building
    def add(self, m: Measurement) -> str:
        """Add ``m`` unless a measurement with its key exists (its weight then grows)."""
        have = self.measurements.get(m.key)
        if have is None:
            self.measurements[m.key] = m
        else:
            self.measurements[m.key] = replace(have, weight=max(have.weight, m.weight))
        return m.key

    def moments(
        self,
        decl: NumericDeclaration,
        statistics: Sequence[str],
        weights: Mapping[str, float] | None = None,
    ) -> dict[str, str]:
        """Measure sufficient statistics of one numeric column; returns statistic -> key."""
        s = self.settings
        rel, n, a, b = s.neighbouring, s.public_n, decl.lower, decl.upper
        half = 0.5 * (b - a)
        keys: dict[str, str] = {}
        for stat in statistics:
            weight = (weights or {}).get(stat, 1.0)
            if stat == "count":
                lo, hi = output_range("count", a, b, n)
                sens, integer = sensitivity("count", rel), True
            elif stat == "centred_sum":
                step = engines.accumulation_step(half)
                sens, integer = sensitivity("centred_sum", rel, a, b) + step, False
                lo, hi = (-math.inf, math.inf) if n is None else (-n * half, n * half)
            elif stat == "centred_squares":
                step = engines.accumulation_step(_finite_square(half, decl))
                sens = sensitivity("centred_squares", rel, a, b) + step
                lo, hi, integer = 0.0, math.inf if n is None else n * half * half, False
            elif stat == "sum":
                step = engines.accumulation_step(half)
                sens, integer = sensitivity("sum", rel, a, b) + step, False
                lo, hi = output_range("sum", a, b, n)
            elif stat in ("mean_direct", "var_direct"):
                sens = sensitivity(stat, rel, a, b, n) + direct_allowance(stat, b - a, n)
                integer = False
                lo, hi = output_range(stat, a, b, n)
            else:
                raise ValueError(f"no sufficient statistic {stat!r} of a numeric column")
            key = f"{_label(decl.column)}: {stat}"
            keys[stat] = self.add(
                Measurement(key, stat, ("moments", decl.column), 1, sens, lo, hi, integer, weight)
            )
        return keys

    def products(self, decls: Sequence[NumericDeclaration]) -> dict[str, str]:
        """Complete-row count, centred sums and cross-products of a block of columns."""
        s = self.settings
        rel, n = s.neighbouring, s.public_n
        cols = tuple(d.column for d in decls)
        halves = [0.5 * d.width for d in decls]
        src = ("products", cols)
        block = ", ".join(_label(c) for c in cols)
        keys = {}
        lo, hi = output_range("count", 0.0, 1.0, n)
        keys["count"] = self.add(
            Measurement(
                f"[{block}]: count", "count", src, 1, sensitivity("count", rel), lo, hi, True
            )
        )
        for i, d in enumerate(decls):
            step = engines.accumulation_step(halves[i])
            sens = sensitivity("centred_sum", rel, d.lower, d.upper) + step
            top = math.inf if n is None else n * halves[i]
            keys[f"sum {i}"] = self.add(
                Measurement(
                    f"[{block}]: centred_sum {_label(d.column)}",
                    "centred_sum",
                    src,
                    1,
                    sens,
                    -top,
                    top,
                    False,
                    index=i,
                )
            )
        p = len(decls)
        for i in range(p):
            for j in range(i, p):
                mag = halves[i] * halves[j]
                if not math.isfinite(mag):
                    _finite_square(halves[i], decls[i])
                    _finite_square(halves[j], decls[j])
                step = engines.accumulation_step(mag)
                if i == j:
                    stat = "centred_squares"
                    sens = sensitivity(stat, rel, decls[i].lower, decls[i].upper) + step
                    lo_p, hi_p = 0.0, (math.inf if n is None else n * mag)
                else:
                    stat = "cross_products"
                    sens = pair_sensitivity(stat, rel, decls[i].width, decls[j].width) + step
                    lo_p, hi_p = (-math.inf, math.inf) if n is None else (-n * mag, n * mag)
                name = f"{_label(decls[i].column)}*{_label(decls[j].column)}"
                keys[f"product {i} {j}"] = self.add(
                    Measurement(
                        f"[{block}]: {stat} {name}",
                        stat,
                        src,
                        1,
                        sens,
                        lo_p,
                        hi_p,
                        False,
                        index=i * p + j,
                    )
                )
        return keys

    def categories(self, column: Hashable, size: int, weight: float = 1.0) -> str:
        """Counts over ``size`` public buckets of one column (one row sits in one bucket)."""
        s = self.settings
        rel = s.neighbouring
        lo, hi = output_range("category_counts", 0.0, 1.0, s.public_n)
        l1 = sensitivity("category_counts", rel)
        l2 = sensitivity("category_counts_l2", rel)
        return self.add(
            Measurement(
                f"{_label(column)}: category_counts",
                "category_counts",
                ("categories", column),
                size,
                1.0,
                lo,
                hi,
                True,
                weight,
                joint_l1=l1,
                joint_l2=l2,
            )
        )

    def masks(self, names: Sequence[Hashable]) -> str:
        """Counts of ``k`` predicates: one row may satisfy all of them (L1 ``k``)."""
        s = self.settings
        lo, hi = output_range("count", 0.0, 1.0, s.public_n)
        k = len(names)
        return self.add(
            Measurement(
                "queries: count",
                "count",
                ("masks",),
                k,
                sensitivity("count", s.neighbouring),
                lo,
                hi,
                True,
                joint_l1=float(k),
                joint_l2=math.sqrt(k),
            )
        )

    def rows(self, weight: float = 1.0) -> str:
        """The number of rows."""
        s = self.settings
        lo, hi = output_range("rows", 0.0, 1.0, s.public_n)
        return self.add(
            Measurement(
                "rows",
                "rows",
                ("rows",),
                1,
                sensitivity("rows", s.neighbouring),
                lo,
                hi,
                True,
                weight,
            )
        )

    # ------------------------------------------------------------------ calibration
    def calibrate(self) -> None:
        """Split the budget by weight and calibrate every measurement (may raise)."""
        s = self.settings
        if not self.measurements:
            raise ValueError("the release measures nothing; name at least one column")
        total = sum(m.weight for m in self.measurements.values())
        for key, m in self.measurements.items():
            share = m.weight / total
            ranged = math.isfinite(m.lower) or math.isfinite(m.upper)
            noise = s.noise(
                np.full(m.size, m.sensitivity),
                np.full(m.size, m.lower),
                np.full(m.size, m.upper),
                share=share,
                bounding=s.bounding if ranged else "none",
                integer=m.integer,
                joint_l1=m.joint_l1,
                joint_l2=m.joint_l2,
            )
            if not np.all(np.isfinite(noise.scale)):
                raise ValueError(
                    f"epsilon={s.epsilon:g} gives {key} an infinite noise scale; use a larger "
                    f"epsilon or narrower bounds"
                )
            self.measurements[key] = replace(m, noise=noise)

    def split(self) -> dict[str, float]:
        """``measurement -> epsilon`` (public)."""
        return {k: m.epsilon for k, m in self.measurements.items()}

    # ------------------------------------------------------------------ running
    def charge(
        self,
        statistic: str,
        columns: tuple[Hashable, ...],
        split: dict[str, float] | None = None,
        rho: float | None = None,
    ) -> None:
        """Charge the explicit and every active budget for the whole plan, atomically.

        Runs before any data is read; a refused charge spends nothing anywhere.
        ``split`` is the ledger's budget split (default: the plan's own). A Gaussian
        plan passes its zCDP ``rho`` too (:meth:`rho`), which ``accounting="zcdp"``
        budgets charge instead of its (epsilon, delta); ``rho`` overrides it, for
        releases calibrated outside the plan.
        """
        s = self.settings
        charge_all(
            s.epsilon,
            s.delta,
            rho=rho if rho is not None else self.rho(),
            budget=s.budget,
            statistic=statistic,
            columns=columns,
            mechanism=s.mechanism,
            bounding=s.bounding,
            neighbouring=s.neighbouring,
            split=split if split is not None else (self.split() if self.measurements else {}),
        )

    def rho(self) -> float | None:
        """The zCDP ``rho`` of a calibrated Gaussian plan: the sum over its measurements.

        Each measurement is a vector with per-entry sensitivity and joint L2 bound
        (default ``sqrt(size)``), noised with its calibrated scale
        (:func:`~pandas_dp.accounting.rho_of_noise`). None for a Laplace plan, a plan
        without measurements or one not calibrated yet.
        """
        ms = list(self.measurements.values())
        if self.settings.mechanism != "gaussian" or not ms or any(m.noise is None for m in ms):
            return None
        total = 0.0
        for m in ms:
            rho = rho_of_noise(m.calibrated, m.sensitivity, m.joint_l2)
            if rho is None:
                return None
            total += rho
        return total

    def run(
        self,
        data: Mapping[Any, Any],
        statistic: str,
        columns: tuple[Hashable, ...],
        *,
        check: Callable[[], None] | None = None,
    ) -> dict[str, FloatArray]:
        """Charge, compute the exact sufficient statistics, noise them once.

        ``data`` maps each source's column (or ``"masks"`` / ``"rows"``) to what the
        engine reads: a Series, a list of masks, the row count (a callable is
        called only after the charge). ``check`` runs after the charge and before
        the engine (``out_of_bounds="raise"``'s validation).
        """
        for m in self.measurements.values():
            if m.noise is None:
                raise RuntimeError("calibrate() the plan before running it")
        self.charge(statistic, columns)
        if check is not None:
            check()
        exact = _exact_values(self.measurements.values(), data)
        out: dict[str, FloatArray] = {}
        for key, m in self.measurements.items():
            assert m.noise is not None
            if m.integer:
                theta = np.clip(exact[key], m.noise.lower, m.noise.upper)
                out[key] = apply_noise(theta, m.noise, self.settings.source)
            else:  # exact rationals: nothing lost to floating point before the noise
                out[key] = apply_noise_exact(exact[key], m.noise, self.settings.source)
        return out


def direct_allowance(statistic: str, width: float, n: int | None) -> float:
    """How far the exact accumulation's rounding may move a direct release, per row.

    A rounded centred value lies within ``q/2`` of the true one (an interval of
    width ``R + q``), so the mean moves by at most ``q/n`` more; the rounded square
    is the square of the rounded value plus an error of at most
    ``q2/2 + (R/2) q + q²/4``, which adds ``(2 R q + q²)/n + (q2 + R q + q²/2)/(n - 1)``
    to the variance's sensitivity. Brute-force tested in ``tests/test_sensitivity.py``.
    """
    assert n is not None
    q = engines.accumulation_step(0.5 * width)
    if statistic == "mean_direct":
        return q / n
    q2 = engines.accumulation_step(0.25 * width * width)
    return (2 * width * q + q * q) / n + (q2 + width * q + q * q / 2) / (n - 1)


def _finite_square(half: float, decl: NumericDeclaration) -> float:
    sq = half * half
    if not math.isfinite(sq):
        from pandas_dp.errors import InvalidBoundsError

        raise InvalidBoundsError(
            f"the bounds of column {decl.column!r} ({decl.lower:g}, {decl.upper:g}) are too "
            f"wide for a variance: the squared half-width overflows. Declare narrower bounds "
            f"or rescale the column"
        )
    return sq


def _exact_values(measurements: Any, data: Mapping[Any, Any]) -> dict[str, NDArray[Any]]:
    """One engine call per source; each measurement's exact vector.

    Counts come as float vectors of whole numbers; real-valued sums as object
    vectors of exact :class:`~fractions.Fraction` values.
    """
    by_source: dict[tuple[Any, ...], list[Measurement]] = {}
    for m in measurements:
        by_source.setdefault(m.source, []).append(m)
    out: dict[str, NDArray[Any]] = {}
    for source, group in by_source.items():
        kind = source[0]
        if kind == "moments":
            _moment_values(source[1], group, data, out)
        elif kind == "products":
            _product_values(source[1], group, data, out)
        elif kind == "categories":
            for m in group:
                out[m.key] = np.asarray(_get(data, ("categories", source[1])), dtype=np.float64)
        elif kind == "masks":
            counts = engines.mask_counts(_get(data, "masks")).astype(np.float64)
            for m in group:
                out[m.key] = counts
        else:  # rows
            for m in group:
                out[m.key] = np.array([float(data["rows"])])
    return out


def _get(data: Mapping[Any, Any], key: Any) -> Any:
    """An engine input; a callable is read only now, after the charge."""
    value = data[key]
    return value() if callable(value) else value


def _moment_values(
    column: Hashable,
    group: list[Measurement],
    data: Mapping[Any, Any],
    out: dict[str, NDArray[Any]],
) -> None:
    series = data[column]
    wanted = {m.statistic for m in group}
    if wanted == {"count"}:  # any dtype: the non-missing count alone
        for m in group:
            out[m.key] = np.array([float(series.count())])
        return
    decl = data[("decl", column)]
    sums = engines.moments(
        series,
        decl.lower,
        decl.upper,
        squares=bool(wanted & {"centred_squares", "var_direct"}),
    )
    mid = Fraction(decl.lower) + Fraction(decl.width) / 2
    n = int(data.get("rows", sums.count))
    total, squares = sums.total_exact, sums.squares_exact
    for m in group:
        value: Any
        if m.statistic == "count":
            value = float(sums.count)
        elif m.statistic == "centred_sum":
            value = total
        elif m.statistic == "centred_squares":
            value = squares
        elif m.statistic == "sum":
            value = total + mid * sums.count
        elif m.statistic == "mean_direct":  # n public: a missing value counts as the midpoint
            value = mid + total / n
        else:  # var_direct, ddof = 1, missing values at the midpoint
            value = (squares - total * total / n) / (n - 1)
        out[m.key] = np.array([value], dtype=object if isinstance(value, Fraction) else float)


def _product_values(
    columns: tuple[Hashable, ...],
    group: list[Measurement],
    data: Mapping[Any, Any],
    out: dict[str, NDArray[Any]],
) -> None:
    decls = [data[("decl", c)] for c in columns]
    sums = engines.products(
        [data[c] for c in columns], [d.lower for d in decls], [d.upper for d in decls]
    )
    s, prods = sums.exact()
    p = len(columns)
    for m in group:
        if m.statistic == "count":
            out[m.key] = np.array([float(sums.count)])
        elif m.statistic == "centred_sum":
            out[m.key] = np.array([s[m.index]], dtype=object)
        else:
            i, j = divmod(m.index, p)
            out[m.key] = np.array([prods[(min(i, j), max(i, j))]], dtype=object)


def series_data(
    columns: Mapping[Hashable, pd.Series], decls: Mapping[Hashable, Any]
) -> dict[Any, Any]:
    """The engine's input for numeric columns: each Series and its declaration."""
    data: dict[Any, Any] = dict(columns)
    data.update({("decl", c): d for c, d in decls.items()})
    return data
