"""The checks of ``describe(bounds="auto")`` (:mod:`pandas_dp.stats.describe_auto`).

Which undeclared columns get estimated bounds and which selected categories
(:func:`auto_columns`, from dtypes only), and every refusal that must come before
the first charge: a group-by with private keys, ``out_of_bounds="raise"``, ``delta = 0`` or
``neighbouring="substitute"`` or a zCDP budget with categories to select, and a
budget that cannot pay the whole call.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from pandas_dp.budget.amounts import RELATIVE_TOLERANCE
from pandas_dp.errors import BudgetExceededError
from pandas_dp.request.declared_columns import bool_dtype
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Settings
from pandas_dp.stats import auto_bounds

__all__ = [
    "AutoColumns",
    "auto_columns",
    "check_auto",
    "check_budgets",
    "check_selection_delta",
    "refuse_grouped_auto",
]


@dataclass(frozen=True)
class AutoColumns:
    """What ``bounds="auto"`` will estimate, from labels and dtypes only (public).

    Attributes
    ----------
    numeric : list
        Numeric columns without declared bounds: their bounds are estimated.
    text : list
        Text, object and categorical columns without declared categories: their
        categories are selected.
    other : list
        Columns neither can describe (dates, ...): left out, listed in the metadata.
    """

    numeric: list[Hashable]
    text: list[Hashable]
    other: list[Hashable]


def _is_text(dtype: Any) -> bool:
    """Object, string or categorical dtype: values that can be categories."""
    if isinstance(dtype, pd.CategoricalDtype):
        return True
    return bool(pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype))


def auto_columns(
    columns: Mapping[Hashable, pd.Series], undeclared: Sequence[Hashable]
) -> AutoColumns:
    """Sort the undeclared columns by what ``bounds="auto"`` estimates for them (dtypes only).

    Parameters
    ----------
    columns : mapping label -> Series
        The frame's columns.
    undeclared : sequence of labels
        The columns without declarations.

    Returns
    -------
    AutoColumns

    Examples
    --------
    >>> df = pd.DataFrame({"x": [1.0], "s": ["a"], "t": pd.to_datetime(["2020-01-01"])})
    >>> auto_columns(dict(df.items()), ["x", "s", "t"])
    AutoColumns(numeric=['x'], text=['s'], other=['t'])
    """
    numeric: list[Hashable] = []
    text: list[Hashable] = []
    other: list[Hashable] = []
    for c in undeclared:
        dtype = columns[c].dtype
        if bool_dtype(dtype):  # (declared by its type; never undeclared)
            other.append(c)
        elif _is_text(dtype):
            text.append(c)
        elif pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
            numeric.append(c)
        else:
            other.append(c)
    return AutoColumns(numeric, text, other)


def check_auto(
    auto: AutoColumns,
    settings: Settings,
    grouping: Grouping | None,
    delta: float,
) -> None:
    """The refusals of ``bounds="auto"`` that are not the describe's own (before any charge).

    Parameters
    ----------
    auto : AutoColumns
        What will be estimated.
    settings : Settings
        The call's settings.
    grouping : Grouping or None
        A group-by: its keys must be declared (private keys are refused).
    delta : float
        The call's whole delta (partition selection needs it above 0).

    Raises
    ------
    ValueError
        Saying what was wrong and what to do instead.
    """
    if grouping is not None and grouping.private:
        refuse_grouped_auto()
    auto_bounds.refuse_raise(settings)
    if not auto.text:
        return
    names = [str(c) for c in auto.text]
    if delta <= 0:
        raise ValueError(
            f"describe(bounds='auto') selects the categories of column(s) {names} from the "
            f"data by partition selection, which needs delta > 0 (the probability of "
            f"showing a value only one person holds), e.g. delta=1e-6, below 1/n for n "
            f"people; got delta={delta!r}. Or declare their categories "
            f"(categories={{column: [...]}} or a schema's isin), or leave them out with "
            f"columns=[...]"
        )
    if settings.neighbouring != "add_remove":
        raise ValueError(
            f"describe(bounds='auto') selects the categories of column(s) {names} by "
            f"partition selection, which is defined for neighbouring='add_remove' only; "
            f"declare their categories to use 'substitute'"
        )
    for budget in auto_bounds.budgets_of(settings):
        if budget.accounting != "basic":
            raise ValueError(
                f"describe(bounds='auto') selects the categories of column(s) {names} by "
                f"partition selection, whose delta is outside zCDP, and a budget with "
                f"accounting={budget.accounting!r} cannot record it; use a 'basic' budget, "
                f"or declare their categories"
            )


def check_budgets(settings: Settings, spent: float, delta: float) -> None:
    """Refuse, before the first charge, a call some budget cannot pay in full.

    Parameters
    ----------
    settings : Settings
        The call's settings: all of its epsilon is spent.
    spent : float
        The epsilon of the bounds and category releases (for the message, and for
        :func:`~pandas_dp.stats.auto_bounds.check_total`).
    delta : float
        The call's whole delta: the selections' and the describe's.

    Raises
    ------
    BudgetExceededError
        Naming the budget that cannot pay; nothing was spent.
    """
    if delta == settings.delta:
        auto_bounds.check_total(settings, spent)
        return
    for budget in auto_bounds.budgets_of(settings):  # (basic: zCDP is refused before)
        left = budget.remaining
        slack_e, slack_d = RELATIVE_TOLERANCE * budget.epsilon, RELATIVE_TOLERANCE * budget.delta
        if left.epsilon + slack_e < settings.epsilon or left.delta + slack_d < delta:
            name = f" {budget.name!r}" if budget.name else ""
            raise BudgetExceededError(
                f"describe(bounds='auto') spends epsilon={settings.epsilon:g} and "
                f"delta={delta:g} in all ({spent:g} of epsilon and delta={delta:g} on the "
                f"bounds and categories), but only epsilon={left.epsilon:g}, "
                f"delta={left.delta:g} remain of the budget{name}; nothing was spent. "
                f"Lower epsilon or delta, or declare bounds and categories to spend none "
                f"on them"
            )


def refuse_grouped_auto() -> None:
    """Refuse ``bounds="auto"`` on the describe of a group-by with private keys.

    Its keys' partition selection and delta would come on top of the bounds' and
    categories' own releases (not offered).

    Raises
    ------
    ValueError
        Always, saying what to do instead.
    """
    raise ValueError(
        "describe(bounds='auto') is not offered on a group-by with private keys "
        "(keys='private'): declare the keys (keys=[...] or a schema's isin), or run "
        "df.dp.describe(..., bounds='auto') on the whole frame first and declare the "
        "bounds and categories it released (attrs['dp'].details['auto']['declared']) "
        "for the private-key group-by's describe"
    )


def check_selection_delta(delta: Any) -> float:
    """The ``delta`` of a Laplace ``describe(bounds="auto")``: partition selection's.

    Parameters
    ----------
    delta : any
        The call's ``delta``.

    Returns
    -------
    float
        ``delta``, a number in ``[0, 1)``.

    Raises
    ------
    ValueError
        Not a number in ``[0, 1)``.

    Examples
    --------
    >>> check_selection_delta(1e-6)
    1e-06
    """
    if (
        isinstance(delta, bool)
        or not isinstance(delta, int | float | np.number)
        or not 0.0 <= float(delta) < 1.0
    ):
        raise ValueError(
            f"delta must be a number in [0, 1) (e.g. delta=1e-6, below 1/n for n people); "
            f"got {delta!r}"
        )
    return float(delta)
