"""Property tests: bad input never crashes the clip path or leaks through an error.

For any data -- NaN, +-inf, huge values, any numeric or nullable dtype, any length
-- a release in clip mode either succeeds with a value inside its public output
range, or raises one of the documented errors, and which one depends only on
public facts (the arguments; the row count only where ``neighbouring="substitute"``
declares it public), never on the values. Under ``add_remove`` (the default) the
length is private: no length, not even 0, makes a release fail.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pandas_dp  # noqa: F401  (registers .dp)

floats_any = st.floats(allow_nan=True, allow_infinity=True, width=64)
lengths = st.integers(min_value=0, max_value=40)
bounds_st = (
    st.tuples(st.floats(-1e12, 1e12, allow_nan=False), st.floats(1e-6, 1e12, allow_nan=False))
    .map(lambda t: (t[0], t[0] + t[1]))
    .filter(lambda b: b[0] < b[1])
)
epsilons = st.floats(1e-3, 1e3)
modes = st.sampled_from(["bit", "truncated", "none"])
relations = st.sampled_from(["substitute", "add_remove"])
methods = st.sampled_from(["auto", "moments", "direct"])
stats = st.sampled_from(["sum", "mean", "var", "std"])

#: Liu's direct releases need a public n of at least this many rows.
MIN_N = {"mean": 1, "var": 2, "std": 2}

common = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def expected_error(statistic: str, n: int, neighbouring: str, method: str) -> str | None:
    """The error a release must raise, from public facts only (None: it must succeed)."""
    if statistic == "sum" or method != "direct":
        return None  # noisy sufficient statistics: defined for any length
    if neighbouring != "substitute":
        return "substitute"  # direct needs a public n
    need = MIN_N[statistic]
    return f"at least {need} rows; the frame has {n}" if n < need else None


def method_kw(statistic: str, method: str) -> dict[str, str]:
    return {} if statistic == "sum" else {"method": method}


def _release(values: pd.Series, statistic: str, **kw: object) -> object:
    return getattr(values.dp, statistic)(**kw)


@common
@given(
    data=hnp.arrays(np.float64, lengths, elements=floats_any),
    statistic=stats,
    bounds=bounds_st,
    epsilon=epsilons,
    bounding=modes,
    neighbouring=relations,
    method=methods,
    seed=st.integers(0, 2**32 - 1),
)
def test_any_float_array(
    data: np.ndarray,
    statistic: str,
    bounds: tuple,
    epsilon: float,
    bounding: str,
    neighbouring: str,
    method: str,
    seed: int,
) -> None:
    s = pd.Series(data, name="x")
    kw = {
        "epsilon": epsilon,
        "bounds": bounds,
        "bounding": bounding,
        "neighbouring": neighbouring,
        "random_state": seed,
        **method_kw(statistic, method),
    }
    err = expected_error(statistic, len(s), neighbouring, method)
    if err is not None:
        with pytest.raises(ValueError, match=err):
            _release(s, statistic, **kw)
        return
    r = _release(s, statistic, **kw)
    assert isinstance(r, float) and not math.isnan(r)
    meta = r.attrs["dp"]  # type: ignore[attr-defined]
    lo, hi = meta.output_bounds
    if bounding != "none":
        assert lo <= r <= hi
    ilo, ihi = meta.interval(0.05)
    assert ilo <= ihi and lo <= ilo and ihi <= hi
    json_ready = meta.to_dict()
    assert json_ready["n"] == (len(s) if neighbouring == "substitute" else None)


@common
@given(
    data=hnp.arrays(np.float64, st.integers(0, 30), elements=floats_any),
    statistic=stats,
    bounding=modes,
    neighbouring=relations,
    method=methods,
    seed=st.integers(0, 2**32 - 1),
)
def test_nullable_columns_any_data(
    data: np.ndarray, statistic: str, bounding: str, neighbouring: str, method: str, seed: int
) -> None:
    schema = pa.DataFrameSchema({"x": pa.Column(float, pa.Check.in_range(-3, 5), nullable=True)})
    frame = pd.DataFrame({"x": data})
    err = expected_error(statistic, len(frame), neighbouring, method)
    kw = {
        "epsilon": 1.0,
        "schema": schema,
        "bounding": bounding,
        "neighbouring": neighbouring,
        "random_state": seed,
        **method_kw(statistic, method),
    }
    if err is not None:
        with pytest.raises(ValueError, match=err):
            getattr(frame.dp, statistic)("x", **kw)
        return
    r = getattr(frame.dp, statistic)("x", **kw)
    lo, hi = r.attrs["dp"].output_bounds
    assert not math.isnan(r)
    if bounding != "none":
        assert lo <= r <= hi


@common
@given(
    data=hnp.arrays(
        st.sampled_from([np.int8, np.int64, np.uint32, np.bool_, np.float32]),
        st.integers(1, 30),
    ),
    statistic=stats,
    seed=st.integers(0, 2**32 - 1),
)
def test_numpy_numeric_dtypes(data: np.ndarray, statistic: str, seed: int) -> None:
    s = pd.Series(data, name="x")
    kw = {"epsilon": 0.5, "bounds": (-10, 10), "random_state": seed}
    r = _release(s, statistic, **kw)  # add_remove: any length, no error
    lo, hi = r.attrs["dp"].output_bounds  # type: ignore[attr-defined]
    assert lo <= r <= hi


@common
@given(
    values=st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40)), min_size=1, max_size=30),
    dtype=st.sampled_from(["Int64", "Float64"]),
    statistic=stats,
    seed=st.integers(0, 2**32 - 1),
)
def test_nullable_extension_dtypes(values: list, dtype: str, statistic: str, seed: int) -> None:
    s = pd.Series(values, dtype=dtype, name="x")
    r = _release(s, statistic, epsilon=1.0, bounds=(0, 100), random_state=seed)
    lo, hi = r.attrs["dp"].output_bounds  # type: ignore[attr-defined]
    assert lo <= r <= hi


@common
@given(
    data=hnp.arrays(np.float64, lengths, elements=floats_any),
    epsilon=epsilons,
    bounding=modes,
    neighbouring=relations,
    mechanism=st.sampled_from(["laplace", "gaussian"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_counts_any_data(
    data: np.ndarray, epsilon: float, bounding: str, neighbouring: str, mechanism: str, seed: int
) -> None:
    if mechanism == "gaussian" and bounding == "truncated":
        bounding = "bit"
    delta = 1e-6 if mechanism == "gaussian" else 0.0
    frame = pd.DataFrame({"x": data, "y": -data})
    kw = {
        "epsilon": epsilon,
        "delta": delta,
        "bounding": bounding,
        "neighbouring": neighbouring,
        "mechanism": mechanism,
        "random_state": seed,
    }
    c = frame.dp.count(**kw)
    assert c.dtype == np.int64
    ranges = c.attrs["dp"].output_bounds
    top = len(frame) if neighbouring == "substitute" else math.inf
    assert ranges == {"x": (0.0, top), "y": (0.0, top)}
    if bounding != "none":
        for column, (lo, hi) in ranges.items():
            assert lo <= c[column] <= hi
    n = frame.dp.len(**kw)
    assert isinstance(n, int)
    if bounding != "none":
        assert n >= 0


def test_single_row_frame() -> None:
    one = pd.DataFrame({"x": [7.0]})
    for mode in ("bit", "truncated", "none"):
        assert isinstance(one.dp.mean("x", epsilon=1.0, bounds=(0, 10), bounding=mode), float)
        assert isinstance(one.dp.sum("x", epsilon=1.0, bounds=(0, 10), bounding=mode), float)


def test_empty_frame_counts() -> None:
    empty = pd.DataFrame({"x": pd.Series([], dtype=float)})
    c = empty.dp.count(epsilon=1.0, neighbouring="substitute")
    assert c["x"] == 0  # substitute: the range [0, n] = [0, 0] is public
    # add/remove: the length is private, so the release is not pinned at 0. P(count
    # > 0) = P(noise > 0) = 0.269 at epsilon = 1; none above 0 in 100 seeds has
    # probability 0.731**100 < 3e-14
    counts = [int(empty.dp.count(epsilon=1.0, random_state=i)["x"]) for i in range(100)]
    assert min(counts) == 0 and max(counts) > 0
    lengths = [int(empty.dp.len(epsilon=1.0, random_state=i)) for i in range(100)]
    assert min(lengths) == 0 and max(lengths) > 0


def test_tiny_epsilon_and_tiny_range() -> None:
    frame = pd.DataFrame({"x": [1e-300, 2e-300, 3e-300]})
    r = frame.dp.mean("x", epsilon=1e-9, bounds=(0, 1e-299), bounding="truncated")
    assert 0 <= r <= 1e-299


def test_a_sum_beyond_the_float_range_releases_an_infinity():
    """Fifty values near the largest double: the centred sum exceeds the float range;
    the release is an infinity (clamped into the range), never an OverflowError."""
    s = pd.Series(np.full(50, 9e307), name="x")
    m = s.dp.mean(epsilon=1e6, bounds=(0.0, 1e308), random_state=0)
    assert 0.0 <= float(m) <= 1e308
    total = s.dp.sum(epsilon=1e6, bounds=(0.0, 1e308), random_state=0)
    assert math.isinf(float(total)) or float(total) > 1e308 / 2
    # the intervals' half-widths overflow to infinity there: no warning, no error
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for r in (m, total, s.dp.sum(epsilon=1.0, bounds=(0.0, 1e308), random_state=0)):
            lo, hi = r.attrs["dp"].interval(0.05)
            assert lo <= hi
