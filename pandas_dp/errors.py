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
    """

    def __init__(self, columns: list[str], *, what: str = "bounds") -> None:
        self.columns = list(columns)
        names = ", ".join(repr(c) for c in self.columns)
        first = self.columns[0] if self.columns else "col"
        if what == "bounds":
            how = (
                f"pass bounds=(lower, upper) (or bounds={{{first!r}: (lower, upper)}}), "
                f"or a pandera schema with pa.Column(float, pa.Check.in_range(lower, upper)) "
                f"for each of them. Bounds must be public knowledge, not read off the data."
            )
        else:
            how = (
                "pass categories=[...], use a pd.CategoricalDtype, or a pandera schema with "
                "pa.Column(str, pa.Check.isin([...])). Categories must be public knowledge, "
                "not read off the data."
            )
        message = f"no public {what} declared for column(s) {names}; {how}"
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:  # KeyError would otherwise print the repr of the message
        return self.message


class InvalidBoundsError(PandasDPError, ValueError):
    """Declared bounds are unusable: NaN, infinite, or not ``lower < upper``."""


class BudgetExceededError(PandasDPError, RuntimeError):
    """A release would spend more privacy budget than remains.

    Raised before any data is read; nothing is recorded in the ledger.
    """
