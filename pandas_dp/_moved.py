"""Old module names, still importable: ``pandas_dp.quantile_search`` and the like.

Version 0.1 laid the package out flat (``pandas_dp.statistics``,
``pandas_dp.quantile_search``, ``pandas_dp.mechanisms`` ...); the modules now live in
subpackages in the order data flows (docs/design.md). An import of an old name gets
the module at its new place -- the same module object, so patching one patches the
other -- with a :class:`DeprecationWarning` that names the new place.
(``pandas_dp.plan``, ``pandas_dp.budget``, ``pandas_dp.result`` and
``pandas_dp.plotting`` kept their names as packages that re-export their public
names.)

Examples
--------
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", DeprecationWarning)
...     from pandas_dp import quantile_search
>>> quantile_search.__name__
'pandas_dp.stats.quantiles.search'
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from types import ModuleType

__all__ = ["MOVED", "install"]

#: Old module (below ``pandas_dp``) -> its new place.
MOVED: dict[str, str] = {
    "accounting": "budget.accounting",
    "bounding": "noise.bounding",
    "budget_amounts": "budget.amounts",
    "budget_charging": "budget.charging",
    "budget_store": "budget.store",
    "category_declarations": "request.category_declarations",
    "constraints": "stats.constraints",
    "covariance": "stats.covariance",
    "declarations": "request.declarations",
    "declared_columns": "request.declared_columns",
    "describe": "stats.describe",
    "estimators": "stats.estimators",
    "grouped": "stats.grouped",
    "grouping": "request.grouping",
    "grouping_facts": "request.grouping_facts",
    "histogram_estimates": "stats.histogram_estimates",
    "histograms": "stats.histograms",
    "measure": "plan.measure",
    "mechanisms": "noise.mechanisms",
    "moment_weights": "stats.moment_weights",
    "moments": "stats.moments",
    "noise_plans": "noise.plans",
    "partition": "noise.partition",
    "plan_calibration": "plan.calibration",
    "plan_running": "plan.running",
    "plotting_axes": "plotting.axes",
    "plotting_bounding": "plotting.bounding",
    "quantile_agg": "stats.quantiles.agg",
    "quantile_estimators": "stats.quantiles.estimators",
    "quantile_search": "stats.quantiles.search",
    "quantile_tree": "stats.quantiles.tree",
    "quantiles": "stats.quantiles.releases",
    "queries": "request.queries",
    "records": "plan.records",
    "report": "cli.report",
    "sensitivity": "plan.sensitivity",
    "settings": "request.settings",
    "shrinkage": "stats.shrinkage",
    "statistics": "stats.numeric",
    "unit_declarations": "request.unit_declarations",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old name and loads it as the module at the new place."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        new = _new_name(fullname)
        return None if new is None else importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = _new_name(spec.name)
        assert new is not None
        warnings.warn(
            f"{spec.name} has moved to {new}; import it from there",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the module at the new place is already loaded."""


def _new_name(fullname: str) -> str | None:
    """``fullname``'s new place, or ``None`` if it did not move."""
    head, _, rest = fullname.partition(".")
    if head != "pandas_dp" or not rest:
        return None
    top, dot, tail = rest.partition(".")
    new = MOVED.get(top)
    return None if new is None else f"pandas_dp.{new}{dot}{tail}"


def install() -> None:
    """Put the finder on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
        sys.meta_path.append(_MovedModules())
