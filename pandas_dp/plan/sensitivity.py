"""The sensitivity table: (sufficient statistic, relation, contribution bound) -> Δ.

Every release looks its global sensitivities up here and nowhere else. Each row
is a formula of public facts only -- the declared bounds ``[a, b]`` (``R = b - a``),
the contribution bound ``k`` (rows one privacy unit may hold; 1 when the unit is
the row) and, for Liu's direct releases only, the public row count ``n`` -- and
each row is proven by a brute-force search over neighbouring datasets in
``tests/test_sensitivity.py`` (both relations, units with several rows).

``"add_remove"`` (the default): one unit added or removed; the number of rows is
private. ``"substitute"``: one unit's rows changed; the frame's length is then a
declared public fact (Liu 2019, Definition 1). A missing value is skipped, and
under ``substitute`` a missing value may become present in the neighbour, which
the rows cover (REFERENCE.md §9).

The sufficient statistics (what an engine computes and the plan noises):

* ``count`` -- non-missing values of a column (or rows, ``rows``);
* ``sum`` -- ``Σ x`` of the clamped non-missing values;
* ``centred_sum`` -- ``Σ (x - m)``, ``m = (a + b)/2`` the midpoint;
* ``centred_squares`` -- ``Σ (x - m)²``;
* ``centred_cubes`` -- ``Σ (x - m)³`` (the skewness);
* ``recentred_sum`` -- ``Σ (x - c) / h(c)`` about a centre ``c`` of ``[a, b]`` chosen
  after the data were read (from released values: the mean's second stage),
  ``h(c) = max(c - a, b - c)`` its largest distance to a bound: each row adds a
  value of ``[-1, 1]``, whatever ``c`` is;
* ``bound_sums`` -- the pair ``(Σ (x - a), Σ (b - x))`` (L1 norm of the pair: one
  row adds ``b - a`` to the two sums in all; their sum over ``b - a`` is the count,
  their half-difference the centred sum);
* ``cross_products`` -- ``Σ (x - m_x)(y - m_y)`` over complete rows (two columns);
* ``category_counts`` / ``category_counts_l2`` -- counts over declared categories
  (L1 and L2 norm of the whole vector);
* ``quantile_score`` -- the score of a candidate edge ``c`` for quantile level ``α``
  (given as ``lower``): the distance of the rank ``α N`` from the ranks of the values
  nearest ``c`` (its cell's), trimmed by a public fraction of them at each end (zero
  when ``α N`` falls in the middle of them;
  :func:`pandas_dp.stats.quantiles.search.quantile_scores`): each end moves by at most
  the row's value, so the distance does too;
* Liu's direct releases, valid only where ``n`` is public (``substitute``):
  ``mean_direct``, ``var_direct``, ``proportion_direct``, ``proportions_direct``
  (L1), ``proportions_direct_l2`` and, for two columns, ``cov_direct``.

The table also gives each statistic's public output range (REFERENCE.md §2, §9),
which the output bounding modes clamp or truncate to.

Examples
--------
>>> sensitivity("centred_sum", "add_remove", 0.0, 100.0)
50.0
>>> sensitivity("centred_sum", "add_remove", 0.0, 100.0, k=3)
150.0
>>> sensitivity("mean_direct", "substitute", 0.0, 100.0, n=50)
2.0
>>> output_range("var", 0.0, 2.0, ddof=1)
(0.0, 2.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pandas_dp.errors import InvalidBoundsError
from pandas_dp.request.settings import NEIGHBOURING, check_neighbouring

__all__ = [
    "NEIGHBOURING",
    "PAIR_TABLE",
    "TABLE",
    "GroupedSensitivity",
    "Rule",
    "check_neighbouring",
    "grouped_sensitivity",
    "output_range",
    "pair_sensitivity",
    "rule",
    "sensitivity",
    "table_frame",
]

Neighbouring = Literal["substitute", "add_remove"]

#: ``formula(a, b, n)`` for one column (``n`` only for direct rows), or
#: ``formula(R1, R2, n)`` for two; the contribution bound ``k`` multiplies it.
Formula = Callable[[float, float, int], float]

_DERIVED = "derived (REFERENCE.md §9); brute-force tested"
_LIU = "Liu 2019, supplementary appendices D-H"


@dataclass(frozen=True)
class Rule:
    """One row of the table: a global sensitivity for one contributed row (``k = 1``).

    Attributes
    ----------
    statistic, neighbouring : str
        The key of the row.
    formula : callable
        ``formula(a, b, n)`` (one column) or ``formula(R1, R2, n)`` (two columns).
    text : str
        The formula as written in the docs.
    norm : str
        ``"L1"`` or ``"L2"`` (a vector-valued statistic), else ``"abs"``.
    public_n : bool
        Whether the row needs the frame's length as a public fact (direct releases).
    min_n : int
        Smallest public ``n`` the row holds for (direct releases only).
    source : str
    """

    statistic: str
    neighbouring: str
    formula: Formula
    text: str
    norm: str = "abs"
    public_n: bool = False
    min_n: int = 0
    source: str = _DERIVED


def _r(a: float, b: float) -> float:
    return b - a


def _r2(a: float, b: float) -> float:
    # a product, not ``** 2``: a float power raises OverflowError where this gives inf,
    # which _finite turns into InvalidBoundsError
    r = b - a
    return r * r


def _r3(a: float, b: float) -> float:
    r = b - a  # (products, as in _r2)
    return r * r * r


def _mag(a: float, b: float) -> float:
    return max(abs(a), abs(b))


def _both(statistic: str, formula: Formula, text: str, **kw: object) -> list[Rule]:
    return [Rule(statistic, rel, formula, text, **kw) for rel in NEIGHBOURING]  # type: ignore[arg-type]


def _direct(
    statistic: str, formula: Formula, text: str, *, min_n: int = 1, source: str = _LIU, **kw: str
) -> Rule:
    """A row of a direct release: substitute only, the frame's length ``n`` public."""
    return Rule(
        statistic, "substitute", formula, text, public_n=True, min_n=min_n, source=source, **kw
    )


_ROWS: list[Rule] = [
    # ---- sufficient statistics (private n): one unit adds, removes or changes one row
    *_both("count", lambda a, b, n: 1.0, "1"),
    *_both("rows", lambda a, b, n: 1.0, "1"),
    Rule("sum", "add_remove", lambda a, b, n: _mag(a, b), "max(|a|, |b|)"),
    Rule("sum", "substitute", lambda a, b, n: max(_r(a, b), _mag(a, b)), "max(R, |a|, |b|)"),
    Rule("centred_sum", "add_remove", lambda a, b, n: _r(a, b) / 2.0, "R / 2"),
    Rule("centred_sum", "substitute", lambda a, b, n: _r(a, b), "R"),
    *_both("centred_squares", lambda a, b, n: _r2(a, b) / 4.0, "R^2 / 4"),
    # a row adds (x - m)³ of [-R³/8, R³/8]: that much added or removed, twice it changed
    Rule("centred_cubes", "add_remove", lambda a, b, n: _r3(a, b) / 8.0, "R^3 / 8"),
    Rule("centred_cubes", "substitute", lambda a, b, n: _r3(a, b) / 4.0, "R^3 / 4"),
    # each row adds (x - c) / h(c) of [-(c - a) / h, (b - c) / h], within [-1, 1] and
    # of width R / h <= 2 (c at the midpoint), for any centre c of [a, b]
    Rule("recentred_sum", "add_remove", lambda a, b, n: 1.0, "1"),
    Rule("recentred_sum", "substitute", lambda a, b, n: 2.0, "2"),
    # the sums from the bounds, (Σ (x - a), Σ (b - x)): one row adds b - a to them in
    # all; one row changed moves them by |x' - x| each, in opposite directions
    Rule("bound_sums", "add_remove", lambda a, b, n: _r(a, b), "R (L1)", norm="L1"),
    Rule("bound_sums", "substitute", lambda a, b, n: 2.0 * _r(a, b), "2 R (L1)", norm="L1"),
    Rule("category_counts", "add_remove", lambda a, b, n: 1.0, "1 (L1)", norm="L1"),
    Rule("category_counts", "substitute", lambda a, b, n: 2.0, "2 (L1)", norm="L1"),
    Rule("category_counts_l2", "add_remove", lambda a, b, n: 1.0, "1 (L2)", norm="L2"),
    Rule(
        "category_counts_l2",
        "substitute",
        lambda a, b, n: math.sqrt(2.0),
        "sqrt(2) (L2)",
        norm="L2",
    ),
    # ---- the score of quantile level alpha (passed as ``a``) at a candidate c:
    # max(0, #{x < c} - alpha N, #{x > c} - (1 - alpha) N) (REFERENCE.md §12; each
    # term moves by alpha or 1 - alpha when a row is added or removed)
    Rule("quantile_score", "add_remove", lambda a, b, n: max(a, 1.0 - a), "max(α, 1 - α)"),
    Rule("quantile_score", "substitute", lambda a, b, n: 1.0, "1"),
    # ---- Liu's direct releases: the frame's length n is public (substitute only)
    _direct("mean_direct", lambda a, b, n: _r(a, b) / n, "R / n"),
    _direct("var_direct", lambda a, b, n: _r2(a, b) / n, "R^2 / n", min_n=2),
    _direct("proportion_direct", lambda a, b, n: 1.0 / n, "1 / n"),
    _direct("proportions_direct", lambda a, b, n: 2.0 / n, "2 / n (L1)", norm="L1"),
    _direct(
        "proportions_direct_l2",
        lambda a, b, n: math.sqrt(2.0) / n,
        "sqrt(2) / n (L2)",
        norm="L2",
        source=_DERIVED,
    ),
]

_PAIR_ROWS: list[Rule] = [
    Rule("cross_products", "add_remove", lambda r1, r2, n: r1 * r2 / 4.0, "R1 R2 / 4"),
    Rule("cross_products", "substitute", lambda r1, r2, n: r1 * r2 / 2.0, "R1 R2 / 2"),
    _direct("cov_direct", lambda r1, r2, n: r1 * r2 / n, "R1 R2 / n", min_n=2),
]

#: ``(statistic, neighbouring) -> Rule`` for statistics of one column.
TABLE: dict[tuple[str, str], Rule] = {(r.statistic, r.neighbouring): r for r in _ROWS}
#: ``(statistic, neighbouring) -> Rule`` for statistics of two columns.
PAIR_TABLE: dict[tuple[str, str], Rule] = {(r.statistic, r.neighbouring): r for r in _PAIR_ROWS}


def rule(
    statistic: str,
    neighbouring: str,
    n: int | None = None,
    table: dict[tuple[str, str], Rule] | None = None,
) -> Rule:
    """Look a row up, with a clear error for a missing row, or a missing or too small ``n``.

    ``n`` is public wherever a row needs it, so these errors reveal nothing.
    """
    check_neighbouring(neighbouring)
    rows = TABLE if table is None else table
    try:
        r = rows[(statistic, neighbouring)]
    except KeyError:
        known = sorted({s for s, rel in rows if rel == neighbouring})
        if any(s == statistic for s, _ in rows):
            raise ValueError(
                f"{statistic} needs the frame's length to be public, which only "
                f"neighbouring='substitute' declares; under {neighbouring!r} the length "
                f"is private. Use the default method (noisy sufficient statistics) or "
                f"declare neighbouring='substitute' for a frame whose length is public"
            ) from None
        raise ValueError(
            f"no sensitivity is known for statistic {statistic!r} under "
            f"{neighbouring!r}; known: {known}"
        ) from None
    if r.public_n:
        if n is None:
            raise ValueError(f"{statistic} needs the public row count n")
        if n < r.min_n:
            raise ValueError(
                f"{statistic} needs at least {r.min_n} rows; the frame has {n}. Under "
                f"neighbouring='substitute' the length is public, so this is not a leak"
            )
    return r


def _check_k(k: int, name: str = "the contribution bound", also: str = "") -> int:
    """``k`` if it is a whole number >= 1; ``also`` names what else the message allows."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{name} must be a whole number >= 1{also}; got {k!r}")
    return k


def _finite(value: float, what: str) -> float:
    if not math.isfinite(value) or value <= 0.0:
        raise InvalidBoundsError(
            f"the sensitivity of {what} is {value!r}: the declared bounds are too wide "
            f"for floating point (their width, or its square, overflows). Declare "
            f"narrower bounds, or rescale the column (e.g. to thousands)"
        )
    return value


def sensitivity(
    statistic: str,
    neighbouring: str,
    lower: float = 0.0,
    upper: float = 1.0,
    n: int | None = None,
    *,
    k: int = 1,
) -> float:
    """Global sensitivity of a one-column ``statistic`` under ``neighbouring``.

    Parameters
    ----------
    statistic : str
        A key of :data:`TABLE` (``"count"``, ``"centred_sum"``, ``"mean_direct"`` ...).
    neighbouring : {"add_remove", "substitute"}
    lower, upper : float
        The declared public bounds of the column (unused by counting rows).
    n : int, optional
        The public number of rows (direct releases only).
    k : int, default 1
        The contribution bound: rows one privacy unit may hold.

    Raises
    ------
    ValueError
        Unknown statistic, a direct release without a public ``n``, or a
        non-finite result (:class:`~pandas_dp.InvalidBoundsError`).
    """
    r = rule(statistic, neighbouring, n)
    value = _check_k(k) * float(r.formula(float(lower), float(upper), n or 0))
    return _finite(value, f"{statistic} on [{lower:g}, {upper:g}]")


def pair_sensitivity(
    statistic: str,
    neighbouring: str,
    width1: float,
    width2: float,
    n: int | None = None,
    *,
    k: int = 1,
) -> float:
    """Global sensitivity of a two-column statistic (``"cross_products"``, ``"cov_direct"``).

    ``width1`` and ``width2`` are the widths ``R1``, ``R2`` of the declared bounds.

    Examples
    --------
    >>> pair_sensitivity("cov_direct", "substitute", 2.0, 2.0, n=100)
    0.04
    >>> pair_sensitivity("cross_products", "add_remove", 2.0, 2.0)
    1.0
    """
    r = rule(statistic, neighbouring, n, PAIR_TABLE)
    value = _check_k(k) * float(r.formula(float(width1), float(width2), n or 0))
    return _finite(value, f"{statistic} of widths {width1:g} and {width2:g}")


def _max_squares(r2: float, c: int) -> float:
    """The largest ``Σ (x - x̄)²`` of ``c`` points on a range of width² ``r2``.

    Half the points at each end (``c`` even): ``c R²/4``; one end holding one more
    point (``c`` odd): ``(c² - 1)/c · R²/4``.
    """
    return c * r2 / 4.0 if c % 2 == 0 else (c * c - 1) / c * r2 / 4.0


def _max_sample_var(r2: float, n: int) -> float:
    """The largest ``ddof=1`` sample variance of ``n`` points on a range of width² ``r2``."""
    return n * r2 / (4.0 * (n - 1)) if n % 2 == 0 else (n + 1) * r2 / (4.0 * n)


def output_range(
    statistic: str,
    lower: float,
    upper: float,
    n: int | None = None,
    *,
    ddof: int = 1,
) -> tuple[float, float]:
    """Public range of a statistic's exact value (REFERENCE.md §2 and §9).

    ``n`` is the public row count (``None`` where it is private). Ranges that would
    need ``n`` when it is private are one-sided or unbounded.

    Examples
    --------
    >>> output_range("count", 0.0, 1.0)
    (0.0, inf)
    >>> output_range("var_direct", 0.0, 1.0, n=4)
    (0.0, 0.3333333333333333)
    >>> output_range("var", 0.0, 1.0, ddof=0)
    (0.0, 0.25)
    """
    r2 = _r2(lower, upper)
    if statistic in ("mean", "mean_direct"):
        return (lower, upper)
    if statistic in ("count", "rows", "category_counts"):
        return (0.0, math.inf) if n is None else (0.0, float(n))
    if statistic in ("proportion", "proportion_direct"):
        return (0.0, 1.0)
    if statistic == "skew":  # |G| <= sqrt(N) for N values
        cap = math.inf if n is None else math.sqrt(max(n, 3))
        return (-cap, cap)
    if statistic == "sum":
        if n is not None:
            return (n * min(lower, 0.0), n * max(upper, 0.0))
        return (0.0 if lower >= 0 else -math.inf, 0.0 if upper <= 0 else math.inf)
    if statistic == "var":
        # (Q - S^2/C) / (C - ddof) over the admissible counts C >= ddof + 1. At
        # C = ddof + 1 (C = 2 for ddof = 0: one point has no spread) its largest
        # value is _max_squares(C) / (C - ddof); every larger C gives at most
        # C/(C - ddof) R^2/4 <= (ddof + 2)/2 R^2/4, which is no more. An odd C cannot
        # put half its points at each end: for even ddof >= 2 the range is below
        # (ddof + 1) R^2/4 (brute-force tested in tests/test_sensitivity.py)
        c = max(ddof + 1, 2)
        return (0.0, _max_squares(r2, c) / (c - ddof))
    if statistic == "var_direct":
        if n is None or n < 2:
            raise ValueError("var_direct needs a public n >= 2")
        return (0.0, _max_sample_var(r2, n) * (n - 1) / (n - ddof))
    raise ValueError(f"no public output range is known for statistic {statistic!r}")


def table_frame() -> object:
    """The table as a :class:`pandas.DataFrame` (for the docs and notebooks)."""
    import pandas as pd  # local import: this module itself does not depend on pandas

    rows = [
        {
            "statistic": r.statistic,
            "neighbouring": r.neighbouring,
            "sensitivity (k = 1)": r.text,
            "norm": r.norm,
            "needs public n": r.public_n,
            "source": r.source,
        }
        for r in [*_ROWS, *_PAIR_ROWS]
    ]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- grouped releases


@dataclass(frozen=True)
class GroupedSensitivity:
    """Sensitivities of a vector of per-group statistics (REFERENCE.md §10).

    Attributes
    ----------
    linf : float
        The largest change of one entry (one group; for category counts, one
        (group, category) cell): what each group's noise needs when the groups
        compose in parallel (``max_groups_per_unit = 1``).
    l1 : float
        The L1 norm of the change of the whole vector (Laplace noise on every entry).
    l2 : float
        The L2 norm of the change of the whole vector (Gaussian noise).
    """

    linf: float
    l1: float
    l2: float


#: statistics a grouped release may hold, with their per-row magnitudes
GROUPED: tuple[str, ...] = (
    "count",
    "rows",
    "sum",
    "centred_sum",
    "centred_squares",
    "centred_cubes",
    "recentred_sum",
    "bound_sums",
    "category_counts",
)


def _per_row(statistic: str, lower: float, upper: float) -> tuple[float, float]:
    """``(alpha, beta)``: a row adds a value of ``[-beta, alpha]`` or ``[-alpha, beta]``.

    ``alpha`` is the largest magnitude of one row's contribution (the add/remove row
    of the table for ``k = 1``), ``alpha + beta`` the width of its range, which holds
    0 (a missing value adds 0): the substitute row of the table.
    """
    if statistic == "category_counts":
        return 1.0, 0.0
    if statistic == "bound_sums":  # a row's b - a, split between the group's two sums
        return sensitivity("bound_sums", "add_remove", lower, upper), 0.0
    alpha = sensitivity(statistic, "add_remove", lower, upper)
    width = sensitivity(statistic, "substitute", lower, upper)
    return alpha, max(width - alpha, 0.0)


def _check_bound(value: int | None, name: str, default: int) -> int:
    return default if value is None else _check_k(value, name, " or None")


def grouped_sensitivity(
    statistic: str,
    neighbouring: str,
    lower: float = 0.0,
    upper: float = 1.0,
    *,
    k: int,
    g: int | None = None,
    c: int | None = None,
) -> GroupedSensitivity:
    """Sensitivities of one sufficient statistic computed in every group.

    A unit keeps at most ``k`` rows in all, in at most ``g`` groups, at most ``c``
    in each (:func:`pandas_dp.engines.units.contribution_mask` enforces it). With
    ``C = min(c, k)`` rows in one group, ``K = min(k, g c)`` rows in all, and
    ``L = sqrt(q C² + rem²)`` (``q = min(g, k // C)`` groups filled with ``C`` rows,
    ``rem = min(k - q C, C)`` rows in one more group if ``q < g``: the largest L2
    norm of a unit's row counts per group), and a row's contribution in
    ``[-beta, alpha]`` (``alpha`` its largest magnitude, ``alpha + beta`` its width):

    ============  ==================  =========================  ===============================
    relation      l-inf (one entry)   L1                         L2
    ============  ==================  =========================  ===============================
    add_remove    ``C alpha``         ``K alpha``                ``L alpha``
    substitute    ``C (alpha+beta)``  ``2 K alpha``              ``sqrt(2 (alpha² + beta²)) L``
    ============  ==================  =========================  ===============================

    Under ``substitute`` a unit's rows may move to other groups: the old and the new
    rows then change up to ``2 g`` groups. With ``g = c = k`` (no group bounds) and
    one group this is not the ungrouped table (there, rows cannot move); L1 and
    l-inf are attained when there are at least ``2 g`` groups, L2 when
    ``beta = 0`` or ``beta = alpha`` (else it is an upper bound). Proven by brute
    force in ``tests/test_sensitivity_grouped.py``.

    For ``category_counts`` an entry is a (group, category) cell, each row adds 1 to
    one cell, and the table above holds with ``alpha = 1, beta = 0``. For
    ``bound_sums`` an entry is one of a group's two sums; each row adds ``b - a`` to
    its group's two in all, and the table holds with ``alpha = b - a, beta = 0``.

    Parameters
    ----------
    statistic : str
        One of :data:`GROUPED`: ``"count"``, ``"rows"``, ``"sum"``, ``"centred_sum"``,
        ``"centred_squares"``, ``"centred_cubes"``, ``"recentred_sum"``, ``"bound_sums"``,
        ``"category_counts"``.
    neighbouring : {"add_remove", "substitute"}
    lower, upper : float
        The declared bounds of the column (unused by the counts).
    k : int
        ``max_rows_per_unit`` (1 when the unit is the row).
    g : int, optional
        ``max_groups_per_unit``; ``None`` means ``k`` (no more than ``k`` groups).
    c : int, optional
        ``max_rows_per_group``; ``None`` means ``k``.

    Returns
    -------
    GroupedSensitivity

    Raises
    ------
    ValueError
        An unknown statistic or relation, or a bound that is not a whole number >= 1.

    Examples
    --------
    >>> grouped_sensitivity("count", "add_remove", k=5, g=2, c=2)
    GroupedSensitivity(linf=2.0, l1=4.0, l2=2.8284271247461903)
    >>> grouped_sensitivity("centred_sum", "substitute", 0.0, 10.0, k=1)
    GroupedSensitivity(linf=10.0, l1=10.0, l2=10.0)
    """
    check_neighbouring(neighbouring)
    if statistic not in GROUPED:
        raise ValueError(
            f"no grouped sensitivity is known for statistic {statistic!r}; known: {list(GROUPED)}"
        )
    k = _check_k(k)
    g = _check_bound(g, "g (max_groups_per_unit)", k)
    c = _check_bound(c, "c (max_rows_per_group)", k)
    alpha, beta = _per_row(statistic, float(lower), float(upper))
    big_c = min(c, k)
    big_k = min(k, g * big_c)
    q = min(g, k // big_c)
    rem = min(k - q * big_c, big_c) if q < g else 0
    l2_rows = math.sqrt(q * big_c * big_c + rem * rem)
    if neighbouring == "add_remove":
        out = GroupedSensitivity(big_c * alpha, big_k * alpha, l2_rows * alpha)
    else:
        out = GroupedSensitivity(
            big_c * (alpha + beta),
            2.0 * big_k * alpha,
            math.sqrt(2.0 * (alpha * alpha + beta * beta)) * l2_rows,
        )
    what = f"grouped {statistic} on [{lower:g}, {upper:g}]"
    return GroupedSensitivity(_finite(out.linf, what), _finite(out.l1, what), _finite(out.l2, what))
