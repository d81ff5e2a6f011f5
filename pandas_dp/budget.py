"""Privacy budgets: a cap on the total epsilon (and delta) spent, and a ledger.

``with budget:`` makes a :class:`PrivacyBudget` the active budget of the current
context (a :mod:`contextvars` variable, so each thread and each asyncio task sees
its own); every ``.dp`` release in the block is charged to it. ``budget=`` on a
call charges that budget instead. Without either, a release is not capped.

Charging is atomic: the check and the ledger entry happen under one lock, so
concurrent threads can never spend more than the total together. A release that
would overspend raises :class:`~pandas_dp.BudgetExceededError` before any data is
read and records nothing.

Examples
--------
>>> budget = PrivacyBudget(epsilon=1.0)
>>> budget.charge(0.25, statistic="mean", columns=("age",))
>>> budget.spent, budget.remaining
((0.25, 0.0), (0.75, 0.0))
>>> budget.charge(1.0, statistic="mean", columns=("age",))
Traceback (most recent call last):
...
pandas_dp.errors.BudgetExceededError: ...
"""

from __future__ import annotations

import contextvars
import math
import threading
import time
from types import TracebackType
from typing import Any

import pandas as pd

from pandas_dp.errors import BudgetExceededError

__all__ = ["PrivacyBudget", "active_budget"]

#: Spending may exceed the total by this relative amount, so that ten charges of
#: 0.1 fit in a budget of 1.0 despite floating-point rounding.
RELATIVE_TOLERANCE = 1e-9

_ACTIVE: contextvars.ContextVar[PrivacyBudget | None] = contextvars.ContextVar(
    "pandas_dp_active_budget", default=None
)
_TOKENS: contextvars.ContextVar[tuple[contextvars.Token[PrivacyBudget | None], ...]] = (
    contextvars.ContextVar("pandas_dp_budget_tokens", default=())
)


def active_budget() -> PrivacyBudget | None:
    """The budget activated by the innermost ``with budget:`` of this context."""
    return _ACTIVE.get()


def _check_amount(name: str, value: float, *, allow_zero: bool) -> float:
    number = float(value)
    ok = math.isfinite(number) and (number >= 0 if allow_zero else number > 0)
    if not ok:
        need = "a finite number >= 0" if allow_zero else "a positive finite number"
        raise ValueError(f"{name} must be {need}; got {value!r}")
    return number


class PrivacyBudget:
    """A total privacy budget, charged by every release made under it.

    Parameters
    ----------
    epsilon : float
        Total epsilon the releases may spend together (sequential composition).
    delta : float, default 0.0
        Total delta (only Gaussian releases spend delta).

    Examples
    --------
    >>> import pandas as pd, pandas_dp
    >>> df = pd.DataFrame({"age": [30.0, 41.0, 25.0, 60.0]})
    >>> budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    >>> with budget:
    ...     m = df.dp.mean("age", epsilon=0.5, bounds=(0, 100))
    >>> budget.remaining
    (0.5, 0.0)
    >>> list(budget.ledger.columns[:4])
    ['time', 'statistic', 'columns', 'epsilon']
    """

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        self.epsilon = _check_amount("epsilon", epsilon, allow_zero=False)
        self.delta = _check_amount("delta", delta, allow_zero=True)
        if self.delta >= 1:
            raise ValueError(f"delta must be below 1; got {delta}")
        self._lock = threading.Lock()
        self._entries: list[dict[str, Any]] = []
        self._spent_eps = 0.0
        self._spent_delta = 0.0

    # ------------------------------------------------------------------ context
    def __enter__(self) -> PrivacyBudget:
        token = _ACTIVE.set(self)
        _TOKENS.set((*_TOKENS.get(), token))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tokens = _TOKENS.get()
        _TOKENS.set(tokens[:-1])
        _ACTIVE.reset(tokens[-1])

    # ------------------------------------------------------------------ charging
    def charge(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        statistic: str = "",
        columns: tuple[Any, ...] = (),
        mechanism: str = "",
        **details: Any,
    ) -> None:
        """Spend ``epsilon`` and ``delta`` atomically, or raise and spend nothing.

        Raises
        ------
        BudgetExceededError
            If the charge would take the total over the budget.
        """
        eps = _check_amount("epsilon", epsilon, allow_zero=False)
        dlt = _check_amount("delta", delta, allow_zero=True)
        with self._lock:
            new_eps = self._spent_eps + eps
            new_delta = self._spent_delta + dlt
            over_eps = new_eps > self.epsilon * (1.0 + RELATIVE_TOLERANCE)
            over_delta = new_delta > self.delta * (1.0 + RELATIVE_TOLERANCE)
            if over_eps or over_delta:
                raise BudgetExceededError(
                    f"releasing {statistic or 'this statistic'} needs epsilon={eps:g}, "
                    f"delta={dlt:g}, but only epsilon={max(self.epsilon - self._spent_eps, 0):g}"
                    f", delta={max(self.delta - self._spent_delta, 0):g} remain of the budget "
                    f"(epsilon={self.epsilon:g}, delta={self.delta:g}). Nothing was spent; "
                    f"lower epsilon or start a new budget"
                )
            self._spent_eps = new_eps
            self._spent_delta = new_delta
            self._entries.append(
                {
                    "time": time.time(),
                    "statistic": statistic,
                    "columns": tuple(columns),
                    "epsilon": eps,
                    "delta": dlt,
                    "mechanism": mechanism,
                    **details,
                }
            )

    # ------------------------------------------------------------------ reports
    @property
    def spent(self) -> tuple[float, float]:
        """``(epsilon, delta)`` spent so far."""
        with self._lock:
            return (self._spent_eps, self._spent_delta)

    @property
    def remaining(self) -> tuple[float, float]:
        """``(epsilon, delta)`` still available (never negative)."""
        with self._lock:
            return (
                max(self.epsilon - self._spent_eps, 0.0),
                max(self.delta - self._spent_delta, 0.0),
            )

    @property
    def ledger(self) -> pd.DataFrame:
        """One row per release charged to this budget, oldest first."""
        with self._lock:
            rows = list(self._entries)
        columns = ["time", "statistic", "columns", "epsilon", "delta", "mechanism"]
        frame = pd.DataFrame(rows)
        if frame.empty:
            return pd.DataFrame(columns=columns)
        frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
        extra = [c for c in frame.columns if c not in columns]
        return frame[columns + extra]

    def __repr__(self) -> str:
        eps, dlt = self.spent
        return (
            f"PrivacyBudget(epsilon={self.epsilon:g}, delta={self.delta:g}; "
            f"spent epsilon={eps:g}, delta={dlt:g}; {len(self._entries)} releases)"
        )
