"""Running a plan: the charge, the engine's exact values, the noise, once.

:class:`PlanRun` is the base of :class:`~pandas_dp.plan.plans.Plan` that spends a
calibrated plan: :meth:`PlanRun.run` charges the budget for the whole plan at
once, asks the engine (:mod:`pandas_dp.engines`, through
:mod:`pandas_dp.plan.measure`) for the exact sufficient statistics -- one pass per
column or block -- and adds the noise here, on the client. With private keys it
first runs partition selection and measures the kept keys only. It also tells
the estimators and the metadata record which groups were released.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp import engines
from pandas_dp.budget.budgets import charge_all
from pandas_dp.engines.inputs import EngineInput
from pandas_dp.noise.bounding import apply_noise_clamped, apply_noise_exact
from pandas_dp.noise.plans import NoisePlan
from pandas_dp.plan.calibration import PlanCalibration
from pandas_dp.plan.measure import exact_values, kept_groups, observed_counts
from pandas_dp.plan.recentring import recentred_values
from pandas_dp.request.grouping import canonical_key
from pandas_dp.request.grouping_facts import grouping_facts

__all__ = ["SELECTION", "PlanRun"]

FloatArray = NDArray[np.float64]

#: Private keys: the noisy number of distinct units per observed key.
SELECTION = "groups: distinct units"


class PlanRun(PlanCalibration):
    """The running of a :class:`~pandas_dp.plan.plans.Plan` (its base class)."""

    #: Private keys: the keys partition selection kept (set by :meth:`run`).
    selected: pd.Index | None

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
        plan passes its zCDP ``rho`` too (:meth:`~PlanCalibration.rho`), which
        ``accounting="zcdp"`` budgets charge instead of its (epsilon, delta); ``rho``
        overrides it, for releases calibrated outside the plan. A plan with partition selection
        (private keys) spends a delta of its own that no rho accounts for: it is
        charged without a rho (``"zcdp"`` budgets refuse it).

        The ledger entry names the grouping and the privacy unit as fields of their
        own (:func:`~pandas_dp.request.grouping_facts.grouping_facts`): ``groups``, ``keys``,
        ``n_keys`` (``None`` for private keys: the kept number is not known before
        the selection), ``privacy_unit`` and ``contribution_bounds``.
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
            **grouping_facts(s.contributions, self.grouping),
        )

    def run(
        self,
        data: EngineInput | Callable[[], EngineInput],
        statistic: str,
        columns: tuple[Hashable, ...],
        *,
        check: Callable[[], None] | None = None,
    ) -> dict[str, FloatArray]:
        """Charge, compute the exact sufficient statistics, noise them once.

        ``data`` is what the engine reads (:func:`~pandas_dp.plan.measure.engine_input`
        builds it; a callable is called only after the charge, and so are the
        readers and masks it holds). ``check`` runs after the charge and before the
        engine (``out_of_bounds="raise"``'s validation).
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
            m
            for m in self.measurements.values()
            if m.key not in out and m.source.kind not in ("derived", "recentred")
        ]
        exact = exact_values(engine, data)
        for key, m in self.measurements.items():
            if m.select is not None:  # a private selection (and what it derives)
                out.update(m.select(exact[key], self))
        src = self.settings.source
        second = []
        for key, m in self.measurements.items():
            if key in out:
                continue
            if m.source.kind == "recentred":  # after the two it is centred by
                second.append(m)
            elif m.integer:  # counts, and integer sums (exact: whole Fractions)
                whole = np.asarray(exact[key], dtype=np.float64)  # clamped to ±2**53 next
                out[key] = apply_noise_clamped(whole, self.noise_for(key), src)
            else:  # exact rationals: nothing lost to floating point before the noise
                out[key] = apply_noise_exact(exact[key], self.noise_for(key), src)
        for m in second:  # a second stage: its centre is read off released values
            # (every group's entries are noised alike: one group's plan says it)
            c_plan, s_plan = (self.measurements[k].calibrated for k in m.source.detail[:2])
            values = recentred_values(m.source, exact, out, (c_plan.variance, s_plan.variance))
            out[m.key] = apply_noise_exact(values, self.noise_for(m.key), src)
        return out

    def _select(self, data: EngineInput, out: dict[str, FloatArray]) -> EngineInput:
        """Partition selection (REFERENCE.md §10): keep the keys whose noisy count of
        distinct units exceeds the threshold; every other measurement is then made
        over the kept keys only, in sorted order.
        """
        observed: engines.Groups = data.groups
        uniques: pd.Index = data.keys
        counts = observed_counts(data)
        from pandas_dp.noise import partition

        assert self.selection is not None
        keep, noisy = partition.select(counts, self.selection, self.settings.source)
        kept = np.flatnonzero(keep)
        labels = _released_labels(uniques[kept])
        order = _key_order(labels)
        kept = kept[order]
        assert self.grouping is not None
        self.selected = pd.Index(labels[order], name=self.grouping.by[0])
        out[SELECTION] = noisy[kept].astype(np.float64)
        if len(self.measurements) == 1:  # the selection's counts are the release
            return data
        position = np.full(observed.size + 1, -1, dtype=np.intp)
        position[kept] = np.arange(len(kept))
        # -1 stays -1 (the extra last slot)
        return replace(data, groups=kept_groups(data, position, len(kept)))

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


def _released_labels(labels: pd.Index) -> pd.Index:
    """The kept keys as released: one label per group, not its first row's spelling.

    A categorical column's keys lose its dtype (its category list was read off the
    data, and may name keys the selection withheld); float keys lose the sign of
    zero (``-0.0`` and ``0.0`` are one group, labelled ``0.0``); object keys are
    :func:`~pandas_dp.request.grouping.canonical_key`'s.
    """
    if isinstance(labels.dtype, pd.CategoricalDtype):
        labels = pd.Index(np.asarray(labels, dtype=object), dtype=object)
    if labels.dtype == object:
        canonical: pd.Index = pd.Index([_canonical(k) for k in labels], dtype=object)
        return canonical
    if pd.api.types.is_float_dtype(labels.dtype):
        positive: pd.Index = labels + 0.0  # -0.0 + 0.0 is 0.0 (IEEE 754), still a float
        return positive
    return labels


def _canonical(key: Any) -> Any:
    """:func:`~pandas_dp.request.grouping.canonical_key`, or the key itself where a hostile
    object makes it raise (after the charge nothing may)."""
    try:
        return canonical_key(key)
    except Exception:
        return key


def _key_order(keys: pd.Index) -> NDArray[np.intp]:
    """Positions that sort the released keys: a function of the kept keys alone.

    Keys that do not compare (or whose comparison raises anything) are ordered by
    type name and ``repr``, never by where they first appear in the data (that
    order would depend on the rows); keys whose ``repr`` raises come after the
    others of their type, by hash. Nothing a key does makes it raise: it runs after
    the charge.
    """
    try:
        return np.asarray(keys.argsort(), dtype=np.intp)
    except Exception:
        names = [_sort_name(k) for k in keys]
        return np.asarray(sorted(range(len(names)), key=names.__getitem__), dtype=np.intp)


def _sort_name(key: Any) -> tuple[str, int, str, int]:
    """``(type name, 0, repr, 0)``; ``(type name, 1, "", hash)`` when ``repr`` raises
    (a kept key was grouped, so it hashes; ``0`` if that raises too)."""
    kind = type(key).__qualname__
    try:
        return kind, 0, str(repr(key)), 0
    except Exception:
        try:
            return kind, 1, "", hash(key)
        except Exception:
            return kind, 1, "", 0
