"""Exceptions raised by pandas-dp.

Every exception subclasses both :class:`PandasDPError` (so one ``except`` catches
all of ours) and the builtin that describes the failure (so code that already
catches ``ValueError`` or ``RuntimeError`` keeps working).

None of these is ever raised because of a value in the data: they depend only on
the call's arguments and on what was declared public (bounds, categories, ``n``).
"""

from __future__ import annotations

__all__ = [
    "BudgetExceededError",
    "InvalidBoundsError",
    "MissingBoundsError",
    "PandasDPError",
]


class PandasDPError(Exception):
    """Base class of every pandas-dp exception."""


class MissingBoundsError(PandasDPError, KeyError):
    """A column has no declared public bounds (or categories).

    Bounds must come from the caller (``bounds=``) or a pandera schema, never from
    the data. The message names every column that lacks them and shows how to
    declare them.

    Parameters
    ----------
    columns : list of str
        Every column that lacks a declaration.
    what : str, default "bounds"
        ``"bounds"``, ``"categories"``, ``"keys"`` (the group-by columns of
        ``groupby``), or ``"bounds or categories"`` when no column at all has a
        declaration (``describe``).
    note : str, default ""
        What is declared but not enough (e.g. a lower bound without an upper one);
        it comes first in the message.
    """

    def __init__(self, columns: list[str], *, what: str = "bounds", note: str = "") -> None:
        self.columns = list(columns)
        names = ", ".join(repr(c) for c in self.columns)
        first = self.columns[0] if self.columns else "col"
        bounds_how = (
            f"pass bounds=(lower, upper) (or bounds={{{first!r}: (lower, upper)}}), "
            f"or a pandera schema with pa.Column(float, pa.Check.in_range(lower, upper))"
        )
        categories_how = (
            "pass categories=[...], or a pandera schema with pa.Column(str, "
            "pa.Check.isin([...])) or pa.Column(pd.CategoricalDtype([...])); "
            "categories='dtype' publishes the column's own CategoricalDtype, which is "
            "only valid if that dtype was set from public facts (astype('category') "
            "reads the data)"
        )
        keys_how = (
            f"pass keys=[...] (one column), keys={{{first!r}: [...]}} (a dict column -> "
            f"list, for several columns), keys='private' with delta=1e-6 to select keys "
            f"from the data by partition selection, or a pandera schema (the schema= of the "
            f"aggregation) whose column declares pa.Check.isin([...]) or "
            f"pd.CategoricalDtype([...]). A column's own "
            f"CategoricalDtype is not a declaration (astype('category') reads the data); if "
            f"it was set from public facts, pass keys=list(df[{first!r}].cat.categories)"
        )
        if what == "bounds":
            how = (
                f"{bounds_how} for each of them. Bounds must be public knowledge, not read "
                f"off the data."
            )
        elif what == "keys":
            how = f"{keys_how}. Keys must be public knowledge, not read off the data."
        elif what == "categories":
            how = f"{categories_how}. Categories must be public knowledge, not read off the data."
        else:  # nothing at all is declared
            how = (
                f"declare bounds of the numeric ones ({bounds_how}) or categories of the "
                f"others ({categories_how}). Public facts must be declared, not read off "
                f"the data."
            )
        lead = f"{note}; " if note else ""
        message = f"no public {what} declared for column(s) {names}; {lead}{how}"
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # KeyError would otherwise print the repr of the message
        return self.message


class InvalidBoundsError(PandasDPError, ValueError):
    """Declared bounds are unusable.

    NaN, infinite or non-numeric bounds, ``lower >= upper``, a width ``upper - lower``
    that overflows, or a ``bounds`` key that is not a column of the data.
    """


class BudgetExceededError(PandasDPError, RuntimeError):
    """A release would spend more privacy budget than remains.

    Raised before any data is read; nothing is recorded in the ledger.
    """
