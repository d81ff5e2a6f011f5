"""pandas_dp.plotting.plots: each kind of release draws on the Agg backend."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pandas_dp.datasets import load_survey, survey_schema

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402

from pandas_dp.plotting import plots as plotting  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures() -> object:
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def survey() -> pd.DataFrame:
    return load_survey()


def _error_bars(ax: object) -> list[LineCollection]:
    return [c for c in ax.collections if isinstance(c, LineCollection)]  # type: ignore[attr-defined]


def test_scalar_release_is_a_point_with_an_error_bar(survey: pd.DataFrame) -> None:
    m = survey.dp.mean("age", epsilon=1.0, schema=survey_schema(), random_state=0)
    ax = plotting.plot_release(m, exact=survey["age"].mean())
    bars = _error_bars(ax)
    assert len(bars) == 1
    (segment,) = bars[0].get_segments()
    lo, hi = m.attrs["dp"].interval(0.05)
    assert segment[:, 1].min() == pytest.approx(lo)
    assert segment[:, 1].max() == pytest.approx(hi)
    markers = [line for line in ax.lines if line.get_marker() == "x"]
    assert len(markers) == 1  # the exact value
    assert "mean(age)" in ax.get_title()


def test_integer_release(survey: pd.DataFrame) -> None:
    n = survey.dp.len(epsilon=1.0, random_state=0)
    ax = plotting.plot_release(n, alpha=0.01)
    assert len(_error_bars(ax)) == 1


def test_series_release_has_one_error_bar_per_entry(survey: pd.DataFrame) -> None:
    vc = survey["region"].dp.value_counts(epsilon=1.0, schema=survey_schema(), random_state=0)
    ax = plotting.plot_release(vc, exact=survey["region"].value_counts())
    (bars,) = _error_bars(ax)
    assert len(bars.get_segments()) == len(vc)
    declared = ["N", "S", "E", "W"]  # the schema's order, not the noisy ranking
    assert [t.get_text() for t in ax.get_xticklabels()] == declared
    # each bar is the interval of its own label
    frame = vc.attrs["dp"].interval(0.05).loc[declared]
    tops = [seg[:, 1].max() for seg in bars.get_segments()]
    np.testing.assert_allclose(tops, frame["upper"].to_numpy())


EDUCATION = ["none", "primary", "secondary", "tertiary"]


@pytest.fixture(scope="module")
def education() -> pd.Series:
    """An ordinal column whose counts rank in another order than the declared one."""
    values = np.repeat(EDUCATION, [30, 200, 500, 270])
    dtype = pd.CategoricalDtype(EDUCATION, ordered=True)
    return pd.Series(pd.Categorical(values, dtype=dtype), name="education")


def _drawn(ax: object) -> tuple[list[str], list[float], list[float]]:
    """Tick labels, and the lower and upper end of each error bar, left to right."""
    (bars,) = _error_bars(ax)
    segments = bars.get_segments()
    labels = [t.get_text() for t in ax.get_xticklabels()]  # type: ignore[attr-defined]
    return labels, [s[:, 1].min() for s in segments], [s[:, 1].max() for s in segments]


def test_ordinal_categories_are_drawn_in_declared_order(education: pd.Series) -> None:
    # sorted by noisy count
    vc = education.dp.value_counts(epsilon=1.0, categories="dtype", random_state=0)
    assert list(vc.index) != EDUCATION  # else this test would show nothing
    ax = plotting.plot_release(vc, exact=education.value_counts())
    labels, lows, tops = _drawn(ax)
    assert labels == EDUCATION
    frame = vc.attrs["dp"].interval(0.05).loc[EDUCATION]
    np.testing.assert_allclose(lows, frame["lower"].to_numpy())
    np.testing.assert_allclose(tops, frame["upper"].to_numpy())
    crosses = [line for line in ax.lines if line.get_marker() == "x"]
    np.testing.assert_allclose(crosses[0].get_ydata(), [30, 200, 500, 270])


def test_proportions_sorted_by_value_keep_declared_order(education: pd.Series) -> None:
    p = education.dp.proportions(epsilon=1.0, categories="dtype", sort=True, random_state=3)
    assert list(p.index) != EDUCATION
    labels, _, _ = _drawn(plotting.plot_release(p))
    assert labels == EDUCATION


def test_other_and_missing_buckets_come_after_the_declared_categories() -> None:
    s = pd.Series(["b"] * 300 + ["a"] * 100 + ["x"] * 200 + [None] * 50, name="letter")
    vc = s.dp.value_counts(
        epsilon=1.0, categories=["a", "b", "c"], other="other", dropna=False, random_state=0
    )
    labels, _, tops = _drawn(plotting.plot_release(vc))
    assert labels == ["a", "b", "c", "other", "missing"]
    frame = vc.attrs["dp"].interval(0.05)
    expected = [frame.loc[k, "upper"] for k in ["a", "b", "c", "other"]]
    np.testing.assert_allclose(tops[:4], expected)


def test_order_result_and_explicit_order(education: pd.Series) -> None:
    vc = education.dp.value_counts(epsilon=1.0, categories="dtype", random_state=0)
    labels, _, _ = _drawn(plotting.plot_release(vc, order="result"))
    assert labels == [str(i) for i in vc.index]
    plt.close("all")
    mine = ["tertiary", "secondary", "primary", "none"]
    labels, _, tops = _drawn(plotting.plot_release(vc, order=mine))
    assert labels == mine
    np.testing.assert_allclose(tops, vc.attrs["dp"].interval(0.05).loc[mine, "upper"])
    with pytest.raises(ValueError, match="exactly once"):
        plotting.plot_release(vc, order=["none", "none", "primary", "secondary"])
    with pytest.raises(ValueError, match="declared"):
        plotting.plot_release(vc, order="by value")


def test_proportions_and_simultaneous_intervals(survey: pd.DataFrame) -> None:
    p = survey.dp.proportions("region", epsilon=1.0, schema=survey_schema(), random_state=0)
    ax = plotting.plot_release(p, simultaneous=True)
    (bars,) = _error_bars(ax)
    assert len(bars.get_segments()) == 4
    assert "simultaneous" in ax.get_legend().get_texts()[0].get_text()


def test_several_means_on_a_given_axes(survey: pd.DataFrame) -> None:
    means = survey.dp.mean(
        ["age", "hours_per_week"], epsilon=1.0, schema=survey_schema(), random_state=0
    )
    _fig, ax = plt.subplots()
    out = plotting.plot_release(means, ax=ax)
    assert out is ax
    assert len(_error_bars(ax)[0].get_segments()) == 2


def test_matrix_release_is_an_annotated_heatmap(survey: pd.DataFrame) -> None:
    cols = ["age", "hours_per_week", "smoker"]
    c = survey.dp.corr(cols, epsilon=1.0, schema=survey_schema(), random_state=0)
    ax = plotting.plot_release(c, exact=survey[cols].astype(float).corr())
    images = [i for i in ax.get_images() if isinstance(i, AxesImage)]
    assert len(images) == 1
    assert images[0].get_array().shape == (3, 3)
    assert len(ax.texts) == 9
    assert "exact" in ax.texts[0].get_text()


def test_cov_without_annotations(survey: pd.DataFrame) -> None:
    c = survey.dp.cov(
        ["age", "hours_per_week"], epsilon=1.0, schema=survey_schema(), random_state=0
    )
    ax = plotting.plot_release(c, annotate=False)
    assert len(ax.get_images()) == 1
    assert len(ax.texts) == 0


def test_non_square_frame_and_plain_values_are_refused(survey: pd.DataFrame) -> None:
    d = survey.dp.describe(["age"], epsilon=1.0, schema=survey_schema(), random_state=0)
    with pytest.raises(ValueError, match="one by one"):
        plotting.plot_release(d)
    with pytest.raises(TypeError, match="attrs"):
        plotting.plot_release(survey["age"].mean())


def test_bounding_modes_plot_and_samples() -> None:
    ax = plotting.plot_bounding_modes(
        0.5, 0.0, 10.0, sensitivity=1.0, epsilon=1.0, draws=4000, random_state=1
    )
    assert len(ax.patches) == 3  # one step histogram per mode
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(t.startswith("bit") and "at 0" in t for t in texts)
    sims = plotting.simulate_bounding_modes(
        0.5, 0.0, 10.0, sensitivity=1.0, epsilon=1.0, draws=4000, random_state=1
    )
    assert sims["bit"].between(0, 10).all() and sims["truncated"].between(0, 10).all()
    assert sims.attrs["scale"]["bit"] == pytest.approx(1.0)
    assert sims.attrs["scale"]["truncated"] > 1.0  # re-calibrated
    # both bounded modes are biased upwards next to the lower end
    assert sims["bit"].mean() > 0.5 and sims["truncated"].mean() > sims["bit"].mean()


def test_bounding_modes_reject_bad_arguments() -> None:
    with pytest.raises(ValueError, match="outside"):
        plotting.simulate_bounding_modes(11.0, 0.0, 10.0, sensitivity=1.0, epsilon=1.0)
    with pytest.raises(ValueError, match="bounding"):
        plotting.simulate_bounding_modes(
            1.0, 0.0, 10.0, sensitivity=1.0, epsilon=1.0, modes=("clamp",)
        )


def _inside(box: object, canvas: object) -> bool:
    tol = 0.5  # pixels: rounding of the layout
    return bool(
        box.x0 >= canvas.x0 - tol  # type: ignore[attr-defined]
        and box.y0 >= canvas.y0 - tol  # type: ignore[attr-defined]
        and box.x1 <= canvas.x1 + tol  # type: ignore[attr-defined]
        and box.y1 <= canvas.y1 + tol  # type: ignore[attr-defined]
    )


def test_bounding_modes_figure_saves_with_legend_and_labels_inside(tmp_path: object) -> None:
    ax = plotting.plot_bounding_modes(
        0.5, 0.0, 10.0, sensitivity=1.0, epsilon=1.0, draws=4000, random_state=1
    )
    fig = ax.figure
    fig.savefig(tmp_path / "modes.png")  # type: ignore[operator]  # a plain save lays it out
    renderer = fig.canvas.get_renderer()
    legend = ax.get_legend().get_window_extent(renderer)
    assert _inside(legend, fig.bbox), (legend, fig.bbox)
    assert _inside(ax.xaxis.label.get_window_extent(renderer), fig.bbox)
    assert _inside(ax.title.get_window_extent(renderer), fig.bbox)
    assert _inside(ax.xaxis.get_tightbbox(renderer), fig.bbox)  # the drawn tick labels too
    # the legend is below the axes and does not cover the histograms
    assert legend.y1 <= ax.get_window_extent(renderer).y0


def test_grouped_release_one_bar_per_key_side_by_side(survey: pd.DataFrame) -> None:
    schema = survey_schema()
    m = survey.dp.groupby(["region", "smoker"]).mean(
        "age", epsilon=1.0, schema=schema, random_state=0
    )
    exact = survey.groupby(["region", "smoker"])["age"].mean()
    ax = plotting.plot_groups(m, exact=exact)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["E", "N", "S", "W"]
    assert ax.get_xlabel() == "region"
    assert ax.get_legend_handles_labels()[1] == ["exact", "smoker = False", "smoker = True"]
    bars = _error_bars(ax)
    assert len(bars) == 2  # one colour per value of the second column
    frame = m.attrs["dp"].interval(0.05)
    for bar, value in zip(bars, [False, True], strict=True):
        segments = bar.get_segments()
        keys = [(r, value) for r in ["E", "N", "S", "W"]]
        np.testing.assert_allclose([s[:, 1].min() for s in segments], frame.loc[keys, "lower"])
        np.testing.assert_allclose([s[:, 1].max() for s in segments], frame.loc[keys, "upper"])
        # side by side: False left of the tick, True right of it
        xs = np.array([s[0, 0] for s in segments])
        assert np.all(np.sign(xs - np.arange(4)) == (1 if value else -1))


def test_grouped_release_by_one_column_and_refusals(survey: pd.DataFrame) -> None:
    schema = survey_schema()
    g = survey.dp.groupby("region")
    m = g.mean("hours_per_week", epsilon=1.0, schema=schema, random_state=0)
    ax = plotting.plot_groups(m, simultaneous=True)
    (bars,) = _error_bars(ax)
    assert len(bars.get_segments()) == 4
    tops = [seg[:, 1].max() for seg in bars.get_segments()]
    wide = m.attrs["dp"].interval(0.05, simultaneous=True)["upper"].to_numpy()
    np.testing.assert_allclose(tops, wide)
    assert "simultaneous" in ax.get_legend_handles_labels()[1][0]
    both = g.mean(["age", "hours_per_week"], epsilon=1.0, schema=schema, random_state=0)
    with pytest.raises(TypeError, match="Series"):
        plotting.plot_groups(both)
    with pytest.raises(TypeError, match="pandas-dp"):
        plotting.plot_groups(survey["age"])
    three = survey.assign(old=survey["age"] > 60).dp.groupby(["region", "smoker", "old"])
    with pytest.raises(ValueError, match="two grouping columns"):
        plotting.plot_groups(three.len(epsilon=1.0, schema=schema, random_state=0))
