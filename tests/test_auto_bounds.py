"""bounds="auto": private range estimation over public logarithmic bands (REFERENCE.md §14)."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest

import pandas_dp
from pandas_dp.errors import BudgetExceededError
from pandas_dp.noise.mechanisms import RandomSource, discrete_laplace
from pandas_dp.plan.plans import Plan
from pandas_dp.request.settings import Contributions, Settings
from pandas_dp.stats import auto_bands
from pandas_dp.stats import auto_bounds as ab

B = ab.BANDS
LOW, HIGH = ab.LOW_EXPONENT, ab.HIGH_EXPONENT


# ----------------------------------------------------------------------------- bands


def _oracle(x: float) -> int:
    """The band of one value, by exact comparisons with powers of two (no frexp)."""
    if math.isnan(x):
        return -1
    mag = abs(Fraction(x)) if math.isfinite(x) else None
    if mag is not None and mag < Fraction(2) ** -LOW:
        return auto_bands.ZERO_BAND
    if mag is None or mag >= Fraction(2) ** (HIGH - 1):
        j = HIGH - 1
    else:
        j = next(j for j in range(-LOW, HIGH) if Fraction(2) ** j <= mag < Fraction(2) ** (j + 1))
    m = j + LOW + 1
    return auto_bands.ZERO_BAND - m if math.copysign(1.0, x) < 0 else auto_bands.ZERO_BAND + m


def _every_float_class() -> list[float]:
    tiny = 2.0**-LOW
    special = [
        0.0,
        -0.0,
        5e-324,
        -5e-324,
        2.2250738585072014e-308,  # smallest normal
        -2.2250738585072014e-308,
        1e-300,
        -1e-300,
        tiny,
        -tiny,
        np.nextafter(tiny, 0.0),
        -np.nextafter(tiny, 0.0),
        np.nextafter(tiny, 1.0),
        1.0,
        -1.0,
        np.nextafter(1.0, 0.0),
        np.nextafter(-1.0, 0.0),
        1.5,
        -1.5,
        1e19,
        -1e19,
        2.0**63,
        2.0**64,
        -(2.0**64),
        1e300,
        -1e300,
        np.finfo(np.float64).max,
        -np.finfo(np.float64).max,
        math.inf,
        -math.inf,
        math.nan,
    ]
    edges = []
    for e in range(-LOW - 2, HIGH + 3):  # every band edge, exactly and on each side
        p = 2.0**e
        for v in (p, np.nextafter(p, 0.0), np.nextafter(p, math.inf)):
            edges += [float(v), -float(v)]
    rng = np.random.default_rng(7)
    spread = list(
        rng.choice([-1.0, 1.0], 400) * np.exp2(rng.uniform(-1080, 1023.99, 400))
    )  # log-uniform over every exponent, subnormal to huge
    return [float(v) for v in special + edges + spread]


def test_band_index_matches_a_brute_force_oracle_on_every_float_class() -> None:
    values = _every_float_class()
    got = ab.band_index(np.array(values))
    want = [_oracle(v) for v in values]
    wrong = [(v, g, w) for v, g, w in zip(values, got.tolist(), want, strict=True) if g != w]
    assert wrong == []
    assert got.dtype == np.intp
    assert set(got.tolist()) <= {-1, *range(B)}


def test_every_finite_value_lies_in_its_band_edges() -> None:
    values = np.array([v for v in _every_float_class() if math.isfinite(v) and abs(v) < 2.0**HIGH])
    edges = ab.band_edges(ab.band_index(values))
    assert np.all((edges[:, 0] <= values) & (values <= edges[:, 1]))


def test_bands_are_numbered_in_value_order_and_tile_the_line() -> None:
    edges = ab.band_edges(np.arange(B))
    assert edges.shape == (B, 2)
    assert np.all(edges[:, 0] < edges[:, 1])
    assert np.array_equal(edges[1:, 0], edges[:-1, 1])  # adjacent: no gap, no overlap
    assert edges[0, 0] == -(2.0**HIGH) and edges[-1, 1] == 2.0**HIGH
    assert tuple(edges[auto_bands.ZERO_BAND]) == (-(2.0**-LOW), 2.0**-LOW)
    assert B == 2 * (LOW + HIGH) + 1 == 193
    with pytest.raises(ValueError, match="band numbers"):
        ab.band_edges([B])


def test_band_counts_reads_nullable_integer_and_boolean_columns() -> None:
    s = pd.Series([1.0, None, 3.0, -0.0], dtype="Float64")
    counts = ab.band_counts(s)
    assert counts.shape == (1, B) and counts.sum() == 3  # the missing value in no band
    assert counts[0, auto_bands.ZERO_BAND] == 1 and counts[0, auto_bands.ZERO_BAND + LOW + 1] == 1
    ints = ab.band_counts(pd.Series([1, 2, None], dtype="Int64"))
    assert ints.sum() == 2
    bools = ab.band_counts(pd.Series([True, False, True]))
    assert bools[0, auto_bands.ZERO_BAND] == 1 and bools[0, auto_bands.ZERO_BAND + LOW + 1] == 2


# ----------------------------------------------------------------------------- sensitivity


def _exact(rows: np.ndarray) -> np.ndarray:
    counts: np.ndarray = ab.band_counts(pd.Series(rows, dtype=np.float64))[0]
    return counts


def test_adding_or_removing_one_row_moves_one_count_by_one() -> None:
    rng = np.random.default_rng(3)
    pool = np.array(_every_float_class())
    for _ in range(40):
        data = rng.choice(pool, 30)
        base = _exact(data)
        for i in range(len(data)):  # remove each row in turn
            diff = np.abs(_exact(np.delete(data, i)) - base)
            assert diff.sum() == (0 if math.isnan(data[i]) else 1)
            assert diff.max() <= 1


@pytest.mark.parametrize("c", [1, 2, 3, 5])
def test_a_unit_of_c_rows_moves_l1_c_and_substituting_it_2c(c: int) -> None:
    """Brute force over units of up to ``c`` rows: removing one moves the counts by at
    most ``c`` in L1, substituting it by at most ``2c``; the plan claims exactly that."""
    rng = np.random.default_rng(c)
    pool = np.array(_every_float_class())
    worst_remove = worst_sub = 0.0
    for _ in range(60):
        units = [rng.choice(pool, rng.integers(1, c + 1)) for _ in range(8)]
        base = _exact(np.concatenate(units))
        for i in range(len(units)):
            rest = [u for j, u in enumerate(units) if j != i]
            removed = _exact(np.concatenate(rest)) if rest else np.zeros(B)
            worst_remove = max(worst_remove, float(np.abs(removed - base).sum()))
            swapped = _exact(np.concatenate([*rest, rng.choice(pool, c)]))
            worst_sub = max(worst_sub, float(np.abs(swapped - base).sum()))
    unit = Contributions("pid", rows=c)
    claims = {
        rel: Plan(Settings(1.0, neighbouring=rel, rows=10, contributions=unit)).histogram_l1()
        for rel in ("add_remove", "substitute")
    }
    assert worst_remove <= claims["add_remove"] == c
    assert worst_sub <= claims["substitute"] == 2 * c
    assert worst_remove == c  # the brute force reaches the bound: it is tight


def test_the_release_truncates_units_to_their_contribution_bound() -> None:
    """With a unit of at most ``c`` rows declared, the counts hold ``c`` rows per unit."""
    frame = pd.DataFrame({"x": np.full(40, 5.0), "pid": np.repeat(np.arange(4), 10)})
    unit = Contributions("pid", rows=3)
    s = Settings(epsilon=1e6, random_state=0, contributions=unit)  # (noise ~ 0)
    _, record = ab.private_bounds({"x": frame["x"]}, s, frame=frame, beta=0.5)
    counts = record.details["band counts"]["x"]
    assert counts.sum() == 12 and counts[ab.band_index([5.0])[0]] == 12
    assert float(record.sensitivity["x"]) == 3.0
    assert record.details["l1 sensitivity"] == 3.0


@pytest.mark.parametrize("rel", ["add_remove", "substitute"])
@pytest.mark.parametrize("c", [1, 3])
def test_the_noise_scale_is_the_l1_sensitivity_over_epsilon(rel: str, c: int) -> None:
    """Discrete Laplace of scale ``L1 / epsilon`` on every band: a neighbour moving
    the counts by ``d`` (``|d|_1 <= L1``) changes the probability of any noisy vector
    by at most ``exp(|d|_1 / T) <= exp(epsilon)``."""
    frame = pd.DataFrame({"x": np.arange(30.0), "pid": np.arange(30) // c})
    unit = Contributions("pid", rows=c)
    s = Settings(0.7, neighbouring=rel, rows=30, random_state=0, contributions=unit)
    _, record = ab.private_bounds({"x": frame["x"]}, s, frame=frame)
    l1 = c * (2 if rel == "substitute" else 1)
    assert record.details["l1 sensitivity"] == l1
    assert float(record.scale["x"]) == pytest.approx(l1 / 0.7, rel=1e-9)
    assert record.neighbouring == rel and record.n == (30 if rel == "substitute" else None)


# ----------------------------------------------------------------------------- reading


@pytest.mark.parametrize("scale", [0.05, 0.5, 1.0, 3.0, 10.0, 250.0])
@pytest.mark.parametrize("beta", [1e-9, 1e-6, 1e-3, 0.1, 0.5])
def test_threshold_is_the_tight_discrete_laplace_tail(scale: float, beta: float) -> None:
    """An empty band passes (count >= t + 1) with probability <= beta / B, and a
    threshold one lower would not guarantee it; within one of REFERENCE's formula."""
    t = ab.threshold(scale, beta)
    assert t == int(t) and t >= 0

    def tail(m: float) -> float:  # P(noise >= m), integer m >= 1
        return math.exp(-m / scale) / (1 + math.exp(-1 / scale))

    assert tail(t + 1) <= beta / B
    if t >= 1:
        assert tail(t) > beta / B
    reference = scale * math.log(B / (2 * beta))
    assert reference - 1 <= t <= reference + 0.5 or t == 0


def test_threshold_refuses_bad_arguments() -> None:
    for scale, beta in [(0.0, 0.1), (math.inf, 0.1), (math.nan, 0.1), (1.0, 0.0), (1.0, 1.0)]:
        with pytest.raises(ValueError):
            ab.threshold(scale, beta)


def test_read_bounds_takes_the_outer_edges_of_the_bands_above_the_threshold() -> None:
    t = ab.threshold(1.0, 1e-3)
    counts = np.zeros(B)
    lo_band, hi_band = ab.band_index([-3.0])[0], ab.band_index([40.0])[0]
    counts[[lo_band, auto_bands.ZERO_BAND, hi_band]] = t + 1
    counts[hi_band + 1] = t  # at the threshold: not above it
    assert ab.read_bounds(counts, 1.0, 1e-3) == (-4.0, 64.0, False)
    one = np.zeros(B)
    one[auto_bands.ZERO_BAND] = t + 1
    assert ab.read_bounds(one, 1.0, 1e-3) == (-(2.0**-LOW), 2.0**-LOW, False)


def test_read_bounds_can_stretch_the_bounds_to_zero() -> None:
    t = ab.threshold(1.0, 1e-3)
    counts = np.zeros(B)
    counts[ab.band_index([40.0, 70.0])] = t + 1
    assert ab.read_bounds(counts, 1.0, 1e-3) == (32.0, 128.0, False)
    assert ab.read_bounds(counts, 1.0, 1e-3, zero=True) == (0.0, 128.0, False)
    negative = counts[::-1].copy()  # the mirror image: bands of -70 and -40
    assert ab.read_bounds(negative, 1.0, 1e-3, zero=True) == (-128.0, 0.0, False)
    assert ab.read_bounds(np.zeros(B), 1.0, 1e-3, zero=True) == (*ab.FALLBACK, True)


def test_read_bounds_never_raises_on_any_noisy_vector() -> None:
    rng = np.random.default_rng(11)
    vectors = [
        np.zeros(B),
        -np.ones(B) * 1e9,
        np.full(B, np.nan),
        np.full(B, np.inf),
        np.full(B, -np.inf),
        np.full(B, 1e300),
        *(rng.integers(-50, 50, B).astype(float) for _ in range(50)),
        *(rng.standard_cauchy(B) * 1e6 for _ in range(20)),
    ]
    for v in vectors:
        for scale in (1e-3, 1.0, 1e6):
            lo, hi, fell = ab.read_bounds(v, scale, 1e-6, zero=bool(rng.integers(2)))
            assert lo < hi and math.isfinite(lo) and math.isfinite(hi)
            if fell:
                assert (lo, hi) == ab.FALLBACK
    assert ab.read_bounds(np.zeros(B), 1.0) == (*ab.FALLBACK, True)
    assert ab.read_bounds(np.full(B, np.nan), 1.0)[2] is True
    assert ab.read_bounds(np.full(B, np.inf), 1.0) == (-(2.0**HIGH), 2.0**HIGH, False)


# ----------------------------------------------------------------------------- the release


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    return pd.DataFrame(
        {
            "x": rng.normal(50.0, 10.0, 5000),
            "income": rng.lognormal(10.0, 1.0, 5000),
            "signed": rng.normal(-3.0, 40.0, 5000),
            "pid": np.arange(5000) // 2,
        }
    )


def test_private_bounds_contains_the_data_at_large_epsilon(frame: pd.DataFrame) -> None:
    cols = {c: frame[c] for c in ("x", "income", "signed")}
    s = Settings(epsilon=1e4, random_state=1)
    bounds, record = ab.private_bounds(cols, s, zero=False)
    stretched, _ = ab.private_bounds(cols, Settings(epsilon=1e4, random_state=1), zero=True)
    for c, (lo, hi) in bounds.items():
        # each bound is a band edge at most a factor 2 (one band) outside the data
        assert lo <= frame[c].min() and frame[c].max() <= hi, c
        edges = ab.band_edges(ab.band_index([frame[c].min(), frame[c].max()]))
        assert (lo, hi) == (edges[0, 0], edges[1, 1])
        assert stretched[c] == (min(lo, 0.0), max(hi, 0.0))
    assert bounds["x"][0] > 0 and stretched["x"][0] == 0.0  # (the data are positive)
    assert record.details["reading"] == "the outer edges of the bands above the threshold"
    assert record.statistic == "bounds" and record.columns == ("x", "income", "signed")
    assert record.epsilon == 1e4 and record.delta == 0.0 and record.mechanism == "laplace"
    assert record.output_bounds == bounds
    per = record.details["columns"]["x"]
    assert per["fell_back"] is False and per["beta"] == ab.DEFAULT_BETA
    assert per["epsilon"] == pytest.approx(1e4 / 3)
    assert per["threshold"] == ab.threshold(per["scale"], ab.DEFAULT_BETA)
    assert record.secure is False
    assert record.details["budget_split"] == pytest.approx(
        {f"{c}: category_counts": 1e4 / 3 for c in cols}
    )


def test_private_bounds_is_charged_and_recorded_like_every_release(frame: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    s = Settings(epsilon=0.3, random_state=2, budget=budget)
    ab.private_bounds(frame["x"], s)
    assert budget.spent[0] == pytest.approx(0.3) and budget.spent[1] == 0.0
    row = budget.ledger.iloc[-1]
    assert row["statistic"] == "bounds" and tuple(row["columns"]) == ("x",)
    assert row["epsilon"] == pytest.approx(0.3) and row["mechanism"] == "laplace"
    with budget:  # an active budget is charged too
        ab.private_bounds(frame["x"], Settings(epsilon=0.2, random_state=3))
    assert budget.spent[0] == pytest.approx(0.5)


def test_the_bounds_are_pure_whatever_the_release_mechanism(frame: pd.DataFrame) -> None:
    s = Settings(epsilon=1.0, delta=1e-6, mechanism="gaussian", random_state=4)
    _, record = ab.private_bounds(frame["x"], s)
    assert record.mechanism == "laplace" and record.delta == 0.0 and record.bounding == "bit"


def test_no_band_passing_falls_back_and_says_so() -> None:
    s = pd.Series([np.nan] * 20 + [3.0] * 2, name="few")
    bounds, record = ab.private_bounds(s, Settings(epsilon=0.1, random_state=0))
    assert bounds == {"few": ab.FALLBACK}
    assert record.details["columns"]["few"]["fell_back"] is True
    assert record.details["fallback"] == ab.FALLBACK
    frame = pd.DataFrame({"few": s, "many": np.linspace(1.0, 3.0, 22)})
    cols = {c: frame[c] for c in frame}  # t is about 6 for each column: 2 values fail
    s30 = Settings(epsilon=30.0, random_state=0)
    auto = ab.resolve_auto(cols, s30, bounds_epsilon_share=0.2, beta=1e-6, zero=False)
    assert auto.record.details["columns"]["many"]["threshold"] == 6.0
    assert auto.fell_back == ("few",) and auto.bounds["many"] != ab.FALLBACK


def test_the_public_facts_never_depend_on_the_data(frame: pd.DataFrame) -> None:
    """Two unrelated frames: the same bands, noise scales, thresholds and record layout."""
    other = pd.Series(np.r_[np.full(7, 1e15), [np.nan, -np.inf]], name="x")
    s1 = Settings(epsilon=0.5, random_state=0)
    _, r1 = ab.private_bounds(frame["x"], s1)
    _, r2 = ab.private_bounds(other, Settings(epsilon=0.5, random_state=9))
    assert ab.band_counts(frame["x"]).shape == ab.band_counts(other).shape == (1, B)
    for key in ("bands", "noised", "budget_split", "l1 sensitivity", "fallback"):
        assert r1.details[key] == r2.details[key]
    c1, c2 = r1.details["columns"]["x"], r2.details["columns"]["x"]
    for key in ("epsilon", "scale", "threshold", "beta"):
        assert c1[key] == c2[key]
    assert len(r1.details["band counts"]["x"]) == len(r2.details["band counts"]["x"]) == B
    assert r1.scale.equals(r2.scale) and r1.sensitivity.equals(r2.sensitivity)


def test_seeded_bounds_are_reproducible(frame: pd.DataFrame) -> None:
    one = ab.private_bounds(frame["signed"], Settings(epsilon=0.05, random_state=12))
    two = ab.private_bounds(frame["signed"], Settings(epsilon=0.05, random_state=12))
    assert one[0] == two[0]
    assert np.array_equal(
        one[1].details["band counts"]["signed"], two[1].details["band counts"]["signed"]
    )


def test_private_bounds_with_a_privacy_unit_and_on_dask(frame: pd.DataFrame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    unit = Contributions("pid", rows=2)
    s = Settings(epsilon=1.0, random_state=6, contributions=unit)
    b1, r1 = ab.private_bounds({"x": frame["x"]}, s, frame=frame)
    ddf = dd.from_pandas(frame, npartitions=3)
    b2, r2 = ab.private_bounds({"x": ddf["x"]}, s, frame=ddf)
    assert b1 == b2
    assert np.array_equal(r1.details["band counts"]["x"], r2.details["band counts"]["x"])
    assert r1.privacy_unit == "pid" and r1.contribution_bounds is not None
    assert r1.contribution_bounds["max_rows_per_unit"] == 2


# ----------------------------------------------------------------------------- resolve_auto


def test_resolve_auto_spends_its_share_and_leaves_the_rest(frame: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=2.0)
    s = Settings(epsilon=1.0, random_state=0, budget=budget)
    auto = ab.resolve_auto({"x": frame["x"]}, s, bounds_epsilon_share=0.25)
    assert auto.settings.epsilon == pytest.approx(0.75)
    assert auto.record.epsilon == pytest.approx(0.25)
    assert budget.spent[0] == pytest.approx(0.25)  # the release itself is the caller's
    assert auto.bounds["x"][0] < frame["x"].min() + 20 and auto.bounds["x"][1] >= 64
    details = auto.details()
    assert details["bounds_epsilon_share"] == 0.25
    assert details["epsilon_total"] == pytest.approx(1.0)
    # the release after it continues the seeded generator: not the bounds' noise again
    assert auto.settings.random_state is not None
    assert auto.settings.random_state is not s.random_state


def test_the_total_is_checked_before_the_first_charge(frame: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    budget.charge(0.5, statistic="earlier")
    s = Settings(epsilon=0.8, random_state=0, budget=budget)  # 0.16 would fit, 0.8 not
    with pytest.raises(BudgetExceededError, match=r"bounds='auto' spends epsilon=0\.8"):
        ab.resolve_auto(frame["x"], s)
    assert budget.spent[0] == pytest.approx(0.5) and len(budget.ledger) == 1
    z = pandas_dp.PrivacyBudget(epsilon=0.5, delta=1e-6, accounting="zcdp")
    with pytest.raises(BudgetExceededError, match="rho"):
        ab.resolve_auto(frame["x"], Settings(epsilon=5.0, random_state=0, budget=z))
    assert z.spent.rho == 0.0
    with z, pytest.raises(BudgetExceededError):  # an active budget is checked as well
        ab.resolve_auto(frame["x"], Settings(epsilon=5.0, random_state=0))
    assert len(z.ledger) == 0


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.5, True, "0.2", math.nan])
def test_resolve_auto_refuses_a_bad_share_before_any_charge(share: object) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    s = Settings(epsilon=1.0, budget=budget)
    with pytest.raises(ValueError, match="bounds_epsilon_share"):
        ab.resolve_auto(pd.Series([1.0]), s, bounds_epsilon_share=share)  # type: ignore[arg-type]
    assert len(budget.ledger) == 0


def test_resolve_auto_refuses_out_of_bounds_raise_before_any_charge() -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    s = Settings(epsilon=1.0, out_of_bounds="raise", budget=budget)
    with pytest.raises(ValueError, match="out_of_bounds='raise'"):
        ab.resolve_auto(pd.Series([1.0, 2.0]), s)
    assert len(budget.ledger) == 0


def test_resolve_if_auto_passes_declarations_through(frame: pd.DataFrame) -> None:
    budget = pandas_dp.PrivacyBudget(epsilon=1.0)
    s = Settings(epsilon=1.0, random_state=0, budget=budget)
    for declared in [(0, 100), None, {"x": (0, 1)}, "x"]:
        assert ab.resolve_if_auto(declared, {"x": frame["x"]}, s) == (declared, s, None)
    assert len(budget.ledger) == 0
    bounds, rest, auto = ab.resolve_if_auto("auto", {"x": frame["x"]}, s, None)
    assert auto is not None and bounds == auto.bounds and rest is auto.settings
    assert len(budget.ledger) == 1 and rest.epsilon == pytest.approx(1 - ab.DEFAULT_SHARE)
    m = frame["x"].dp.mean(epsilon=0.5, bounds=(0, 100), random_state=0)
    assert ab.annotate(m, None) is m


def test_annotate_records_the_bounds_in_the_release(frame: pd.DataFrame) -> None:
    s = Settings(epsilon=1.0, random_state=0)
    auto = ab.resolve_auto(frame["x"], s)
    m = frame["x"].dp.mean(epsilon=auto.settings.epsilon, bounds=auto.bounds["x"], random_state=1)
    out = ab.annotate(m, auto)
    meta = out.attrs["dp"]
    assert meta.details["bounds_release"]["epsilon"] == pytest.approx(ab.DEFAULT_SHARE)
    assert meta.input_bounds == {"x": auto.bounds["x"]}
    assert meta.epsilon == pytest.approx(1 - ab.DEFAULT_SHARE)
    accessor: Any = frame[["x"]].dp
    series = accessor.mean(["x"], epsilon=0.5, bounds=auto.bounds, random_state=1)
    assert "bounds_release" in ab.annotate(series, auto).attrs["dp"].details


# ----------------------------------------------------------------------------- statistics


@pytest.mark.slow
def test_an_empty_band_exceeds_the_threshold_with_probability_at_most_beta_over_b() -> None:
    """Empirical tail of the package's discrete Laplace sampler against ``beta / B``.

    With ``beta = 0.5`` and ``T = 2``, each of ``B * 4000`` empty-band draws
    passes with probability ``p = P(noise >= t + 1) <= beta / B`` (exact, from the
    tail formula). The count of passes is binomial; the test fails if it exceeds
    ``N (beta / B) + 5.3 sqrt(N beta / B)`` or is below ``N p - 5.3 sqrt(N p)``:
    a false alarm rate below ``1e-7`` per side (normal approximation, ``N p`` ~ 2000).
    Then the whole release on an all-missing column (every band empty): some band
    passes in at most ``beta`` of the runs (same false-alarm bound).
    """
    beta, scale, trials = 0.5, 2.0, 4000
    t = ab.threshold(scale, beta)
    p = math.exp(-(t + 1) / scale) / (1 + math.exp(-1 / scale))
    assert p <= beta / B
    draws = discrete_laplace(np.full(B * trials, scale), RandomSource(2026))
    passes = int((draws > t).sum())
    n = B * trials
    assert passes <= n * beta / B + 5.3 * math.sqrt(n * beta / B)
    assert passes >= n * p - 5.3 * math.sqrt(n * p)

    empty = pd.Series(np.full(5, np.nan), name="x")
    rng = np.random.default_rng(33)
    runs, passed = 1500, 0
    epsilon = 0.5  # scale 2
    for _ in range(runs):
        _, record = ab.private_bounds(empty, Settings(epsilon=epsilon, random_state=rng), beta=0.2)
        passed += not record.details["columns"]["x"]["fell_back"]
    assert passed <= runs * 0.2 + 5.3 * math.sqrt(runs * 0.2 * 0.8)


@pytest.mark.slow
@pytest.mark.parametrize("rel", ["add_remove", "substitute"])
def test_the_bounds_release_shows_no_loss_above_epsilon_on_worst_case_neighbours(
    rel: str,
) -> None:
    """Empirical privacy loss of the released bounds on worst-case neighbours.

    A far band holds ``t - 1`` values (``t`` the threshold) in D and ``t`` in its
    neighbour (one row added, or under substitute one row moved there from the
    band near zero, which always passes): the far band passes with probability
    ``P(K >= 2)`` against ``P(K >= 1)``, a ratio of exactly ``e^(1 / T)`` for
    discrete Laplace noise at the calibrated scale ``T = L1 / epsilon`` -- the
    worst case of one band, carried to the bounds (``epsilon`` under add/remove,
    ``epsilon / 2`` under substitute, whose second moved band shows nothing
    here). 4,000 releases per side: the log ratio's standard error is about
    0.055; the test allows 0.25 either side (4.5 standard errors, false alarm
    below 1e-5), which noise at half the scale (twice the log ratio) cannot pass,
    nor a release that never looked at the far band (no ratio at all).
    """
    eps, reps = 1.0, 4000
    l1 = 2.0 if rel == "substitute" else 1.0  # the histogram's L1 sensitivity
    t = int(ab.threshold(l1 / eps, ab.DEFAULT_BETA))
    near = [1.5] * 200
    far = [1000.5] * (t - 1)
    d = pd.Series(near + far)
    if rel == "add_remove":  # one row added to the far band
        d_next = pd.Series([*near, *far, 1000.5])
    else:  # one row moved there from the near band: the same length
        d_next = pd.Series([*near[:-1], *far, 1000.5])
    gen = np.random.default_rng(11)

    def passes(s: pd.Series) -> float:
        hits = 0
        for _ in range(reps):
            settings = Settings(eps, neighbouring=rel, rows=len(s), random_state=gen)
            bounds, _ = ab.private_bounds({"x": s}, settings)
            hits += bounds["x"][1] == 1024.0
        return hits / reps

    p, p_next = passes(d), passes(d_next)
    loss = math.log(p_next / p)
    # one band moved by one: exactly eps / L1 (substitute's other band, the near one,
    # passes either way and shows nothing); never more than eps
    expected = eps / l1
    assert expected - 0.25 < loss < expected + 0.25, (p, p_next, loss)
    assert loss < eps + 0.25
