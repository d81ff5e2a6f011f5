"""cov and corr: shape, PSD, accuracy, metadata, intervals, errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import pandas_dp

B = (-1.0, 1.0)


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
    iv = meta.interval(0.05)
    assert len(iv) == 9 and (iv["lower"] <= iv["upper"]).all()


@pytest.mark.parametrize("method", ["moments", "direct"])
def test_cov_matches_pandas_with_large_epsilon(df: pd.DataFrame, method: str) -> None:
    c = df.dp.cov(epsilon=1e6, bounds=B, method=method, random_state=0)
    np.testing.assert_allclose(c.to_numpy(), df.cov().to_numpy(), atol=1e-3)
    c0 = df.dp.cov(ddof=0, epsilon=1e6, bounds=B, method=method, random_state=0)
    np.testing.assert_allclose(c0.to_numpy(), df.cov(ddof=0).to_numpy(), atol=1e-3)
    r = df.dp.corr(epsilon=1e6, bounds=B, method=method, random_state=0)
    np.testing.assert_allclose(r.to_numpy(), df.corr().to_numpy(), atol=1e-2)


def test_corr_has_unit_diagonal(df: pd.DataFrame) -> None:
    r = df.dp.corr(["x", "y"], epsilon=0.05, bounds=B, random_state=3)
    assert np.diag(r.to_numpy()).tolist() == [1.0, 1.0]
    assert (r.abs() <= 1).all().all()
    assert r.attrs["dp"].statistic == "corr"
    with pytest.raises(NotImplementedError):
        r.attrs["dp"].interval()


def test_higham_keeps_released_variances(df: pd.DataFrame) -> None:
    a = df.dp.cov(epsilon=0.5, bounds=B, method="direct", psd="higham", random_state=4)
    b = df.dp.cov(epsilon=0.5, bounds=B, method="direct", psd="clip", random_state=4)
    # the same noise; Higham leaves the variances alone, clipping may raise them
    assert (np.diag(a.to_numpy()) <= np.diag(b.to_numpy()) + 1e-12).all()


def test_direct_metadata_is_matrix_shaped(df: pd.DataFrame) -> None:
    c = df.dp.cov(
        epsilon=0.6, bounds={"x": B, "y": (0, 2), "z": B}, method="direct", random_state=0
    )
    meta = c.attrs["dp"]
    assert isinstance(meta.sensitivity, pd.DataFrame) and meta.sensitivity.shape == (3, 3)
    n = len(df)
    assert meta.sensitivity.loc["x", "x"] == pytest.approx(4 / n)
    assert meta.sensitivity.loc["x", "y"] == pytest.approx(2 * 2 / n)
    split = meta.details["budget_split"]
    assert len(split) == 6 and sum(split.values()) == pytest.approx(0.6)


def test_moments_metadata_lists_the_moments(df: pd.DataFrame) -> None:
    meta = df.dp.cov(epsilon=1.0, bounds=B, neighbouring="add_remove", random_state=0).attrs["dp"]
    sens = meta.sensitivity
    assert sens["sum(x)"] == pytest.approx(1.0)  # R / 2 under add/remove
    assert sens["sum(x*y)"] == pytest.approx(1.0)  # R1 R2 / 4
    assert sens["sum(x*x)"] == pytest.approx(1.0)  # R^2 / 4
    assert len(sens) == 3 + 6


@pytest.mark.parametrize("method", ["moments", "direct"])
def test_cov_interval_coverage(method: str) -> None:
    """Every entry's 90 % interval covers the exact covariance >= 90 % of the time.

    600 releases per entry; a one-sided binomial test at false-alarm rate 1e-4
    (per entry) allows down to about 85 %.
    """
    rng = np.random.default_rng(5)
    frame = pd.DataFrame(np.clip(rng.normal(0.5, 0.3, (60, 2)), 0, 1), columns=["a", "b"])
    exact = frame.cov().to_numpy().ravel()
    hits = np.zeros(4)
    for seed in range(600):
        iv = (
            frame.dp.cov(epsilon=1.0, bounds=(0, 1), method=method, random_state=seed)
            .attrs["dp"]
            .interval(0.1)
        )
        hits += (iv["lower"].to_numpy() <= exact) & (exact <= iv["upper"].to_numpy())
    assert (hits / 600 >= 0.85).all(), hits / 600


def test_cov_errors(df: pd.DataFrame) -> None:
    with pytest.raises(ValueError, match="method"):
        df.dp.cov(epsilon=1.0, bounds=B, method="pearson")
    with pytest.raises(ValueError, match="psd"):
        df.dp.cov(epsilon=1.0, bounds=B, psd="nearest")
    schema = pa.DataFrameSchema({"x": pa.Column(float, pa.Check.in_range(-1, 1), nullable=True)})
    with pytest.raises(ValueError, match="nullable"):
        df.dp.cov(["x", "y"], epsilon=1.0, schema=schema, bounds={"y": B})
    with pytest.raises(ValueError, match="at least 2"):
        df.head(1).dp.cov(epsilon=1.0, bounds=B)
    with pytest.raises(pandas_dp.MissingBoundsError):
        df.dp.cov(epsilon=1.0)


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
    c = frame.dp.cov(
        epsilon=epsilon, bounds=(-5, 5), method=method, bounding=bounding, random_state=seed
    )
    m = c.to_numpy()
    assert np.isfinite(m).all() and np.linalg.eigvalsh(m).min() >= -1e-8 * max(1, abs(m).max())
    r = frame.dp.corr(epsilon=epsilon, bounds=(-5, 5), method=method, random_state=seed)
    assert (np.abs(r.to_numpy()) <= 1 + 1e-12).all()
