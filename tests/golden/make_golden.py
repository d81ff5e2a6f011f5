"""Seeded releases of the public API, recorded bit for bit.

The package's core is being re-laid (issue 31) with one invariant: every seeded
release (``random_state=``) stays bit-identical, unless a change says otherwise in
the changelog. This module names one call per case, each on the bundled survey
(or a small frame with several rows per person), and turns each result into plain
JSON: floats as ``float.hex`` (exact), the index, the columns and the 95 %
interval. ``tests/test_golden_releases.py`` compares the live results with the
recorded ones; after an *intended* change, re-record with::

    python tests/golden/make_golden.py

and say in the changelog which releases changed and why.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp  # noqa: F401  (registers .dp)
from pandas_dp.datasets import load_survey, survey_schema

HERE = Path(__file__).parent
RECORD = HERE / "releases.json"

Case = Callable[[pd.DataFrame, Any, pd.DataFrame], Any]


def _units() -> pd.DataFrame:
    """A small frame with several rows per person and a group column (public keys)."""
    rng = np.random.default_rng(7)
    n = 300
    return pd.DataFrame(
        {
            "pid": rng.integers(0, 80, n),
            "x": rng.uniform(0, 10, n).round(2),
            "g": rng.choice(["a", "b", "c"], n),
        }
    )


S = {"random_state": 11}
CASES: dict[str, Case] = {
    "len": lambda df, sc, u: df.dp.len(epsilon=1.0, **S),
    "count": lambda df, sc, u: df.dp.count(epsilon=1.0, schema=sc, **S),
    "sum": lambda df, sc, u: df.dp.sum("age", epsilon=1.0, schema=sc, **S),
    "mean": lambda df, sc, u: df.dp.mean(["age", "income"], epsilon=1.0, schema=sc, **S),
    "mean_gaussian": lambda df, sc, u: df.dp.mean(
        "age", epsilon=1.0, delta=1e-6, mechanism="gaussian", schema=sc, **S
    ),
    "mean_truncated": lambda df, sc, u: df.dp.mean(
        "age", epsilon=1.0, bounding="truncated", schema=sc, **S
    ),
    "mean_none": lambda df, sc, u: df.dp.mean("age", epsilon=1.0, bounding="none", schema=sc, **S),
    "mean_direct": lambda df, sc, u: df.dp.mean(
        "age", epsilon=1.0, neighbouring="substitute", method="direct", schema=sc, **S
    ),
    "var": lambda df, sc, u: df.dp.var("hours_per_week", epsilon=1.0, schema=sc, **S),
    "std": lambda df, sc, u: df["age"].dp.std(epsilon=1.0, schema=sc, **S),
    "value_counts": lambda df, sc, u: df["region"].dp.value_counts(epsilon=1.0, schema=sc, **S),
    "proportions": lambda df, sc, u: df["region"].dp.proportions(epsilon=1.0, schema=sc, **S),
    "contingency": lambda df, sc, u: df.dp.value_counts(
        ["region", "smoker"], epsilon=1.0, schema=sc, **S
    ),
    "counts": lambda df, sc, u: df.dp.counts(
        {"old": "age > 60", "long": "hours_per_week > 45"}, epsilon=1.0, **S
    ),
    "quantile": lambda df, sc, u: df.dp.quantile(
        "age", [0.25, 0.5, 0.75], epsilon=1.0, schema=sc, **S
    ),
    "median": lambda df, sc, u: df["income"].dp.median(epsilon=1.0, schema=sc, **S),
    "median_tree": lambda df, sc, u: df["age"].dp.median(
        epsilon=1.0, schema=sc, method="tree", **S
    ),
    "cov": lambda df, sc, u: df.dp.cov(["age", "hours_per_week"], epsilon=1.0, schema=sc, **S),
    "corr": lambda df, sc, u: df.dp.corr(["age", "hours_per_week"], epsilon=1.0, schema=sc, **S),
    "describe": lambda df, sc, u: df.dp.describe(epsilon=1.0, schema=sc, **S),
    "agg": lambda df, sc, u: df.dp.agg(
        {"age": ["mean", "std", "median"], "income": "sum"}, epsilon=1.0, schema=sc, **S
    ),
    "groupby_mean": lambda df, sc, u: df.dp.groupby("region").mean(
        "age", epsilon=1.0, schema=sc, **S
    ),
    "groupby_len": lambda df, sc, u: df.dp.groupby("region").len(epsilon=1.0, schema=sc, **S),
    "groupby_median": lambda df, sc, u: df.dp.groupby("smoker").median(
        "age", epsilon=1.0, schema=sc, **S
    ),
    "groupby_describe": lambda df, sc, u: df.dp.groupby("region").describe(
        ["age"], epsilon=1.0, schema=sc, **S
    ),
    "groupby_private": lambda df, sc, u: df.dp.groupby("region", keys="private", delta=1e-6).len(
        epsilon=1.0, **S
    ),
    "unit_mean": lambda df, sc, u: u.dp.mean(
        "x", epsilon=1.0, bounds=(0, 10), privacy_unit="pid", max_rows_per_unit=3, **S
    ),
    "unit_groupby_private": lambda df, sc, u: u.dp.groupby("g", keys="private", delta=1e-6).len(
        epsilon=1.0, privacy_unit="pid", max_rows_per_unit=3, **S
    ),
    "unit_groupby_public": lambda df, sc, u: u.dp.groupby("g", keys=["a", "b", "c"]).sum(
        "x", epsilon=1.0, bounds=(0, 10), privacy_unit="pid", max_rows_per_unit=3, **S
    ),
}


def encode(value: Any) -> Any:
    """A release (or its interval) as exact, comparable JSON."""
    if isinstance(value, pd.DataFrame):
        return {
            "frame": [encode(value[c]) for c in value.columns],
            "columns": [repr(c) for c in value.columns],
            "index": [repr(i) for i in value.index],
        }
    if isinstance(value, pd.Series):
        return {
            "series": [encode(v) for v in value.tolist()],
            "index": [repr(i) for i in value.index],
            "name": repr(value.name),
            "dtype": str(value.dtype),
        }
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        return "nan" if math.isnan(v) else v.hex()
    if isinstance(value, np.ndarray):
        return [encode(v) for v in value.tolist()]
    return repr(value)


def _interval(result: Any) -> Any:
    meta = getattr(result, "attrs", {}).get("dp")
    if meta is None:
        return None
    try:
        return encode(meta.interval(0.05))
    except (ValueError, TypeError, NotImplementedError) as exc:  # no interval for this one
        return f"no interval: {type(exc).__name__}"


def run_case(name: str) -> dict[str, Any]:
    """One case's release and interval, encoded."""
    df, schema, units = load_survey(), survey_schema(), _units()
    result = CASES[name](df, schema, units)
    return {"value": encode(result), "type": type(result).__name__, "interval": _interval(result)}


def main() -> int:
    record = {name: run_case(name) for name in CASES}
    RECORD.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(record)} seeded releases in {RECORD}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
