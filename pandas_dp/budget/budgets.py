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
    vectors, :meth:`pandas_dp.plan.plans.Plan.rho`), a pure epsilon-DP release
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

Processes and stores
--------------------
An in-memory budget belongs to the process that made it: a charge from any other
process -- a forked child charging its copy, which the parent would never see --
raises :class:`~pandas_dp.BudgetProcessError` before any data is read. (A spawned
child starts afresh and sees no budget at all.) A budget made with ``store=`` and
``name=`` keeps its cap, totals and ledger in a store
(:mod:`pandas_dp.budget.store`; a path is a SQLite file) and may be charged by any
thread or process that opens it: each charge is one transaction of the store,
committed before the release reads its data. A charge to several budgets, stored
and in memory, takes the in-memory locks in their global order, then opens the
stores' transactions (in the order of their keys), checks every budget, records the
release in every store and commits, then records it in memory; any refusal rolls
every store back.

This module holds :class:`PrivacyBudget` and :func:`set_default_budget`. Which
budgets are active, and the atomic charge of all of them, live in
:mod:`pandas_dp.budget.charging`; the amounts a budget keeps and reports in
:mod:`pandas_dp.budget.amounts`. The public names of both (:class:`Amount`,
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
import os
import threading
from collections.abc import Iterator
from types import TracebackType
from typing import Any, SupportsIndex, cast

import pandas as pd

from pandas_dp.budget.accounting import epsilon_for, rho_for, rho_of_pure
from pandas_dp.budget.amounts import (
    ACCOUNTINGS,
    RELATIVE_TOLERANCE,
    Amount,
    Spent,
    Step,
    check_amount,
    ledger_frame,
    ledger_row,
)
from pandas_dp.budget.charging import (
    active_budget,
    active_budgets,
    charge_all,
    charge_together,
    close_block,
    next_serial,
    open_block,
    swap_default,
)
from pandas_dp.budget.store import BudgetStore, Cap, as_store
from pandas_dp.errors import BudgetProcessError, BudgetStoreError

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
    return cast("PrivacyBudget | None", swap_default(budget))


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
        A name for error messages and the repr (e.g. ``"project"``, ``"session"``);
        with ``store``, the budget's name in the store (required).
    store : str, path-like or BudgetStore, optional
        Keep the budget in a store instead of this process's memory, shared by every
        thread and process that opens it, on every day: a path is a SQLite file
        (:class:`~pandas_dp.SQLiteBudgetStore`, created if new). Opens the budget
        ``name`` in it, creating it with this cap if the store lacks it. Without a
        store, the budget lives in memory and only this process may charge it.
    label : str, optional
        The caller's label, written in the ``label`` column of every ledger row this
        object charges (e.g. ``"nightly 2026-12-07"``).

    Raises
    ------
    ValueError
        If ``epsilon`` or ``delta`` is not a valid amount, ``accounting`` is not one
        of the two rules, ``accounting="zcdp"`` is asked with ``delta=0`` (the
        conversion of rho to (epsilon, delta) needs a positive delta), or ``store``
        is given without a ``name``.
    TypeError
        If ``name`` or ``label`` is not a str, or ``store`` is neither a path nor a
        :class:`~pandas_dp.BudgetStore`.
    BudgetStoreError
        If the store already holds a budget ``name`` with another epsilon, delta or
        accounting, or the file is not a budget store, is corrupt or stays locked.

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

    **Processes.** An in-memory budget refuses charges from any process but the one
    that made it (:class:`~pandas_dp.BudgetProcessError`): a forked child would charge
    a copy. A budget with ``store=`` is charged by every process that opens it, each
    charge one transaction of the store committed before the data is read; its
    :attr:`spent`, :attr:`remaining` and :attr:`ledger` read the store. It pickles as
    its store, name, cap and label.

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
        store: BudgetStore | str | os.PathLike[str] | None = None,
        label: str | None = None,
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
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str; got {type(name).__name__}")
        if label is not None and not isinstance(label, str):
            raise TypeError(f"label must be a str; got {type(label).__name__}")
        self.name = name
        #: The caller's label, written in the ``label`` column of the ledger rows this
        #: object charges (e.g. ``"nightly 2026-12-07"``).
        self.label = label
        self._lock = threading.Lock()
        self._serial = next_serial()  # the global order in which locks are taken
        self._pid = os.getpid()  # an in-memory budget belongs to this process
        self._entries: list[dict[str, Any]] = []
        self._state = Spent()
        #: The store that keeps the budget (None: in this process's memory).
        self.store: BudgetStore | None = None
        if store is not None:
            if name is None:
                raise ValueError(
                    "a budget kept in a store needs a name, its key in the store: "
                    "PrivacyBudget(epsilon=..., store='budget.sqlite', name='survey')"
                )
            kept = as_store(store)
            kept.open_budget(name, Cap(self.epsilon, self.delta, self.accounting))
            self.store = kept

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

    def _step(self, old: Spent, eps: float, dlt: float, rho: float | None) -> Step:
        """What this budget would hold after a release, from its totals ``old``.

        The caller holds the lock (and, for a budget in a store, the store's
        transaction in which ``old`` was read).
        """
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

    def _refusal(self, old: Spent, eps: float, dlt: float, step: Step, role: str) -> str:
        """Why this budget, with totals ``old``, refuses ``step`` (caller holds the lock)."""
        label = f"{role} {self.name!r}" if self.name else role
        if self.store is not None:
            label += f" (kept in {str(self.store)!r})"
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

    def _row(
        self, old: Spent, eps: float, dlt: float, step: Step, now: float, entry: dict[str, Any]
    ) -> dict[str, Any]:
        """The ledger row of a release this budget admits (from its totals ``old``)."""
        return ledger_row(
            entry,
            time=now,
            epsilon=eps,
            delta=dlt,
            rho=step.rho,
            charged_epsilon=step.state.spent_epsilon - old.spent_epsilon,
            label=self.label,
        )

    def _apply(self, step: Step, row: dict[str, Any]) -> None:
        """Spend and add a ledger row, in memory (caller holds the lock and has checked)."""
        self._state = step.state
        self._entries.append(row)

    @property
    def _identity(self) -> tuple[Any, ...]:
        """Two budget objects with one identity are one budget (charged once)."""
        if self.store is not None:
            return ("store", self.store.key, self.name)
        return ("memory", id(self))

    def _check_process(self, role: str, pid: int) -> None:
        """Refuse a charge to an in-memory budget from a process other than its owner."""
        if self._pid == pid:
            return
        if self.store is not None:  # a durable budget: any process may charge it
            self._lock = threading.Lock()  # (a lock copied by fork may be held)
            self._pid = pid
            return
        label = f"{role} {self.name!r}" if self.name else role
        raise BudgetProcessError(
            f"{label} is an in-memory budget of process {self._pid}, and this is process "
            f"{pid}: a forked child charges a copy of it that its parent never sees, so "
            f"the cap would not hold. Nothing was charged. To cap the releases of several "
            f"processes, keep the budget in a store and open it in each of them: "
            f"PrivacyBudget(epsilon=..., store='budget.sqlite', name='survey')"
        )

    def _totals(self) -> Spent:
        """The running totals: from the store, or from memory under the lock."""
        if self.store is not None:
            assert self.name is not None
            return self.store.totals(self.name)
        with self._lock:
            return self._state

    # ------------------------------------------------------------------ reports
    @property
    def spent(self) -> Amount:
        """``(epsilon, delta)`` spent so far, with ``.rho``.

        ``"basic"`` accounting: the sums of the releases' epsilons and deltas;
        ``.rho`` is the total rho of the Gaussian releases (for information).
        ``"zcdp"`` accounting: ``(epsilon_for(rho, delta), delta)`` for the total
        ``rho`` charged (``(0.0, 0.0)`` before any release). A budget in a store
        reads it from the store: it includes every process's charges.
        """
        state = self._totals()
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
        state = self._totals()
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
        ``spent.epsilon``; the column sums to it), ``mechanism``, the grouping --
        ``groups`` (the key columns, ``()`` if not grouped), ``keys`` (``"public"``
        or ``"private"``), ``n_keys`` (the number of declared keys) -- the privacy
        unit (``privacy_unit``, ``contribution_bounds``), ``label`` (the label of
        the budget object that charged it), then any details of the release
        (``bounding``, ``neighbouring``, ``split`` ...). A budget in a store reads
        its ledger from the store, with the same columns and types.
        """
        if self.store is not None:
            assert self.name is not None
            return ledger_frame(self.store.rows(self.name))
        with self._lock:
            rows = list(self._entries)
        return ledger_frame(rows)

    @classmethod
    def open(
        cls,
        store: BudgetStore | str | os.PathLike[str],
        name: str,
        *,
        label: str | None = None,
    ) -> PrivacyBudget:
        """Open a budget that a store already holds, with the cap recorded there.

        Parameters
        ----------
        store : BudgetStore, str or path-like
            The store (a path: a SQLite file).
        name : str
            The budget's name in the store.
        label : str, optional
            The label of the ledger rows this object charges.

        Returns
        -------
        PrivacyBudget

        Raises
        ------
        BudgetStoreError
            If the store holds no budget of that name, or cannot be used.
        """
        kept = as_store(store)
        cap = kept.cap(name)
        if cap is None:
            raise BudgetStoreError(
                f"the budget store {kept!r} holds no budget named {name!r}; create it "
                f"with PrivacyBudget(epsilon=..., store=..., name={name!r})"
            )
        return cls(
            cap.epsilon,
            cap.delta,
            accounting=cap.accounting,
            name=name,
            store=kept,
            label=label,
        )

    def __reduce_ex__(self, protocol: SupportsIndex) -> Any:
        if self.store is None:  # in memory: copied like any object (pickling fails)
            return super().__reduce_ex__(protocol)
        return (
            _reopen,
            (self.store, self.name, self.epsilon, self.delta, self.accounting, self.label),
        )

    def __repr__(self) -> str:
        name = f"{self.name!r}, " if self.name else ""
        mode = ", accounting='zcdp'" if self.accounting == "zcdp" else ""
        kept = f", store={self.store!r}" if self.store is not None else ""
        try:
            spent = self.spent
            count = self.store.count(self.name) if self.store and self.name else len(self._entries)
        except BudgetStoreError:
            return (
                f"PrivacyBudget({name}epsilon={self.epsilon:g}, delta={self.delta:g}{mode}{kept})"
            )
        rho = f", rho={spent.rho:g}" if spent.rho > 0 else ""
        return (
            f"PrivacyBudget({name}epsilon={self.epsilon:g}, delta={self.delta:g}{mode}{kept}; "
            f"spent epsilon={spent.epsilon:g}, delta={spent.delta:g}{rho}; "
            f"{count} releases)"
        )


def _reopen(
    store: BudgetStore,
    name: str,
    epsilon: float,
    delta: float,
    accounting: str,
    label: str | None,
) -> PrivacyBudget:
    """A budget in a store, opened again (in another process, after pickling)."""
    return PrivacyBudget(epsilon, delta, accounting=accounting, name=name, store=store, label=label)
