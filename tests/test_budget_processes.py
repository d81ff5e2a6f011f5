"""An in-memory budget belongs to the process that made it (issue 30, finding 3).

A forked child gets a *copy* of every in-memory budget: charging the copy spent
nothing the parent could see, so four children each released epsilon = 0.9 under a
``with budget:`` of 1.0. An in-memory budget now refuses every charge from a process
other than its owner, before the data is read, with
:class:`~pandas_dp.errors.BudgetProcessError`, which names the durable budget.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import PrivacyBudget, active_budgets

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or "fork" not in multiprocessing.get_all_start_methods(),
    reason="needs the fork start method",
)

FRAME = pd.DataFrame({"x": np.linspace(0.0, 1.0, 20)})


@pytest.fixture(autouse=True)
def no_budget_left_active() -> Iterator[None]:
    assert active_budgets() == ()
    yield
    assert active_budgets() == ()


def _release_in_child(queue: Any) -> None:
    """A forked child's release of epsilon = 0.9 (the parent's block is open)."""
    try:
        FRAME.dp.mean("x", epsilon=0.9, bounds=(0.0, 1.0))
        queue.put(("released", ""))
    except Exception as err:
        queue.put((type(err).__name__, str(err)))


def test_forked_children_cannot_charge_a_copy_of_an_in_memory_budget() -> None:
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    budget = PrivacyBudget(epsilon=1.0, name="parent")
    with budget:
        children = [ctx.Process(target=_release_in_child, args=(queue,)) for _ in range(4)]
        for child in children:
            child.start()
        outcomes = [queue.get(timeout=60) for _ in children]
        for child in children:
            child.join(timeout=60)
    kinds = [kind for kind, _ in outcomes]
    assert kinds == ["BudgetProcessError"] * 4, outcomes
    message = outcomes[0][1]
    assert "store=" in message and "name=" in message  # points to the durable budget
    assert str(os.getpid()) in message  # names the owner
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty
    assert issubclass(pandas_dp.BudgetProcessError, RuntimeError)


def _charge_default_in_child(queue: Any) -> None:
    try:
        pandas_dp.charge_all(0.1, statistic="count")
        queue.put("charged")
    except pandas_dp.BudgetProcessError:
        queue.put("refused")


def test_a_forked_child_cannot_charge_the_default_budget_either() -> None:
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    budget = PrivacyBudget(epsilon=1.0)
    pandas_dp.set_default_budget(budget)
    try:
        child = ctx.Process(target=_charge_default_in_child, args=(queue,))
        child.start()
        outcome = queue.get(timeout=60)
        child.join(timeout=60)
    finally:
        pandas_dp.set_default_budget(None)
    assert outcome == "refused"
    budget.charge(0.5)  # the owner still charges it
    assert budget.spent == (0.5, 0.0)


def test_forked_children_share_a_stored_budget(tmp_path: Any) -> None:
    """The same four children under a budget kept in a store: exactly one fits."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    budget = PrivacyBudget(epsilon=1.0, store=tmp_path / "b.sqlite", name="shared")
    with budget:
        children = [ctx.Process(target=_release_in_child, args=(queue,)) for _ in range(4)]
        for child in children:
            child.start()
        outcomes = [queue.get(timeout=60) for _ in children]
        for child in children:
            child.join(timeout=60)
    kinds = sorted(kind for kind, _ in outcomes)
    assert kinds == ["BudgetExceededError"] * 3 + ["released"], outcomes
    assert budget.spent == (0.9, 0.0) and len(budget.ledger) == 1


def _report_active(queue: Any) -> None:
    queue.put(len(pandas_dp.active_budgets()))


def test_a_spawned_child_sees_no_in_memory_budget() -> None:
    """Documented: a spawned process starts afresh; it must open a stored budget."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    with PrivacyBudget(epsilon=1.0):
        child = ctx.Process(target=_report_active, args=(queue,))
        child.start()
        active = queue.get(timeout=120)
        child.join(timeout=60)
    assert active == 0
