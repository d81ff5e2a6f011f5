"""The Dask engine out of core: 10**8 rows x 3 float columns from Parquet.

Run: ``python benchmarks/dask_scale.py [--rows 100000000] [--dir /tmp/dask_scale]``.

Needs ``pip install -e ".[dask,parquet,bench]"`` (dask, distributed, pyarrow, OpenDP
with Polars). About 7 minutes and 2.5 GB of disk at 10**8 rows on 2 cores.

1. Writes a Parquet dataset (``--rows`` rows, 3 float columns, one file per
   ``--rows-per-file`` rows; written piece by piece, never all in memory), unless the
   folder already holds one of that size. The exact means of the clamped columns are
   kept (the truth for the RMSE).
2. On a ``distributed.LocalCluster(n_workers=2, threads_per_worker=1,
   memory_limit="1GiB")``: ``ddf.dp.describe(epsilon=1, bounds=(0, 100))`` (count,
   mean, std of the 3 columns), its wall time and the peak resident memory of each
   worker process (``ru_maxrss``, which covers the worker's whole life, and the largest
   RSS sampled every 0.1 s during the release); plain Dask's ``count``/``mean``/``std``
   on the same files; and ``ddf.dp.mean`` of one column. The release again on fresh
   clusters: with larger malloc thresholds on the workers, and with
   ``dd.read_parquet(..., filesystem="arrow")``, and into Arrow-backed columns with
   ``dtype_backend="pyarrow"`` (with Dask's default filesystem, with
   ``filesystem="arrow"``, and with pyarrow's ``LocalFileSystem(use_mmap=True)``,
   which maps the files instead of copying them into fresh buffers); for each, the
   workers' CPU for reading alone (``len`` of every partition), which the engine does
   not control.
3. The pandas engine on an in-memory frame of ``--pandas-rows`` rows: ``df.dp.describe``
   with one thread (per-core reference) and with the default threads, and pandas'
   ``read_parquet`` of a tenth of the files plus the same release (into numpy-backed
   columns, and into Arrow-backed ones with ``dtype_backend="pyarrow"``).
4. OpenDP's Polars ``scan_parquet`` mean of one column (same files, same epsilon, same
   bounds) against ``ddf.dp.mean``: time and RMSE over ``--reps`` releases each.
5. The floor: on a fresh 2-worker cluster per reader (``--floor-readers``), the DP mean
   and describe of the 3 columns against Dask's own reading and reduction of the same
   columns of the same ``ddf`` (``sum``; ``count``/``sum``/``var``; ``describe``),
   interleaved over ``--floor-repeat`` rounds; wall and workers' CPU seconds, the
   ratios (best, median, within a round) and the load average before, after and at
   each round. The target: a release costs at most 1.25x Dask's own reduction.

Results go to ``benchmarks/results/dask.json`` and ``dask.md`` (``--out`` elsewhere).
``--keep`` keeps the Parquet files (deleted at the end otherwise). ``--skip opendp``
(or ``malloc``, ``floor``) leaves a section out, e.g. to iterate at ``--rows 10000000``.
``--only floor`` runs the floor alone (e.g. ``--only floor --rows 20000000``, about 4
minutes): its results replace the floor of the existing ``dask.json``, the other
sections are kept, and ``dask.md`` is rewritten from them.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

COLUMNS = ("a", "b", "c")
LOWER, UPPER = 0.0, 100.0
BOUNDS = (LOWER, UPPER)
EPSILON = 1.0
RESULTS = Path(__file__).resolve().parent / "results"


# ----------------------------------------------------------------------------- data


def _piece(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """``n`` rows: a uniform partly outside the bounds, a normal, an exponential."""
    return pd.DataFrame(
        {
            "a": rng.uniform(LOWER - 10, UPPER + 10, n),
            "b": rng.normal(50.0, 15.0, n),
            "c": rng.exponential(20.0, n),
        }
    )


def write_dataset(folder: Path, rows: int, rows_per_file: int) -> dict[str, Any]:
    """Write ``rows`` rows as Parquet files of ``rows_per_file`` rows; return the truth.

    The truth (exact count and clamped means) is kept in ``folder/truth.json``; a
    folder that already holds a dataset of ``rows`` rows is reused as it is.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = folder / "truth.json"
    if meta.exists():
        truth: dict[str, Any] = json.loads(meta.read_text())
        if truth["rows"] == rows and truth["rows_per_file"] == rows_per_file:
            return truth
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "data").mkdir(parents=True)
    rng = np.random.default_rng(20260811)
    sums = dict.fromkeys(COLUMNS, 0.0)
    sq = dict.fromkeys(COLUMNS, 0.0)
    t0 = time.perf_counter()
    done, i = 0, 0
    while done < rows:
        n = min(rows_per_file, rows - done)
        piece = _piece(rng, n)
        for c in COLUMNS:
            y = np.clip(piece[c].to_numpy(), LOWER, UPPER)
            sums[c] += math.fsum(np.add.reduceat(y, np.arange(0, n, 4096)))
            sq[c] += math.fsum(np.add.reduceat(y * y, np.arange(0, n, 4096)))
        pq.write_table(
            pa.Table.from_pandas(piece, preserve_index=False),
            folder / "data" / f"part-{i:05d}.parquet",
            row_group_size=rows_per_file,
        )
        done += n
        i += 1
    seconds = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in (folder / "data").iterdir())
    truth = {
        "rows": rows,
        "rows_per_file": rows_per_file,
        "files": i,
        "bytes": size,
        "write_seconds": seconds,
        "clamped_mean": {c: sums[c] / rows for c in COLUMNS},
        "clamped_std": {c: math.sqrt((sq[c] - sums[c] ** 2 / rows) / (rows - 1)) for c in COLUMNS},
    }
    meta.write_text(json.dumps(truth, indent=2))
    return truth


# ----------------------------------------------------------------------------- timing


def timed(f: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of one call, and its result."""
    t0 = time.perf_counter()
    out = f()
    return time.perf_counter() - t0, out


def best(f: Callable[[], Any], repeat: int) -> float:
    return min(timed(f)[0] for _ in range(repeat))


def best_cpu(f: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Best wall seconds and best CPU seconds (this process, all threads) of ``repeat`` calls."""
    walls, cpus = [], []
    for _ in range(repeat):
        c0 = time.process_time()
        walls.append(timed(f)[0])
        cpus.append(time.process_time() - c0)
    return min(walls), min(cpus)


# ----------------------------------------------------------------------------- workers' memory


def _sampler_start(dask_worker: Any = None) -> int:
    """On a worker: sample this process's RSS every 0.1 s in a thread, keep the peak."""
    import psutil

    proc = psutil.Process()
    cpu = proc.cpu_times()
    state = {
        "peak": proc.memory_info().rss,
        "stop": False,
        "cpu": cpu.user + cpu.system,
        "sys": cpu.system,
    }

    def loop() -> None:
        while not state["stop"]:
            state["peak"] = max(state["peak"], proc.memory_info().rss)
            time.sleep(0.1)

    threading.Thread(target=loop, daemon=True).start()
    dask_worker._dask_scale_sampler = state
    return int(state["peak"])


def _sampler_stop(dask_worker: Any = None) -> dict[str, int]:
    """On a worker: stop the sampler; its peak, the current RSS and ``ru_maxrss``."""
    import psutil

    state = dask_worker._dask_scale_sampler
    state["stop"] = True
    cpu = psutil.Process().cpu_times()
    return {
        "cpu_s": cpu.user + cpu.system - state["cpu"],
        "sys_s": cpu.system - state["sys"],
        "sampled_peak": int(state["peak"]),
        "rss_after": int(psutil.Process().memory_info().rss),
        "ru_maxrss": int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024,
    }


@contextmanager
def worker_memory(client: Any, out: dict[str, Any]) -> Iterator[None]:
    """Record each worker's peak RSS while the block runs (into ``out``)."""
    client.run(_sampler_start)
    try:
        yield
    finally:
        stats = client.run(_sampler_stop)
        out.update({addr: stats[addr] for addr in sorted(stats)})


# ----------------------------------------------------------------------------- sections


def pandas_engine(rows: int, folder: Path, repeat: int) -> dict[str, Any]:
    """The pandas engine on an in-memory frame, with one thread and the default threads."""
    import pyarrow.parquet as pq

    import pandas_dp  # noqa: F401
    from pandas_dp.engines import _numba

    df = _piece(np.random.default_rng(7), rows)

    def release() -> pd.DataFrame:
        return df.dp.describe(epsilon=EPSILON, bounds=BOUNDS)

    release()  # compile the kernels
    out: dict[str, Any] = {"rows": rows}
    default_threads = _numba.THREADS
    try:
        _numba.THREADS = 1
        out["describe_1_thread_s"], out["describe_1_thread_cpu_s"] = best_cpu(release, repeat)
    finally:
        _numba.THREADS = default_threads
    out["threads_default"] = default_threads
    out["describe_default_threads_s"] = best(release, repeat)
    out["mean_1_column_s"] = best(lambda: df["a"].dp.mean(epsilon=EPSILON, bounds=BOUNDS), repeat)
    out["plain_describe_s"] = best(lambda: df.clip(LOWER, UPPER).describe(), repeat)
    files = sorted((folder / "data").iterdir())
    per_file = pq.read_metadata(files[0]).num_rows
    some = files[: max(1, rows // per_file)]

    def read_and_release() -> pd.DataFrame:
        frame = pd.concat([pd.read_parquet(f) for f in some], ignore_index=True)
        return frame.dp.describe(epsilon=EPSILON, bounds=BOUNDS)

    out["read_parquet_rows"] = per_file * len(some)
    out["read_parquet_only_s"], out["read_parquet_only_cpu_s"] = best_cpu(
        lambda: pd.concat([pd.read_parquet(f) for f in some], ignore_index=True), repeat
    )
    out["read_parquet_and_describe_s"], out["read_parquet_and_describe_cpu_s"] = best_cpu(
        read_and_release, repeat
    )

    def read_arrow() -> pd.DataFrame:
        return pd.concat(
            [pd.read_parquet(f, dtype_backend="pyarrow") for f in some], ignore_index=True
        )

    out["read_parquet_arrow_only_s"], out["read_parquet_arrow_only_cpu_s"] = best_cpu(
        read_arrow, repeat
    )
    (
        out["read_parquet_arrow_and_describe_s"],
        out["read_parquet_arrow_and_describe_cpu_s"],
    ) = best_cpu(lambda: read_arrow().dp.describe(epsilon=EPSILON, bounds=BOUNDS), repeat)
    return out


#: Worker environment that keeps glibc from handing every freed large temporary back
#: to the OS (distributed sets ``MALLOC_TRIM_THRESHOLD_=65536`` on its workers, which
#: also freezes the mmap threshold at 128 KiB: each temporary array is then mapped and
#: page-faulted afresh, and about half of a worker's CPU time is spent in the kernel).
MALLOC_ENVIRON = {"MALLOC_TRIM_THRESHOLD_": str(2**28), "MALLOC_MMAP_THRESHOLD_": str(2**26)}


def dask_cluster(
    folder: Path,
    truth: dict[str, Any],
    repeat: int,
    reps: int,
    environ: dict[str, str] | None = None,
    full: bool = True,
    filesystem: str | None = None,
    dtype_backend: str | None = None,
) -> dict[str, Any]:
    """describe (and, if ``full``, plain Dask and a mean) on a 2-worker LocalCluster.

    ``environ`` is added to the workers' environment (``distributed.nanny.pre-spawn-environ``);
    ``filesystem`` is passed to ``dd.read_parquet`` (``None``: Dask's default, fsspec),
    and ``dtype_backend`` (``"pyarrow"``: Arrow-backed columns; ``None``: numpy).
    Also timed: reading alone (``len`` of every partition, one compute), the part of a
    release's cost that the engine does not control.
    """
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import pandas_dp  # noqa: F401

    out: dict[str, Any] = {}
    spawn = {**dask.config.get("distributed.nanny.pre-spawn-environ"), **(environ or {})}
    with (
        dask.config.set({"distributed.nanny.pre-spawn-environ": spawn}),
        LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit="1GiB", processes=True
        ) as cluster,
        Client(cluster) as client,
    ):
        workers = sorted(client.scheduler_info()["workers"])
        path = str(folder / "data")
        options = {"filesystem": _filesystem(filesystem), "dtype_backend": dtype_backend}
        ddf = dd.read_parquet(path, **{k: v for k, v in options.items() if v is not None})
        out["npartitions"] = ddf.npartitions
        # warm-up: import pandas_dp and compile the kernels on the workers
        ddf.partitions[:4].dp.describe(epsilon=EPSILON, bounds=BOUNDS)
        client.run(lambda: __import__("gc").collect())
        runs: list[dict[str, Any]] = []
        for _ in range(repeat):
            memory: dict[str, Any] = {}
            with worker_memory(client, memory):
                t, d = timed(lambda: ddf.dp.describe(epsilon=EPSILON, bounds=BOUNDS))
            runs.append({"wall_s": t, "workers": memory})
        out["describe_runs"] = runs
        out["describe_s"] = [r["wall_s"] for r in runs]
        out["describe_cpu_s"] = [_cpu(r["workers"]) for r in runs]
        out["describe_sys_s"] = [_cpu(r["workers"], "sys_s") for r in runs]
        out["describe"] = d.to_dict()
        out["worker_memory"] = _peaks([r["workers"] for r in runs])
        out["workers_environ"] = {k: v for k, v in spawn.items() if "MALLOC" in k}
        reads: list[dict[str, Any]] = []
        for _ in range(repeat):
            memory = {}
            with worker_memory(client, memory):
                t, _ = timed(lambda: dask.compute(ddf.map_partitions(len)))
            reads.append({"wall_s": t, "workers": memory})
        out["read_only_s"] = [r["wall_s"] for r in reads]
        out["read_only_cpu_s"] = [_cpu(r["workers"]) for r in reads]
        out["filesystem"] = filesystem or "fsspec (default)"
        out["dtype_backend"] = dtype_backend or "numpy (default)"
        out["workers_restarted"] = sorted(client.scheduler_info()["workers"]) != workers
        if not full:
            return out
        plain: list[dict[str, Any]] = []
        for _ in range(repeat):
            memory = {}
            with worker_memory(client, memory):
                t, _ = timed(lambda: dask.compute(ddf.count(), ddf.mean(), ddf.std()))
            plain.append({"wall_s": t, "workers": memory})
        out["plain_count_mean_std_s"] = [r["wall_s"] for r in plain]
        out["plain_cpu_s"] = [_cpu(r["workers"]) for r in plain]
        out["plain_memory"] = _peaks([r["workers"] for r in plain])
        means, mean_times, mean_cpu = [], [], []
        for _ in range(reps):
            memory = {}
            with worker_memory(client, memory):
                t, m = timed(lambda: ddf["a"].dp.mean(epsilon=EPSILON, bounds=BOUNDS))
            mean_times.append(t)
            mean_cpu.append(_cpu(memory))
            means.append(float(m))
        out["mean_a_s"] = mean_times
        out["mean_a_cpu_s"] = mean_cpu
        out["mean_a"] = means
        out["workers_restarted"] = sorted(client.scheduler_info()["workers"]) != workers
    return out


def _filesystem(name: str | None) -> Any:
    """What ``dd.read_parquet`` is given for ``name``: ``"arrow-mmap"`` is pyarrow's
    local filesystem with memory-mapped files (the pages of the file are read in place
    instead of being copied into freshly allocated buffers); other names as they are."""
    if name != "arrow-mmap":
        return name
    import pyarrow.fs

    return pyarrow.fs.LocalFileSystem(use_mmap=True)


def _cpu(workers: dict[str, Any], key: str = "cpu_s") -> float:
    """CPU seconds (or kernel-mode seconds, ``key="sys_s"``) of all workers together."""
    return float(sum(w[key] for w in workers.values()))


def _peaks(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per worker, the largest sampled RSS and ``ru_maxrss`` over several runs."""
    return {
        addr: {
            "sampled_peak": max(r[addr]["sampled_peak"] for r in runs),
            "ru_maxrss": max(r[addr]["ru_maxrss"] for r in runs),
        }
        for addr in runs[0]
    }


def opendp_polars(folder: Path, truth: dict[str, Any], reps: int) -> dict[str, Any]:
    """OpenDP's Polars mean of column ``a`` from ``scan_parquet``, ``reps`` releases."""
    import opendp.prelude as dp
    import polars as pl

    dp.enable_features("contrib")
    mid = 0.5 * (LOWER + UPPER)
    glob = str(folder / "data" / "*.parquet")
    times, values, build, cpus = [], [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        context = dp.Context.compositor(
            data=pl.scan_parquet(glob),
            privacy_unit=dp.unit_of(contributions=1),
            privacy_loss=dp.loss_of(epsilon=EPSILON),
            split_evenly_over=1,
            margins=[dp.polars.Margin(max_length=truth["rows"])],
        )
        query = context.query().select(pl.col("a").fill_nan(mid).fill_null(mid).dp.mean(BOUNDS))
        t1 = time.perf_counter()
        c1 = time.process_time()
        value = query.release().collect()["a"][0]
        times.append(time.perf_counter() - t1)
        cpus.append(time.process_time() - c1)
        build.append(t1 - t0)
        values.append(float(value))
    scales = query.summarize()
    return {
        "release_s": times,
        "release_cpu_s": cpus,
        "context_s": build,
        "mean_a": values,
        "noise": scales.to_dicts(),
        "polars_threads": pl.thread_pool_size(),
    }


def rmse(values: list[float], truth: float) -> float:
    return math.sqrt(sum((v - truth) ** 2 for v in values) / len(values))


# ----------------------------------------------------------------------------- the floor


#: How the floor section reads the files: key -> (label, ``dd.read_parquet`` options;
#: ``"arrow-mmap"`` is pyarrow's ``LocalFileSystem(use_mmap=True)``, see :func:`_filesystem`).
FLOOR_READERS: dict[str, tuple[str, dict[str, str]]] = {
    "default": ("Dask's defaults (fsspec, numpy-backed columns)", {}),
    "arrow": ('`filesystem="arrow"`', {"filesystem": "arrow"}),
    "pyarrow_mmap": (
        '`dtype_backend="pyarrow"`, `LocalFileSystem(use_mmap=True)`',
        {"dtype_backend": "pyarrow", "filesystem": "arrow-mmap"},
    ),
}

#: The floor's pairs: (release, Dask's own reading and reduction of the same columns).
FLOOR_PAIRS = (
    ("dp_mean", "dask_sum"),
    ("dp_describe", "dask_count_sum_var"),
    ("dp_describe", "dask_describe"),
)

#: What each timed call is, for the tables.
FLOOR_LABELS = {
    "dp_mean": "`ddf[cols].dp.mean(epsilon=1, bounds=(0, 100))`",
    "dask_sum": "`ddf[cols].sum().compute()`",
    "dp_describe": "`ddf[cols].dp.describe(epsilon=1, bounds=(0, 100))`",
    "dask_count_sum_var": "`dask.compute(ddf[cols].count(), ddf[cols].sum(), ddf[cols].var())`",
    "dask_describe": "`ddf[cols].describe().compute()`",
}

#: Short names, for the targets table.
FLOOR_SHORT = {
    "dp_mean": "DP mean",
    "dask_sum": "Dask's `sum`",
    "dp_describe": "DP describe",
    "dask_count_sum_var": "Dask's `count`, `sum`, `var`",
    "dask_describe": "Dask's `describe`",
}

#: Each worker's memory limit in the floor section: at 1 GiB, 2 x 10**7-row runs had
#: workers pass the limit and restarted by their nanny (with Dask's defaults around
#: Dask's own ``describe``; with ``filesystem="arrow"`` from the first calls), and a
#: restart mid-call times the restart, not the reduction. The memory target is
#: measured by the other sections, at 1 GiB.
FLOOR_MEMORY = "3GiB"

#: The floor's target: a release costs at most this many times Dask's own reduction.
FLOOR_TARGET = 1.25


def floor_cluster(folder: Path, reader: str, repeat: int) -> dict[str, Any]:
    """The releases against Dask's own reading and reduction, on a fresh 2-worker cluster.

    The same ``ddf`` (same files, same ``dd.read_parquet`` options, the same columns)
    feeds the DP mean and describe of the 3 columns and Dask's own ``sum``,
    ``count``/``sum``/``var`` and ``describe``. After one warm-up call of each (kept
    apart as ``first_s``), ``repeat`` rounds run every call once, the order rotated by
    one each round, so that a change of the machine's load falls on all of them alike.
    Each call's wall seconds and both workers' CPU seconds are kept, and the load
    average before and after the section and at the start of every round.

    Parameters
    ----------
    folder : Path
        The dataset's folder (its Parquet files are in ``folder/data``).
    reader : str
        A key of :data:`FLOOR_READERS`.
    repeat : int
        The number of interleaved rounds.

    Returns
    -------
    dict
        The raw measurements (see above).
    """
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import pandas_dp  # noqa: F401  (the ``dp`` accessors)

    label, options = FLOOR_READERS[reader]
    read_options = {k: _filesystem(v) if k == "filesystem" else v for k, v in options.items()}
    cols = list(COLUMNS)
    out: dict[str, Any] = {"reader": reader, "label": label, "options": options}
    out["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out["commit"] = _commit()
    out["load_before"] = list(os.getloadavg())
    out["memory_limit"] = FLOOR_MEMORY
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, memory_limit=FLOOR_MEMORY, processes=True
        ) as cluster,
        Client(cluster) as client,
    ):
        ddf = dd.read_parquet(str(folder / "data"), **read_options)[cols]
        out["npartitions"] = ddf.npartitions
        calls: dict[str, Callable[[], Any]] = {
            "dp_mean": lambda: ddf.dp.mean(epsilon=EPSILON, bounds=BOUNDS),
            "dask_sum": lambda: ddf.sum().compute(),
            "dp_describe": lambda: ddf.dp.describe(epsilon=EPSILON, bounds=BOUNDS),
            "dask_count_sum_var": lambda: dask.compute(ddf.count(), ddf.sum(), ddf.var()),
            "dask_describe": lambda: ddf.describe().compute(),
        }
        names = list(calls)
        out["first_s"] = {name: timed(calls[name])[0] for name in names}
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
        out["load_rounds"] = []
        for r in range(repeat):
            out["load_rounds"].append(os.getloadavg()[0])
            for name in names[r % len(names) :] + names[: r % len(names)]:
                workers: dict[str, Any] = {}
                before = sorted(client.scheduler_info()["workers"])
                with worker_memory(client, workers):
                    wall, _ = timed(calls[name])
                restarted = sorted(client.scheduler_info()["workers"]) != before
                runs[name].append(
                    {"wall_s": wall, "cpu_s": _cpu(workers), "workers_restarted": restarted}
                )
        out["runs"] = runs
    out["load_after"] = list(os.getloadavg())
    return out


def floor_summary(section: dict[str, Any]) -> dict[str, Any]:
    """Per reader and pair: the release's time over Dask's own, best and median.

    ``best``: best release over best floor; ``median``: median over median; ``rounds``:
    the ratio within each round (the two calls ran next to each other), its range;
    ``cpu_best``: the same as ``best`` with both workers' CPU seconds. The target
    holds when the best and the median ratio by wall time are at most
    :data:`FLOOR_TARGET`.

    Parameters
    ----------
    section : dict
        :func:`floor_section`'s result.

    Returns
    -------
    dict
        Per reader, per pair ``"release/floor"``: the times and the ratios.
    """
    out: dict[str, Any] = {}
    for reader, m in section["readers"].items():
        runs = m["runs"]
        pairs = {}
        for dp_name, own in FLOOR_PAIRS:
            dp_wall = [r["wall_s"] for r in runs[dp_name]]
            own_wall = [r["wall_s"] for r in runs[own]]
            rounds = [a / b for a, b in zip(dp_wall, own_wall, strict=True)]
            best_ratio = min(dp_wall) / min(own_wall)
            median_ratio = float(np.median(dp_wall) / np.median(own_wall))
            pairs[f"{dp_name}/{own}"] = {
                "release_best_s": min(dp_wall),
                "release_median_s": float(np.median(dp_wall)),
                "floor_best_s": min(own_wall),
                "floor_median_s": float(np.median(own_wall)),
                "best": best_ratio,
                "median": median_ratio,
                "rounds_min": min(rounds),
                "rounds_max": max(rounds),
                "cpu_best": min(r["cpu_s"] for r in runs[dp_name])
                / min(r["cpu_s"] for r in runs[own]),
                "target_le_1_25": best_ratio <= FLOOR_TARGET and median_ratio <= FLOOR_TARGET,
            }
        out[reader] = pairs
    return out


def floor_section(
    folder: Path, truth: dict[str, Any], repeat: int, readers: list[str]
) -> dict[str, Any]:
    """:func:`floor_cluster` for each reader (a fresh cluster each), with the data's facts.

    Parameters
    ----------
    folder : Path
        The dataset's folder (written by :func:`write_dataset`).
    truth : dict
        :func:`write_dataset`'s facts about it (rows, files, bytes).
    repeat : int
        Interleaved rounds per reader.
    readers : list of str
        Keys of :data:`FLOOR_READERS`.

    Returns
    -------
    dict
        The data's facts, the date, machine, commit and versions, and per reader
        :func:`floor_cluster`'s measurements.
    """
    import dask
    import distributed
    import pyarrow

    section: dict[str, Any] = {
        "data": truth,
        "machine": _machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": _commit(),
        "versions": {
            "dask": dask.__version__,
            "distributed": distributed.__version__,
            "pyarrow": pyarrow.__version__,
            "pandas": pd.__version__,
        },
        "repeat": repeat,
        "readers": {},
    }
    for reader in readers:
        section["readers"][reader] = floor_cluster(folder, reader, repeat)
        print("floor", reader, section["readers"][reader])
    return section


def _machine() -> str:
    """The processor, the number of cores, Python's and pandas' versions."""
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, pandas {pd.__version__}"
    )


def _commit() -> str:
    """The checkout's commit, ``+dirty`` if the working tree has changes (or ``unknown``)."""
    import subprocess

    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain"], cwd=here, capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "unknown"
    return (head or "unknown") + ("+dirty" if dirty else "")


def floor_markdown(section: dict[str, Any]) -> str:
    """The floor's tables: each release against Dask's own reduction of the same columns.

    Parameters
    ----------
    section : dict
        :func:`floor_section`'s result, with its ``summary`` (:func:`floor_summary`).

    Returns
    -------
    str
        Markdown: the set-up, then per reader the calls' times and the ratios.
    """
    truth, s = section["data"], section["summary"]
    versions = ", ".join(f"{k} {v}" for k, v in section["versions"].items())

    def load(v: list[float]) -> str:
        return " / ".join(f"{x:.1f}" for x in v)

    def secs(v: list[float]) -> str:
        return ", ".join(f"{x:.2f}" for x in v)

    lines = [
        "## Against Dask's own reading and reduction (the floor)",
        "",
        f"Measured {section['date']} on {section['machine']}, pandas-dp at "
        f"{section['commit']}, {versions}. "
        f"{truth['rows']:,} rows x 3 float columns in {truth['files']} Parquet files of "
        f"{truth['rows_per_file']:,} rows; "
        "`LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=...)` (the limit "
        "below), a fresh one per reader. The same "
        "`ddf = dd.read_parquet(folder, **options)[cols]` (the 3 columns) feeds the "
        "releases and Dask's own reductions. After one warm-up call "
        f"of each, {section['repeat']} rounds run every call once, the order rotated each "
        "round. Ratio: the release's seconds over Dask's own (below 1: the release is "
        "faster); best over best, median over median, and the range of the ratios "
        "within a round; CPU: both workers' CPU seconds, best over best.",
        "",
    ]
    for reader, m in section["readers"].items():
        lines += [
            f"### Reader: {m['label']}",
            "",
            f"Measured {m.get('date', section['date'])}, pandas-dp at "
            f"{m.get('commit', section['commit'])}; "
            f"{m['npartitions']} partitions, memory limit {m.get('memory_limit', '1GiB')} "
            "per worker. Load average (1, 5, 15 min) before "
            f"{load(m['load_before'])}, after {load(m['load_after'])}; 1-minute at the "
            f"start of each round: {secs(m['load_rounds'])}.",
            "",
            "| call | wall s, each round | best | median | workers' CPU s (best) | first call "
            "| rounds with a worker restarted |",
            "|---|---|---|---|---|---|---|",
        ]
        for name, runs in m["runs"].items():
            wall = [r["wall_s"] for r in runs]
            lines.append(
                f"| {FLOOR_LABELS[name]} | {secs(wall)} | {min(wall):.2f} | "
                f"{float(np.median(wall)):.2f} | {min(r['cpu_s'] for r in runs):.2f} | "
                f"{m['first_s'][name]:.2f} | "
                f"{sum(bool(r.get('workers_restarted')) for r in runs)} |"
            )
        lines += [
            "",
            "| release / Dask's own | best | median | within a round | CPU (best) "
            f"| <= {FLOOR_TARGET}x |",
            "|---|---|---|---|---|---|",
        ]
        for (dp_name, own), r in zip(FLOOR_PAIRS, s[reader].values(), strict=True):
            lines.append(
                f"| {FLOOR_LABELS[dp_name]} / {FLOOR_LABELS[own]} | {r['best']:.2f}x | "
                f"{r['median']:.2f}x | {r['rounds_min']:.2f}x to {r['rounds_max']:.2f}x | "
                f"{r['cpu_best']:.2f}x | {'met' if r['target_le_1_25'] else '**not met**'} |"
            )
        lines.append("")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- report


#: The Dask runs: result key, how its files are read.
VARIANTS = (
    ("dask", "fsspec (default)"),
    ("dask_malloc", "fsspec, larger malloc thresholds"),
    ("dask_arrow", '`filesystem="arrow"`'),
    ("dask_pyarrow", '`dtype_backend="pyarrow"`'),
    ("dask_pyarrow_arrow", '`dtype_backend="pyarrow"`, `filesystem="arrow"`'),
    ("dask_pyarrow_mmap", '`dtype_backend="pyarrow"`, `LocalFileSystem(use_mmap=True)`'),
)


def summarize(res: dict[str, Any]) -> dict[str, Any]:
    """Throughputs, ratios and targets from the raw measurements.

    Per core by wall time: rows / best wall seconds / cores (2 workers, 1 pandas
    thread). Per CPU second: rows / CPU seconds the release consumed (both workers
    together; the pandas process), which does not count the time a process waited for
    a core taken by another job.
    """
    truth, dk, pdx = res["data"], res["dask"], res["pandas"]
    od = res.get("opendp") or {
        "mean_a": [math.nan],
        "release_s": [math.nan],
        "release_cpu_s": [math.nan],
    }
    rows = truth["rows"]
    t_dask = min(dk["describe_s"])
    dask_wall = rows / t_dask / 2
    dask_cpu = rows / min(dk["describe_cpu_s"])
    pandas_wall = pdx["rows"] / pdx["describe_1_thread_s"]
    pandas_cpu = pdx["rows"] / pdx["describe_1_thread_cpu_s"]
    read_wall = pdx["read_parquet_rows"] / pdx["read_parquet_and_describe_s"]
    read_cpu = pdx["read_parquet_rows"] / pdx["read_parquet_and_describe_cpu_s"]
    peak = max(max(m["sampled_peak"], m["ru_maxrss"]) for m in dk["worker_memory"].values())
    mean_truth = truth["clamped_mean"]["a"]
    dm = res.get("dask_malloc") or dk
    tuned_wall = rows / min(dm["describe_s"]) / 2
    tuned_cpu = rows / min(dm["describe_cpu_s"])
    tuned_peak = max(max(m["sampled_peak"], m["ru_maxrss"]) for m in dm["worker_memory"].values())
    da = res["dask_arrow"]
    arrow_wall = rows / min(da["describe_s"]) / 2
    arrow_cpu = rows / min(da["describe_cpu_s"])
    arrow_peak = max(max(m["sampled_peak"], m["ru_maxrss"]) for m in da["worker_memory"].values())
    variants = {
        key: {
            "describe_best_s": min(v["describe_s"]),
            "rows_per_s_per_core": rows / min(v["describe_s"]) / 2,
            "rows_per_cpu_s": rows / min(v["describe_cpu_s"]),
            "per_core_ratio_vs_in_memory": rows / min(v["describe_s"]) / 2 / pandas_wall,
            "per_cpu_s_ratio_vs_in_memory": rows / min(v["describe_cpu_s"]) / pandas_cpu,
            "describe_cpu_ms_per_1e6_rows": 1e9 * min(v["describe_cpu_s"]) / rows,
            "read_only_cpu_ms_per_1e6_rows": 1e9 * min(v["read_only_cpu_s"]) / rows,
            "peak_worker_bytes": max(
                max(m["sampled_peak"], m["ru_maxrss"]) for m in v["worker_memory"].values()
            ),
            "workers_restarted": v["workers_restarted"],
        }
        for key, _ in VARIANTS
        if (v := res.get(key))
    }
    return {
        "variants": variants,
        "arrow_describe_best_s": min(da["describe_s"]),
        "arrow_rows_per_s_per_core": arrow_wall,
        "arrow_rows_per_cpu_s": arrow_cpu,
        "arrow_per_core_ratio_vs_in_memory": arrow_wall / pandas_wall,
        "arrow_per_cpu_s_ratio_vs_in_memory": arrow_cpu / pandas_cpu,
        "arrow_peak_worker_bytes": arrow_peak,
        "malloc_describe_best_s": min(dm["describe_s"]),
        "malloc_rows_per_s_per_core": tuned_wall,
        "malloc_rows_per_cpu_s": tuned_cpu,
        "malloc_per_core_ratio_vs_in_memory": tuned_wall / pandas_wall,
        "malloc_per_cpu_s_ratio_vs_in_memory": tuned_cpu / pandas_cpu,
        "malloc_peak_worker_bytes": tuned_peak,
        "dask_describe_best_s": t_dask,
        "dask_rows_per_s_per_core": dask_wall,
        "dask_rows_per_cpu_s": dask_cpu,
        "pandas_rows_per_s_1_thread": pandas_wall,
        "pandas_rows_per_cpu_s": pandas_cpu,
        "pandas_read_parquet_rows_per_s": read_wall,
        "pandas_read_parquet_rows_per_cpu_s": read_cpu,
        "per_core_ratio_vs_in_memory": dask_wall / pandas_wall,
        "per_cpu_s_ratio_vs_in_memory": dask_cpu / pandas_cpu,
        "per_core_ratio_vs_read_parquet": dask_wall / read_wall,
        "per_cpu_s_ratio_vs_read_parquet": dask_cpu / read_cpu,
        "peak_worker_bytes": peak,
        "dask_mean_rmse": rmse(dk["mean_a"], mean_truth),
        "opendp_mean_rmse": rmse(od["mean_a"], mean_truth),
        "dask_mean_best_s": min(dk["mean_a_s"]),
        "opendp_mean_best_s": min(od["release_s"]),
        "dask_mean_best_cpu_s": min(dk["mean_a_cpu_s"]),
        "opendp_mean_best_cpu_s": min(od["release_cpu_s"]),
        "targets": {
            "peak_memory_per_worker_le_1GiB": peak <= 2**30 and not dk["workers_restarted"],
            "malloc_peak_memory_per_worker_le_1GiB": tuned_peak <= 2**30
            and not dm["workers_restarted"],
            "arrow_peak_memory_per_worker_le_1GiB": arrow_peak <= 2**30
            and not da["workers_restarted"],
        },
    }


#: Why the pages no longer hold the Dask engine to a share of the in-memory engine.
DROPPED_TARGET = (
    "Dropped: issue 11's target of >= 50 % of the pandas engine's in-memory throughput per "
    "core. Reading the Parquet files costs more CPU than the in-memory engine's whole "
    "release (above: reading alone against the engine's share), so a ratio to the "
    "in-memory engine measures the reader, not the engine, and a faster engine would "
    "even lower it. The floor is Dask's own reading and reduction of the same columns "
    "on the same cluster (issue 34); the ratios to the in-memory engine stay above, "
    "for scale."
)


def floor_targets(res: dict[str, Any]) -> list[str]:
    """The floor's rows of the targets table (none without a floor section).

    Parameters
    ----------
    res : dict
        All results; its ``floor`` (with its ``summary``) is used, if any.

    Returns
    -------
    list of str
        One Markdown table row per reader and pair of :data:`FLOOR_PAIRS`.
    """
    section = res.get("floor")
    if not section:
        return []
    rows = section["data"]["rows"]
    lines = []
    for reader, pairs in section["summary"].items():
        label = section["readers"][reader]["label"]
        for (dp_name, own), r in zip(FLOOR_PAIRS, pairs.values(), strict=True):
            lines.append(
                f"| {FLOOR_SHORT[dp_name]} <= {FLOOR_TARGET}x {FLOOR_SHORT[own]} "
                f"({rows:,} rows, {label}) | {r['best']:.2f}x best, {r['median']:.2f}x "
                f"median ({r['rounds_min']:.2f}x to {r['rounds_max']:.2f}x within a round) "
                f"| {'met' if r['target_le_1_25'] else '**not met**'} |"
            )
    return lines


def markdown(res: dict[str, Any]) -> str:
    """The results page: every section measured (only the floor's, with ``--only floor``)."""
    if "dask" not in res:
        return "\n".join(
            [
                "# Dask engine: against Dask's own reduction",
                "",
                f"Machine: {res['machine']}. Generated by `benchmarks/dask_scale.py "
                "--only floor`. The cores are shared with other jobs.",
                "",
                floor_markdown(res["floor"]),
                "## Targets",
                "",
                "| target | measured | |",
                "|---|---|---|",
                *floor_targets(res),
                "",
            ]
        )
    s, truth, dk, pdx = res["summary"], res["data"], res["dask"], res["pandas"]
    od = res.get("opendp") or {"mean_a": [math.nan], "release_s": [math.nan], "noise": []}
    od.setdefault("polars_threads", 0)
    dm, da = res.get("dask_malloc") or dk, res["dask_arrow"]
    rows = truth["rows"]
    mib = 2**20

    def secs(v: list[float]) -> str:
        return ", ".join(f"{x:.2f}" for x in v)

    mem_rows = "\n".join(
        f"| {addr} | {m['sampled_peak'] / mib:.0f} MiB | {m['ru_maxrss'] / mib:.0f} MiB | "
        f"{res['dask']['plain_memory'][addr]['sampled_peak'] / mib:.0f} MiB |"
        for addr, m in dk["worker_memory"].items()
    )
    arrow_engine_ms = (
        1e9
        * (pdx["read_parquet_arrow_and_describe_cpu_s"] - pdx["read_parquet_arrow_only_cpu_s"])
        / pdx["read_parquet_rows"]
    )
    lines = [
        "# Dask engine: out of core",
        "",
        f"Machine: {res['machine']}. Generated by `benchmarks/dask_scale.py`. "
        "The cores are shared with other jobs; 1-minute load average at the start of "
        "each section: " + ", ".join(f"{k} {v:.1f}" for k, v in res.get("load", {}).items()) + ".",
        "",
        f"Data: {truth['rows']:,} rows x 3 float columns (`a` uniform on (-10, 110), "
        f"`b` normal (50, 15), `c` exponential (20)), {truth['files']} Parquet files of "
        f"{truth['rows_per_file']:,} rows, {truth['bytes'] / 2**30:.2f} GiB on disk "
        f"(written in {truth['write_seconds']:.0f} s, one file at a time); "
        f"{dk['npartitions']} Dask partitions. Bounds (0, 100), epsilon 1, add/remove.",
        "",
        "## describe (count, mean, std, quartiles) on a 2-worker LocalCluster",
        "",
        '`LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="1GiB")`, '
        "`ddf.dp.describe(epsilon=1, bounds=(0, 100))` of `dd.read_parquet(folder)`:",
        "",
        "| what | seconds |",
        "|---|---|",
        f"| `ddf.dp.describe` ({len(dk['describe_s'])} runs) | {secs(dk['describe_s'])} |",
        f"| plain Dask `count`, `mean`, `std` (one compute) | "
        f"{secs(dk['plain_count_mean_std_s'])} |",
        "",
        f"CPU seconds of both workers per `ddf.dp.describe`: {secs(dk['describe_cpu_s'])}; "
        f"per plain Dask `count`/`mean`/`std`: {secs(dk['plain_cpu_s'])}.",
        "",
        "Peak resident memory of each worker process (limit 1 GiB; sampled every 0.1 s "
        "during the releases, and `ru_maxrss`, the peak over the worker's whole life):",
        "",
        "| worker | sampled peak, `ddf.dp.describe` | `ru_maxrss` | sampled peak, plain Dask |",
        "|---|---|---|---|",
        mem_rows,
        "",
        f"Workers restarted by the memory limit: {'yes' if dk['workers_restarted'] else 'no'}.",
        "",
        "## Per-core throughput against the pandas engine",
        "",
        "Per core: rows / best wall seconds / cores used. Per CPU second: rows / CPU "
        "seconds the release consumed (both workers' processes; the pandas process), "
        "which leaves out the time a process waited for a core held by another job.",
        "",
        "| engine | rows | best wall s | rows/s per core | CPU s | rows per CPU s |",
        "|---|---|---|---|---|---|",
        f"| Dask, Parquet, 2 workers x 1 thread | {truth['rows']:,} | "
        f"{s['dask_describe_best_s']:.2f} | {s['dask_rows_per_s_per_core'] / 1e6:.1f} M | "
        f"{min(dk['describe_cpu_s']):.2f} | {s['dask_rows_per_cpu_s'] / 1e6:.1f} M |",
        f"| pandas engine, in memory, 1 thread | {pdx['rows']:,} | "
        f"{pdx['describe_1_thread_s']:.3f} | {s['pandas_rows_per_s_1_thread'] / 1e6:.1f} M | "
        f"{pdx['describe_1_thread_cpu_s']:.3f} | {s['pandas_rows_per_cpu_s'] / 1e6:.1f} M |",
        f"| pandas `read_parquet` + engine, 1 thread | {pdx['read_parquet_rows']:,} | "
        f"{pdx['read_parquet_and_describe_s']:.3f} | "
        f"{s['pandas_read_parquet_rows_per_s'] / 1e6:.1f} M | "
        f"{pdx['read_parquet_and_describe_cpu_s']:.3f} | "
        f"{s['pandas_read_parquet_rows_per_cpu_s'] / 1e6:.1f} M |",
        "",
        f"Dask / pandas engine in memory: **{100 * s['per_core_ratio_vs_in_memory']:.0f} %** "
        f"per core (wall), **{100 * s['per_cpu_s_ratio_vs_in_memory']:.0f} %** per CPU "
        f"second. Dask / pandas reading the same Parquet files: "
        f"{100 * s['per_core_ratio_vs_read_parquet']:.0f} % (wall), "
        f"{100 * s['per_cpu_s_ratio_vs_read_parquet']:.0f} % (CPU). The pandas engine with "
        f"its default {pdx['threads_default']} threads: {pdx['describe_default_threads_s']:.3f} s; "
        f"plain pandas `df.clip(0, 100).describe()` in memory: {pdx['plain_describe_s']:.3f} s.",
        "",
        "## The workers' allocator",
        "",
        "`distributed` starts its workers with `MALLOC_TRIM_THRESHOLD_=65536`, which also "
        "freezes glibc's mmap threshold at 128 KiB: every large temporary array is then "
        "mapped and page-faulted afresh. Kernel-mode CPU seconds of both workers per "
        f"`ddf.dp.describe`: {secs(dk['describe_sys_s'])} (of {secs(dk['describe_cpu_s'])}). "
        "The same release with `MALLOC_TRIM_THRESHOLD_=2**28` and "
        "`MALLOC_MMAP_THRESHOLD_=2**26` added to "
        "`distributed.nanny.pre-spawn-environ` (a fresh cluster):",
        "",
        "| workers | wall s | CPU s (kernel-mode) | rows/s per core | rows per CPU s "
        "| peak RSS per worker |",
        "|---|---|---|---|---|---|",
        f"| default | {secs(dk['describe_s'])} | {secs(dk['describe_cpu_s'])} "
        f"({secs(dk['describe_sys_s'])}) | {s['dask_rows_per_s_per_core'] / 1e6:.1f} M | "
        f"{s['dask_rows_per_cpu_s'] / 1e6:.1f} M | {s['peak_worker_bytes'] / mib:.0f} MiB |",
        f"| larger malloc thresholds | {secs(dm['describe_s'])} | "
        f"{secs(dm['describe_cpu_s'])} ({secs(dm['describe_sys_s'])}) | "
        f"{s['malloc_rows_per_s_per_core'] / 1e6:.1f} M | "
        f"{s['malloc_rows_per_cpu_s'] / 1e6:.1f} M | "
        f"{s['malloc_peak_worker_bytes'] / mib:.0f} MiB |",
        "",
        f"Against the pandas engine in memory: {100 * s['malloc_per_core_ratio_vs_in_memory']:.0f} "
        f"% per core (wall), {100 * s['malloc_per_cpu_s_ratio_vs_in_memory']:.0f} % per CPU "
        "second.",
        "",
        "## Reading with pyarrow's filesystem",
        "",
        'The same release of `dd.read_parquet(folder, filesystem="arrow")` (pyarrow '
        "reads the files itself; with Dask's default, fsspec, pyarrow reads through "
        "Python file objects, and every column chunk becomes a fresh Python `bytes` "
        "buffer that the workers' allocator maps and page-faults afresh), default "
        "workers, a fresh cluster:",
        "",
        "| reader | wall s | CPU s (kernel-mode) | rows/s per core | rows per CPU s "
        "| peak RSS per worker |",
        "|---|---|---|---|---|---|",
        f"| fsspec (default) | {secs(dk['describe_s'])} | {secs(dk['describe_cpu_s'])} "
        f"({secs(dk['describe_sys_s'])}) | {s['dask_rows_per_s_per_core'] / 1e6:.1f} M | "
        f"{s['dask_rows_per_cpu_s'] / 1e6:.1f} M | {s['peak_worker_bytes'] / mib:.0f} MiB |",
        f'| `filesystem="arrow"` | {secs(da["describe_s"])} | '
        f"{secs(da['describe_cpu_s'])} ({secs(da['describe_sys_s'])}) | "
        f"{s['arrow_rows_per_s_per_core'] / 1e6:.1f} M | "
        f"{s['arrow_rows_per_cpu_s'] / 1e6:.1f} M | "
        f"{s['arrow_peak_worker_bytes'] / mib:.0f} MiB |",
        "",
        f"Against the pandas engine in memory: {100 * s['arrow_per_core_ratio_vs_in_memory']:.0f} "
        f"% per core (wall), {100 * s['arrow_per_cpu_s_ratio_vs_in_memory']:.0f} % per CPU "
        "second.",
        "",
        "## Reading into Arrow-backed columns",
        "",
        '`dd.read_parquet(folder, dtype_backend="pyarrow")`: the partitions\' columns stay '
        "Arrow arrays (`double[pyarrow]`), which the engine reads chunk by chunk without "
        "copying them, instead of being converted into numpy-backed pandas columns. "
        "With `filesystem=pyarrow.fs.LocalFileSystem(use_mmap=True)` the files are "
        "memory-mapped: Parquet's pages are decoded from the page cache in place instead "
        "of being read into freshly allocated buffers first. "
        "Default workers, a fresh cluster each:",
        "",
        "| reader | wall s | CPU s (kernel-mode) | rows per CPU s | % of the pandas engine "
        "in memory (CPU) | peak RSS per worker |",
        "|---|---|---|---|---|---|",
        "\n".join(
            f"| {label} | {secs(res[key]['describe_s'])} | {secs(res[key]['describe_cpu_s'])} "
            f"({secs(res[key]['describe_sys_s'])}) | "
            f"{s['variants'][key]['rows_per_cpu_s'] / 1e6:.1f} M | "
            f"{100 * s['variants'][key]['per_cpu_s_ratio_vs_in_memory']:.0f} % | "
            f"{s['variants'][key]['peak_worker_bytes'] / mib:.0f} MiB |"
            for key, label in VARIANTS
            if key in s["variants"] and key not in ("dask_malloc",)
        ),
        "",
        "## Where the workers' time goes",
        "",
        "Both workers' CPU milliseconds per 10**6 rows (best run): the release, and "
        "reading alone (`ddf.map_partitions(len)`, one compute: Parquet decoding, "
        "Arrow to pandas, Dask's tasks), the part the engine does not control. Their "
        "difference is the engine's own share (its kernels, partials and tasks). The "
        "pandas engine in memory, for scale: "
        f"{1e9 * pdx['describe_1_thread_cpu_s'] / pdx['rows']:.1f} ms per 10**6 rows.",
        "",
        "| workers | describe | reading alone | engine (difference) |",
        "|---|---|---|---|",
        f"| pandas, one process: `read_parquet` + engine | "
        f"{1e9 * pdx['read_parquet_and_describe_cpu_s'] / pdx['read_parquet_rows']:.1f} | "
        f"{1e9 * pdx['read_parquet_only_cpu_s'] / pdx['read_parquet_rows']:.1f} | "
        f"{1e9 * pdx['describe_1_thread_cpu_s'] / pdx['rows']:.1f} (in memory) |",
        f'| pandas, one process: `read_parquet(dtype_backend="pyarrow")` + engine | '
        f"{1e9 * pdx['read_parquet_arrow_and_describe_cpu_s'] / pdx['read_parquet_rows']:.1f} | "
        f"{1e9 * pdx['read_parquet_arrow_only_cpu_s'] / pdx['read_parquet_rows']:.1f} | "
        f"{arrow_engine_ms:.1f} |",
        "\n".join(
            f"| {label} | {1e9 * min(r['describe_cpu_s']) / rows:.1f} | "
            f"{1e9 * min(r['read_only_cpu_s']) / rows:.1f} | "
            f"{1e9 * (min(r['describe_cpu_s']) - min(r['read_only_cpu_s'])) / rows:.1f} |"
            for key, label in VARIANTS
            if (r := res.get(key))
        ),
        "",
        "## Mean of one column against OpenDP's Polars `scan_parquet`",
        "",
        f"Same files, column `a`, bounds (0, 100), epsilon 1, add/remove (OpenDP: "
        f"`contributions=1`, `Margin(max_length={truth['rows']:,})`); "
        f"{len(od['mean_a'])} releases each. Truth: the exact mean of the clamped column, "
        f"{truth['clamped_mean']['a']:.6f}.",
        "",
        "| library | seconds per release | best | best CPU s | RMSE |",
        "|---|---|---|---|---|",
        "| pandas-dp `ddf['a'].dp.mean` (2 workers; CPU of the workers) | "
        f"{secs(dk['mean_a_s'])} | "
        f"{s['dask_mean_best_s']:.2f} | {s['dask_mean_best_cpu_s']:.2f} | "
        f"{s['dask_mean_rmse']:.2e} |",
        f"| OpenDP Polars ({od['polars_threads']} threads; CPU of the process) | "
        f"{secs(od['release_s'])} | "
        f"{s['opendp_mean_best_s']:.2f} | {s['opendp_mean_best_cpu_s']:.2f} | "
        f"{s['opendp_mean_rmse']:.2e} |",
        "",
        "OpenDP's noise: "
        + "; ".join(
            f"{r['aggregate']} {r['distribution']} scale {r['scale']:.3g}" for r in od["noise"]
        )
        + f". With {len(od['mean_a'])} releases an RMSE is known to about "
        f"+-{100 / math.sqrt(2 * len(od['mean_a'])):.0f} % (relative standard error)."
        + (f" **OpenDP failed:** {res['opendp_error']}" if "opendp_error" in res else ""),
        "",
        *([floor_markdown(res["floor"])] if res.get("floor") else []),
        "## Targets",
        "",
        "| target | measured | |",
        "|---|---|---|",
        f"| `describe` completes, peak memory per worker <= 1 GiB | "
        f"{s['peak_worker_bytes'] / mib:.0f} MiB | "
        f"{'met' if s['targets']['peak_memory_per_worker_le_1GiB'] else '**not met**'} |",
        "\n".join(
            f"| the same, {label} | {v['peak_worker_bytes'] / mib:.0f} MiB | "
            + (
                "met"
                if v["peak_worker_bytes"] <= 2**30 and not v["workers_restarted"]
                else "**not met**"
            )
            + " |"
            for key, label in VARIANTS[1:]
            if (v := s["variants"].get(key))
        ),
    ]
    lines += floor_targets(res)
    lines += ["", DROPPED_TARGET]
    lines.append("")
    return "\n".join(lines)


def floor_only(args: argparse.Namespace, readers: list[str]) -> None:
    """``--only floor``: the floor section alone, merged into ``args.out``'s results.

    A reader of the existing floor section that is not run again is kept if it was
    measured on as many rows with as many rounds (each reader has its own date).

    Parameters
    ----------
    args : argparse.Namespace
        The command line (``--rows``, ``--rows-per-file``, ``--dir``, ``--out``,
        ``--keep``, ``--floor-repeat``).
    readers : list of str
        Keys of :data:`FLOOR_READERS`, one fresh cluster each.
    """
    res: dict[str, Any] = json.loads(args.out.read_text()) if args.out.exists() else {}
    res.setdefault("machine", _machine())
    try:
        truth = write_dataset(args.dir, args.rows, args.rows_per_file)
        old = res.get("floor")
        res["floor"] = floor_section(args.dir, truth, args.floor_repeat, readers)
        if old and old["data"]["rows"] == truth["rows"] and old["repeat"] == args.floor_repeat:
            # readers measured earlier on the same rows and not run again are kept
            kept = {k: v for k, v in old["readers"].items() if k not in readers}
            res["floor"]["readers"] = {**kept, **res["floor"]["readers"]}
        res["floor"]["summary"] = floor_summary(res["floor"])
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    if "dask" in res:
        res["summary"] = summarize(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2, default=str))
    text = markdown(res)
    args.out.with_suffix(".md").write_text(text)
    print(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10**8)
    parser.add_argument("--rows-per-file", type=int, default=10**6)
    parser.add_argument("--pandas-rows", type=int, default=10**7)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/dask_scale"))
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of describe")
    parser.add_argument("--reps", type=int, default=5, help="releases per RMSE")
    parser.add_argument("--out", type=Path, default=RESULTS / "dask.json")
    parser.add_argument("--keep", action="store_true", help="keep the Parquet files")
    parser.add_argument(
        "--skip",
        action="append",
        default=[],
        choices=["malloc", "opendp", "floor"],
        help="leave a section out (repeatable)",
    )
    parser.add_argument(
        "--only",
        choices=["floor"],
        help="run this section alone; its results replace that section of --out's "
        "existing JSON (the other sections are kept) and the page is rewritten",
    )
    parser.add_argument(
        "--floor-readers",
        default="default,arrow",
        help=f"comma-separated readers of the floor section, of {', '.join(FLOOR_READERS)}",
    )
    parser.add_argument("--floor-repeat", type=int, default=5, help="interleaved rounds")
    args = parser.parse_args()
    readers = [r for r in args.floor_readers.split(",") if r]
    unknown = [r for r in readers if r not in FLOOR_READERS]
    if unknown:
        parser.error(f"unknown --floor-readers {unknown}; known: {list(FLOOR_READERS)}")
    if args.only == "floor":
        floor_only(args, readers)
        return
    print(
        f"free disk at {args.dir.parent}: {shutil.disk_usage(args.dir.parent).free / 2**30:.0f} GiB"
    )
    res: dict[str, Any] = {"machine": _machine(), "load": {}}
    try:
        res["data"] = write_dataset(args.dir, args.rows, args.rows_per_file)
        print("data", res["data"])
        res["load"]["dask"] = os.getloadavg()[0]
        res["dask"] = dask_cluster(args.dir, res["data"], args.repeat, args.reps)
        print("dask", res["dask"])
        if "malloc" not in args.skip:
            res["load"]["dask_malloc"] = os.getloadavg()[0]
            res["dask_malloc"] = dask_cluster(
                args.dir, res["data"], args.repeat, 0, environ=MALLOC_ENVIRON, full=False
            )
            print("dask_malloc", res["dask_malloc"])
        res["load"]["dask_arrow"] = os.getloadavg()[0]
        res["dask_arrow"] = dask_cluster(
            args.dir, res["data"], args.repeat, 0, full=False, filesystem="arrow"
        )
        print("dask_arrow", res["dask_arrow"])
        for key, filesystem in (
            ("dask_pyarrow", None),
            ("dask_pyarrow_arrow", "arrow"),
            ("dask_pyarrow_mmap", "arrow-mmap"),
        ):
            res["load"][key] = os.getloadavg()[0]
            res[key] = dask_cluster(
                args.dir,
                res["data"],
                args.repeat,
                0,
                full=False,
                filesystem=filesystem,
                dtype_backend="pyarrow",
            )
            print(key, res[key])
        res["load"]["pandas"] = os.getloadavg()[0]
        res["pandas"] = pandas_engine(args.pandas_rows, args.dir, args.repeat)
        print("pandas", res["pandas"])
        if "opendp" not in args.skip:
            res["load"]["opendp"] = os.getloadavg()[0]
            try:
                res["opendp"] = opendp_polars(args.dir, res["data"], args.reps)
                print("opendp", res["opendp"])
            except Exception as exc:  # a peer's failure is reported, not fatal to the run
                # (e.g. a Polars other than the one OpenDP's plugin was built for)
                res["opendp_error"] = f"{type(exc).__name__}: {exc}".strip()[:300]
                print("opendp failed:", res["opendp_error"])
        if "floor" not in args.skip:
            res["floor"] = floor_section(args.dir, res["data"], args.floor_repeat, readers)
            res["floor"]["summary"] = floor_summary(res["floor"])
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    res["summary"] = summarize(res)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(res, indent=2, default=str))
    text = markdown(res)
    args.out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
