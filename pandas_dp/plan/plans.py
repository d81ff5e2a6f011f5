"""Plans: a request turned into noisy sufficient statistics (DESIGN.md, "Every release").

A :class:`Plan` lists the sufficient statistics a release needs -- counts,
clamped centred sums, centred squares, cross-products, counts over declared
categories, counts of predicates, the number of rows -- each a
:class:`Measurement` with its sensitivity from :mod:`pandas_dp.plan.sensitivity`
(rounding of the exact accumulation included), its public range, its share of
the budget and, once calibrated, its :class:`~pandas_dp.noise.plans.NoisePlan`. All
of it is built from public facts, so every error a plan can raise is raised
before the budget is charged and before the data is read.

Statistics requested together share measurements: a mean and a standard
deviation of one column are both computed from one (count, centred sum,
centred squares) triple, measured once.

This module holds the plan's data types and its construction: which
measurements a release needs. :class:`Plan` inherits the rest from two bases:
calibration -- sensitivities, the budget split, the noise scales
(:mod:`pandas_dp.plan.calibration`) -- and running -- charging the budget for
the whole plan at once, asking the engine for the exact values and adding the
noise, once, on the client (:mod:`pandas_dp.plan.running`).

Examples
--------
>>> import pandas as pd
>>> from pandas_dp.request.declared_columns import NumericDeclaration
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
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from pandas_dp import engines
from pandas_dp.engines.protocol import Source
from pandas_dp.plan.calibration import (
    direct_allowance,
    finite_power,
    finite_square,
    moment_row,
    positive_half,
    zero_signs,
)
from pandas_dp.plan.measure import engine_input, series_data
from pandas_dp.plan.measurement import Measurement
from pandas_dp.plan.running import SELECTION, PlanRun
from pandas_dp.plan.sensitivity import output_range, pair_sensitivity, sensitivity
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings

__all__ = [
    "Grouping",
    "Measurement",
    "Plan",
    "direct_allowance",
    "engine_input",
    "series_data",
]

FloatArray = NDArray[np.float64]

#: The sufficient statistics of a numeric column: one pass yields the first four, one
#: more the cubes; the bound sums are composed from its count and centred sum, and the
#: recentred sum is computed from them once they are noised.
MOMENTS: tuple[str, ...] = (
    "count",
    "centred_sum",
    "centred_squares",
    "sum",
    "centred_cubes",
    "recentred_sum",
    "bound_sums",
)


def _label(column: Hashable) -> str:
    return str(column)


class Plan(PlanRun):
    """A set of measurements with a budget split, calibrated and run together.

    Built here; calibrated by :class:`~pandas_dp.plan.calibration.PlanCalibration`
    (:meth:`calibrate`) and run by :class:`~pandas_dp.plan.running.PlanRun`
    (:meth:`run`), its bases, where the attributes are described.

    Parameters
    ----------
    settings : Settings
    """

    def __init__(self, settings: Settings, grouping: Grouping | None = None) -> None:
        self.settings = settings
        self.grouping = grouping
        self.measurements = {}
        self.selected = None
        self.threshold = None
        self.selection = None
        self._frozen = None
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
                    Source("selection"),
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

    def add(self, m: Measurement) -> str:
        """Add ``m`` unless a measurement with its key exists (its weight then grows)."""
        self._frozen = None
        have = self.measurements.get(m.key)
        if have is None:
            self.measurements[m.key] = m
        else:
            self.measurements[m.key] = replace(have, weight=max(have.weight, m.weight))
        return m.key

    def _entry(
        self,
        key: str,
        statistic: str,
        source: Source,
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

    def _bound_sums(
        self,
        key: str,
        source: Source,
        per_row: float,
        bounds: tuple[float, float],
        lohi: tuple[float, float],
        weight: float,
    ) -> str:
        """Each group's pair ``(Σ (x - a), Σ (b - x))``, group after group.

        One row adds at most ``per_row`` to its group's pair in all (L1); a unit's L1
        is the table's spread of it. Both sums of a pair are rounded to the noise
        grid, which moves the released vector by up to one grid step ``γ`` per
        entry more: a unit touching ``t`` groups (``2 t`` entries) moves it by its
        exact L1 plus ``2 t γ``. So the pair is calibrated with a per-entry
        sensitivity of ``L1 / (2 t)`` and a joint L1 of ``2 t`` (in those units):
        :func:`~pandas_dp.noise.plans.plan_noise` pays ``(L1 / (2 t) + γ) 2 t``,
        exactly that. Laplace noise only (the Gaussian and the truncated mode read a
        per-entry sensitivity this parametrisation does not give).
        """
        s = self.settings
        if s.mechanism != "laplace" or s.bounding == "truncated":
            raise ValueError(
                "bound_sums are measured with Laplace noise and bounding 'bit' or 'none'; "
                f"got mechanism={s.mechanism!r}, bounding={s.bounding!r}"
            )
        linf, l1, l2 = self._spread("bound_sums", per_row, *bounds)
        c = s.contributions
        groups = 1 if self.grouping is None else min(c.rows, c.groups)
        touched = groups * (1 if s.neighbouring == "add_remove" else 2)
        total = linf if l1 is None else l1  # ungrouped: a unit's rows share one pair
        unit = total / (2 * touched)
        return self.add(
            Measurement(
                key,
                "bound_sums",
                source,
                2 * self.groups,
                unit,
                lohi[0],
                lohi[1],
                False,
                weight,
                joint_l1=2.0 * touched,
                joint_l2=(total if l2 is None else l2) / unit,
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
                source = Source("moments", decl.column)
                keys[stat] = self.add(Measurement(key, stat, source, 1, sens, *lohi, False, weight))
                continue
            if stat not in MOMENTS:
                raise ValueError(f"no sufficient statistic {stat!r} of a numeric column")
            if stat == "recentred_sum":  # computed after the noise of the two it reads
                counted = (keys["count"], keys["centred_sum"])
                source = Source("recentred", decl.column, (*counted, a, b))
            else:
                source = Source("moments", decl.column)
            if stat != "count":  # (its error names the column: not cached)
                positive_half(0.5 * (b - a), decl)
            if stat == "centred_squares":
                finite_square(0.5 * (b - a), decl)
            elif stat == "centred_cubes":
                finite_power(0.5 * (b - a), decl, 3)
            whole = stat == "sum" and decl.integer  # (moment_row checks the bounds)
            sens, lo, hi, integer = moment_row(stat, rel, n, a, b, zero_signs(a, b), whole)
            if stat == "bound_sums":
                key = f"{_label(decl.column)}: {stat}"
                keys[stat] = self._bound_sums(key, source, sens, (a, b), (lo, hi), weight)
                continue
            keys[stat] = self._entry(
                f"{_label(decl.column)}: {stat}",
                stat,
                source,
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
        src = Source("products", cols)
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
                    finite_square(halves[i], decls[i])
                    finite_square(halves[j], decls[j])
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

    def _buckets(
        self,
        column: Hashable,
        statistic: str,
        source: Source,
        size: int,
        weight: float,
        *,
        name: str | None = None,
        lohi: tuple[float, float] = (-math.inf, math.inf),
        levels: int = 1,
        select: Callable[[NDArray[Any], Plan], dict[str, FloatArray]] | None = None,
    ) -> str:
        """Counts over ``size`` disjoint buckets per group, in ``levels`` levels.

        One row lands in one bucket of each level, so the joint L1 / L2 norms are a
        histogram's times ``levels`` / ``sqrt(levels)``.

        Parameters
        ----------
        column : hashable
            The column counted; the key is ``"<column>: <name>"``.
        statistic : str
            The row of the sensitivity table (``"category_counts"``, ``"grid_counts"``
            ...).
        source : Source
            What the engine reads.
        size : int
            Buckets per group.
        weight : float
            Relative share of the plan's budget.
        name : str, optional
            The key's statistic part, if not ``statistic``.
        lohi : pair of float, default (-inf, inf)
            The public range of each count.
        levels : int, default 1
            Levels of the tree a row lands in one node of.
        select : callable, optional
            A private selection reading the exact counts instead of noise.

        Returns
        -------
        str
            The measurement's key.
        """
        linf, l1, l2 = self._bucket_norms()
        return self.add(
            Measurement(
                f"{_label(column)}: {statistic if name is None else name}",
                statistic,
                source,
                size * self.groups,
                linf,
                *lohi,
                True,
                weight,
                joint_l1=l1 / linf * levels,
                joint_l2=l2 / linf * math.sqrt(levels),
                select=select,
            )
        )

    def categories(self, column: Hashable, size: int, weight: float = 1.0) -> str:
        """Counts over ``size`` public buckets of one column (one row sits in one bucket).

        Grouped, the vector holds ``size`` buckets per group, group after group.
        """
        lohi = output_range("category_counts", 0.0, 1.0, self.settings.public_n)
        source = Source("categories", column)
        return self._buckets(column, "category_counts", source, size, weight, lohi=lohi)

    def grid(self, column: Hashable, nodes: int, levels: int, weight: float = 1.0) -> str:
        """Counts over the nodes of a tree on a public grid (quantiles; REFERENCE.md §12).

        ``nodes`` counts per group in ``levels`` levels; one row lands in one node
        of each level, so the joint L1 / L2 norms are a histogram's times ``levels``
        / ``sqrt(levels)``. The counts keep their raw noise (no clamp): the
        estimator's consistency step needs it unbiased.
        """
        source = Source("grid", column)
        return self._buckets(column, "grid_counts", source, nodes, weight, levels=levels)

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
        source = Source("grid", column)
        return self._buckets(column, "grid_selection", source, bins, weight, select=select)

    def derived_counts(self, column: Hashable, name: str, weight: float = 1.0) -> str:
        """Counts over a partition laid out by another measurement's selection.

        Calibrated as one bucket per group of a histogram (any number of disjoint
        buckets has the same per-entry noise); the selection computes the exact
        counts and noises them with this plan, repeated per bucket.
        """
        source = Source("derived", column)
        return self._buckets(column, "category_counts", source, 1, weight, name=name)

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
                Source("masks"),
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
            Source("rows"),
            sensitivity("rows", s.neighbouring),
            (0.0, 1.0),
            output_range("rows", 0.0, 1.0, s.public_n),
            True,
            weight,
        )
