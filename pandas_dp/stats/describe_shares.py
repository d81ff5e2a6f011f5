"""Shares of a numeric answer scale in ``describe``: which numeric columns get them.

A numeric column whose schema declares its values with ``pa.Check.isin([1, 2, 3, 4,
5])`` -- a Likert answer, a count of children, a rating -- is described like any
numeric column (count, mean, std, percentiles) *and*, like a categorical column,
with the share of each declared value (rows ``share 1`` ... ``share 5``). The
values are public (declared), so the shares are one histogram over them, the
``proportions`` release; a value outside the set (the data breaking its schema)
is counted in no share, as a categorical column's undeclared value.

The rule (``describe(shares=...)``):

* ``"auto"`` (the default): a numeric column gets shares when its schema declares
  an ``isin`` set of numbers with at most :data:`SHARES_AUTO_MAX` values;
* ``True``: every numeric column with a declared ``isin`` set of numbers, whatever
  its size (a column without one has no public values to share out and gets none;
  if no described column has one, ``True`` raises, before any charge);
* ``False``: no numeric column gets shares (the numeric rows only, as before).

The budget: a column's shares are one histogram that weighs
:data:`SHARES_WEIGHT` numeric columns' measurements -- the same as a categorical
column's histogram (:data:`~pandas_dp.stats.describe.CATEGORICAL_WEIGHT`). A
numeric column with shares so counts as two columns in describe's split: its
numeric rows get what a numeric column gets, its shares what a categorical column
gets, half the column's part each. Measured in ``benchmarks/describe_shares.py``
(``benchmarks/results/describe_shares.md``).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import Any

from pandas_dp.request.category_declarations import CategoricalDeclaration
from pandas_dp.request.declared_columns import NumericDeclaration, isin_values

__all__ = [
    "SHARES_AUTO_MAX",
    "SHARES_DEFAULT",
    "SHARES_WEIGHT",
    "check_shares",
    "declared_values",
    "share_declarations",
]

#: ``shares="auto"``: a numeric column's declared ``isin`` set of at most this many
#: values gets shares (answer scales up to 0..10 and 1..12; a longer set of numbers
#: is more like a measurement than a set of answers).
SHARES_AUTO_MAX = 12
#: The default of ``describe(shares=...)``.
SHARES_DEFAULT = "auto"
#: A numeric column's shares weigh this many numeric columns' measurements of
#: describe's budget (as a categorical column's histogram does).
SHARES_WEIGHT = 1.0


def check_shares(shares: Any) -> bool | str:
    """``"auto"``, ``True`` or ``False``, else a ``ValueError`` (before any charge)."""
    if shares is True or shares is False or (isinstance(shares, str) and shares == "auto"):
        return shares  # type: ignore[no-any-return]
    raise ValueError(
        f'shares must be "auto", True or False; got {shares!r}. "auto" gives the share '
        f"of each declared value to a numeric column declared with an isin set of at "
        f"most {SHARES_AUTO_MAX} numbers; True to every numeric column declared with one; "
        "False to none"
    )


def _is_nan(value: Any) -> bool:
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return False


def declared_values(decl: NumericDeclaration) -> tuple[Any, ...] | None:
    """The public values of a numeric column: its schema's ``isin`` set of numbers.

    Several ``isin`` checks: the values all of them allow, in the first one's order.
    A NaN among them (missing values allowed) is no value. ``None`` when the column
    declares no such set (bounds alone, or not from a schema).
    """
    found: list[Any] | None = None
    for check in getattr(decl.schema_column, "checks", None) or []:
        allowed = isin_values(check)
        if not allowed or any(isinstance(v, bool | str) for v in allowed):
            continue
        values = [v for v in allowed if not _is_nan(v)]
        found = values if found is None else [v for v in found if v in values]
    if not found:
        return None
    return tuple(dict.fromkeys(found))


def share_declarations(
    numeric_decls: Mapping[Hashable, NumericDeclaration], shares: Any
) -> dict[Hashable, CategoricalDeclaration]:
    """The numeric columns that get shares under the rule ``shares``, with their values.

    Parameters
    ----------
    numeric_decls : mapping label -> NumericDeclaration
        The described numeric columns.
    shares : {"auto", True, False}
        The rule (see the module).

    Returns
    -------
    dict label -> CategoricalDeclaration
        Each such column's declared values as categories, in declaration order.

    Raises
    ------
    ValueError
        ``shares`` is not one of the three; or ``True`` and no described numeric
        column declares an ``isin`` set of numbers.
    """
    rule = check_shares(shares)
    if rule is False:
        return {}
    out: dict[Hashable, CategoricalDeclaration] = {}
    for c, d in numeric_decls.items():
        values = declared_values(d)
        if values is None or (rule == "auto" and len(values) > SHARES_AUTO_MAX):
            continue
        out[c] = CategoricalDeclaration(c, values, d.nullable, "isin", d.schema_column)
    if rule is True and not out:
        raise ValueError(
            "shares=True needs a numeric column declared with its values, e.g. "
            "pa.Check.isin([1, 2, 3, 4, 5]) in the schema; none of the described numeric "
            f"columns ({', '.join(map(str, numeric_decls)) or 'none'}) declares one. "
            'Declare the values, or use shares="auto" (the default) or False'
        )
    return out
