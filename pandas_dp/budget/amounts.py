"""What a privacy budget keeps and reports: amounts, its running state, the checks.

:class:`Amount` is the ``(epsilon, delta)`` pair, with its ``rho`` on the side, that
:attr:`~pandas_dp.PrivacyBudget.spent` and :attr:`~pandas_dp.PrivacyBudget.remaining`
report. :class:`Spent` is what a budget has spent so far and :class:`Step` what it
would hold after one more release, with its verdict; both are computed by
:class:`~pandas_dp.PrivacyBudget` (:mod:`pandas_dp.budget.budgets`) under its lock and
applied by the atomic charge of :mod:`pandas_dp.budget.charging`.
:func:`check_amount` validates an epsilon, delta or rho before anything is charged.
:func:`ledger_row` makes a ledger row, the same for a budget in memory and one in a
store, and :func:`ledger_frame` the ledger's DataFrame of such rows.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import pandas as pd

__all__ = [
    "ACCOUNTINGS",
    "LEDGER_COLUMNS",
    "LEDGER_DEFAULTS",
    "RELATIVE_TOLERANCE",
    "Amount",
    "Spent",
    "Step",
    "check_amount",
    "ledger_frame",
    "ledger_row",
]

#: Spending may exceed the total by this relative amount, so that ten charges of
#: 0.1 fit in a budget of 1.0 despite floating-point rounding.
RELATIVE_TOLERANCE = 1e-9  # (in "zcdp" accounting: of the total rho)

#: The accounting rules a budget may use.
ACCOUNTINGS = ("basic", "zcdp")

#: The ledger's fixed columns, in order; a release's further details follow them.
LEDGER_COLUMNS = (
    "time",
    "statistic",
    "columns",
    "epsilon",
    "delta",
    "rho",
    "charged_epsilon",
    "mechanism",
    "groups",
    "keys",
    "n_keys",
    "privacy_unit",
    "contribution_bounds",
    "label",
)

#: The fixed columns that hold Python objects (strings, tuples, dicts, None): all
#: but the time and the amounts.
_OBJECT_COLUMNS = tuple(
    c for c in LEDGER_COLUMNS if c not in ("time", "epsilon", "delta", "rho", "charged_epsilon")
)

#: What a fixed column of the release's entry holds when the entry lacks it:
#: ``groups`` the key columns (``()``: not grouped), ``keys`` ``"public"`` or
#: ``"private"``, ``n_keys`` the number of declared keys, ``privacy_unit`` the unit's
#: column and ``contribution_bounds`` its bounds (a dict).
LEDGER_DEFAULTS: dict[str, Any] = {
    "statistic": "",
    "columns": (),
    "mechanism": "",
    "groups": (),
    "keys": None,
    "n_keys": None,
    "privacy_unit": None,
    "contribution_bounds": None,
}


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


class Spent(NamedTuple):
    """What a budget has spent (public amounts only).

    A named tuple, like :class:`Step`: every charge makes one, under the budget's
    lock, and a tuple is made several times faster than a frozen dataclass.
    """

    epsilon: float = 0.0  # sum of the releases' epsilons
    delta: float = 0.0  # sum of the releases' deltas
    gauss_rho: float = 0.0  # sum of the rho of the releases charged with one
    rho: float = 0.0  # "zcdp" accounting: the total rho charged
    spent_epsilon: float = 0.0  # what `spent.epsilon` reports


class Step(NamedTuple):
    """A budget's state after a release it is asked to admit."""

    state: Spent
    rho: float  # the release's rho for the ledger (NaN: none)
    over: bool  # the budget refuses the release
    approximate: bool  # refused: a delta without a rho in "zcdp" accounting


def check_amount(name: str, value: float, *, allow_zero: bool) -> float:
    """``value`` as a float, if it is a valid amount of ``name``; else raise.

    Parameters
    ----------
    name : str
        ``"epsilon"``, ``"delta"`` or ``"rho"``, for the message.
    value : float
        The amount given.
    allow_zero : bool
        Whether 0 is valid (a delta) or the amount must be positive.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If ``value`` is not finite, or negative, or zero where zero is not allowed.
    """
    number = float(value)
    ok = math.isfinite(number) and (number >= 0 if allow_zero else number > 0)
    if not ok:
        need = "a finite number >= 0" if allow_zero else "a positive finite number"
        raise ValueError(f"{name} must be {need}; got {value!r}")
    return number


def ledger_row(
    entry: dict[str, Any],
    *,
    time: float,
    epsilon: float,
    delta: float,
    rho: float,
    charged_epsilon: float,
    label: str | None,
) -> dict[str, Any]:
    """One ledger row: the fixed columns in order, then the entry's other details.

    Parameters
    ----------
    entry : dict
        The release's entry (``statistic``, ``columns``, ``mechanism``, the grouping
        and privacy-unit fields of :data:`LEDGER_DEFAULTS`, any details).
    time : float
        When it was charged (seconds since the epoch).
    epsilon, delta : float
        The release's own (epsilon, delta).
    rho : float
        The rho charged or recorded (NaN: none).
    charged_epsilon : float
        By how much the release raised the budget's ``spent.epsilon``.
    label : str or None
        The label of the budget object that charged it.

    Returns
    -------
    dict
        ``columns`` and ``groups`` as tuples.
    """
    row: dict[str, Any] = {"time": time}
    for key in LEDGER_COLUMNS[1:]:
        row[key] = entry.get(key, LEDGER_DEFAULTS.get(key))
    row.update(epsilon=epsilon, delta=delta, rho=rho, charged_epsilon=charged_epsilon, label=label)
    row["columns"] = _as_tuple(row["columns"])
    row["groups"] = _as_tuple(row["groups"])
    for key, value in entry.items():  # the details, after the fixed columns
        row.setdefault(key, value)
    return row


def _as_tuple(value: Any) -> tuple[Any, ...]:
    """Column names as a tuple (one name, a str, is one column; None is none)."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


def ledger_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The ledger's DataFrame: the fixed columns, then every detail met in ``rows``.

    Parameters
    ----------
    rows : list of dict
        Rows made by :func:`ledger_row` (or read back from a store), oldest first.

    Returns
    -------
    pandas.DataFrame
        ``time`` as UTC timestamps; empty with the fixed columns if ``rows`` is.
    """
    columns = list(LEDGER_COLUMNS)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return pd.DataFrame(columns=columns)
    frame["time"] = pd.to_datetime(frame["time"], unit="s", utc=True)
    for c in _OBJECT_COLUMNS:  # None stays None (not NaN), tuples stay tuples
        frame[c] = pd.Series([r.get(c) for r in rows], index=frame.index, dtype=object)
    extra = [c for c in frame.columns if c not in columns]
    return frame[columns + extra]
