"""Value dtypes of a release: the ones pandas gives for the same call, pandas as the oracle.

A release's numbers are computed as numpy ``float64`` (``int64`` for counts). pandas
keeps the input's dtype family in its answers -- a nullable column's mean is
``Float64``, an Arrow column's ``double[pyarrow]``, a ``float32`` column's sum
``float32`` -- and its rules have many cases (a ``float32`` group-by mean is
``float64``; a frame's mean over ``Int64`` and ``float64`` columns is ``Float64``).
Rather than restate them, :func:`like_pandas` asks pandas: it runs the same pandas
call on a two-row frame made from the input columns' *dtypes* alone (the values
0 and 1, never the data's) and casts the release to the dtypes of that answer.

The cast never fails and never changes a number beyond the target dtype's rounding:

* where pandas gives an integer or boolean dtype for a statistic released as a
  float (a sum is noisy, not integral), the float dtype of the same family is used
  instead (``Int64`` -> ``Float64``, ``int64[pyarrow]`` -> ``double[pyarrow]``,
  ``int64`` -> ``float64``);
* a dtype that holds no numbers (object, text, categories) is not taken;
* anything pandas cannot answer, or a cast that raises, leaves the release as it is.

Releases whose input columns all have plain numpy dtypes (``float64``, integers,
``bool``, objects) are already shaped like pandas' answer and are returned at once,
without asking pandas; so are counts of text and categorical columns, kept in
``int64`` whatever the text's storage (Dask holds text as ``string[pyarrow]``, and its
releases equal the in-memory ones). Scalar releases (:class:`~pandas_dp.result.values.DPFloat`,
:class:`~pandas_dp.result.values.DPInt`) are Python numbers and are not cast.

Examples
--------
>>> import pandas as pd
>>> release = pd.Series([2.5, 1.25], index=["a", "b"])
>>> dtypes = {"a": pd.Int64Dtype(), "b": pd.Float64Dtype()}
>>> like_pandas(release, "mean", {}, dtypes.__getitem__, columns=("a", "b")).dtype
Float64Dtype()
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import (
    is_bool_dtype,
    is_float_dtype,
    is_integer_dtype,
    is_object_dtype,
    is_string_dtype,
)

from pandas_dp.result.values import attach

__all__ = ["all_plain", "like_pandas", "released_dtype", "sample_frame"]

#: The methods whose value dtypes follow pandas' answer, and the pandas call of each
#: (``None``: the method of the same name, without arguments).
_MOMENTS = ("count", "sum", "mean", "var", "std", "sem", "skew", "median", "cov", "corr")
_CALLS: dict[str, Callable[[Any, Mapping[str, Any]], Any] | None] = {
    **dict.fromkeys(_MOMENTS),
    "quantile": lambda obj, kw: obj.quantile(kw.get("q", 0.5)),
    "value_counts": lambda obj, kw: obj.value_counts(normalize=bool(kw.get("normalize"))),
    "proportions": lambda obj, kw: obj.value_counts(normalize=True),
    "agg": lambda obj, kw: obj.agg(kw["func"]),
    "describe": lambda obj, kw: obj.describe(percentiles=kw.get("percentiles")),
}
#: The methods whose pandas call selects one column as a Series (not a one-column frame).
_ONE_COLUMN = ("value_counts", "proportions")


def _plain(dtype: Any) -> bool:
    """Whether a column of ``dtype`` is released as computed: numpy dtypes but the small
    floats (pandas answers them in numpy ``float64``/``int64``), and text and categories
    (counted, as pandas counts them, in ``int64``: text is typed as pandas infers it, so
    that Dask's Arrow-backed text gives the in-memory release)."""
    if isinstance(dtype, np.dtype):
        return not (dtype.kind == "f" and dtype.itemsize < 8)
    return isinstance(dtype, pd.CategoricalDtype) or is_string_dtype(dtype)


def all_plain(dtypes: Any) -> bool:
    """Whether every dtype of ``dtypes`` (an iterable, or one dtype) is answered by pandas
    in numpy ``float64``/``int64``: then a release needs no cast (a cheap first test).

    Examples
    --------
    >>> all_plain([np.dtype("float64"), np.dtype("int64")]), all_plain(pd.Int64Dtype())
    (True, False)
    """
    if isinstance(dtypes, np.dtype) or not hasattr(dtypes, "__iter__"):
        return _plain(dtypes)
    return all(_plain(d) for d in dtypes)


def _values(dtype: Any, rows: int) -> pd.Series:
    """``rows`` values of ``dtype`` made from the dtype alone: 0, 0, 1, 1 (two rows: 0, 1)
    cast to it; for categories, the dtype's first two (or missing values)."""
    codes = np.arange(rows) // 2 % 2 if rows > 2 else np.arange(rows)
    if isinstance(dtype, pd.CategoricalDtype):
        count = len(dtype.categories)
        codes = np.where(codes < count, codes, -1) if count else np.full(rows, -1)
        return pd.Series(pd.Categorical.from_codes(codes, dtype=dtype))
    return pd.Series(codes).astype(dtype)


def sample_frame(dtypes: Sequence[Any], rows: int = 2) -> pd.DataFrame:
    """A small frame with one column per dtype, labelled 0, 1, ..., from the dtypes alone.

    Parameters
    ----------
    dtypes : sequence of dtype
        The columns' dtypes, in order.
    rows : int, default 2
        Its length.

    Returns
    -------
    pandas.DataFrame
        Values 0 and 1 (alternately) cast to each dtype: no value of any data.

    Examples
    --------
    >>> sample_frame(["Int64", "float32"]).dtypes.tolist()
    [Int64Dtype(), dtype('float32')]
    """
    return pd.concat([_values(d, rows) for d in dtypes], axis=1, keys=range(len(dtypes)))


def released_dtype(ours: Any, theirs: Any) -> Any:
    """The dtype a released column of dtype ``ours`` takes where pandas answers ``theirs``.

    pandas' dtype where it holds the released numbers exactly (up to a float dtype's
    rounding); for a float release where pandas gives integers or booleans (a noisy
    sum), the float dtype of pandas' family; ``ours`` where pandas' dtype holds no
    numbers.

    Parameters
    ----------
    ours : dtype
        The release's dtype (numpy ``float64`` or ``int64``).
    theirs : dtype
        pandas' dtype for the same call.

    Returns
    -------
    dtype

    Examples
    --------
    >>> import numpy as np
    >>> released_dtype(np.dtype("float64"), pd.Int64Dtype())
    Float64Dtype()
    >>> released_dtype(np.dtype("int64"), pd.Int64Dtype())
    Int64Dtype()
    >>> released_dtype(np.dtype("float64"), np.dtype("int64"))
    dtype('float64')
    """
    numbers = is_float_dtype(theirs) or is_integer_dtype(theirs) or is_bool_dtype(theirs)
    if not numbers or isinstance(theirs, pd.CategoricalDtype) or is_object_dtype(ours):
        return ours
    if is_float_dtype(theirs) or not is_float_dtype(ours):
        return theirs
    # a float release where pandas gives an integer or boolean: pandas' family's float
    if isinstance(theirs, pd.ArrowDtype):
        return pd.api.types.pandas_dtype("double[pyarrow]")
    if isinstance(theirs, np.dtype):
        return ours
    return pd.Float64Dtype()


def _array(values: np.ndarray, target: Any) -> Any:
    """A release's numpy column ``values`` as an array of ``target``; the nullable
    float and integer arrays are built directly from the values and their ``NaN``
    mask (a tenth of ``astype``'s time), anything else is cast by pandas. Raises
    whatever the cast raises."""
    if isinstance(target, np.dtype):
        return values.astype(target)
    if isinstance(target, pd.Float64Dtype) and values.dtype == np.float64:
        return pd.arrays.FloatingArray(values.copy(), np.isnan(values))
    if isinstance(target, pd.Int64Dtype) and values.dtype == np.int64:
        return pd.arrays.IntegerArray(values.copy(), np.zeros(values.shape, dtype=bool))
    return pd.array(values, dtype=target)


def _cast(values: pd.Series, theirs: Any) -> pd.Series:
    """``values`` in the dtype :func:`released_dtype` gives (unchanged if the cast fails)."""
    target = released_dtype(values.dtype, theirs)
    if target == values.dtype:
        return values
    try:
        array = _array(values.to_numpy(), target)
        return pd.Series(array, index=values.index, name=values.name, copy=False)
    except Exception:  # never fail after the charge: keep the computed dtype
        return values


def _uniform(answer: Any) -> Any:
    """The one dtype of pandas' answer, or ``None`` if its columns differ."""
    if isinstance(answer, pd.Series):
        return answer.dtype
    if isinstance(answer, pd.DataFrame):
        found = set(answer.dtypes)
        if len(found) == 1:
            return found.pop()
    return None


def _by_column(
    release: pd.DataFrame, answer: pd.DataFrame, values: Sequence[Hashable]
) -> list[Any]:
    """Each release column's dtype in pandas' answer of another layout, matched by the
    input column it describes (the answer's columns are the sample's positions in
    ``values``; describe leaves text columns out): its own where none matches."""
    found: dict[Hashable, Any] = {}
    for label, dtype in zip(answer.columns, answer.dtypes, strict=True):
        position = label[0] if isinstance(label, tuple) else label
        if isinstance(position, int) and 0 <= position < len(values):
            found.setdefault(values[position], dtype)
    out = []
    for label, dtype in zip(release.columns, release.dtypes, strict=True):
        column = label[0] if isinstance(release.columns, pd.MultiIndex) else label
        out.append(found.get(column, dtype) if _hashable(column) else dtype)
    return out


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _cast_like(
    release: pd.Series | pd.DataFrame, answer: Any, values: Sequence[Hashable] = ()
) -> pd.Series | pd.DataFrame:
    """``release`` with pandas' ``answer``'s value dtypes: a Series in the answer's one
    dtype; a frame's columns position by position where the answer is a frame of as
    many columns, else by the input column each describes (``values``: the input
    columns in the sample's order), or all in the dtype of an answer that is a Series."""
    if isinstance(release, pd.Series):
        theirs = _uniform(answer)
        return release if theirs is None else _cast(release, theirs)
    if isinstance(answer, pd.DataFrame):
        if answer.shape[1] == release.shape[1]:
            targets = list(answer.dtypes)
        else:
            targets = _by_column(release, answer, values)
    elif isinstance(answer, pd.Series):
        targets = [answer.dtype] * release.shape[1]
    else:
        return release
    ours = list(release.dtypes)
    wanted = [released_dtype(d, t) for d, t in zip(ours, targets, strict=True)]
    if wanted == ours:
        return release
    if len(set(ours)) == 1 and isinstance(ours[0], np.dtype):  # one block: read at once
        block = release.to_numpy()
        columns = [block[:, i] for i in range(block.shape[1])]
    else:
        columns = [release.iloc[:, i].to_numpy() for i in range(release.shape[1])]
    arrays: dict[int, Any] = {}
    for i, (numbers, target) in enumerate(zip(columns, wanted, strict=True)):
        try:
            arrays[i] = numbers.copy() if target == ours[i] else _array(numbers, target)
        except Exception:  # never fail after the charge: this column keeps its dtype
            arrays[i] = release.iloc[:, i].array
    out = pd.DataFrame(arrays, index=release.index, copy=False)
    out.columns = release.columns
    return out


def _positions(labels: Sequence[Hashable], found: Mapping[Hashable, int]) -> list[int]:
    return [found[label] for label in labels]


def _func(func: Any, found: Mapping[Hashable, int]) -> Any:
    """``agg``'s ``func`` with its column labels replaced by the sample frame's."""
    if isinstance(func, Mapping):
        return {found[label]: how for label, how in func.items()}
    return func


def like_pandas(
    release: Any,
    method: str,
    arguments: Mapping[str, Any],
    dtype_of: Callable[[Hashable], Any],
    *,
    columns: Sequence[Hashable],
    groups: Sequence[Hashable] = (),
    series: bool = False,
    one: bool = False,
) -> Any:
    """The release with the value dtypes pandas gives for the same call (see the module).

    Parameters
    ----------
    release : object
        What the release method returned; a scalar is returned as it is.
    method : str
        The accessor method (``"mean"``, ``"quantile"``, ``"describe"`` ...).
    arguments : mapping
        The method's arguments (``q``, ``normalize``, ``func``, ``percentiles`` are
        read; public, chosen by the caller).
    dtype_of : callable
        The dtype of an input column by its label (public: the frame's schema).
    columns : sequence of hashable
        The columns the release read (the record's ``columns``).
    groups : sequence of hashable, default ()
        The group-by's key columns (``()``: not grouped). Keys are replaced by a
        constant in the sample frame: they do not change pandas' value dtypes.
    series : bool, default False
        The call is a Series': pandas' call on the column itself.
    one : bool, default False
        A group-by's column was selected alone (``g[col]``): pandas' call on it.

    Returns
    -------
    object
        ``release``, or a copy with pandas' value dtypes and the same metadata
        record (attached to the copy).
    """
    if method not in _CALLS or not isinstance(release, pd.Series | pd.DataFrame) or not columns:
        return release
    call = _CALLS[method]
    values = [c for c in dict.fromkeys(columns) if c not in groups]
    try:
        dtypes = [dtype_of(c) for c in values]
    except Exception:
        return release
    if not values or all(_plain(d) for d in dtypes):
        return release
    found = {label: i for i, label in enumerate(values)}
    try:
        key = _cache_key(method, arguments, dtypes, found, bool(groups), series, one)
        answer = _ANSWERS.get(key) if key is not None else None
        if answer is None:
            with warnings.catch_warnings():  # pandas' warnings about the sample, not the data
                warnings.simplefilter("ignore")
                answer = _answer(call, method, arguments, dtypes, found, groups, series, one)
            if key is not None:
                _remember(key, answer)
    except Exception:  # pandas has no answer here: the release keeps its dtypes
        return release
    attrs = release.attrs
    release.attrs = {}  # (pandas' cast would copy the record onto the copy: not wanted)
    try:
        shaped = _cast_like(release, answer, values)
    except Exception:  # (not expected: the casts guard themselves) keep the release
        shaped = release
    finally:
        release.attrs = attrs
    if shaped is release:
        return release
    meta = attrs.get("dp")
    shaped.attrs = {k: v for k, v in attrs.items() if k != "dp"}
    return shaped if meta is None else attach(shaped, meta)


#: pandas' answers on sample frames, by call (a few milliseconds each to compute; the
#: dtypes of a release depend on the call's dtypes and arguments only).
_ANSWERS: dict[Hashable, Any] = {}
_KEPT_ANSWERS = 512
#: The arguments that shape pandas' answer (the others are privacy settings).
_SHAPING = ("q", "normalize", "func", "percentiles")


def _frozen(value: Any) -> Hashable:
    """``value`` as a hashable key (mappings and sequences as tuples, recursively)."""
    if isinstance(value, Mapping):
        return ("mapping", tuple((_frozen(k), _frozen(v)) for k, v in value.items()))
    if isinstance(value, list | tuple | np.ndarray | pd.Index):
        return (type(value).__name__, tuple(_frozen(v) for v in value))
    hash(value)  # (raises for anything else unhashable: then nothing is kept)
    return (type(value).__name__, value)


def _cache_key(
    method: str,
    arguments: Mapping[str, Any],
    dtypes: list[Any],
    found: Mapping[Hashable, int],
    grouped: bool,
    series: bool,
    one: bool,
) -> Hashable | None:
    """The key of a call's answer, or ``None`` when an argument cannot be one."""
    try:
        shaping = tuple(_frozen(arguments.get(a)) for a in _SHAPING)
        func = _frozen(_func(arguments["func"], found)) if "func" in arguments else None
        listed = _listed(arguments)
        return (method, tuple(dtypes), shaping, func, grouped, series, one, listed)
    except Exception:
        return None


def _listed(arguments: Mapping[str, Any]) -> bool:
    """Whether ``value_counts`` named its column(s) in a list (``[c]``, ``subset=``):
    pandas then answers as for a frame (``df.value_counts(subset)``), not a Series."""
    column = arguments.get("column")
    return isinstance(column, list | pd.Index) or arguments.get("subset") is not None


def _remember(key: Hashable, answer: Any) -> None:
    if len(_ANSWERS) >= _KEPT_ANSWERS:
        _ANSWERS.pop(next(iter(_ANSWERS)))  # the oldest first
    _ANSWERS[key] = answer


def _answer(
    call: Callable[[Any, Mapping[str, Any]], Any] | None,
    method: str,
    arguments: Mapping[str, Any],
    dtypes: list[Any],
    found: Mapping[Hashable, int],
    groups: Sequence[Hashable],
    series: bool,
    one: bool,
) -> Any:
    """pandas' answer to the call on the sample frame of ``dtypes``."""
    # a group-by: two groups of two rows, interleaved (pandas' dtype of a float32 group
    # mean is float32 on rows in no particular order, float64 for one group, groups of
    # one row or rows sorted by key: the sample is the usual case)
    frame = sample_frame(dtypes, 4 if groups else 2)
    positions = list(range(len(dtypes)))
    listed = _listed(arguments)  # value_counts([c]) or (subset=[c])
    single = series or one or (method in _ONE_COLUMN and len(positions) == 1 and not listed)
    kw = dict(arguments)
    if "func" in kw:
        kw["func"] = _func(kw["func"], found)
    obj: Any
    if groups:
        key = "__pandas_dp_key__"
        frame[key] = [0, 1, 1, 0]
        grouped = frame.groupby(key)
        obj = grouped[positions[0]] if single else grouped[positions]
    else:
        obj = frame[positions[0]] if single else frame[positions]
    if call is None:
        return getattr(obj, method)()
    return call(obj, kw)
