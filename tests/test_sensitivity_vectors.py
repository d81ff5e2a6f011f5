"""Brute-force proofs of the vector rows and the two-column rows of the sensitivity table.

Rows proven here (the scalar one-column rows are in ``test_sensitivity.py``):

* ``category_counts`` (L1) and ``category_counts_l2`` (L2), both relations: a row
  is a declared category (``"a"``, ``"b"``, ``"c"``), an undeclared value
  (``"z"``) or missing (``None``); the vector is the engine's counts of the
  declared categories, alone and with the "other" and "missing" buckets a release
  may add (every row then sits in exactly one bucket);
* ``proportion_direct``, ``proportions_direct`` (L1), ``proportions_direct_l2``
  (L2): those counts over the public ``n`` rows, under ``substitute`` with the
  changed unit keeping its number of rows;
* ``cross_products`` (``PAIR_TABLE``), both relations, and ``cov_direct``
  (substitute, ``n`` public): a row is a pair of grid values (bounds, midpoint,
  interior, missing); a row with a missing value is left out of the sums
  (listwise deletion) -- with ``n`` public it counts as the midpoint of both.

Units hold 1 to ``k`` rows (``k = 1, 2, 3``; ``k = 1, 2`` for the pairs); every
dataset of at most ``U`` units is enumerated with all its neighbours (one unit
added or removed; one unit's rows replaced). Each statistic is computed by the
engine on the whole dataset (:func:`pandas_dp.engines.category_counts`,
:func:`pandas_dp.engines.products`), so the rounding of the exact accumulation is
included, and exactly (integer counts, rational arithmetic). The largest change
(in the row's norm) must not exceed the table value (math), or the table value
plus the accumulation allowance (engine), and every row here is tight: the math
maximum equals the table value.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest

from pandas_dp import engines
from pandas_dp.plan.plans import Plan
from pandas_dp.plan.sensitivity import (
    NEIGHBOURING,
    PAIR_TABLE,
    TABLE,
    pair_sensitivity,
    sensitivity,
)
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.settings import Settings

CATEGORIES = ("a", "b", "c")
#: declared categories, an undeclared value, a missing value
LEVELS: tuple[Any, ...] = (*CATEGORIES, "z", None)
#: k -> most units in a dataset (categories)
CATEGORY_UNITS = {1: 4, 2: 3, 3: 2}
VECTOR_ROWS = [key for key in TABLE if key[0].startswith(("category_counts", "proportion"))]
NORM = {"L1": 1, "L2": 2}


def test_every_vector_and_pair_row_is_proven() -> None:
    """This file proves every vector row and every row of PAIR_TABLE."""
    assert {s for s, _ in VECTOR_ROWS} == {
        "category_counts",
        "category_counts_l2",
        "proportion_direct",
        "proportions_direct",
        "proportions_direct_l2",
    }
    assert all(
        TABLE[key].norm in ("L1", "L2") for key in VECTOR_ROWS if key[0] != "proportion_direct"
    )
    assert set(PAIR_TABLE) == {
        ("cross_products", "add_remove"),
        ("cross_products", "substitute"),
        ("cov_direct", "substitute"),
    }


# ------------------------------------------------------------------ enumeration


def neighbourhood(
    n_values: int, k: int, max_units: int
) -> tuple[
    list[list[int]], dict[str, tuple[np.ndarray, np.ndarray]], tuple[np.ndarray, np.ndarray]
]:
    """Datasets (rows as value indices) and neighbouring index pairs ``i < j``.

    A unit is a multiset of 1..k values, a dataset a multiset of at most
    ``max_units`` units. ``add_remove``: one unit more; ``substitute``: one unit
    replaced by another (possibly of another size); the third result keeps only
    the substitutions that keep the unit's number of rows (n public).
    """
    units = [
        u
        for size in range(1, k + 1)
        for u in itertools.combinations_with_replacement(range(n_values), size)
    ]
    datasets = [
        d
        for size in range(max_units + 1)
        for d in itertools.combinations_with_replacement(range(len(units)), size)
    ]
    index = {d: i for i, d in enumerate(datasets)}
    added, swapped, same = [], [], []
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
    rows = [[x for u in d for x in units[u]] for d in datasets]

    def arrays(p: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        a = np.array(p, dtype=np.intp).reshape(-1, 2)
        return a[:, 0], a[:, 1]

    return rows, {"add_remove": arrays(added), "substitute": arrays(swapped)}, arrays(same)


def norm_of(diff: np.ndarray, norm: int) -> np.ndarray:
    out: np.ndarray = np.linalg.norm(diff, ord=norm, axis=1)
    return out


# ------------------------------------------------------------------ categories


@cache
def category_world(k: int) -> tuple[list[list[int]], dict[str, Any], np.ndarray, np.ndarray]:
    """Rows, pairs, the engine's bucket vectors and the exact ones (declared, other, missing)."""
    rows, pairs, same = neighbourhood(len(LEVELS), k, CATEGORY_UNITS[k])
    pairs = {**pairs, "same": same}
    engine = np.empty((len(rows), len(CATEGORIES) + 2))
    exact = np.empty_like(engine)
    for i, r in enumerate(rows):
        found = engines.category_counts(pd.Series([LEVELS[x] for x in r], dtype=object), CATEGORIES)
        engine[i] = [*found.counts[0], found.other[0], found.missing[0]]
        exact[i] = [r.count(x) for x in range(len(LEVELS))]  # a, b, c, z (other), None
    return rows, pairs, engine, exact


@pytest.mark.parametrize("k", sorted(CATEGORY_UNITS))
@pytest.mark.parametrize("buckets", ["declared", "with other and missing"])
@pytest.mark.parametrize(
    "key", [r for r in VECTOR_ROWS if r[0].startswith("category_counts")], ids="/".join
)
def test_category_counts_row(key: tuple[str, str], buckets: str, k: int) -> None:
    statistic, relation = key
    _rows, pairs, engine, exact = category_world(k)
    assert np.array_equal(engine, exact)  # counts: the engine is exact, no allowance
    width = len(CATEGORIES) if buckets == "declared" else len(CATEGORIES) + 2
    i, j = pairs[relation]
    change = norm_of(exact[j, :width] - exact[i, :width], NORM[TABLE[key].norm])
    table = sensitivity(statistic, relation, k=k)
    assert table == k * sensitivity(statistic, relation)
    assert change.max() <= table * (1 + 1e-12)
    assert change.max() == pytest.approx(table, rel=1e-12), "the row is not attained"


@pytest.mark.parametrize("k", sorted(CATEGORY_UNITS))
@pytest.mark.parametrize(
    "statistic", ["proportion_direct", "proportions_direct", "proportions_direct_l2"]
)
def test_proportions_direct_row(statistic: str, k: int) -> None:
    """Bucket counts over the public n (every bucket: declared, other, missing)."""
    rows, pairs, engine, _exact = category_world(k)
    i, j = pairs["same"]
    n = np.array([len(rows[x]) for x in i], dtype=float)
    keep = n >= 1
    i, j, n = i[keep], j[keep], n[keep]
    if statistic == "proportion_direct":
        change = np.abs(engine[j, 0] - engine[i, 0]) / n
    else:
        change = norm_of(
            (engine[j] - engine[i]) / n[:, None], NORM[TABLE[(statistic, "substitute")].norm]
        )
    table = np.array([sensitivity(statistic, "substitute", n=int(m), k=k) for m in n])
    assert np.all(change <= table * (1 + 1e-12)), (change / table).max()
    for m in np.unique(n):
        if m >= k:  # a unit of k rows fits in m rows: the row is attained at this n
            at = n == m
            assert change[at].max() == pytest.approx(table[at][0], rel=1e-12), m


def test_categorical_dtype_counts_like_object() -> None:
    """The engine's categorical-codes path gives the same vectors as the hash path."""
    rows, _, engine, _ = category_world(2)
    dtype = pd.CategoricalDtype(["z", "c", "a", "b"])  # other order, an undeclared level
    for i, r in enumerate(rows):
        found = engines.category_counts(pd.Series([LEVELS[x] for x in r], dtype=dtype), CATEGORIES)
        assert [*found.counts[0], found.other[0], found.missing[0]] == list(engine[i])


@pytest.mark.parametrize("relation", NEIGHBOURING)
def test_plan_categories_use_the_table(relation: str) -> None:
    plan = Plan(Settings(epsilon=1.0, neighbouring=relation))
    m = plan.measurements[plan.categories("x", 5)]
    assert m.joint_l1 == sensitivity("category_counts", relation)
    assert m.joint_l2 == sensitivity("category_counts_l2", relation)


def test_category_enumeration_covers_what_it_claims() -> None:
    for k, units in CATEGORY_UNITS.items():
        rows, pairs, _, _ = category_world(k)
        assert max(len(r) for r in rows) == k * units
        i, j = pairs["add_remove"]
        assert {len(rows[y]) - len(rows[x]) for x, y in zip(i, j, strict=True)} == set(
            range(1, k + 1)
        )
        i, j = pairs["same"]
        assert all(len(rows[x]) == len(rows[y]) for x, y in zip(i, j, strict=True))


# ------------------------------------------------------------------ two columns

PAIR_BOUNDS = [
    ((0.0, 1.0), (-3.0, 1.0)),
    ((2.0, 7.0), (-5.0, -1.0)),
    ((-0.3, 0.4), (0.0, 1.0 / 3.0)),  # half-widths off the accumulation grid
]
#: k -> (interior fraction or None, most units in a dataset)
PAIR_SHAPES: dict[int, tuple[float | None, int]] = {1: (0.35, 3), 2: (None, 2)}


def column_grid(a: float, b: float, interior: float | None) -> list[float]:
    mid = a + 0.5 * (b - a)
    return [a, b, mid] + ([a + interior * (b - a)] if interior is not None else [])


def row_grid(
    b1: tuple[float, float], b2: tuple[float, float], interior: float | None
) -> list[tuple[float, float]]:
    """Pairs of grid values, plus rows missing a value (left out of every sum).

    Without an interior value (the larger k) one such row only, to keep the
    enumeration small.
    """
    g1, g2 = column_grid(*b1, interior), column_grid(*b2, interior)
    holes = [(math.nan, b2[1])] + ([(b1[0], math.nan)] if interior is not None else [])
    return [*itertools.product(g1, g2), *holes]


@cache
def pair_world(b1: tuple[float, float], b2: tuple[float, float], k: int) -> dict[str, Any]:
    interior, max_units = PAIR_SHAPES[k]
    values = row_grid(b1, b2, interior)
    rows, pairs, same = neighbourhood(len(values), k, max_units)
    m1, m2 = (Fraction(b1[0]) + Fraction(b1[1])) / 2, (Fraction(b2[0]) + Fraction(b2[1])) / 2
    out: dict[str, Any] = {"rows": rows, "pairs": pairs, "same": same}
    eng = np.full((len(rows), 2), np.nan)
    exact = np.full((len(rows), 2), np.nan)
    for i, r in enumerate(rows):
        xs = [values[x][0] for x in r]
        ys = [values[x][1] for x in r]
        sums = engines.products(
            [pd.Series(xs, dtype="float64"), pd.Series(ys, dtype="float64")],
            [b1[0], b2[0]],
            [b1[1], b2[1]],
        )
        s, p = sums.matrices()
        n = len(r)
        eng[i, 0] = p[0, 1]
        # listwise deletion; the grid's values lie inside the bounds (no clamping)
        done = [
            (Fraction(x) - m1, Fraction(y) - m2)
            for x, y in zip(xs, ys, strict=True)
            if not (math.isnan(x) or math.isnan(y))
        ]
        cross = sum((u * v for u, v in done), Fraction(0))
        exact[i, 0] = float(cross)
        if n >= 2:  # as covariance._Direct.run: n public, a deleted row at the midpoints
            eng[i, 1] = ((p - np.outer(s, s) / n) / (n - 1.0))[0, 1]
            s1, s2 = sum((u for u, _ in done), Fraction(0)), sum((v for _, v in done), Fraction(0))
            exact[i, 1] = float((cross - s1 * s2 / n) / (n - 1))
    out["engine"], out["exact"] = eng, exact
    return out


def _steps(b1: tuple[float, float], b2: tuple[float, float]) -> tuple[float, float, float]:
    h1, h2 = 0.5 * (b1[1] - b1[0]), 0.5 * (b2[1] - b2[0])
    return (
        engines.accumulation_step(h1),
        engines.accumulation_step(h2),
        engines.accumulation_step(h1 * h2),
    )


@pytest.mark.parametrize("k", sorted(PAIR_SHAPES))
@pytest.mark.parametrize("relation", NEIGHBOURING)
@pytest.mark.parametrize("bounds", PAIR_BOUNDS, ids=str)
def test_cross_products_row(bounds: tuple[tuple[float, float], ...], relation: str, k: int) -> None:
    b1, b2 = bounds
    w = pair_world(b1, b2, k)
    i, j = w["pairs"][relation]
    r1, r2 = b1[1] - b1[0], b2[1] - b2[0]
    table = pair_sensitivity("cross_products", relation, r1, r2, k=k)
    assert table == k * pair_sensitivity("cross_products", relation, r1, r2)
    exact = np.abs(w["exact"][j, 0] - w["exact"][i, 0])
    assert exact.max() <= table * (1 + 1e-12)
    assert exact.max() == pytest.approx(table, rel=1e-12), "the row is not attained"
    pq = _steps(b1, b2)[2]
    computed = np.abs(w["engine"][j, 0] - w["engine"][i, 0])
    assert computed.max() <= table + k * pq
    assert computed.max() >= table - k * pq


def cov_allowance(
    b1: tuple[float, float], b2: tuple[float, float], n: np.ndarray, k: int
) -> np.ndarray:
    """How far the engine's rounding may move cov_direct beyond k table values.

    Rounded centred values lie in a box of widths ``R + q``; a rounded product is
    ``ŷ1 ŷ2 + ε`` with ``|ε| <= pq/2 + h1 q2/2 + h2 q1/2 + q1 q2/4``.
    """
    q1, q2, pq = _steps(b1, b2)
    r1, r2 = b1[1] - b1[0], b2[1] - b2[0]
    spread = ((r1 + q1) * (r2 + q2) - r1 * r2) / n
    return k * (spread + (pq + r1 * q2 / 2 + r2 * q1 / 2 + q1 * q2 / 2) / (n - 1))


@pytest.mark.parametrize("k", sorted(PAIR_SHAPES))
@pytest.mark.parametrize("bounds", PAIR_BOUNDS, ids=str)
def test_cov_direct_row(bounds: tuple[tuple[float, float], ...], k: int) -> None:
    """n public rows, one unit's rows changed (n kept): k R1 R2 / n.

    Tight for k = 1 at every n, and for k > 1 where the unit is the whole frame
    (n = k); the search finds at most 0.75 (n = 3) and 0.83 (n = 4) of the table's
    value for k = 2 beyond that.
    """
    b1, b2 = bounds
    w = pair_world(b1, b2, k)
    i, j = w["same"]
    n = np.array([len(w["rows"][x]) for x in i])
    keep = n >= 2
    i, j, n = i[keep], j[keep], n[keep]
    r1, r2 = b1[1] - b1[0], b2[1] - b2[0]
    table = np.array(
        [pair_sensitivity("cov_direct", "substitute", r1, r2, n=int(m), k=k) for m in n]
    )
    exact = np.abs(w["exact"][j, 1] - w["exact"][i, 1])
    assert np.all(exact <= table * (1 + 1e-12)), (exact / table).max()
    computed = np.abs(w["engine"][j, 1] - w["engine"][i, 1])
    slack = cov_allowance(b1, b2, n.astype(float), k)
    assert np.all(computed <= table + slack)
    for m in np.unique(n):
        at = n == m
        if k == 1 or m == k:
            # k = 1: n - 1 rows at (a1, a2), one moved to (b1, b2); n = k: the unit is
            # the whole frame, e.g. {(a1, a2), (b1, b2)} -> {(a1, b2), (b1, a2)} at n = 2
            assert exact[at].max() == pytest.approx(table[at][0], rel=1e-12), m
    if k > 1:  # beyond n = k, group privacy over k single-row changes is not attained
        assert (exact / table)[n > k].max() < 0.9


def test_plan_products_use_the_table_plus_step() -> None:
    """For k = 1 the bound proven above is what the plan calibrates cross-products to."""
    b1, b2 = PAIR_BOUNDS[2]
    for relation in NEIGHBOURING:
        plan = Plan(Settings(epsilon=1.0, neighbouring=relation))
        keys = plan.products([NumericDeclaration("x", *b1), NumericDeclaration("y", *b2)])
        m = plan.measurements[keys["product 0 1"]]
        want = (
            pair_sensitivity("cross_products", relation, b1[1] - b1[0], b2[1] - b2[0])
            + _steps(b1, b2)[2]
        )
        assert m.statistic == "cross_products" and m.sensitivity == want


def test_pair_enumeration_covers_what_it_claims() -> None:
    for k, (interior, units) in PAIR_SHAPES.items():
        w = pair_world(*PAIR_BOUNDS[0], k)
        assert max(len(r) for r in w["rows"]) == k * units
        wide = interior is not None
        assert len(row_grid(*PAIR_BOUNDS[0], interior)) == (3 + wide) ** 2 + 1 + wide


def test_pair_table_errors() -> None:
    with pytest.raises(ValueError, match="no sensitivity is known"):
        pair_sensitivity("centred_sum", "add_remove", 1.0, 1.0)
    with pytest.raises(ValueError, match="substitute"):
        pair_sensitivity("cov_direct", "add_remove", 1.0, 1.0, n=10)
    with pytest.raises(ValueError, match="public row count n"):
        pair_sensitivity("cov_direct", "substitute", 1.0, 1.0)
    with pytest.raises(ValueError, match="contribution bound"):
        pair_sensitivity("cross_products", "substitute", 1.0, 1.0, k=0)
