"""Speed (and accuracy) benchmark of pandas-dp against numpy, pandas, diffprivlib and OpenDP.

Usage::

    python benchmarks/run.py                  # 10^5, 10^6 and 10^7 rows
    python benchmarks/run.py --quick          # 10^5 and 10^6 rows, fewer repetitions
    python benchmarks/run.py --rows 1000000 --json /tmp/bench.json
    python benchmarks/run.py --quick --accuracy-reps 20 --markdown /tmp/bench.md

Prints Markdown tables and writes JSON (default ``benchmarks/results/latest.json``)
and a copy of the tables next to it (``.md``). Every timing is the median of
repeated calls in this process, after one warm-up call, with ``time.perf_counter``
and the garbage collector paused (as ``timeit`` does); the number of repetitions
is printed next to each median. Contenders are timed in interleaved rounds, so
that a change of machine load hits all of them.

Sections: 1. mean and var of one column; 2. per-release latency on a small
Series; 3. peak memory of 1.; 4. sum, count, value_counts, proportions and cov
(speed and peak memory); 5. accuracy (RMSE and bias over repeated releases) at
equal epsilon and equal neighbouring relation; then the goals of the issue.

The peers (diffprivlib, OpenDP, Polars) are benchmark-only dependencies (the
``bench`` extra); a peer that is missing or fails, or has no such release, is
reported as ``n/a`` with the reason.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
import tracemalloc
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import pandas_dp

EPSILON = 1.0
LOWER, UPPER = 0.0, 100.0
BOUNDS = (LOWER, UPPER)
COLUMN = "x"
SMALL_ROWS = 100
RESULTS = Path(__file__).resolve().parent / "results"

#: Contenders of the large-column section, in print order.
NUMPY = "numpy floor"
PANDAS = "pandas"
PANDAS_DP = "pandas-dp"
DIFFPRIVLIB = "diffprivlib"
OPENDP_ARRAY = "OpenDP framework, invoke on ndarray"
OPENDP_TO_ARRAY = "  conversion pandas -> writable ndarray (copy)"
OPENDP_LIST = "OpenDP framework, invoke on list"
OPENDP_TO_LIST = "  conversion pandas -> list"
OPENDP_POLARS = "OpenDP Polars, invoke measurement"
OPENDP_TO_POLARS = "  conversion pandas -> LazyFrame"
#: The same pandas-dp release on its numpy path (what an install without numba
#: runs), timed in the same rounds as the default install: see :func:`on_numpy_path`.
PANDAS_DP_NUMPY = "pandas-dp, numpy path (no numba)"
#: The two pandas-dp contenders, and how the ratio rows name them.
OURS = ((PANDAS_DP, "pandas-dp"), (PANDAS_DP_NUMPY, "pandas-dp numpy path"))

#: Section 4: more statistics. A 4-category column (declared categories, their
#: probabilities) and a 4-column block for the covariance matrix.
CATEGORIES = ("N", "S", "E", "W")
CATEGORY_P = (0.5, 0.3, 0.15, 0.05)
CATEGORY_DTYPE = pd.CategoricalDtype(list(CATEGORIES))
COV_COLUMNS = ("a", "b", "c", "d")
COV_BOUNDS = (-1.0, 1.0)
#: Extra contenders of section 4 (the others are those of section 1).
OPENDP_CODES = "OpenDP framework, invoke on int32 codes"
OPENDP_TO_CODES = "  conversion int8 codes -> int32 ndarray"
TO_CODES = "  conversion str column -> int32 codes (astype category)"
OPENDP_STR_LIST = "OpenDP framework, invoke on list of str"
#: OpenDP on a list of Python strings costs microseconds per row: not timed above this.
OPENDP_STR_MAX_ROWS = {"quick": 10**5, "full": 10**6}
#: Statistics of section 4, in print order.
MORE = (
    "sum",
    "count",
    "value_counts, category dtype",
    "value_counts, str column",
    "proportions, category dtype",
    "proportions, str column",
    "cov",
)

#: Section 5: accuracy. Values uniform on ACC_RANGE inside the public ACC_BOUNDS.
ACC_SIZES = (100, 1_000, 10_000)
ACC_EPSILONS = (0.1, 1.0)
ACC_BOUNDS = (0.0, 1.0)
ACC_RANGE = (0.2, 0.8)
SUBSTITUTE = "substitute"
ADD_REMOVE = "add_remove"


# ----------------------------------------------------------------------------- timing


@dataclass
class Timing:
    """Median seconds of ``reps`` calls (``None`` when not available)."""

    median: float | None = None
    reps: int = 0
    value: float | None = None
    note: str = ""
    samples: list[float] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "median_s": self.median,
            "reps": self.reps,
            "min_s": min(self.samples) if self.samples else None,
            "value": self.value,
            "note": self.note or None,
        }


def _na(reason: str) -> Timing:
    return Timing(note=reason)


def _as_float(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def time_interleaved(
    contenders: dict[str, Callable[[], Any] | Timing],
    *,
    max_reps: int,
    budget_s: float,
    min_reps: int = 3,
) -> dict[str, Timing]:
    """Time each callable: two warm-up calls, then interleaved rounds of single calls.

    The first warm-up call pays one-off costs (a compiled kernel loaded from its
    disk cache, a thread pool started); a contender whose second warm-up call took
    ``w`` seconds is repeated
    ``clamp(budget_s / w, min_reps, max_reps)`` times, so slow peers do not make
    the run last for ever. A ``Timing`` passed instead of a callable is kept as is
    (an ``n/a``); a callable that raises becomes ``n/a`` with the error.
    """
    out: dict[str, Timing] = {}
    live: dict[str, Callable[[], Any]] = {}
    reps: dict[str, int] = {}
    for name, fn in contenders.items():
        if isinstance(fn, Timing):
            out[name] = fn
            continue
        gc.collect()
        try:
            value = fn()  # the first call pays one-off costs (compiling, loading caches)
            start = time.perf_counter()
            fn()
            warm = time.perf_counter() - start
        except Exception as exc:
            out[name] = _na(f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
            continue
        out[name] = Timing(value=_as_float(value))
        live[name] = fn
        reps[name] = int(min(max_reps, max(min_reps, budget_s // max(warm, 1e-9))))
    names = list(live)
    gc.collect()
    gc.disable()
    try:
        for r in range(max(reps.values(), default=0)):
            shift = r % max(len(names), 1)
            for name in names[shift:] + names[:shift]:
                if r >= reps[name]:
                    continue
                fn = live[name]
                start = time.perf_counter()
                fn()
                out[name].samples.append(time.perf_counter() - start)
    finally:
        gc.enable()
    for name in names:
        t = out[name]
        t.reps = len(t.samples)
        t.median = statistics.median(t.samples)
    return out


def time_latency(
    contenders: dict[str, Callable[[], Any] | Timing],
    *,
    calls: int,
    block: int = 20,
    around: dict[str, Callable[[], contextlib.AbstractContextManager[Any]]] | None = None,
) -> dict[str, Timing]:
    """Per-call latency: ``calls`` single calls each, in rotating blocks of ``block``.

    ``around[name]()`` is a context entered around each of that contender's blocks
    (and its warm-up) and left after it, outside the timing: e.g. a ``with budget:``
    block, which would otherwise charge every other contender's releases too.
    """
    around = around or {}
    out: dict[str, Timing] = {}
    live: dict[str, Callable[[], Any]] = {}
    for name, fn in contenders.items():
        if isinstance(fn, Timing):
            out[name] = fn
            continue
        try:
            with around.get(name, contextlib.nullcontext)():
                value = fn()
                for _ in range(min(block, calls)):  # warm-up
                    fn()
        except Exception as exc:
            out[name] = _na(f"{type(exc).__name__}: {exc}".splitlines()[0][:160])
            continue
        out[name] = Timing(value=_as_float(value))
        live[name] = fn
    names = list(live)
    perf = time.perf_counter
    gc.collect()
    gc.disable()
    try:
        for r in range(math.ceil(calls / block)):
            shift = r % max(len(names), 1)
            for name in names[shift:] + names[:shift]:
                fn = live[name]
                samples = out[name].samples
                with around.get(name, contextlib.nullcontext)():
                    for _ in range(min(block, calls - r * block)):
                        start = perf()
                        fn()
                        samples.append(perf() - start)
    finally:
        gc.enable()
    for name in names:
        t = out[name]
        t.reps = len(t.samples)
        t.median = statistics.median(t.samples)
    return out


def peak_memory(fn: Callable[[], Any]) -> float:
    """Peak bytes newly allocated (as seen by tracemalloc) during one call of ``fn``."""
    gc.collect()
    tracemalloc.start()
    try:
        fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return float(peak)


# ----------------------------------------------------------------------------- machine


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    memory = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                memory = f"{int(line.split()[1]) / 2**20:.1f} GiB"
    except (OSError, ValueError):
        pass
    info: dict[str, Any] = {
        "cpu": cpu,
        "logical cores": os.cpu_count(),
        "usable cores": usable,
        "memory": memory,
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "pandas-dp": f"{pandas_dp.__version__} ({_source_state()})",
    }
    for module in ("numba", "diffprivlib", "opendp", "polars", "scikit-learn"):
        try:
            info[module] = metadata.version(module)
        except metadata.PackageNotFoundError:
            info[module] = "not installed"
    try:
        from threadpoolctl import threadpool_info

        pools = [f"{p['internal_api']} {p['num_threads']} threads" for p in threadpool_info()]
        info["native thread pools"] = ", ".join(pools) or "none"
    except Exception:
        info["native thread pools"] = "unknown (threadpoolctl not installed)"
    info["load average (start)"] = _load()
    return info


def _source_state() -> str:
    """The git commit of the pandas-dp sources benchmarked, and whether they differ from it."""
    root = Path(pandas_dp.__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--", "pandas_dp"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "not a git checkout"
    return f"git {head}" + (" + uncommitted changes in pandas_dp/" if dirty else "")


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# ----------------------------------------------------------------------------- numpy path

#: pandas-dp's compiled paths, as (module, attribute, value that turns it off): the
#: engine's switch, then the loaders of the compiled quantile-grid tally, noise
#: sampler and monotone scan, which report "no numba" when replaced by ``_absent``.
#: Modules or attributes that do not exist (another layout) are skipped.
NUMPY_PATH_SWITCHES = (
    ("pandas_dp.engines.pandas", "USE_NUMBA", False),
    ("pandas_dp.engines.grid", "_compiled", "absent"),
    ("pandas_dp.noise.mechanisms._compiled", "ready", "absent"),
    ("pandas_dp.mechanisms._compiled", "ready", "absent"),
    ("pandas_dp.stats.constraints.monotone", "_compiled", "absent"),
    ("pandas_dp.constraints.monotone", "_compiled", "absent"),
)


def _absent() -> None:
    """A compiled kernel's loader on a machine without numba."""
    return None


def _numpy_switches() -> list[tuple[Any, str, Any]]:
    """The :data:`NUMPY_PATH_SWITCHES` present in this pandas-dp: (module, name, value)."""
    found = []
    for module_name, attribute, value in NUMPY_PATH_SWITCHES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if hasattr(module, attribute):
            found.append((module, attribute, _absent if value == "absent" else value))
    return found


def numpy_path_description() -> str:
    """What :func:`on_numpy_path` switches, for the report."""
    names = [f"{m.__name__}.{a}" for m, a, _ in _numpy_switches()]
    return (
        "The numpy path is timed in this process, with "
        + ", ".join(f"`{n}`" for n in names)
        + " set to what a machine without numba has (the engine's `USE_NUMBA = False`, "
        "the compiled loaders returning None); CI runs the same path with numba hidden "
        "(`PYTHONPATH=.ci/no_numba`). Both paths give the same releases."
    )


def on_numpy_path(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` run on pandas-dp's numpy path: its compiled paths off during the call.

    Measured cost of the switching: a few attribute assignments, well under a
    microsecond.
    """
    switches = _numpy_switches()

    def run() -> Any:
        before = [getattr(module, name) for module, name, _ in switches]
        for module, name, value in switches:
            setattr(module, name, value)
        try:
            return fn()
        finally:
            for (module, name, _), old in zip(switches, before, strict=True):
                setattr(module, name, old)

    return run


def _with_numpy_path(c: dict[str, Any]) -> dict[str, Any]:
    """``c`` with :data:`PANDAS_DP_NUMPY` right after :data:`PANDAS_DP`."""
    out: dict[str, Any] = {}
    for name, fn in c.items():
        out[name] = fn
        if name == PANDAS_DP:
            out[PANDAS_DP_NUMPY] = fn if isinstance(fn, Timing | str) else on_numpy_path(fn)
    return out


# ----------------------------------------------------------------------------- peers


def _import_diffprivlib() -> tuple[Any, str]:
    try:
        import diffprivlib
        from diffprivlib import tools
    except Exception as exc:
        return None, f"diffprivlib unavailable ({type(exc).__name__}: {exc})"[:200]
    warnings.filterwarnings("ignore", category=diffprivlib.utils.PrivacyLeakWarning)
    warnings.filterwarnings("ignore", category=diffprivlib.utils.DiffprivlibCompatibilityWarning)
    return (diffprivlib, tools), ""


def _import_opendp() -> tuple[Any, str]:
    try:
        import opendp.prelude as dp
    except Exception as exc:
        return None, f"opendp unavailable ({type(exc).__name__}: {exc})"[:200]
    dp.enable_features("contrib")
    return dp, ""


def _opendp_measurement(
    dp: Any,
    statistic: str,
    n: int,
    *,
    bounds: tuple[float, float] = BOUNDS,
    epsilon: float = EPSILON,
    sized: bool = False,
) -> Any:
    """clamp >> resize to the public n >> sum/mean/variance >> Laplace, calibrated to epsilon.

    ``d_in=2`` under the symmetric distance is one substituted record, the
    neighbouring relation pandas-dp uses by default. Resizing does not know that
    the input already has ``n`` rows, so it doubles the sensitivity; ``sized=True``
    declares ``n`` on the input domain instead (no resize), OpenDP's tightest
    construction for a public ``n`` (used by the accuracy section).
    """
    lower, upper = bounds
    atoms = dp.atom_domain(T=float, nan=False)
    domain = dp.vector_domain(atoms, size=n) if sized else dp.vector_domain(atoms)
    aggregate = {
        "sum": dp.t.then_sum,
        "mean": dp.t.then_mean,
        "var": lambda: dp.t.then_variance(ddof=1),
    }[statistic]
    pre = (domain, dp.symmetric_distance()) >> dp.t.then_clamp(bounds)
    if not sized:
        pre = pre >> dp.t.then_resize(size=n, constant=0.5 * (lower + upper))
    pre = pre >> aggregate()
    return dp.binary_search_chain(lambda s: pre >> dp.m.then_laplace(s), d_in=2, d_out=epsilon)


def _opendp_count(dp: Any, *, epsilon: float = EPSILON, d_in: int = 2) -> Any:
    """drop_null >> count >> (discrete) Laplace: the number of non-NaN floats."""
    space = dp.vector_domain(dp.atom_domain(T=float, nan=True)), dp.symmetric_distance()
    pre = space >> dp.t.then_drop_null() >> dp.t.then_count()
    return dp.binary_search_chain(lambda s: pre >> dp.m.then_laplace(s), d_in=d_in, d_out=epsilon)


def _opendp_count_by_categories(
    dp: Any, categories: Any, atom: Any, *, epsilon: float = EPSILON, d_in: int = 2
) -> Any:
    """count_by_categories (no bucket for other values) >> discrete Laplace.

    Under the symmetric distance ``d_in=1`` is one added or removed record and
    ``d_in=2`` one substituted record.
    """
    space = dp.vector_domain(dp.atom_domain(T=atom)), dp.symmetric_distance()
    pre = space >> dp.t.then_count_by_categories(categories=list(categories), null_category=False)
    return dp.binary_search_chain(lambda s: pre >> dp.m.then_laplace(s), d_in=d_in, d_out=epsilon)


def _opendp_polars_measurement(dp: Any, lazy: Any, n: int) -> Any:
    """The measurement behind ``context.query().select(col.dp.mean(bounds)).release()``."""
    import polars as pl

    context = dp.Context.compositor(
        data=lazy,
        privacy_unit=dp.unit_of(changes=1),
        privacy_loss=dp.loss_of(epsilon=EPSILON),
        split_evenly_over=1,
        margins=[dp.polars.Margin(max_length=n, invariant="lengths")],
    )
    mid = 0.5 * (LOWER + UPPER)
    query = context.query().select(pl.col(COLUMN).fill_nan(mid).fill_null(mid).dp.mean(BOUNDS))
    return query.resolve()


# ----------------------------------------------------------------------------- sections


def bench_large(
    n: int, *, max_reps: int, budget_s: float, setup: dict[str, Any]
) -> dict[str, dict[str, Timing]]:
    """Section 1: mean and variance of one float column of ``n`` rows."""
    rng = np.random.default_rng(20240601)
    df = pd.DataFrame({COLUMN: rng.uniform(LOWER - 10, UPPER + 10, n)})
    x = df[COLUMN].to_numpy()
    a, b = BOUNDS
    peers, why_dpl = _import_diffprivlib()
    dp, why_odp = _import_opendp()
    one_off: dict[str, float | str] = {}
    setup[str(n)] = one_off

    results: dict[str, dict[str, Timing]] = {}
    lst: list[float] | None = None
    lazy: Any = None
    for statistic in ("mean", "var"):
        c: dict[str, Callable[[], Any] | Timing] = {}
        if statistic == "mean":
            c[NUMPY] = lambda: np.clip(x, a, b).mean()
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).mean()
            c[PANDAS_DP] = lambda: df.dp.mean(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
        else:
            c[NUMPY] = lambda: np.clip(x, a, b).var(ddof=1)
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).var()
            c[PANDAS_DP] = lambda: df.dp.var(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
        if peers is None:
            c[DIFFPRIVLIB] = _na(why_dpl)
        else:
            f = getattr(peers[1], statistic)
            c[DIFFPRIVLIB] = lambda f=f: f(x, epsilon=EPSILON, bounds=BOUNDS)

        if dp is None:
            for key in (OPENDP_ARRAY, OPENDP_TO_ARRAY, OPENDP_LIST, OPENDP_TO_LIST):
                c[key] = _na(why_odp)
        else:
            try:
                start = time.perf_counter()
                meas = _opendp_measurement(dp, statistic, n)
                one_off[f"OpenDP framework {statistic}: build + calibrate"] = (
                    time.perf_counter() - start
                )
                # OpenDP refuses read-only arrays, and pandas' copy-on-write hands
                # out read-only views: the conversion is a copy
                writable = df[COLUMN].to_numpy(copy=True)
                c[OPENDP_ARRAY] = lambda meas=meas, writable=writable: meas(writable)
                c[OPENDP_TO_ARRAY] = lambda: df[COLUMN].to_numpy(copy=True)
                if lst is None:
                    lst = df[COLUMN].tolist()
                c[OPENDP_LIST] = lambda meas=meas, lst=lst: meas(lst)
                c[OPENDP_TO_LIST] = lambda: df[COLUMN].tolist()
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
                for key in (OPENDP_ARRAY, OPENDP_TO_ARRAY, OPENDP_LIST, OPENDP_TO_LIST):
                    c[key] = _na(reason)

        if statistic == "var":
            reason = (
                "OpenDP's Polars plugin has no variance (its aggregates: sum, mean, len, "
                "count, quantile, median, n_unique)"
            )
            c[OPENDP_POLARS] = _na(reason)
            c[OPENDP_TO_POLARS] = _na(reason)
        elif dp is None:
            c[OPENDP_POLARS] = c[OPENDP_TO_POLARS] = _na(why_odp)
        else:
            try:
                import polars as pl

                lazy = pl.LazyFrame({COLUMN: x})
                start = time.perf_counter()
                pmeas = _opendp_polars_measurement(dp, lazy, n)
                one_off["OpenDP Polars mean: context + query + resolve (calibrate)"] = (
                    time.perf_counter() - start
                )
                c[OPENDP_POLARS] = lambda pmeas=pmeas, lazy=lazy: pmeas(lazy).collect().item()
                c[OPENDP_TO_POLARS] = lambda: pl.LazyFrame({COLUMN: df[COLUMN].to_numpy()})
            except Exception as exc:
                reason = f"{type(exc).__name__}: {exc}".splitlines()[0][:160]
                c[OPENDP_POLARS] = c[OPENDP_TO_POLARS] = _na(reason)

        c = _with_numpy_path(c)
        results[statistic] = time_interleaved(c, max_reps=max_reps, budget_s=budget_s)
        for key in (OPENDP_TO_LIST, OPENDP_TO_POLARS):
            results[statistic][key].value = None  # a conversion has no statistic
        gc.collect()
    del lst, lazy
    return results


def bench_small(calls: int) -> dict[str, Timing]:
    """Section 2: per-release latency on a 100-row Series."""
    s = pd.Series(np.random.default_rng(7).uniform(LOWER, UPPER, SMALL_ROWS), name=COLUMN)
    x = s.to_numpy()
    a, b = BOUNDS
    budget = pandas_dp.PrivacyBudget(epsilon=1e12)

    def in_budget() -> Any:  # timed inside a `with budget:` block (`around` below)
        return s.dp.mean(epsilon=EPSILON, bounds=BOUNDS)

    def enter_each_call() -> Any:
        with budget:
            return s.dp.mean(epsilon=EPSILON, bounds=BOUNDS)

    def budget_argument() -> Any:
        return s.dp.mean(epsilon=EPSILON, bounds=BOUNDS, budget=budget)

    c: dict[str, Callable[[], Any] | Timing] = {
        "numpy floor: np.clip(x, a, b).mean()": lambda: np.clip(x, a, b).mean(),
        "pandas: s.clip(a, b).mean()": lambda: s.clip(a, b).mean(),
        "pandas-dp: s.dp.mean (secure noise)": lambda: s.dp.mean(epsilon=EPSILON, bounds=BOUNDS),
        "pandas-dp: s.dp.mean(random_state=0)": lambda: s.dp.mean(
            epsilon=EPSILON, bounds=BOUNDS, random_state=0
        ),
        "pandas-dp: s.dp.var (secure noise)": lambda: s.dp.var(epsilon=EPSILON, bounds=BOUNDS),
        "pandas-dp: s.dp.sum (secure noise)": lambda: s.dp.sum(epsilon=EPSILON, bounds=BOUNDS),
        "pandas-dp: s.dp.count (secure noise)": lambda: s.dp.count(epsilon=EPSILON),
        SMALL_NUMPY_MEAN: on_numpy_path(lambda: s.dp.mean(epsilon=EPSILON, bounds=BOUNDS)),
        "pandas-dp numpy path: s.dp.var (secure noise)": on_numpy_path(
            lambda: s.dp.var(epsilon=EPSILON, bounds=BOUNDS)
        ),
        "pandas-dp: s.dp.mean(budget=b)": budget_argument,
        IN_BUDGET: in_budget,
        "pandas-dp: `with budget:` entered per call": enter_each_call,
    }
    peers, why = _import_diffprivlib()
    if peers is None:
        c["diffprivlib: tools.mean"] = _na(why)
    else:
        diffprivlib, tools = peers
        accountant = diffprivlib.BudgetAccountant()
        c["diffprivlib: tools.mean"] = lambda: tools.mean(x, epsilon=EPSILON, bounds=BOUNDS)
        c["diffprivlib: tools.mean(random_state=0)"] = lambda: tools.mean(
            x, epsilon=EPSILON, bounds=BOUNDS, random_state=0
        )
        c["diffprivlib: tools.var"] = lambda: tools.var(x, epsilon=EPSILON, bounds=BOUNDS)
        c["diffprivlib: tools.mean(accountant=acc)"] = lambda: tools.mean(
            x, epsilon=EPSILON, bounds=BOUNDS, accountant=accountant
        )
    dp, why = _import_opendp()
    if dp is None:
        c["OpenDP framework: meas(ndarray)"] = _na(why)
    else:
        try:
            meas = _opendp_measurement(dp, "mean", SMALL_ROWS)
            writable = s.to_numpy(copy=True)  # OpenDP refuses read-only arrays
            c["OpenDP framework: meas(ndarray)"] = lambda: meas(writable)
        except Exception as exc:
            c["OpenDP framework: meas(ndarray)"] = _na(f"{type(exc).__name__}: {exc}"[:160])
    # An open `with budget:` block is charged by every release in the process, so it
    # is open only around the blocks of the contender timed inside it: the others
    # run as a default release does, with no budget active.
    out = time_latency(c, calls=calls, around={IN_BUDGET: lambda: budget})
    charged = len(budget.ledger)
    # the three budget contenders charge it, no other: one call, a warm-up block, then
    # `calls` timed calls each
    ours = sum(1 for name in c if "budget" in name)
    expected = ours * (1 + min(calls, 20) + calls)
    if charged != expected:
        raise RuntimeError(f"the budget saw {charged} releases, expected {expected}")
    return out


def bench_memory(n: int) -> dict[str, dict[str, float | str]]:
    """Section 3: peak memory of one call on a column of ``n`` rows."""
    df = pd.DataFrame({COLUMN: np.random.default_rng(3).uniform(LOWER - 10, UPPER + 10, n)})
    x = df[COLUMN].to_numpy()
    a, b = BOUNDS
    peers, why = _import_diffprivlib()
    out: dict[str, dict[str, float | str]] = {}
    for statistic in ("mean", "var"):
        c: dict[str, Callable[[], Any] | str] = {}
        if statistic == "mean":
            c[PANDAS_DP] = lambda: df.dp.mean(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
            c[NUMPY] = lambda: np.clip(x, a, b).mean()
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).mean()
        else:
            c[PANDAS_DP] = lambda: df.dp.var(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
            c[NUMPY] = lambda: np.clip(x, a, b).var(ddof=1)
            c[PANDAS] = lambda: df[COLUMN].clip(a, b).var()
        if peers is None:
            c[DIFFPRIVLIB] = why
        else:
            f = getattr(peers[1], statistic)
            c[DIFFPRIVLIB] = lambda f=f: f(x, epsilon=EPSILON, bounds=BOUNDS)
        c = _with_numpy_path(c)
        row: dict[str, float | str] = {}
        for name, fn in c.items():
            if isinstance(fn, str):
                row[name] = fn
                continue
            fn()  # warm-up: imports and caches are not the call's memory
            row[name] = peak_memory(fn)
        row["OpenDP"] = "not measured: its Rust allocations are invisible to tracemalloc"
        out[statistic] = row
    return out


def _reason(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:160]


@dataclass
class MoreData:
    """The data of section 4 at one size ``n``."""

    df: pd.DataFrame  # one float column, uniform on (LOWER - 10, UPPER + 10)
    with_nan: pd.Series  # the same values with 1 % NaN (for count)
    cat: pd.Series  # the 4-category column, dtype CATEGORY_DTYPE
    text: pd.Series  # the same column as plain strings (pandas' default str dtype)
    codes: np.ndarray  # its int8 category codes
    block: pd.DataFrame  # 4 correlated columns, mostly inside COV_BOUNDS


def more_data(n: int) -> MoreData:
    rng = np.random.default_rng(20240602)
    x = rng.uniform(LOWER - 10, UPPER + 10, n)
    with_nan = x.copy()
    with_nan[rng.random(n) < 0.01] = np.nan
    codes = rng.choice(len(CATEGORIES), size=n, p=CATEGORY_P).astype(np.int8)
    cat = pd.Series(pd.Categorical.from_codes(codes, dtype=CATEGORY_DTYPE), name="region")
    text = pd.Series(np.asarray(CATEGORIES)[codes], name="region")
    mix = np.linalg.cholesky(0.5 * np.eye(4) + 0.5 * np.ones((4, 4)))
    block = pd.DataFrame(0.5 * rng.standard_normal((n, 4)) @ mix.T, columns=list(COV_COLUMNS))
    return MoreData(
        df=pd.DataFrame({COLUMN: x}),
        with_nan=pd.Series(with_nan, name=COLUMN),
        cat=cat,
        text=text,
        codes=cat.cat.codes.to_numpy(),
        block=block,
    )


def _more_contenders(
    statistic: str, d: MoreData, *, one_off: dict[str, float | str], str_list_max: int
) -> dict[str, Callable[[], Any] | Timing]:
    """The callables of one statistic of section 4 (``n/a`` Timings for what is missing)."""
    n = len(d.df)
    a, b = BOUNDS
    x = d.df[COLUMN].to_numpy()
    peers, why_dpl = _import_diffprivlib()
    dp, why_odp = _import_opendp()
    tools = None if peers is None else peers[1]
    c: dict[str, Callable[[], Any] | Timing] = {}

    def opendp(label: str, build: Callable[[], Any]) -> Any:
        """Build and calibrate an OpenDP measurement once, timing it as a one-off."""
        start = time.perf_counter()
        meas = build()
        one_off[f"OpenDP framework {label}: build + calibrate"] = time.perf_counter() - start
        return meas

    if statistic == "sum":
        c[NUMPY] = lambda: np.clip(x, a, b).sum()
        c[PANDAS] = lambda: d.df[COLUMN].clip(a, b).sum()
        c[PANDAS_DP] = lambda: d.df.dp.sum(COLUMN, epsilon=EPSILON, bounds=BOUNDS)
        c[DIFFPRIVLIB] = (
            _na(why_dpl) if tools is None else lambda: tools.sum(x, epsilon=EPSILON, bounds=BOUNDS)
        )
        if dp is None:
            c[OPENDP_ARRAY] = c[OPENDP_TO_ARRAY] = _na(why_odp)
        else:
            try:
                meas = opendp("sum", lambda: _opendp_measurement(dp, "sum", n))
                writable = d.df[COLUMN].to_numpy(copy=True)
                c[OPENDP_ARRAY] = lambda: meas(writable)
                c[OPENDP_TO_ARRAY] = lambda: d.df[COLUMN].to_numpy(copy=True)
            except Exception as exc:
                c[OPENDP_ARRAY] = c[OPENDP_TO_ARRAY] = _na(_reason(exc))
    elif statistic == "count":
        s = d.with_nan
        xn = s.to_numpy()
        c[NUMPY] = lambda: np.count_nonzero(~np.isnan(xn))
        c[PANDAS] = s.count
        c[PANDAS_DP] = lambda: s.dp.count(epsilon=EPSILON)
        c[DIFFPRIVLIB] = (
            _na(why_dpl)
            if tools is None
            else lambda: tools.count_nonzero(~np.isnan(xn), epsilon=EPSILON)
        )
        if dp is None:
            c[OPENDP_ARRAY] = c[OPENDP_TO_ARRAY] = _na(why_odp)
        else:
            try:
                meas = opendp("count", lambda: _opendp_count(dp))
                writable = s.to_numpy(copy=True)
                c[OPENDP_ARRAY] = lambda: meas(writable)
                c[OPENDP_TO_ARRAY] = lambda: s.to_numpy(copy=True)
            except Exception as exc:
                c[OPENDP_ARRAY] = c[OPENDP_TO_ARRAY] = _na(_reason(exc))
    elif statistic.startswith(("value_counts", "proportions")):
        text = statistic.endswith("str column")
        s = d.text if text else d.cat
        codes = d.codes
        k = len(CATEGORIES)
        cats = list(CATEGORIES)
        proportions = statistic.startswith("proportions")
        if proportions:
            c[NUMPY] = lambda: np.bincount(codes, minlength=k) / codes.size
            c[PANDAS] = lambda: s.value_counts(normalize=True)
            if text:
                c[PANDAS_DP] = lambda: s.dp.proportions(epsilon=EPSILON, categories=cats)
            else:
                c[PANDAS_DP] = lambda: s.dp.proportions(epsilon=EPSILON, categories="dtype")
        else:
            c[NUMPY] = lambda: np.bincount(codes, minlength=k)
            c[PANDAS] = s.value_counts
            if text:
                c[PANDAS_DP] = lambda: s.dp.value_counts(epsilon=EPSILON, categories=cats)
            else:
                c[PANDAS_DP] = lambda: s.dp.value_counts(epsilon=EPSILON, categories="dtype")
        # the peers take integer codes: a categorical column has them, a str column
        # must be encoded first (timed on its own row)
        codes32 = codes.astype(np.int32)
        peer_codes = codes32 if text else codes
        if tools is None:
            c[DIFFPRIVLIB] = _na(why_dpl)
        else:
            c[DIFFPRIVLIB] = lambda: tools.histogram(
                peer_codes, epsilon=EPSILON, bins=k, range=(0, k), density=proportions
            )[0]
        if text:
            c[TO_CODES] = lambda: s.astype(CATEGORY_DTYPE).cat.codes.to_numpy().astype(np.int32)
        if proportions:
            c[OPENDP_CODES] = _na(
                "OpenDP has no proportions release (count_by_categories releases counts; "
                "dividing by n and the sum-to-one repair would be the caller's own code)"
            )
        elif dp is None:
            c[OPENDP_CODES] = _na(why_odp)
        else:
            try:
                meas = opendp(
                    "count_by_categories (codes)",
                    lambda: _opendp_count_by_categories(dp, range(k), dp.i32),
                )
                c[OPENDP_CODES] = lambda: meas(codes32)
                if not text:
                    c[OPENDP_TO_CODES] = lambda: codes.astype(np.int32)
            except Exception as exc:
                c[OPENDP_CODES] = _na(_reason(exc))
        if text and not proportions:
            if dp is None:
                c[OPENDP_STR_LIST] = c[OPENDP_TO_LIST] = _na(why_odp)
            elif n > str_list_max:
                c[OPENDP_STR_LIST] = c[OPENDP_TO_LIST] = _na(
                    f"not timed above {str_list_max:,} rows: a few microseconds "
                    "per row, minutes per size"
                )
            else:
                try:
                    smeas = opendp(
                        "count_by_categories (str)",
                        lambda: _opendp_count_by_categories(dp, cats, str),
                    )
                    lst = s.tolist()
                    c[OPENDP_STR_LIST] = lambda: smeas(lst)
                    c[OPENDP_TO_LIST] = s.tolist
                except Exception as exc:
                    c[OPENDP_STR_LIST] = c[OPENDP_TO_LIST] = _na(_reason(exc))
    elif statistic == "cov":
        block = d.block
        lo, hi = COV_BOUNDS
        values = block.to_numpy()
        c[NUMPY] = lambda: np.cov(np.clip(values, lo, hi), rowvar=False)
        c[PANDAS] = lambda: block.clip(lo, hi).cov()
        c[PANDAS_DP] = lambda: block.dp.cov(epsilon=EPSILON, bounds=COV_BOUNDS)
        c[DIFFPRIVLIB] = _na(
            "no covariance matrix in diffprivlib.tools; models.utils.covariance_eig "
            "releases an eigendecomposition of X'X (for its PCA), not a covariance"
        )
        c[OPENDP_ARRAY] = _na(
            "no covariance release in OpenDP 0.16: its X'X (make_np_sscp, private module, "
            "'idealized-numerics' feature) only feeds the PCA eigendecomposition"
        )
    else:
        raise ValueError(statistic)
    return _with_numpy_path(c)


def bench_more(
    n: int, *, max_reps: int, budget_s: float, setup: dict[str, Any], str_list_max: int
) -> dict[str, dict[str, Timing]]:
    """Section 4: sum, count, value_counts, proportions and cov at ``n`` rows."""
    d = more_data(n)
    one_off: dict[str, float | str] = {}
    setup[str(n)] = one_off
    results: dict[str, dict[str, Timing]] = {}
    for statistic in MORE:
        c = _more_contenders(statistic, d, one_off=one_off, str_list_max=str_list_max)
        results[statistic] = time_interleaved(c, max_reps=max_reps, budget_s=budget_s)
        for name, t in results[statistic].items():
            if name.startswith("  "):
                t.value = None  # a conversion has no statistic
        gc.collect()
    return results


def bench_more_memory(n: int) -> dict[str, dict[str, float | str]]:
    """Section 4: peak memory of one call of each statistic on ``n`` rows."""
    d = more_data(n)
    out: dict[str, dict[str, float | str]] = {}
    for statistic in MORE:
        c = _more_contenders(statistic, d, one_off={}, str_list_max=0)
        row: dict[str, float | str] = {}
        for name in (NUMPY, PANDAS, PANDAS_DP, PANDAS_DP_NUMPY, DIFFPRIVLIB):
            fn = c[name]
            if isinstance(fn, Timing):
                row[name] = fn.note
                continue
            try:
                fn()  # warm-up: imports and caches are not the call's memory
                row[name] = peak_memory(fn)
            except Exception as exc:
                row[name] = _reason(exc)
        out[statistic] = row
        gc.collect()
    return out


# ----------------------------------------------------------------------------- accuracy


@dataclass
class AccuracyData:
    """The data of section 5 at one size ``n`` (fixed: the errors are the noise's)."""

    x: pd.Series  # uniform on ACC_RANGE
    cat: pd.Series  # exactly round(n p_k) records per category, shuffled
    codes: np.ndarray
    block: pd.DataFrame  # x and three columns correlated with it, all on ACC_RANGE


def accuracy_data(n: int) -> AccuracyData:
    rng = np.random.default_rng(1000 + n)
    x = rng.uniform(*ACC_RANGE, n)
    counts = [round(n * p) for p in CATEGORY_P[:-1]]
    counts.append(n - sum(counts))
    codes = rng.permutation(np.repeat(np.arange(len(CATEGORIES)), counts)).astype(np.int8)
    u = rng.uniform(*ACC_RANGE, (n, 3))
    # convex combinations stay on ACC_RANGE
    block = np.column_stack([x, 0.6 * x + 0.4 * u[:, 0], 0.3 * x + 0.7 * u[:, 1], u[:, 2]])
    return AccuracyData(
        x=pd.Series(x, name=COLUMN),
        cat=pd.Series(pd.Categorical.from_codes(codes, dtype=CATEGORY_DTYPE), name="region"),
        codes=codes,
        block=pd.DataFrame(block, columns=list(COV_COLUMNS)),
    )


def _errors(draw: Callable[[], Any], exact: Any, reps: int) -> dict[str, Any]:
    """RMSE over repetitions and entries, and the bias of the worst entry."""
    truth = np.atleast_1d(np.asarray(exact, dtype=np.float64))
    err = np.empty((reps, truth.size))
    for r in range(reps):
        err[r] = np.atleast_1d(np.asarray(draw(), dtype=np.float64)) - truth
    bias = err.mean(axis=0)
    j = int(np.argmax(np.abs(bias)))
    return {
        "rmse": float(np.sqrt(np.mean(err**2))),
        "bias": float(bias[j]),
        "bias_se": float(err[:, j].std(ddof=1) / math.sqrt(reps)) if reps > 1 else None,
        "bias_entry": j,
        "reps": reps,
    }


#: pandas-dp's proportions from noisy integer counts instead of noisy proportions.
PANDAS_DP_COUNTS = "pandas-dp, via='counts'"
#: Section 5 rows: statistic -> [(library, relation)], in print order.
ACC_ROWS: dict[str, list[tuple[str, str]]] = {
    "mean": [(PANDAS_DP, SUBSTITUTE), (DIFFPRIVLIB, SUBSTITUTE), ("OpenDP", SUBSTITUTE)],
    "var": [(PANDAS_DP, SUBSTITUTE), (DIFFPRIVLIB, SUBSTITUTE), ("OpenDP", SUBSTITUTE)],
    "value_counts": [
        (PANDAS_DP, ADD_REMOVE),
        (DIFFPRIVLIB, ADD_REMOVE),
        ("OpenDP", ADD_REMOVE),
        (PANDAS_DP, SUBSTITUTE),
        (DIFFPRIVLIB, SUBSTITUTE),
        ("OpenDP", SUBSTITUTE),
    ],
    "proportions": [
        (PANDAS_DP, ADD_REMOVE),
        (PANDAS_DP_COUNTS, ADD_REMOVE),
        (DIFFPRIVLIB, ADD_REMOVE),
        ("OpenDP", ADD_REMOVE),
        (PANDAS_DP, SUBSTITUTE),
        (DIFFPRIVLIB, SUBSTITUTE),
        ("OpenDP", SUBSTITUTE),
    ],
    "cov": [(PANDAS_DP, SUBSTITUTE), (DIFFPRIVLIB, SUBSTITUTE), ("OpenDP", SUBSTITUTE)],
}

#: What each library's release assumes, as read in its documentation and source.
ACC_NOTES = {
    "mean": "diffprivlib `tools.mean`: Laplace with sensitivity (b-a)/n, n public, clamped "
    "to [a, b]: substitution. OpenDP: on a vector domain of size n (n public), clamp >> "
    "mean >> Laplace at d_in=2 under the symmetric distance (a substitution is one "
    "removal plus one addition); its resize-based chain (section 1) has twice the "
    "sensitivity.",
    "var": "diffprivlib `tools.var` is the ddof=0 variance (sensitivity (b-a)^2 (n-1)/n^2, "
    "n public: substitution; resampled into [0, (b-a)^2/4]), so its error is against "
    "the ddof=0 variance; pandas-dp and OpenDP (`then_variance(ddof=1)` on the sized "
    "domain, d_in=2) against ddof=1.",
    "value_counts": "diffprivlib `tools.histogram` adds geometric noise of sensitivity 1 "
    "with the whole epsilon to every bin: epsilon-DP under add/remove (one record, one "
    "bin); a substitution moves two bins, so under substitution it is 2 epsilon-DP "
    "(n/a). OpenDP: count_by_categories >> discrete Laplace, d_in=1 (add/remove) or 2 "
    "(substitute). Error per category count.",
    "proportions": "diffprivlib: `histogram(density=True)` on the codes (unit bins), i.e. "
    "noisy counts over their noisy sum, add/remove as above. pandas-dp: "
    "`s.dp.proportions` (method='project'; noisy proportions by default, or noisy "
    "integer counts divided by the public n with `via='counts'`). Error per category "
    "proportion.",
    "cov": "4 x 4 covariance (ddof=1) on bounds [0, 1]; error per entry of the upper "
    "triangle (10 entries).",
}

_NO_PROPORTIONS = (
    "OpenDP has no proportions release (count_by_categories releases counts; dividing "
    "by n and the sum-to-one repair would be the caller's own code)"
)
_NO_SUBSTITUTE_HIST = (
    "its histogram is epsilon-DP under add/remove only (2 epsilon under substitution)"
)
_NO_COV_DPL = "no covariance matrix in diffprivlib.tools (covariance_eig: eigendecomposition)"
_NO_COV_ODP = "no covariance release in OpenDP 0.16 (X'X only inside its PCA)"


def _accuracy_release(
    statistic: str, library: str, relation: str, n: int, eps: float, d: AccuracyData
) -> tuple[Callable[[], Any], Any] | str:
    """(draw, exact) of one row of section 5, or the reason it is n/a."""
    k = len(CATEGORIES)
    cats = list(CATEGORIES)
    counts = np.bincount(d.codes, minlength=k).astype(np.float64)
    upper = np.triu_indices(len(COV_COLUMNS))
    x = d.x.to_numpy()
    if library in (PANDAS_DP, PANDAS_DP_COUNTS):
        s, cat, block = d.x, d.cat, d.block
        kw: dict[str, Any] = {"epsilon": eps, "neighbouring": relation}
        if library == PANDAS_DP_COUNTS:
            kw["via"] = "counts"
        if statistic == "mean":
            return (lambda: s.dp.mean(bounds=ACC_BOUNDS, **kw)), x.mean()
        if statistic == "var":
            return (lambda: s.dp.var(bounds=ACC_BOUNDS, **kw)), x.var(ddof=1)
        if statistic == "value_counts":
            return (
                lambda: cat.dp.value_counts(sort=False, categories="dtype", **kw).reindex(cats)
            ), counts
        if statistic == "proportions":
            return (lambda: cat.dp.proportions(categories="dtype", **kw).reindex(cats)), counts / n
        exact_cov = block.cov().to_numpy()[upper]
        return (lambda: block.dp.cov(bounds=ACC_BOUNDS, **kw).to_numpy()[upper]), exact_cov
    if library == DIFFPRIVLIB:
        peers, why = _import_diffprivlib()
        if peers is None:
            return why
        tools = peers[1]
        if statistic == "mean":
            return (lambda: tools.mean(x, epsilon=eps, bounds=ACC_BOUNDS)), x.mean()
        if statistic == "var":
            return (lambda: tools.var(x, epsilon=eps, bounds=ACC_BOUNDS)), x.var(ddof=0)
        if statistic in ("value_counts", "proportions"):
            if relation != ADD_REMOVE:
                return _NO_SUBSTITUTE_HIST
            density = statistic == "proportions"
            codes = d.codes

            def histogram() -> Any:
                return tools.histogram(codes, epsilon=eps, bins=k, range=(0, k), density=density)[0]

            return histogram, (counts / n if density else counts)
        return _NO_COV_DPL
    dp, why = _import_opendp()
    if dp is None:
        return why
    if statistic in ("mean", "var"):
        meas = _opendp_measurement(dp, statistic, n, bounds=ACC_BOUNDS, epsilon=eps, sized=True)
        writable = x.copy()
        exact = x.mean() if statistic == "mean" else x.var(ddof=1)
        return (lambda: meas(writable)), exact
    if statistic == "value_counts":
        d_in = 1 if relation == ADD_REMOVE else 2
        meas = _opendp_count_by_categories(dp, range(k), dp.i32, epsilon=eps, d_in=d_in)
        codes32 = d.codes.astype(np.int32)
        return (lambda: meas(codes32)), counts
    if statistic == "proportions":
        return _NO_PROPORTIONS
    return _NO_COV_ODP


def bench_accuracy(reps: int) -> dict[str, Any]:
    """Section 5: RMSE and bias of each library's release, at equal epsilon and relation."""
    out: dict[str, Any] = {}
    for statistic, rows in ACC_ROWS.items():
        table: dict[str, Any] = {}
        for library, relation in rows:
            cells: dict[str, Any] = {}
            for n in ACC_SIZES:
                d = accuracy_data(n)
                for eps in ACC_EPSILONS:
                    key = f"n={n}, eps={eps:g}"
                    try:
                        got = _accuracy_release(statistic, library, relation, n, eps, d)
                        if isinstance(got, str):
                            cells[key] = {"note": got}
                            continue
                        draw, exact = got
                        cells[key] = _errors(draw, exact, reps)
                    except Exception as exc:
                        cells[key] = {"note": _reason(exc)}
            table[f"{library} | {relation}"] = cells
        out[statistic] = table
        print(f"... accuracy of {statistic} done", file=sys.stderr, flush=True)
    return out


# ----------------------------------------------------------------------------- output


def _table(headers: list[str], rows: list[list[str]], *, left: int = 1) -> str:
    """A Markdown table; the first ``left`` columns are left-aligned, the rest right."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        parts = [
            c.ljust(w) if i < left else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(parts) + " |"

    sep = "|" + "|".join(
        ":" + "-" * (w + 1) if i < left else "-" * (w + 1) + ":" for i, w in enumerate(widths)
    )
    return "\n".join([line(headers), sep + "|", *(line(r) for r in rows)])


def _fmt_ms(t: Timing) -> str:
    if t.median is None:
        return "n/a"
    ms = t.median * 1e3
    text = f"{ms:.3g}" if ms < 100 else f"{ms:.0f}"
    return f"{text} ({t.reps})"


def _fmt_us(t: Timing) -> str:
    return "n/a" if t.median is None else f"{t.median * 1e6:.1f}"


def _rows_label(n: int) -> str:
    exp = math.log10(n)
    return f"10^{int(exp)} rows" if exp.is_integer() else f"{n:,} rows"


def _ratio(top: Timing, bottom: Timing) -> float | None:
    if top.median is None or bottom.median is None or bottom.median <= 0:
        return None
    return top.median / bottom.median


def _fmt_ratio(r: float | None) -> str:
    if r is None:
        return "n/a"
    return f"{r:.2f}x" if r >= 0.1 else f"{r:.2g}x"


RATIOS = [
    (NUMPY, "pandas-dp / numpy floor"),
    (PANDAS, "pandas-dp / pandas"),
    (DIFFPRIVLIB, "pandas-dp / diffprivlib"),
    (OPENDP_ARRAY, "pandas-dp / OpenDP (ndarray)"),
    (OPENDP_LIST, "pandas-dp / OpenDP (list, conversion excluded)"),
    (OPENDP_POLARS, "pandas-dp / OpenDP Polars"),
]


def report_large(
    large: dict[int, dict[str, dict[str, Timing]]], setup: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    sizes = sorted(large)
    lines: list[str] = []
    ratios: dict[str, Any] = {}
    notes: dict[str, str] = {}
    lines.append(
        f"## 1. One float column, bounds {BOUNDS}, epsilon={EPSILON}\n\n"
        "Median milliseconds per call (repetitions in brackets).\n"
    )
    for statistic in ("mean", "var"):
        names = list(large[sizes[0]][statistic])
        headers = [f"{statistic}", *(_rows_label(n) for n in sizes)]
        rows = []
        for name in names:
            rows.append([name, *(_fmt_ms(large[n][statistic][name]) for n in sizes)])
            for n in sizes:
                note = large[n][statistic][name].note
                if note and large[n][statistic][name].median is None:
                    notes[name] = note
        lines.append(f"### {statistic}\n\n" + _table(headers, rows) + "\n")
        ratio_rows = []
        ratios[statistic] = {}
        missing = _na("not run")
        for ours, who in OURS:
            pairs = [(peer, label.replace("pandas-dp", who, 1)) for peer, label in RATIOS]
            if ours == PANDAS_DP_NUMPY:
                pairs.append((PANDAS_DP, "pandas-dp numpy path / pandas-dp"))
            for peer, label in pairs:
                values = [
                    _ratio(
                        large[n][statistic].get(ours, missing),
                        large[n][statistic].get(peer, missing),
                    )
                    for n in sizes
                ]
                ratios[statistic][label] = dict(zip(map(str, sizes), values, strict=True))
                ratio_rows.append([label, *(_fmt_ratio(v) for v in values)])
        header = [f"{statistic}: ratio (lower is faster)", *(_rows_label(n) for n in sizes)]
        lines.append(_table(header, ratio_rows) + "\n")
    if notes:
        lines.append("n/a reasons:\n")
        lines.extend(f"- {name.strip()}: {note}" for name, note in notes.items())
        lines.append("")
    one_off_rows = []
    keys = sorted({k for n in sizes for k in setup.get(str(n), {})})
    for key in keys:
        cells = []
        for n in sizes:
            v = setup.get(str(n), {}).get(key)
            cells.append("n/a" if not isinstance(v, float) else f"{v * 1e3:.0f}")
        one_off_rows.append([key, *cells])
    if one_off_rows:
        lines.append(
            "One-off OpenDP costs, not in the timings above (milliseconds, one run):\n\n"
            + _table(["OpenDP setup", *(_rows_label(n) for n in sizes)], one_off_rows)
            + "\n"
        )
    return "\n".join(lines), ratios


#: Section 2's contender timed inside a `with budget:` block.
IN_BUDGET = "pandas-dp: s.dp.mean inside `with budget:`"
#: Section 2's mean on the numpy path.
SMALL_NUMPY_MEAN = "pandas-dp numpy path: s.dp.mean (secure noise)"
SMALL_HEADING = f"## 2. Per-release latency on a {SMALL_ROWS}-row Series"


def report_small(small: dict[str, Timing], calls: int, note: str = "") -> str:
    rows = [
        [
            name,
            _fmt_us(t),
            f"{min(t.samples) * 1e6:.1f}" if t.samples else "n/a",
            str(t.reps) if t.reps else t.note or "n/a",
        ]
        for name, t in small.items()
    ]
    return (
        f"{SMALL_HEADING}\n\n"
        f"Median (and smallest) microseconds per call over {calls} calls each (gc paused, "
        f"rotating blocks of 20 calls).{note}\n\n"
        + _table(["call", "median us", "min us", "calls"], rows)
        + "\n"
    )


def report_memory(memory: dict[str, dict[str, float | str]], n: int) -> str:
    names = list(memory["mean"])
    rows = []
    for name in names:
        cells = []
        for statistic in ("mean", "var"):
            v = memory[statistic][name]
            cells.append(f"{v / 2**20:.3f}" if isinstance(v, float) else "n/a")
        rows.append([name, *cells])
    notes = [f"- {name}: {v}" for name, v in memory["mean"].items() if isinstance(v, str)]
    return (
        f"## 3. Peak memory of one call, {_rows_label(n)} (MB = 2^20 bytes, tracemalloc)\n\n"
        f"The input column itself is {n * 8 / 2**20:.1f} MB and is not counted.\n\n"
        + _table(["call", "mean: peak MB", "var: peak MB"], rows)
        + "\n\n"
        + "\n".join(notes)
        + "\n"
    )


#: What each statistic of section 4 times (printed above its table).
MORE_DESCRIPTIONS = {
    "sum": "Bounds (0, 100) on the column of section 1: floor `np.clip(x, a, b).sum()`, "
    "pandas `s.clip(a, b).sum()`, `df.dp.sum(col, bounds=...)`, diffprivlib `tools.sum`, "
    "OpenDP clamp >> resize >> sum >> Laplace.",
    "count": "Non-missing values of a float column with 1 % NaN: floor "
    "`np.count_nonzero(~np.isnan(x))`, pandas `s.count()`, `s.dp.count()`, diffprivlib "
    "`tools.count_nonzero(~np.isnan(x))`, OpenDP drop_null >> count >> discrete Laplace.",
    "value_counts, category dtype": "4 categories with p = (0.5, 0.3, 0.15, 0.05), dtype "
    "`pd.CategoricalDtype([...])`: floor `np.bincount(codes, minlength=4)` on the int8 "
    'codes, pandas `s.value_counts()`, `s.dp.value_counts(categories="dtype")` (the '
    "dtype is built from declared categories), diffprivlib "
    "`tools.histogram(codes, bins=4, range=(0, 4))`, OpenDP "
    "count_by_categories >> discrete Laplace on int32 codes (it takes no int8).",
    "value_counts, str column": "The same column as plain strings (pandas' `str` dtype): "
    "pandas `s.value_counts()`, `s.dp.value_counts(categories=[...])`. The floor is still "
    "`np.bincount` on precomputed codes; the peers take integer codes, whose encoding is "
    "timed on its own row. OpenDP also on a list of Python str.",
    "proportions, category dtype": "Floor `np.bincount(codes, minlength=4) / n`, pandas "
    "`s.value_counts(normalize=True)`, `s.dp.proportions()`, diffprivlib "
    "`tools.histogram(..., density=True)` (noisy counts over their sum).",
    "proportions, str column": "As above, on the str column (`categories=[...]`).",
    "cov": "4 x 4 covariance matrix of a 4-column block, bounds (-1, 1): floor "
    "`np.cov(np.clip(X, -1, 1), rowvar=False)`, pandas `df.clip(-1, 1).cov()`, "
    "`df.dp.cov(bounds=(-1, 1))`.",
}


def _more_ratios(statistic: str) -> list[tuple[tuple[str, ...], str]]:
    """(peer rows whose medians are added, label) of one statistic of section 4."""
    out: list[tuple[tuple[str, ...], str]] = [
        ((NUMPY,), "pandas-dp / numpy floor"),
        ((PANDAS,), "pandas-dp / pandas"),
        ((DIFFPRIVLIB,), "pandas-dp / diffprivlib"),
    ]
    text = statistic.endswith("str column")
    if text:
        out.append(((DIFFPRIVLIB, TO_CODES), "pandas-dp / (diffprivlib + str encoding)"))
    if statistic in ("sum", "count"):
        out.append(((OPENDP_ARRAY,), "pandas-dp / OpenDP (ndarray)"))
    elif statistic.startswith("value_counts"):
        out.append(((OPENDP_CODES,), "pandas-dp / OpenDP (int32 codes, conversion excluded)"))
        if text:
            out.append(
                ((OPENDP_STR_LIST,), "pandas-dp / OpenDP (list of str, conversion excluded)")
            )
    elif statistic.startswith("proportions"):
        out.append(((OPENDP_CODES,), "pandas-dp / OpenDP"))
    else:
        out.append(((OPENDP_ARRAY,), "pandas-dp / OpenDP"))
    return out


def _ratio_sum(top: Timing, parts: list[Timing]) -> float | None:
    if top.median is None or any(p.median is None for p in parts):
        return None
    bottom = sum(p.median for p in parts if p.median is not None)
    return top.median / bottom if bottom > 0 else None


def report_more(
    more: dict[int, dict[str, dict[str, Timing]]], setup: dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    sizes = sorted(more)
    lines = [
        f"## 4. More statistics, epsilon={EPSILON}\n\n"
        "Median milliseconds per call (repetitions in brackets); timed as in section 1.\n"
    ]
    ratios: dict[str, Any] = {}
    notes: dict[str, str] = {}
    for statistic in MORE:
        names: list[str] = []
        for n in sizes:
            names.extend(k for k in more[n][statistic] if k not in names)
        rows = []
        for name in names:
            cells = []
            for n in sizes:
                t = more[n][statistic].get(name, _na("not run"))
                cells.append(_fmt_ms(t))
                if t.note and t.median is None:
                    notes[f"{statistic}: {name.strip()}"] = t.note
            rows.append([name, *cells])
        headers = [statistic, *(_rows_label(n) for n in sizes)]
        lines.append(
            f"### {statistic}\n\n{MORE_DESCRIPTIONS[statistic]}\n\n" + _table(headers, rows) + "\n"
        )
        ratio_rows = []
        ratios[statistic] = {}
        missing = _na("not run")
        for ours, who in OURS:
            pairs = [
                (peers, label.replace("pandas-dp", who, 1))
                for peers, label in _more_ratios(statistic)
            ]
            if ours == PANDAS_DP_NUMPY:
                pairs.append(((PANDAS_DP,), "pandas-dp numpy path / pandas-dp"))
            for peers, label in pairs:
                values = [
                    _ratio_sum(
                        more[n][statistic].get(ours, missing),
                        [more[n][statistic].get(p, missing) for p in peers],
                    )
                    for n in sizes
                ]
                ratios[statistic][label] = dict(zip(map(str, sizes), values, strict=True))
                ratio_rows.append([label, *(_fmt_ratio(v) for v in values)])
        header = [f"{statistic}: ratio (lower is faster)", *(_rows_label(n) for n in sizes)]
        lines.append(_table(header, ratio_rows) + "\n")
    if notes:
        lines.append("n/a reasons:\n")
        lines.extend(f"- {name}: {note}" for name, note in notes.items())
        lines.append("")
    keys = sorted({k for n in sizes for k in setup.get(str(n), {})})
    one_off_rows = []
    for key in keys:
        cells = []
        for n in sizes:
            v = setup.get(str(n), {}).get(key)
            cells.append("n/a" if not isinstance(v, float) else f"{v * 1e3:.0f}")
        one_off_rows.append([key, *cells])
    if one_off_rows:
        lines.append(
            "One-off OpenDP costs, not in the timings above (milliseconds, one run):\n\n"
            + _table(["OpenDP setup", *(_rows_label(n) for n in sizes)], one_off_rows)
            + "\n"
        )
    return "\n".join(lines), ratios


def report_more_memory(memory: dict[str, dict[str, float | str]], n: int) -> str:
    names = [NUMPY, PANDAS, PANDAS_DP, PANDAS_DP_NUMPY, DIFFPRIVLIB]
    rows = []
    notes: dict[str, str] = {}
    for statistic, row in memory.items():
        cells = []
        for name in names:
            v = row.get(name, "not measured")
            if isinstance(v, float):
                cells.append(f"{v / 2**20:.3f}")
            else:
                cells.append("n/a")
                notes.setdefault(f"{name}, {statistic}", str(v))
        rows.append([statistic, *cells])
    text = (
        f"### Peak memory of one call, {_rows_label(n)} (MB = 2^20 bytes, tracemalloc)\n\n"
        f"Inputs, not counted: the float column {n * 8 / 2**20:.1f} MB, the int8 codes "
        f"{n / 2**20:.1f} MB, the 4-column block {4 * n * 8 / 2**20:.1f} MB. The str "
        "column's peers are measured on precomputed codes. tracemalloc sees numpy and "
        "Python allocations only: the str column is Arrow-backed, so what pandas and "
        "pandas-dp allocate in Arrow (its hash tables) is not counted in the str rows, "
        "and OpenDP (Rust) is not measured.\n\n"
        + _table(["statistic", *(f"{name}: MB" for name in names)], rows)
        + "\n"
    )
    if notes:
        text += "\n" + "\n".join(f"- {k}: {v}" for k, v in notes.items()) + "\n"
    return text


def _fmt_error(cell: dict[str, Any]) -> str:
    if "rmse" not in cell:
        return "n/a"
    se = cell.get("bias_se")
    flag = "!" if se is not None and abs(cell["bias"]) > 3 * se else ""
    return f"{cell['rmse']:.3g} ({cell['bias']:+.2g}{flag})"


def report_accuracy(accuracy: dict[str, Any], reps: int) -> str:
    lines = [
        "## 5. Accuracy at equal epsilon and equal neighbouring relation\n\n"
        f"RMSE of {reps} releases against the exact statistic of a fixed data set (the "
        "error is the privacy noise, not sampling error), and in brackets the bias (mean "
        "error; for a vector, of its entry with the largest absolute bias), marked `!` "
        "when it exceeds 3 Monte-Carlo standard errors. Values uniform on "
        f"{list(ACC_RANGE)} inside public bounds {list(ACC_BOUNDS)}; {len(CATEGORIES)} "
        f"categories with p = {CATEGORY_P}, exactly round(n p) records each. Every "
        "library with its default (secure) noise; pandas-dp with the `neighbouring=` "
        "the peer's release assumes.\n"
    ]
    notes: dict[str, str] = {}
    for statistic, table in accuracy.items():
        keys = list(next(iter(table.values())))
        rows = []
        for label, cells in table.items():
            library, relation = label.split(" | ")
            rows.append([library, relation, *(_fmt_error(cells[k]) for k in keys)])
            for cell in cells.values():
                if "note" in cell:
                    notes[f"{statistic}, {library}, {relation}"] = cell["note"]
        ratio_rows = []
        for label, cells in table.items():
            library, relation = label.split(" | ")
            ours = table.get(f"{PANDAS_DP} | {relation}")
            if library == PANDAS_DP or ours is None:
                continue
            values = []
            for k in keys:
                a, b = ours[k].get("rmse"), cells[k].get("rmse")
                values.append(None if a is None or b is None or b <= 0 else a / b)
            if all(v is None for v in values):
                continue
            ratio_rows.append(
                [f"RMSE pandas-dp / {library}", relation, *(_fmt_ratio(v) for v in values)]
            )
        lines.append(
            f"### {statistic}\n\n{ACC_NOTES[statistic]}\n\n"
            + _table(["library", "relation", *keys], rows + ratio_rows, left=2)
            + "\n"
        )
    if notes:
        lines.append("n/a reasons:\n")
        lines.extend(f"- {k}: {v}" for k, v in notes.items())
        lines.append("")
    return "\n".join(lines)


def goals_more(more: dict[int, dict[str, dict[str, Timing]]]) -> list[dict[str, Any]]:
    n = max(more)
    where = _rows_label(n) + ("" if n == 10**7 else " (the goal is stated at 10^7 rows)")
    out: list[dict[str, Any]] = []
    for ours, _ in OURS:
        path = "" if ours == PANDAS_DP else " (numpy path)"
        for statistic in MORE[2:6]:
            res = more[n][statistic]
            call, kind = statistic.split(", ")
            for peer, limit, text in (
                (NUMPY, 1.5, "within 1.5x of the np.bincount floor"),
                (DIFFPRIVLIB, 1.0, "faster than diffprivlib's histogram"),
            ):
                r = _ratio(res.get(ours, Timing()), res[peer])
                out.append(
                    {
                        "goal": f"s.dp.{call}{path} {text}, {kind}, {where}",
                        "ratio": r,
                        "limit": limit,
                        "met": None if r is None else r <= limit,
                    }
                )
        r = _ratio(more[n]["cov"].get(ours, Timing()), more[n]["cov"][NUMPY])
        out.append(
            {
                "goal": f"df.dp.cov{path} within 1.5x of the numpy floor, {where}",
                "ratio": r,
                "limit": 1.5,
                "met": None if r is None else r <= 1.5,
            }
        )
    return out


def goals(
    large: dict[int, dict[str, dict[str, Timing]]], small: dict[str, Timing]
) -> list[dict[str, Any]]:
    n = max(large)
    where = _rows_label(n) + ("" if n == 10**7 else " (the goal is stated at 10^7 rows)")
    out: list[dict[str, Any]] = []
    for ours, _ in OURS:
        path = "" if ours == PANDAS_DP else " (numpy path)"
        for statistic in ("mean", "var"):
            res = large[n][statistic]
            for peer, limit, text in (
                (DIFFPRIVLIB, 1.0, "at least as fast as diffprivlib"),
                (NUMPY, 1.5, "within 1.5x of the numpy floor"),
            ):
                r = _ratio(res.get(ours, Timing()), res[peer])
                out.append(
                    {
                        "goal": f"df.dp.{statistic}{path} {text}, {where}",
                        "ratio": r,
                        "limit": limit,
                        "met": None if r is None else r <= limit,
                    }
                )
    theirs = small.get("diffprivlib: tools.mean", Timing())
    for name, path in (
        ("pandas-dp: s.dp.mean (secure noise)", ""),
        (SMALL_NUMPY_MEAN, " (numpy path)"),
    ):
        r = _ratio(small.get(name, Timing()), theirs)
        out.append(
            {
                "goal": f"one s.dp.mean release{path} on a {SMALL_ROWS}-row Series costs no "
                f"more than diffprivlib's tools.mean",
                "ratio": r,
                "limit": 1.0,
                "met": None if r is None else r <= 1.0,
            }
        )
    return out


def report_goals(items: list[dict[str, Any]]) -> str:
    rows = []
    for g in items:
        verdict = "n/a" if g["met"] is None else ("met" if g["met"] else "NOT met")
        rows.append([g["goal"], _fmt_ratio(g["ratio"]), f"<= {g['limit']:g}x", verdict])
    header = ["goal", "pandas-dp / peer", "target", "verdict"]
    return "## Goals\n\n" + _table(header, rows) + "\n"


# ----------------------------------------------------------------------------- main


# ----------------------------------------------------------------------------- engine vs floor

ENGINE_ROWS = 10**7
ENGINE_KEYS = 1000
ENGINE_HEADING = "## Engine speed at 10^7 rows: ratio to one read of the data"
#: The numpy path run serially (what a Dask worker's task runs, or one core).
ENGINE_ONE_THREAD = "pandas-dp, numpy path, one thread"


def _serially(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with the engine's parts run in the calling thread (no thread pool)."""
    from pandas_dp.engines import _numba

    def run() -> Any:
        with _numba.serial():
            return fn()

    return run


def _same_release(a: Any, b: Any) -> bool:
    """Whether two seeded releases have the same values (the paths must agree)."""
    try:
        return bool(np.array_equal(np.asarray(a, dtype=float), np.asarray(b, dtype=float)))
    except (TypeError, ValueError):
        return bool(a == b)


def bench_engine(n: int, *, max_reps: int, budget_s: float) -> dict[str, dict[str, Timing]]:
    """Each statistic's full release next to one read of its input, in one process.

    The floor of a numeric statistic is ``x.sum()`` on the float64 array; of
    ``value_counts`` on a category column, ``codes.sum()`` on its int8 codes. Each
    release is timed on the default install (numba) and on the numpy path
    (:func:`on_numpy_path`), in the engine's threads and serially (one thread), in
    the same interleaved rounds; the seeded releases of the two paths are checked
    equal first. The grouped mean (1000 declared keys) is timed against pandas'
    ``groupby().mean()``, twice: on the engine alone (``engines.group_codes`` +
    ``engines.moments``, what issue 9's target is about) and as the whole release
    ``df.dp.groupby("k", keys=...).mean("x", ...)`` (noise and metadata included).
    """
    import pandas_dp  # noqa: F401  (registers the accessor)
    from pandas_dp import engines

    rng = np.random.default_rng(11)
    x = rng.uniform(*BOUNDS, n)
    s = pd.Series(x, name="x")
    d = more_data(n)
    codes = d.codes
    kw = {"epsilon": EPSILON, "bounds": BOUNDS, "random_state": 1}
    out: dict[str, dict[str, Timing]] = {}

    def both_paths(name: str, release: Callable[[], Any]) -> dict[str, Callable[[], Any]]:
        on_numpy = on_numpy_path(release)
        if not _same_release(release(), on_numpy()):
            raise RuntimeError(f"{name}: the numpy path released other values")
        return {name: release, PANDAS_DP_NUMPY: on_numpy, ENGINE_ONE_THREAD: _serially(on_numpy)}

    for stat in ("mean", "sum", "count", "var"):
        fn = getattr(s.dp, stat)
        args = {k: v for k, v in kw.items() if stat != "count" or k != "bounds"}
        c: dict[str, Callable[[], Any] | Timing] = {
            "floor: x.sum()": lambda: x.sum(),
            **both_paths(f"pandas-dp s.dp.{stat}", lambda fn=fn, args=args: fn(**args)),
        }
        out[stat] = time_interleaved(c, max_reps=max_reps, budget_s=budget_s)
    cat = d.cat
    out["value_counts (category)"] = time_interleaved(
        {
            "floor: codes.sum()": lambda: codes.sum(),
            **both_paths(
                "pandas-dp value_counts",
                lambda: cat.dp.value_counts(epsilon=EPSILON, categories="dtype", random_state=1),
            ),
        },
        max_reps=max_reps,
        budget_s=budget_s,
    )
    keys = rng.integers(0, ENGINE_KEYS, n)
    frame = pd.DataFrame({"k": keys, "x": x})
    kcat = pd.Series(pd.Categorical(keys, categories=range(ENGINE_KEYS)))
    frame_cat = pd.DataFrame({"k": kcat, "x": x})
    declared = list(range(ENGINE_KEYS))

    def grouped(column: pd.Series) -> Any:
        groups = engines.group_codes([column], [declared])
        return engines.moments(s, *BOUNDS, squares=False, groups=groups)

    def released(fr: pd.DataFrame) -> Any:
        return fr.dp.groupby("k", keys=declared).mean(
            "x", epsilon=EPSILON, bounds=BOUNDS, random_state=1
        )

    for label, kcol, fr in (
        ("int keys", pd.Series(keys), frame),
        ("categorical keys", kcat, frame_cat),
    ):
        pandas_mean = lambda fr=fr: fr.groupby("k", observed=False)["x"].mean()  # noqa: E731
        engine_only = lambda kcol=kcol: grouped(kcol)  # noqa: E731
        out[f"grouped mean, {ENGINE_KEYS} {label}"] = time_interleaved(
            {
                "pandas df.groupby(k)['x'].mean()": pandas_mean,
                "pandas-dp engine only": engine_only,
                PANDAS_DP_NUMPY: on_numpy_path(engine_only),
            },
            max_reps=max_reps,
            budget_s=budget_s,
        )
        out[f"grouped mean, {ENGINE_KEYS} {label}, whole release"] = time_interleaved(
            {
                "pandas df.groupby(k)['x'].mean()": pandas_mean,
                **both_paths("pandas-dp df.dp.groupby(k).mean", lambda fr=fr: released(fr)),
            },
            max_reps=max_reps,
            budget_s=budget_s,
        )
    return out


def report_engine(
    res: dict[str, dict[str, Timing]], n: int, load: tuple[str, str] | None = None
) -> tuple[str, dict[str, Any]]:
    """The engine table: each release on both paths, as ratios to its reference."""
    rows = []
    ratios: dict[str, Any] = {}
    na = _na("not run")

    def cells(t: Timing, floor: Timing) -> list[str]:
        r = _ratio(t, floor)
        return ["n/a" if t.median is None else f"{t.median * 1e3:.3g}", _fmt_ratio(r)]

    for stat, timings in res.items():
        (floor_name, floor), (name, mine) = list(timings.items())[:2]
        numpy_path = timings.get(PANDAS_DP_NUMPY, na)
        one_thread = timings.get(ENGINE_ONE_THREAD, na)
        ratios[stat] = {
            "default": _ratio(mine, floor),
            "numpy path": _ratio(numpy_path, floor),
            "numpy path, one thread": _ratio(one_thread, floor),
        }
        rows.append(
            [
                stat,
                floor_name,
                "n/a" if floor.median is None else f"{floor.median * 1e3:.3g}",
                name,
                *cells(mine, floor),
                *cells(numpy_path, floor),
                *(cells(one_thread, floor) if one_thread.median is not None else ["", ""]),
            ]
        )
    default = "numba" if _has_numba() else "numpy (numba not installed)"
    text = (
        f"\n{ENGINE_HEADING}\n\n{_rows_label(n)}; median milliseconds; default install's "
        f"kernels: {default}. Targets: mean/sum/count/var <= 1.5x x.sum(), value_counts "
        f"<= 1.5x codes.sum(), grouped mean <= 1.0x pandas, on both paths. The engine's "
        f"kernels (compiled or numpy) use up to {_engine_threads()} threads; the last "
        f"columns run the numpy path in one thread. {numpy_path_description()}\n\n"
        + _table(
            [
                "statistic",
                "reference",
                "ms",
                "pandas-dp",
                "default ms",
                "ratio",
                "numpy path ms",
                "ratio",
                "1 thread ms",
                "ratio",
            ],
            rows,
            left=2,
        )
    )
    if load is not None:
        text += (
            f"\n\nload average at the start of this section {load[0]}, at its end {load[1]} "
            f"({_usable_cores()} usable cores)"
        )
    return text, ratios


def goals_engine(res: dict[str, dict[str, Timing]]) -> list[dict[str, Any]]:
    """The engine section's targets (issue 34, item 2: the numpy path too)."""
    out: list[dict[str, Any]] = []
    for stat in ("mean", "sum", "var", "value_counts (category)"):
        timings = res.get(stat)
        if not timings:
            continue
        floor_name, floor = next(iter(timings.items()))
        for key, path in ((None, "default install"), (PANDAS_DP_NUMPY, "numpy path")):
            mine = list(timings.values())[1] if key is None else timings.get(key, Timing())
            r = _ratio(mine, floor)
            out.append(
                {
                    "goal": f"{stat} ({path}) within 1.5x one read ({floor_name.split(': ')[-1]}),"
                    " 10^7 rows",
                    "ratio": r,
                    "limit": 1.5,
                    "met": None if r is None else r <= 1.5,
                }
            )
    return out


def _engine_threads() -> int:
    from pandas_dp.engines import _numba

    return _numba.THREADS


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _has_numba() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def engine_only(args: argparse.Namespace) -> int:
    """Run the engine section alone and merge it into existing results files."""
    n = args.rows[0] if args.rows else ENGINE_ROWS
    load_start = _load()
    res = bench_engine(n, max_reps=5 if args.quick else 15, budget_s=20.0)
    text, ratios = report_engine(res, n, (load_start, _load()))
    print(text)
    payload = json.loads(args.json.read_text()) if args.json.exists() else {}
    payload["engine"] = {
        "rows": n,
        "kernels": "numba" if _has_numba() else "numpy",
        "numpy_path": numpy_path_description(),
        "load_average": [load_start, _load()],
        "timings": {st: {k: t.to_json() for k, t in r.items()} for st, r in res.items()},
        "ratios": ratios,
    }
    args.json.write_text(json.dumps(payload, indent=2) + "\n")
    markdown = args.markdown or args.json.with_suffix(".md")
    old = markdown.read_text() if markdown.exists() else ""
    if ENGINE_HEADING in old:  # the section replaced in place, the others kept
        head, rest = old.split("\n" + ENGINE_HEADING, 1)
        tail = rest[rest.index("\n## ") :] if "\n## " in rest else "\n"
        markdown.write_text(head.rstrip("\n") + "\n" + text + "\n" + tail)
    else:
        markdown.write_text(old.rstrip("\n") + "\n" + text + "\n")
    print(f"\nengine section merged into {args.json} and {markdown}")
    return 0


def small_only(args: argparse.Namespace) -> int:
    """Run section 2 alone and put it in place in existing results files."""
    calls = 1000 if args.quick else 2000
    load_start = _load()
    small = bench_small(calls)
    load_end = _load()
    text = report_small(
        small,
        calls,
        f" Section re-run alone (--small-only); load average at start {load_start}, "
        f"at end {load_end} (2 usable cores); the Goals table below is the full run's, "
        f"not recomputed.",
    )
    print(text)
    payload = json.loads(args.json.read_text()) if args.json.exists() else {}
    payload["small"] = {k: t.to_json() for k, t in small.items()}
    payload["small_load_average"] = [load_start, load_end]
    args.json.write_text(json.dumps(payload, indent=2) + "\n")
    markdown = args.markdown or args.json.with_suffix(".md")
    old = markdown.read_text() if markdown.exists() else ""
    if SMALL_HEADING in old:
        head, rest = old.split(SMALL_HEADING, 1)
        tail = rest[rest.index("\n## ") :] if "\n## " in rest else "\n"
        markdown.write_text(head + text + tail)
    else:
        markdown.write_text(old.rstrip("\n") + "\n\n" + text)
    print(f"\nsection 2 merged into {args.json} and {markdown}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="10^5 and 10^6 rows only, fewer repetitions"
    )
    parser.add_argument(
        "--rows", type=int, nargs="+", metavar="N", help="column lengths for section 1"
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=RESULTS / "latest.json",
        help="where to write the JSON results (default: benchmarks/results/latest.json)",
    )
    parser.add_argument(
        "--markdown",
        type=Path,
        help="where to write a copy of the printed tables (default: the JSON path, .md)",
    )
    parser.add_argument(
        "--accuracy-reps",
        type=int,
        metavar="R",
        help="releases per cell of the accuracy section (default 200; --quick 50)",
    )
    parser.add_argument(
        "--engine-only",
        action="store_true",
        help="time only the engine section (10^7 rows, or the first --rows) and merge it "
        "into the existing JSON and markdown files",
    )
    parser.add_argument(
        "--small-only",
        action="store_true",
        help="time only section 2 (per-release latency on a small Series) and put it in "
        "place in the existing JSON and markdown files",
    )
    args = parser.parse_args(argv)
    if args.small_only:
        return small_only(args)
    if args.engine_only:
        return engine_only(args)
    sizes = sorted(set(args.rows or ([10**5, 10**6] if args.quick else [10**5, 10**6, 10**7])))
    if any(n < 2 for n in sizes):
        parser.error("--rows needs at least 2 rows (a variance needs two)")
    calls = 1000 if args.quick else 2000
    mode = "quick" if args.quick else "full"
    acc_reps = args.accuracy_reps or (50 if args.quick else 200)
    if acc_reps < 2:
        parser.error("--accuracy-reps needs at least 2 releases per cell")
    printed: list[str] = []

    def emit(text: str = "") -> None:
        print(text, flush=True)
        printed.append(text)

    def reps_for(n: int) -> int:
        if args.quick:
            return 20 if n <= 10**5 else 7
        return 50 if n <= 10**5 else (20 if n <= 10**6 else 9)

    budget_s = 3.0 if args.quick else 20.0
    started = time.perf_counter()
    _import_diffprivlib()  # load the peers' native thread pools before describing them
    _import_opendp()
    info = machine_info()
    emit("# pandas-dp speed benchmark\n")
    emit(_table(["machine", ""], [[k, str(v)] for k, v in info.items()], left=2))
    emit(
        f"\nmode: {mode}; rows {', '.join(map(str, sizes))}; "
        f"up to {', '.join(str(reps_for(n)) for n in sizes)} repetitions per size "
        f"(fewer for a contender slower than {budget_s:g} s / repetitions, at least 3); "
        f"accuracy: {acc_reps} releases per cell\n"
    )

    large: dict[int, dict[str, dict[str, Timing]]] = {}
    setup: dict[str, Any] = {}
    for n in sizes:
        print(f"... timing {_rows_label(n)}", file=sys.stderr, flush=True)
        large[n] = bench_large(n, max_reps=reps_for(n), budget_s=budget_s, setup=setup)
    text, ratios = report_large(large, setup)
    emit(text)

    print("... timing the small Series", file=sys.stderr, flush=True)
    small = bench_small(calls)
    emit(report_small(small, calls))

    mem_n = max(sizes)
    print("... measuring memory", file=sys.stderr, flush=True)
    memory = bench_memory(mem_n)
    emit(report_memory(memory, mem_n))

    more: dict[int, dict[str, dict[str, Timing]]] = {}
    setup_more: dict[str, Any] = {}
    for n in sizes:
        print(f"... timing more statistics, {_rows_label(n)}", file=sys.stderr, flush=True)
        more[n] = bench_more(
            n,
            max_reps=reps_for(n),
            budget_s=budget_s,
            setup=setup_more,
            str_list_max=OPENDP_STR_MAX_ROWS[mode],
        )
    text, more_ratios = report_more(more, setup_more)
    emit(text)
    print("... measuring memory of more statistics", file=sys.stderr, flush=True)
    more_memory = bench_more_memory(mem_n)
    emit(report_more_memory(more_memory, mem_n))

    print("... timing the engine against one read of the data", file=sys.stderr, flush=True)
    engine_n = max(sizes)
    engine_load = _load()
    engine_res = bench_engine(engine_n, max_reps=reps_for(engine_n), budget_s=budget_s)
    engine_text, engine_ratios = report_engine(engine_res, engine_n, (engine_load, _load()))
    emit(engine_text)

    print("... accuracy", file=sys.stderr, flush=True)
    acc_started = time.perf_counter()
    accuracy = bench_accuracy(acc_reps)
    acc_elapsed = time.perf_counter() - acc_started
    emit(report_accuracy(accuracy, acc_reps))

    goal_items = goals(large, small) + goals_more(more) + goals_engine(engine_res)
    emit(report_goals(goal_items))
    info["load average (end)"] = _load()
    elapsed = time.perf_counter() - started
    emit(
        f"load average at start {info['load average (start)']}, at end "
        f"{info['load average (end)']} ({info['usable cores']} usable cores); "
        f"total run time {elapsed:.0f} s (accuracy {acc_elapsed:.0f} s)"
    )

    payload = {
        "machine": info,
        "config": {
            "mode": mode,
            "rows": sizes,
            "epsilon": EPSILON,
            "bounds": list(BOUNDS),
            "small_rows": SMALL_ROWS,
            "small_calls": calls,
            "timer": "time.perf_counter, median after one warm-up call, gc paused",
            "run_time_s": elapsed,
            "categories": list(CATEGORIES),
            "category_p": list(CATEGORY_P),
            "cov_bounds": list(COV_BOUNDS),
            "accuracy": {
                "reps": acc_reps,
                "rows": list(ACC_SIZES),
                "epsilons": list(ACC_EPSILONS),
                "bounds": list(ACC_BOUNDS),
                "values_uniform_on": list(ACC_RANGE),
                "run_time_s": acc_elapsed,
            },
        },
        "large": {
            str(n): {st: {k: t.to_json() for k, t in res.items()} for st, res in large[n].items()}
            for n in sizes
        },
        "opendp_one_off_s": setup,
        "ratios": ratios,
        "small": {k: t.to_json() for k, t in small.items()},
        "memory": {"rows": mem_n, "peak_bytes": memory},
        "more": {
            str(n): {st: {k: t.to_json() for k, t in res.items()} for st, res in more[n].items()}
            for n in sizes
        },
        "more_opendp_one_off_s": setup_more,
        "more_ratios": more_ratios,
        "more_memory": {"rows": mem_n, "peak_bytes": more_memory},
        "engine": {
            "rows": engine_n,
            "kernels": "numba" if _has_numba() else "numpy",
            "numpy_path": numpy_path_description(),
            "load_average": [engine_load, info["load average (end)"]],
            "timings": {st: {k: t.to_json() for k, t in r.items()} for st, r in engine_res.items()},
            "ratios": engine_ratios,
        },
        "accuracy": accuracy,
        "accuracy_notes": ACC_NOTES,
        "goals": goal_items,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(payload, indent=2) + "\n")
    markdown = args.markdown or args.json.with_suffix(".md")
    markdown.parent.mkdir(parents=True, exist_ok=True)
    markdown.write_text("\n".join(printed) + "\n")
    print(f"\nJSON written to {args.json}, tables to {markdown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
