"""The engine registry: the data's type picks the engine; a registered engine
computes the whole release (DESIGN.md, "A new engine is one package")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp  # noqa: F401
from pandas_dp.engines import in_memory, registry
from pandas_dp.engines.in_memory import PANDAS, PandasEngine
from pandas_dp.engines.protocol import Engine
from pandas_dp.engines.registry import engine_for, register_engine


class TaggedFrame(pd.DataFrame):
    """A DataFrame subclass that keeps its type through pandas operations."""

    @property
    def _constructor(self) -> type[TaggedFrame]:
        return TaggedFrame


class RecordingEngine(PandasEngine):
    """The in-memory engine, recording what it was asked."""

    name = "recording"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def exact_values(self, measurements: Any, data: Any) -> Any:
        ms = list(measurements)
        self.calls.append("exact_values")
        return super().exact_values(ms, data)

    def groups(self, *args: Any) -> Any:
        self.calls.append("groups")
        return super().groups(*args)


def test_pandas_objects_get_the_in_memory_engine() -> None:
    assert engine_for(pd.Series([1.0])) is PANDAS
    assert engine_for(pd.DataFrame({"x": [1]})) is PANDAS
    assert engine_for(np.arange(3)) is PANDAS
    assert isinstance(PANDAS, Engine)


def test_dask_collections_get_the_dask_engine() -> None:
    dd = pytest.importorskip("dask.dataframe")
    frame = dd.from_pandas(pd.DataFrame({"x": [1.0, 2.0]}), npartitions=1)
    assert engine_for(frame).name == "dask"
    assert engine_for(frame["x"]).name == "dask"
    assert isinstance(engine_for(frame), Engine)


def test_register_engine_refuses_an_object_without_the_protocol() -> None:
    with pytest.raises(TypeError, match="does not implement the engine protocol"):
        register_engine(TaggedFrame, object())  # type: ignore[arg-type]


def test_a_registered_engine_computes_the_release(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = RecordingEngine()
    monkeypatch.setitem(registry._ENGINES, TaggedFrame, engine)
    rng = np.random.default_rng(3)
    plain = pd.DataFrame({"x": rng.uniform(0, 10, 200), "g": rng.choice(["a", "b"], 200)})
    tagged = TaggedFrame(plain)
    assert engine_for(tagged) is engine

    got = tagged.dp.mean("x", epsilon=1.0, bounds=(0, 10), random_state=7)
    want = plain.dp.mean("x", epsilon=1.0, bounds=(0, 10), random_state=7)
    assert engine.calls == ["exact_values"]
    assert float(got) == float(want)

    engine.calls.clear()
    g = tagged.dp.groupby("g", keys=["a", "b"]).mean(
        "x", epsilon=1.0, bounds=(0, 10), random_state=7
    )
    h = plain.dp.groupby("g", keys=["a", "b"]).mean(
        "x", epsilon=1.0, bounds=(0, 10), random_state=7
    )
    assert engine.calls == ["groups", "exact_values"]
    pd.testing.assert_series_equal(g, h)


def test_a_subclass_gets_its_parents_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    class Child(TaggedFrame):
        pass

    engine = RecordingEngine()
    monkeypatch.setitem(registry._ENGINES, TaggedFrame, engine)
    assert engine_for(Child({"x": [1.0]})) is engine
    assert in_memory.PANDAS is PANDAS


@pytest.mark.parametrize("first", ["pandas_dp.accessor.dask", "pandas_dp.engines.dask"])
def test_importing_the_dask_modules_first_keeps_ddf_dp(first: str) -> None:
    """Importing the Dask modules before dask.dataframe (as doctest collection does)
    must not break the accessor's registration: the engine module imports no Dask
    collection until its data arrives."""
    pytest.importorskip("dask.dataframe")
    import subprocess
    import sys

    program = (
        f"import warnings; warnings.simplefilter('error'); import {first}\n"
        "import pandas as pd, dask.dataframe as dd\n"
        "d = dd.from_pandas(pd.DataFrame({'x': [1.0, 2.0]}), npartitions=1)\n"
        "print(float(d.dp.mean('x', epsilon=1e6, bounds=(0, 3), random_state=0)))\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert abs(float(done.stdout) - 1.5) < 1e-3
