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

Pure epsilon-DP releases (Laplace) compose additively. A Gaussian release is also
charged its zCDP parameter ``rho`` (``Delta_2^2 / (2 sigma^2)``): a budget composes
those in rho and converts the total to (epsilon, delta) with the tight conversion of
Canonne, Kamath & Steinke (2020), so ``k`` Gaussian releases cost about ``sqrt(k)``
times, not ``k`` times, the epsilon of one (:mod:`pandas_dp.accounting`). The delta
spent is always the sum of the releases' deltas; the epsilon spent is the smallest of
several valid accountings at that delta (:meth:`pandas_dp.accounting.Totals.spent_epsilon`),
never more than the sum of the releases' epsilons, and it never decreases.

Charging is atomic: the budgets' locks are taken in one global order (so two threads
never deadlock), every budget is checked, and only if all of them accept is the
release recorded in every ledger. A release that would overspend any of them raises
:class:`~pandas_dp.BudgetExceededError` naming that budget, before any data is read,
and records nothing anywhere.

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
import contextvars
import itertools
import math
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import pandas as pd

from pandas_dp.accounting import Totals, rho_for
from pandas_dp.errors import BudgetExceededError

__all__ = [
    "Amount",
    "PrivacyBudget",
    "active_budget",
    "active_budgets",
    "charge_all",
    "set_default_budget",
]

#: Spending may exceed the total by this relative amount, so that ten charges of
#: 0.1 fit in a budget of 1.0 despite floating-point rounding.
RELATIVE_TOLERANCE = 1e-9


class Amount(tuple[float, float]):
    """An ``(epsilon, delta)`` pair with the ``rho`` of its zCDP part as an attribute.

    A plain tuple of two for comparison, unpacking and printing, so
    ``eps, delta = budget.spent`` works as before.

    Parameters
    ----------
    epsilon, delta : float
    rho : float, default 0.0
        For :attr:`PrivacyBudget.spent`: the total rho of the Gaussian releases; for
        :attr:`PrivacyBudget.remaining`: the rho a further Gaussian release may still
        spend with all the remaining delta.

    Examples
    --------
    >>> a = Amount(1.0, 1e-6, rho=0.01)
    >>> a, a.epsilon, a.delta, a.rho
    ((1.0, 1e-06), 1.0, 1e-06, 0.01)
    """

    rho: float

    def __new__(cls, epsilon: float, delta: float, rho: float = 0.0) -> Amount:
        amount = super().__new__(cls, (epsilon, delta))
        amount.rho = rho
        return amount

    @property
    def epsilon(self) -> float:
        """The epsilon (first entry)."""
        return self[0]

    @property
    def delta(self) -> float:
        """The delta (second entry)."""
        return self[1]


@dataclass(eq=False)
class _Frame:
    """One open ``with budget:`` block (compared by identity)."""

    budget: PrivacyBudget
    process_wide: bool
    thread: str = field(default_factory=lambda: threading.current_thread().name)


#: The open blocks of the current context, outermost first.
_FRAMES: contextvars.ContextVar[tuple[_Frame, ...]] = contextvars.ContextVar(
    "pandas_dp_budget_frames", default=()
)
#: The open process-wide blocks of every thread and task, oldest first.
_PROCESS_FRAMES: list[_Frame] = []
_PROCESS_LOCK = threading.Lock()
_DEFAULT: list[PrivacyBudget | None] = [None]
_SERIAL = itertools.count()
_SERIAL_LOCK = threading.Lock()


def _active_with_roles() -> list[tuple[PrivacyBudget, str]]:
    """The active budgets, innermost first, each once, with a phrase naming its role."""
    found: list[tuple[PrivacyBudget, str]] = []
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


def _unique(pairs: list[tuple[PrivacyBudget, str]]) -> list[tuple[PrivacyBudget, str]]:
    seen: set[int] = set()
    unique = []
    for budget, role in pairs:
        if id(budget) not in seen:
            seen.add(id(budget))
            unique.append((budget, role))
    return unique


def active_budgets() -> tuple[PrivacyBudget, ...]:
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


def active_budget() -> PrivacyBudget | None:
    """The innermost active budget (the first of :func:`active_budgets`), or None.

    Returns
    -------
    PrivacyBudget or None
        The budget of the innermost ``with budget:`` block of this context; else that
        of a block open in another thread; else the default budget; else None.
    """
    budgets = active_budgets()
    return budgets[0] if budgets else None


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
    with _PROCESS_LOCK:
        previous, _DEFAULT[0] = _DEFAULT[0], budget
    return previous


def charge_all(
    epsilon: float,
    delta: float = 0.0,
    *,
    rho: float | None = None,
    budget: PrivacyBudget | None = None,
    **entry: Any,
) -> tuple[PrivacyBudget, ...]:
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
        ``Delta_2^2 / (2 sigma^2)``), which the budgets compose in zCDP. ``None``
        (default): the release is accounted by its epsilon and delta only.
    budget : PrivacyBudget, optional
        A budget given explicitly to the call; charged together with the active ones.
    **entry : Any
        The ledger entry: ``statistic``, ``columns``, ``mechanism`` and any details
        (see :meth:`PrivacyBudget.charge`).

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
    ValueError
        If ``epsilon``, ``delta`` or ``rho`` is not a valid amount.
    """
    pairs = _active_with_roles()
    if budget is not None:
        pairs = _unique([(budget, "the budget passed as budget="), *pairs])
    return _charge_together(pairs, epsilon, delta, entry, rho)


def _charge_together(
    pairs: list[tuple[PrivacyBudget, str]],
    epsilon: float,
    delta: float,
    entry: dict[str, Any],
    rho: float | None = None,
) -> tuple[PrivacyBudget, ...]:
    eps = _check_amount("epsilon", epsilon, allow_zero=False)
    dlt = _check_amount("delta", delta, allow_zero=True)
    zcdp = None if rho is None else _check_amount("rho", rho, allow_zero=False)
    with contextlib.ExitStack() as locks:
        for budget in sorted((b for b, _ in pairs), key=lambda b: b._serial):
            locks.enter_context(budget._lock)
        after = [budget._after(eps, dlt, zcdp) for budget, _ in pairs]
        refusals = [
            budget._refusal(eps, dlt, zcdp, state, role)
            for (budget, role), state in zip(pairs, after, strict=True)
            if budget._refuses(state)
        ]
        if refusals:
            what = entry.get("statistic") or "this statistic"
            spared = " on any budget" if len(pairs) > 1 else ""
            needs = f"epsilon={eps:g}, delta={dlt:g}"
            if zcdp is not None:
                needs += f" (rho={zcdp:g}, composed in zCDP)"
            raise BudgetExceededError(
                f"releasing {what} needs {needs}, but "
                + "; and ".join(refusals)
                + f". Nothing was spent{spared}; lower epsilon or start a new budget"
            )
        now = time.time()
        for (budget, _), state in zip(pairs, after, strict=True):
            budget._record(eps, dlt, zcdp, state, now, entry)
    return tuple(budget for budget, _ in pairs)


def _check_amount(name: str, value: float, *, allow_zero: bool) -> float:
    number = float(value)
    ok = math.isfinite(number) and (number >= 0 if allow_zero else number > 0)
    if not ok:
        need = "a finite number >= 0" if allow_zero else "a positive finite number"
        raise ValueError(f"{name} must be {need}; got {value!r}")
    return number


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
        Total epsilon the releases may spend together (sequential composition).
    delta : float, default 0.0
        Total delta (only Gaussian releases spend delta).
    name : str, optional
        A label for error messages and the repr (e.g. ``"project"``, ``"session"``).

    Notes
    -----
    **Accounting.** The budget keeps the sums of every release's epsilon and delta,
    and, for Gaussian releases (charged with a ``rho``), the sum of their rho. The
    delta spent is the sum of the deltas. The epsilon spent is the smallest of three
    valid accountings of the whole sequence at that delta
    (:meth:`pandas_dp.accounting.Totals.accountings`):

    1. *basic*: the sum of the epsilons;
    2. *zcdp*: the Gaussian releases composed in zCDP, ``epsilon_for(sum rho,
       sum delta_gaussian)``, plus the epsilons of the others;
    3. *zcdp_all*: the pure releases converted to ``epsilon^2/2`` and composed with
       the Gaussian ones in zCDP.

    Each is a valid (epsilon, delta) guarantee, so the smallest is. A single Gaussian
    release, calibrated exactly to its (epsilon_i, delta_i), converts from its rho to
    a *larger* epsilon than epsilon_i (the zCDP bound is not tight for one release):
    then the basic accounting wins and it costs epsilon_i, as without zCDP. Over many
    Gaussian releases zCDP wins: ``k`` releases of rho cost ``epsilon_for(k rho, k
    delta_i)``, growing like ``sqrt(k)``. The epsilon spent never decreases: where a
    release's delta would lower the converted epsilon, the previous value is kept
    (a larger epsilon at the same delta is still a valid guarantee).

    The ledger keeps each release's own epsilon, delta and rho, and in
    ``charged_epsilon`` by how much it raised the epsilon spent (the column sums to
    ``spent.epsilon``).

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

    def __init__(self, epsilon: float, delta: float = 0.0, *, name: str | None = None) -> None:
        self.epsilon = _check_amount("epsilon", epsilon, allow_zero=False)
        self.delta = _check_amount("delta", delta, allow_zero=True)
        if self.delta >= 1:
            raise ValueError(f"delta must be below 1; got {delta}")
        self.name = name
        self._lock = threading.Lock()
        with _SERIAL_LOCK:
            self._serial = next(_SERIAL)  # the global order in which locks are taken
        self._entries: list[dict[str, Any]] = []
        self._totals = Totals()
        self._spent_eps = 0.0
        self._spent_delta = 0.0

    # ------------------------------------------------------------------ context
    def __enter__(self) -> PrivacyBudget:
        self._push(process_wide=True)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._pop()

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
        self._push(process_wide=False)
        try:
            yield self
        finally:
            self._pop()

    def _push(self, *, process_wide: bool) -> None:
        frame = _Frame(self, process_wide)
        _FRAMES.set((*_FRAMES.get(), frame))
        if process_wide:
            with _PROCESS_LOCK:
                _PROCESS_FRAMES.append(frame)

    def _pop(self) -> None:
        frames = _FRAMES.get()
        if not frames or frames[-1].budget is not self:
            raise RuntimeError(
                f"{self!r} is not the innermost active budget of this context, so its block "
                f"cannot end here; exit `with` blocks in the reverse order of entering them, "
                f"in the thread or task that entered them"
            )
        frame = frames[-1]
        _FRAMES.set(frames[:-1])
        if frame.process_wide:
            with _PROCESS_LOCK:
                _PROCESS_FRAMES[:] = [f for f in _PROCESS_FRAMES if f is not frame]

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
        """Spend ``epsilon`` and ``delta`` from this budget only, or raise and spend nothing.

        Releases go through :func:`charge_all`, which also charges the active budgets.

        Parameters
        ----------
        epsilon : float
            Epsilon to spend (positive, finite).
        delta : float, default 0.0
            Delta to spend (finite, >= 0).
        rho : float, optional
            The zCDP parameter of a Gaussian release, composed in zCDP (see the
            class's Notes); ``None`` for a release accounted by epsilon and delta.
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
        _charge_together([(self, "the budget")], epsilon, delta, entry, rho)

    def _after(self, eps: float, dlt: float, rho: float | None) -> tuple[Totals, float]:
        """The totals and the epsilon spent after a release (caller holds the lock)."""
        totals = self._totals.add(eps, dlt, rho)
        return totals, max(self._spent_eps, totals.spent_epsilon())

    def _refuses(self, state: tuple[Totals, float]) -> bool:
        """Whether ``state`` (from :meth:`_after`) overspends (caller holds the lock)."""
        totals, spent = state
        over_eps = spent > self.epsilon * (1.0 + RELATIVE_TOLERANCE)
        over_delta = totals.delta > self.delta * (1.0 + RELATIVE_TOLERANCE)
        return over_eps or over_delta

    def _refusal(
        self, eps: float, dlt: float, rho: float | None, state: tuple[Totals, float], role: str
    ) -> str:
        """Why this budget refuses (caller holds the lock)."""
        label = f"{role} {self.name!r}" if self.name else role
        why = (
            f"only epsilon={max(self.epsilon - self._spent_eps, 0):g}, "
            f"delta={max(self.delta - self._spent_delta, 0):g} remain of {label} "
            f"(epsilon={self.epsilon:g}, delta={self.delta:g}"
        )
        if rho is not None or self._totals.rho > 0:
            totals, spent = state
            why += (
                f"; composed with its earlier releases (rho={self._totals.rho:g} so far) "
                f"it would bring the epsilon spent to {spent:g} and the delta spent to "
                f"{totals.delta:g}"
            )
        return why + ")"

    def _record(
        self,
        eps: float,
        dlt: float,
        rho: float | None,
        state: tuple[Totals, float],
        now: float,
        entry: dict[str, Any],
    ) -> None:
        """Spend and add a ledger row (caller holds the lock and has checked)."""
        totals, spent = state
        charged = spent - self._spent_eps
        self._totals = totals
        self._spent_eps = spent
        self._spent_delta = totals.delta
        row = {
            "time": now,
            "statistic": entry.get("statistic", ""),
            "columns": tuple(entry.get("columns", ())),
            "epsilon": eps,
            "delta": dlt,
            "rho": math.nan if rho is None else rho,
            "charged_epsilon": charged,
            "mechanism": entry.get("mechanism", ""),
        }
        row.update((k, v) for k, v in entry.items() if k not in row)
        self._entries.append(row)

    # ------------------------------------------------------------------ reports
    @property
    def spent(self) -> Amount:
        """``(epsilon, delta)`` spent so far; ``.rho`` is the total rho of Gaussian releases.

        The epsilon is that of the best valid accounting (see the class's Notes): for
        Gaussian releases it can be far below the sum of their epsilons.
        """
        with self._lock:
            return Amount(self._spent_eps, self._spent_delta, self._totals.rho)

    @property
    def remaining(self) -> Amount:
        """``(epsilon, delta)`` still available (never negative), and ``.rho``.

        ``remaining.rho`` is the largest rho a further Gaussian release could still
        spend, composed in zCDP with the earlier ones, if it is charged all the
        remaining delta (0 with no delta left). A Gaussian release whose epsilon is
        above ``remaining.epsilon`` may still fit, by its rho.
        """
        with self._lock:
            totals, spent_eps = self._totals, self._spent_eps
        left_eps = max(self.epsilon - spent_eps, 0.0)
        left_delta = max(self.delta - totals.delta, 0.0)
        return Amount(left_eps, left_delta, self._rho_left(totals, left_delta))

    def _rho_left(self, totals: Totals, left_delta: float) -> float:
        """The rho a Gaussian release charged ``left_delta`` could add (zCDP accountings)."""
        conversion_delta = totals.rho_delta + left_delta
        if conversion_delta <= 0:
            return 0.0
        cap = self.epsilon  # RELATIVE_TOLERANCE not used: stay on the safe side
        other = max(totals.epsilon - totals.pure_epsilon - totals.rho_epsilon, 0.0)
        best = 0.0
        for used, rho_used in (
            (totals.pure_epsilon + other, totals.rho),  # pure releases by epsilon
            (other, totals.rho + totals.pure_rho),  # pure releases in zCDP
        ):
            if cap - used > 0:
                best = max(best, rho_for(cap - used, min(conversion_delta, 1.0)) - rho_used)
        return best

    @property
    def ledger(self) -> pd.DataFrame:
        """One row per release charged to this budget, oldest first.

        Columns: ``time`` (UTC), ``statistic``, ``columns``, the release's own
        ``epsilon``, ``delta`` and ``rho`` (NaN for a release not accounted in zCDP),
        ``charged_epsilon`` (how much the release raised the epsilon spent; the column
        sums to ``spent.epsilon``), ``mechanism``, then any details of the release
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
        return (
            f"PrivacyBudget({name}epsilon={self.epsilon:g}, delta={self.delta:g}; "
            f"spent epsilon={spent.epsilon:g}, delta={spent.delta:g}{rho}; "
            f"{len(self._entries)} releases)"
        )
