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

import functools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp import engines
from pandas_dp import sensitivity as sensitivity_table
from pandas_dp.accounting import rho_of_noise, rho_of_pure
from pandas_dp.bounding import NoisePlan, apply_noise_clamped, apply_noise_exact, plan_noise
from pandas_dp.budget import charge_all
from pandas_dp.declarations import NumericDeclaration
from pandas_dp.grouping import Grouping, canonical_key
from pandas_dp.measure import (
    engine_input,
    exact_values,
    kept_groups,
    observed_counts,
    series_data,
)
from pandas_dp.sensitivity import (
    output_range,
    pair_sensitivity,
    sensitivity,
)
from pandas_dp.settings import Settings

__all__ = [
    "Grouping",
    "Measurement",
    "Plan",
    "direct_allowance",
    "engine_input",
    "series_data",
]

_T = TypeVar("_T")

FloatArray = NDArray[np.float64]

#: Private keys: the noisy number of distinct units per observed key.
SELECTION = "groups: distinct units"

#: The sufficient statistics one pass over a column yields.
MOMENTS: tuple[str, ...] = ("count", "centred_sum", "centred_squares", "sum")


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
    select : callable or None
        A private selection (quantiles): its measurement spends its epsilon, pure,
        through the callable instead of noise; a ``("derived", ...)`` source is
        computed by another measurement's selection, not by the engine.
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
    #: A private selection instead of additive noise: called after the charge with
    #: the exact vector (never released) and the plan; returns the released vectors
    #: by measurement key (its own, and any measurement it derives).
    select: Callable[[NDArray[Any], Plan], dict[str, FloatArray]] | None = None

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

    def __init__(self, settings: Settings, grouping: Grouping | None = None) -> None:
        self.settings = settings
        self.grouping = grouping
        self.measurements: dict[str, Measurement] = {}
        #: Private keys: the keys partition selection kept (set by :meth:`run`).
        self.selected: pd.Index | None = None
        #: Private keys: a key is kept when its noisy count of units exceeds this.
        self.threshold: float | None = None
        self.selection: Any = None
        #: (split, rho, kept values) of a frozen plan (:meth:`freeze`), else ``None``.
        self._frozen: tuple[dict[str, float], float | None, dict[str, Any]] | None = None
        if grouping is not None and grouping.private:
            if settings.neighbouring != "add_remove":
                raise ValueError(
                    "keys='private' (partition selection) is defined for "
                    "neighbouring='add_remove'; declare the keys to use 'substitute'"
                )
            g = float(settings.contributions.groups)
            self.add(
                Measurement(
                    SELECTION,
                    "distinct_units",
                    ("selection",),
                    1,
                    1.0,
                    0.0,
                    math.inf,
                    True,
                    joint_l1=g,
                    joint_l2=math.sqrt(g),
                )
            )

    @property
    def groups(self) -> int:
        """Entries per sufficient statistic: 1, or one per released group."""
        return 1 if self.grouping is None else self.grouping.size

    @property
    def released_groups(self) -> int:
        """Groups in the result (after :meth:`run`; for private keys, the kept ones)."""
        if self.grouping is None:
            return 1
        if self.grouping.private:
            return 0 if self.selected is None else len(self.selected)
        return self.grouping.size

    @property
    def released_index(self) -> pd.Index | None:
        """The released keys (grouped releases), in output order."""
        if self.grouping is None:
            return None
        if self.grouping.private:
            return self.selected
        return self.grouping.labels

    def group_details(self) -> dict[str, Any]:
        """The public facts of a grouped release, for its metadata (never a group's size)."""
        g = self.grouping
        if g is None:
            return {}
        c = self.settings.contributions
        out: dict[str, Any] = {
            "groups": [str(b) for b in g.by],
            "keys": "private: partition selection" if g.private else "declared",
            "released groups": self.released_groups,
        }
        if g.private:
            out["selection threshold"] = self.threshold
            out["selection delta"] = g.delta
        else:
            out["declared keys"] = 0 if g.keys is None else len(g.keys)
            out["undeclared keys"] = f"counted in {g.other!r}" if g.other is not None else "dropped"
        out["privacy unit"] = None if c.unit is None else str(c.unit)
        out["contribution bounds"] = {
            "max_rows_per_unit": c.rows,
            "max_groups_per_unit": c.groups,
            "max_rows_per_group": c.rows_per_group,
        }
        return out

    # ------------------------------------------------------------------ building
    def add(self, m: Measurement) -> str:
        """Add ``m`` unless a measurement with its key exists (its weight then grows)."""
        self._frozen = None
        have = self.measurements.get(m.key)
        if have is None:
            self.measurements[m.key] = m
        else:
            self.measurements[m.key] = replace(have, weight=max(have.weight, m.weight))
        return m.key

    def _spread(
        self, statistic: str, per_row: float, a: float, b: float
    ) -> tuple[float, float | None, float | None]:
        """Per-entry, L1 and L2 sensitivity of one statistic's vector (one entry per group).

        ``per_row`` is the table's sensitivity for one row (rounding allowance
        included); the contribution bounds scale it (REFERENCE.md §9, §10). The
        joint norms are ``None`` for a single entry.
        """
        s = self.settings
        c = s.contributions
        grouped = self.grouping is not None
        linf, l1, l2 = _spread_ratios(
            statistic,
            s.neighbouring,
            a,
            b,
            _zero_signs(a, b),
            c.rows,
            c.groups if grouped else None,
            c.rows_per_group if grouped else None,
        )
        return (
            per_row * linf,
            None if l1 is None else per_row * l1,
            None if l2 is None else per_row * l2,
        )

    def _entry(
        self,
        key: str,
        statistic: str,
        source: tuple[Any, ...],
        per_row: float,
        bounds: tuple[float, float],
        lohi: tuple[float, float],
        integer: bool,
        weight: float = 1.0,
        index: int = 0,
    ) -> str:
        linf, l1, l2 = self._spread(statistic, per_row, *bounds)
        size = self.groups
        return self.add(
            Measurement(
                key,
                statistic,
                source,
                size,
                linf,
                lohi[0],
                lohi[1],
                integer,
                weight,
                joint_l1=None if l1 is None else l1 / linf,
                joint_l2=None if l2 is None else l2 / linf,
                index=index,
            )
        )

    def _direct_allowed(self, statistic: str) -> None:
        c = self.settings.contributions
        if self.grouping is not None or c.rows > 1:
            raise ValueError(
                f"{statistic} (Liu's direct release, sensitivity R/n) needs each group's "
                f"row count to be public and one row per unit; use the default method "
                f"with a group-by or a privacy unit"
            )

    def moments(
        self,
        decl: NumericDeclaration,
        statistics: Sequence[str],
        weights: Mapping[str, float] | None = None,
    ) -> dict[str, str]:
        """Measure sufficient statistics of one numeric column; returns statistic -> key."""
        s = self.settings
        rel, n, a, b = s.neighbouring, s.public_n, decl.lower, decl.upper
        keys: dict[str, str] = {}
        for stat in statistics:
            weight = (weights or {}).get(stat, 1.0)
            if stat in ("mean_direct", "var_direct"):
                self._direct_allowed(stat)
                sens = sensitivity(stat, rel, a, b, n) + direct_allowance(stat, b - a, n)
                lohi = output_range(stat, a, b, n)
                key = f"{_label(decl.column)}: {stat}"
                keys[stat] = self.add(
                    Measurement(key, stat, ("moments", decl.column), 1, sens, *lohi, False, weight)
                )
                continue
            if stat not in MOMENTS:
                raise ValueError(f"no sufficient statistic {stat!r} of a numeric column")
            if stat == "centred_squares":  # (its error names the column: not cached)
                _finite_square(0.5 * (b - a), decl)
            sens, lo, hi, integer = _moment_row(stat, rel, n, a, b, _zero_signs(a, b))
            keys[stat] = self._entry(
                f"{_label(decl.column)}: {stat}",
                stat,
                ("moments", decl.column),
                sens,
                (a, b),
                (lo, hi),
                integer,
                weight,
            )
        return keys

    def products(
        self, decls: Sequence[NumericDeclaration], weights: Mapping[str, float] | None = None
    ) -> dict[str, str]:
        """Complete-row count, centred sums and cross-products of a block of columns.

        ``weights`` (sufficient statistic -> budget weight of each of its entries:
        ``count``, ``centred_sum``, ``centred_squares``, ``cross_products``) sets
        the split; default 1 each.
        """
        w = {"count": 1.0, "centred_sum": 1.0, "centred_squares": 1.0, "cross_products": 1.0}
        w.update(weights or {})
        if self.grouping is not None:
            raise ValueError("cov and corr are not available per group yet")
        s = self.settings
        rel, n = s.neighbouring, s.public_n
        cols = tuple(d.column for d in decls)
        halves = [0.5 * d.width for d in decls]
        src = ("products", cols)
        block = ", ".join(_label(c) for c in cols)
        keys = {}
        keys["count"] = self._entry(
            f"[{block}]: count",
            "count",
            src,
            sensitivity("count", rel),
            (0.0, 1.0),
            output_range("count", 0.0, 1.0, n),
            True,
            w["count"],
        )
        for i, d in enumerate(decls):
            step = engines.accumulation_step(halves[i])
            top = math.inf if n is None else n * halves[i]
            keys[f"sum {i}"] = self._entry(
                f"[{block}]: centred_sum {_label(d.column)}",
                "centred_sum",
                src,
                sensitivity("centred_sum", rel, d.lower, d.upper) + step,
                (d.lower, d.upper),
                (-top, top),
                False,
                w["centred_sum"],
                index=i,
            )
        p = len(decls)
        k = s.contributions.rows
        for i in range(p):
            for j in range(i, p):
                mag = halves[i] * halves[j]
                if not math.isfinite(mag):
                    _finite_square(halves[i], decls[i])
                    _finite_square(halves[j], decls[j])
                step = engines.accumulation_step(mag)
                name = f"{_label(decls[i].column)}*{_label(decls[j].column)}"
                if i == j:
                    keys[f"product {i} {j}"] = self._entry(
                        f"[{block}]: centred_squares {name}",
                        "centred_squares",
                        src,
                        sensitivity("centred_squares", rel, decls[i].lower, decls[i].upper) + step,
                        (decls[i].lower, decls[i].upper),
                        (0.0, math.inf if n is None else n * mag),
                        False,
                        w["centred_squares"],
                        index=i * p + j,
                    )
                    continue
                sens = (
                    pair_sensitivity("cross_products", rel, decls[i].width, decls[j].width, k=k)
                    + k * step
                )
                keys[f"product {i} {j}"] = self.add(
                    Measurement(
                        f"[{block}]: cross_products {name}",
                        "cross_products",
                        src,
                        1,
                        sens,
                        *((-math.inf, math.inf) if n is None else (-n * mag, n * mag)),
                        False,
                        w["cross_products"],
                        index=i * p + j,
                    )
                )
        return keys

    def categories(self, column: Hashable, size: int, weight: float = 1.0) -> str:
        """Counts over ``size`` public buckets of one column (one row sits in one bucket).

        Grouped, the vector holds ``size`` buckets per group, group after group.
        """
        s = self.settings
        lo, hi = output_range("category_counts", 0.0, 1.0, s.public_n)
        linf, l1, l2 = self._bucket_norms()
        return self.add(
            Measurement(
                f"{_label(column)}: category_counts",
                "category_counts",
                ("categories", column),
                size * self.groups,
                linf,
                lo,
                hi,
                True,
                weight,
                joint_l1=l1 / linf,
                joint_l2=l2 / linf,
            )
        )

    def grid(self, column: Hashable, nodes: int, levels: int, weight: float = 1.0) -> str:
        """Counts over the nodes of a tree on a public grid (quantiles; REFERENCE.md §12).

        ``nodes`` counts per group in ``levels`` levels; one row lands in one node
        of each level, so the joint L1 / L2 norms are a histogram's times ``levels``
        / ``sqrt(levels)``. The counts keep their raw noise (no clamp): the
        estimator's consistency step needs it unbiased.
        """
        linf, l1, l2 = self._bucket_norms()
        return self.add(
            Measurement(
                f"{_label(column)}: grid_counts",
                "grid_counts",
                ("grid", column),
                nodes * self.groups,
                linf,
                -math.inf,
                math.inf,
                True,
                weight,
                joint_l1=l1 / linf * levels,
                joint_l2=l2 / linf * math.sqrt(levels),
            )
        )

    def grid_selection(
        self,
        column: Hashable,
        bins: int,
        select: Callable[[NDArray[Any], Plan], dict[str, FloatArray]],
        weight: float = 1.0,
    ) -> str:
        """Counts over a public grid that a private selection reads (quantiles).

        The exact counts are never released: ``select`` spends this measurement's
        epsilon on them (permute-and-flip, pure DP) after the charge. The
        sensitivity recorded is a histogram's (per-entry, L1 and L2 over the
        bins): the selection's own calibration starts from the L1.
        """
        linf, l1, l2 = self._bucket_norms()
        return self.add(
            Measurement(
                f"{_label(column)}: grid_selection",
                "grid_selection",
                ("grid", column),
                bins * self.groups,
                linf,
                -math.inf,
                math.inf,
                True,
                weight,
                joint_l1=l1 / linf,
                joint_l2=l2 / linf,
                select=select,
            )
        )

    def derived_counts(self, column: Hashable, name: str, weight: float = 1.0) -> str:
        """Counts over a partition laid out by another measurement's selection.

        Calibrated as one bucket per group of a histogram (any number of disjoint
        buckets has the same per-entry noise); the selection computes the exact
        counts and noises them with this plan, repeated per bucket.
        """
        linf, l1, l2 = self._bucket_norms()
        return self.add(
            Measurement(
                f"{_label(column)}: {name}",
                "category_counts",
                ("derived", column),
                self.groups,
                linf,
                -math.inf,
                math.inf,
                True,
                weight,
                joint_l1=l1 / linf,
                joint_l2=l2 / linf,
            )
        )

    def histogram_l1(self) -> float:
        """Rows one unit may add or remove, counted over public buckets (all groups)."""
        return self._bucket_norms()[1]

    def _bucket_norms(self) -> tuple[float, float, float]:
        """Per-entry, L1 and L2 sensitivity of counts over public buckets (per group)."""
        s = self.settings
        c, rel = s.contributions, s.neighbouring
        if self.grouping is None:
            return (
                float(c.rows),  # all of a unit's rows may land in one bucket
                sensitivity("category_counts", rel, k=c.rows),
                sensitivity("category_counts_l2", rel, k=c.rows),
            )
        g = sensitivity_table.grouped_sensitivity(
            "category_counts", rel, 0.0, 1.0, k=c.rows, g=c.groups, c=c.rows_per_group
        )
        return g.linf, g.l1, g.l2

    def masks(self, names: Sequence[Hashable]) -> str:
        """Counts of ``k`` predicates: one row may satisfy all of them (L1 ``k``)."""
        if self.grouping is not None:
            raise ValueError("query workloads are not available per group yet")
        s = self.settings
        lo, hi = output_range("count", 0.0, 1.0, s.public_n)
        k = len(names)
        rows = s.contributions.rows
        return self.add(
            Measurement(
                "queries: count",
                "count",
                ("masks",),
                k,
                sensitivity("count", s.neighbouring, k=rows),
                lo,
                hi,
                True,
                joint_l1=float(k),
                joint_l2=math.sqrt(k),
            )
        )

    def rows(self, weight: float = 1.0) -> str:
        """The number of rows (per group when grouped).

        With private keys and one row per unit, the selection's noisy count of
        distinct units per key is that number: it is released as it is.
        """
        s = self.settings
        if self.grouping is not None and self.grouping.private and s.contributions.unit is None:
            return SELECTION
        return self._entry(
            "rows",
            "rows",
            ("rows",),
            sensitivity("rows", s.neighbouring),
            (0.0, 1.0),
            output_range("rows", 0.0, 1.0, s.public_n),
            True,
            weight,
        )

    # ------------------------------------------------------------------ calibration
    def calibrate(self) -> None:
        """Split the budget by weight and calibrate every measurement (may raise)."""
        from pandas_dp.bounding import plan_uniform_noise

        s = self.settings
        self._frozen = None
        if not self.measurements:
            raise ValueError("the release measures nothing; name at least one column")
        total = sum(m.weight for m in self.measurements.values())
        for key, m in self.measurements.items():
            share = m.weight / total
            if m.statistic == "distinct_units":
                self._calibrate_selection(key, m, share)
                continue
            if m.select is not None:  # pure epsilon, spent by the selection itself
                self.measurements[key] = replace(m, noise=self._pure(m, share))
                continue
            ranged = math.isfinite(m.lower) or math.isfinite(m.upper)
            # what s.noise(np.full(m.size, ...), share=share, ...) returns, cached on
            # its public arguments (a repeated release skips the calibration)
            noise, finite = plan_uniform_noise(
                m.size,
                m.sensitivity,
                m.lower,
                m.upper,
                epsilon=s.epsilon * share,
                delta=s.delta * share,
                mechanism=s.mechanism,
                bounding=s.bounding if ranged else "none",
                integer=m.integer,
                joint_l1=m.joint_l1,
                joint_l2=m.joint_l2,
            )
            if not finite:
                raise ValueError(
                    f"epsilon={s.epsilon:g} gives {key} an infinite noise scale; use a larger "
                    f"epsilon or narrower bounds"
                )
            # replace(m, noise=noise) without its keyword round trip (Measurement is a
            # plain frozen dataclass: no __post_init__ to run)
            calibrated = object.__new__(Measurement)
            calibrated.__dict__.update(m.__dict__, noise=noise)
            self.measurements[key] = calibrated

    def _pure(self, m: Measurement, share: float) -> NoisePlan:
        """A discrete Laplace plan at the measurement's share: a pure epsilon."""
        return plan_noise(
            np.full(1, m.sensitivity),
            np.full(1, m.lower),
            np.full(1, m.upper),
            epsilon=self.settings.epsilon * share,
            mechanism="laplace",
            bounding="none",
            integer=True,
            joint_l1=m.joint_l1,
            joint_l2=m.joint_l2,
        )

    def _calibrate_selection(self, key: str, m: Measurement, share: float) -> None:
        """Partition selection: discrete Laplace counts of units, and their threshold."""
        from pandas_dp import partition

        s = self.settings
        assert self.grouping is not None
        noise = self._pure(m, share)
        self.selection = partition.selection_threshold(
            s.epsilon * share, self.grouping.delta, s.contributions.groups
        )
        self.threshold = float(self.selection.threshold)
        self.measurements[key] = replace(m, noise=noise)

    def rebound(self, settings: Settings) -> Plan:
        """This calibrated plan for another call with the same public facts.

        A plan is a function of public facts (:meth:`Settings.plan_key`), so a
        release may reuse a calibrated one: the copy shares the (frozen)
        measurements and takes the call's own settings -- its randomness and its
        budget, charged by :meth:`run` as for any plan. The caller makes sure
        ``settings.plan_key()`` is this plan's. Ungrouped plans only (a grouped run
        records the keys it kept).
        """
        if self.grouping is not None:
            raise ValueError("a grouped plan is not rebound; build it for the call")
        plan = object.__new__(Plan)
        plan.__dict__.update(self.__dict__)
        plan.settings = settings
        plan.measurements = dict(self.measurements)
        return plan

    def freeze(self) -> None:
        """Keep the split and rho of this calibrated plan, which changes no more (a
        cached plan: its copies from :meth:`rebound` share them). Adding or
        calibrating again forgets them."""
        self._frozen = (self.split(), self.rho(), {})

    def kept(self, name: str, build: Callable[[], _T]) -> _T:
        """``build()``, a function of this plan's public facts (its measurements,
        split and scales), kept by a frozen plan under ``name`` and shared with its
        :meth:`rebound` copies (a cached plan builds it once); built afresh for a
        plan that is not frozen."""
        if self._frozen is None:
            return build()
        memo = self._frozen[2]
        if name not in memo:  # (two threads may both build it: the same value)
            memo[name] = build()
        return cast(_T, memo[name])

    def split(self) -> dict[str, float]:
        """``measurement -> epsilon`` (public)."""
        if self._frozen is not None:
            return dict(self._frozen[0])
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
        releases calibrated outside the plan. A plan with partition selection
        (private keys) spends a delta of its own that no rho accounts for: it is
        charged without a rho (``"zcdp"`` budgets refuse it).
        """
        s = self.settings
        selection = self.grouping.delta if self.grouping is not None else 0.0
        if selection > 0:
            rho = None  # partition selection spends a delta outside zCDP: no rho
        elif rho is None:
            rho = self.rho()
        charge_all(
            s.epsilon,
            s.delta + selection,
            rho=rho,
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
        if self._frozen is not None:
            return self._frozen[1]
        ms = list(self.measurements.values())
        if self.settings.mechanism != "gaussian" or not ms or any(m.noise is None for m in ms):
            return None
        total = 0.0
        for m in ms:
            if m.select is not None:  # a pure selection
                total += rho_of_pure(m.epsilon)
                continue
            rho = rho_of_noise(m.calibrated, m.sensitivity, m.joint_l2)
            if rho is None:
                return None
            total += rho
        return total

    def run(
        self,
        data: Mapping[Any, Any] | Callable[[], Mapping[Any, Any]],
        statistic: str,
        columns: tuple[Hashable, ...],
        *,
        check: Callable[[], None] | None = None,
    ) -> dict[str, FloatArray]:
        """Charge, compute the exact sufficient statistics, noise them once.

        ``data`` maps each source's column (or ``"masks"`` / ``"rows"`` /
        ``"groups"``) to what the engine reads: a Series, a list of masks, the row
        count, the group codes (a callable is called only after the charge; so is
        ``data`` itself when callable). ``check`` runs after the charge and before
        the engine (``out_of_bounds="raise"``'s validation).
        """
        for m in self.measurements.values():
            if m.noise is None:
                raise RuntimeError("calibrate() the plan before running it")
        self.charge(statistic, columns)
        if check is not None:
            check()
        if callable(data):
            data = data()
        out: dict[str, FloatArray] = {}
        if self.grouping is not None and self.grouping.private:
            data = self._select(data, out)
        engine = [
            m for m in self.measurements.values() if m.key not in out and m.source[0] != "derived"
        ]
        exact = exact_values(engine, data)
        for key, m in self.measurements.items():
            if m.select is not None:  # a private selection (and what it derives)
                out.update(m.select(exact[key], self))
        for key, m in self.measurements.items():
            if key in out:
                continue
            assert m.noise is not None
            if m.integer:
                out[key] = apply_noise_clamped(
                    exact[key], self.noise_for(key), self.settings.source
                )
            else:  # exact rationals: nothing lost to floating point before the noise
                out[key] = apply_noise_exact(exact[key], self.noise_for(key), self.settings.source)
        return out

    def _select(self, data: Mapping[Any, Any], out: dict[str, FloatArray]) -> dict[Any, Any]:
        """Partition selection (REFERENCE.md §10): keep the keys whose noisy count of
        distinct units exceeds the threshold; every other measurement is then made
        over the kept keys only, in sorted order.
        """
        observed: engines.Groups = data["groups"]
        uniques: pd.Index = data["keys"]
        counts = observed_counts(observed, data.get("units"))
        from pandas_dp import partition

        assert self.selection is not None
        keep, noisy = partition.select(counts, self.selection, self.settings.source)
        kept = np.flatnonzero(keep)
        labels = uniques[kept]
        if labels.dtype == object:  # one label per group, not its first row's spelling
            labels = pd.Index([canonical_key(k) for k in labels], dtype=object)
        order = _key_order(labels)
        kept = kept[order]
        assert self.grouping is not None
        self.selected = pd.Index(labels[order], name=self.grouping.by[0])
        out[SELECTION] = noisy[kept].astype(np.float64)
        if len(self.measurements) == 1:  # the selection's counts are the release
            return dict(data)
        position = np.full(observed.size + 1, -1, dtype=np.intp)
        position[kept] = np.arange(len(kept))
        # -1 stays -1 (the extra last slot)
        return {**data, "groups": kept_groups(observed, position, len(kept))}

    def noise_for(self, key: str) -> NoisePlan:
        """The noise plan of a measurement's whole released vector.

        With private keys a measurement is calibrated for one group (its noise plan
        holds one group's entries, which is what the metadata and the intervals
        read) and repeated for each kept key here.
        """
        m = self.measurements[key]
        if self.grouping is None or not self.grouping.private:
            return m.calibrated
        return m.calibrated.tiled(self.released_groups)


def _zero_signs(a: float, b: float) -> tuple[float, float]:
    """The signs of two bounds, for cache keys: ``-0.0 == 0.0``, but a range's ends
    (and so a release's metadata) keep the sign of a zero bound."""
    return math.copysign(1.0, a), math.copysign(1.0, b)


@functools.lru_cache(maxsize=1024, typed=True)
def _moment_row(
    stat: str,
    rel: str,
    n: int | None,
    a: float,
    b: float,
    signs: tuple[float, float],
) -> tuple[float, float, float, bool]:
    """Per-row sensitivity (rounding step included), public range and integrality of
    one sufficient statistic of a column with bounds ``[a, b]``.

    A pure function of public arguments, cached (``signs`` tells ``-0.0`` from
    ``0.0``; ``typed`` tells ``1`` from ``1.0``): a repeated release skips the
    sensitivity table. Refused arguments raise on every call (nothing is cached).
    """
    half = 0.5 * (b - a)
    if stat == "count":
        lo, hi = output_range("count", a, b, n)
        return sensitivity("count", rel), lo, hi, True
    if stat == "centred_sum":
        step = engines.accumulation_step(half)
        sens = sensitivity("centred_sum", rel, a, b) + step
        return (
            (sens, -math.inf, math.inf, False) if n is None else (sens, -n * half, n * half, False)
        )
    if stat == "centred_squares":
        step = engines.accumulation_step(half * half)
        sens = sensitivity("centred_squares", rel, a, b) + step
        return sens, 0.0, math.inf if n is None else n * half * half, False
    # sum
    step = engines.accumulation_step(half)
    sens = sensitivity("sum", rel, a, b) + step
    lo, hi = output_range("sum", a, b, n)
    return sens, lo, hi, False


@functools.lru_cache(maxsize=1024, typed=True)
def _spread_ratios(
    statistic: str,
    rel: str,
    a: float,
    b: float,
    signs: tuple[float, float],
    k: int,
    g: int | None,
    c: int | None,
) -> tuple[float, float | None, float | None]:
    """What :meth:`Plan._spread` multiplies one row's sensitivity by: per entry, L1
    and L2 (``None`` ungrouped), for ``k`` rows per unit and, grouped (``g`` not
    ``None``), ``g`` groups per unit and ``c`` rows per group. Pure and public,
    cached as :func:`_moment_row` (each bound a typed argument of its own).
    """
    one = sensitivity(statistic, rel, a, b)
    if g is None:
        return sensitivity(statistic, rel, a, b, k=k) / one, None, None
    assert c is not None
    spread = sensitivity_table.grouped_sensitivity(statistic, rel, a, b, k=k, g=g, c=c)
    return spread.linf / one, spread.l1 / one, spread.l2 / one


def _key_order(keys: pd.Index) -> NDArray[np.intp]:
    """Positions that sort the released keys: a function of the kept keys alone.

    Keys that do not compare are ordered by type name and ``repr``, never by where
    they first appear in the data (that order would depend on the rows).
    """
    try:
        return np.asarray(keys.argsort(), dtype=np.intp)
    except TypeError:
        names = [(type(k).__qualname__, repr(k)) for k in keys]
        return np.asarray(sorted(range(len(names)), key=names.__getitem__), dtype=np.intp)


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
