"""First-call and warm latency: what a fresh process pays before its first release.

Each case runs in new Python processes, so the import of pandas-dp, pandas and (on
first use) numba, and the loading of the compiled kernels, are all counted:

* **cold cache** -- numba's on-disk cache empty (``NUMBA_CACHE_DIR`` a new empty
  folder): the kernels are compiled;
* **warm cache** -- a second process on the same cache folder: the kernels are loaded
  from disk, as in every process after the first on a machine;
* **numpy path** -- numba hidden (``PYTHONPATH=.ci/no_numba``): what an install without
  numba runs.

Per process it times the import of pandas-dp, the first release and the second
(warm, in the same process), for a 100-row mean, a 10**6-row mean and a 10**6-row
median; and the whole command ``pandas-dp describe --example`` (wall time of the
process). numba caches its compiled kernels next to the package's modules and, where
that folder is not writable (an install in a read-only site-packages), in the user's
cache folder (numba's documented fallback); ``NUMBA_CACHE_DIR`` here makes the cold
and warm cases repeatable.

Run ``python benchmarks/latency.py`` (about two minutes on two cores); it writes
``benchmarks/results/latency.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

#: The program each process runs: the import, then each release twice.
PROBE = r"""
import json, time
t0 = time.perf_counter()
import numpy as np, pandas as pd
t1 = time.perf_counter()
import pandas_dp
t2 = time.perf_counter()
rng = np.random.default_rng(0)
small = pd.DataFrame({"x": rng.uniform(0, 100, 100)})
big = pd.DataFrame({"x": rng.uniform(0, 100, 10**6)})
calls = {
    "mean, 100 rows": lambda: small.dp.mean("x", epsilon=1.0, bounds=(0, 100)),
    "mean, 10**6 rows": lambda: big.dp.mean("x", epsilon=1.0, bounds=(0, 100)),
    "median, 10**6 rows": lambda: big.dp.median("x", epsilon=1.0, bounds=(0, 100)),
}
out = {"import pandas": t1 - t0, "import pandas_dp": t2 - t1}
for name, call in calls.items():
    a = time.perf_counter(); call(); b = time.perf_counter(); call(); c = time.perf_counter()
    out[name + ": first"] = b - a
    out[name + ": second"] = c - b
print(json.dumps(out))
"""


def _env(cache: str, numpy_path: bool) -> dict[str, str]:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache)
    if numpy_path:
        env["PYTHONPATH"] = str(ROOT / ".ci" / "no_numba")
    return env


def probe(cache: str, numpy_path: bool) -> dict[str, float]:
    """One fresh process's timings (seconds)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=_env(cache, numpy_path),
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def describe_command(cache: str, numpy_path: bool) -> float:
    """Wall time of ``pandas-dp describe --example`` in a fresh process (seconds)."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pandas_dp.cli", "describe", "--example", "--epsilon", "1"],
        env=_env(cache, numpy_path),
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start


def measure(repeat: int) -> dict[str, dict[str, float]]:
    """Median over ``repeat`` rounds of each case (a new cache folder per cold case)."""
    rows: dict[str, list[dict[str, float]]] = {"cold cache": [], "warm cache": [], "numpy path": []}
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache:
            cold = probe(cache, False)
            cold["describe --example"] = describe_command(cache, False)
            warm = probe(cache, False)
            warm["describe --example"] = describe_command(cache, False)
        with tempfile.TemporaryDirectory() as cache:
            plain = probe(cache, True)
            plain["describe --example"] = describe_command(cache, True)
        rows["cold cache"].append(cold)
        rows["warm cache"].append(warm)
        rows["numpy path"].append(plain)
    return {
        case: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
        for case, runs in rows.items()
    }


def markdown(table: dict[str, dict[str, float]], load: tuple[float, float], repeat: int) -> str:
    cases = list(table)
    keys = list(table[cases[0]])
    lines = [
        "# First-call and warm latency",
        "",
        f"`python benchmarks/latency.py`: new processes, median of {repeat} rounds, "
        f"milliseconds; load average {load[0]:.1f} before, {load[1]:.1f} after "
        f"(2 cores). See the script's docstring for the cases.",
        "",
        "| | " + " | ".join(cases) + " |",
        "|---|" + "---:|" * len(cases),
    ]
    for key in keys:
        cells = " | ".join(f"{1000 * table[c][key]:.1f}" for c in cases)
        lines.append(f"| {key} | {cells} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--markdown", type=Path, default=RESULTS / "latency.md")
    args = parser.parse_args()
    before = os.getloadavg()[0]
    table = measure(args.repeat)
    after = os.getloadavg()[0]
    text = markdown(table, (before, after), args.repeat)
    args.markdown.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
