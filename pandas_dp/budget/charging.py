"""Which budgets a release is charged to, and charging them all at once.

The machinery behind ``with budget:``, :func:`active_budgets` and :func:`charge_all`
(the rules are stated in :mod:`pandas_dp.budget.budgets`, which exports these functions):

* the open ``with budget:`` blocks of the current context (a :mod:`contextvars`
  variable), opened and closed by :func:`open_block` and :func:`close_block`;
* the process-wide blocks, open in any thread or task, and the process-wide default
  budget (:func:`swap_default`, behind :func:`~pandas_dp.budget.budgets.set_default_budget`);
* the atomic charge (:func:`charge_together`): an in-memory budget of another
  process is refused (:class:`~pandas_dp.errors.BudgetProcessError`), the budgets'
  locks are taken in the order of their serial numbers (:func:`next_serial`), the
  transactions of the stores of durable budgets are opened
  (:func:`~pandas_dp.budget.store.store_transactions`), every budget is asked, and
  the release is recorded in every ledger -- the stores' committed first -- or in
  none.

What one budget admits, and what it records, is decided by the budget itself
(:class:`~pandas_dp.budget.budgets.PrivacyBudget`, under its lock).
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from pandas_dp.budget.amounts import Spent, Step, check_amount
from pandas_dp.budget.store import StoreTransaction, store_transactions
from pandas_dp.errors import BudgetExceededError

__all__ = [
    "active_budget",
    "active_budgets",
    "charge_all",
    "charge_together",
    "close_block",
    "next_serial",
    "open_block",
    "swap_default",
]


class Chargeable(Protocol):
    """What charging needs of a budget (:class:`~pandas_dp.budget.budgets.PrivacyBudget`
    implements it): its identity and lock order, its store, its state, and the
    steps of a charge, each called under its lock."""

    name: str | None
    store: Any
    _lock: Any
    _state: Spent

    @property
    def _identity(self) -> tuple[Any, ...]: ...

    @property
    def _serial(self) -> int: ...

    def _check_process(self, role: str, pid: int) -> None: ...

    def _step(self, old: Spent, eps: float, dlt: float, rho: float | None) -> Step: ...

    def _refusal(self, old: Spent, eps: float, dlt: float, step: Step, role: str) -> str: ...

    def _row(
        self, old: Spent, eps: float, dlt: float, step: Step, now: float, entry: dict[str, Any]
    ) -> dict[str, Any]: ...

    def _apply(self, step: Step, row: dict[str, Any]) -> None: ...


@dataclass(eq=False)
class _Frame:
    """One open ``with budget:`` block (compared by identity)."""

    budget: Chargeable
    process_wide: bool
    thread: str = field(default_factory=lambda: threading.current_thread().name)


#: The open blocks of the current context, outermost first.
_FRAMES: contextvars.ContextVar[tuple[_Frame, ...]] = contextvars.ContextVar(
    "pandas_dp_budget_frames", default=()
)
#: The open process-wide blocks of every thread and task, oldest first.
_PROCESS_FRAMES: list[_Frame] = []
_PROCESS_LOCK = threading.Lock()
_DEFAULT: list[Chargeable | None] = [None]
_SERIAL = itertools.count()
_SERIAL_LOCK = threading.Lock()


def _active_with_roles() -> list[tuple[Chargeable, str]]:
    """The active budgets, innermost first, each once, with a phrase naming its role."""
    found: list[tuple[Chargeable, str]] = []
    frames = _FRAMES.get()
    for depth, frame in enumerate(reversed(frames)):
        role = "the active budget" if depth == 0 else "an enclosing budget"
        found.append((frame.budget, role))
    with _PROCESS_LOCK:
        shared = list(_PROCESS_FRAMES)
        default = _DEFAULT[0]
    local = {id(frame) for frame in frames}
    for frame in reversed(shared):
        if id(frame) not in local:
            role = f"the budget of a `with` block open in thread {frame.thread!r}"
            found.append((frame.budget, role))
    if default is not None:
        found.append((default, "the process-wide default budget"))
    return _unique(found)


def _unique(pairs: list[tuple[Chargeable, str]]) -> list[tuple[Chargeable, str]]:
    """Each budget once: two objects opening one budget of one store are one budget."""
    seen: set[tuple[Any, ...]] = set()
    unique = []
    for budget, role in pairs:
        if budget._identity not in seen:
            seen.add(budget._identity)
            unique.append((budget, role))
    return unique


def _serial(budget: Chargeable) -> int:
    """The order in which budgets' locks are taken (their creation order)."""
    return budget._serial


def active_budgets() -> tuple[Chargeable, ...]:
    """Every budget a release made here and now is charged to, innermost first.

    In order: the budgets of the enclosing ``with budget:`` blocks of this context
    (innermost first), those of ``with budget:`` blocks open in other threads or tasks
    (most recently opened first), and the default budget of :func:`set_default_budget`.
    Each budget appears once. A ``budget=`` given to a call is charged in addition.

    Returns
    -------
    tuple of PrivacyBudget
        Empty if no budget is active (releases are then not capped).
    """
    return tuple(budget for budget, _ in _active_with_roles())


def active_budget() -> Chargeable | None:
    """The innermost active budget (the first of :func:`active_budgets`), or None.

    Returns
    -------
    Chargeable or None
        The budget of the innermost ``with budget:`` block of this context; else that
        of a block open in another thread; else the default budget; else None.
    """
    budgets = active_budgets()
    return budgets[0] if budgets else None


def next_serial() -> int:
    """A new budget's place in the global order in which budgets' locks are taken.

    Returns
    -------
    int
        The next number of one counter of the process (0, 1, 2 ...), shared by
        every thread.
    """
    with _SERIAL_LOCK:
        return next(_SERIAL)


def open_block(budget: Chargeable, *, process_wide: bool) -> None:
    """Open a ``with budget:`` block in the current context.

    Parameters
    ----------
    budget : PrivacyBudget
        The budget the block activates.
    process_wide : bool
        Whether releases made in other threads and tasks are charged to it as well
        (``with budget:``) or only those of this context (``budget.context_only()``).
    """
    frame = _Frame(budget, process_wide)
    _FRAMES.set((*_FRAMES.get(), frame))
    if process_wide:
        with _PROCESS_LOCK:
            _PROCESS_FRAMES.append(frame)


def close_block(budget: Chargeable) -> None:
    """Close the innermost block of the current context, which must be ``budget``'s.

    Parameters
    ----------
    budget : PrivacyBudget
        The budget whose block ends.

    Raises
    ------
    RuntimeError
        If ``budget``'s block is not the innermost open one of this context.
    """
    frames = _FRAMES.get()
    if not frames or frames[-1].budget is not budget:
        raise RuntimeError(
            f"{budget!r} is not the innermost active budget of this context, so its block "
            f"cannot end here; exit `with` blocks in the reverse order of entering them, "
            f"in the thread or task that entered them"
        )
    frame = frames[-1]
    _FRAMES.set(frames[:-1])
    if frame.process_wide:
        with _PROCESS_LOCK:
            _PROCESS_FRAMES[:] = [f for f in _PROCESS_FRAMES if f is not frame]


def swap_default(budget: Chargeable | None) -> Chargeable | None:
    """Make ``budget`` the process-wide default budget (None: no default).

    Parameters
    ----------
    budget : Chargeable or None
        The new default (checked by :func:`~pandas_dp.budget.budgets.set_default_budget`).

    Returns
    -------
    Chargeable or None
        The previous default budget.
    """
    with _PROCESS_LOCK:
        previous, _DEFAULT[0] = _DEFAULT[0], budget
    return previous


def charge_all(
    epsilon: float,
    delta: float = 0.0,
    *,
    rho: float | None = None,
    budget: Chargeable | None = None,
    **entry: Any,
) -> tuple[Chargeable, ...]:
    """Charge a release to ``budget`` and to every active budget, atomically.

    Each budget is charged once, even if it is both given and active, or active
    several times. Either every budget accepts the charge and records it in its
    ledger, or none does.

    Parameters
    ----------
    epsilon : float
        Epsilon of the release (positive, finite).
    delta : float, default 0.0
        Delta of the release (finite, >= 0).
    rho : float, optional
        For a Gaussian release: its zCDP parameter (the sum over its noisy vectors of
        ``Delta_2^2 / (2 sigma^2)``), which ``"zcdp"`` budgets charge instead of its
        (epsilon, delta). ``None`` (default): a pure release (``delta=0``), which
        ``"zcdp"`` budgets charge ``epsilon^2 / 2``, or an approximately DP one
        (``delta > 0``), which they refuse. ``"basic"`` budgets charge
        (epsilon, delta) either way.
    budget : Chargeable, optional
        A budget given explicitly to the call; charged together with the active ones.
    **entry : Any
        The ledger entry: ``statistic``, ``columns``, ``mechanism`` and any details
        (see :meth:`Chargeable.charge`).

    Returns
    -------
    tuple of PrivacyBudget
        The budgets charged (explicit first, then innermost to outermost); empty if
        none was given or active, in which case the release is not capped.

    Raises
    ------
    BudgetExceededError
        If the release would overspend any of the budgets; the message names each
        budget that refused. Nothing is then spent from any of them.
    BudgetProcessError
        If an active in-memory budget belongs to another process (this is a forked
        child): nothing is spent. Share a budget between processes with ``store=``.
    BudgetStoreError
        If the store of a durable budget cannot be used: nothing is spent.
    ValueError
        If ``epsilon``, ``delta`` or ``rho`` is not a valid amount.
    """
    pairs = _active_with_roles()
    if budget is not None:
        pairs = _unique([(budget, "the budget passed as budget="), *pairs])
    return charge_together(pairs, epsilon, delta, entry, rho)


def charge_together(
    pairs: list[tuple[Chargeable, str]],
    epsilon: float,
    delta: float,
    entry: dict[str, Any],
    rho: float | None = None,
) -> tuple[Chargeable, ...]:
    """Charge one release to each of ``pairs``' budgets, atomically, or raise.

    The budgets' locks are taken in the order of their serial numbers, so two
    threads charging overlapping sets of budgets never deadlock; then one
    transaction is opened per store of the durable budgets, in the order of the
    stores' keys (so processes never wait on each other in a cycle), and each
    stored budget's totals are read in it. Every budget is asked whether it admits
    the release, and only if all of them do is the release recorded: in the stores,
    which commit, then in memory. A refusal rolls every store back.

    Parameters
    ----------
    pairs : list of (Chargeable, str)
        The budgets to charge, each once, with a phrase naming its role (for the
        message of a refusal).
    epsilon, delta : float
        The release's (epsilon, delta).
    entry : dict
        Its ledger entry (``statistic``, ``columns``, ``mechanism``, details).
    rho : float, optional
        Its zCDP parameter, if it has one (see :func:`charge_all`).

    Returns
    -------
    tuple of PrivacyBudget
        The budgets charged, in the order of ``pairs``.

    Raises
    ------
    BudgetExceededError
        If any budget refuses; nothing is then recorded anywhere.
    BudgetProcessError
        If an in-memory budget was made by another process (a forked child charging
        its copy); nothing is recorded anywhere.
    BudgetStoreError
        If a store cannot be used (not a store, corrupt, locked beyond its
        timeout); nothing is recorded anywhere -- unless a store fails while
        committing after another committed, which then keeps the charge (a charge
        without a release is safe).
    ValueError
        If ``epsilon``, ``delta`` or ``rho`` is not a valid amount.
    """
    eps = check_amount("epsilon", epsilon, allow_zero=False)
    dlt = check_amount("delta", delta, allow_zero=True)
    zcdp = None if rho is None else check_amount("rho", rho, allow_zero=False)
    if not pairs:  # no budget to charge or record in (the amounts are checked)
        return ()
    pid = os.getpid()
    for budget, role in pairs:  # an in-memory budget of another process: refused
        budget._check_process(role, pid)
    # (one budget, the usual case, needs no ordering)
    ordered = [pairs[0][0]] if len(pairs) == 1 else sorted((b for b, _ in pairs), key=_serial)
    stores = [budget.store for budget, _ in pairs if budget.store is not None]
    opened: contextlib.AbstractContextManager[dict[str, StoreTransaction]] = (
        store_transactions(stores) if stores else contextlib.nullcontext({})
    )
    taken: list[threading.Lock] = []
    try:
        for budget in ordered:
            budget._lock.acquire()
            taken.append(budget._lock)
        with opened as txns:  # commits every store's charge at the end, or none
            olds = [
                budget._state
                if budget.store is None
                else txns[budget.store.key].totals(str(budget.name))
                for budget, _ in pairs
            ]
            steps = [
                budget._step(old, eps, dlt, zcdp)
                for (budget, _), old in zip(pairs, olds, strict=True)
            ]
            refusals = [
                budget._refusal(old, eps, dlt, step, role)
                for (budget, role), old, step in zip(pairs, olds, steps, strict=True)
                if step.over
            ]
            if refusals:  # (the stores' transactions roll back)
                what = entry.get("statistic") or "this statistic"
                spared = " on any budget" if len(pairs) > 1 else ""
                needs = f"epsilon={eps:g}, delta={dlt:g}"
                if zcdp is not None:
                    needs += f" (rho={zcdp:g})"
                raise BudgetExceededError(
                    f"releasing {what} needs {needs}, but "
                    + "; and ".join(refusals)
                    + f". Nothing was spent{spared}; lower epsilon or start a new budget"
                )
            now = time.time()
            rows = [
                budget._row(old, eps, dlt, step, now, entry)
                for (budget, _), old, step in zip(pairs, olds, steps, strict=True)
            ]
            for (budget, _), step, row in zip(pairs, steps, rows, strict=True):
                if budget.store is not None:
                    txns[budget.store.key].record(str(budget.name), step.state, row)
        # every store has committed: the in-memory budgets record the release too
        for (budget, _), step, row in zip(pairs, steps, rows, strict=True):
            if budget.store is None:
                budget._apply(step, row)
    finally:
        for lock in reversed(taken):
            lock.release()
    return tuple(budget for budget, _ in pairs)
