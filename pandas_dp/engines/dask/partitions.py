"""How the Dask engine reaches the partitions and adds what comes back.

The machinery of :mod:`pandas_dp.engines.dask`, which re-exports its public names:

* :class:`PartitionGroups`: group codes computed inside each partition, from public
  keys (or a truncation's rule), never gathered on the client;
* markers: a computation's inputs with every Dask Series replaced by a placeholder
  (:func:`_template`) that each partition turns into its own pandas objects
  (:func:`_local`), so one picklable template serves every partition;
* :func:`_reduce`: a kernel run inside each partition's own task, the partials
  added in a tree of ``_FAN_IN``-way sums;
* the per-partition values of a plan (:func:`_partition_values`, the pandas path on
  one partition, counts as Python integers) and their exact sum (:func:`_add`);
* :func:`_run`, the one place a computation runs: any failure inside it (a value
  that does not parse, a partition whose dtypes differ from the meta, an input file
  that vanished) becomes a content-free :class:`~pandas_dp.errors.ComputeError`
  (:func:`compute_error`), the original dropped unread: its message may quote a
  private value or name a row.

Only partial sums and counts leave a partition, never a row or a group code.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from pandas_dp.engines.inputs import EngineInput
from pandas_dp.engines.pandas import Groups
from pandas_dp.errors import ComputeError

__all__ = ["PartitionGroups", "compute_error", "is_dask"]

#: Partials added per task of the combining tree.
_FAN_IN = 16


def is_dask(obj: object) -> bool:
    """Whether ``obj`` is a Dask collection (without importing Dask).

    Examples
    --------
    >>> import pandas as pd
    >>> is_dask(pd.Series([1.0]))
    False
    """
    return isinstance(obj, PartitionGroups) or type(obj).__module__.startswith("dask.")


@dataclass(frozen=True)
class PartitionGroups:
    """Group codes of a Dask frame, computed inside each partition.

    Parameters
    ----------
    columns : sequence of dask Series
        The key columns (from the same frame as the released columns).
    make : callable
        ``make(frame) -> Groups``: the codes of one partition, given a pandas
        DataFrame holding the key columns under their labels. Picklable (it runs
        on the workers); it reads only the public declared keys.
    size : int
        The number of groups (public).
    shuffle_on : dask Series, optional
        A privacy unit's column: the engine first shuffles the rows so that all of
        a unit's rows share one partition (``make`` then bounds each unit's
        contributions, as the pandas engine does on the whole frame).
    """

    columns: Sequence[Any]
    make: Callable[[pd.DataFrame], Groups]
    size: int
    shuffle_on: Any = None

    def renumbered(self, position: NDArray[np.intp], size: int) -> PartitionGroups:
        """These codes mapped through ``position`` (``position[-1]``: code ``-1``'s).

        Examples
        --------
        >>> import pandas as pd, dask.dataframe as dd
        >>> from pandas_dp.engines.dask import row_counts
        >>> ddf = dd.from_pandas(pd.DataFrame({"k": [0, 1, 2, 1]}), npartitions=2)
        >>> g = PartitionGroups([ddf["k"]], lambda p: Groups(p["k"].to_numpy(), 3), 3)
        >>> kept = g.renumbered(np.array([-1, 0, 1, -1]), 2)
        >>> row_counts(ddf, kept).tolist()
        [2, 1]
        """
        return replace(self, make=partial(_renumber, self.make, position, size), size=size)


def _renumber(
    make: Callable[[pd.DataFrame], Groups],
    position: NDArray[np.intp],
    size: int,
    part: pd.DataFrame,
) -> Groups:
    return Groups(position[make(part).codes], size)


# ----------------------------------------------------------------------------- plumbing


@dataclass(frozen=True)
class _Column:
    """Stands for a Dask Series in the per-partition template: column ``name`` of the
    partition's frame, renamed to ``label``."""

    name: str
    label: Hashable


@dataclass(frozen=True)
class _LocalGroups:
    """Stands for :class:`PartitionGroups` in the per-partition template."""

    names: tuple[str, ...]
    labels: tuple[Hashable, ...]
    make: Callable[[pd.DataFrame], Groups]


class _Columns:
    """The distinct Dask Series a computation reads, each under a positional name."""

    def __init__(self) -> None:
        self.series: list[Any] = []
        self.names: dict[str, str] = {}
        #: each column read, by its label, with its meta dtype (public)
        self.dtypes: dict[Hashable, str] = {}
        #: the column (positional name) to shuffle the rows by: a privacy unit
        self.shuffle: str | None = None

    def shuffle_by(self, series: Any) -> None:
        name = self.marker(series).name
        if self.shuffle not in (None, name):
            raise ValueError("one computation cannot bound two privacy units")
        self.shuffle = name

    def marker(self, series: Any) -> _Column:
        token = str(series._name)
        name = self.names.get(token)
        if name is None:
            name = f"c{len(self.series)}"
            self.names[token] = name
            self.series.append(series.rename(name))
            self.dtypes.setdefault(series.name, str(series.dtype))
        return _Column(name, series.name)

    def frame(self) -> Any:
        """One Dask DataFrame of every column read (partitions stay where they are)."""
        if not self.series:
            raise ValueError("the Dask engine was given no column to read")
        import dask.dataframe as dd

        if len(self.series) == 1:
            frame = self.series[0].to_frame()
        else:
            frame = dd.concat(self.series, axis=1)
        if self.shuffle is not None:  # every unit's rows in one partition
            frame = frame.shuffle(on=self.shuffle)
        return frame


def _template(value: Any, cols: _Columns) -> Any:
    """``value`` with every Dask Series replaced by a marker (recursively in partials)."""
    if isinstance(value, PartitionGroups):
        markers = [cols.marker(s) for s in value.columns]
        if value.shuffle_on is not None:
            cols.shuffle_by(value.shuffle_on)
        return _LocalGroups(
            tuple(m.name for m in markers), tuple(m.label for m in markers), value.make
        )
    if is_dask(value):
        return cols.marker(value)
    if isinstance(value, partial):
        return partial(
            value.func,
            *(_template(a, cols) for a in value.args),
            **{k: _template(v, cols) for k, v in value.keywords.items()},
        )
    return value


def _local(value: Any, part: pd.DataFrame) -> Any:
    """The partition's pandas object for a marker (recursively in partials)."""
    if isinstance(value, _Column):
        return part[value.name].rename(value.label)  # type: ignore[call-overload]
    if isinstance(value, _LocalGroups):
        keys = part[list(value.names)].set_axis(list(value.labels), axis=1)
        return value.make(keys)
    if isinstance(value, partial):
        return partial(
            value.func,
            *(_local(a, part) for a in value.args),
            **{k: _local(v, part) for k, v in value.keywords.items()},
        )
    return value


def _reduce(frame: Any, kernel: Callable[[pd.DataFrame], Any], add: Callable[..., Any]) -> Any:
    """A delayed value: ``kernel`` on every partition, partials added in a tree.

    The kernel runs inside each partition's own task (a ``map_partitions`` that Dask
    fuses with the reads, column selections and concatenation before it): a
    worker reads a partition, measures it and drops it in one task, so only the
    small partial ever leaves the task, and there is one task per partition
    instead of two.
    """
    import dask

    if frame.npartitions == 0:  # no partition: the kernel on an empty frame
        level = [dask.delayed(kernel)(frame._meta)]
    else:
        boxed = frame.map_partitions(
            _boxed,
            kernel,
            meta=pd.Series(np.empty(0, dtype=object)),
            enforce_metadata=False,
            clear_divisions=True,
            align_dataframes=False,
        )
        boxes = boxed.to_delayed()
        if len(boxes) == 1:
            return dask.delayed(_unbox)(boxes[0])
        # the first level of the tree takes the boxes themselves (no task per box)
        first = dask.delayed(partial(_add_boxed, add))
        level = [first(*boxes[i : i + _FAN_IN]) for i in range(0, len(boxes), _FAN_IN)]
    combine = dask.delayed(add)
    while len(level) > 1:
        level = [combine(*level[i : i + _FAN_IN]) for i in range(0, len(level), _FAN_IN)]
    return level[0]


def _boxed(part: pd.DataFrame, kernel: Callable[[pd.DataFrame], Any]) -> pd.Series:
    """``kernel(part)`` as the one element of an object Series (a partition's output).

    The compiled kernels run in the task's own thread (:func:`_numba.serial`): Dask
    already runs one task per worker thread (its workers start with
    ``OMP_NUM_THREADS=1`` for the same reason).
    """
    from pandas_dp.engines import _numba

    box = np.empty(1, dtype=object)
    with _numba.serial():
        box[0] = kernel(part)
    return pd.Series(box, copy=False)


def _unbox(box: pd.Series) -> Any:
    """The partial held by :func:`_boxed`'s Series."""
    return box.iloc[0]


def _add_boxed(add: Callable[..., Any], *boxes: pd.Series) -> Any:
    """``add`` of the partials held by :func:`_boxed`'s Series."""
    partials = [_unbox(b) for b in boxes]
    return add(*partials) if len(partials) > 1 else partials[0]


# ----------------------------------------------------------------------------- partials


def _run(cols: _Columns, kernel: Callable[[pd.DataFrame], Any], add: Callable[..., Any]) -> Any:
    """``kernel`` on every partition of ``cols.frame()``, added: one ``dask.compute``.

    Any failure while Dask reads and measures the partitions raises the
    content-free :func:`compute_error` instead, with no exception chained to it:
    the original is dropped unread, as its message may quote a private value or
    name a row.
    """
    import dask

    frame = cols.frame()
    try:
        (out,) = dask.compute(_reduce(frame, kernel, add))
    except Exception:  # dropped unread: its message may quote a private value
        pass
    else:
        return out
    # raised outside the handler: no __context__ refers to the original
    raise compute_error(cols.dtypes) from None


def compute_error(
    columns: Mapping[Hashable, str], *, release: str | None = None, charged: bool = True
) -> ComputeError:
    """The content-free error of a failed Dask computation (public facts only).

    Parameters
    ----------
    columns : mapping
        The columns read, each with its meta dtype (public).
    release : str, optional
        The call that failed (e.g. ``"ddf.dp.mean"``); ``None``: not known here.
    charged : bool, default True
        Whether the failure came after the charge (it stands) or before it (the
        public row count of ``neighbouring="substitute"``: nothing was charged).

    Returns
    -------
    ComputeError

    Examples
    --------
    >>> e = compute_error({"x": "int64"}, release="ddf.dp.mean")
    >>> str(e).startswith("ddf.dp.mean failed while Dask read the data")
    True
    """
    what = release or "A release on Dask data"
    read = ", ".join(f"{c!r} ({d})" for c, d in columns.items()) or "none"
    if charged:
        when = "after the privacy budget was charged (the charge stands)"
    else:
        when = (
            "while counting its rows, before the privacy budget was charged (nothing "
            "was charged): neighbouring='substitute' declares len(ddf) public"
        )
    numeric = [c for c, d in columns.items() if d.lower().startswith(("int", "uint", "float"))]
    x = next(iter(numeric or columns), "x")
    message = (
        f"{what} failed while Dask read the data, {when}. The cause is withheld: "
        f"Dask's and pandas' messages can quote a private value or name its row. "
        f"Columns read, with the dtypes of the frame's meta: {read}. Expected every "
        f"value of every partition to parse as its column's meta dtype, and every input "
        f"file to stay in place until the release is computed. Usual causes: text in a "
        f"numeric column (dd.read_csv infers the dtypes from the first block of the file "
        f"only, and parses every column of the file, read or not), a partition whose "
        f"dtypes differ from the meta, or an input file that moved or vanished. To fix: "
        f"read such a column as text and convert it, so that a value that does not parse "
        f"becomes a missing value and no single record can make a release fail -- "
        f"dd.read_csv(..., dtype={{{x!r}: 'string'}}), then ddf[{x!r}] = "
        f"dd.to_numeric(ddf[{x!r}], errors='coerce') -- or leave such columns unread "
        f"(usecols=[...]); check that the input files are still in place; then release "
        f"again."
    )
    return ComputeError(message, columns=dict(columns), charged=charged)


def _frame_of(series: Sequence[Any], groups: PartitionGroups | None) -> tuple[_Columns, list[Any]]:
    cols = _Columns()
    markers = [cols.marker(s) for s in series]
    g = None if groups is None else _template(groups, cols)
    return cols, [markers, g]


def _sum_arrays(*parts: NDArray[np.int64]) -> NDArray[np.int64]:
    return sum(parts[1:], parts[0])


def _partition_values(
    measurements: list[Any],
    template: EngineInput,
    local: Callable[[Any, EngineInput], dict[str, NDArray[Any]]],
    part: pd.DataFrame,
) -> dict[str, NDArray[Any]]:
    """The pandas path on one partition; counts as exact Python integers."""
    # this partition's rows (the plan's own n stays on the client)
    data = replace(template.map_data(partial(_local, part=part)), rows=len(part))
    out = local(measurements, data)
    return {k: (v if v.dtype == object else _integers(v)) for k, v in out.items()}


def _integers(counts: NDArray[Any]) -> NDArray[Any]:
    arr = np.empty(counts.shape, dtype=object)
    arr[:] = [int(v) for v in counts.reshape(-1)]
    return arr


def _add(*partials: dict[str, NDArray[Any]]) -> dict[str, NDArray[Any]]:
    """Exact sum of per-partition values (object vectors of ints and Fractions)."""
    first, *rest = partials
    out = {k: v.copy() for k, v in first.items()}
    for p in rest:
        for k, v in p.items():
            out[k] = out[k] + v
    return out
