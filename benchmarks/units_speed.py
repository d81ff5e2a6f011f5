"""Speed of the keyed-hash truncation (pandas_dp.engines.units) on 10**7 rows.

Run: ``python benchmarks/units_speed.py``. Prints seconds per call (best of 3).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from pandas_dp.engines.units import contribution_mask, distinct_units

N = 10**7
KEY = "0123456789abcdef"


def best(f: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def run(units: int, rng: np.random.Generator) -> None:
    unit = pd.Series(rng.integers(0, units, N))
    x = pd.DataFrame({"x": rng.normal(size=N)})
    groups = rng.integers(0, 1000, N).astype(np.intp)
    rows = pd.concat([x, pd.Series(groups, name="g")], axis=1)
    print(f"{N} rows, {units} int units ({N / units:.0f} rows per unit on average)")
    for k in (1, 5, 20):
        t = best(lambda k=k: contribution_mask(x, unit, key=KEY, max_rows_per_unit=k))
        print(f"  max_rows_per_unit={k:<3} {t:.3f} s")
    t = best(
        lambda: contribution_mask(
            rows,
            unit,
            key=KEY,
            max_rows_per_unit=5,
            groups=groups,
            max_groups_per_unit=2,
            max_rows_per_group=2,
        )
    )
    print(f"  k=5, g=2, c=2 over 1000 groups: {t:.3f} s")
    t = best(lambda: distinct_units(unit, groups, 1000))
    print(f"  distinct_units over 1000 groups: {t:.3f} s")
    t = best(lambda: unit.value_counts())
    print(f"  (pandas value_counts of the unit column: {t:.3f} s)")
    t = best(lambda: unit.groupby(unit).cumcount() < 5)
    print(f"  (pandas order-dependent truncation, groupby.cumcount() < 5: {t:.3f} s)")


def main() -> None:
    rng = np.random.default_rng(0)
    for units in (10**6, 10**7 // 2):
        run(units, rng)
    x = pd.DataFrame({"x": rng.normal(size=N)})
    strings = pd.Series(rng.integers(0, 10**6, N).astype(str).astype(object))
    t = best(lambda: contribution_mask(x, strings, key=KEY, max_rows_per_unit=5), repeat=1)
    print(f"string units (object dtype), k=5: {t:.3f} s")


if __name__ == "__main__":
    main()
