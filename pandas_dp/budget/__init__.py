"""Privacy budgets: a cap on what is spent, the ledger, and where they are kept.

:mod:`~pandas_dp.budget.budgets` (:class:`PrivacyBudget`, the active budgets),
:mod:`~pandas_dp.budget.charging` (charging every budget a release is charged to at
once), :mod:`~pandas_dp.budget.amounts` (amounts and the ledger's rows),
:mod:`~pandas_dp.budget.store` (durable budgets in SQLite) and
:mod:`~pandas_dp.budget.accounting` (zCDP).
"""

from pandas_dp.budget.budgets import Amount as Amount
from pandas_dp.budget.budgets import PrivacyBudget as PrivacyBudget
from pandas_dp.budget.budgets import __all__ as __all__
from pandas_dp.budget.budgets import active_budget as active_budget
from pandas_dp.budget.budgets import active_budgets as active_budgets
from pandas_dp.budget.budgets import charge_all as charge_all
from pandas_dp.budget.budgets import set_default_budget as set_default_budget
