"""Privacy budgets: a cap on what is spent, the ledger, and where they are kept.

:mod:`~pandas_dp.budget.budgets` (:class:`PrivacyBudget`, the active budgets),
:mod:`~pandas_dp.budget.charging` (charging every budget a release is charged to at
once), :mod:`~pandas_dp.budget.amounts` (amounts and the ledger's rows),
:mod:`~pandas_dp.budget.store` (durable budgets in SQLite) and
:mod:`~pandas_dp.budget.accounting` (zCDP).
"""

from pandas_dp.budget.budgets import (
    Amount,
    PrivacyBudget,
    active_budget,
    active_budgets,
    charge_all,
    set_default_budget,
)

__all__ = [
    "Amount",
    "PrivacyBudget",
    "active_budget",
    "active_budgets",
    "charge_all",
    "set_default_budget",
]
