"""Every public accessor method keeps its signature.

The methods are made from catalogue entries and shared keyword lists
(:mod:`pandas_dp.accessor._methods`) rather than written per class; this holds
each one -- on ``df.dp``, ``s.dp``, ``df.dp(...)``, ``df.dp.groupby(...)``,
``g[column]`` and the Dask accessors -- to the parameters it had when they were
written out: the same names, in the same order, of the same kinds, with the same
defaults. ``tests/data/accessor_signatures.json`` is that record; regenerate it
only for an intended change of the API (``python tests/test_accessor_signatures.py
--write``) and say so in the changelog.
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp.errors import MissingBoundsError

SNAPSHOT = Path(__file__).resolve().parent / "data" / "accessor_signatures.json"


def _parameters(method: Any) -> list[list[str]]:
    """``[name, kind, repr(default)]`` per parameter (``self`` is not in a bound method's)."""
    return [
        [p.name, p.kind.name, "<required>" if p.default is p.empty else repr(p.default)]
        for p in inspect.signature(method).parameters.values()
    ]


def _methods(accessor: Any) -> dict[str, list[list[str]]]:
    return {
        name: _parameters(getattr(accessor, name))
        for name in sorted(dir(accessor))
        if not name.startswith("_") and callable(getattr(accessor, name))
    }


PANDAS = (
    "df.dp",
    "s.dp",
    "df.dp(...)",
    "df.dp.groupby(...)",
    "g[column]",
    "df.dp(...).groupby(...)",
)
DASK = ("ddf.dp", "dseries.dp", "ddf.dp.groupby(...)")


def _accessors(dask: bool) -> dict[str, Any]:
    # (Any: pandas' stubs read ``.dp`` as a column)
    df: Any = pd.DataFrame({"g": ["a", "b"] * 3, "x": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]})
    g = df.dp.groupby("g", keys=["a", "b"])
    out: dict[str, Any] = {
        "df.dp": df.dp,
        "s.dp": df["x"].dp,
        "df.dp(...)": df.dp(bounds=(0, 1)),
        "df.dp.groupby(...)": g,
        "g[column]": g["x"],
        "df.dp(...).groupby(...)": df.dp(bounds=(0, 1)).groupby("g", keys=["a", "b"]),
    }
    if dask:
        import dask.dataframe as dd

        ddf = dd.from_pandas(df, npartitions=2)
        out["ddf.dp"] = ddf.dp
        out["dseries.dp"] = ddf["x"].dp
        out["ddf.dp.groupby(...)"] = ddf.dp.groupby("g", keys=["a", "b"])
    return out


def current(dask: bool = True) -> dict[str, dict[str, list[list[str]]]]:
    """Every accessor's public methods and their parameters, as the code has them now."""
    return {name: _methods(acc) for name, acc in _accessors(dask).items()}


def _recorded() -> dict[str, dict[str, list[list[str]]]]:
    recorded: dict[str, dict[str, list[list[str]]]] = json.loads(
        SNAPSHOT.read_text(encoding="utf-8")
    )
    return recorded


@pytest.mark.parametrize("accessor", PANDAS)
def test_pandas_accessor_signatures_are_unchanged(accessor: str) -> None:
    now = current(dask=False)[accessor]
    was = _recorded()[accessor]
    assert sorted(now) == sorted(was), "methods added or removed"
    for name in was:
        assert now[name] == was[name], f"{accessor}.{name} changed its signature"


@pytest.mark.parametrize("accessor", DASK)
def test_dask_accessor_signatures_are_unchanged(accessor: str) -> None:
    pytest.importorskip("dask.dataframe")
    now = current(dask=True)[accessor]
    was = _recorded()[accessor]
    assert sorted(now) == sorted(was), "methods added or removed"
    for name in was:
        assert now[name] == was[name], f"{accessor}.{name} changed its signature"


def test_the_snapshot_covers_every_method_of_every_accessor() -> None:
    """The record is not empty or partial: each accessor's usual releases are in it."""
    recorded = _recorded()
    assert sorted(recorded) == sorted(PANDAS + DASK)
    for accessor in ("df.dp", "s.dp", "df.dp.groupby(...)", "ddf.dp"):
        for name in ("mean", "median", "quantile", "value_counts", "describe", "agg"):
            assert name in recorded[accessor], (accessor, name)
    assert "epsilon" in [p[0] for p in recorded["df.dp"]["cov"]]


def test_every_release_method_is_made_from_its_catalogue_entry() -> None:
    """No release method is written per class: each public method of an accessor is
    compiled from the catalogue entry that names it (``groupby`` itself aside), and
    the catalogue offers nothing an accessor lacks."""
    from pandas_dp.accessor.frame import DPFrameAccessor
    from pandas_dp.accessor.groupby import DPGroupBy
    from pandas_dp.accessor.series import DPSeriesAccessor
    from pandas_dp.stats.catalogue import METHODS, MOMENTS

    entries: list[Any] = [*MOMENTS.values(), *METHODS.values()]
    for cls, kind in (
        (DPFrameAccessor, "frame"),
        (DPSeriesAccessor, "series"),
        (DPGroupBy, "groupby"),
    ):
        offered = {e.name for e in entries if kind in e.accessors}
        public = {n for n, _ in inspect.getmembers(cls, inspect.isfunction) if n[0] != "_"}
        assert public - offered == ({"groupby"} if kind == "frame" else set())
        assert offered <= public
        for name in offered:
            made = getattr(cls, name)
            assert made.__code__.co_filename == f"<pandas_dp {kind}.{name}>", (kind, name)
            assert made.__qualname__ == f"{cls.__name__}.{name}"


def test_a_call_reads_as_one_to_a_written_method() -> None:
    """Python's own messages name the accessor's method, as for a written one."""
    df: Any = pd.DataFrame({"x": [0.5]})
    with pytest.raises(TypeError, match=r"DPFrameAccessor\.counts\(\) missing .*'queries'"):
        df.dp.counts(epsilon=1.0)
    # (df.dp.value_counts() with no column counts every column, like pandas: it asks
    # for their categories, issue 32)
    with pytest.raises(MissingBoundsError, match="'x'"):
        df.dp.value_counts(epsilon=1.0)
    with pytest.raises(TypeError, match=r"DPGroupBy\.quantile\(\) got an unexpected .*'bonds'"):
        df.dp.groupby("x", keys=[0.5]).quantile("x", epsilon=1.0, bonds=(0, 1))


if __name__ == "__main__" and "--write" in sys.argv:
    SNAPSHOT.parent.mkdir(exist_ok=True)
    SNAPSHOT.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
