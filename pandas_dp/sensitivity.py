"""The sensitivity table: one row per (statistic, neighbouring relation).

Every release looks its global sensitivity up here and nowhere else. Each row is a
formula of public facts only -- the declared bounds ``[a, b]`` (``R = b - a``) and
the public row count ``n`` -- and each row is proven by a brute-force search over
neighbouring datasets in ``tests/test_sensitivity.py``.

``"substitute"`` is Liu (2019) Definition 1: same ``n``, one record changed.
``"add_remove"`` is Definition 2: one record added or removed, ``n`` the larger
size. The frame's length is treated as public (DESIGN.md).

The table also holds each statistic's public output range (REFERENCE.md §2),
which the output bounding modes clamp or truncate to.

Examples
--------
>>> sensitivity("mean", "substitute", 0.0, 100.0, n=50)
2.0
>>> sensitivity("sum", "add_remove", -3.0, 1.0, n=10)
3.0
>>> output_range("var", 0.0, 1.0, n=4)
(0.0, 0.3333333333333333)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "NEIGHBOURING",
    "PAIR_TABLE",
    "TABLE",
    "Rule",
    "output_range",
    "pair_sensitivity",
    "sensitivity",
    "table_frame",
]

Neighbouring = Literal["substitute", "add_remove"]
NEIGHBOURING: tuple[str, ...] = ("substitute", "add_remove")

Formula = Callable[[float, float, int], float]


@dataclass(frozen=True)
class Rule:
    """One row of the table: the L1 (= L2, scalar) global sensitivity of a statistic."""

    statistic: str
    neighbouring: str
    formula: Formula
    text: str
    min_n: int = 1
    source: str = "Liu 2019, supplementary appendices D-H"


def _r(a: float, b: float) -> float:
    return b - a


def _mag(a: float, b: float) -> float:
    return max(abs(a), abs(b))


_ROWS = [
    # counts: one record moves one count by at most one
    Rule("count", "substitute", lambda a, b, n: 1.0, "1", min_n=0),
    Rule("count", "add_remove", lambda a, b, n: 1.0, "1", min_n=0),
    Rule("len", "substitute", lambda a, b, n: 1.0, "1 (conservative: n is fixed)", min_n=0),
    Rule("len", "add_remove", lambda a, b, n: 1.0, "1", min_n=0),
    # sums of n values on [a, b] (non-nullable: a null is imputed inside the bounds)
    Rule("sum", "substitute", lambda a, b, n: _r(a, b), "R"),
    Rule("sum", "add_remove", lambda a, b, n: _mag(a, b), "max(|a|, |b|)"),
    # sums of a nullable column: a null contributes 0, and may replace a value
    Rule(
        "sum_nullable",
        "substitute",
        lambda a, b, n: max(_r(a, b), _mag(a, b)),
        "max(R, |a|, |b|)",
        source="derived; brute-force tested",
    ),
    Rule(
        "sum_nullable",
        "add_remove",
        lambda a, b, n: _mag(a, b),
        "max(|a|, |b|)",
        source="derived; brute-force tested",
    ),
    # sum of (x - midpoint) over the non-null values of a nullable column
    Rule(
        "centred_sum",
        "substitute",
        lambda a, b, n: _r(a, b),
        "R",
        source="derived; brute-force tested",
    ),
    Rule(
        "centred_sum",
        "add_remove",
        lambda a, b, n: _r(a, b) / 2.0,
        "R / 2",
        source="derived; brute-force tested",
    ),
    # sum of (x - midpoint)^2 over the non-null values of a nullable column
    Rule(
        "centred_sumsq",
        "substitute",
        lambda a, b, n: _r(a, b) ** 2 / 4.0,
        "R^2 / 4",
        source="derived; brute-force tested",
    ),
    Rule(
        "centred_sumsq",
        "add_remove",
        lambda a, b, n: _r(a, b) ** 2 / 4.0,
        "R^2 / 4",
        source="derived; brute-force tested",
    ),
    # mean and variance of n values on [a, b]
    Rule("mean", "substitute", lambda a, b, n: _r(a, b) / n, "R / n"),
    Rule("mean", "add_remove", lambda a, b, n: _r(a, b) / n, "R / n"),
    Rule("var", "substitute", lambda a, b, n: _r(a, b) ** 2 / n, "R^2 / n", min_n=2),
    Rule("var", "add_remove", lambda a, b, n: _r(a, b) ** 2 / n, "R^2 / n", min_n=3),
    # histograms over public buckets: one record sits in one bucket (a, b unused)
    Rule("histogram", "substitute", lambda a, b, n: 2.0, "2 (L1)", min_n=0),
    Rule("histogram", "add_remove", lambda a, b, n: 1.0, "1 (L1)", min_n=0),
    Rule("histogram_l2", "substitute", lambda a, b, n: math.sqrt(2.0), "sqrt(2) (L2)", min_n=0),
    Rule("histogram_l2", "add_remove", lambda a, b, n: 1.0, "1 (L2)", min_n=0),
    # proportions count / n of n rows (a, b unused)
    Rule("proportion", "substitute", lambda a, b, n: 1.0 / n, "1 / n"),
    Rule("proportion", "add_remove", lambda a, b, n: 1.0 / n, "1 / n"),
    Rule("proportions", "substitute", lambda a, b, n: 2.0 / n, "2 / n (L1)"),
    Rule("proportions", "add_remove", lambda a, b, n: 2.0 / n, "2 / n (L1)"),
    Rule(
        "proportions_l2",
        "substitute",
        lambda a, b, n: math.sqrt(2.0) / n,
        "sqrt(2) / n (L2)",
        source="derived; brute-force tested",
    ),
    Rule(
        "proportions_l2",
        "add_remove",
        lambda a, b, n: math.sqrt(2.0) / n,
        "sqrt(2) / n (L2)",
        source="derived; brute-force tested",
    ),
]

#: Statistics of two columns on ``[a1, b1] x [a2, b2]``: ``formula(R1, R2, n)``.
_PAIR_ROWS = [
    Rule("cov", "substitute", lambda r1, r2, n: r1 * r2 / n, "R1 R2 / n", min_n=2),
    Rule("cov", "add_remove", lambda r1, r2, n: r1 * r2 / n, "R1 R2 / n", min_n=3),
    # sum over rows of (x - m1)(y - m2), midpoints m: each product lies in +-R1 R2 / 4
    Rule(
        "centred_product",
        "substitute",
        lambda r1, r2, n: r1 * r2 / 2.0,
        "R1 R2 / 2",
        source="derived; brute-force tested",
    ),
    Rule(
        "centred_product",
        "add_remove",
        lambda r1, r2, n: r1 * r2 / 4.0,
        "R1 R2 / 4",
        source="derived; brute-force tested",
    ),
]

#: ``(statistic, neighbouring) -> Rule`` for statistics of one column: ``formula(a, b, n)``
TABLE: dict[tuple[str, str], Rule] = {(r.statistic, r.neighbouring): r for r in _ROWS}
#: ``(statistic, neighbouring) -> Rule`` for two columns: ``formula(R1, R2, n)``
PAIR_TABLE: dict[tuple[str, str], Rule] = {(r.statistic, r.neighbouring): r for r in _PAIR_ROWS}


def check_neighbouring(neighbouring: str) -> str:
    """Return ``neighbouring`` if it names a relation, else raise ``ValueError``."""
    if neighbouring not in NEIGHBOURING:
        raise ValueError(
            f"neighbouring={neighbouring!r} is not a neighbouring relation; use "
            f"'substitute' (same n, one record changed) or 'add_remove' (one record "
            f"added or removed)"
        )
    return neighbouring


def rule(
    statistic: str,
    neighbouring: str,
    n: int | None = None,
    table: dict[tuple[str, str], Rule] | None = None,
) -> Rule:
    """Look a row of the table up, with a clear error for a missing row or too small ``n``.

    ``n`` below the row's minimum (a variance needs two rows; under add/remove,
    three, so that the smaller neighbour has two) is an error too. ``n`` is public,
    so the error reveals nothing.
    """
    check_neighbouring(neighbouring)
    rows = TABLE if table is None else table
    try:
        r = rows[(statistic, neighbouring)]
    except KeyError:
        known = sorted({s for s, _ in rows})
        raise ValueError(
            f"no sensitivity is known for statistic {statistic!r}; known: {known}"
        ) from None
    if n is not None and n < r.min_n:
        raise ValueError(
            f"{statistic} under neighbouring={neighbouring!r} needs at least {r.min_n} "
            f"rows; the frame has {n}. The row count is public, so this is not a leak."
        )
    return r


def sensitivity(statistic: str, neighbouring: str, lower: float, upper: float, n: int) -> float:
    """Global sensitivity of ``statistic`` under ``neighbouring`` on ``[lower, upper]``.

    Parameters
    ----------
    statistic : str
        A key of :data:`TABLE` (``"count"``, ``"sum"``, ``"mean"``, ``"var"`` ...).
    neighbouring : {"substitute", "add_remove"}
    lower, upper : float
        The declared public bounds of the column.
    n : int
        The public number of rows.

    Raises
    ------
    ValueError
        If the statistic is unknown or ``n`` is below the row's minimum (a variance
        needs two rows; under add/remove, three, so that the smaller neighbour has
        two).
    """
    r = rule(statistic, neighbouring, n)
    return float(r.formula(float(lower), float(upper), n))


def pair_sensitivity(
    statistic: str, neighbouring: str, width1: float, width2: float, n: int
) -> float:
    """Global sensitivity of a two-column statistic (``"cov"``, ``"centred_product"``).

    ``width1`` and ``width2`` are the widths ``R1``, ``R2`` of the declared bounds.

    Examples
    --------
    >>> pair_sensitivity("cov", "substitute", 2.0, 2.0, n=100)
    0.04
    """
    r = rule(statistic, neighbouring, n, PAIR_TABLE)
    return float(r.formula(float(width1), float(width2), n))


def output_range(
    statistic: str,
    lower: float,
    upper: float,
    n: int,
    neighbouring: str = "substitute",
) -> tuple[float, float]:
    """Public range of a statistic's exact value (REFERENCE.md §2).

    Bounding modes clamp or truncate releases to it. For ``"var"`` it is the
    largest sample variance (``ddof=1``) of ``n`` points in ``[lower, upper]``.
    """
    r2 = (upper - lower) ** 2
    if statistic == "mean":
        return (lower, upper)
    if statistic == "sum":
        return (n * lower, n * upper)
    if statistic == "sum_nullable":
        return (n * min(lower, 0.0), n * max(upper, 0.0))
    if statistic == "var":
        if n < 2:
            return (0.0, math.inf)
        top = n * r2 / (4.0 * (n - 1)) if n % 2 == 0 else (n + 1) * r2 / (4.0 * n)
        return (0.0, top)
    if statistic == "var_nullable":  # the non-null count is private and may be 2
        return (0.0, r2 / 2.0)
    if statistic == "count":  # non-null count of a column: at most n when n is fixed
        return (0.0, float(n)) if neighbouring == "substitute" else (0.0, math.inf)
    if statistic == "len":  # the number of rows being released is not public
        return (0.0, math.inf)
    raise ValueError(f"no public output range is known for statistic {statistic!r}")


def table_frame() -> object:
    """The table as a :class:`pandas.DataFrame` (for the docs and notebooks)."""
    import pandas as pd  # local import: this module itself does not depend on pandas

    rows = [
        {
            "statistic": r.statistic,
            "neighbouring": r.neighbouring,
            "sensitivity": r.text,
            "min n": r.min_n,
            "source": r.source,
        }
        for r in [*_ROWS, *_PAIR_ROWS]
    ]
    return pd.DataFrame(rows)
