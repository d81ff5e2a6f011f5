"""Exceptions raised by pandas-dp.

Every exception subclasses both :class:`PandasDPError` (so one ``except`` catches
all of ours) and the builtin that describes the failure (so code that already
catches ``ValueError`` or ``RuntimeError`` keeps working).

None of these is ever raised because of a value in the data: they depend only on
the call's arguments and on what was declared public (bounds, categories, ``n``).
The exceptions are :class:`ComputeError`, which stands in for a lazy engine's
failure while reading the data and says nothing about its cause, and
``OutOfBoundsError``, raised only where the caller asked for it
(``out_of_bounds="raise"``, a check that is not differentially private): it
subclasses pandera's ``SchemaError`` too, so a pandera user's handler catches it.
It is made on first use (``pandas_dp.errors.OutOfBoundsError``), as pandera's
import is slow.
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from typing import Any

__all__ = [
    "BudgetExceededError",
    "BudgetProcessError",
    "BudgetStoreError",
    "ComputeError",
    "DerivedResultError",
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


class ComputeError(PandasDPError, RuntimeError):
    """Reading or measuring the data failed; the cause is withheld.

    The one exception here that data can cause: a lazy engine (Dask) reads the data
    only when it computes, and a value that does not parse as its column's dtype, a
    partition whose dtypes differ from the frame's meta, or an input file that moved
    can make that compute fail. The original error's message may quote a private
    value or name its row, so it is replaced by this one, which names only public
    facts (the release, the columns read and their declared dtypes) and says what to
    fix. The original is not attached (``__cause__`` and ``__context__`` are
    ``None``). When raised after the charge, the charge stands.

    Parameters
    ----------
    message : str
        The content-free message.
    columns : mapping, optional
        The columns the failed computation read, each with its declared (meta) dtype.
    charged : bool, default True
        Whether the release had been charged when the computation failed.
    """

    def __init__(
        self, message: str, *, columns: dict[Hashable, str] | None = None, charged: bool = True
    ) -> None:
        super().__init__(message)
        self.columns = dict(columns or {})
        self.charged = charged


class BudgetExceededError(PandasDPError, RuntimeError):
    """A release would spend more privacy budget than remains.

    Raised before any data is read; nothing is recorded in the ledger.
    """


class BudgetProcessError(PandasDPError, RuntimeError):
    """An in-memory budget was charged from a process other than the one that made it.

    An in-memory :class:`~pandas_dp.PrivacyBudget` lives in the memory of its process.
    A forked child holds a copy of it, and what the child charged to the copy would
    never reach the parent, so the cap would not hold: the charge is refused, before
    any data is read. Budgets shared by several processes are kept in a store
    (``PrivacyBudget(..., store="budget.sqlite", name="survey")``).
    """


class BudgetStoreError(PandasDPError, RuntimeError):
    """A durable budget's store cannot be used; nothing was charged.

    The file is not a budget store (or of an unknown version), it is corrupt, it stayed
    locked by another connection beyond the timeout, or the named budget in it has
    another cap than the one asked for.
    """


class DerivedResultError(PandasDPError, ValueError):
    """A release's metadata was read from an object computed from the release.

    pandas copies ``attrs`` onto the objects it derives (``p * 100``, ``p.loc[...]``,
    ``p.sort_values()`` ...). Such an object no longer holds the released numbers
    under the released labels, so the record's intervals do not describe it:
    ``interval()`` raises this error, and the record's tables say so. An object that
    still holds exactly the release (``p.copy()``, ``p.rename("name")``) keeps a
    working record.
    """


@functools.cache
def _out_of_bounds_error() -> type[Exception]:
    """The class of ``OutOfBoundsError``: ours, a ``ValueError`` and pandera's
    ``SchemaError`` (made once, when first asked for)."""
    from pandera.errors import SchemaError

    class OutOfBoundsError(PandasDPError, ValueError, SchemaError):
        """The data violate their declaration and ``out_of_bounds="raise"`` was asked
        for (after the charge: the check is not differentially private).

        Parameters
        ----------
        message : str
            What was violated and how to fix it.
        schema : pandera.DataFrameSchema
            The schema the data were validated with.
        data : pandas.DataFrame
            The columns validated.
        failure_cases : pandas.DataFrame or None
            pandera's failure cases.
        """

        def __init__(self, message: str, schema: Any, data: Any, failure_cases: Any) -> None:
            SchemaError.__init__(  # type: ignore[no-untyped-call]
                self, schema, data, message, failure_cases=failure_cases
            )

    OutOfBoundsError.__module__ = __name__
    OutOfBoundsError.__qualname__ = "OutOfBoundsError"
    return OutOfBoundsError


def __getattr__(name: str) -> Any:
    if name == "OutOfBoundsError":
        return _out_of_bounds_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
