"""The release record: deferred fields are built once, on first read, and read as
eager ones would."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401  (registers the accessor)
from pandas_dp.result.values import DPFloat, DPMetadata, deferred


def _meta(build_count: list[int]) -> DPMetadata:
    def build() -> pd.Series:
        build_count.append(1)
        return pd.Series([1.0, 2.5], index=["x: count", "x: centred_sum"])

    return DPMetadata(
        "mean", ("x",), "laplace", 1.0, 0.0, "add_remove", None,
        deferred(build), 4.0, {"x": (0.0, 1.0)}, (0.0, 1.0), "bit", True, 0.5,
    )  # fmt: skip


def test_deferred_field_is_built_once_on_first_read():
    calls: list[int] = []
    meta = _meta(calls)
    assert calls == []  # making the record builds nothing
    sens = meta.sensitivity
    assert isinstance(sens, pd.Series) and sens["x: centred_sum"] == 2.5
    assert meta.sensitivity is sens
    assert calls == [1]


def test_deferred_fields_serialise_and_print_like_eager_ones():
    meta = _meta([])
    d = meta.to_dict()
    assert d["sensitivity"] == {"x: count": 1.0, "x: centred_sum": 2.5}
    json.dumps(d)
    assert "x: centred_sum: 2.5" in str(meta)
    assert "deferred" not in repr(meta)


def test_deferred_record_survives_a_deep_copy():
    """pandas deep-copies ``attrs`` onto derived objects: the copy reads the same."""
    meta = _meta([])
    twin = copy.deepcopy(meta)
    assert twin.sensitivity.equals(meta.sensitivity)


def test_release_metadata_reads_as_before():
    """A scalar release's sensitivity and scale are Series keyed by measurement
    (built on first read), and ``*`` keeps the record on a Series result."""
    s = pd.Series(np.linspace(0, 100, 100), name="x")
    r = s.dp.mean(epsilon=1.0, bounds=(0, 100), random_state=0)
    assert isinstance(r, DPFloat)
    meta = r.attrs["dp"]
    assert list(meta.sensitivity.index) == ["x: bound_sums"]
    assert isinstance(meta.scale, pd.Series) and meta.scale.index.equals(meta.sensitivity.index)
    df = pd.DataFrame({"a": s, "b": s})
    out = df.dp.mean(epsilon=1.0, bounds=(0, 100), random_state=0)
    doubled = out * 2
    assert doubled.attrs["dp"].sensitivity.equals(out.attrs["dp"].sensitivity)
