"""Coverage of the confidence intervals in the release metadata (REFERENCE.md §7).

Every test repeats one release many times through the accessor (``random_state``
seeds ``seed0, seed0 + 1, ...``) and counts how often
``result.attrs["dp"].interval(0.05)`` contains the exact statistic -- computed by
pandas on the data clipped to the declared bounds, missing values skipped as pandas
does (the default, ``neighbouring="add_remove"``: noisy sufficient statistics). Liu's
direct releases (``neighbouring="substitute"``, ``method="direct"``, a public ``n``)
count a missing value as the midpoint of the bounds, so their exact statistic does
too.

A valid 95% interval covers at least 95% of the time. Each test applies a one-sided
exact binomial test: it fails when ``P(Binomial(reps, 0.95) <= covered) < 1e-4``,
so the false-alarm rate of each test is at most 1e-4 (the intervals are meant to
be conservative; a correct one covers with probability >= 0.95).

The noise is large relative to the range (n between 3 and 60) and the data sit near
a bound (where BIT and truncation act) or in the middle of the range.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
from scipy import stats

import pandas_dp  # noqa: F401  (registers the accessor)

ALPHA = 1e-4
LEVEL = 0.05
REPS = 1000  # default; 500 for the slow truncated calls, more where a test needs power
BOUNDS = (0.0, 1.0)
MID = 0.5

LAPLACE_MODES = [("laplace", "none"), ("laplace", "bit"), ("laplace", "truncated")]
GAUSSIAN_MODES = [("gaussian", "none"), ("gaussian", "bit")]
MODES = LAPLACE_MODES + GAUSSIAN_MODES


def mode_id(mode: tuple[str, str]) -> str:
    return f"{mode[0]}-{mode[1]}"


#: The default run checks coverage in the library's default mode; every other mode
#: (each case is hundreds of releases) runs with `pytest -m slow`.
DEFAULT_MODE = ("laplace", "bit")


def default_mode_only(cases: list, mode_at: int | None = None) -> list:
    """``cases`` with every case whose mode is not :data:`DEFAULT_MODE` marked slow.

    ``mode_at`` is the mode's position in a case of several values (``None``: each
    case is a mode).
    """
    param_set = type(pytest.param(None))  # what pytest.param returns
    out = []
    for case in cases:
        values = case.values if isinstance(case, param_set) else (case,)
        mode = values[0] if mode_at is None else values[mode_at]
        if mode == DEFAULT_MODE:
            out.append(case)
        elif isinstance(case, param_set):
            out.append(pytest.param(*values, id=case.id, marks=[*case.marks, pytest.mark.slow]))
        else:
            out.append(pytest.param(case, marks=pytest.mark.slow))
    return out


def reps_for(mode: tuple[str, str]) -> int:
    """Truncated releases re-calibrate their scale on every call (slow): fewer reps."""
    return REPS // 2 if mode[1] == "truncated" else REPS


def dp_kwargs(mode: tuple[str, str], epsilon: float = 1.0) -> dict:
    mechanism, bounding = mode
    delta = 1e-6 if mechanism == "gaussian" else 0.0
    return {"epsilon": epsilon, "mechanism": mechanism, "bounding": bounding, "delta": delta}


def coverage(release, exact, reps: int, seed0: int, simultaneous: bool = False) -> np.ndarray:
    """Release ``reps`` times; count, per entry, how often the 95% interval covers.

    ``exact`` is a float for a scalar release, or a Series (indexed like the result)
    for a vector release; then each entry's marginal interval is checked, or with
    ``simultaneous`` the joint box, counted once per release.
    """
    vector = isinstance(exact, pd.Series)
    covered = np.zeros(len(exact) if vector and not simultaneous else 1, dtype=np.int64)
    for i in range(reps):
        meta = release(seed0 + i).attrs["dp"]
        if vector:
            box = meta.interval(LEVEL, simultaneous=simultaneous).loc[exact.index]
            tol = 1e-9 * (1 + exact.abs())
            ok = ((box["lower"] - tol <= exact) & (exact <= box["upper"] + tol)).to_numpy()
            covered += ok.all() if simultaneous else ok
        else:
            lo, hi = meta.interval(LEVEL)
            tol = 1e-9 * (1 + abs(exact))
            covered += lo - tol <= exact <= hi + tol
    return covered


def assert_covers(release, exact, reps: int = REPS, seed0: int = 0, simultaneous=False):
    """Coverage of every checked entry passes the one-sided binomial test.

    With ``k`` marginal checks per release the level of each is ``1e-4 / k``
    (Bonferroni), so the false-alarm rate of the whole test stays at 1e-4.
    """
    covered = coverage(release, exact, reps, seed0, simultaneous)
    p = stats.binom.cdf(covered, reps, 1 - LEVEL)
    labels = list(exact.index) if isinstance(exact, pd.Series) and not simultaneous else ["all"]
    bad = [
        f"{label}: covered {c} of {reps} ({c / reps:.2%}), P(<= that | 95%) = {pv:.2g}"
        for label, c, pv in zip(labels, covered, p, strict=True)
        if pv < ALPHA / covered.size
    ]
    assert not bad, "the 95% interval under-covers the exact value -- " + "; ".join(bad)
    return covered / reps


# ----------------------------------------------------------------------------- data


def near_bound(n: int = 40, seed: int = 1) -> pd.Series:
    """Mostly at the lower bound, a few small values, out-of-range values, one NaN."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.75, 0.0, rng.beta(0.5, 8.0, n))
    x[:3] = [-0.4, 1.6, np.nan]  # clipped to 0 and 1; NaN skipped (direct: the midpoint)
    return pd.Series(x)


def centred(n: int = 40, seed: int = 2) -> pd.Series:
    return pd.Series(np.random.default_rng(seed).uniform(0.3, 0.7, n))


def prepared(x: pd.Series, direct: bool = False) -> pd.Series:
    """The values the exact statistic is computed from: clipped, missing ones skipped
    (``direct``: Liu's releases over the public ``n`` rows, a missing one at the midpoint)."""
    clipped = x.clip(*BOUNDS)
    return clipped.fillna(MID) if direct else clipped.dropna()


EXACT = {
    "mean": lambda x, direct=False: prepared(x, direct).mean(),
    "sum": lambda x, direct=False: prepared(x, direct).sum(),
    "var": lambda x, direct=False: prepared(x, direct).var(ddof=1),
    "std": lambda x, direct=False: prepared(x, direct).std(ddof=1),
}
DIRECT = {"neighbouring": "substitute", "method": "direct"}


# ----------------------------------------------------------------------------- moments


@pytest.mark.parametrize("mode", default_mode_only(MODES), ids=mode_id)
@pytest.mark.parametrize("statistic", ["mean", "var", "std", "sum"])
def test_moment_interval_coverage_near_bound(statistic, mode):
    """mean / var / std / sum of a column mostly at its lower bound (n = 40), where
    BIT and truncation act: coverage >= 95% (alpha 1e-4)."""
    x = near_bound()
    df = pd.DataFrame({"x": x})
    exact = float(EXACT[statistic](x))
    assert exact != float(EXACT[statistic](x, direct=True))  # the NaN matters
    kwargs = dp_kwargs(mode)

    def release(seed):
        return getattr(df.dp, statistic)("x", bounds=BOUNDS, random_state=seed, **kwargs)

    assert_covers(release, exact, reps=reps_for(mode), seed0=1000)


@pytest.mark.parametrize("mode", default_mode_only(MODES), ids=mode_id)
@pytest.mark.parametrize("statistic", ["mean", "var", "std"])
def test_direct_interval_coverage_near_bound(statistic, mode):
    """Liu's direct mean / var / std (substitute, n = 40 public) of a column mostly at
    its lower bound, the NaN at the midpoint: coverage >= 95% (alpha 1e-4)."""
    x = near_bound()
    df = pd.DataFrame({"x": x})
    exact = float(EXACT[statistic](x, direct=True))
    kwargs = dp_kwargs(mode)

    def release(seed):
        return getattr(df.dp, statistic)("x", bounds=BOUNDS, random_state=seed, **DIRECT, **kwargs)

    assert release(0).attrs["dp"].details["method"] == "direct"
    assert_covers(release, exact, reps=reps_for(mode) // 2, seed0=1200)


@pytest.mark.parametrize("mode", default_mode_only(MODES), ids=mode_id)
@pytest.mark.parametrize("statistic", ["mean", "var"])
def test_moment_interval_coverage_centred(statistic, mode):
    """Data in the middle of the range (n = 40): coverage >= 95% (alpha 1e-4)."""
    x = centred()
    df = pd.DataFrame({"x": x})
    exact = float(EXACT[statistic](x))
    kwargs = dp_kwargs(mode)

    def release(seed):
        return getattr(df.dp, statistic)("x", bounds=BOUNDS, random_state=seed, **kwargs)

    assert_covers(release, exact, reps=reps_for(mode) // 2, seed0=1500)


@pytest.mark.parametrize("mode", default_mode_only(LAPLACE_MODES), ids=mode_id)
def test_mean_tiny_frame_coverage(mode):
    """n = 3 on [0, 1], all at the bound: the noise is wider than the range."""
    df = pd.DataFrame({"x": [0.0, 0.0, 0.0]})

    def release(seed):
        return df.dp.mean("x", bounds=BOUNDS, random_state=seed, **dp_kwargs(mode))

    assert_covers(release, 0.0, reps=reps_for(mode), seed0=5000)


def test_var_add_remove_coverage():
    """Variance under add/remove (noisy count, centred sum and centred squares; the
    count's one-sided range [0, inf) truncated), n = 30."""
    x = near_bound(30, seed=4)
    df = pd.DataFrame({"x": x})

    def release(seed):
        return df.dp.var(
            "x",
            bounds=BOUNDS,
            neighbouring="add_remove",
            random_state=seed,
            **dp_kwargs(("laplace", "truncated")),
        )

    assert_covers(release, float(EXACT["var"](x)), reps=500, seed0=6000)


def test_var_direct_truncated_coverage():
    """Liu's direct variance (sensitivity R²/n, n = 30 public), truncated."""
    x = near_bound(30, seed=4)
    df = pd.DataFrame({"x": x})

    def release(seed):
        return df.dp.var(
            "x", bounds=BOUNDS, random_state=seed, **DIRECT, **dp_kwargs(("laplace", "truncated"))
        )

    assert_covers(release, float(EXACT["var"](x, direct=True)), reps=500, seed0=6500)


# ----------------------------------------------------------------------------- nullable


NULLABLE = pa.DataFrameSchema({"x": pa.Column(float, pa.Check.in_range(*BOUNDS), nullable=True)})


def nullable_data(kind: str, n: int = 60, seed: int = 3) -> pd.Series:
    rng = np.random.default_rng(seed)
    x = near_bound(n, seed) if kind == "near_bound" else centred(n, seed)
    x = x.copy()
    x[rng.random(n) < 0.3] = np.nan
    return x


NULLABLE_EXACT = {
    "mean": lambda x: x.clip(*BOUNDS).mean(),
    "sum": lambda x: x.clip(*BOUNDS).sum(),
    "var": lambda x: x.clip(*BOUNDS).var(ddof=1),
    "std": lambda x: x.clip(*BOUNDS).std(ddof=1),
}

NULLABLE_CASES = [
    *[
        pytest.param(s, m, "near_bound", id=f"{s}-{mode_id(m)}-near")
        for s in ("mean", "var")
        for m in MODES
    ],
    *[
        pytest.param(s, ("laplace", "bit"), "centred", id=f"{s}-laplace-bit-centred")
        for s in ("mean", "var")
    ],
    pytest.param("std", ("laplace", "truncated"), "near_bound", id="std-laplace-truncated-near"),
    pytest.param("sum", ("laplace", "bit"), "near_bound", id="sum-laplace-bit-near"),
]


@pytest.mark.parametrize(("statistic", "mode", "data"), default_mode_only(NULLABLE_CASES, 1))
def test_nullable_interval_coverage(statistic, mode, data):
    """A nullable column declared by a pandera schema: missing values are skipped, the
    non-null count is private (noisy-count ratio, box interval). alpha = 1e-4."""
    x = nullable_data(data)
    df = pd.DataFrame({"x": x})
    exact = float(NULLABLE_EXACT[statistic](x))
    assert math.isfinite(exact)
    kwargs = dp_kwargs(mode)

    def release(seed):
        return getattr(df.dp, statistic)("x", schema=NULLABLE, random_state=seed, **kwargs)

    if statistic != "sum":  # the noisy count is released, or the bound sums that hold it
        names = [str(k) for k in release(0).attrs["dp"].sensitivity.index]
        assert any("count" in k or "bound_sums" in k for k in names), names
    assert_covers(release, exact, reps=500, seed0=2000)


# ----------------------------------------------------------------------------- counts


def count_frame(n: int = 40) -> pd.DataFrame:
    """Column 'full' has n - 1 non-null values (near the top of [0, n]), 'sparse' has 1
    (near the bottom), 'half' has n / 2 (far from both ends)."""
    full = np.ones(n)
    full[0] = np.nan
    sparse = np.full(n, np.nan)
    sparse[0] = 1.0
    half = np.where(np.arange(n) % 2 == 0, 1.0, np.nan)
    return pd.DataFrame({"full": full, "sparse": sparse, "half": half})


COUNT_CASES = [
    # (mode, epsilon of the three-column release, reps). The budget is shared by the
    # three columns, so the per-entry discrete Laplace scale is t = 3 / epsilon;
    # epsilon = 4.5 gives t = 2/3, where the Laplace half-width t ln 20 = 1.997 sits
    # just below an integer and the discrete tail is heaviest compared with the
    # continuous one (the t = 1 case, a count at the default epsilon = 1, is tested
    # with more repetitions through len below).
    pytest.param(("laplace", "none"), 4.5, 2000, id="laplace-none-t2/3"),
    pytest.param(("laplace", "bit"), 4.5, 1000, id="laplace-bit-t2/3"),
    pytest.param(("laplace", "truncated"), 3.0, 500, id="laplace-truncated"),
    pytest.param(("gaussian", "none"), 3.0, 1000, id="gaussian-none"),
    pytest.param(("gaussian", "bit"), 3.0, 1000, id="gaussian-bit"),
]


@pytest.mark.parametrize(("mode", "epsilon", "reps"), default_mode_only(COUNT_CASES, 0))
def test_count_interval_coverage(mode, epsilon, reps):
    """df.dp.count() of three columns (integer release, discrete noise): each column's
    marginal interval covers its non-null count. alpha = 1e-4 (Bonferroni over the
    three columns)."""
    df = count_frame()
    exact = df.count().astype(float)
    kwargs = dp_kwargs(mode, epsilon)

    def release(seed):
        return df.dp.count(random_state=seed, **kwargs)

    assert_covers(release, exact, reps=reps, seed0=3000)


LEN_CASES = [
    # (mode, epsilon, n, reps): the noisy row count is cheap, so the cases that need
    # power (t = 1 at the default epsilon = 1: exact coverage 92.7% if the Laplace
    # half-width is used for the discrete Laplace) get 4000 repetitions
    pytest.param(("laplace", "none"), 1.0, 40, 4000, id="laplace-none-t1"),
    pytest.param(("laplace", "none"), 1.5, 40, 4000, id="laplace-none-t2/3"),
    pytest.param(("laplace", "bit"), 1.0, 40, 4000, id="laplace-bit-t1"),
    pytest.param(("laplace", "bit"), 1.0, 3, 1000, id="laplace-bit-t1-n3"),
    pytest.param(("laplace", "truncated"), 1.0, 3, 500, id="laplace-truncated-n3"),
    pytest.param(("laplace", "truncated"), 1.0, 40, 500, id="laplace-truncated"),
    pytest.param(("gaussian", "none"), 1.0, 40, 1000, id="gaussian-none"),
    pytest.param(("gaussian", "bit"), 1.0, 3, 1000, id="gaussian-bit-n3"),
]


@pytest.mark.parametrize(("mode", "epsilon", "n", "reps"), default_mode_only(LEN_CASES, 0))
def test_len_interval_coverage(mode, epsilon, n, reps):
    """df.dp.len(): the noisy number of rows (n = 3 sits near the bound 0). alpha 1e-4."""
    df = pd.DataFrame({"x": np.arange(n, dtype=float)})
    kwargs = dp_kwargs(mode, epsilon)

    def release(seed):
        return df.dp.len(random_state=seed, **kwargs)

    assert_covers(release, n, reps=reps, seed0=4000)


@pytest.mark.slow
def test_count_add_remove_coverage():
    """Counts under add/remove have the one-sided range [0, inf) (truncated). alpha 1e-4."""
    df = count_frame()
    exact = df.count().astype(float)

    def release(seed):
        return df.dp.count(
            random_state=seed, neighbouring="add_remove", **dp_kwargs(("laplace", "truncated"))
        )

    assert_covers(release, exact, reps=500, seed0=4500)


# ----------------------------------------------------------------------------- simultaneous


def three_columns(n: int = 40) -> pd.DataFrame:
    return pd.DataFrame({"a": near_bound(n, 7), "b": centred(n, 8), "c": 1.0 - near_bound(n, 9)})


@pytest.mark.parametrize(
    "mode",
    [
        pytest.param(("laplace", "bit"), marks=pytest.mark.slow),
        pytest.param(("laplace", "truncated"), marks=pytest.mark.slow),
        pytest.param(("gaussian", "bit"), marks=pytest.mark.slow),
    ],
    ids=mode_id,
)
def test_simultaneous_mean_intervals(mode):
    """A three-column mean: the simultaneous 95% box covers all entries jointly."""
    df = three_columns()
    exact = df.clip(*BOUNDS).mean()  # skipna, like pandas

    def release(seed):
        return df.dp.mean(["a", "b", "c"], bounds=BOUNDS, random_state=seed, **dp_kwargs(mode))

    meta = release(0).attrs["dp"]
    box = meta.interval(LEVEL, simultaneous=True)
    assert list(box.index) == ["a", "b", "c"] and list(box.columns) == ["lower", "upper"]
    marginal = meta.interval(LEVEL)
    assert (box["upper"] - box["lower"] >= marginal["upper"] - marginal["lower"] - 1e-12).all()
    assert_covers(release, exact, reps=500, seed0=7000, simultaneous=True)


@pytest.mark.slow
def test_simultaneous_nullable_var_intervals():
    """Nullable variances of three columns (three noisy entries each), jointly."""
    df = three_columns(60)
    rng = np.random.default_rng(12)
    df = df.mask(rng.random(df.shape) < 0.25)
    schema = pa.DataFrameSchema(
        {c: pa.Column(float, pa.Check.in_range(*BOUNDS), nullable=True) for c in df.columns}
    )
    exact = df.clip(*BOUNDS).var(ddof=1)

    def release(seed):
        return df.dp.var(["a", "b", "c"], schema=schema, random_state=seed, epsilon=3.0)

    assert_covers(release, exact, reps=500, seed0=8000, simultaneous=True)


def test_simultaneous_count_intervals():
    """df.dp.count() over three columns: the joint box covers all three counts."""
    df = count_frame()
    exact = df.count().astype(float)

    def release(seed):
        return df.dp.count(random_state=seed, **dp_kwargs(("laplace", "bit"), 3.0))

    assert_covers(release, exact, reps=500, seed0=9000, simultaneous=True)
