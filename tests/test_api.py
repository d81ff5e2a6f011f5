"""The accessor's public behaviour: return types, metadata, parameters, errors."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

import pandas_dp
from pandas_dp import DPFloat, DPInt, DPMetadata

B = (0.0, 100.0)


def assert_sampler_scale(actual: float, nominal: float) -> None:
    """The scale a real-valued release uses: ``Delta / epsilon`` rounded *up* to one
    the exact sampler represents (``mechanisms.representable_scale``), by a relative
    amount below ``2**-20`` (the grid is ``2**40`` steps per scale)."""
    assert nominal <= actual <= nominal * (1.0 + 2.0**-20)


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame(
        {
            "age": rng.uniform(0, 100, 300),
            "kids": rng.integers(0, 5, 300),
            "smoker": rng.random(300) < 0.3,
            "region": pd.Series(rng.choice(["N", "S", "E"], 300), dtype="str"),
        }
    )


# --------------------------------------------------------------------------- shapes


@pytest.mark.parametrize("method", ["sum", "mean", "var", "std"])
def test_one_column_gives_a_float_many_give_a_series(df: pd.DataFrame, method: str) -> None:
    one = getattr(df.dp, method)("age", epsilon=1.0, bounds=B, random_state=0)
    assert isinstance(one, DPFloat) and isinstance(one, float)
    assert isinstance(one.attrs["dp"], DPMetadata)
    many = getattr(df.dp, method)(["age", "kids"], epsilon=1.0, bounds=B, random_state=0)
    assert isinstance(many, pd.Series)
    assert list(many.index) == ["age", "kids"] and many.dtype == np.float64
    assert many.attrs["dp"].columns == ("age", "kids")
    series = getattr(df["age"].dp, method)(epsilon=1.0, bounds=B, random_state=0)
    assert isinstance(series, DPFloat)


def test_default_columns_are_the_numeric_ones(df: pd.DataFrame) -> None:
    r = df.dp.mean(epsilon=1.0, bounds=B, random_state=0)
    assert list(r.index) == ["age", "kids", "smoker"]


def test_count_like_pandas(df: pd.DataFrame) -> None:
    frame = df.assign(age=df["age"].where(df.index % 3 != 0))
    c = frame.dp.count(epsilon=1.0, random_state=0)
    assert list(c.index) == list(frame.columns) and c.dtype == np.int64
    meta = c.attrs["dp"]
    assert meta.mechanism == "laplace" and meta.n is None
    keys = [f"{col}: count" for col in frame.columns]
    assert list(meta.sensitivity.index) == keys
    assert all("discrete noise" in meta.details["noised"][k] for k in keys)
    # add/remove (default): the length is private, so a count is bounded below only
    assert meta.output_bounds == {col: (0.0, math.inf) for col in frame.columns}
    # substitute declares the length public: the range [0, n] may use it
    sub = frame.dp.count(epsilon=1.0, neighbouring="substitute", random_state=0)
    assert sub.attrs["dp"].n == 300
    assert sub.attrs["dp"].output_bounds == {col: (0.0, 300.0) for col in frame.columns}
    numeric = frame.dp.count(epsilon=1.0, numeric_only=True, random_state=0)
    assert "region" not in numeric.index
    s = frame["age"].dp.count(epsilon=1.0, random_state=0)
    assert isinstance(s, DPInt) and isinstance(s, int)


def test_count_is_close_with_a_large_epsilon(df: pd.DataFrame) -> None:
    frame = df.assign(age=df["age"].where(df.index % 3 != 0))
    c = frame.dp.count(epsilon=1e4, random_state=0)
    pd.testing.assert_series_equal(c, frame.count(), check_names=False)


def test_len_hides_n_from_the_metadata(df: pd.DataFrame) -> None:
    n = df.dp.len(epsilon=1.0, random_state=3)
    meta = n.attrs["dp"]
    assert isinstance(n, DPInt) and meta.n is None and meta.statistic == "len"
    assert "300" not in json.dumps(meta.to_dict())
    assert df["age"].dp.len(epsilon=1e4, random_state=0) == 300


def test_large_epsilon_recovers_pandas(df: pd.DataFrame) -> None:
    eps = 1e6
    cols = ["age", "kids"]
    pd.testing.assert_series_equal(
        df.dp.mean(cols, epsilon=eps, bounds=B, random_state=0),
        df[cols].mean(),
        check_exact=False,
        rtol=1e-3,
    )
    pd.testing.assert_series_equal(
        df.dp.var(cols, epsilon=eps, bounds=B, random_state=0),
        df[cols].var(),
        check_exact=False,
        rtol=1e-3,
    )
    assert df.dp.sum("age", epsilon=eps, bounds=B, random_state=0) == pytest.approx(
        df["age"].sum(), rel=1e-5
    )
    assert df.dp.std("age", epsilon=eps, bounds=B, random_state=0) == pytest.approx(
        df["age"].std(), rel=1e-3
    )
    assert df.dp.var("age", ddof=0, epsilon=eps, bounds=B, random_state=0) == pytest.approx(
        df["age"].var(ddof=0), rel=1e-3
    )


def test_clipping_is_applied_before_the_statistic() -> None:
    frame = pd.DataFrame({"x": [-50.0, 1.0, 500.0, np.inf, -np.inf, np.nan]})
    # clipped to [0, 10], NaN skipped (like pandas): [0, 1, 10, 10, 0]
    m = frame.dp.mean("x", epsilon=1e7, bounds=(0, 10), random_state=0)
    assert m == pytest.approx(21 / 5, abs=1e-4)
    s = frame.dp.sum("x", epsilon=1e7, bounds=(0, 10), random_state=0)
    assert s == pytest.approx(21.0, abs=1e-3)
    # Liu's direct mean (n public): the NaN counts as the midpoint 5 -> 26 / 6
    d = frame.dp.mean(
        "x",
        epsilon=1e7,
        bounds=(0, 10),
        neighbouring="substitute",
        method="direct",
        random_state=0,
    )
    assert d == pytest.approx(26 / 6, abs=1e-4)


def test_nullable_column_skips_missing_values() -> None:
    import pandera.pandas as pa

    frame = pd.DataFrame({"x": [1.0, 3.0, np.nan, np.nan, np.nan, 8.0]})
    schema = pa.DataFrameSchema({"x": pa.Column(float, pa.Check.in_range(0, 10), nullable=True)})
    m = frame.dp.mean("x", epsilon=1e7, schema=schema, random_state=0)
    assert m == pytest.approx(4.0, abs=1e-3)
    v = frame.dp.var("x", epsilon=1e7, schema=schema, random_state=0)
    assert v == pytest.approx(frame["x"].var(), abs=1e-3)
    s = frame.dp.sum("x", epsilon=1e7, schema=schema, random_state=0)
    assert s == pytest.approx(12.0, abs=1e-3)
    meta = m.attrs["dp"]
    assert list(meta.sensitivity.index) == ["x: bound_sums"]
    assert list(v.attrs["dp"].sensitivity.index) == ["x: bound_sums", "x: centred_squares"]


# --------------------------------------------------------------------------- metadata

FIELDS = [
    "statistic",
    "columns",
    "mechanism",
    "epsilon",
    "delta",
    "neighbouring",
    "n",
    "sensitivity",
    "scale",
    "input_bounds",
    "output_bounds",
    "bounding",
    "secure",
]


def test_metadata_fields(df: pd.DataFrame) -> None:
    m = df.dp.mean("age", epsilon=0.5, bounds=B, random_state=0)
    meta = m.attrs["dp"]
    for name in FIELDS:
        assert hasattr(meta, name)
    assert meta.statistic == "mean" and meta.columns == ("age",)
    assert meta.epsilon == 0.5 and meta.delta == 0.0 and meta.n is None
    # add/remove: the two bound sums, noised as one vector (L1 sensitivity R, plus
    # the rounding allowances) at the whole budget
    assert list(meta.sensitivity.index) == ["age: bound_sums"]
    assert meta.sensitivity["age: bound_sums"] == pytest.approx(100.0, rel=1e-9)
    assert meta.sensitivity["age: bound_sums"] > 100.0  # the accumulation's allowance
    assert meta.details["budget_split"] == {"age: bound_sums": 0.5}  # all of epsilon
    assert_sampler_scale(meta.scale["age: bound_sums"], 100.0 / 0.5)
    assert meta.scale["age: bound_sums"] > meta.sensitivity["age: bound_sums"] / 0.5
    assert meta.input_bounds == {"age": B} and meta.output_bounds == B
    assert meta.bounding == "bit" and meta.neighbouring == "add_remove"
    assert meta.secure is False  # random_state was given
    with pytest.raises(AttributeError):
        meta.epsilon = 3.0  # type: ignore[misc]
    # Liu's direct mean under substitute: n public, sensitivity R / n
    direct = df.dp.mean(
        "age", epsilon=0.5, bounds=B, neighbouring="substitute", method="direct", random_state=0
    ).attrs["dp"]
    assert direct.n == 300 and direct.neighbouring == "substitute"
    assert direct.sensitivity["age: mean_direct"] == pytest.approx(100 / 300)
    assert_sampler_scale(direct.scale["age: mean_direct"], 100 / 300 / 0.5)
    assert direct.output_bounds == B and direct.details["method"] == "direct"


def test_secure_by_default(df: pd.DataFrame) -> None:
    assert df.dp.mean("age", epsilon=1.0, bounds=B).attrs["dp"].secure is True


def test_to_dict_is_json_ready_and_complete(df: pd.DataFrame) -> None:
    r = df.dp.var(["age", "kids"], epsilon=1.0, bounds=B, random_state=0)
    d = r.attrs["dp"].to_dict()
    for name in FIELDS:
        assert name in d
    text = json.dumps(d, allow_nan=False)
    assert "age" in text
    assert d["n"] is None
    expected = {
        f"{col}: {stat}": pytest.approx(value, rel=1e-9)
        for col in ("age", "kids")
        for stat, value in (("bound_sums", 100.0), ("centred_squares", 2500.0))
    }
    assert d["sensitivity"] == expected
    assert d["output_bounds"] == {"age": [0.0, 5000.0], "kids": [0.0, 5000.0]}
    direct = (
        df.dp.var(
            ["age", "kids"],
            epsilon=1.0,
            bounds=B,
            neighbouring="substitute",
            method="direct",
            random_state=0,
        )
        .attrs["dp"]
        .to_dict()
    )
    json.dumps(direct, allow_nan=False)
    liu = pytest.approx(100**2 / 300)
    assert direct["n"] == 300
    assert direct["sensitivity"] == {"age: var_direct": liu, "kids: var_direct": liu}


def test_vector_metadata_per_entry(df: pd.DataFrame) -> None:
    bounds = {"age": B, "kids": (0, 4)}
    r = df.dp.mean(["age", "kids"], epsilon=1.0, bounds=bounds, random_state=0)
    meta = r.attrs["dp"]
    keys = ["age: bound_sums", "kids: bound_sums"]
    assert isinstance(meta.scale, pd.Series) and list(meta.scale.index) == keys
    assert meta.sensitivity["kids: bound_sums"] == pytest.approx(4.0, rel=1e-9)
    # each column got half the budget, all of it on its pair
    assert meta.details["budget_split"] == pytest.approx(dict.fromkeys(keys, 0.5))
    assert_sampler_scale(meta.scale["age: bound_sums"], 100.0 / 0.5)
    # Liu's direct means (substitute): one entry per column, half the budget each
    direct = df.dp.mean(
        ["age", "kids"],
        epsilon=1.0,
        bounds=bounds,
        neighbouring="substitute",
        method="direct",
        random_state=0,
    ).attrs["dp"]
    assert list(direct.scale.index) == ["age: mean_direct", "kids: mean_direct"]
    assert direct.sensitivity["kids: mean_direct"] == pytest.approx(4 / 300)
    assert_sampler_scale(direct.scale["age: mean_direct"], 2 * (100 / 300))
    assert direct.details["budget_split"] == {"age: mean_direct": 0.5, "kids: mean_direct": 0.5}
    iv = meta.interval(0.05)
    assert list(iv.columns) == ["lower", "upper"] and list(iv.index) == ["age", "kids"]
    sim = meta.interval(0.05, simultaneous=True)
    assert (sim["upper"] - sim["lower"] >= iv["upper"] - iv["lower"] - 1e-12).all()


def test_renderings(df: pd.DataFrame) -> None:
    meta = df.dp.mean("age", epsilon=1.0, bounds=B, random_state=0).attrs["dp"]
    html = meta._repr_html_()
    assert "<table" in html and "epsilon" in html and "95% interval" in html
    assert "laplace" in str(meta)


def test_scalar_arithmetic_is_plain(df: pd.DataFrame) -> None:
    m = df.dp.mean("age", epsilon=1.0, bounds=B, random_state=0)
    assert type(m + 1) is float and f"{m:.2f}" == f"{float(m):.2f}"
    assert repr(m) == repr(float(m))


def test_random_state_reproducible(df: pd.DataFrame) -> None:
    a = df.dp.mean("age", epsilon=0.1, bounds=B, random_state=42)
    b = df.dp.mean("age", epsilon=0.1, bounds=B, random_state=42)
    c = df.dp.mean("age", epsilon=0.1, bounds=B, random_state=43)
    assert a == b and a != c
    gen = np.random.default_rng(5)
    assert df.dp.mean("age", epsilon=0.1, bounds=B, random_state=gen).attrs["dp"].secure is False


def test_secure_noise_differs_between_calls(df: pd.DataFrame) -> None:
    values = {float(df.dp.mean("age", epsilon=0.1, bounds=B)) for _ in range(5)}
    assert len(values) == 5


def _grid_step(statistic: str, bounds: tuple[float, float], **settings: object) -> float:
    """The noise grid of a one-measurement release, from its (public) plan."""
    from pandas_dp.plan.plans import Plan
    from pandas_dp.request.declared_columns import NumericDeclaration
    from pandas_dp.request.settings import Settings

    plan = Plan(Settings(**settings))  # type: ignore[arg-type]
    (key,) = plan.moments(NumericDeclaration("age", *bounds), (statistic,)).values()
    plan.calibrate()
    noise = plan.measurements[key].noise
    assert noise is not None
    return float(noise.granularity[0])


def test_real_outputs_lie_on_the_power_of_two_grid(df: pd.DataFrame) -> None:
    r = df.dp.sum("age", epsilon=1.0, bounds=B, bounding="none", random_state=0)
    g = _grid_step("sum", B, epsilon=1.0, bounding="none")
    assert math.log2(g) == int(math.log2(g)) and g < r.attrs["dp"].scale["age: sum"]
    assert float(r) / g == int(float(r) / g)
    kw = {"epsilon": 1.0, "bounding": "none", "neighbouring": "substitute"}
    d = df.dp.mean("age", bounds=B, method="direct", random_state=0, **kw)
    g = _grid_step("mean_direct", B, rows=300, **kw)
    assert math.log2(g) == int(math.log2(g)) and g < d.attrs["dp"].scale["age: mean_direct"]
    assert float(d) / g == int(float(d) / g)


def test_gaussian(df: pd.DataFrame) -> None:
    r = df.dp.mean("age", epsilon=1.0, delta=1e-6, bounds=B, mechanism="gaussian", random_state=0)
    meta = r.attrs["dp"]
    assert meta.mechanism == "gaussian" and meta.delta == 1e-6
    c = df.dp.count(epsilon=1.0, delta=1e-6, mechanism="gaussian", random_state=0)
    assert c.attrs["dp"].mechanism == "gaussian" and c.dtype == np.int64
    assert "discrete noise" in c.attrs["dp"].details["noised"]["age: count"]


@pytest.mark.parametrize("bounding", ["bit", "truncated", "none"])
def test_bounding_modes(df: pd.DataFrame, bounding: str) -> None:
    r = df.dp.var("age", epsilon=0.01, bounds=B, bounding=bounding, random_state=0)
    lo, hi = r.attrs["dp"].output_bounds
    if bounding != "none":
        assert lo <= r <= hi
    assert r.attrs["dp"].bounding == bounding


def test_truncated_scale_is_recalibrated() -> None:
    # Liu's direct mean (substitute): a released value with a two-sided public range
    frame = pd.DataFrame({"x": [0.5, 0.1, 0.9, 0.3]})
    kw = {"epsilon": 1.0, "bounds": (0, 1), "neighbouring": "substitute", "method": "direct"}
    key = "x: mean_direct"
    bit = frame.dp.mean("x", random_state=0, **kw)
    tr = frame.dp.mean("x", bounding="truncated", random_state=0, **kw)
    # Delta = 1/4 < D = 1: truncation needs a larger scale than Delta / epsilon
    assert_sampler_scale(bit.attrs["dp"].scale[key], 0.25)
    assert tr.attrs["dp"].scale[key] > bit.attrs["dp"].scale[key] * 1.05
    # with Delta >= D the renormalising constants cancel: no extra cost
    one = frame.head(1)
    tr1 = one.dp.mean("x", bounding="truncated", random_state=0, **kw)
    assert tr1.attrs["dp"].scale[key] == pytest.approx(1.0)
    # add/remove: the centred sum has no finite public range, so nothing is truncated
    # and its scale is the untruncated one (the variance measures it under both)
    ar = frame.dp.var("x", epsilon=1.0, bounds=(0, 1), bounding="truncated", random_state=0)
    meta = ar.attrs["dp"]
    share = meta.details["budget_split"]["x: centred_sum"]
    assert_sampler_scale(meta.scale["x: centred_sum"], meta.sensitivity["x: centred_sum"] / share)


# --------------------------------------------------------------------------- parameters


@pytest.mark.parametrize(
    "kwargs, error, fragment",
    [
        ({"epsilon": 0}, ValueError, "epsilon"),
        ({"epsilon": -1}, ValueError, "epsilon"),
        ({"epsilon": math.inf}, ValueError, "epsilon"),
        ({"epsilon": math.nan}, ValueError, "epsilon"),
        ({"epsilon": "1"}, TypeError, "epsilon"),
        ({"epsilon": 1, "mechanism": "exponential"}, ValueError, "laplace"),
        ({"epsilon": 1, "bounding": "clamp"}, ValueError, "bit"),
        ({"epsilon": 1, "neighbouring": "swap"}, ValueError, "substitute"),
        ({"epsilon": 1, "out_of_bounds": "drop"}, ValueError, "clip"),
        ({"epsilon": 1, "mechanism": "gaussian"}, ValueError, "delta"),
        ({"epsilon": 1, "delta": 1e-5}, ValueError, "gaussian"),
        (
            {"epsilon": 1, "delta": 1e-5, "mechanism": "gaussian", "bounding": "truncated"},
            ValueError,
            "Laplace",
        ),
        ({"epsilon": 1, "random_state": "seed"}, TypeError, "random_state"),
    ],
)
def test_parameter_errors(df: pd.DataFrame, kwargs: dict, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        df.dp.mean("age", bounds=B, **kwargs)


def test_epsilon_is_keyword_only(df: pd.DataFrame) -> None:
    with pytest.raises(TypeError):
        df.dp.mean("age", 1.0)  # type: ignore[misc]


def test_column_errors(df: pd.DataFrame) -> None:
    with pytest.raises(KeyError, match="nope"):
        df.dp.mean("nope", epsilon=1.0, bounds=B)
    with pytest.raises(TypeError, match="region"):
        df.dp.mean("region", epsilon=1.0, bounds=B)
    with pytest.raises(ValueError, match="twice"):
        df.dp.mean(["age", "age"], epsilon=1.0, bounds=B)
    with pytest.raises(ValueError, match="empty"):
        df.dp.mean([], epsilon=1.0, bounds=B)


def test_small_n_errors_are_about_public_n() -> None:
    empty = pd.DataFrame({"x": pd.Series([], dtype=float)})
    one = pd.DataFrame({"x": [0.3]})
    two = pd.DataFrame({"x": [0.3, 0.4]})
    # Liu's direct releases need a public n (substitute) large enough
    direct = {"epsilon": 1.0, "bounds": (0, 1), "neighbouring": "substitute", "method": "direct"}
    with pytest.raises(ValueError, match="at least 1 rows; the frame has 0"):
        empty.dp.mean("x", **direct)
    with pytest.raises(ValueError, match="at least 2 rows; the frame has 1"):
        one.dp.var("x", **direct)
    with pytest.raises(ValueError, match="ddof"):
        two.dp.var("x", ddof=2, **direct)
    with pytest.raises(ValueError, match="ddof"):
        two.dp.std("x", ddof=3, **direct)
    # add/remove (default): n is private, so no error may depend on it; every small
    # frame gets a release inside its public range
    for frame in (empty, one, two):
        for statistic in ("sum", "mean", "var", "std"):
            for ddof in (0, 1, 2):
                kw = {"ddof": ddof} if statistic in ("var", "std") else {}
                r = getattr(frame.dp, statistic)(
                    "x", epsilon=1.0, bounds=(0, 1), random_state=0, **kw
                )
                lo, hi = r.attrs["dp"].output_bounds
                assert lo <= r <= hi and r.attrs["dp"].n is None


# --------------------------------------------------------------------------- pandas semantics


def test_no_mutation_of_the_callers_frame(df: pd.DataFrame) -> None:
    frame = df.assign(age=df["age"] * 3 - 50)  # values outside the bounds
    frame.loc[0, "age"] = np.nan
    before = frame.copy(deep=True)
    frame.dp.mean(["age", "kids"], epsilon=1.0, bounds=B, random_state=0)
    frame.dp.var("age", epsilon=1.0, bounds=B, random_state=0)
    frame.dp.count(epsilon=1.0, random_state=0)
    pd.testing.assert_frame_equal(frame, before)
    assert frame.attrs == {}


def test_default_string_dtype_and_copy_on_write(df: pd.DataFrame) -> None:
    assert str(df["region"].dtype) in ("str", "string")
    counts = df.dp.count(epsilon=1e5, random_state=0)
    assert counts["region"] == 300
    view = df["age"]
    view.dp.mean(epsilon=1.0, bounds=B, random_state=0)
    assert df["age"].equals(view)


@pytest.mark.parametrize(
    "values, dtype",
    [
        ([1, 2, None, 4], "Int64"),
        ([0.5, None, 2.5, 1.0], "Float64"),
        ([True, False, None, True], "boolean"),
        ([1, 2, 3, 4], "int8"),
        ([1, 2, 3, 4], "uint16"),
        ([1.0, 2.0, 3.0, 4.0], "float32"),
    ],
)
def test_extension_and_small_dtypes(values: list, dtype: str) -> None:
    s = pd.Series(values, dtype=dtype, name="x")
    m = s.dp.mean(epsilon=1e7, bounds=(0, 4), random_state=0)
    expected = s.astype("float64").dropna().clip(0, 4).mean()  # missing values skipped
    assert m == pytest.approx(expected, abs=1e-4)
    # Liu's direct mean (n public): a missing value counts as the midpoint 2
    d = s.dp.mean(
        epsilon=1e7, bounds=(0, 4), neighbouring="substitute", method="direct", random_state=0
    )
    assert d == pytest.approx(s.astype("float64").fillna(2.0).clip(0, 4).mean(), abs=1e-4)


def test_accessor_is_cheap_and_stateless(df: pd.DataFrame) -> None:
    a, b = df.dp, df.dp
    assert a._obj is b._obj
    assert not hasattr(a, "__dict__")


def test_results_pickle_with_their_metadata(df: pd.DataFrame) -> None:
    import pickle

    releases = [
        df.dp.mean("age", epsilon=1.0, bounds=B, random_state=0),
        df.dp.var(["age", "kids"], epsilon=1.0, bounds=B, random_state=0),
        df.dp.count(epsilon=1.0, random_state=0),
        df.dp.len(epsilon=1.0, random_state=0),
        df.dp.value_counts("region", epsilon=1.0, categories=["N", "S", "E"], random_state=0),
        df.dp.proportions("region", epsilon=1.0, categories=["N", "S", "E"], random_state=0),
        df.dp.counts({"smokers": df.smoker}, epsilon=1.0, random_state=0),
        df.dp.cov(["age", "kids"], epsilon=1.0, bounds=B, random_state=0),
    ]
    for release in releases:
        back = pickle.loads(pickle.dumps(release))
        meta = back.attrs["dp"]
        assert meta.to_dict() == release.attrs["dp"].to_dict()
        first, again = meta.interval(0.1), release.attrs["dp"].interval(0.1)
        if isinstance(first, tuple):
            assert first == again
        else:
            pd.testing.assert_frame_equal(first, again)


@pytest.mark.parametrize(
    "method, neighbouring, expected",
    [
        ("auto", "substitute", "moments"),
        ("auto", "add_remove", "moments"),
        ("moments", "substitute", "moments"),
        ("direct", "substitute", "direct"),
    ],
)
def test_var_method_reaches_the_release(
    df: pd.DataFrame, method: str, neighbouring: str, expected: str
) -> None:
    for release in (
        df.dp.var("age", epsilon=1.0, bounds=B, method=method, neighbouring=neighbouring),
        df["age"].dp.std(epsilon=1.0, bounds=B, method=method, neighbouring=neighbouring),
    ):
        meta = release.attrs["dp"]
        assert meta.details["method"] == expected
        sens = meta.sensitivity
        if expected == "moments" and neighbouring == "add_remove":  # bound sums, squares
            assert list(sens.index) == ["age: bound_sums", "age: centred_squares"]
        elif expected == "moments":  # substitute: count, centred sum and centred squares
            assert list(sens.index) == ["age: count", "age: centred_sum", "age: centred_squares"]
        else:
            assert list(sens.index) == ["age: var_direct"]
            assert sens["age: var_direct"] == pytest.approx(100**2 / 300)
    with pytest.raises(ValueError, match="auto"):
        df.dp.var("age", epsilon=1.0, bounds=B, method="welford")
    # direct needs a public n: refused under add_remove, before any charge
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    for release in (df.dp.var, df.dp.std, df.dp.mean):
        with pytest.raises(ValueError, match="substitute"):
            release("age", epsilon=1.0, bounds=B, method="direct", budget=budget)
    assert budget.spent == (0.0, 0.0) and len(budget.ledger) == 0


# --------------------------------------------------------------------------- skipna, ddof


@pytest.mark.parametrize("dtype", ["float64", "Float64", "schema nullable"])
def test_mostly_missing_column_is_skipped_not_imputed(dtype: str) -> None:
    """68% missing: the mean is pandas' (skipna), far from the midpoint-imputed one.

    20 000 rows, 6 400 present, uniform on [60, 100] (mean ~80), bounds [0, 100]:
    imputing the midpoint would give ~0.32 * 80 + 0.68 * 50 = 59.6. At epsilon = 10
    the centred sum's noise has scale 50 / 7.5 = 6.7, i.e. ~0.001 on the mean; the
    tolerance 0.05 is 40 of those scales (false-alarm rate below 1e-17 per seed).
    """
    import pandera.pandas as pa

    rng = np.random.default_rng(11)
    n = 20_000
    values = rng.uniform(60, 100, n)
    missing = np.zeros(n, dtype=bool)
    missing[rng.permutation(n)[: int(0.68 * n)]] = True
    x = pd.Series(np.where(missing, np.nan, values), name="x")
    kw: dict[str, object] = {"bounds": (0, 100)}
    if dtype == "Float64":
        x = x.astype("Float64")
    elif dtype == "schema nullable":
        kw = {
            "schema": pa.DataFrameSchema(
                {"x": pa.Column(float, nullable=True, checks=[pa.Check.in_range(0, 100)])}
            )
        }
    frame = x.to_frame()
    assert frame["x"].isna().mean() == pytest.approx(0.68)
    exact, imputed = frame["x"].mean(), frame["x"].fillna(50.0).mean()
    assert abs(exact - imputed) > 15
    for seed in range(5):
        m = frame.dp.mean("x", epsilon=10.0, random_state=seed, **kw)
        assert m == pytest.approx(exact, abs=0.05)
    # variance: pandas' skipna variance (~133), not the imputed one (~330)
    v = frame.dp.var("x", epsilon=10.0, random_state=0, **kw)
    assert v == pytest.approx(frame["x"].var(), rel=0.02)
    assert abs(frame["x"].fillna(50.0).var() - frame["x"].var()) > 100
    # the count of the mean's plan is the non-missing count, not the length
    c = frame.dp.count(epsilon=10.0, random_state=0)
    assert c["x"] == pytest.approx(frame["x"].count(), abs=5)


@pytest.mark.parametrize("shrink", [True, False])
@pytest.mark.parametrize(
    "ddof", [0, 1, pytest.param(2, marks=pytest.mark.slow), pytest.param(3, marks=pytest.mark.slow)]
)
@pytest.mark.parametrize(
    "bounding", ["bit", pytest.param("truncated", marks=pytest.mark.slow), "none"]
)
def test_nullable_var_any_ddof_stays_in_its_range(
    ddof: int, bounding: str, shrink: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Few present values (so the noisy count is often <= ddof), many seeds.

    The variance uses C' = max(C~, ddof + 1), so it is never inf or NaN; clamped
    (bit, truncated) it lies in [0, (ddof + 1) R^2 / 4], the ddof's own public
    range, which the metadata reports; its interval lies in that range too.
    ``bounding="none"`` releases the unclamped estimate: finite, not bounded.
    The range's top is the largest variance ``c`` points on ``[0, R]`` can have,
    ``floor(c/2) ceil(c/2) R^2 / (c (c - ddof))``, over every admissible count ``c``.
    Without the posterior mean where the noise dominates (``shrink=False``), the
    clamp reaches both ends of the range; with it, releases stay in the range.
    """
    if not shrink:
        monkeypatch.setattr(pandas_dp.stats.shrinkage, "SHRINK_FROM", math.inf)
    frame = pd.DataFrame({"x": pd.array([1.0, None, 9.0, None, None, 4.0], dtype="Float64")})
    r2 = 10.0**2
    top = max((c // 2) * (c - c // 2) * r2 / (c * (c - ddof)) for c in range(ddof + 1, 200))
    expected = (0.0, top)
    values = []
    for seed in range(200):
        for eps in (0.05, 1.0):
            for statistic in ("var", "std"):
                kw = {"epsilon": eps, "bounds": (0, 10), "bounding": bounding, "random_state": seed}
                r = getattr(frame.dp, statistic)("x", ddof=ddof, **kw)
                meta = r.attrs["dp"]
                lo, hi = meta.output_bounds
                want = expected if statistic == "var" else (0.0, math.sqrt(expected[1]))
                assert (lo, hi) == pytest.approx(want)
                assert math.isfinite(r)
                if bounding != "none":
                    assert lo <= r <= hi
                elif statistic == "std":  # "none" does not clamp, but a root is >= 0
                    assert r >= 0.0
                ilo, ihi = meta.interval(0.05)
                assert lo <= ilo <= ihi <= hi
                if statistic == "var":
                    values.append(float(r))
    if bounding != "none" and not shrink:  # the range is used: some releases reach 0
        # and come near its top (the top itself only where the noisy mean is the
        # midpoint: the clamp is also to the largest variance that mean allows,
        # test_variance_cap.py)
        assert min(values) == 0.0 and expected[1] * 0.99 <= max(values) <= expected[1]


@pytest.mark.parametrize(
    ("kwargs", "error", "fragments"),
    [
        ({"budget": 5}, TypeError, ["budget must be a pandas_dp.PrivacyBudget", "epsilon=5"]),
        ({"budget": "b"}, TypeError, ["budget must be a pandas_dp.PrivacyBudget", "str"]),
        ({"random_state": -1}, ValueError, ["non-negative int seed", "got -1"]),
        ({"random_state": np.int64(-2)}, ValueError, ["non-negative int seed", "got -2"]),
    ],
)
def test_budget_and_seed_errors_before_the_charge(
    df: pd.DataFrame, kwargs: dict, error: type, fragments: list[str]
) -> None:
    outer = pandas_dp.PrivacyBudget(epsilon=10.0)
    with outer:
        with pytest.raises(error) as err:
            df.dp.mean("age", epsilon=1.0, bounds=B, **kwargs)
        with pytest.raises(error):
            df.dp.groupby("smoker").mean("age", epsilon=1.0, bounds=B, **kwargs)
    assert all(f in str(err.value) for f in fragments), str(err.value)
    assert outer.spent == (0.0, 0.0) and outer.ledger.empty


def test_binding_a_negative_seed_is_refused(df: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="non-negative int seed"):
        df.dp(random_state=-1)


COMPLEX_RELEASES = {
    "series mean": lambda s, f, b: s.dp.mean(epsilon=1.0, bounds=(0, 10), budget=b),
    "series median": lambda s, f, b: s.dp.median(epsilon=1.0, bounds=(0, 10), budget=b),
    "frame sum": lambda s, f, b: f.dp.sum("z", epsilon=1.0, bounds=(0, 10), budget=b),
    "default columns": lambda s, f, b: f.dp.mean(epsilon=1.0, bounds=(0, 10), budget=b),
    "cov": lambda s, f, b: f.dp.cov(["z", "x"], epsilon=1.0, bounds=(0, 10), budget=b),
    "agg": lambda s, f, b: f.dp.agg({"z": "mean"}, epsilon=1.0, bounds=(0, 10), budget=b),
    "describe": lambda s, f, b: f.dp.describe(epsilon=1.0, bounds=(0, 10), budget=b),
    "groupby mean": lambda s, f, b: f.dp.groupby("k", keys=["a", "b"]).mean(
        "z", epsilon=1.0, bounds=(0, 10), budget=b
    ),
    "groupby describe": lambda s, f, b: f.dp.groupby("k", keys=["a", "b"]).describe(
        epsilon=1.0, bounds=(0, 10), budget=b
    ),
}


@pytest.mark.parametrize("release", list(COMPLEX_RELEASES))
def test_complex_columns_are_refused_before_the_charge(release: str) -> None:
    """A complex dtype passes ``is_numeric_dtype`` but has no bounds: refused from its
    dtype, never cast (with a ComplexWarning, dropping the imaginary parts) after the
    charge."""
    z = pd.Series(np.linspace(0, 10, 40) + 1j, name="z")
    frame = pd.DataFrame({"z": z, "x": np.linspace(0, 10, 40), "k": ["a", "b"] * 20})
    budget = pandas_dp.PrivacyBudget(epsilon=10.0)
    with pytest.raises(TypeError) as err:
        COMPLEX_RELEASES[release](z, frame, budget)
    message = str(err.value)
    assert "complex" in message and "'z'" in message and "np.real" in message, message
    assert budget.spent == (0.0, 0.0) and budget.ledger.empty


def test_tuple_column_labels_are_one_column_like_pandas() -> None:
    """``df.dp.mean(("a", "b"))`` names the tuple-labelled column, as ``df[("a", "b")]``
    does (it once read the tuple as two labels); with MultiIndex columns a partial
    label is refused before the charge, naming the full tuples."""
    rng = np.random.default_rng(0)
    d = pd.DataFrame({("a", "b"): rng.uniform(0, 10, 50), "k": ["u"] * 50})
    one = d.dp.mean(("a", "b"), epsilon=1.0, bounds=(0, 10), random_state=0)
    assert isinstance(one, float)
    listed = d.dp.mean([("a", "b")], epsilon=1.0, bounds=(0, 10), random_state=0)
    assert list(listed.index) == [("a", "b")] and listed.iloc[0] == one
    grouped = d.dp.groupby("k", keys=["u"]).mean(("a", "b"), epsilon=1.0, bounds=(0, 10))
    assert isinstance(grouped, pd.Series)
    mc = pd.DataFrame(
        rng.uniform(0, 10, (50, 2)), columns=pd.MultiIndex.from_tuples([("g", "x"), ("g", "y")])
    )
    budget = pandas_dp.PrivacyBudget(epsilon=5.0)
    with budget, pytest.raises(KeyError, match=r"MultiIndex of 2 levels.*\('g', 'x'\)"):
        mc.dp.mean("g", epsilon=1.0, bounds=(0, 10))
    assert budget.spent == (0.0, 0.0)
    full = mc.dp.mean(("g", "y"), epsilon=1.0, bounds=(0, 10), random_state=0)
    assert 0 <= full <= 10


def test_series_describe_and_agg_are_the_frames_column_like_pandas() -> None:
    """``s.dp.describe`` / ``s.dp.agg``: pandas' Series shapes, one charge each."""
    rng = np.random.default_rng(5)
    s = pd.Series(rng.uniform(20, 80, 5000), name="age")
    budget = pandas_dp.PrivacyBudget(1e4)
    d = s.dp.describe(epsilon=1e3, bounds=(0, 100), budget=budget, random_state=0)
    exact = s.describe()
    assert isinstance(d, pd.Series) and d.name == "age"
    assert list(d.index) == [
        "count", "mean", "std", "min (declared)", "25%", "50%", "75%", "max (declared)"
    ]  # fmt: skip
    assert abs(d["count"] - exact["count"]) <= 5 and abs(d["mean"] - exact["mean"]) < 0.1
    assert abs(d["50%"] - exact["50%"]) < 1.0
    assert d.attrs["dp"].interval(0.05).shape == (8, 2)
    t = s.dp.agg(["mean", "std", "median"], epsilon=1e3, bounds=(0, 100), budget=budget)
    assert isinstance(t, pd.Series) and list(t.index) == ["mean", "std", "median"]
    assert t.name == "age" and np.allclose(t, s.agg(["mean", "std", "median"]), atol=1.0)
    assert budget.spent == (2e3, 0.0) and len(budget.ledger) == 2
    one = s.dp.agg("mean", epsilon=1.0, bounds=(0, 100), random_state=0)
    assert isinstance(one, DPFloat)
    assert one == s.dp.mean(epsilon=1.0, bounds=(0, 100), random_state=0)
    assert isinstance(s.dp.agg("count", epsilon=1.0, random_state=0), DPInt)
    unnamed = pd.Series([1.0, 2.0] * 50).dp.describe(epsilon=1.0, bounds=(0, 5), random_state=0)
    assert unnamed.name is None
    column = pa.Column(float, pa.Check.in_range(0, 5))  # a lone Column names no column
    for release in (
        lambda x: x.dp.describe(epsilon=1.0, schema=column, random_state=0),
        lambda x: x.dp.agg(["mean", "std"], epsilon=1.0, schema=column, random_state=0),
    ):
        assert release(pd.Series([1.0, 2.0] * 50)).name is None
        assert release(pd.Series([1.0, 2.0] * 50, name="v")).name == "v"
    shares = pd.Series(["a", "b", "a"] * 50, name="c").dp.describe(
        epsilon=50.0, categories=["a", "b"], random_state=0
    )
    assert list(shares.index) == ["share a", "share b"] and shares.name == "c"


def test_series_describe_and_agg_refuse_before_the_charge() -> None:
    s = pd.Series([1.0, 2.0] * 50, name="x")
    budget = pandas_dp.PrivacyBudget(5.0)
    with pytest.raises(ValueError, match="agg does not release 'max'"):
        s.dp.agg("max", epsilon=1.0, bounds=(0, 5), budget=budget)
    with pytest.raises(pandas_dp.errors.MissingBoundsError):
        s.dp.describe(epsilon=1.0, budget=budget)
    with pytest.raises(ValueError, match="percentiles"):
        s.dp.describe([1.5], epsilon=1.0, bounds=(0, 5), budget=budget)
    assert budget.spent == (0.0, 0.0) and len(budget.ledger) == 0


SKIPNA_RELEASES = {
    "frame mean": lambda df, **kw: df.dp.mean("x", bounds=(0, 5), **kw),
    "frame sum": lambda df, **kw: df.dp.sum("x", bounds=(0, 5), **kw),
    "series std": lambda df, **kw: df["x"].dp.std(bounds=(0, 5), **kw),
    "series median": lambda df, **kw: df["x"].dp.median(bounds=(0, 5), **kw),
    "frame median": lambda df, **kw: df.dp.median("x", bounds=(0, 5), **kw),
    "grouped var": lambda df, **kw: df.dp.groupby("g", keys=["a", "b"]).var(
        "x", bounds=(0, 5), **kw
    ),
}


@pytest.mark.parametrize("release", list(SKIPNA_RELEASES))
def test_skipna_true_is_the_default_and_false_is_refused(release: str) -> None:
    """pandas' keyword: True skips missing values (the default); False would answer
    NaN whenever one value is missing, so it is refused before the charge."""
    df = pd.DataFrame({"x": [1.0, None, 3.0, 4.0] * 50, "g": ["a", "b"] * 100})
    run = SKIPNA_RELEASES[release]
    same = run(df, epsilon=1.0, skipna=True, random_state=0)
    default = run(df, epsilon=1.0, random_state=0)
    assert np.array_equal(np.asarray(same), np.asarray(default))
    budget = pandas_dp.PrivacyBudget(5.0)
    with pytest.raises(ValueError, match="skipna=False is not supported"):
        run(df, epsilon=1.0, skipna=False, budget=budget)
    assert budget.spent == (0.0, 0.0)


@pytest.mark.parametrize(
    ("call", "owner"),
    [
        (lambda df: df.dp.quantile("x", 0.5, foo=1), "DPFrameAccessor.quantile()"),
        (lambda df: df.dp.value_counts("x", foo=1), "DPFrameAccessor.value_counts()"),
        (lambda df: df.dp.cov(["x"], foo=1), "DPFrameAccessor.cov()"),
        (lambda df: df.dp.groupby("x", keys=[1.0]).median("x", foo=1), "DPGroupBy.median()"),
        (lambda df: df.dp.groupby("x", keys=[1.0]).value_counts(foo=1), "DPGroupBy.value_counts()"),
    ],
)
def test_python_messages_name_the_public_class(call: Any, owner: str) -> None:
    """A misspelt keyword: Python's own message names the accessor, not the private
    mixin that holds the method."""
    with pytest.raises(TypeError, match="unexpected keyword") as info:
        call(pd.DataFrame({"x": [1.0, 2.0]}))
    assert str(info.value).startswith(owner) and "._" not in str(info.value)
