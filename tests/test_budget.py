"""PrivacyBudget: activation, explicit budgets, the ledger, atomicity under threads."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import BudgetExceededError, PrivacyBudget

B = (0.0, 1.0)


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


def test_overspending_raises_before_reading_and_records_nothing(
    df: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    budget.charge(0.9, statistic="earlier")
    reads: list[str] = []

    def spy(*args: object, **kwargs: object) -> object:
        reads.append("read")
        raise AssertionError("data was read")

    monkeypatch.setattr(pandas_dp.backends, "moments", spy)
    monkeypatch.setattr(pandas_dp.backends, "non_null_count", spy)
    with budget, pytest.raises(BudgetExceededError, match="remain"):
        df.dp.mean("x", epsilon=0.2, bounds=B)
    with pytest.raises(BudgetExceededError):
        df.dp.count(epsilon=0.2, budget=budget)
    assert reads == []
    assert budget.spent[0] == pytest.approx(0.9)
    assert len(budget.ledger) == 1
    assert isinstance(BudgetExceededError("x"), RuntimeError)


def test_explicit_budget_wins_over_active(df: pd.DataFrame) -> None:
    outer, explicit = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    with outer:
        df.dp.mean("x", epsilon=0.5, bounds=B, budget=explicit)
    assert outer.spent[0] == 0.0 and explicit.spent[0] == 0.5


def test_nested_blocks_restore_the_outer_budget(df: pd.DataFrame) -> None:
    outer, inner = PrivacyBudget(epsilon=1.0), PrivacyBudget(epsilon=1.0)
    with outer:
        with inner:
            df.dp.mean("x", epsilon=0.1, bounds=B)
            with inner:  # re-entering the same budget is fine
                df.dp.mean("x", epsilon=0.1, bounds=B)
        df.dp.mean("x", epsilon=0.3, bounds=B)
    assert inner.spent[0] == pytest.approx(0.2) and outer.spent[0] == pytest.approx(0.3)


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


def test_active_budget_is_per_thread(df: pd.DataFrame) -> None:
    budget = PrivacyBudget(epsilon=1.0)
    seen: list[object] = []
    with budget:
        t = threading.Thread(target=lambda: seen.append(pandas_dp.active_budget()))
        t.start()
        t.join()
    assert seen == [None]  # a new thread starts with no active budget


def test_repr_mentions_spending() -> None:
    budget = PrivacyBudget(epsilon=2.0)
    budget.charge(0.5)
    assert "spent epsilon=0.5" in repr(budget)
