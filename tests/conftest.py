"""Shared test set-up: importing pandas_dp registers the ``.dp`` accessors."""

from typing import Any

import pytest

import pandas_dp  # noqa: F401


@pytest.fixture
def spies(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count how often the command line reads a data file's header and body."""
    from pandas_dp import cli  # (only for the tests that ask: the CLI imports pandera)

    calls = {"header": 0, "table": 0}
    header, table = cli.read_header, cli.read_table

    def spy_header(*args: Any, **kwargs: Any) -> Any:
        calls["header"] += 1
        return header(*args, **kwargs)

    def spy_table(*args: Any, **kwargs: Any) -> Any:
        calls["table"] += 1
        return table(*args, **kwargs)

    monkeypatch.setattr(cli, "read_header", spy_header)
    monkeypatch.setattr(cli, "read_table", spy_table)
    return calls


@pytest.fixture
def charges(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statistic of every plan charge, in order (a release's budget charges)."""
    from pandas_dp.plan.running import PlanRun

    seen: list[str] = []
    charge = PlanRun.charge

    def spy(self: PlanRun, statistic: str, *args: Any, **kwargs: Any) -> None:
        seen.append(statistic)
        charge(self, statistic, *args, **kwargs)

    monkeypatch.setattr(PlanRun, "charge", spy)
    return seen
