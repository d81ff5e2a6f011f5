"""Durable budgets kept in a SQLite store, shared by threads, processes and runs.

The multi-process tests start real processes that share nothing with the test but
the file: ``forkserver`` children where it exists (forked from a server process that
has imported pandas_dp once, so they start fast, and never from the test's process),
``spawn`` children elsewhere.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sqlite3
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp import (
    BudgetExceededError,
    BudgetStoreError,
    PrivacyBudget,
    SQLiteBudgetStore,
    active_budgets,
    charge_all,
)
from pandas_dp.budget.amounts import LEDGER_COLUMNS

FRAME = pd.DataFrame({"x": np.linspace(0.0, 1.0, 20)})
B = (0.0, 1.0)


@pytest.fixture(autouse=True)
def no_budget_left_active() -> Iterator[None]:
    assert active_budgets() == ()
    yield
    assert active_budgets() == ()


def _fresh_processes() -> Any:
    """A multiprocessing context whose children inherit no state of this process."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["pandas_dp", "pandas_dp.accessor"])
        return ctx
    return multiprocessing.get_context("spawn")


@pytest.fixture
def path(tmp_path: Path) -> str:
    return str(tmp_path / "budget.sqlite")


# ----------------------------------------------------------------------------- basics


def test_a_stored_budget_is_charged_and_read_back_by_another_object(path: str) -> None:
    budget = PrivacyBudget(epsilon=1.0, store=path, name="survey", label="nightly 1")
    with budget:
        FRAME.dp.mean("x", epsilon=0.25, bounds=B)
    FRAME.dp.count(epsilon=0.25, budget=budget)
    again = PrivacyBudget(epsilon=1.0, store=path, name="survey")
    assert again.spent == (0.5, 0.0) and again.remaining == (0.5, 0.0)
    ledger = again.ledger
    assert list(ledger.columns[: len(LEDGER_COLUMNS)]) == list(LEDGER_COLUMNS)
    assert list(ledger["statistic"]) == ["mean", "count"]
    assert ledger["columns"].iloc[0] == ("x",) and ledger["label"].eq("nightly 1").all()
    assert str(ledger["time"].dtype).startswith("datetime64")
    assert "laplace" in repr(ledger["mechanism"].iloc[0]) or ledger["mechanism"].iloc[0]
    opened = PrivacyBudget.open(path, "survey")
    assert (opened.epsilon, opened.delta, opened.accounting) == (1.0, 0.0, "basic")
    assert "2 releases" in repr(opened) and "budget.sqlite" in repr(opened)
    with pytest.raises(BudgetExceededError, match="kept in"):
        again.charge(0.6)
    assert again.spent == (0.5, 0.0)


def test_the_stored_ledger_has_the_in_memory_ledgers_columns_and_types(path: str) -> None:
    memory = PrivacyBudget(epsilon=2.0, delta=1e-6, label="run")
    stored = PrivacyBudget(epsilon=2.0, delta=1e-6, store=path, name="s", label="run")
    entry: dict[str, Any] = {
        "statistic": "mean",
        "columns": ("age", 3),
        "mechanism": "gaussian",
        "groups": ("region", "sex"),
        "keys": "public",
        "n_keys": 4,
        "privacy_unit": "person",
        "contribution_bounds": {"max_rows_per_unit": 2, "max_groups_per_unit": 1},
        "split": {"age: bound_sums": 0.5, "age: counts": 0.5},
        "bounding": "clamp",
    }
    with memory, stored:
        charge_all(0.5, 1e-7, rho=0.01, **entry)
        charge_all(0.5, statistic="count")  # no grouping fields: the defaults
    left, right = memory.ledger, stored.ledger
    pd.testing.assert_frame_equal(left, right)
    assert right["columns"].iloc[0] == ("age", 3) and right["groups"].iloc[0] == ("region", "sex")
    assert right["groups"].iloc[1] == () and right["keys"].iloc[1] is None
    assert right["n_keys"].iloc[1] is None and right["contribution_bounds"].iloc[1] is None
    assert right["split"].iloc[0] == entry["split"]
    assert np.isnan(right["rho"].iloc[1])
    assert stored.spent == memory.spent and stored.remaining == memory.remaining


def test_a_different_cap_is_refused(path: str) -> None:
    PrivacyBudget(epsilon=1.0, delta=1e-6, store=path, name="survey")
    for kwargs in (
        {"epsilon": 2.0, "delta": 1e-6},
        {"epsilon": 1.0, "delta": 1e-5},
        {"epsilon": 1.0, "delta": 1e-6, "accounting": "zcdp"},
    ):
        with pytest.raises(BudgetStoreError, match="already holds a budget named 'survey'"):
            PrivacyBudget(store=path, name="survey", **kwargs)
    other = PrivacyBudget(epsilon=5.0, store=path, name="another")  # another name: fine
    assert other.spent == (0.0, 0.0)
    with pytest.raises(ValueError, match="needs a name"):
        PrivacyBudget(epsilon=1.0, store=path)
    with pytest.raises(BudgetStoreError, match="holds no budget named 'nope'"):
        PrivacyBudget.open(path, "nope")


def test_a_file_that_is_not_a_budget_store_is_refused(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("these are notes, not a budget\n" * 20)
    with pytest.raises(BudgetStoreError, match="not a pandas-dp budget store"):
        PrivacyBudget(epsilon=1.0, store=text, name="survey")
    assert text.read_text().startswith("these are notes")
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE customers (id INTEGER)")
    conn.close()
    before = other.read_bytes()
    with pytest.raises(BudgetStoreError, match="SQLite database but not a pandas-dp budget"):
        PrivacyBudget(epsilon=1.0, store=other, name="survey")
    assert other.read_bytes() == before
    future = tmp_path / "future.sqlite"
    PrivacyBudget(epsilon=1.0, store=future, name="survey")
    with sqlite3.connect(future) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(BudgetStoreError, match="version 99; this pandas-dp reads version 1"):
        PrivacyBudget(epsilon=1.0, store=future, name="survey")
    with pytest.raises(TypeError, match="store must be the path"):
        PrivacyBudget(epsilon=1.0, store=3, name="survey")  # type: ignore[arg-type]


def test_a_corrupt_file_gives_a_clear_error_and_charges_nothing(path: str) -> None:
    budget = PrivacyBudget(epsilon=1.0, store=path, name="survey")
    for _ in range(3):
        budget.charge(0.1, statistic="mean", columns=("x",))
    memory = PrivacyBudget(epsilon=1.0)
    data = bytearray(Path(path).read_bytes())
    for i in range(4096, len(data)):  # every page but the first (the file's schema)
        data[i] = (i * 7) % 251
    Path(path).write_bytes(bytes(data))
    with memory, pytest.raises(BudgetStoreError, match=r"corrupt.*nothing was charged"):
        FRAME.dp.mean("x", epsilon=0.1, bounds=B, budget=budget)
    assert Path(path).read_bytes() == bytes(data)  # nothing written
    assert memory.spent == (0.0, 0.0) and memory.ledger.empty  # nor charged in memory
    with pytest.raises(BudgetStoreError, match="corrupt"):
        PrivacyBudget(epsilon=1.0, store=path, name="survey")


def test_a_locked_file_gives_a_clear_error_and_charges_nothing(path: str) -> None:
    store = SQLiteBudgetStore(path, timeout=0.2)
    budget = PrivacyBudget(epsilon=1.0, store=store, name="survey")
    memory = PrivacyBudget(epsilon=1.0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with memory, pytest.raises(BudgetStoreError, match=r"locked .* more than 0\.2 s"):
            FRAME.dp.mean("x", epsilon=0.1, bounds=B, budget=budget)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty
    assert memory.spent == (0.0, 0.0)
    budget.charge(0.1)  # usable again once the other transaction ends
    assert budget.spent == (0.1, 0.0)


def test_zcdp_accounting_in_a_store_matches_memory(path: str) -> None:
    kwargs: dict[str, Any] = {"epsilon": 1.0, "delta": 1e-6, "accounting": "zcdp"}
    memory = PrivacyBudget(**kwargs)
    stored = PrivacyBudget(**kwargs, store=path, name="z")
    for budget in (memory, stored):
        budget.charge(0.1, statistic="count")  # pure: rho = 0.005
        budget.charge(0.5, 1e-7, rho=0.008, statistic="mean", mechanism="gaussian")
        with pytest.raises(BudgetExceededError, match="accounts in zCDP"):
            budget.charge(0.1, 1e-7, statistic="groupby")  # a delta without a rho
        with pytest.raises(BudgetExceededError, match="only rho="):
            budget.charge(0.5, 1e-7, rho=1.0)
    reopened = PrivacyBudget(**kwargs, store=path, name="z")
    assert reopened.spent == memory.spent and reopened.spent.rho == memory.spent.rho
    assert reopened.remaining.rho == memory.remaining.rho
    assert list(reopened.ledger["rho"]) == list(memory.ledger["rho"])
    assert list(reopened.ledger["charged_epsilon"]) == list(memory.ledger["charged_epsilon"])


def test_nested_with_an_in_memory_budget_the_refusal_is_atomic(path: str) -> None:
    memory = PrivacyBudget(epsilon=0.5, name="question")
    stored = PrivacyBudget(epsilon=1.0, store=path, name="project")
    with stored, memory:
        FRAME.dp.mean("x", epsilon=0.3, bounds=B)
        with pytest.raises(BudgetExceededError, match="'question'"):
            FRAME.dp.mean("x", epsilon=0.3, bounds=B)  # memory refuses: store untouched
    assert stored.spent == (0.3, 0.0) and len(stored.ledger) == 1
    big = PrivacyBudget(epsilon=10.0)
    with big, stored:
        with pytest.raises(BudgetExceededError, match="'project'"):
            FRAME.dp.mean("x", epsilon=0.8, bounds=B)  # the store refuses: memory untouched
        assert big.spent == (0.0, 0.0) and big.ledger.empty
        # a second object opening the same budget is the same budget: charged once
        twin = PrivacyBudget(epsilon=1.0, store=path, name="project")
        FRAME.dp.mean("x", epsilon=0.2, bounds=B, budget=twin)
    assert stored.spent == (pytest.approx(0.5), 0.0) and len(stored.ledger) == 2


def test_threads_racing_on_a_stored_budget_never_overspend(path: str) -> None:
    budget = PrivacyBudget(epsilon=1.0, store=path, name="survey")
    outcomes: list[str] = []
    start = threading.Barrier(4)

    def worker() -> None:
        start.wait()
        for _ in range(5):
            try:
                charge_all(0.1, budget=budget, statistic="mean")
                outcomes.append("ok")
            except BudgetExceededError:
                outcomes.append("refused")

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 10 and len(budget.ledger) == 10
    assert budget.spent[0] == pytest.approx(1.0)


def test_a_stored_budget_pickles_as_its_store_and_name(path: str) -> None:
    budget = PrivacyBudget(epsilon=1.0, store=path, name="survey", label="x")
    budget.charge(0.25)
    copy = pickle.loads(pickle.dumps(budget))
    assert copy is not budget and copy.label == "x" and copy.spent == (0.25, 0.0)
    copy.charge(0.25)
    assert budget.spent == (0.5, 0.0)


# ----------------------------------------------------------------------------- processes


def _race(path: str, name: str, budget: PrivacyBudget | None, go: Any, queue: Any) -> None:
    """Ten releases of epsilon = 0.1, in a spawned process; report how many passed."""
    if budget is None:  # opened by path and name
        budget = PrivacyBudget(epsilon=1.0, store=path, name=name, label=f"pid {os.getpid()}")
    go.wait(60)
    passed = 0
    with budget:  # (a budget received pickled: its `with` block caps this process)
        for _ in range(10):
            try:
                FRAME.dp.mean("x", epsilon=0.1, bounds=B)
                passed += 1
            except BudgetExceededError:
                pass
    queue.put((budget.label is not None, passed))


def test_four_processes_racing_ten_releases_succeed_ten_times_in_all(path: str) -> None:
    ctx = _fresh_processes()
    budget = PrivacyBudget(epsilon=1.0, store=path, name="survey")
    go, queue = ctx.Event(), ctx.Queue()
    with budget:  # processes started inside the block, opening the same store
        children = [
            ctx.Process(target=_race, args=(path, "survey", budget if i % 2 else None, go, queue))
            for i in range(4)
        ]
        for child in children:
            child.start()
        go.set()
        outcomes = [queue.get(timeout=120) for _ in children]
        for child in children:
            child.join(timeout=60)
    assert sum(passed for _, passed in outcomes) == 10, outcomes
    assert len(budget.ledger) == 10 and budget.spent[0] == pytest.approx(1.0)
    by_path = sum(passed for labelled, passed in outcomes if labelled)
    assert budget.ledger["label"].notna().sum() == by_path  # the label of each object


def _charge_then_die(path: str) -> None:
    """A release whose process is killed after the charge, before the data is read."""
    import pandas_dp.plan.running as running

    def killed(*args: Any, **kwargs: Any) -> Any:
        os.kill(os.getpid(), signal.SIGKILL)

    running.exact_values = killed  # type: ignore[assignment]
    budget = PrivacyBudget(epsilon=1.0, store=path, name="survey")
    FRAME.dp.mean("x", epsilon=0.3, bounds=B, budget=budget)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_process_killed_between_the_charge_and_the_release_leaves_the_charge(
    path: str,
) -> None:
    budget = PrivacyBudget(epsilon=1.0, store=path, name="survey")
    child = _fresh_processes().Process(target=_charge_then_die, args=(path,))
    child.start()
    child.join(timeout=120)
    assert child.exitcode == -signal.SIGKILL
    assert budget.spent == (0.3, 0.0)
    assert list(budget.ledger["statistic"]) == ["mean"]
    assert pandas_dp.PrivacyBudget.open(path, "survey").remaining == (0.7, 0.0)


# ----------------------------------------------------------------------------- the CLI


def test_two_cli_runs_share_one_stored_budget_the_second_refused_when_over(
    path: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pandas_dp import cli

    reads = []
    read_table = cli.read_table

    def counting(*args: Any, **kwargs: Any) -> Any:
        reads.append(1)
        return read_table(*args, **kwargs)

    monkeypatch.setattr(cli, "read_table", counting)
    argv = ["describe", "--example", "--columns", "age", "--seed", "0"]
    shared = ["--budget-store", path, "--budget-name", "nightly", "--budget-epsilon", "1"]
    assert cli.main([*argv, "--epsilon", "0.6", *shared, "--budget-label", "night 1"]) == 0
    out = capsys.readouterr().out
    assert "Shared budget 'nightly'" in out and "epsilon 0.4" in out and len(reads) == 1
    assert cli.main([*argv, "--epsilon", "0.6", *shared]) == 2  # over: refused
    err = capsys.readouterr().err
    assert "only epsilon=0.4" in err and "data was not read" in err and len(reads) == 1
    assert cli.main([*argv, "--epsilon", "0.4", *shared[:4]]) == 0  # the recorded cap
    budget = PrivacyBudget.open(path, "nightly")
    assert budget.spent == (1.0, 0.0) and len(reads) == 2
    ledger = budget.ledger
    assert list(ledger["statistic"]) == ["pandas-dp describe"] * 2
    assert list(ledger["label"]) == ["night 1", None] and ledger["columns"].iloc[0] == ("age",)
    # a different cap, a missing budget, half the flags: usage errors, nothing read
    assert cli.main([*argv, "--epsilon", "0.1", *shared[:4], "--budget-epsilon", "2"]) == 2
    assert "already holds a budget named 'nightly'" in capsys.readouterr().err
    assert cli.main([*argv, "--epsilon", "0.1", "--budget-store", path, "--budget-name", "x"]) == 2
    assert "--budget-epsilon" in capsys.readouterr().err
    assert cli.main([*argv, "--epsilon", "0.1", "--budget-store", path]) == 2
    assert "go together" in capsys.readouterr().err
    assert len(reads) == 2
