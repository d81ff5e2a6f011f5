"""Privacy budgets: a cap on the total epsilon (and delta) spent, and a ledger.

A release is charged to every budget that covers it, all at once or not at all:

* the budget passed to the call as ``budget=``, if any;
* every budget of an enclosing ``with budget:`` block of the current context
  (a :mod:`contextvars` variable: nested blocks charge the inner *and* the outer
  budget);
* every budget whose ``with budget:`` block is open in any thread of the process
  (so that worker threads started inside the block -- :class:`threading.Thread`,
  :class:`concurrent.futures.ThreadPoolExecutor` -- are charged: a new thread does
  not inherit the context of the thread that started it);
* the process-wide default budget, if :func:`set_default_budget` set one.

Each budget is charged once per release, however many times it is active. Without
any of these, a release is not capped.

The process-wide part is deliberately conservative: while a ``with budget:`` block is
open, releases from *unrelated* threads and asyncio tasks are charged to it as well
(and may be refused by it). Spending too much from a budget only ever fails closed;
forgetting a worker thread would publish releases no budget accounts for. Programs
that serve independent analyses in concurrent threads or tasks (one budget per
request or per user) should open their blocks with :meth:`PrivacyBudget.context_only`,
which caps the current context only, and pass ``budget=`` to work they hand to threads.

Accounting
----------
Each budget composes its releases by one rule, fixed when it is created
(``accounting=``), and admits a release only if the total stays within its cap. A
budget is a *privacy filter* (Rogers, Roth, Ullman & Vadhan 2016): the analyst may
choose every release -- statistic, columns, epsilon, mechanism -- after seeing the
earlier results, and the budget's (epsilon, delta) still holds for everything it
admitted. That is why the rule is fixed in advance: a budget that admitted a release
whenever *one of several* accountings fitted (the best for the sequence so far) is not
known to be a valid filter.

``"basic"`` (the default)
    Every release is charged its calibrated (epsilon, delta), and the sums must stay
    within the budget's. Basic composition is a valid filter: it holds with adaptively
    chosen parameters (Rogers, Roth, Ullman & Vadhan 2016, "Privacy Odometers and
    Filters: Pay-as-you-Go Composition", NeurIPS, arXiv:1605.08294).

``"zcdp"`` (needs ``delta > 0``)
    Every release is charged a zero-concentrated DP parameter rho: a Gaussian release
    its ``Delta_2^2 / (2 sigma^2)`` from the noise it adds (summed over its noisy
    vectors, :meth:`pandas_dp.plan.Plan.rho`), a pure epsilon-DP release
    ``epsilon^2 / 2`` (Bun & Steinke 2016, Prop. 1.4). The budget admits a release
    while the total rho stays within ``rho_budget = rho_for(epsilon, delta)``, the
    largest rho whose tight conversion (Canonne, Kamath & Steinke 2020, Prop. 12) is
    within the budget's (epsilon, delta). A Gaussian release's own delta is *not*
    added up here: its rho describes it completely, and the budget's delta is spent
    once, by the final conversion. ``k`` Gaussian releases then cost about ``sqrt(k)``
    times, not ``k`` times, the epsilon of one. A release that is only approximately
    DP -- a delta without a rho, such as partition selection with private keys -- has
    no rho and is refused by a ``"zcdp"`` budget (use a ``"basic"`` one for it).

    Validity under adaptive choices: rho-zCDP is Renyi DP of order ``alpha`` with
    parameter ``alpha rho`` for every ``alpha > 1``. Feldman & Zrnic ("Individual
    Privacy Accounting via a Renyi Filter", NeurIPS 2021, arXiv:2008.11193) prove that
    Renyi DP of a fixed order composes with adaptively chosen privacy parameters: a
    filter that keeps the sum of the releases' order-``alpha`` parameters within a
    fixed budget ``B`` makes the whole interaction (``alpha``, ``B``)-RDP. The
    condition ``sum rho_i <= rho_budget`` is that condition at every order at once
    (``B = alpha rho_budget``), so everything the budget admits is
    ``rho_budget``-zCDP, hence (epsilon, delta)-DP by the conversion, which holds
    order by order. Whitehouse, Ramdas, Rogers & Wu ("Fully-Adaptive Composition in
    Differential Privacy", ICML 2023, arXiv:2203.05481) also construct a privacy
    filter for (approximate) zCDP with adaptively chosen parameters.

Nested and active budgets may use different rules: each checks its own, and a
release is admitted only if all of them accept it.

Charging is atomic: the budgets' locks are taken in one global order (so two threads
never deadlock), every budget is checked, and only if all of them accept is the
release recorded in every ledger. A release that would overspend any of them raises
:class:`~pandas_dp.BudgetExceededError` naming that budget, before any data is read,
and records nothing anywhere.

This module holds :class:`PrivacyBudget` and :func:`set_default_budget`. Which
budgets are active, and the atomic charge of all of them, live in
:mod:`pandas_dp.budget_charging`; the amounts a budget keeps and reports in
:mod:`pandas_dp.budget_amounts`. The public names of both (:class:`Amount`,
:func:`active_budget`, :func:`active_budgets`, :func:`charge_all`) are exported here.

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
>>> outer, inner = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=0.5)
>>> with outer, inner:
...     charged = charge_all(0.5, statistic="mean")
>>> outer.spent[0], inner.spent[0]
(0.5, 0.5)
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import pandas as pd

from pandas_dp.accounting import epsilon_for, rho_for, rho_of_pure
from pandas_dp.budget_amounts import (
    ACCOUNTINGS,
    RELATIVE_TOLERANCE,
    Amount,
    Spent,
    Step,
    check_amount,
)
from pandas_dp.budget_charging import (
    active_budget,
    active_budgets,
    charge_all,
    charge_together,
    close_block,
    next_serial,
    open_block,
    swap_default,
)

__all__ = [
    "Amount",
    "PrivacyBudget",
    "active_budget",
    "active_budgets",
    "charge_all",
    "set_default_budget",
]


def set_default_budget(budget: PrivacyBudget | None) -> PrivacyBudget | None:
    """Charge every release of the process, in every thread, to ``budget``.

    The default budget is charged in addition to the budgets of ``with`` blocks and
    ``budget=`` arguments, until it is replaced or cleared with
    ``set_default_budget(None)``. Use it to cap a whole notebook or script, where a
    ``with`` block would cover one cell only.

    Parameters
    ----------
    budget : PrivacyBudget or None
        The new default budget; None removes the default.

    Returns
    -------
    PrivacyBudget or None
        The previous default budget, to restore it later.

    Raises
    ------
    TypeError
        If ``budget`` is neither a :class:`PrivacyBudget` nor None.
    """
    if budget is not None and not isinstance(budget, PrivacyBudget):
        raise TypeError(
            f"set_default_budget needs a PrivacyBudget or None; got {type(budget).__name__}. "
            f"Create one with pandas_dp.PrivacyBudget(epsilon=...)"
        )
    return swap_default(budget)


class PrivacyBudget:
    """A total privacy budget, charged by every release made under it.

    ``with budget:`` activates the budget for the block: every release in the block
    is charged to it -- together with the budgets of enclosing blocks, so nested
    budgets all count -- and so is every release made meanwhile in *any* thread of
    the process, including worker threads started in the block (threads do not
    inherit the context of their parent). That also caps unrelated threads while the
    block is open; use :meth:`context_only` to cap the current context only.

    Parameters
    ----------
    epsilon : float
        Total epsilon of everything the budget admits (positive, finite).
    delta : float, default 0.0
        Total delta (``0 <= delta < 1``). With ``accounting="basic"`` the releases'
        deltas add up to at most this (only Gaussian releases spend delta); with
        ``"zcdp"`` it is the delta of the final conversion of rho.
    accounting : {"basic", "zcdp"}, default "basic"
        How releases compose, fixed for the budget's life (see the module's notes):
        ``"basic"`` adds up every release's (epsilon, delta); ``"zcdp"`` adds up
        every release's rho (a Gaussian release's from its noise, a pure one's
        ``epsilon^2 / 2``) within ``rho_for(epsilon, delta)``.
    name : str, optional
        A label for error messages and the repr (e.g. ``"project"``, ``"session"``).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``delta`` is not a valid amount, ``accounting`` is not one
        of the two rules, or ``accounting="zcdp"`` is asked with ``delta=0`` (the
        conversion of rho to (epsilon, delta) needs a positive delta).

    Notes
    -----
    **Reports.** :attr:`spent` and :attr:`remaining` are ``(epsilon, delta)`` pairs
    with the rho on the side (``.rho``). In ``"basic"`` accounting they are the sums
    and what is left of them; ``spent.rho`` is the total rho of the Gaussian releases,
    for information only. In ``"zcdp"`` accounting ``spent`` is
    ``(epsilon_for(rho_spent, delta), delta)`` and ``remaining`` is
    ``(epsilon_for(rho_left, delta), delta)``: the guarantee is always the budget's
    own (epsilon, delta), and the conversion is concave in rho, so the two epsilons
    add up to *more* than the budget's epsilon. :attr:`rho_budget` is the rho cap.

    **Ledger.** Each row keeps the release's own epsilon, delta and rho (in
    ``"zcdp"`` accounting the rho charged, ``epsilon^2 / 2`` for a pure release; in
    ``"basic"`` accounting a Gaussian release's rho, NaN for others) and in
    ``charged_epsilon`` by how much the release raised ``spent.epsilon`` (the column
    sums to it).

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
    >>> z = pandas_dp.PrivacyBudget(epsilon=1.0, delta=1e-6, accounting="zcdp")
    >>> round(z.rho_budget, 4)
    0.0244
    >>> z.charge(0.1, statistic="count")  # a pure release: rho = 0.1**2 / 2
    >>> round(z.spent.rho, 6), round(z.remaining.rho, 4)
    (0.005, 0.0194)
    >>> round(z.spent.epsilon, 2), z.spent.delta  # epsilon_for(0.005, 1e-6)
    (0.43, 1e-06)
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        accounting: str = "basic",
        name: str | None = None,
    ) -> None:
        self.epsilon = check_amount("epsilon", epsilon, allow_zero=False)
        self.delta = check_amount("delta", delta, allow_zero=True)
        if self.delta >= 1:
            raise ValueError(f"delta must be below 1; got {delta}")
        if accounting not in ACCOUNTINGS:
            raise ValueError(
                f"accounting must be 'basic' (epsilon and delta add up) or 'zcdp' (rho adds "
                f"up, converted to (epsilon, delta) at the end); got {accounting!r}"
            )
        if accounting == "zcdp" and self.delta == 0:
            raise ValueError(
                "accounting='zcdp' converts the total rho to (epsilon, delta) and needs a "
                "positive delta, e.g. PrivacyBudget(epsilon=1.0, delta=1e-6, "
                "accounting='zcdp'); with delta=0 use accounting='basic'"
            )
        self.accounting = accounting
        #: The rho cap of ``"zcdp"`` accounting (``rho_for(epsilon, delta)``); None
        #: in ``"basic"`` accounting.
        self.rho_budget: float | None = None
        if accounting == "zcdp":
            self.rho_budget = rho_for(self.epsilon, self.delta)
            if not self.rho_budget > 0:
                raise ValueError(
                    f"epsilon={self.epsilon:g}, delta={self.delta:g} allow no rho at all; "
                    f"use a larger epsilon or delta"
                )
        self.name = name
        self._lock = threading.Lock()
        self._serial = next_serial()  # the global order in which locks are taken
        self._entries: list[dict[str, Any]] = []
        self._state = Spent()

    # ------------------------------------------------------------------ context
    def __enter__(self) -> PrivacyBudget:
        open_block(self, process_wide=True)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        close_block(self)

    @contextlib.contextmanager
    def context_only(self) -> Iterator[PrivacyBudget]:
        """Activate the budget for the current context only (not process-wide).

        Like ``with budget:``, but releases made in other threads -- including worker
        threads started inside the block -- are *not* charged to it. asyncio tasks
        created inside the block still are (they copy the context). Use it where
        concurrent threads or tasks serve independent analyses with budgets of their
        own, and pass ``budget=`` to any work handed to a thread.

        Yields
        ------
        PrivacyBudget
            This budget.
        """
        open_block(self, process_wide=False)
        try:
            yield self
        finally:
            close_block(self)

    # ------------------------------------------------------------------ charging
    def charge(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        rho: float | None = None,
        statistic: str = "",
        columns: tuple[Any, ...] = (),
        mechanism: str = "",
        **details: Any,
    ) -> None:
        """Charge a release to this budget only (by its accounting), or raise and spend nothing.

        Releases go through :func:`charge_all`, which also charges the active budgets.

        Parameters
        ----------
        epsilon : float
            Epsilon to spend (positive, finite).
        delta : float, default 0.0
            Delta to spend (finite, >= 0).
        rho : float, optional
            The zCDP parameter of a Gaussian release (see :func:`charge_all`);
            ``None`` for a release without one.
        statistic : str, optional
            Name of the release, for the ledger.
        columns : tuple, optional
            Columns of the release, for the ledger.
        mechanism : str, optional
            Noise mechanism, for the ledger.
        **details : Any
            Further ledger columns (bounding mode, budget split, ...).

        Raises
        ------
        BudgetExceededError
            If the charge would take the total over the budget.
        ValueError
            If ``epsilon``, ``delta`` or ``rho`` is not a valid amount.
        """
        entry = {"statistic": statistic, "columns": columns, "mechanism": mechanism, **details}
        charge_together([(self, "the budget")], epsilon, delta, entry, rho)

    def _after(self, eps: float, dlt: float, rho: float | None) -> Step:
        """What this budget would hold after a release (caller holds the lock)."""
        old = self._state
        gauss_rho = old.gauss_rho + (rho if rho is not None else 0.0)
        eps_sum, delta_sum = old.epsilon + eps, old.delta + dlt
        if self.accounting == "basic":
            over = eps_sum > self.epsilon * (1.0 + RELATIVE_TOLERANCE) or (
                delta_sum > self.delta * (1.0 + RELATIVE_TOLERANCE)
            )
            state = Spent(eps_sum, delta_sum, gauss_rho, old.rho, eps_sum)
            return Step(state, math.nan if rho is None else rho, over, approximate=False)
        assert self.rho_budget is not None
        if rho is None and dlt > 0:  # (epsilon, delta)-DP only: no rho to charge
            return Step(old, math.nan, True, approximate=True)
        charged = rho if rho is not None else rho_of_pure(eps)
        total = old.rho + charged
        over = total > self.rho_budget * (1.0 + RELATIVE_TOLERANCE)
        spent = max(old.spent_epsilon, epsilon_for(total, self.delta))
        state = Spent(eps_sum, delta_sum, gauss_rho, total, spent)
        return Step(state, charged, over, approximate=False)

    def _refusal(self, eps: float, dlt: float, step: Step, role: str) -> str:
        """Why this budget refuses ``step`` (caller holds the lock)."""
        label = f"{role} {self.name!r}" if self.name else role
        old = self._state
        if self.accounting == "basic":
            return (
                f"only epsilon={max(self.epsilon - old.epsilon, 0):g}, "
                f"delta={max(self.delta - old.delta, 0):g} remain of {label} "
                f"(epsilon={self.epsilon:g}, delta={self.delta:g})"
            )
        assert self.rho_budget is not None
        if step.approximate:
            return (
                f"{label} accounts in zCDP (accounting='zcdp') and cannot admit a release "
                f"with delta={dlt:g} but no rho (approximate DP only, such as partition "
                f"selection with private keys); make it under a budget with "
                f"accounting='basic'"
            )
        left = max(self.rho_budget - old.rho, 0.0)
        return (
            f"only rho={left:g} (epsilon={epsilon_for(left, self.delta):g} at "
            f"delta={self.delta:g}) remains of {label} (epsilon={self.epsilon:g}, "
            f"delta={self.delta:g}, accounting='zcdp': rho={self.rho_budget:g} in all), "
            f"and the release needs rho={step.rho:g}"
        )

    def _record(
        self, eps: float, dlt: float, step: Step, now: float, entry: dict[str, Any]
    ) -> None:
        """Spend and add a ledger row (caller holds the lock and has checked)."""
        charged = step.state.spent_epsilon - self._state.spent_epsilon
        self._state = step.state
        row = {
            "time": now,
            "statistic": entry.get("statistic", ""),
            "columns": tuple(entry.get("columns", ())),
            "epsilon": eps,
            "delta": dlt,
            "rho": step.rho,
            "charged_epsilon": charged,
            "mechanism": entry.get("mechanism", ""),
        }
        for key, value in entry.items():  # the details, after the fixed columns
            row.setdefault(key, value)
        self._entries.append(row)

    # ------------------------------------------------------------------ reports
    @property
    def spent(self) -> Amount:
        """``(epsilon, delta)`` spent so far, with ``.rho``.

        ``"basic"`` accounting: the sums of the releases' epsilons and deltas;
        ``.rho`` is the total rho of the Gaussian releases (for information).
        ``"zcdp"`` accounting: ``(epsilon_for(rho, delta), delta)`` for the total
        ``rho`` charged (``(0.0, 0.0)`` before any release).
        """
        with self._lock:
            state = self._state
        if self.accounting == "basic":
            return Amount(state.epsilon, state.delta, state.gauss_rho)
        return Amount(state.spent_epsilon, self.delta if state.rho > 0 else 0.0, state.rho)

    @property
    def remaining(self) -> Amount:
        """``(epsilon, delta)`` still available (never negative), with ``.rho``.

        ``"basic"`` accounting: what is left of the budget's epsilon and delta
        (``.rho`` is 0.0: rho is not budgeted). ``"zcdp"`` accounting: ``.rho`` is
        the rho left of :attr:`rho_budget`, a further release may charge up to it,
        and the pair is ``(epsilon_for(rho_left, delta), delta)``.
        """
        with self._lock:
            state = self._state
        if self.accounting == "basic":
            left_eps = max(self.epsilon - state.epsilon, 0.0)
            return Amount(left_eps, max(self.delta - state.delta, 0.0), 0.0)
        assert self.rho_budget is not None
        left = max(self.rho_budget - state.rho, 0.0)
        return Amount(epsilon_for(left, self.delta), self.delta if left > 0 else 0.0, left)

    @property
    def ledger(self) -> pd.DataFrame:
        """One row per release charged to this budget, oldest first.

        Columns: ``time`` (UTC), ``statistic``, ``columns``, the release's own
        ``epsilon`` and ``delta``, its ``rho`` (``"zcdp"`` accounting: the rho charged,
        ``epsilon^2 / 2`` for a pure release; ``"basic"``: a Gaussian release's rho,
        NaN for others), ``charged_epsilon`` (how much the release raised
        ``spent.epsilon``; the column sums to it), ``mechanism``, then any details of
        the release
        (``bounding``, ``neighbouring``, ``split`` ...).
        """
        with self._lock:
            rows = list(self._entries)
        columns = [
            "time",
            "statistic",
            "columns",
            "epsilon",
            "delta",
            "rho",
            "charged_epsilon",
            "mechanism",
        ]
        frame = pd.DataFrame(rows)
        if frame.empty:
            return pd.DataFrame(columns=columns)
        frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
        extra = [c for c in frame.columns if c not in columns]
        return frame[columns + extra]

    def __repr__(self) -> str:
        spent = self.spent
        name = f"{self.name!r}, " if self.name else ""
        rho = f", rho={spent.rho:g}" if spent.rho > 0 else ""
        mode = ", accounting='zcdp'" if self.accounting == "zcdp" else ""
        return (
            f"PrivacyBudget({name}epsilon={self.epsilon:g}, delta={self.delta:g}{mode}; "
            f"spent epsilon={spent.epsilon:g}, delta={spent.delta:g}{rho}; "
            f"{len(self._entries)} releases)"
        )
