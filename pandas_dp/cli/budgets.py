"""The budgets of ``pandas-dp describe``: the report's own, and a shared durable one.

:func:`_precheck_budget` checks ``--epsilon``/``--delta``/``--mechanism`` and makes the
report's in-memory :class:`~pandas_dp.PrivacyBudget`; :func:`_open_shared` opens (or
creates) the durable budget of ``--budget-store``/``--budget-name``, and
:func:`_charge_shared` charges the whole report to it before the data is read.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence

import pandas_dp
from pandas_dp.cli._errors import CLIError
from pandas_dp.errors import PandasDPError

__all__: list[str] = []


def _precheck_budget(
    epsilon: float, delta: float, mechanism: str, *, selection: bool = False
) -> pandas_dp.PrivacyBudget:
    """Check the report's epsilon, delta and mechanism, and make its budget.

    ``selection`` (``--auto``): a Laplace report may have a delta, which its category
    selections spend.
    """
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise CLIError(f"--epsilon must be a positive number; got {epsilon:g}")
    if not 0 <= delta < 1:
        raise CLIError(f"--delta must be in [0, 1); got {delta:g}")
    if mechanism == "gaussian" and delta == 0:
        raise CLIError("--mechanism gaussian needs a positive --delta")
    if mechanism == "laplace" and delta > 0 and not selection:
        raise CLIError(
            "--delta is spent by the Gaussian mechanism only: add --mechanism gaussian (or "
            "--auto, whose selection of categories spends it)"
        )
    try:
        return pandas_dp.PrivacyBudget(epsilon=epsilon, delta=delta, name="pandas-dp describe")
    except ValueError as err:
        raise CLIError(str(err)) from None


def _open_shared(
    store: str | os.PathLike[str] | None,
    name: str | None,
    epsilon: float | None,
    delta: float | None,
    label: str | None,
) -> pandas_dp.PrivacyBudget | None:
    """The durable budget of ``--budget-store`` and ``--budget-name``, if given."""
    if store is None and name is None:
        if epsilon is not None or delta is not None or label is not None:
            raise CLIError(
                "--budget-epsilon, --budget-delta and --budget-label describe a shared "
                "budget: give it with --budget-store PATH --budget-name NAME"
            )
        return None
    if store is None or name is None:
        raise CLIError(
            "--budget-store and --budget-name go together: the file of the shared budget "
            "and the budget's name in it, e.g. --budget-store budget.sqlite "
            "--budget-name survey"
        )
    if delta is not None and epsilon is None:
        raise CLIError("--budget-delta needs --budget-epsilon (the cap of the shared budget)")
    try:
        if epsilon is None:
            if pandas_dp.SQLiteBudgetStore(store).cap(name) is None:
                raise CLIError(
                    f"--budget-store {str(store)!r} holds no budget named {name!r}; create "
                    f"it by giving its cap, e.g. --budget-epsilon 10"
                )
            return pandas_dp.PrivacyBudget.open(store, name, label=label)
        return pandas_dp.PrivacyBudget(epsilon, delta or 0.0, store=store, name=name, label=label)
    except (PandasDPError, ValueError, TypeError) as err:
        raise CLIError(f"--budget-store {str(store)!r}: {err}") from None


def _where(shared: pandas_dp.PrivacyBudget) -> str:
    """The file of a shared budget, for messages."""
    return repr(str(shared.store))


def _charge_shared(
    shared: pandas_dp.PrivacyBudget,
    columns: Sequence[str],
    by: list[str],
    source: str,
    *,
    epsilon: float,
    delta: float,
    mechanism: str,
) -> None:
    """Charge the whole report to the shared budget, before the data is read."""
    try:
        shared.charge(
            epsilon,
            delta,
            statistic="pandas-dp describe",
            columns=tuple(columns),
            mechanism=mechanism,
            groups=tuple(by),
            keys="public" if by else None,
            source=source,
        )
    except PandasDPError as err:  # refused, or the store cannot be used: nothing spent
        raise CLIError(
            f"the shared budget {shared.name!r} in {_where(shared)}: {err}. The data was not read"
        ) from None
