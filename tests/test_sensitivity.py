"""Brute-force proofs of every row of the sensitivity table (REFERENCE.md §1, §2).

For each row of :data:`pandas_dp.sensitivity.TABLE` and each neighbouring relation,
every dataset of ``n`` records drawn from a grid of values is enumerated, together
with every one of its neighbours:

* ``substitute`` -- same ``n``, one record changed to any other grid value;
* ``add_remove`` -- a dataset of ``n - 1`` records and the same with one grid
  value appended (``n`` is the larger size, Liu 2019 Definition 2).

The grid holds both bounds, the midpoint, three random values inside the bounds
(fixed seed) and a missing value (``NaN``); for the histogram and proportion rows a
record is one of ``K = 3`` categories, an undeclared value or a missing value (the
two-column rows of ``PAIR_TABLE`` are proven in ``test_sensitivity_vectors.py``).
The statistic is computed exactly as the library defines it (``statistics._exact``
on ``backends.moments``): in a non-nullable column a missing value is imputed by
the midpoint; in the nullable variants it contributes nothing.
:func:`test_reference_matches_library` ties the reference functions used here to
the library's own computation.

The largest change over all neighbouring pairs must not exceed the table value, and
must reach it (the row is tight) wherever the table says it is attained.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp import backends
from pandas_dp.declarations import NumericDeclaration
from pandas_dp.sensitivity import NEIGHBOURING, TABLE, output_range, sensitivity
from pandas_dp.statistics import _exact

BOUNDS = [(0.0, 1.0), (-3.0, 1.0), (2.0, 7.0), (-5.0, -1.0)]
N_MAX = 6
REL = 1e-9

# statistics whose table row is attained on the grid; everything is tight except
# ``len`` under ``substitute``: n is fixed, so the true sensitivity is 0 and the
# table's 1 is a deliberate, conservative choice (documented in the row's text).
NOT_TIGHT = {("len", "substitute")}


# ----------------------------------------------------------------------------- reference


K = 3  # categories of the histogram and proportion rows
CATEGORICAL = {"histogram", "histogram_l2", "proportion", "proportions", "proportions_l2"}
# the norm a vector-valued row is stated in
NORM = {"histogram": 1, "histogram_l2": 2, "proportions": 1, "proportions_l2": 2}


def reference(statistic: str, x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The exact statistic of every row of ``x`` (shape ``(datasets, n)``, NaN = missing).

    For the categorical rows a record is a category code ``0..K-1``, ``K`` (an
    undeclared value, in no bucket) or NaN (missing, in no bucket); the result has
    one column per bucket. Proportions are bucket counts over the ``n`` rows.
    """
    if statistic in CATEGORICAL:
        n = x.shape[1]
        counts = np.stack([(x == k).sum(axis=1) for k in range(K)], axis=1).astype(np.float64)
        if statistic.startswith("histogram"):
            return counts
        if statistic == "proportion":
            return counts[:, 0] / n
        return counts / n
    mid = 0.5 * (a + b)
    present = ~np.isnan(x)
    imputed = np.where(present, x, mid)  # non-nullable: a missing value is the midpoint
    n = x.shape[1]
    if statistic == "count":
        return present.sum(axis=1).astype(np.float64)
    if statistic == "len":
        return np.full(x.shape[0], float(n))
    if statistic == "sum":
        return imputed.sum(axis=1)
    if statistic == "sum_nullable":
        return np.where(present, x, 0.0).sum(axis=1)
    if statistic == "centred_sum":
        return np.where(present, x - mid, 0.0).sum(axis=1)
    if statistic == "centred_sumsq":
        return np.where(present, (x - mid) ** 2, 0.0).sum(axis=1)
    if statistic == "mean":
        return imputed.mean(axis=1)
    if statistic == "var":
        return imputed.var(axis=1, ddof=1)
    raise AssertionError(f"no reference for {statistic}")


# smallest dataset on which the statistic is defined (the empty mean/var is not)
DEFINED_FROM = {"mean": 1, "var": 2, "proportion": 1, "proportions": 1, "proportions_l2": 1}


def distance(f: np.ndarray, g: np.ndarray, statistic: str) -> np.ndarray:
    """|f - g| for a scalar statistic, the row's L1 or L2 norm for a vector one."""
    d = np.abs(f - g)
    if d.ndim == 1:
        return d
    return d.sum(axis=1) if NORM[statistic] == 1 else np.sqrt((d**2).sum(axis=1))


def record_values(statistic: str, a: float, b: float) -> np.ndarray:
    if statistic in CATEGORICAL:
        return np.array([*range(K + 1), np.nan], dtype=np.float64)
    return grid(a, b)


def grid(a: float, b: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    inner = rng.uniform(a, b, size=3)
    return np.concatenate([[a, b, 0.5 * (a + b)], inner, [np.nan]])


def datasets(values: np.ndarray, n: int) -> np.ndarray:
    """Every sequence of ``n`` grid values; dataset ``i`` has digits of ``i`` base ``G``.

    The last position is the fastest digit, so appending value ``v`` to dataset ``i``
    of ``n - 1`` records gives dataset ``i * G + v`` of ``n`` records.
    """
    g = values.size
    idx = np.arange(g**n)
    digits = np.stack([(idx // g ** (n - 1 - i)) % g for i in range(n)], axis=1)
    return values[digits].reshape(g**n, n)


def max_change(statistic: str, relation: str, a: float, b: float, n: int) -> float | None:
    """Largest ``|f(X) - f(X')|`` over neighbouring datasets on the grid (None: no pairs)."""
    values = record_values(statistic, a, b)
    g = values.size
    if relation == "substitute":
        if n < DEFINED_FROM.get(statistic, 0):
            return None
        f = reference(statistic, datasets(values, n), a, b)
        idx = np.arange(g**n)
        worst = 0.0
        for i in range(n):
            place = g ** (n - 1 - i)
            digit = (idx // place) % g
            for v in range(g):
                other = idx + (v - digit) * place
                worst = max(worst, float(distance(f, f[other], statistic).max()))
        return worst
    if n - 1 < DEFINED_FROM.get(statistic, 0):
        return None  # the smaller neighbour has no value (e.g. the mean of nothing)
    big = reference(statistic, datasets(values, n), a, b)
    small = reference(statistic, datasets(values, n - 1), a, b) if n > 1 else None
    if small is None:
        small = np.zeros((1, *big.shape[1:]))  # the empty dataset: counts and sums are 0
    worst = 0.0
    for v in range(g):
        appended = big[np.arange(small.shape[0]) * g + v]
        worst = max(worst, float(distance(appended, small, statistic).max()))
    return worst


# ----------------------------------------------------------------------------- the table


def test_every_row_has_a_reference():
    """Each row of the table is covered below, and each has both relations."""
    stats = {s for s, _ in TABLE}
    assert stats == {
        "count",
        "len",
        "sum",
        "sum_nullable",
        "centred_sum",
        "centred_sumsq",
        "mean",
        "var",
        *CATEGORICAL,
    }
    for s in stats:
        for rel in NEIGHBOURING:
            assert (s, rel) in TABLE


@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: f"[{b[0]:g},{b[1]:g}]")
@pytest.mark.parametrize("key", sorted(TABLE), ids=lambda k: f"{k[0]}-{k[1]}")
def test_row_is_an_upper_bound_and_tight(key, bounds):
    """max |f(X) - f(X')| <= table value for every neighbouring pair, with equality."""
    statistic, relation = key
    rule = TABLE[key]
    a, b = bounds
    checked = 0
    for n in range(max(1, rule.min_n), N_MAX + 1):
        table = sensitivity(statistic, relation, a, b, n)
        observed = max_change(statistic, relation, a, b, n)
        if observed is None:
            # mean or proportions under add_remove with n = 1: the smaller neighbour
            # is empty and has no mean, so there is no pair to compare (the releases
            # refuse n = 0)
            assert (relation, n) == ("add_remove", 1) and DEFINED_FROM[statistic] == 1
            continue
        checked += 1
        assert observed <= table * (1 + REL) + 1e-12, (
            f"{statistic}/{relation} on [{a}, {b}] with n={n}: a neighbouring pair "
            f"changes the statistic by {observed}, more than the table's {table}"
        )
        if key in NOT_TIGHT:
            assert observed == 0.0
        else:
            assert observed >= table * (1 - REL), (
                f"{statistic}/{relation} on [{a}, {b}] with n={n}: the table value "
                f"{table} is not attained (largest change {observed})"
            )
    assert checked >= 3


def test_mean_add_remove_direction():
    """Adding a record at b to n - 1 records at a moves the mean by exactly R / n."""
    a, b, n = -3.0, 1.0, 4
    small = np.full((1, n - 1), a)
    big = np.concatenate([small, [[b]]], axis=1)
    change = reference("mean", big, a, b) - reference("mean", small, a, b)
    assert change[0] == pytest.approx(sensitivity("mean", "add_remove", a, b, n), rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    n=st.integers(min_value=3, max_value=12),
    lo=st.floats(-50, 50),
    width=st.floats(0.1, 100),
)
def test_random_real_neighbours_within_table(data, n, lo, width):
    """Off the grid too: random real-valued neighbours never exceed the table."""
    a, b = lo, lo + width
    values = st.floats(a, b, allow_nan=False)
    base = np.array(data.draw(st.lists(values, min_size=n, max_size=n)))
    changed = base.copy()
    changed[data.draw(st.integers(0, n - 1))] = data.draw(values)
    extra = data.draw(values)
    x = np.stack([base, changed])
    for stat in ("sum", "centred_sum", "centred_sumsq", "mean", "var"):
        f = reference(stat, x, a, b)
        assert abs(f[0] - f[1]) <= sensitivity(stat, "substitute", a, b, n) * (1 + REL) + 1e-9
        bigger = np.append(base, extra)[None, :]
        g = reference(stat, bigger, a, b)[0]
        assert abs(g - f[0]) <= sensitivity(stat, "add_remove", a, b, n + 1) * (1 + REL) + 1e-9


@pytest.mark.parametrize("nullable", [False, True])
def test_reference_matches_library(nullable):
    """The reference functions compute what the library computes from its moments."""
    rng = np.random.default_rng(3)
    for a, b in BOUNDS:
        decl = NumericDeclaration("x", a, b, nullable=nullable)
        for n in (2, 3, 7):
            x = rng.uniform(a - 1, b + 1, size=n)  # out-of-range values are clamped
            x[rng.random(n) < 0.3] = np.nan
            clamped = np.clip(x, a, b)[None, :]
            m = backends.moments(pd.Series(x), a, b)
            assert m.count == reference("count", clamped, a, b)[0]
            assert m.rows == reference("len", clamped, a, b)[0]
            assert m.total == pytest.approx(reference("centred_sum", clamped, a, b)[0], abs=1e-9)
            assert m.squares == pytest.approx(
                reference("centred_sumsq", clamped, a, b)[0], abs=1e-9
            )
            total = _exact("sum", decl, m, "direct")[0]
            expect = "sum_nullable" if nullable else "sum"
            assert total == pytest.approx(reference(expect, clamped, a, b)[0], abs=1e-9)
            if not nullable:
                mean = _exact("mean", decl, m, "direct")[0]
                var = _exact("var", decl, m, "direct")[0]
                assert mean == pytest.approx(reference("mean", clamped, a, b)[0], abs=1e-9)
                assert var == pytest.approx(reference("var", clamped, a, b)[0], abs=1e-9)


# ----------------------------------------------------------------------------- data-independence


def test_sensitivity_takes_public_facts_only():
    """The lookup's only inputs are the statistic, the relation, the bounds and n."""
    params = list(inspect.signature(sensitivity).parameters)
    assert params == ["statistic", "neighbouring", "lower", "upper", "n"]
    for rule in TABLE.values():
        assert list(inspect.signature(rule.formula).parameters) == ["a", "b", "n"]


@pytest.mark.parametrize("statistic", ["mean", "var", "sum", "std"])
@pytest.mark.parametrize("nullable", [False, True])
def test_release_sensitivity_does_not_depend_on_data(statistic, nullable):
    """Two very different frames of the same n get the same sensitivity and scale."""
    import pandera.pandas as pa

    rng = np.random.default_rng(11)
    n = 30
    frames = [
        pd.DataFrame({"x": np.zeros(n)}),
        pd.DataFrame({"x": rng.uniform(-10, 10, n)}),
        pd.DataFrame({"x": np.where(rng.random(n) < 0.5, np.nan, 4.0)}),
    ]
    schema = pa.DataFrameSchema(
        {"x": pa.Column(float, pa.Check.in_range(-2.0, 5.0), nullable=nullable)}
    )
    metas = []
    for df in frames:
        for relation in NEIGHBOURING:
            out = getattr(df.dp, statistic)(
                "x", epsilon=1.0, schema=schema, neighbouring=relation, random_state=0
            )
            metas.append((relation, out.attrs["dp"]))
    for relation in NEIGHBOURING:
        same = [m for r, m in metas if r == relation]
        for m in same[1:]:
            pd.testing.assert_series_equal(
                pd.Series(m.sensitivity, dtype=float), pd.Series(same[0].sensitivity, dtype=float)
            )
            pd.testing.assert_series_equal(
                pd.Series(m.scale, dtype=float), pd.Series(same[0].scale, dtype=float)
            )


def test_count_sensitivity_does_not_depend_on_data():
    frames = [
        pd.DataFrame({"a": [1.0] * 10, "b": [np.nan] * 10}),
        pd.DataFrame({"a": [np.nan] * 10, "b": range(10)}),
    ]
    for relation in NEIGHBOURING:
        metas = [
            df.dp.count(epsilon=1.0, neighbouring=relation, random_state=0).attrs["dp"]
            for df in frames
        ]
        pd.testing.assert_series_equal(
            pd.Series(metas[0].sensitivity), pd.Series(metas[1].sensitivity)
        )
        pd.testing.assert_series_equal(pd.Series(metas[0].scale), pd.Series(metas[1].scale))


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("key", sorted(TABLE), ids=lambda k: f"{k[0]}-{k[1]}")
def test_below_min_n_raises(key):
    statistic, relation = key
    rule = TABLE[key]
    for n in range(0, rule.min_n):
        with pytest.raises(ValueError, match="rows"):
            sensitivity(statistic, relation, 0.0, 1.0, n)
    assert math.isfinite(sensitivity(statistic, relation, 0.0, 1.0, max(rule.min_n, 1)))


def test_var_min_n():
    assert TABLE[("var", "substitute")].min_n == 2
    assert TABLE[("var", "add_remove")].min_n == 3
    with pytest.raises(ValueError):
        sensitivity("var", "substitute", 0.0, 1.0, 1)
    with pytest.raises(ValueError):
        sensitivity("var", "add_remove", 0.0, 1.0, 2)


@pytest.mark.parametrize("statistic", ["median", "quantile", "", "Mean"])
def test_unknown_statistic_raises(statistic):
    with pytest.raises(ValueError, match="no sensitivity"):
        sensitivity(statistic, "substitute", 0.0, 1.0, 10)


@pytest.mark.parametrize("relation", ["swap", "add", "Substitute", "", "bounded"])
def test_unknown_relation_raises(relation):
    with pytest.raises(ValueError, match="neighbouring"):
        sensitivity("mean", relation, 0.0, 1.0, 10)


def test_output_range_unknown_statistic_raises():
    with pytest.raises(ValueError):
        output_range("median", 0.0, 1.0, 10)


# ----------------------------------------------------------------------------- output ranges

RANGE_REFERENCE = {
    "mean": "mean",
    "sum": "sum",
    "sum_nullable": "sum_nullable",
    "var": "var",
    "count": "count",
}


def _values_no_nan(a: float, b: float) -> np.ndarray:
    g = grid(a, b)
    return g[~np.isnan(g)]


@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: f"[{b[0]:g},{b[1]:g}]")
@pytest.mark.parametrize("statistic", sorted(RANGE_REFERENCE))
def test_output_range_contains_every_value_and_is_attained(statistic, bounds):
    """Every dataset's exact value lies in the range; both ends are reached.

    The statistics are convex in each record (or linear), so their extremes over the
    box ``[a, b]^n`` sit at vertices, which the grid holds: reaching an end on the
    grid shows the range is the tightest possible.
    """
    a, b = bounds
    start = 2 if statistic == "var" else 1
    for n in range(start, 7):
        values = grid(a, b) if statistic in ("count", "sum_nullable") else _values_no_nan(a, b)
        f = reference(RANGE_REFERENCE[statistic], datasets(values, n), a, b)
        lo, hi = output_range(statistic, a, b, n)
        tol = REL * max(1.0, abs(lo), abs(hi))
        assert f.min() >= lo - tol and f.max() <= hi + tol, (statistic, n, lo, hi)
        assert f.min() == pytest.approx(lo, rel=REL, abs=1e-12), (statistic, n)
        assert f.max() == pytest.approx(hi, rel=REL, abs=1e-12), (statistic, n)


@pytest.mark.parametrize("n", range(2, 10))
def test_var_range_matches_reference_formula(n):
    """REFERENCE.md §2: nR²/(4(n-1)) for even n, (n+1)R²/(4n) for odd n, reached at
    floor(n/2) points on one bound and the rest on the other."""
    a, b = -3.0, 1.0
    r2 = (b - a) ** 2
    expect = n * r2 / (4 * (n - 1)) if n % 2 == 0 else (n + 1) * r2 / (4 * n)
    assert output_range("var", a, b, n) == (0.0, pytest.approx(expect, rel=1e-12))
    split = np.array([a] * (n // 2) + [b] * (n - n // 2))
    assert np.var(split, ddof=1) == pytest.approx(expect, rel=1e-12)
    # and no two-valued split does better
    best = max(np.var([a] * k + [b] * (n - k), ddof=1) for k in range(n + 1))
    assert best == pytest.approx(expect, rel=1e-12)


def test_var_nullable_range():
    """The non-null count may be as small as 2, whose largest variance is R²/2."""
    a, b = 2.0, 7.0
    lo, hi = output_range("var_nullable", a, b, 50)
    assert (lo, hi) == (0.0, pytest.approx((b - a) ** 2 / 2))
    for m in range(2, 7):
        assert output_range("var", a, b, m)[1] <= hi + 1e-12
    assert output_range("var", a, b, 2)[1] == pytest.approx(hi)


def test_count_and_len_ranges():
    assert output_range("count", 0.0, 1.0, 12, "substitute") == (0.0, 12.0)
    assert output_range("count", 0.0, 1.0, 12, "add_remove") == (0.0, math.inf)
    assert output_range("len", 0.0, 1.0, 12, "substitute") == (0.0, math.inf)
