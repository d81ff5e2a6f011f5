"""cov and corr: shape, PSD, accuracy, metadata, intervals, errors.

The default is ``method="moments"`` under ``neighbouring="add_remove"`` (the
frame's length private): a plan over the complete-row count, the centred sums and
the cross-products. Liu's ``method="direct"`` needs ``neighbouring="substitute"``.
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
from scipy import stats

import pandas_dp
from pandas_dp import PrivacyBudget

B = (-1.0, 1.0)


def relation(method: str) -> str:
    """The neighbouring relation a method runs under (direct needs a public n)."""
    return "substitute" if method == "direct" else "add_remove"


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    z = rng.normal(size=(400, 3)) @ np.array([[1, 0.6, 0.2], [0, 0.8, 0.3], [0, 0, 0.9]])
    return pd.DataFrame(np.clip(z / 3, -1, 1), columns=["x", "y", "z"])


@pytest.mark.parametrize("method", ["moments", "direct", "auto"])
@pytest.mark.parametrize("psd", ["clip", "higham"])
@pytest.mark.parametrize("neighbouring", ["substitute", "add_remove"])
def test_cov_is_symmetric_psd_and_labelled(
    df: pd.DataFrame, method: str, psd: str, neighbouring: str
) -> None:
    if method == "direct" and neighbouring == "add_remove":
        # Liu's direct covariance needs a public n: refused before the charge
        budget = PrivacyBudget(1.0)
        with pytest.raises(ValueError, match="substitute"):
            df.dp.cov(epsilon=0.2, bounds=B, method=method, psd=psd, budget=budget)
        assert budget.spent == (0.0, 0.0)
        return
    c = df.dp.cov(
        epsilon=0.2, bounds=B, method=method, psd=psd, neighbouring=neighbouring, random_state=1
    )
    assert list(c.index) == list(c.columns) == ["x", "y", "z"]
    m = c.to_numpy()
    np.testing.assert_allclose(m, m.T)
    assert np.linalg.eigvalsh(m).min() >= -1e-10
    meta = c.attrs["dp"]
    assert meta.statistic == "cov" and meta.details["psd repair"] == psd
    expected = {"auto": "moments"}.get(method, method)
    assert meta.details["method"] == expected
    assert meta.neighbouring == neighbouring
    assert meta.n == (len(df) if neighbouring == "substitute" else None)
    iv = meta.interval(0.05)
    assert len(iv) == 9 and (iv["lower"] <= iv["upper"]).all()


@pytest.mark.parametrize("method", ["moments", "direct"])
def test_cov_matches_pandas_with_large_epsilon(df: pd.DataFrame, method: str) -> None:
    rel = relation(method)
    c = df.dp.cov(epsilon=1e6, bounds=B, method=method, neighbouring=rel, random_state=0)
    np.testing.assert_allclose(c.to_numpy(), df.cov().to_numpy(), atol=1e-3)
    c0 = df.dp.cov(ddof=0, epsilon=1e6, bounds=B, method=method, neighbouring=rel, random_state=0)
    np.testing.assert_allclose(c0.to_numpy(), df.cov(ddof=0).to_numpy(), atol=1e-3)
    r = df.dp.corr(epsilon=1e6, bounds=B, method=method, neighbouring=rel, random_state=0)
    np.testing.assert_allclose(r.to_numpy(), df.corr().to_numpy(), atol=1e-2)


def test_corr_has_unit_diagonal(df: pd.DataFrame) -> None:
    r = df.dp.corr(["x", "y"], epsilon=0.05, bounds=B, random_state=3)
    assert np.diag(r.to_numpy()).tolist() == [1.0, 1.0]
    assert (r.abs() <= 1).all().all()
    assert r.attrs["dp"].statistic == "corr"
    iv = r.attrs["dp"].interval(0.1)
    assert len(iv) == 4 and (iv["lower"] <= iv["upper"]).all()
    assert ((iv["lower"] >= -1) & (iv["upper"] <= 1)).all()
    assert iv.loc[("x", "x")].tolist() == [1.0, 1.0]  # the exact diagonal is 1
    # every released entry lies in its own interval's public range
    assert iv.loc[("x", "y"), "lower"] == iv.loc[("y", "x"), "lower"]


def test_higham_keeps_released_variances(df: pd.DataFrame) -> None:
    kw = {"epsilon": 0.5, "bounds": B, "method": "direct", "neighbouring": "substitute"}
    a = df.dp.cov(**kw, psd="higham", random_state=4)
    b = df.dp.cov(**kw, psd="clip", random_state=4)
    # the same noise; Higham leaves the variances alone, clipping may raise them
    assert (np.diag(a.to_numpy()) <= np.diag(b.to_numpy()) + 1e-12).all()


def test_direct_metadata_is_matrix_shaped(df: pd.DataFrame) -> None:
    c = df.dp.cov(
        epsilon=0.6,
        bounds={"x": B, "y": (0, 2), "z": B},
        method="direct",
        neighbouring="substitute",
        random_state=0,
    )
    meta = c.attrs["dp"]
    assert isinstance(meta.sensitivity, pd.DataFrame) and meta.sensitivity.shape == (3, 3)
    n = len(df)
    assert meta.sensitivity.loc["x", "x"] == pytest.approx(4 / n)
    assert meta.sensitivity.loc["x", "y"] == pytest.approx(2 * 2 / n)
    split = meta.details["budget_split"]
    assert len(split) == 6 and sum(split.values()) == pytest.approx(0.6)


def test_moments_metadata_lists_the_moments(df: pd.DataFrame) -> None:
    """Default (add/remove): a complete-row count, 3 centred sums, 6 products; the
    accumulation step is included in each sensitivity (tiny, below 1e-6 here)."""
    meta = df.dp.cov(epsilon=1.0, bounds=B, random_state=0).attrs["dp"]
    assert meta.neighbouring == "add_remove" and meta.n is None
    sens = meta.sensitivity
    assert sens["[x, y, z]: count"] == 1.0
    assert sens["[x, y, z]: centred_sum x"] == pytest.approx(1.0, abs=1e-6)  # R / 2
    assert sens["[x, y, z]: cross_products x*y"] == pytest.approx(1.0, abs=1e-6)  # R1 R2 / 4
    assert sens["[x, y, z]: centred_squares x*x"] == pytest.approx(1.0, abs=1e-6)  # R^2 / 4
    assert len(sens) == 1 + 3 + 6
    split = meta.details["budget_split"]
    assert set(split) == set(sens.index) and sum(split.values()) == pytest.approx(1.0)
    # under substitute the centred sums cost R and the products R1 R2 / 2
    sub = df.dp.cov(epsilon=1.0, bounds=B, neighbouring="substitute", random_state=0)
    s2 = sub.attrs["dp"].sensitivity
    assert s2["[x, y, z]: centred_sum x"] == pytest.approx(2.0, abs=1e-6)
    assert s2["[x, y, z]: cross_products x*y"] == pytest.approx(2.0, abs=1e-6)


def coverage_floor(releases: int, nominal: float, alpha: float) -> int:
    """The fewest hits a one-sided binomial test accepts at false-alarm rate ``alpha``:
    ``P(Binomial(releases, nominal) < floor) <= alpha``."""
    return int(stats.binom.ppf(alpha, releases, nominal))


COVERAGE_FRAMES = {
    # 60 rows in the middle of [0, 1]; 2000 correlated rows (informative intervals:
    # the corr interval is about 0.18 wide at epsilon = 1); 12 rows piled near the
    # top bound (the count's and the clamp's bias matter most); 3 columns with
    # missing values
    "large": lambda rng: pd.DataFrame(
        np.clip(0.5 + 0.2 * (rng.normal(size=(2000, 2)) @ [[1, 0.6], [0, 0.8]]), 0, 1),
        columns=["a", "b"],
    ),
    "middle": lambda rng: pd.DataFrame(
        np.clip(rng.normal(0.5, 0.2, (60, 2)), 0, 1), columns=["a", "b"]
    ),
    "top": lambda rng: pd.DataFrame(
        np.clip(rng.normal(0.9, 0.1, (12, 2)), 0, 1), columns=["a", "b"]
    ),
    "missing": lambda rng: pd.DataFrame(
        np.where(rng.random((40, 3)) < 0.2, np.nan, rng.random((40, 3))), columns=["a", "b", "c"]
    ),
}


#: The coverage tests release hundreds of times per case: the middle frame runs by
#: default, the others with `pytest -m slow`.
FRAMES_MIDDLE_DEFAULT = [
    name if name == "middle" else pytest.param(name, marks=pytest.mark.slow)
    for name in sorted(COVERAGE_FRAMES)
]


@pytest.mark.parametrize("frame_name", FRAMES_MIDDLE_DEFAULT)
@pytest.mark.parametrize(
    ("method", "neighbouring"),
    [("moments", "add_remove"), pytest.param("direct", "substitute", marks=pytest.mark.slow)],
)
def test_cov_interval_coverage(frame_name: str, method: str, neighbouring: str) -> None:
    """Every entry's 90 % interval covers the exact covariance in >= 90 % of releases.

    The exact target is pandas' covariance of the complete rows (listwise deletion
    for the moments; the direct method counts a missing value as the midpoint, so it
    gets only the frames without missing values). 800 releases per entry; each
    entry is checked by a one-sided binomial test of coverage >= 0.90 at false-alarm
    rate 1e-4 / entries (Bonferroni: 1e-4 per test).
    """
    if method == "direct" and frame_name == "missing":
        pytest.skip("the direct method imputes the midpoint: its exact target differs")
    rng = np.random.default_rng(5)
    frame = COVERAGE_FRAMES[frame_name](rng)
    exact = frame.dropna().cov().to_numpy().ravel()
    releases = 800
    hits = np.zeros(exact.size)
    widths = []
    for seed in range(releases):
        iv = (
            frame.dp.cov(
                epsilon=1.0,
                bounds=(0, 1),
                method=method,
                neighbouring=neighbouring,
                random_state=seed,
            )
            .attrs["dp"]
            .interval(0.1)
        )
        lo, hi = iv["lower"].to_numpy(), iv["upper"].to_numpy()
        assert np.isfinite(lo).all() and np.isfinite(hi).all()
        hits += (lo <= exact) & (exact <= hi)
        widths.append(hi - lo)
    if frame_name == "large":  # not vacuous: much narrower than the variances
        assert (np.mean(widths, axis=0) < 0.5 * np.abs(exact).max()).all()
    floor = coverage_floor(releases, 0.9, 1e-4 / exact.size)
    assert (hits >= floor).all(), (hits / releases, floor / releases)


@pytest.mark.parametrize("frame_name", FRAMES_MIDDLE_DEFAULT)
def test_corr_interval_coverage(frame_name: str) -> None:
    """corr (moments, add_remove): each off-diagonal 90 % interval covers the exact
    correlation of the complete rows in >= 90 % of 800 releases (one-sided binomial
    test, false-alarm rate 1e-4 over the entries, Bonferroni); the diagonal is
    exactly [1, 1]."""
    rng = np.random.default_rng(6)
    frame = COVERAGE_FRAMES[frame_name](rng)
    exact = frame.dropna().corr().to_numpy().ravel()
    p = frame.shape[1]
    off = ~np.eye(p, dtype=bool).ravel()
    releases = 800
    hits = np.zeros(exact.size)
    widths = []
    for seed in range(releases):
        iv = frame.dp.corr(epsilon=1.0, bounds=(0, 1), random_state=seed).attrs["dp"].interval(0.1)
        lo, hi = iv["lower"].to_numpy(), iv["upper"].to_numpy()
        assert (lo[~off] == 1.0).all() and (hi[~off] == 1.0).all()
        hits += (lo <= exact) & (exact <= hi)
        widths.append(hi[off] - lo[off])
    floor = coverage_floor(releases, 0.9, 1e-4 / off.sum())
    assert (hits[off] >= floor).all(), (hits / releases, floor / releases)
    # not vacuous: on the 2000-row frame the intervals are far narrower than [-1, 1]
    if frame_name == "large":
        assert np.mean(widths) < 0.5


def test_cov_errors(df: pd.DataFrame) -> None:
    """Argument errors, all before the charge (the budget stays untouched)."""
    budget = PrivacyBudget(1.0)
    with pytest.raises(ValueError, match="method"):
        df.dp.cov(epsilon=1.0, bounds=B, method="pearson", budget=budget)
    with pytest.raises(ValueError, match="psd"):
        df.dp.cov(epsilon=1.0, bounds=B, psd="nearest", budget=budget)
    with pytest.raises(ValueError, match="substitute"):
        df.dp.cov(epsilon=1.0, bounds=B, method="direct", budget=budget)
    with pytest.raises(ValueError, match="at least 2"):  # n is public under substitute
        df.head(1).dp.cov(
            epsilon=1.0, bounds=B, method="direct", neighbouring="substitute", budget=budget
        )
    with pytest.raises(pandas_dp.MissingBoundsError):
        df.dp.cov(epsilon=1.0, budget=budget)
    assert budget.spent == (0.0, 0.0)


def test_cov_length_is_private_under_add_remove(df: pd.DataFrame) -> None:
    """add_remove: a nullable declaration and a one-row frame are not errors (refusing
    them would reveal the length); missing values are skipped by listwise deletion."""
    schema = pa.DataFrameSchema({"x": pa.Column(float, pa.Check.in_range(-1, 1), nullable=True)})
    c = df.dp.cov(["x", "y"], epsilon=1.0, schema=schema, bounds={"y": B}, random_state=0)
    assert c.shape == (2, 2) and c.attrs["dp"].n is None
    one = df.head(1).dp.cov(epsilon=1.0, bounds=B, random_state=0)
    assert one.shape == (3, 3) and np.isfinite(one.to_numpy()).all()


WIDE = [(-1e200, 1e200), (-1e154, 1e154), (-1e150, 1e150), (0.0, 1e300)]


@pytest.mark.parametrize("bounds", WIDE)
@pytest.mark.parametrize(
    ("method", "neighbouring"), [("moments", "add_remove"), ("direct", "substitute")]
)
@pytest.mark.parametrize("corr", [False, True])
@pytest.mark.parametrize("epsilon", [1.0, 1e-3])
def test_cov_too_wide_bounds_raise_before_the_charge(
    df: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
    bounds: tuple[float, float],
    method: str,
    neighbouring: str,
    corr: bool,
    epsilon: float,
) -> None:
    """Bounds whose squared widths overflow, or leave no headroom below the largest
    float, are refused with InvalidBoundsError (a ValueError) before the charge and
    before any data is read."""

    def no_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the data were read")

    monkeypatch.setattr(pandas_dp.engines, "products", no_read)
    monkeypatch.setattr(pandas_dp.engines.in_memory.PandasEngine, "products", staticmethod(no_read))
    budget = PrivacyBudget(10.0)
    release = df.dp.corr if corr else df.dp.cov
    with pytest.raises(pandas_dp.InvalidBoundsError, match="too wide"):
        release(
            epsilon=epsilon,
            bounds=bounds,
            method=method,
            neighbouring=neighbouring,
            budget=budget,
            random_state=0,
        )
    assert budget.spent == (0.0, 0.0)


@pytest.mark.parametrize("bounds", [(-1e140, 1e140), (-1e100, 1e100), (0.0, 1e50)])
@pytest.mark.parametrize(
    ("method", "neighbouring"), [("moments", "add_remove"), ("direct", "substitute")]
)
@pytest.mark.parametrize("bounding", ["bit", "truncated", "none"])
def test_cov_wide_bounds_stay_finite(
    df: pd.DataFrame, bounds: tuple[float, float], method: str, neighbouring: str, bounding: str
) -> None:
    """Wide but accepted bounds: the matrix and its interval are finite, no float
    overflow happens anywhere (warnings are errors here), and the release agrees with
    the same data rescaled to [-1, 1] (the scale is exact powers of ten apart)."""
    scale = bounds[1] if bounds[0] < 0 else bounds[1] / 2
    shift = 0.0 if bounds[0] < 0 else scale
    wide = df * scale + shift
    for seed in range(5):
        for epsilon in (1.0, 1e-3):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                for corr in (False, True):
                    release = wide.dp.corr if corr else wide.dp.cov
                    out = release(
                        epsilon=epsilon,
                        bounds=bounds,
                        method=method,
                        neighbouring=neighbouring,
                        bounding=bounding,
                        random_state=seed,
                    )
                    iv = out.attrs["dp"].interval(0.05)
                    assert np.isfinite(out.to_numpy()).all()
                    assert np.isfinite(iv.to_numpy()).all()
                    assert (iv["lower"] <= iv["upper"]).all()
    # sanity: the release is meaningful, not a saturated placeholder
    big = wide.dp.cov(
        epsilon=1e6, bounds=bounds, method=method, neighbouring=neighbouring, random_state=0
    )
    np.testing.assert_allclose(
        big.to_numpy() / scale**2, df.cov().to_numpy(), atol=1e-3 * max(1, 4 * (bounds[0] >= 0))
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=hnp.arrays(
        np.float64,
        st.tuples(st.integers(3, 25), st.integers(1, 4)),
        elements=st.floats(allow_nan=True, allow_infinity=True),
    ),
    epsilon=st.floats(1e-3, 1e3),
    method=st.sampled_from(["moments", "direct"]),
    bounding=st.sampled_from(["bit", "truncated", "none"]),
    seed=st.integers(0, 2**31),
)
def test_cov_never_crashes_and_is_psd(
    data: np.ndarray, epsilon: float, method: str, bounding: str, seed: int
) -> None:
    frame = pd.DataFrame(data, columns=[f"c{i}" for i in range(data.shape[1])])
    rel = relation(method)
    c = frame.dp.cov(
        epsilon=epsilon,
        bounds=(-5, 5),
        method=method,
        bounding=bounding,
        neighbouring=rel,
        random_state=seed,
    )
    m = c.to_numpy()
    assert np.isfinite(m).all() and np.linalg.eigvalsh(m).min() >= -1e-8 * max(1, abs(m).max())
    r = frame.dp.corr(
        epsilon=epsilon, bounds=(-5, 5), method=method, neighbouring=rel, random_state=seed
    )
    assert (np.abs(r.to_numpy()) <= 1 + 1e-12).all()
    iv = r.attrs["dp"].interval(0.05)
    assert np.isfinite(iv.to_numpy()).all() and math.isfinite(float(iv["lower"].min()))


def test_budget_split_follows_the_measured_cov_weights() -> None:
    """The moments plan splits epsilon by ``MOMENT_WEIGHTS['cov']`` (one weight per
    entry), as the metadata reports it (the epsilon of each, adding up to the whole)."""
    from pandas_dp.stats.numeric import MOMENT_WEIGHTS

    frame = pd.DataFrame(np.random.default_rng(0).uniform(-1, 1, (200, 3)), columns=list("abc"))
    split = (
        frame.dp.cov(epsilon=2.0, bounds=(-1, 1), random_state=0)
        .attrs["dp"]
        .details["budget_split"]
    )
    w = MOMENT_WEIGHTS["cov"]
    total = w["count"] + 3 * w["centred_sum"] + 3 * w["centred_squares"] + 3 * w["cross_products"]
    for name, share in split.items():
        stat = name.split(": ")[1].split(" ")[0]
        assert share == pytest.approx(2.0 * w[stat] / total), name
    assert sum(split.values()) == pytest.approx(2.0)


@pytest.mark.parametrize("k", [1, 2])
@pytest.mark.parametrize("release", ["cov", "corr"])
def test_direct_refuses_a_privacy_unit_before_the_charge(release: str, k: int) -> None:
    """Liu's direct covariance sums every row: it cannot keep k rows of a unit (one
    person with 40 rows moved var(x) from 20 to 24 at a per-row sensitivity)."""
    frame = pd.DataFrame({"pid": np.repeat(np.arange(50), 4), "x": np.arange(200.0) % 10})
    frame["y"] = frame["x"] / 2
    budget = pandas_dp.PrivacyBudget(5.0)
    with pytest.raises(ValueError, match="method='moments'"):
        getattr(frame.dp, release)(
            ["x", "y"],
            epsilon=1.0,
            bounds=(0, 10),
            method="direct",
            neighbouring="substitute",
            privacy_unit="pid",
            max_rows_per_unit=k,
            budget=budget,
        )
    assert budget.spent == (0.0, 0.0)
