"""PrivacyBudget: activation, explicit budgets, the ledger, atomicity under threads.

Nesting and threads: a release charges the explicit budget and every active one
(nested blocks, blocks open in other threads, the default), atomically. The tests of
``charge_all`` call it directly; the ``test_e2e_*`` tests at the end go through
``df.dp`` and need the core to charge through ``charge_all``.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import BudgetExceededError, PrivacyBudget, active_budgets, charge_all
from pandas_dp.budget.accounting import epsilon_for, rho_for
from pandas_dp.engines import in_memory

B = (0.0, 1.0)


@pytest.fixture(autouse=True)
def no_budget_left_active() -> Iterator[None]:
    """Every test starts and ends with no active budget (a leak would cap other tests)."""
    assert active_budgets() == ()
    yield
    previous = pandas_dp.set_default_budget(None)
    assert previous is None, "a test left a default budget set"
    assert active_budgets() == ()


@pytest.fixture
def df() -> pd.DataFrame:
    return pd.DataFrame({"x": np.linspace(0, 1, 50), "y": np.linspace(1, 0, 50)})


def test_with_block_charges_every_release(df: pd.DataFrame) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with budget as active:
        assert active is budget and pandas_dp.active_budget() is budget
        df.dp.mean("x", epsilon=0.25, bounds=B)
        df["y"].dp.var(epsilon=0.25, bounds=B)
        df.dp.count(epsilon=0.25)
    assert pandas_dp.active_budget() is None
    assert budget.spent == (pytest.approx(0.75), 0.0)
    assert budget.remaining == (pytest.approx(0.25), 0.0)
    ledger = budget.ledger
    assert list(ledger["statistic"]) == ["mean", "var", "count"]
    assert list(ledger["columns"]) == [("x",), ("y",), ("x", "y")]
    assert ledger["epsilon"].sum() == pytest.approx(0.75)
    assert str(ledger["time"].dtype).startswith("datetime64")


def _no_reads(monkeypatch: pytest.MonkeyPatch, spy: Callable[..., object]) -> None:
    """Replace every reader of the data with ``spy``.

    The kernels, where the in-memory engine (``PandasEngine``'s kernels) and the
    statistics call them, and ``Series.count``.
    """
    readers = (
        "moments",
        "products",
        "category_counts",
        "mask_counts",
        "present_counts",
        "group_codes",
        "observed_codes",
    )
    for name in readers:
        monkeypatch.setattr(pandas_dp.engines, name, spy)
        if hasattr(in_memory.PandasEngine, name):  # the in-memory engine's kernels
            monkeypatch.setattr(in_memory.PandasEngine, name, staticmethod(spy))
    monkeypatch.setattr(pd.Series, "count", spy)


def test_overspending_raises_before_reading_and_records_nothing(
    df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    budget.charge(0.9, statistic="earlier")
    reads: list[str] = []

    def spy(*args: object, **kwargs: object) -> object:
        reads.append("read")
        raise AssertionError("data was read")

    _no_reads(monkeypatch, spy)
    with budget, pytest.raises(BudgetExceededError, match="remain"):
        df.dp.mean("x", epsilon=0.2, bounds=B)
    with pytest.raises(BudgetExceededError):
        df.dp.count(epsilon=0.2, budget=budget)
    assert reads == []
    assert budget.spent[0] == pytest.approx(0.9)
    assert len(budget.ledger) == 1
    assert isinstance(BudgetExceededError("x"), RuntimeError)
    # the spies do see a read: a release that fits reads the data
    with pytest.raises(AssertionError, match="data was read"):
        df.dp.mean("x", epsilon=0.05, bounds=B)
    with pytest.raises(AssertionError, match="data was read"):
        df.dp.count(epsilon=0.05)
    assert reads == ["read", "read"]


_EMPTY = pd.DataFrame({"x": pd.Series([], dtype=float)})
_DUPLICATED = pd.DataFrame([[0.1, 0.2, 0.3]], columns=["x", "x", "y"])
_SMALL = pd.DataFrame({"x": [0.1, 0.5, 0.9], "r": ["a", "b", "a"]})
#: Duplicated labels where a release reads a key, a unit or a category column.
_DUP_KEY = pd.DataFrame([[0.1, "a", "a", 1]], columns=["x", "r", "r", "u"])
_DUP_UNIT = pd.DataFrame([[0.1, "a", 1, 2]], columns=["x", "r", "u", "u"])
_DUP_GROUPED = pd.DataFrame([[0.1, 0.2, "a"]], columns=["x", "x", "r"])

#: Requests that must fail on public facts alone: before the charge and any read.
_REFUSED: dict[str, tuple[Callable[..., object], type[Exception], str]] = {
    "describe, no columns": (
        lambda **kw: pd.DataFrame().dp.describe(bounds=B, **kw),
        KeyError,
        "no public",
    ),
    "describe, duplicated labels": (
        lambda **kw: _DUPLICATED.dp.describe(bounds=B, **kw),
        ValueError,
        "more than once",
    ),
    "describe, duplicated label selected": (
        lambda **kw: _DUPLICATED.dp.describe(["x"], bounds=B, **kw),
        ValueError,
        "more than once",
    ),
    "count, duplicated labels": (
        lambda **kw: _DUPLICATED.dp.count(**kw),
        ValueError,
        "more than once",
    ),
    "mean, duplicated labels": (
        lambda **kw: _DUPLICATED.dp.mean(bounds=B, **kw),
        ValueError,
        "more than once",
    ),
    "groupby mean, duplicated label": (
        lambda **kw: _DUP_GROUPED.dp.groupby("r", keys=["a"]).mean("x", bounds=B, **kw),
        ValueError,
        "more than once",
    ),
    "groupby describe, duplicated label": (
        lambda **kw: _DUP_GROUPED.dp.groupby("r", keys=["a"]).describe(bounds={"x": B}, **kw),
        ValueError,
        "more than once",
    ),
    "groupby describe, duplicated labels": (
        lambda **kw: _DUP_GROUPED.dp.groupby("r", keys=["a"]).describe(bounds=B, **kw),
        ValueError,
        "more than once",
    ),
    "groupby, duplicated key column": (
        lambda **kw: _DUP_KEY.dp.groupby("r", keys=["a"]).mean("x", bounds=B, **kw),
        ValueError,
        "more than once",
    ),
    "privacy unit, duplicated column": (
        lambda **kw: _DUP_UNIT.dp.mean("x", bounds=B, privacy_unit="u", max_rows_per_unit=2, **kw),
        ValueError,
        "more than once",
    ),
    "contingency, duplicated column": (
        lambda **kw: _DUP_KEY.dp.value_counts(["r", "u"], categories={"r": ["a"], "u": [1]}, **kw),
        ValueError,
        "more than once",
    ),
    "counts normalize, empty, substitute": (
        lambda **kw: _EMPTY.dp.counts(
            {"big": _EMPTY.x > 0.5}, normalize=True, neighbouring="substitute", **kw
        ),
        ValueError,
        "empty",
    ),
    "describe, typo": (
        lambda **kw: _SMALL.dp.describe(["x", "rr"], bounds=B, categories={"r": ["a"]}, **kw),
        KeyError,
        "rr",
    ),
    "mean, typo": (lambda **kw: _SMALL.dp.mean("xx", bounds=B, **kw), KeyError, "xx"),
    "value_counts, typo": (
        lambda **kw: _SMALL.dp.value_counts("rr", categories=["a", "b"], **kw),
        KeyError,
        "rr",
    ),
    "cov, typo": (lambda **kw: _SMALL.dp.cov(["x", "xx"], bounds=B, **kw), KeyError, "xx"),
    "direct under add_remove": (
        lambda **kw: _SMALL.dp.var("x", bounds=B, method="direct", **kw),
        ValueError,
        "substitute",
    ),
    "direct, ddof >= n": (
        lambda **kw: _SMALL.dp.var(
            "x", ddof=3, bounds=B, method="direct", neighbouring="substitute", **kw
        ),
        ValueError,
        "ddof",
    ),
    "bounds too narrow to accumulate": (
        lambda **kw: _SMALL.dp.mean("x", bounds=(0.0, 1e-320), **kw),
        ValueError,
        "too narrow",
    ),
}


@pytest.mark.parametrize("name", list(_REFUSED))
def test_refused_requests_charge_nothing_and_read_nothing(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every such error is raised before any budget is charged or any value is read."""
    release, error, fragment = _REFUSED[name]

    def spy(*args: object, **kwargs: object) -> object:
        raise AssertionError("data was read")

    _no_reads(monkeypatch, spy)
    explicit, active = PrivacyBudget(epsilon=10.0), PrivacyBudget(epsilon=10.0)
    with active, pytest.raises(error, match=fragment):
        release(epsilon=1.0, budget=explicit)
    for budget in (explicit, active):
        assert budget.spent == (0.0, 0.0) and len(budget.ledger) == 0


def test_without_budget_nothing_is_capped(df: pd.DataFrame) -> None:
    for _ in range(3):
        df.dp.mean("x", epsilon=10.0, bounds=B)


def test_ten_tenths_fit_in_one() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    for _ in range(10):
        budget.charge(0.1)
    with pytest.raises(BudgetExceededError):
        budget.charge(1e-6)


def test_delta_is_budgeted(df: pd.DataFrame) -> None:
    budget = PrivacyBudget(epsilon=10.0, delta=1e-6)
    kw = {"epsilon": 1.0, "delta": 1e-6, "mechanism": "gaussian", "bounds": B, "budget": budget}
    df.dp.mean("x", **kw)
    with pytest.raises(BudgetExceededError, match="delta"):
        df.dp.mean("x", **kw)
    assert budget.spent == (1.0, 1e-6)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 0},
        {"epsilon": -1},
        {"epsilon": 1, "delta": 1},
        {"epsilon": 1, "delta": -0.1},
        {"epsilon": float("nan")},
    ],
)
def test_invalid_budget(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        PrivacyBudget(**kwargs)


def test_empty_ledger_has_columns() -> None:
    assert list(PrivacyBudget(1.0).ledger.columns)[:3] == ["time", "statistic", "columns"]


def test_threads_can_never_overspend(df: pd.DataFrame) -> None:
    """64 threads race for a budget that fits exactly 20 releases."""
    budget = PrivacyBudget(epsilon=2.0)
    barrier = threading.Barrier(16)
    outcomes: list[str] = []
    lock = threading.Lock()

    def worker(_: int) -> None:
        barrier.wait() if _ < 16 else None
        try:
            df.dp.mean("x", epsilon=0.1, bounds=B, budget=budget)
            result = "ok"
        except BudgetExceededError:
            result = "refused"
        with lock:
            outcomes.append(result)

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(worker, range(64)))
    assert outcomes.count("ok") == 20 and outcomes.count("refused") == 44
    assert budget.spent[0] == pytest.approx(2.0) and len(budget.ledger) == 20


def test_repr_mentions_spending() -> None:
    budget = PrivacyBudget(epsilon=2.0)
    budget.charge(0.5)
    assert "spent epsilon=0.5" in repr(budget)


def test_name_appears_in_repr_and_errors() -> None:
    budget = PrivacyBudget(epsilon=1.0, name="project")
    assert repr(budget).startswith("PrivacyBudget('project', epsilon=1")
    with pytest.raises(BudgetExceededError, match="remain of the budget 'project'"):
        budget.charge(2.0, statistic="mean")


# ----------------------------------------------------------------------------- nesting


def test_nested_blocks_charge_every_enclosing_budget() -> None:
    outer, inner = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=0.5)
    with outer:
        assert active_budgets() == (outer,)
        with inner:
            assert active_budgets() == (inner, outer)
            assert pandas_dp.active_budget() is inner
            charged = charge_all(0.3, statistic="mean", columns=("x",), mechanism="laplace")
            assert charged == (inner, outer)
        assert active_budgets() == (outer,)
        charge_all(0.2, statistic="var")
    assert active_budgets() == ()
    assert inner.spent == (pytest.approx(0.3), 0.0)
    assert outer.spent == (pytest.approx(0.5), 0.0)
    assert list(outer.ledger["statistic"]) == ["mean", "var"]
    assert list(inner.ledger["statistic"]) == ["mean"]
    assert inner.ledger["columns"].iloc[0] == ("x",)
    assert inner.ledger["mechanism"].iloc[0] == "laplace"
    assert inner.ledger["time"].iloc[0] == outer.ledger["time"].iloc[0]  # one release


def test_overspending_the_outer_budget_charges_neither() -> None:
    outer = PrivacyBudget(epsilon=0.5, name="outer")
    inner = PrivacyBudget(epsilon=1.0, name="inner")
    with outer, inner:
        charge_all(0.4, statistic="mean")
        with pytest.raises(BudgetExceededError) as caught:
            charge_all(0.2, statistic="var")
    message = str(caught.value)
    assert "an enclosing budget 'outer'" in message and "'inner'" not in message
    assert "Nothing was spent on any budget" in message
    assert inner.spent[0] == pytest.approx(0.4) and outer.spent[0] == pytest.approx(0.4)
    assert len(inner.ledger) == 1 and len(outer.ledger) == 1


def test_every_budget_that_refuses_is_named() -> None:
    outer = PrivacyBudget(epsilon=0.1, name="outer")
    inner = PrivacyBudget(epsilon=0.1, name="inner")
    middle = PrivacyBudget(epsilon=5.0, name="middle")
    with outer, middle, inner, pytest.raises(BudgetExceededError) as caught:
        charge_all(0.5, statistic="mean")
    message = str(caught.value)
    assert "the active budget 'inner'" in message and "an enclosing budget 'outer'" in message
    assert "'middle'" not in message
    assert outer.spent == inner.spent == middle.spent == (0.0, 0.0)


def test_explicit_budget_is_charged_with_the_active_ones() -> None:
    active, explicit = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    with active:
        assert charge_all(0.5, budget=explicit) == (explicit, active)
        assert charge_all(0.25, budget=active) == (active,)  # active and given: once
    assert explicit.spent[0] == 0.5 and active.spent[0] == 0.75
    assert len(active.ledger) == 2


def test_explicit_budget_refusal_charges_no_active_budget() -> None:
    active, explicit = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=0.1, name="mine")
    with active, pytest.raises(BudgetExceededError, match="the budget passed as budget= 'mine'"):
        charge_all(0.5, budget=explicit, statistic="mean")
    assert active.spent[0] == 0.0 and explicit.spent[0] == 0.0


def test_reentered_budget_is_charged_once() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with budget, budget, budget:
        assert active_budgets() == (budget,)
        charge_all(0.5)
    assert budget.spent[0] == 0.5 and len(budget.ledger) == 1


def test_without_any_budget_charge_all_charges_nothing_but_checks_amounts() -> None:
    assert charge_all(10.0) == ()
    with pytest.raises(ValueError, match="epsilon must be a positive finite number"):
        charge_all(float("inf"))
    with pytest.raises(ValueError, match="delta"):
        charge_all(1.0, -1e-9)


def test_blocks_must_end_in_reverse_order() -> None:
    a, b = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="reverse order"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    a.__exit__(None, None, None)
    assert active_budgets() == ()


def test_block_ended_by_an_exception_deactivates_the_budget() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    with pytest.raises(KeyError), budget:
        raise KeyError("boom")
    assert active_budgets() == ()
    seen: list[tuple[PrivacyBudget, ...]] = []
    t = threading.Thread(target=lambda: seen.append(active_budgets()))
    t.start()
    t.join()
    assert seen == [()]


def test_opposite_lock_orders_do_not_deadlock() -> None:
    """Two threads charge the same two budgets, each naming them in the other order."""
    a, b = PrivacyBudget(epsilon=1e6), PrivacyBudget(epsilon=1e6)
    rounds = 2000
    barrier = threading.Barrier(2)

    def worker(active: PrivacyBudget, explicit: PrivacyBudget) -> None:
        with active.context_only():
            barrier.wait()
            for _ in range(rounds):
                charge_all(1.0, budget=explicit)

    threads = [threading.Thread(target=worker, args=pair) for pair in [(a, b), (b, a)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)  # a deadlock guard, not a speed requirement
    assert not any(t.is_alive() for t in threads), "charging deadlocked"
    assert a.spent[0] == b.spent[0] == 2 * rounds
    assert len(a.ledger) == len(b.ledger) == 2 * rounds


# ----------------------------------------------------------------------------- threads


def test_worker_threads_see_the_budget_of_the_block() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    seen: list[object] = []
    with budget:
        t = threading.Thread(target=lambda: seen.append(pandas_dp.active_budget()))
        t.start()
        t.join()
    t = threading.Thread(target=lambda: seen.append(pandas_dp.active_budget()))
    t.start()
    t.join()
    assert seen == [budget, None]  # seen during the block, not after it


def test_pool_releases_inside_a_block_are_all_charged() -> None:
    budget = PrivacyBudget(epsilon=5.0)
    with budget, ThreadPoolExecutor(max_workers=4) as pool:
        charged = list(pool.map(lambda _: charge_all(0.5, statistic="mean"), range(10)))
    assert charged == [(budget,)] * 10
    assert budget.spent[0] == pytest.approx(5.0) and len(budget.ledger) == 10


def test_pool_releases_over_the_budget_are_refused() -> None:
    budget = PrivacyBudget(epsilon=4.0)

    def release(_: int) -> str:
        try:
            charge_all(0.5)
        except BudgetExceededError:
            return "refused"
        return "ok"

    with budget, ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(pool.map(release, range(10)))
    assert outcomes.count("ok") == 8 and outcomes.count("refused") == 2
    assert budget.spent[0] == pytest.approx(4.0)


def test_pool_threads_charge_nested_budgets_of_the_block() -> None:
    outer, inner = PrivacyBudget(epsilon=10.0), PrivacyBudget(epsilon=2.0)
    with outer, inner, ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda _: charge_all(0.5), range(4)))
    assert inner.spent[0] == pytest.approx(2.0) and outer.spent[0] == pytest.approx(2.0)


def test_64_threads_race_for_20_slots_of_the_active_budget() -> None:
    budget = PrivacyBudget(epsilon=2.0)
    barrier = threading.Barrier(16)

    def release(i: int) -> str:
        if i < 16:
            barrier.wait()
        try:
            charge_all(0.1)
        except BudgetExceededError:
            return "refused"
        return "ok"

    with budget, ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(release, range(64)))
    assert outcomes.count("ok") == 20 and outcomes.count("refused") == 44
    assert budget.spent[0] == pytest.approx(2.0) and len(budget.ledger) == 20


def test_64_threads_race_for_20_slots_of_nested_budgets() -> None:
    """The outer budget is the tighter one; both ledgers agree, release by release."""
    outer, inner = PrivacyBudget(epsilon=2.0), PrivacyBudget(epsilon=3.0)

    def release(_: int) -> str:
        try:
            charge_all(0.1)
        except BudgetExceededError:
            return "refused"
        return "ok"

    with outer, inner, ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(release, range(64)))
    assert outcomes.count("ok") == 20
    assert len(outer.ledger) == len(inner.ledger) == 20
    assert inner.spent[0] == pytest.approx(2.0) and outer.spent[0] == pytest.approx(2.0)


def test_a_block_also_caps_threads_started_before_it() -> None:
    """Documented: while a block is open, every thread of the process is charged."""
    budget = PrivacyBudget(epsilon=1.0)
    entered, charged = threading.Event(), threading.Event()
    results: list[tuple[PrivacyBudget, ...]] = []

    def unrelated() -> None:
        entered.wait()
        results.append(charge_all(0.25))
        charged.set()

    t = threading.Thread(target=unrelated)
    t.start()
    with budget:
        entered.set()
        charged.wait()
    t.join()
    assert results == [(budget,)] and budget.spent[0] == 0.25


def test_context_only_blocks_do_not_reach_other_threads() -> None:
    budget = PrivacyBudget(epsilon=1.0)
    seen: list[tuple[PrivacyBudget, ...]] = []
    with budget.context_only() as active:
        assert active is budget and active_budgets() == (budget,)
        charge_all(0.25)
        t = threading.Thread(target=lambda: seen.append(active_budgets()))
        t.start()
        t.join()
    assert seen == [()] and budget.spent[0] == 0.25 and active_budgets() == ()


def test_two_threads_with_context_only_budgets_stay_apart() -> None:
    a, b = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    barrier = threading.Barrier(2)

    def worker(budget: PrivacyBudget) -> None:
        with budget.context_only():
            barrier.wait()  # both blocks are open at once
            charge_all(0.5)
            barrier.wait()

    threads = [threading.Thread(target=worker, args=(x,)) for x in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert a.spent[0] == 0.5 and b.spent[0] == 0.5


def test_asyncio_tasks_created_in_a_block_are_charged() -> None:
    budget = PrivacyBudget(epsilon=1.0)

    async def release() -> tuple[PrivacyBudget, ...]:
        await asyncio.sleep(0)
        return charge_all(0.25)

    async def main() -> list[tuple[PrivacyBudget, ...]]:
        with budget.context_only():
            tasks = [asyncio.create_task(release()) for _ in range(2)]
        return list(await asyncio.gather(*tasks))

    assert asyncio.run(main()) == [(budget,), (budget,)]
    assert budget.spent[0] == 0.5


def test_default_budget_caps_every_thread() -> None:
    default, block = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    assert pandas_dp.set_default_budget(default) is None
    try:
        assert active_budgets() == (default,)
        with block:
            assert active_budgets() == (block, default)
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(lambda _: charge_all(0.25), range(2)))
        with pytest.raises(BudgetExceededError, match="the process-wide default budget"):
            charge_all(0.75, budget=PrivacyBudget(epsilon=9.0))
    finally:
        assert pandas_dp.set_default_budget(None) is default
    assert default.spent[0] == 0.5 and block.spent[0] == 0.0
    with pytest.raises(TypeError, match="PrivacyBudget"):
        pandas_dp.set_default_budget(1.0)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- end to end
# Through df.dp: these need Settings.charge (statistics.py) and describe.py to charge
# through charge_all(..., budget=settings.budget, ...).


def test_e2e_pool_releases_inside_a_block_are_all_charged(df: pd.DataFrame) -> None:
    budget = PrivacyBudget(epsilon=5.0)
    with budget, ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda _: df.dp.mean("x", epsilon=0.5, bounds=B), range(10)))
    assert budget.spent[0] == pytest.approx(5.0) and len(budget.ledger) == 10
    with budget, pytest.raises(BudgetExceededError), ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda _: df.dp.mean("x", epsilon=0.5, bounds=B), range(1)))


def test_e2e_64_threads_race_inside_a_block(df: pd.DataFrame) -> None:
    budget = PrivacyBudget(epsilon=2.0)

    def release(_: int) -> str:
        try:
            df.dp.mean("x", epsilon=0.1, bounds=B)
        except BudgetExceededError:
            return "refused"
        return "ok"

    with budget, ThreadPoolExecutor(max_workers=16) as pool:
        outcomes = list(pool.map(release, range(64)))
    assert outcomes.count("ok") == 20 and len(budget.ledger) == 20


def test_e2e_nested_blocks_charge_inner_and_outer(df: pd.DataFrame) -> None:
    outer, inner = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    with outer:
        with inner:
            df.dp.mean("x", epsilon=0.1, bounds=B)
            with inner:  # re-entering the same budget charges it once
                df.dp.mean("x", epsilon=0.1, bounds=B)
        df.dp.mean("x", epsilon=0.3, bounds=B)
    assert inner.spent[0] == pytest.approx(0.2) and outer.spent[0] == pytest.approx(0.5)


def test_e2e_outer_overspend_charges_neither_and_reads_nothing(
    df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    outer, inner = PrivacyBudget(epsilon=0.3, name="outer"), PrivacyBudget(epsilon=1.0)
    with outer, inner:
        df.dp.mean("x", epsilon=0.2, bounds=B)

        def spy(*args: object, **kwargs: object) -> object:
            raise AssertionError("data was read")

        _no_reads(monkeypatch, spy)
        with pytest.raises(BudgetExceededError, match="enclosing budget 'outer'"):
            df.dp.mean("x", epsilon=0.2, bounds=B)
    assert outer.spent[0] == pytest.approx(0.2) and inner.spent[0] == pytest.approx(0.2)


def test_e2e_explicit_budget_is_charged_with_the_active_one(df: pd.DataFrame) -> None:
    outer, explicit = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    with outer:
        df.dp.mean("x", epsilon=0.5, bounds=B, budget=explicit)
        df.dp.mean("x", epsilon=0.25, bounds=B, budget=outer)  # given and active: once
    assert outer.spent[0] == 0.75 and explicit.spent[0] == 0.5


def test_e2e_describe_charges_nested_budgets(df: pd.DataFrame) -> None:
    outer, inner = PrivacyBudget(epsilon=2.0), PrivacyBudget(epsilon=1.0)
    with outer, inner:
        df.dp.describe(["x"], epsilon=1.0, bounds={"x": B})
    assert inner.spent[0] == 1.0 and outer.spent[0] == 1.0
    assert outer.ledger["statistic"].iloc[0] == "describe"


# --------------------------------------------------------------------------- accounting modes
# "basic": epsilon and delta add up; "zcdp": rho adds up within rho_for(epsilon, delta).

GAUSS = {"mechanism": "gaussian", "bounds": B}


def _count_rho(result: object) -> float:
    """rho of a Gaussian count, from its metadata: sensitivity 1, integer sigma."""
    meta = result.attrs["dp"]  # type: ignore[attr-defined]
    (scale,) = meta.scale.to_numpy()
    return float(1.0 / (2.0 * scale * scale))


def test_accounting_is_checked_at_construction() -> None:
    with pytest.raises(ValueError, match=r"'basic'.*'zcdp'.*'rdp'"):
        PrivacyBudget(1.0, 1e-6, accounting="rdp")
    with pytest.raises(ValueError, match=r"positive delta.*accounting='basic'"):
        PrivacyBudget(1.0, accounting="zcdp")
    assert PrivacyBudget(1.0).accounting == "basic" and PrivacyBudget(1.0).rho_budget is None
    z = PrivacyBudget(1.0, 1e-6, accounting="zcdp", name="z")
    assert z.rho_budget == rho_for(1.0, 1e-6)
    assert epsilon_for(z.rho_budget, 1e-6) <= 1.0
    assert "accounting='zcdp'" in repr(z) and "accounting" not in repr(PrivacyBudget(1.0))


def test_zcdp_k_gaussian_means_cost_the_conversion_of_k_rho(df: pd.DataFrame) -> None:
    k, eps, dlt = 100, 0.5, 1e-8
    budget = PrivacyBudget(epsilon=5.0, delta=1e-5, accounting="zcdp")
    for _ in range(k):
        m = df.dp.mean("x", epsilon=eps, delta=dlt, budget=budget, **GAUSS)
    ledger = budget.ledger
    rho = ledger["rho"].iloc[0]
    assert (ledger["rho"] == rho).all() and (ledger["epsilon"] == eps).all()
    assert (ledger["delta"] == dlt).all()
    # the ledger's rho is that of the noise actually added: sum of (sens / sigma)^2 / 2,
    # the sum's sensitivity plus its grid step (about 1e-9 of it)
    meta = m.attrs["dp"]
    from_meta = float(((meta.sensitivity / meta.scale) ** 2 / 2).sum())
    assert rho == pytest.approx(from_meta, rel=1e-6) and rho >= from_meta
    spent = budget.spent
    assert spent.rho == pytest.approx(k * rho, rel=1e-12)
    # the releases' own deltas are not added: the budget's delta converts the total rho
    assert spent.delta == 1e-5
    assert spent.epsilon == pytest.approx(epsilon_for(k * rho, 1e-5), rel=1e-12)
    assert spent.epsilon < 5.0 <= 0.1 * k * eps  # basic composition would need 50
    assert ledger["charged_epsilon"].sum() == pytest.approx(spent.epsilon, rel=1e-12)
    assert (ledger["charged_epsilon"] > 0).all()
    left = budget.remaining
    assert left.rho == pytest.approx(budget.rho_budget - k * rho, rel=1e-9)
    assert left == (pytest.approx(epsilon_for(left.rho, 1e-5)), 1e-5)


def test_basic_k_gaussian_means_cost_the_sum(df: pd.DataFrame) -> None:
    k, eps, dlt = 100, 0.5, 1e-8
    budget = PrivacyBudget(epsilon=50.0, delta=1e-5)
    for _ in range(k):
        df.dp.mean("x", epsilon=eps, delta=dlt, budget=budget, **GAUSS)
    spent = budget.spent
    assert (spent.epsilon, spent.delta) == (pytest.approx(50.0), pytest.approx(1e-6))
    assert spent.rho == pytest.approx(budget.ledger["rho"].sum())  # informative only
    assert budget.remaining.rho == 0.0
    assert budget.ledger["charged_epsilon"].eq(eps).all()
    with pytest.raises(BudgetExceededError, match=r"only epsilon=\S+, delta=9e-06 remain"):
        df.dp.mean("x", epsilon=eps, delta=dlt, budget=budget, **GAUSS)
    assert len(budget.ledger) == k


def test_zcdp_laplace_release_costs_epsilon_squared_over_two(df: pd.DataFrame) -> None:
    budget = PrivacyBudget(epsilon=5.0, delta=1e-6, accounting="zcdp")
    df.dp.mean("x", epsilon=0.5, bounds=B, budget=budget)
    df.dp.count(epsilon=0.25, budget=budget)
    ledger = budget.ledger
    assert list(ledger["rho"]) == [pytest.approx(0.125, rel=1e-12), pytest.approx(0.03125)]
    assert budget.spent.rho == pytest.approx(0.15625, rel=1e-12)
    assert budget.spent.epsilon == pytest.approx(epsilon_for(0.15625, 1e-6), rel=1e-12)
    # in basic accounting the same releases have no rho and cost their epsilons
    basic = PrivacyBudget(epsilon=5.0)
    df.dp.mean("x", epsilon=0.5, bounds=B, budget=basic)
    assert np.isnan(basic.ledger["rho"].iloc[0]) and basic.spent == (0.5, 0.0)


def test_zcdp_is_fixed_a_release_is_never_admitted_by_another_accounting(
    df: pd.DataFrame,
) -> None:
    """A Laplace release whose epsilon fits is refused when its rho does not.

    (An accounting that took the best of basic and zCDP composition at each step
    would admit it; that rule is not known to be valid for adaptive releases.)
    """
    budget = PrivacyBudget(epsilon=1.0, delta=1e-6, accounting="zcdp")
    assert budget.rho_budget is not None and budget.rho_budget < 0.125
    with pytest.raises(BudgetExceededError, match=r"rho=0\.125"):
        df.dp.mean("x", epsilon=0.5, bounds=B, budget=budget)
    # a Gaussian release calibrated to the whole (epsilon, delta) converts to more
    with pytest.raises(BudgetExceededError, match="accounting='zcdp'"):
        df["x"].dp.count(epsilon=1.0, delta=1e-6, mechanism="gaussian", budget=budget)
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


def test_zcdp_a_gaussian_release_is_charged_its_rho_not_its_delta(df: pd.DataFrame) -> None:
    budget = PrivacyBudget(epsilon=1.0, delta=1e-9, accounting="zcdp")
    c = df["x"].dp.count(epsilon=0.5, delta=1e-5, mechanism="gaussian", budget=budget)
    assert budget.spent.rho == pytest.approx(_count_rho(c), rel=1e-9)
    assert budget.spent.delta == 1e-9


def test_nested_budgets_of_both_modes_refuse_atomically_before_reading(
    df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    kw = {"epsilon": 1.0, "delta": 1e-7, "mechanism": "gaussian"}
    rho = _count_rho(df["x"].dp.count(**kw))
    # a zCDP cap that ten releases fit (their epsilons add to 10) and eleven do not
    cap = epsilon_for(10.5 * rho, 1e-6)
    assert rho_for(cap, 1e-6) < 11 * rho and cap < 10.0
    outer = PrivacyBudget(epsilon=cap, delta=1e-6, accounting="zcdp", name="outer")
    inner = PrivacyBudget(epsilon=100.0, delta=1e-3, name="inner")
    with outer, inner:
        for _ in range(10):
            df["x"].dp.count(**kw)
        assert inner.spent == (pytest.approx(10.0), pytest.approx(1e-6))
        assert outer.spent.rho == pytest.approx(10 * rho, rel=1e-9)
        before = (outer.spent, inner.spent, len(outer.ledger), len(inner.ledger))

        def spy(*args: object, **kwargs: object) -> object:
            raise AssertionError("data was read")

        _no_reads(monkeypatch, spy)
        with pytest.raises(BudgetExceededError, match=r"'outer'.*needs rho=") as info:
            df["x"].dp.count(**kw)
        assert "'inner'" not in str(info.value)
        # now the basic inner budget refuses what the zCDP outer one would admit
        small = PrivacyBudget(epsilon=0.5, name="small")
        with small, pytest.raises(BudgetExceededError, match="'small'"):
            df["x"].dp.count(epsilon=1.0, delta=1e-9, mechanism="gaussian")
        assert small.ledger.empty
    after = (outer.spent, inner.spent, len(outer.ledger), len(inner.ledger))
    assert after == before


def test_zcdp_refuses_a_delta_without_rho_and_charges_nothing() -> None:
    zcdp = PrivacyBudget(epsilon=10.0, delta=1e-5, accounting="zcdp", name="z")
    basic = PrivacyBudget(epsilon=10.0, delta=1e-5)
    with basic, zcdp, pytest.raises(BudgetExceededError, match=r"no rho.*accounting='basic'"):
        charge_all(0.1, 1e-7, statistic="selection")
    assert basic.ledger.empty and zcdp.ledger.empty
    basic.charge(0.1, 1e-7)  # basic composition accounts it
    assert basic.spent == (0.1, 1e-7)


def test_zcdp_remaining_rho_fits_and_a_little_more_does_not() -> None:
    budget = PrivacyBudget(epsilon=2.0, delta=1e-5, accounting="zcdp")
    budget.charge(0.1, statistic="laplace")
    budget.charge(1.0, 1e-6, rho=0.01, statistic="gauss")
    left = budget.remaining
    assert left.rho == pytest.approx(budget.rho_budget - 0.015, rel=1e-12)
    with pytest.raises(BudgetExceededError):
        budget.charge(5.0, 1e-6, rho=left.rho * 1.001)
    budget.charge(5.0, 1e-6, rho=left.rho)  # epsilon and delta of the release do not count
    assert budget.spent.epsilon <= 2.0 * (1 + 1e-9)
    assert budget.remaining.rho == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetExceededError, match="only rho=0 "):
        budget.charge(1e-3)


def test_ledger_columns_and_reports_in_both_modes() -> None:
    for accounting in ("basic", "zcdp"):
        budget = PrivacyBudget(epsilon=5.0, delta=1e-5, accounting=accounting, name="study")
        budget.charge(0.5, statistic="a", mechanism="laplace")
        budget.charge(1.0, 1e-6, rho=0.02, statistic="b", mechanism="gaussian")
        ledger = budget.ledger
        assert list(ledger.columns[:8]) == [
            "time",
            "statistic",
            "columns",
            "epsilon",
            "delta",
            "rho",
            "charged_epsilon",
            "mechanism",
        ]
        assert ledger["rho"].iloc[1] == 0.02
        assert f"rho={budget.spent.rho:g}" in repr(budget)
        eps, dlt = budget.spent  # still a pair
        assert (eps, dlt) == budget.spent and budget.spent.epsilon == eps
        assert ledger["charged_epsilon"].sum() == pytest.approx(eps, rel=1e-12)
        if accounting == "basic":
            assert np.isnan(ledger["rho"].iloc[0])
            assert list(ledger["charged_epsilon"]) == [0.5, 1.0]
            assert budget.spent == (1.5, 1e-6) and budget.spent.rho == 0.02
            assert budget.remaining == (3.5, pytest.approx(9e-6))
        else:
            assert ledger["rho"].iloc[0] == pytest.approx(0.125, rel=1e-12)
            first = epsilon_for(0.125, 1e-5)
            assert ledger["charged_epsilon"].iloc[0] == pytest.approx(first, rel=1e-12)
            assert budget.spent == (pytest.approx(epsilon_for(0.145, 1e-5)), 1e-5)
            assert budget.spent.rho == pytest.approx(0.145, rel=1e-12)
    assert list(PrivacyBudget(1.0).ledger.columns)[5] == "rho"
    budget = PrivacyBudget(1.0, 1e-6, accounting="zcdp")
    assert budget.spent == (0.0, 0.0) and budget.spent.rho == 0.0
    with pytest.raises(ValueError, match="rho"):
        budget.charge(0.1, 1e-7, rho=-1.0)
    with pytest.raises(ValueError, match="rho"):
        charge_all(0.1, 1e-7, rho=float("nan"), budget=budget)


def test_deltas_adding_past_one_are_refused_not_an_error() -> None:
    budget = PrivacyBudget(epsilon=1.0, delta=0.9)
    budget.charge(0.1, 0.6, rho=0.01)
    with pytest.raises(BudgetExceededError, match="delta"):
        budget.charge(0.1, 0.6, rho=0.01)
    assert len(budget.ledger) == 1


def test_private_keys_spend_a_delta_a_zcdp_budget_refuses(
    df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Partition selection is approximate DP with no rho: basic budgets only."""
    frame = pd.DataFrame({"k": ["a"] * 500 + ["b"] * 500, "x": np.linspace(0, 1, 1000)})
    kw = {"epsilon": 1.0, "delta": 1e-7, "mechanism": "gaussian", "bounds": B}
    basic = PrivacyBudget(epsilon=5.0, delta=1e-5)
    frame.dp.groupby("k", keys="private", delta=1e-6).mean("x", budget=basic, **kw)
    assert basic.spent == (1.0, pytest.approx(1.1e-6)) and np.isnan(basic.ledger["rho"][0])
    zcdp = PrivacyBudget(epsilon=50.0, delta=1e-5, accounting="zcdp")

    def spy(*args: object, **kwargs: object) -> object:
        raise AssertionError("data was read")

    with monkeypatch.context() as patch:
        _no_reads(patch, spy)
        with pytest.raises(BudgetExceededError, match="no rho"):
            frame.dp.groupby("k", keys="private", delta=1e-6).mean("x", budget=zcdp, **kw)
    assert zcdp.ledger.empty
    # declared keys: a Gaussian grouped release has a rho, and a zCDP budget charges it
    frame.dp.groupby("k", keys=["a", "b"]).mean("x", budget=zcdp, **kw)
    assert zcdp.spent.rho > 0 and zcdp.ledger["rho"][0] == zcdp.spent.rho


_PAIR = pd.DataFrame(
    {
        "x": np.linspace(0.0, 1.0, 40),
        "y": np.linspace(1.0, 0.0, 40) ** 2,
        "r": ["a", "b"] * 20,
    }
)

#: Releases whose results must outlive their call's budget (a lock inside).
_WITH_BUDGET: dict[str, Callable[[PrivacyBudget], object]] = {
    "mean": lambda b: _PAIR.dp.mean(["x", "y"], epsilon=1.0, bounds=B, budget=b),
    "series mean": lambda b: _PAIR["x"].dp.mean(epsilon=1.0, bounds=B, budget=b),
    "cov": lambda b: _PAIR.dp.cov(["x", "y"], epsilon=1.0, bounds=B, budget=b),
    "corr": lambda b: _PAIR.dp.corr(["x", "y"], epsilon=1.0, bounds=B, budget=b),
    "cov direct": lambda b: _PAIR.dp.cov(
        ["x", "y"], epsilon=1.0, bounds=B, neighbouring="substitute", method="direct", budget=b
    ),
    "describe": lambda b: _PAIR.dp.describe(
        epsilon=1.0, bounds=B, categories={"r": ["a", "b"]}, budget=b
    ),
    "quantile": lambda b: _PAIR.dp.quantile(
        ["x", "y"], [0.25, 0.5], epsilon=1.0, bounds=B, budget=b
    ),
    "groupby mean": lambda b: _PAIR.dp.groupby("r", keys=["a", "b"]).mean(
        "x", epsilon=1.0, bounds=B, budget=b
    ),
    "value_counts": lambda b: _PAIR.dp.value_counts(
        "r", categories=["a", "b"], epsilon=1.0, budget=b
    ),
    "agg": lambda b: _PAIR.dp.agg({"x": ["mean", "median"]}, epsilon=1.0, bounds=B, budget=b),
}


@pytest.mark.parametrize("name", list(_WITH_BUDGET))
def test_a_result_made_with_a_budget_copies_and_pickles(name: str) -> None:
    """A result's metadata keeps what was released, never the call's settings: a
    result made with ``budget=`` can be copied, pickled and sliced like any pandas
    object, and its interval read afterwards (a covariance's once held the plan,
    and through it the budget's lock)."""
    result = _WITH_BUDGET[name](PrivacyBudget(epsilon=10.0))
    for made in (copy.deepcopy(result), pickle.loads(pickle.dumps(result))):
        assert made.attrs["dp"].epsilon == 1.0  # type: ignore[attr-defined]
        made.attrs["dp"].interval(0.05)  # type: ignore[attr-defined]
    if isinstance(result, pd.DataFrame | pd.Series):
        result.iloc[:1]
        result * 2
