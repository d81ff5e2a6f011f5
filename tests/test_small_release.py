"""The cached pieces of a small release: a cache never hands one release's public
facts to another, and the cheaper constructions build what the general ones do."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp import PrivacyBudget
from pandas_dp.budget.budgets import charge_all
from pandas_dp.errors import BudgetExceededError, InvalidBoundsError
from pandas_dp.noise.bounding import apply_noise
from pandas_dp.noise.mechanisms import RandomSource
from pandas_dp.noise.plans import plan_noise
from pandas_dp.plan import calibration as plan_calibration
from pandas_dp.plan.plans import Plan
from pandas_dp.request.declared_columns import NumericDeclaration
from pandas_dp.request.grouping import Grouping
from pandas_dp.request.settings import Contributions, Settings
from pandas_dp.result.values import DPMetadata
from pandas_dp.stats import numeric as statistics_module

SERIES = pd.Series(np.random.default_rng(5).uniform(0.0, 100.0, 100), name="x")
STATISTICS = ("count", "centred_sum", "centred_squares", "sum")

#: Public arguments of a plan that a cache could confuse: bounds equal as floats
#: but not as numbers (-0.0 and 0.0), relations, public n, contribution bounds.
CASES: list[tuple[str, int | None, float, float, int]] = [
    ("add_remove", None, 0.0, 100.0, 1),
    ("add_remove", None, -0.0, 100.0, 1),
    ("substitute", 100, 0.0, 100.0, 1),
    ("substitute", 100, -0.0, 100.0, 1),
    ("substitute", 57, -0.0, 100.0, 1),
    ("add_remove", None, -5.0, -0.0, 1),
    ("substitute", 100, -5.0, -0.0, 1),
    ("substitute", 100, -5.0, 0.0, 1),
    ("add_remove", None, 0.0, 100.0, 3),
    ("add_remove", None, -10.0, 120.0, 1),
]


def _clear_caches() -> None:
    plan_calibration.moment_row.cache_clear()
    plan_calibration._spread_ratios.cache_clear()
    statistics_module._PLANS.clear()


def _measurements(rel: str, n: int | None, a: float, b: float, k: int) -> list[tuple[Any, ...]]:
    """Every number of the measurements of one column's four sufficient statistics,
    with the sign of each zero (``-0.0 == 0.0`` would hide a stale one)."""
    c = Contributions(unit=None if k == 1 else "u", rows=k)
    p = Plan(Settings(1.0, neighbouring=rel, rows=n, contributions=c))
    p.moments(NumericDeclaration("x", a, b), STATISTICS)
    out = []
    for m in p.measurements.values():
        numbers = (m.sensitivity, m.lower, m.upper, m.joint_l1, m.joint_l2)
        signs = tuple(None if v is None else math.copysign(1.0, v) for v in numbers)
        out.append((m.key, m.integer, m.size, numbers, signs))
    return out


def test_cached_plans_equal_fresh_ones_whatever_came_before() -> None:
    """Each case planned after every other case (caches warm with their entries)
    equals the case planned from empty caches. (Cases are told apart by position:
    as dict keys, the tuples with -0.0 and 0.0 are one key.)"""
    fresh = []
    for case in CASES:
        _clear_caches()
        fresh.append(_measurements(*case))
    _clear_caches()
    order = list(range(len(CASES)))
    for _ in range(2):
        for i in order:
            assert _measurements(*CASES[i]) == fresh[i], CASES[i]
        order.reverse()


def test_zero_bounds_keep_their_sign_across_releases() -> None:
    """Two releases in a row whose bounds differ only in the sign of a zero: each
    range keeps its own sign (a cache keyed on ``==`` would return the first)."""
    _clear_caches()
    first = SERIES.dp.sum(epsilon=1.0, bounds=(-0.0, 100.0), neighbouring="substitute")
    second = SERIES.dp.sum(epsilon=1.0, bounds=(0.0, 100.0), neighbouring="substitute")
    third = SERIES.dp.sum(epsilon=1.0, bounds=(-0.0, 100.0), neighbouring="substitute")
    signs = [math.copysign(1.0, r.attrs["dp"].output_bounds[0]) for r in (first, second, third)]
    assert signs == [-1.0, 1.0, -1.0]


def test_grouped_and_ungrouped_spreads_are_cached_apart() -> None:
    """An ungrouped release's ratios are never a grouped one's, nor one set of
    contribution bounds' another's: warm caches give what empty ones give."""
    decl = NumericDeclaration("x", 0.0, 10.0)
    configs = [(None, None), (2, 1), (3, 1), (2, 2), (4, 3)]

    def spreads(groups: int | None, per_group: int | None) -> list[Any]:
        c = Contributions(unit="u", rows=4, groups=groups or 1, rows_per_group=per_group or 1)
        grouping = None
        if groups is not None:
            grouping = Grouping(by=("g",), keys=pd.Index(["a", "b", "c", "d", "e"]))
        p = Plan(Settings(1.0, contributions=c), grouping)
        p.moments(decl, ("count", "centred_sum"))
        return [(m.sensitivity, m.joint_l1, m.joint_l2) for m in p.measurements.values()]

    fresh = []
    for config in configs:
        _clear_caches()
        fresh.append(spreads(*config))
    assert len({repr(f) for f in fresh}) == len(configs)  # the cases do differ
    for config, expected in [*zip(configs, fresh, strict=True)] * 2:
        assert spreads(*config) == expected, config


@pytest.mark.parametrize(
    "release",
    [
        lambda s, **kw: s.dp.mean(bounds=(0, 100), **kw),
        lambda s, **kw: s.dp.var(bounds=(-10, 120), **kw),
        lambda s, **kw: s.dp.sum(bounds=(0, 100), **kw),
        lambda s, **kw: s.dp.count(**kw),
    ],
    ids=["mean", "var", "sum", "count"],
)
def test_releases_in_a_row_follow_their_own_arguments(
    release: Callable[..., Any],
) -> None:
    """Alternating epsilons and relations: every release's metadata is its own, and
    each seeded release repeats exactly when its arguments come back."""
    settings = [
        {"epsilon": 1.0},
        {"epsilon": 0.25},
        {"epsilon": 1.0, "neighbouring": "substitute"},
        {"epsilon": 1.0, "mechanism": "gaussian", "delta": 1e-6},
    ]
    first = [release(SERIES, random_state=7, **kw) for kw in settings]
    again = [release(SERIES, random_state=7, **kw) for kw in reversed(settings)][::-1]
    for kw, a, b in zip(settings, first, again, strict=True):
        ma, mb = a.attrs["dp"], b.attrs["dp"]
        assert float(a) == float(b)
        assert ma.epsilon == kw["epsilon"] and ma.neighbouring == kw.get(
            "neighbouring", "add_remove"
        )
        assert ma.to_dict() == mb.to_dict()
    scales = [float(r.attrs["dp"].scale.max()) for r in first]
    assert scales[1] > scales[0]  # a quarter of the epsilon: wider noise


def test_record_builds_what_the_constructor_builds() -> None:
    meta = SERIES.dp.mean(epsilon=1.0, bounds=(0, 100), random_state=1).attrs["dp"]
    raw = object.__getattribute__(meta, "__dict__")
    assert list(raw) == ["_DPMetadata__later"]  # nothing is built before the first read
    assert meta.statistic == "mean" and "_DPMetadata__later" not in raw
    names = [f.name for f in dataclasses.fields(DPMetadata)]
    values = {n: object.__getattribute__(meta, n) for n in names}
    built = DPMetadata(**values)
    assert {n: object.__getattribute__(built, n) for n in names} == values
    assert vars(meta).keys() == vars(built).keys()
    assert str(meta) == str(built)
    with pytest.raises(TypeError, match="missing \\['rho'\\]"):
        DPMetadata.record(**{n: values[n] for n in names if n != "rho"})
    with pytest.raises(TypeError, match="unknown \\['extra'\\]"):
        DPMetadata.record(**values, extra=1)


def test_a_charge_without_budgets_still_checks_its_amounts() -> None:
    assert charge_all(1.0, statistic="mean") == ()
    with pytest.raises(ValueError, match="epsilon"):
        charge_all(math.nan, statistic="mean")
    with pytest.raises(ValueError, match="delta"):
        charge_all(1.0, -1.0, statistic="mean")


@pytest.mark.parametrize("bounding", ["bit", "none"])
def test_small_count_path_equals_the_vector_path(
    bounding: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A few counts (the per-entry floats cached on the plan) against the numpy
    path, on the same seeded words: the same releases, values at the ends too."""
    from pandas_dp.noise import bounding as bounding_module

    theta = np.array([0.0, 3.0, 7.0])
    plan = plan_noise(
        np.ones(3),
        np.zeros(3),
        np.full(3, 7.0),
        epsilon=0.5,
        mechanism="laplace",
        bounding=bounding,
        integer=True,
    )
    small = [apply_noise(theta, plan, RandomSource(seed)).tolist() for seed in range(200)]
    monkeypatch.setattr(bounding_module, "SMALL_SIZE", 0)  # every plan takes the numpy path
    vector = [apply_noise(theta, plan, RandomSource(seed)).tolist() for seed in range(200)]
    assert small == vector
    assert len({tuple(v) for v in small}) > 50  # the seeds draw different noise


def _signed(meta: DPMetadata) -> str:
    """The record as JSON text: ``-0.0`` and ``0.0``, ``1`` and ``1.0`` print apart."""
    return json.dumps(meta.to_dict(), sort_keys=True)


#: Calls whose public facts differ in ways ``==`` (or a float conversion) hides:
#: the sign of a zero bound, int and float bounds of one value, an epsilon's type,
#: the relation, delta's sign, the dtype of the column, the column's label.
FRAME = pd.DataFrame({"x": SERIES.to_numpy(), "k": np.arange(100) % 7})
#: One column labelled 1, 1.0 or True (equal as dict keys, printed apart).
LABELLED = [pd.DataFrame({label: SERIES.to_numpy()}) for label in (1, 1.0, True)]
CALLS: list[Callable[[], Any]] = [
    lambda: SERIES.dp.mean(epsilon=1.0, bounds=(0, 100), random_state=3),
    lambda: SERIES.dp.mean(epsilon=1.0, bounds=(0, 100.0), random_state=3),
    lambda: SERIES.dp.mean(epsilon=1.0, bounds=(0.0, 100), random_state=3),
    lambda: SERIES.dp.mean(epsilon=1.0, bounds=(-0.0, 100), random_state=3),
    lambda: SERIES.dp.sum(epsilon=1.0, bounds=(-100, -0.0), neighbouring="substitute"),
    lambda: SERIES.dp.sum(epsilon=1.0, bounds=(-100, 0), neighbouring="substitute"),
    lambda: SERIES.dp.mean(epsilon=1, bounds=(0, 100), random_state=3),
    lambda: SERIES.dp.mean(epsilon=np.float64(2.0), bounds=(0, 100), random_state=3),
    lambda: SERIES.dp.mean(epsilon=2.0, bounds=(0, 100), random_state=3),
    lambda: SERIES.dp.mean(epsilon=1.0, bounds=(0, 100), neighbouring="substitute"),
    lambda: SERIES.dp.mean(
        epsilon=1.0, bounds=(0, 100), method="direct", neighbouring="substitute"
    ),
    lambda: SERIES.head(57).dp.mean(epsilon=1.0, bounds=(0, 100), neighbouring="substitute"),
    lambda: SERIES.dp.var(epsilon=1.0, bounds=(0, 100), mechanism="gaussian", delta=1e-6),
    lambda: SERIES.dp.var(epsilon=1.0, bounds=(0, 100), mechanism="gaussian", delta=2e-6),
    lambda: SERIES.dp.var(epsilon=1.0, bounds=(0, 100), ddof=0, neighbouring="substitute"),
    lambda: SERIES.dp.var(
        epsilon=1.0, bounds=(0, 100), ddof=0, method="direct", neighbouring="substitute"
    ),
    lambda: SERIES.dp.var(
        epsilon=1.0, bounds=(0, 100), ddof=1, method="direct", neighbouring="substitute"
    ),
    lambda: SERIES.dp.std(epsilon=1.0, bounds=(0, 100), bounding="truncated"),
    lambda: SERIES.dp.mean(epsilon=1.0, bounds=(0, 100), bounding="none", delta=-0.0),
    lambda: SERIES.dp.mean(epsilon=1.0, bounds=(0, 100), bounding="none", delta=0.0),
    lambda: FRAME.dp.mean("k", epsilon=1.0, bounds=(0, 10)),
    lambda: LABELLED[0].dp.mean(1, epsilon=1.0, bounds=(0, 100)),
    lambda: LABELLED[1].dp.mean(1.0, epsilon=1.0, bounds=(0, 100)),
    lambda: LABELLED[2].dp.mean(True, epsilon=1.0, bounds=(0, 100)),
    lambda: FRAME.dp.mean(["x", "k"], epsilon=1.0, bounds={"x": (0, 100), "k": (0, 10)}),
    lambda: FRAME.dp.mean(["k", "x"], epsilon=1.0, bounds={"x": (0, 100), "k": (0, 10)}),
    lambda: FRAME.dp.mean("x", epsilon=1.0, bounds=(0, 100), privacy_unit="k", max_rows_per_unit=1),
    lambda: FRAME.dp.mean(
        "x", epsilon=1.0, bounds=(0, 100), privacy_unit="k", max_rows_per_unit=20
    ),
    lambda: FRAME.dp.count(epsilon=1.0),
    lambda: FRAME.dp.agg({"x": ["mean", "std"], "k": "sum"}, epsilon=1.0, bounds=(0, 100)),
]


def _metadata(call: Callable[[], Any]) -> str:
    return _signed(call().attrs["dp"])


def test_cached_release_plans_equal_fresh_ones_whatever_came_before() -> None:
    """Every call's metadata (its split, sensitivities, scales, ranges, with the
    sign of each zero) after all the others, in both orders, equals the call's
    metadata from empty caches."""
    fresh = []
    for call in CALLS:
        _clear_caches()
        fresh.append(_metadata(call))
    # each call's public facts differ, but for bounds (0, 100), (0, 100.0) and
    # (0.0, 100) with epsilon 1.0 or 1 (one declaration: floats), epsilon 2.0 and
    # np.float64(2.0), and a delta of -0.0 or 0.0 (the record's delta is 0.0 + delta)
    assert fresh[0] == fresh[1] == fresh[2] == fresh[6]
    assert fresh[7] == fresh[8] and fresh[18] == fresh[19]
    assert len(set(fresh)) == len(CALLS) - 5
    _clear_caches()
    order = list(range(len(CALLS)))
    for _ in range(2):
        for i in order:
            assert _metadata(CALLS[i]) == fresh[i], i
        order.reverse()


def test_a_cached_plan_releases_what_a_fresh_one_does() -> None:
    """Seeded values and intervals: the same whether the plan was cached or built."""
    calls = [c for c in CALLS[:4]]
    _clear_caches()
    cold = [(float(c()), c().attrs["dp"].interval(0.1)) for c in calls]
    warm = [(float(c()), c().attrs["dp"].interval(0.1)) for c in calls]
    assert cold == warm


def test_a_cached_plan_follows_the_weights_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A study that swaps MOMENT_WEIGHTS (benchmarks/accuracy.py) gets plans split by
    the weights in force, never a plan cached under others."""
    _clear_caches()
    before = SERIES.dp.mean(epsilon=1.0, bounds=(0, 100)).attrs["dp"].details["budget_split"]
    monkeypatch.setitem(
        statistics_module.MOMENT_WEIGHTS, "mean", {"count": 1.0, "centred_sum": 3.0}
    )
    after = SERIES.dp.mean(epsilon=1.0, bounds=(0, 100)).attrs["dp"].details["budget_split"]
    assert list(before.values()) == pytest.approx([1.0])  # the bound sums: no split
    assert list(after.values()) == pytest.approx([1 / 4, 3 / 4])  # count and centred sum


def test_records_of_a_cached_plan_share_no_mutable_field() -> None:
    """A cached plan builds its records' public parts once; each record still gets
    its own Series and dicts, so changing one record's metadata changes no other."""
    _clear_caches()
    a, b = (SERIES.dp.var(epsilon=1.0, bounds=(0, 100)).attrs["dp"] for _ in range(2))
    first = (a.sensitivity.copy(), a.scale.copy(), dict(a.details["noised"]))
    b.sensitivity.iloc[0] = -1.0
    b.scale.iloc[0] = -1.0
    b.details["noised"].clear()
    b.details["budget_split"].clear()
    c = SERIES.dp.var(epsilon=1.0, bounds=(0, 100)).attrs["dp"]
    for meta in (a, c):
        pd.testing.assert_series_equal(meta.sensitivity, first[0])
        pd.testing.assert_series_equal(meta.scale, first[1])
        assert meta.details["noised"] == first[2] and len(first[2]) == 2
        assert len(meta.details["budget_split"]) == 2


def test_a_cached_plan_holds_no_generator_budget_or_private_count() -> None:
    _clear_caches()
    budget = PrivacyBudget(epsilon=10.0)
    SERIES.dp.mean(epsilon=1.0, bounds=(0, 100), random_state=5, budget=budget)
    FRAME.dp.sum("x", epsilon=1.0, bounds=(0, 100), random_state=np.random.default_rng(1))
    assert len(statistics_module._PLANS) == 2
    for plan, _, _ in statistics_module._PLANS.values():
        s = plan.settings
        assert s.budget is None and s.random_state is None and s.source.secure
        assert s.rows is None  # add_remove: the length is not public


def test_budgets_are_charged_by_every_release_of_a_cached_plan() -> None:
    _clear_caches()
    budget = PrivacyBudget(epsilon=2.0)
    for _ in range(4):
        SERIES.dp.mean(epsilon=0.5, bounds=(0, 100), budget=budget)
    assert budget.spent[0] == pytest.approx(2.0)
    assert len(budget.ledger) == 4
    with pytest.raises(BudgetExceededError):
        SERIES.dp.mean(epsilon=0.5, bounds=(0, 100), budget=budget)
    assert len(budget.ledger) == 4
    with PrivacyBudget(epsilon=1.0) as active:
        SERIES.dp.mean(epsilon=0.5, bounds=(0, 100))
        SERIES.dp.mean(epsilon=0.5, bounds=(0, 100))
        with pytest.raises(BudgetExceededError):
            SERIES.dp.mean(epsilon=0.5, bounds=(0, 100))
    assert active.spent[0] == pytest.approx(1.0)


def test_refused_arguments_raise_on_every_call() -> None:
    """An error is never cached: bounds too wide for a variance raise each time."""
    _clear_caches()
    for _ in range(2):
        with pytest.raises(ValueError, match="too wide"):
            SERIES.dp.var(epsilon=1.0, bounds=(-1e300, 1e300))
    assert not statistics_module._PLANS


@pytest.mark.parametrize("statistic", ["sum", "mean", "var", "std"])
def test_subnormal_bounds_are_refused_before_the_charge(statistic: str) -> None:
    """Bounds whose half-width rounds to 0 have no accumulation grid: refused with
    the column's bounds named, nothing charged, every time (never cached)."""
    _clear_caches()
    budget = PrivacyBudget(epsilon=10.0)
    for _ in range(2):
        with pytest.raises(InvalidBoundsError, match="too narrow: half their width rounds to 0"):
            getattr(SERIES.dp, statistic)(epsilon=1.0, bounds=(0.0, 5e-324), budget=budget)
    assert budget.spent[0] == 0.0
    assert not statistics_module._PLANS


def test_the_plan_cache_is_bounded() -> None:
    _clear_caches()
    for i in range(statistics_module._PLANS_KEPT + 10):
        SERIES.dp.sum(epsilon=1.0, bounds=(0, 100 + i))
    assert len(statistics_module._PLANS) == statistics_module._PLANS_KEPT


def test_threads_evicting_plans_each_get_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Threads releasing with different public facts through a cache of three plans
    (every miss evicts one): each release's record is the one of its own call."""
    from concurrent.futures import ThreadPoolExecutor

    calls = CALLS[:12]
    expected = []
    for call in calls:
        _clear_caches()
        expected.append(_metadata(call))
    monkeypatch.setattr(statistics_module, "_PLANS_KEPT", 3)
    _clear_caches()
    order = [i % len(calls) for i in range(240)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(lambda i: _metadata(calls[i]), order))
    assert got == [expected[i] for i in order]
    assert len(statistics_module._PLANS) <= 3
