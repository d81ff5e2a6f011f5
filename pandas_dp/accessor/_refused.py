"""pandas keywords with no private meaning: taken, so that pandas' call reads, and
refused before any budget is charged, with why and what to use instead.

The catalogue's methods (:mod:`~pandas_dp.accessor._methods`) list these keywords
in their signatures with the default ``None``; any other value reaches
:func:`refuse`, first thing in the call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

__all__ = ["REASONS", "refuse"]

#: keyword -> why it has no private meaning, and what to do instead
REASONS: dict[str, str] = {
    "interpolation": "pandas interpolates between the two data values around the "
    "quantile's rank, which reads those values. A private quantile is a point of the "
    "public grid on the declared bounds chosen by its rank, never interpolated "
    "(see the 'Differences from pandas' page, Quantiles). Leave interpolation= out; "
    "bins= sets how fine the grid is",
    "engine": "it chooses how pandas computes the exact answer (numba or cython); a "
    "private release always runs pandas-dp's own engines, which the data's type "
    "chooses (a Dask frame runs on Dask). Leave engine= out",
    "engine_kwargs": "it configures pandas' numba engine, which a private release "
    "does not run. Leave engine_kwargs= out",
}


def refuse(method: str, given: Mapping[str, Any]) -> NoReturn:
    """Raise a :class:`ValueError` naming the first keyword of ``given`` set to
    anything but ``None``, with why it has no private meaning and what to use.

    Parameters
    ----------
    method : str
        The method called, for the message.
    given : mapping
        The refused keywords of the call and their values.

    Raises
    ------
    ValueError
        Always.

    Examples
    --------
    >>> refuse("quantile", {"interpolation": "linear"})
    Traceback (most recent call last):
    ...
    ValueError: quantile(interpolation='linear') has no private meaning: pandas ...
    """
    name, value = next((k, v) for k, v in given.items() if v is not None)
    raise ValueError(
        f"{method}({name}={value!r}) has no private meaning: {REASONS[name]}. Nothing was charged"
    )
