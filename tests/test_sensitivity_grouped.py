"""Brute-force proofs of the grouped sensitivities (REFERENCE.md §10).

Every statistic of a grouped release is a sum over rows of a per-row contribution
placed in the row's group (for category counts, in its (group, category) cell).
A neighbouring dataset therefore changes the vector by exactly the added or
removed unit's contribution vector (``add_remove``), or by the new unit's minus
the old unit's (``substitute``), whatever the other units hold. So enumerating
every *unit* allowed by the contribution bounds -- at most ``k`` rows, in at most
``g`` groups, at most ``c`` rows in each -- over a grid of rows (``G`` groups x
both bounds, the midpoint, an interior value and a missing value) enumerates every
change a neighbour can make. The largest l-inf, L1 and L2 norm of the change must
not exceed :func:`grouped_sensitivity`, and must equal it where the docstring
claims attainment (L1 and l-inf when ``2 g <= G``; L2 when ``beta`` is 0 or
``alpha``).
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest

from pandas_dp.plan.sensitivity import GROUPED, grouped_sensitivity, sensitivity

GROUPS = 4
BOUNDS = [(0.0, 1.0), (-3.0, 1.0), (2.0, 7.0), (-5.0, -1.0)]
#: (k, g, c); None means "no such bound"
CAPS = [
    (1, None, None),
    (2, 1, None),
    (2, 2, 1),
    (3, 2, 2),
    (3, 2, 1),
    (3, 1, 3),
    (3, None, 1),
    (3, None, None),
    (3, 2, None),
]
CATEGORIES = 3


def contribution(statistic: str, value: float, a: float, b: float) -> float:
    """One row's contribution to its group's statistic (missing values add 0)."""
    if statistic == "rows":
        return 1.0
    if math.isnan(value):
        return 0.0
    m = a + 0.5 * (b - a)
    return {
        "count": 1.0,
        "sum": value,
        "centred_sum": value - m,
        "centred_squares": (value - m) ** 2,
        "centred_cubes": (value - m) ** 3,
        # about the midpoint, the widest case: about any centre c a row adds a value
        # of [-(c - a), b - c] / max(c - a, b - c), within [-1, 1] (each group its own c)
        "recentred_sum": (value - m) / (0.5 * (b - a)),
    }[statistic]


@cache
def unit_vectors(statistic: str, a: float, b: float, caps: tuple[int, ...]) -> np.ndarray:
    """The contribution vector of every unit the bounds allow (the empty unit too)."""
    k, g, c = caps
    if statistic == "category_counts":
        kinds = [(grp, cat) for grp in range(GROUPS) for cat in range(CATEGORIES)]
        width = GROUPS * CATEGORIES
    elif statistic == "bound_sums":  # each group's (Σ (x - a), Σ (b - x))
        grid = (a, b, a + 0.5 * (b - a), a + 0.3 * (b - a), math.nan)
        kinds = [(grp, v) for grp in range(GROUPS) for v in range(len(grid))]
        width = 2 * GROUPS
    else:
        grid = (a, b, a + 0.5 * (b - a), a + 0.3 * (b - a), math.nan)
        kinds = [(grp, v) for grp in range(GROUPS) for v in range(len(grid))]
        width = GROUPS
    vectors = []
    for size in range(k + 1):
        for unit in itertools.combinations_with_replacement(range(len(kinds)), size):
            groups = [kinds[i][0] for i in unit]
            if len(set(groups)) > g or max((groups.count(x) for x in groups), default=0) > c:
                continue
            vec = np.zeros(width)
            for i in unit:
                grp, j = kinds[i]
                if statistic == "category_counts":
                    vec[grp * CATEGORIES + j] += 1.0
                elif statistic == "bound_sums":
                    if not math.isnan(grid[j]):
                        vec[2 * grp] += grid[j] - a
                        vec[2 * grp + 1] += b - grid[j]
                else:
                    vec[grp] += contribution(statistic, grid[j], a, b)
            vectors.append(vec)
    return np.array(vectors)


def norms(diff: np.ndarray) -> tuple[float, float, float]:
    return (
        float(np.abs(diff).max()),
        float(np.abs(diff).sum(axis=-1).max()),
        float(np.sqrt((diff * diff).sum(axis=-1)).max()),
    )


def caps_of(k: int, g: int | None, c: int | None) -> tuple[int, int, int]:
    return (k, k if g is None else g, k if c is None else c)


@pytest.mark.parametrize("caps", CAPS, ids=str)
@pytest.mark.parametrize("bounds", BOUNDS, ids=str)
@pytest.mark.parametrize("statistic", GROUPED)
def test_grouped_row(statistic: str, bounds: tuple[float, float], caps: tuple[int, ...]) -> None:
    a, b = bounds
    if statistic in ("count", "rows", "category_counts") and bounds != BOUNDS[0]:
        pytest.skip("counts do not depend on the bounds")
    k, g, c = caps
    full = caps_of(k, g, c)
    units = unit_vectors(statistic, a, b, full)
    for relation in ("add_remove", "substitute"):
        want = grouped_sensitivity(statistic, relation, a, b, k=k, g=g, c=c)
        if relation == "add_remove":
            got = norms(units)
        else:
            got = norms(units[:, None, :] - units[None, :, :])
        bounds_ = (want.linf, want.l1, want.l2)
        for name, have, bound in zip(("linf", "l1", "l2"), got, bounds_, strict=True):
            assert have <= bound * (1 + 1e-12), (relation, name, have, bound)
        assert got[0] == pytest.approx(want.linf, rel=1e-12), (relation, "linf")
        # a unit fills `used` groups; under substitute old and new rows in disjoint
        # groups need 2 used <= GROUPS (not so for k = 3, c = 1, g = 3 here)
        big_c = min(full[2], k)
        used = min(full[1], -(-k // big_c))
        room = relation == "add_remove" or 2 * used <= GROUPS or statistic == "category_counts"
        if room:
            assert got[1] == pytest.approx(want.l1, rel=1e-12), (relation, "l1")
        if statistic in ("count", "rows", "category_counts"):
            beta, mag = 0.0, 1.0
        elif statistic == "bound_sums":  # b - a to the pair in all, as a count's 1
            beta, mag = 0.0, b - a
        else:
            ends = [contribution(statistic, v, a, b) for v in (a, b, math.nan)]
            mag = max(abs(e) for e in ends)
            beta = min(-min(ends), max(ends))  # the range holds 0 (a missing value)
        # (a changed row moves its group's bound sums by (d, -d): sqrt(2) |d| in one group)
        pair = statistic == "bound_sums"
        if relation == "add_remove" or (beta == 0.0 and (room or pair)) or math.isclose(beta, mag):
            assert got[2] == pytest.approx(want.l2, rel=1e-12), (relation, "l2")
        else:
            assert got[2] < want.l2


def test_bounds_default_to_k_and_match_the_table() -> None:
    """g = c = k (no bounds) under add/remove: every norm is k times one row's."""
    for statistic in ("count", "centred_sum", "sum", "centred_squares", "centred_cubes"):
        got = grouped_sensitivity(statistic, "add_remove", -3.0, 1.0, k=4)
        one = sensitivity(statistic, "add_remove", -3.0, 1.0, k=4)
        assert got.linf == got.l1 == got.l2 == one


def test_l1_tightened_by_k() -> None:
    got = grouped_sensitivity("count", "add_remove", k=3, g=5, c=2)
    assert got.l1 == 3.0 and got.linf == 2.0 and got.l2 == pytest.approx(math.sqrt(5.0))
    assert grouped_sensitivity("count", "add_remove", k=10, g=3, c=2).l1 == 6.0


@pytest.mark.parametrize(
    "kwargs",
    [{"k": 0}, {"k": 2, "g": 0}, {"k": 2, "c": 1.5}, {"k": True}],
    ids=str,
)
def test_bad_bounds_raise(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="whole number"):
        grouped_sensitivity("count", "add_remove", **kwargs)  # type: ignore[arg-type]


def test_unknown_statistic_and_relation() -> None:
    with pytest.raises(ValueError, match="no grouped sensitivity"):
        grouped_sensitivity("mean_direct", "substitute", k=1)
    with pytest.raises(ValueError, match="neighbouring"):
        grouped_sensitivity("count", "swap", k=1)


@pytest.mark.parametrize("epsilon", [0.01, 1.0, 300.0])
@pytest.mark.parametrize("caps", [(1, None, None), (2, 2, 1), (3, 2, 2), (3, None, 1)], ids=str)
@pytest.mark.parametrize("bounds", BOUNDS[1:3], ids=str)
def test_grouped_bound_sums_plan_pays_for_the_grid(
    bounds: tuple[float, float], caps: tuple[int, int | None, int | None], epsilon: float
) -> None:
    """End to end, a grouped mean's pairs: every unit the contribution bounds allow,
    added to base datasets, moves the pairs of all groups -- clamped into the plan's
    range and rounded to its noise grid as the release does -- by at most ``epsilon``
    Laplace scales in L1 (so the noise, discrete Laplace of that scale on every entry,
    is epsilon-DP). Exact rational arithmetic; the base pairs are random rationals."""
    from fractions import Fraction

    import pandas as pd

    from pandas_dp.plan.plans import Plan
    from pandas_dp.request.declared_columns import NumericDeclaration
    from pandas_dp.request.grouping import Grouping
    from pandas_dp.request.settings import Contributions, Settings

    a, b = bounds
    k, g, c = caps
    full = caps_of(k, g, c)
    unit = Contributions("u", k, full[1], full[2])
    keys = pd.Index(list(range(GROUPS)), name="k")
    plan = Plan(Settings(epsilon=epsilon, contributions=unit), Grouping(("k",), keys))
    key = plan.moments(NumericDeclaration("x", a, b), ("bound_sums",))["bound_sums"]
    plan.calibrate()
    noise = plan.measurements[key].calibrated
    assert noise.scale.size == 2 * GROUPS
    step, budget = (
        Fraction(float(noise.granularity[0])),
        Fraction(float(noise.scale[0])) * Fraction(epsilon),
    )
    fa, fb = Fraction(a), Fraction(b)
    values = [fa, fb, fa + (fb - fa) / 2, fa + (fb - fa) * Fraction(3, 10), None]
    kinds = [(grp, v) for grp in range(GROUPS) for v in values]
    units = []
    for size in range(1, k + 1):
        for chosen in itertools.combinations_with_replacement(range(len(kinds)), size):
            groups = [kinds[i][0] for i in chosen]
            if len(set(groups)) > full[1] or max(groups.count(x) for x in groups) > full[2]:
                continue
            vec = [Fraction(0)] * (2 * GROUPS)
            for i in chosen:
                grp, x = kinds[i]
                if x is not None:
                    vec[2 * grp] += x - fa
                    vec[2 * grp + 1] += fb - x
            units.append(vec)
    rng = np.random.default_rng(7)
    for _ in range(5):  # base pairs anywhere on a fine rational grid
        base = [Fraction(int(v), 1 << 50) * (fb - fa) for v in rng.integers(0, 1 << 56, 2 * GROUPS)]
        start = [round(max(x, Fraction(0)) / step) for x in base]
        for vec in units:
            moved = sum(
                abs(round(max(x + d, Fraction(0)) / step) - s)
                for x, d, s in zip(base, vec, start, strict=True)
            )
            assert moved * step <= budget, (moved * step, budget)
