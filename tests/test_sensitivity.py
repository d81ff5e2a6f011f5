"""Brute-force proofs of the one-column rows of the sensitivity table (REFERENCE.md §9, §13).

For every row of :data:`pandas_dp.plan.sensitivity.TABLE` that is a scalar statistic of
one numeric column (the vector rows and the two-column rows of ``PAIR_TABLE`` are
proven in ``test_sensitivity_vectors.py``), under each relation it holds for, and
for contribution bounds ``k = 1, 2, 3``:

* a *unit* (a privacy unit) holds 1 to ``k`` rows; a row is a value of a grid that
  holds both bounds, the midpoint, interior values and a missing value (``NaN``);
* every dataset of at most ``U`` units is enumerated, with every neighbour:
  ``add_remove`` -- one unit added or removed with all its rows; ``substitute`` --
  one unit's rows replaced by any other unit's (same number of units; for the
  direct rows, whose ``n`` is public, the unit keeps its number of rows, so the
  frame keeps its ``n`` rows);
* each sufficient statistic is computed by the engine
  (:func:`pandas_dp.engines.moments`, on the whole dataset, composed as
  ``plan._moment_values`` composes it -- :func:`test_composition_matches_the_plan`
  ties the two), so the rounding of the exact accumulation is included, and also
  in exact rational arithmetic (the "math" value).

The largest change over all neighbouring pairs must not exceed the table value
for the math value, and the table value plus the accumulation allowance
(``k * step``, what ``plan.py`` adds for ``k = 1``) for the engine value. Where the
row is tight the math maximum equals the table value (and the engine maximum is
within the allowance of it). Rows that are not tight, and why, are listed in
:data:`NOT_TIGHT`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import engines
from pandas_dp.errors import InvalidBoundsError
from pandas_dp.plan import measure, recentring
from pandas_dp.plan.plans import Plan
from pandas_dp.plan.sensitivity import (
    NEIGHBOURING,
    PAIR_TABLE,
    TABLE,
    output_range,
    pair_sensitivity,
    rule,
    sensitivity,
)
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.settings import Settings

NAN = math.nan
#: Declared bounds: around 0, positive, negative, and two where the half-width is
#: not a multiple of the accumulation step (so the engine's rounding is exercised).
BOUNDS = [(0.0, 1.0), (-3.0, 1.0), (2.0, 7.0), (-5.0, -1.0), (-0.3, 0.4), (0.0, 1.0 / 3.0)]
INTERIOR = (0.1, 0.35, 0.8)
#: contribution bound k -> (interior grid fractions, most units in a dataset)
SHAPES: dict[int, tuple[tuple[float, ...], int]] = {
    1: (INTERIOR, 4),
    2: (INTERIOR, 2),
    3: (INTERIOR[:1], 2),
}
#: the same bounds, the exhaustive case k = 3 behind `pytest -m slow` (4-15 s each)
K_SLOW_3 = [k if k < 3 else pytest.param(k, marks=pytest.mark.slow) for k in sorted(SHAPES)]
#: the engine's statistics that are rounded on the step of the half-width (1) or of
#: its square (2) or cube (3); the rest are counts
ROUNDED = {"sum": 1, "centred_sum": 1, "centred_squares": 2, "centred_cubes": 3}
DIRECT = ("mean_direct", "var_direct")
ONE_COLUMN = ("count", "rows", "sum", "centred_sum", "centred_squares", "centred_cubes", *DIRECT)
ROWS = [key for key in TABLE if key[0] in ONE_COLUMN]


def _not_tight(statistic: str, relation: str, k: int) -> bool:
    """Rows whose bound is not attained, with the reason."""
    if (statistic, relation) == ("rows", "substitute"):
        # the frame's length is public under substitute: a unit keeps its number of
        # rows when n is fixed (change 0) and may move between 1 and k rows in the
        # wider relation tested here (change k - 1); the table's k is conservative
        return True
    # var_direct for k > 1: k R^2/n is group privacy over k single-row changes, but
    # moving k of n rows changes the variance by at most about k (n - k) R^2/(n (n - 1))
    return statistic == "var_direct" and k > 1


NOT_TIGHT = "rows under substitute (all k); var_direct for k > 1"


def _is_vector_or_pair(statistic: str) -> bool:
    return statistic.startswith(("category_counts", "proportion", "quantile_score"))


def test_every_one_column_row_is_proven() -> None:
    """Every row of the table is proven here, in test_sensitivity_vectors.py or (the
    quantile score) in test_quantile_search.py."""
    mine = {key for key in TABLE if not _is_vector_or_pair(key[0])}
    later = {(s, rel) for s in ("recentred_sum", "bound_sums") for rel in NEIGHBOURING}
    assert mine == set(ROWS) | later
    assert {*ONE_COLUMN, "recentred_sum", "bound_sums"} == {s for s, _ in mine}


# ------------------------------------------------------------------ enumeration


def grid(a: float, b: float, interior: Sequence[float]) -> tuple[float, ...]:
    """Both bounds, the engine's midpoint, interior values, a missing value."""
    mid = a + 0.5 * (b - a)
    return (a, b, mid, *(a + f * (b - a) for f in interior), NAN)


@dataclass
class World:
    """Every dataset of at most ``U`` units over a grid, and its neighbouring pairs."""

    a: float
    b: float
    k: int
    rows: list[list[float]]
    pairs: dict[str, tuple[np.ndarray, np.ndarray]]
    same_rows: tuple[np.ndarray, np.ndarray]
    engine: dict[str, np.ndarray] = field(default_factory=dict)
    math: dict[str, np.ndarray] = field(default_factory=dict)


def enumerate_world(
    values: Sequence[Any], k: int, max_units: int
) -> tuple[
    list[list[Any]], dict[str, tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]
]:
    """Datasets (their rows) and the index pairs of neighbours under each relation.

    A unit is a multiset of 1..k grid values; a dataset is a multiset of units (the
    statistics do not depend on the order of rows, REFERENCE.md §13). Returns the
    rows of each dataset, ``relation -> (i, j)`` with ``i < j``, and the substitute
    pairs whose changed unit keeps its number of rows.
    """
    units = [
        u
        for size in range(1, k + 1)
        for u in itertools.combinations_with_replacement(range(len(values)), size)
    ]
    datasets = [
        d
        for size in range(max_units + 1)
        for d in itertools.combinations_with_replacement(range(len(units)), size)
    ]
    index = {d: i for i, d in enumerate(datasets)}
    added: list[tuple[int, int]] = []
    swapped: list[tuple[int, int]] = []
    same: list[tuple[int, int]] = []
    for i, d in enumerate(datasets):
        if len(d) < max_units:
            added += [(i, index[tuple(sorted((*d, u)))]) for u in range(len(units))]
        for u in set(d):
            rest = list(d)
            rest.remove(u)
            for v in range(len(units)):
                j = index[tuple(sorted((*rest, v)))]
                if i < j:
                    swapped.append((i, j))
                    if len(units[u]) == len(units[v]):
                        same.append((i, j))
    rows = [[values[x] for u in d for x in units[u]] for d in datasets]

    def arrays(p: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        a = np.array(p, dtype=np.intp).reshape(-1, 2)
        return a[:, 0], a[:, 1]

    return rows, {"add_remove": arrays(added), "substitute": arrays(swapped)}, arrays(same)


def engine_values(rows: list[float], a: float, b: float) -> dict[str, Any]:
    """The statistics as the plan computes them, from one engine pass over the rows:
    the engine's exact sums composed in rational arithmetic (``Fraction``)."""
    m = engines.moments(pd.Series(rows, dtype="float64"), a, b, squares=True)
    cubes = engines.power_sums(pd.Series(rows, dtype="float64"), a, b, 3).exact[0]
    mid = Fraction(a) + Fraction(b - a) / 2
    n = len(rows)
    total, squares = m.total_exact[0], m.squares_exact[0]
    out: dict[str, Any] = {
        "count": float(m.count[0]),
        "rows": float(n),
        "centred_sum": total,
        "centred_squares": squares,
        "centred_cubes": cubes,
        "sum": total + mid * int(m.count[0]),
        "mean_direct": NAN,
        "var_direct": NAN,
    }
    if n >= 1:  # n public; a missing value counts as the midpoint (it adds 0 to both sums)
        out["mean_direct"] = mid + total / n
    if n >= 2:
        out["var_direct"] = (squares - total * total / n) / (n - 1)
    return out


def math_values(rows: list[float], a: float, b: float) -> dict[str, float]:
    """The same statistics in exact rational arithmetic (no rounding at all)."""
    fa, fb = Fraction(a), Fraction(b)
    mid = (fa + fb) / 2
    present = [min(max(Fraction(x), fa), fb) for x in rows if not math.isnan(x)]
    centred = [x - mid for x in present]
    n = len(rows)
    out = {
        "count": float(len(present)),
        "rows": float(n),
        "centred_sum": float(sum(centred, Fraction(0))),
        "centred_squares": float(sum((y * y for y in centred), Fraction(0))),
        "centred_cubes": float(sum((y * y * y for y in centred), Fraction(0))),
        "sum": float(sum(present, Fraction(0))),
        "mean_direct": NAN,
        "var_direct": NAN,
    }
    imputed = centred + [Fraction(0)] * (n - len(present))  # missing at the midpoint
    if n >= 1:
        out["mean_direct"] = float(mid + sum(imputed, Fraction(0)) / n)
    if n >= 2:
        mean = sum(imputed, Fraction(0)) / n
        out["var_direct"] = float(sum(((y - mean) ** 2 for y in imputed), Fraction(0)) / (n - 1))
    return out


@cache
def world(a: float, b: float, k: int) -> World:
    interior, max_units = SHAPES[k]
    rows, pairs, same = enumerate_world(grid(a, b, interior), k, max_units)
    w = World(a, b, k, rows, pairs, same)
    eng = [engine_values(r, a, b) for r in rows]
    exact = [math_values(r, a, b) for r in rows]
    for stat in ONE_COLUMN:
        w.engine[stat] = np.array([e[stat] for e in eng])
        w.math[stat] = np.array([e[stat] for e in exact])
    return w


def step(statistic: str, a: float, b: float) -> float:
    """The accumulation step a rounded statistic is computed on (0 for counts)."""
    half = 0.5 * (b - a)
    power = ROUNDED.get(statistic, 0)
    return engines.accumulation_step(half**power) if power else 0.0


def direct_allowance(statistic: str, a: float, b: float, n: np.ndarray, k: int) -> np.ndarray:
    """How far the engine's rounding may move a direct release beyond ``k`` table values.

    Each row's rounded centred value ``ŷ`` lies within ``q/2`` of ``y``, so in an
    interval of width ``R + q``: the mean moves by at most ``k (R + q)/n``. For the
    variance, the rounded square is ``ŷ² + ε`` with ``|ε| <= q2/2 + h q + q²/4``,
    so the variance is the sample variance of the ``ŷ`` (width ``R + q``) plus
    ``Σ ε/(n - 1)``, each of the ``k`` changed rows moving ``ε`` by ``2 |ε|``.
    """
    width = b - a
    q = engines.accumulation_step(0.5 * width)
    if statistic == "mean_direct":
        return k * q / n
    q2 = engines.accumulation_step((0.5 * width) ** 2)
    return k * ((2 * width * q + q * q) / n + (q2 + width * q + q * q / 2) / (n - 1))


# ------------------------------------------------------------------ the proofs


def changes(w: World, values: np.ndarray, pairs: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    i, j = pairs
    out: np.ndarray = np.abs(values[j] - values[i])
    return out


@pytest.mark.parametrize("k", K_SLOW_3)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
@pytest.mark.parametrize("key", [r for r in ROWS if r[0] not in DIRECT], ids="/".join)
def test_sufficient_statistic_row(
    key: tuple[str, str], bounds: tuple[float, float], k: int
) -> None:
    """count, rows, sum, centred_sum, centred_squares, centred_cubes: bound, rounding,
    tightness."""
    statistic, relation = key
    a, b = bounds
    w = world(a, b, k)
    pairs = w.pairs[relation]
    table = sensitivity(statistic, relation, a, b, k=k)
    assert table == k * sensitivity(statistic, relation, a, b)
    exact = changes(w, w.math[statistic], pairs).max()
    assert exact <= table * (1 + 1e-12), f"math change {exact} exceeds the table's {table}"
    allowed = table + k * step(statistic, a, b)
    computed = changes(w, w.engine[statistic], pairs).max()
    assert computed <= allowed, f"engine change {computed} exceeds {allowed}"
    if _not_tight(statistic, relation, k):
        assert exact < table
        return
    assert exact == pytest.approx(table, rel=1e-12), f"the row is not attained: {exact} < {table}"
    assert computed >= table - k * step(statistic, a, b)


@pytest.mark.parametrize("k", K_SLOW_3)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
@pytest.mark.parametrize("statistic", DIRECT)
def test_direct_row(statistic: str, bounds: tuple[float, float], k: int) -> None:
    """Liu's mean and variance with n public: substitute, the changed unit keeps its rows."""
    a, b = bounds
    w = world(a, b, k)
    i, j = w.same_rows
    n = np.array([len(w.rows[x]) for x in i])
    keep = n >= rule(statistic, "substitute", 1_000).min_n
    i, j, n = i[keep], j[keep], n[keep]
    assert len(i) > 0
    table = np.array([sensitivity(statistic, "substitute", a, b, n=int(m), k=k) for m in n])
    exact = np.abs(w.math[statistic][j] - w.math[statistic][i])
    assert np.all(exact <= table * (1 + 1e-12)), (exact / table).max()
    computed = np.abs(w.engine[statistic][j] - w.engine[statistic][i])
    slack = direct_allowance(statistic, a, b, n.astype(float), k)
    assert np.all(computed <= table + slack), (computed - table - slack).max()
    # tight: at every n the search reaches, some pair attains k-unit table value
    for m in np.unique(n):
        at = n == m
        if _not_tight(statistic, "substitute", k):
            assert exact[at].max() < table[at][0]
        elif m >= k:  # a unit of k rows fits in m rows
            assert exact[at].max() == pytest.approx(table[at][0], rel=1e-12), m
            assert computed[at].max() >= table[at][0] - slack[at][0]


def test_var_direct_with_k_rows_reaches_the_k_row_optimum() -> None:
    """Not tight for k > 1, and the search does find k (n - k) R^2 / (n (n - 1)).

    n - k rows at a, k rows moved from a to b (checked at n = 4, k = 2, on [0, 1]:
    2 * 2 / (4 * 3) = 1/3 of R^2, below the table's k R^2 / n = 1/2).
    """
    w = world(0.0, 1.0, 2)
    i, j = w.same_rows
    n = np.array([len(w.rows[x]) for x in i])
    exact = np.abs(w.math["var_direct"][j] - w.math["var_direct"][i])[n == 4]
    assert exact.max() == pytest.approx(1.0 / 3.0, rel=1e-12)
    assert sensitivity("var_direct", "substitute", 0.0, 1.0, n=4, k=2) == 0.5


def test_enumeration_covers_what_it_claims() -> None:
    """The worlds hold units of k rows, both relations and the extreme datasets."""
    for k, (interior, max_units) in SHAPES.items():
        w = world(0.0, 1.0, k)
        lengths = {len(r) for r in w.rows}
        assert max(lengths) == k * max_units and 0 in lengths
        assert [0.0] * k in w.rows and [1.0] * k in w.rows and [NAN] * 0 in w.rows
        for relation in NEIGHBOURING:
            i, j = w.pairs[relation]
            assert len(i) > 0 and np.all(i < j)
        i, j = w.pairs["add_remove"]
        # a neighbour under add_remove has one more unit: 1 to k more rows
        grown = np.array([len(w.rows[y]) - len(w.rows[x]) for x, y in zip(i, j, strict=True)])
        assert set(grown) == set(range(1, k + 1))
        i, j = w.same_rows
        assert all(len(w.rows[x]) == len(w.rows[y]) for x, y in zip(i, j, strict=True))
        assert len(grid(0.0, 1.0, interior)) == 4 + len(interior)


# ------------------------------------------------------------------ ties to the plan


@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
def test_composition_matches_the_plan(bounds: tuple[float, float]) -> None:
    """engine_values composes the engine's sums as measure.exact_values does."""
    a, b = bounds
    decl = NumericDeclaration("x", a, b)
    for rows in world(a, b, 2).rows[::37]:
        if len(rows) < 2:
            continue
        plan = Plan(Settings(epsilon=1.0, neighbouring="substitute", rows=len(rows)))
        keys = plan.moments(decl, ONE_COLUMN[:1] + ONE_COLUMN[2:])
        data = engines.EngineInput(
            columns={"x": pd.Series(rows, dtype="float64")},
            declarations={"x": decl},
            rows=len(rows),
        )
        got = measure.exact_values(plan.measurements.values(), data)
        mine = engine_values(rows, a, b)
        for stat, key in keys.items():
            assert got[key][0] == mine[stat], (stat, rows)


@pytest.mark.parametrize("relation", NEIGHBOURING)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
def test_plan_sensitivity_is_table_plus_step(relation: str, bounds: tuple[float, float]) -> None:
    """For k = 1 the bound proven above is what the plan calibrates its noise to."""
    a, b = bounds
    plan = Plan(Settings(epsilon=1.0, neighbouring=relation, rows=10))
    keys = plan.moments(
        NumericDeclaration("x", a, b), ("count", "sum", "centred_sum", "centred_squares")
    )
    for stat, key in keys.items():
        want = sensitivity(stat, relation, a, b) + step(stat, a, b)
        assert plan.measurements[key].sensitivity == want, stat


@pytest.mark.parametrize("statistic", DIRECT)
def test_plan_direct_sensitivity_covers_the_engine(statistic: str) -> None:
    a, b = -0.3, 0.4
    w = world(a, b, 1)
    i, j = w.same_rows
    n = np.array([len(w.rows[x]) for x in i])
    worst = 0.0
    for m in range(2, int(n.max()) + 1):
        plan = Plan(Settings(epsilon=1.0, neighbouring="substitute", rows=m))
        key = plan.moments(NumericDeclaration("x", a, b), (statistic,))[statistic]
        at = n == m
        change = np.abs(w.engine[statistic][j[at]] - w.engine[statistic][i[at]]).max()
        worst = max(worst, change - plan.measurements[key].sensitivity)
    assert worst <= 0.0


def test_plan_sum_far_from_zero_covers_the_float_composition() -> None:
    a, b = 1e6 + 0.1, 1e6 + 0.8
    w = world(a, b, 1)
    bound = sensitivity("sum", "add_remove", a, b) + step("sum", a, b)
    assert changes(w, w.engine["sum"], w.pairs["add_remove"]).max() <= bound


# ------------------------------------------------------------------ output ranges


def _exact_var(points: Sequence[Fraction], ddof: int) -> Fraction:
    c = len(points)
    mean = sum(points, Fraction(0)) / c
    return sum(((x - mean) ** 2 for x in points), Fraction(0)) / (c - ddof)


@pytest.mark.parametrize("bounds", [(0.0, 1.0), (-3.0, 1.0), (2.0, 7.0)], ids=str)
@pytest.mark.parametrize("ddof", [0, 1, 2, 3, 4])
def test_var_range_contains_every_value_and_is_attained(
    ddof: int, bounds: tuple[float, float]
) -> None:
    """(Q - S²/C)/(C - ddof) over every admissible count C >= ddof + 1 (C >= 1)."""
    a, b = bounds
    lo, hi = output_range("var", a, b, ddof=ddof)
    values = [Fraction(a), Fraction(b), Fraction(a + b) / 2, Fraction(a) + Fraction(b - a) / 5]
    seen = [
        _exact_var(points, ddof)
        for c in range(max(ddof + 1, 1), ddof + 5)
        for points in itertools.combinations_with_replacement(values, c)
    ]
    assert lo == min(seen) == 0
    assert max(seen) <= Fraction(hi) * (1 + Fraction(1, 10**12))
    assert float(max(seen)) == pytest.approx(hi, rel=1e-12), "the range is not attained"


@pytest.mark.parametrize(("n", "ddof"), [(n, d) for n in (2, 3, 4, 5) for d in (0, 1, 2) if d < n])
def test_var_direct_range_contains_every_value_and_is_attained(n: int, ddof: int) -> None:
    """n public rows, a missing value at the midpoint: the largest variance of n points."""
    a, b = -3.0, 1.0
    lo, hi = output_range("var_direct", a, b, n, ddof=ddof)
    values = [Fraction(a), Fraction(b), Fraction(a + b) / 2, Fraction(1, 4)]
    seen = [_exact_var(p, ddof) for p in itertools.combinations_with_replacement(values, n)]
    assert lo == min(seen) == 0
    assert float(max(seen)) == pytest.approx(hi, rel=1e-12)
    assert max(seen) <= Fraction(hi) * (1 + Fraction(1, 10**12))


@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
def test_one_column_ranges_contain_every_value_and_are_attained(
    bounds: tuple[float, float],
) -> None:
    """mean, count, rows, sum (n private and public) over the k = 1 world."""
    a, b = bounds
    w = world(a, b, 1)
    n = np.array([len(r) for r in w.rows])
    checks: list[tuple[str, np.ndarray, Callable[[int], tuple[float, float]]]] = [
        ("count", w.math["count"], lambda m: output_range("count", a, b, m)),
        ("sum", w.math["sum"], lambda m: output_range("sum", a, b, m)),
        ("mean_direct", w.math["mean_direct"], lambda m: output_range("mean_direct", a, b, m)),
    ]
    for name, values, public in checks:
        for m in range(1, int(n.max()) + 1):
            v = values[n == m]
            lo, hi = public(m)
            assert lo <= v.min() and v.max() <= hi, name
            assert v.min() == pytest.approx(lo) and v.max() == pytest.approx(hi), (name, m)
    # rows: the public n itself, inside its range
    assert all(output_range("rows", a, b, m) == (0.0, float(m)) for m in set(n))
    assert np.array_equal(w.math["rows"], n)
    # n private: the ranges may not depend on it, and contain every value
    for name in ("count", "rows", "sum"):
        lo, hi = output_range(name, a, b)
        v = w.math[name]
        assert lo <= v.min() and v.max() <= hi, name
        assert (lo == 0.0 or lo == -math.inf) and (hi == 0.0 or hi == math.inf)
    assert output_range("count", a, b) == (0.0, math.inf)
    assert output_range("sum", a, b) == (
        0.0 if a >= 0 else -math.inf,
        0.0 if b <= 0 else math.inf,
    )
    # the mean of the non-missing values (skipna) lies in [a, b], both attained
    present = [[Fraction(x) for x in r if not math.isnan(x)] for r in w.rows]
    means = [sum(r, Fraction(0)) / len(r) for r in present if r]
    assert output_range("mean", a, b) == (a, b)
    assert (Fraction(a), Fraction(b)) == (min(means), max(means))
    assert output_range("proportion", a, b) == output_range("proportion_direct", a, b) == (0.0, 1.0)
    assert output_range("category_counts", a, b, 7) == (0.0, 7.0)


def test_output_range_errors() -> None:
    with pytest.raises(ValueError, match="no public output range"):
        output_range("median", 0.0, 1.0)
    with pytest.raises(ValueError, match="n >= 2"):
        output_range("var_direct", 0.0, 1.0)
    with pytest.raises(ValueError, match="n >= 2"):
        output_range("var_direct", 0.0, 1.0, 1)


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize("relation", NEIGHBOURING)
@pytest.mark.parametrize("statistic", ["median", "mean", "var", "histogram", "len", ""])
def test_unknown_statistic_raises(statistic: str, relation: str) -> None:
    with pytest.raises(ValueError, match="no sensitivity is known") as info:
        sensitivity(statistic, relation, 0.0, 1.0)
    assert "known:" in str(info.value) and "centred_sum" in str(info.value)
    with pytest.raises(ValueError, match="no sensitivity is known"):
        pair_sensitivity(statistic, relation, 1.0, 1.0)


@pytest.mark.parametrize("relation", ["Def 1", "add-remove", "replace", ""])
def test_unknown_relation_raises(relation: str) -> None:
    with pytest.raises(ValueError, match="not a neighbouring relation") as info:
        sensitivity("count", relation)
    assert "'add_remove'" in str(info.value) and "'substitute'" in str(info.value)


DIRECT_ROWS = sorted({s for (s, _), r in {**TABLE, **PAIR_TABLE}.items() if r.public_n})


def test_direct_rows_are_the_public_n_rows() -> None:
    assert (
        sorted(
            [
                "mean_direct",
                "var_direct",
                "proportion_direct",
                "proportions_direct",
                "proportions_direct_l2",
                "cov_direct",
            ]
        )
        == DIRECT_ROWS
    )
    for s in DIRECT_ROWS:
        table = PAIR_TABLE if s == "cov_direct" else TABLE
        assert (s, "add_remove") not in table and (s, "substitute") in table


@pytest.mark.parametrize("statistic", DIRECT_ROWS)
def test_direct_rows_under_add_remove_raise(statistic: str) -> None:
    look = pair_sensitivity if statistic == "cov_direct" else sensitivity
    with pytest.raises(ValueError, match="substitute") as info:
        look(statistic, "add_remove", 1.0, 2.0, n=100)
    assert "private" in str(info.value)


@pytest.mark.parametrize("statistic", DIRECT_ROWS)
def test_direct_rows_need_a_large_enough_n(statistic: str) -> None:
    pair = statistic == "cov_direct"
    look = pair_sensitivity if pair else sensitivity
    args = (1.0, 2.0) if pair else (0.0, 1.0)  # widths of two columns, or bounds
    with pytest.raises(ValueError, match="public row count n"):
        look(statistic, "substitute", *args)
    table = PAIR_TABLE if pair else TABLE
    least = table[(statistic, "substitute")].min_n
    with pytest.raises(ValueError, match=f"at least {least} rows"):
        look(statistic, "substitute", *args, n=least - 1)
    assert look(statistic, "substitute", *args, n=least) > 0


@pytest.mark.parametrize(
    ("statistic", "relation", "bounds"),
    [
        ("centred_sum", "add_remove", (-1e308, 1e308)),
        ("centred_sum", "substitute", (-1e308, 1e308)),
        ("sum", "substitute", (-1e308, 1e308)),
        ("centred_squares", "add_remove", (-1e308, 1e308)),
        ("centred_squares", "substitute", (-1e200, 1e200)),
        ("mean_direct", "substitute", (-1e308, 1e308)),
        ("var_direct", "substitute", (-1e200, 1e200)),
    ],
)
def test_non_finite_sensitivity_raises(
    statistic: str, relation: str, bounds: tuple[float, float]
) -> None:
    with pytest.raises(InvalidBoundsError, match="too wide"):
        sensitivity(statistic, relation, *bounds, n=10)


def test_non_finite_after_k_raises() -> None:
    """max(|a|, |b|) is finite at 1e308; twice it is not."""
    assert sensitivity("sum", "add_remove", -1e308, 1e308) == 1e308
    with pytest.raises(InvalidBoundsError, match="too wide"):
        sensitivity("sum", "add_remove", -1e308, 1e308, k=2)
    with pytest.raises(InvalidBoundsError, match="too wide"):
        pair_sensitivity("cross_products", "substitute", 1e200, 1e200)
    assert issubclass(InvalidBoundsError, ValueError)


@pytest.mark.parametrize("k", [0, -1, 1.5, 2.0, True, "2", None])
def test_bad_contribution_bound_raises(k: Any) -> None:
    with pytest.raises(ValueError, match="contribution bound") as info:
        sensitivity("count", "add_remove", k=k)
    assert repr(k) in str(info.value)
    with pytest.raises(ValueError, match="contribution bound"):
        pair_sensitivity("cross_products", "add_remove", 1.0, 1.0, k=k)


# ------------------------------------------------------------------ the recentred sum


def centres(a: float, b: float) -> list[float]:
    """Centres a second stage may pick: both bounds, the midpoint, interior points and
    floats that are not on any grid of the bounds."""
    return [a, b, a + 0.5 * (b - a), *(a + f * (b - a) for f in (0.01, 0.3, 0.77, 0.999))]


@pytest.mark.parametrize("k", K_SLOW_3)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
@pytest.mark.parametrize("relation", NEIGHBOURING)
def test_recentred_sum_row(relation: str, bounds: tuple[float, float], k: int) -> None:
    """``Σ (x - c) / h(c)`` about any centre ``c`` of the bounds: within the table's
    value (math), within the plan's sensitivity (engine: the centred sum's rounding,
    composed as :func:`pandas_dp.plan.recentring.recentred_values` composes it), and attained:
    under add_remove for every centre, under substitute at the midpoint."""
    a, b = bounds
    w = world(a, b, k)
    pairs = w.pairs[relation]
    table = sensitivity("recentred_sum", relation, a, b, k=k)
    assert table == k * sensitivity("recentred_sum", relation, a, b)
    plan = Plan(Settings(epsilon=1.0, neighbouring=relation))
    keys = plan.moments(NumericDeclaration("x", a, b), ("count", "centred_sum", "recentred_sum"))
    planned = k * plan.measurements[keys["recentred_sum"]].sensitivity  # k = 1, times k
    fa, fb = Fraction(a), Fraction(b)
    mid = fa + Fraction(b - a) / 2
    count, total = w.engine["count"], w.engine["centred_sum"]
    for c in centres(a, b):
        fc = Fraction(c)
        h = max(fc - fa, fb - fc)
        engine = np.array(
            [(t - (fc - mid) * int(n)) / h for n, t in zip(count, total, strict=True)]
        )
        maths = np.array(
            [
                sum(
                    (min(max(Fraction(x), fa), fb) - fc for x in r if not math.isnan(x)),
                    Fraction(0),
                )
                / h
                for r in w.rows
            ]
        )
        exact = float(changes(w, maths, pairs).max())
        computed = float(changes(w, engine, pairs).max())
        assert exact <= table * (1 + 1e-12), (c, exact, table)
        assert computed <= planned, (c, computed, planned)
        if relation == "add_remove" or c == a + 0.5 * (b - a):
            assert exact == pytest.approx(table, rel=1e-12), (c, exact, table)
        else:
            assert exact < table


def test_recentred_values_is_the_formula_proven_above() -> None:
    """:func:`pandas_dp.plan.recentring.recentred_values` centres on the released mean, by
    :func:`pandas_dp.stats.estimators.recentre`, in exact arithmetic."""
    from pandas_dp.stats import estimators as est

    a, b = -3.0, 1.0
    plan = Plan(Settings(epsilon=1.0))
    keys = plan.moments(NumericDeclaration("x", a, b), ("count", "centred_sum", "recentred_sum"))
    m = plan.measurements[keys["recentred_sum"]]
    rows = [-3.0, 0.25, 1.0, NAN, 0.5]
    e = engine_values(rows, a, b)
    exact = {
        keys["count"]: np.array([e["count"]]),
        keys["centred_sum"]: np.array([e["centred_sum"]], dtype=object),
    }
    released = {keys["count"]: np.array([4.0]), keys["centred_sum"]: np.array([-2.5])}
    got = recentring.recentred_values(m.source, exact, released, (2.0, 0.5))[0]
    c = Fraction(est.recentre(4.0, -2.5, (2.0, 0.5), a, b))
    delta = -2.5 / 4
    se = math.sqrt(0.5 + delta * delta * 2.0) / 4
    assert c == Fraction(-1.0 - (abs(delta) - est.SHRINK * se))
    h = max(c - Fraction(a), Fraction(b) - c)
    want = sum((Fraction(x) - c for x in rows if not math.isnan(x)), Fraction(0)) / h
    assert got == want


# ------------------------------------------------------------------ the bound sums


def bound_sums(rows: list[float], a: float, b: float) -> tuple[Fraction, Fraction]:
    """``(Σ (x - a), Σ (b - x))`` of the clamped non-missing values, exactly."""
    fa, fb = Fraction(a), Fraction(b)
    present = [min(max(Fraction(x), fa), fb) for x in rows if not math.isnan(x)]
    return sum((x - fa for x in present), Fraction(0)), sum((fb - x for x in present), Fraction(0))


@pytest.mark.parametrize("k", K_SLOW_3)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
@pytest.mark.parametrize("relation", NEIGHBOURING)
def test_bound_sums_row(relation: str, bounds: tuple[float, float], k: int) -> None:
    """The pair ``(Σ (x - a), Σ (b - x))``, L1 norm of its change: within the table's
    value and attained (math), and within the table's value plus two accumulation
    steps per row when composed from the engine's count ``N`` and centred sum ``S``
    as ``(S + N (m - a), N (b - m) - S)`` (``m`` the engine's midpoint): a rounded
    centred value overshoots the bounds by at most a step's half."""
    a, b = bounds
    w = world(a, b, k)
    i, j = w.pairs[relation]
    table = sensitivity("bound_sums", relation, a, b, k=k)
    assert table == k * sensitivity("bound_sums", relation, a, b)
    maths = np.array([bound_sums(r, a, b) for r in w.rows], dtype=object)
    exact = float(np.max(np.abs(maths[j] - maths[i]).sum(axis=1)))
    assert exact <= table * (1 + 1e-12), (exact, table)
    assert exact == pytest.approx(table, rel=1e-12), (exact, table)
    mid = Fraction(a) + Fraction(b - a) / 2
    below, above = mid - Fraction(a), Fraction(b) - mid
    engine = np.array(
        [
            (t + int(n) * below, int(n) * above - t)
            for n, t in zip(w.engine["count"], w.engine["centred_sum"], strict=True)
        ],
        dtype=object,
    )
    computed = float(np.max(np.abs(engine[j] - engine[i]).sum(axis=1)))
    allowed = table + 2 * k * step("centred_sum", a, b)
    assert computed <= allowed, (computed, allowed)


@pytest.mark.parametrize("epsilon", [1e-3, 1.0, 300.0])
@pytest.mark.parametrize("k", K_SLOW_3)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
def test_bound_sums_plan_pays_for_the_grid(bounds: tuple[float, float], k: int, epsilon: float):
    """End to end, the privacy of the pair's release: the engine's pairs of every
    dataset, clamped into the plan's range and rounded to its noise grid as
    :func:`~pandas_dp.noise.bounding.apply_noise_exact` does, move between add/remove
    neighbours by at most ``epsilon`` Laplace scales in L1 -- the noise is
    discrete Laplace of that scale on each entry, so the release is epsilon-DP.
    (Both entries of a pair round: an exact L1 of R would not be enough.)"""
    from pandas_dp.request.settings import Contributions

    a, b = bounds
    w = world(a, b, k)
    i, j = w.pairs["add_remove"]
    unit = Contributions("u", k, 1, k) if k > 1 else Contributions()
    plan = Plan(Settings(epsilon=epsilon, contributions=unit))
    key = plan.moments(NumericDeclaration("x", a, b), ("bound_sums",))["bound_sums"]
    plan.calibrate()
    noise = plan.measurements[key].calibrated
    assert noise.scale.size == 2 and noise.lower[0] == 0.0
    g, scale = Fraction(float(noise.granularity[0])), float(noise.scale[0])
    mid = Fraction(a) + Fraction(b - a) / 2
    below, above = mid - Fraction(a), Fraction(b) - mid

    def grid_units(v: Fraction) -> int:  # clamped at 0, rounded half to even
        return round(max(v, Fraction(0)) / g)

    units = np.array(
        [
            (grid_units(t + int(n) * below), grid_units(int(n) * above - t))
            for n, t in zip(w.engine["count"], w.engine["centred_sum"], strict=True)
        ],
        dtype=object,
    )
    moved = max(abs(x) for x in np.abs(units[j] - units[i]).sum(axis=1))
    assert Fraction(moved) * g <= Fraction(scale) * Fraction(epsilon), (moved, scale)
    # and the plan pays what the proof above allows the engine, plus one grid step
    # for each of the two entries (never just the exact L1)
    proven = sensitivity("bound_sums", "add_remove", a, b, k=k) + 2 * k * step("centred_sum", a, b)
    assert scale * epsilon >= (proven + 2 * float(g)) * (1 - 1e-15)
