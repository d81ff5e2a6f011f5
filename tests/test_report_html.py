"""The HTML report of ``pandas-dp describe --html``: structure, numbers, a real browser.

The structure is read with :mod:`html.parser` (intervals beside the estimates, the
metadata as tables, every column present, escaped names); the page is then
rendered by headless Chromium, when installed, to check that it loads, that every
chart is laid out and that nothing but the scrolling tables is wider than the
window.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest

from pandas_dp import cli
from pandas_dp.cli.report_html import Row, forest_svg, format_estimate, format_number

NUMERIC = ["age", "income", "hours_per_week"]
CATEGORICAL = ["region", "smoker"]
SITES = ["north & <east>", "south", "west"]
SHIFTS = ["day", "night"]
ANSWERS = [f"answer {i} <&>" for i in range(10)]
WIDE_NUMERIC = [f"x<{i} & a_long_measure_name" if i % 2 == 0 else f"score_{i}" for i in range(8)]


class Page(HTMLParser):
    """What the tests read from a report: text, tables, cells, charts and nesting."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []
        self.cells: list[dict[str, str]] = []  # per td.est: its value and interval text
        self.table_parents: list[tuple[str, dict[str, str]]] = []  # each table's parent
        self.headers: list[str] = []  # every <th>'s text
        self.captions: list[str] = []
        self.svgs = 0
        self.body_attrs: dict[str, str] = {}
        self._cell: dict[str, str] | None = None
        self._th: list[str] | None = None
        self._caption: list[str] | None = None
        self._span: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "body":
            self.body_attrs = a
        if tag == "table":
            self.table_parents.append(self.stack[-1] if self.stack else ("", {}))
        if tag == "td" and "est" in a.get("class", "").split():
            self._cell = {"value": "", "ci": ""}
        if tag == "span" and self._cell is not None:
            self._span = a.get("class")
        if tag == "th":
            self._th = []
        if tag == "figcaption":
            self._caption = []
        if tag == "svg":
            self.svgs += 1
        if tag not in {"meta", "line", "rect", "br", "img", "input"}:
            self.stack.append((tag, a))

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.cells.append(self._cell)
            self._cell = None
        if tag == "span":
            self._span = None
        if tag == "th" and self._th is not None:
            self.headers.append("".join(self._th).strip())
            self._th = None
        if tag == "figcaption" and self._caption is not None:
            self.captions.append("".join(self._caption).strip())
            self._caption = None
        while self.stack and self.stack[-1][0] != tag and tag not in {"line", "rect"}:
            self.stack.pop()
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if self.stack and self.stack[-1][0] in {"style", "script"}:
            return
        self.text.append(data)
        if self._cell is not None and self._span in {"value", "ci"}:
            self._cell[self._span] += data
        if self._th is not None:
            self._th.append(data)
        if self._caption is not None:
            self._caption.append(data)


class Nesting(HTMLParser):
    """Every element closed, in order (void elements and ``<x/>`` need no end tag)."""

    VOID = frozenset({"meta", "br", "img", "input", "hr", "link"})

    def __init__(self) -> None:
        super().__init__()
        self.open: list[str] = []
        self.errors: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        pass

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-3:]}")
        else:
            self.open.pop()


def _read(path: Path) -> tuple[str, Page]:
    raw = path.read_text(encoding="utf-8")
    page = Page()
    page.feed(raw)
    page.close()
    return raw, page


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of the bundled survey, written by the command line."""
    path = tmp_path_factory.mktemp("example") / "report.html"
    argv = ["describe", "--example", "--epsilon", "1", "--seed", "1", "--html", str(path)]
    assert cli.main(argv) == 0
    return path


@pytest.fixture(scope="module")
def wide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A ``--by`` report (two key columns) of a wide table whose names hold ``<`` and ``&``."""
    folder = tmp_path_factory.mktemp("wide")
    rng = np.random.default_rng(0)
    n = 600
    data: dict[str, object] = {
        "site": rng.choice(SITES, n),
        "shift": rng.choice(SHIFTS, n),
        "answer <&>": rng.choice(ANSWERS, n),
    }
    columns = {
        "site": pa.Column(str, pa.Check.isin(SITES)),
        "shift": pa.Column(str, pa.Check.isin(SHIFTS)),
        "answer <&>": pa.Column(str, pa.Check.isin(ANSWERS)),
    }
    for name in WIDE_NUMERIC:
        data[name] = rng.uniform(0, 100, n).round(1)
        columns[name] = pa.Column(float, pa.Check.in_range(0, 100))
    pd.DataFrame(data).to_csv(folder / "wide.csv", index=False)
    cli.schema_to_yaml(pa.DataFrameSchema(columns), folder / "wide.yaml")
    path = folder / "wide.html"
    argv = ["describe", str(folder / "wide.csv"), "--schema", str(folder / "wide.yaml")]
    argv += ["--epsilon", "1", "--seed", "1", "--by", "site", "shift", "--html", str(path)]
    assert cli.main(argv) == 0
    return path


# ----------------------------------------------------------------------------- numbers


def test_estimates_are_rounded_to_their_interval() -> None:
    assert format_estimate(43.925, 42.48, 45.28) == ("43.9", "(42.5 – 45.3)")
    assert format_estimate(49486.9, 43179.45, 55420.93) == ("49,500", "(43,200 – 55,400)")
    assert format_estimate(0.3851, 0.2907, 0.5056) == ("0.39", "(0.29 – 0.51)")
    assert format_estimate(986.0, 957.0, 1016.0) == ("986", "(957 – 1,016)")
    # a declared bound (no width) and a missing interval: the value alone
    assert format_estimate(18.0, 18.0, 18.0) == ("18", None)
    assert format_estimate(2.5, float("nan"), float("nan")) == ("2.5", None)
    assert format_estimate(float("nan"), 0.0, 1.0) == ("", None)


def test_numbers_have_sensible_significant_digits() -> None:
    assert format_number(4.00000000029104) == "4"
    assert format_number(0.047619047619047616) == "0.04762"
    assert format_number(1575000.5545762542) == "1,575,001"
    assert format_number(328125050227.28326) == "3.281e+11"
    assert format_number(-0.00001) == "-1.000e-05"
    assert format_number(float("nan")) == ""


def test_forest_plot_zooms_to_the_intervals() -> None:
    rows = [Row("mean", 44.0, 43.0, 45.0, "44 (43 – 45)")]
    svg = forest_svg("t", rows, axis_label="age", limits=(18.0, 90.0))
    (width,) = re.findall(r'<rect [^>]*width="([\d.]+)"', svg)
    # on the whole declared range (72 wide) this interval would be 2/72 of the plot
    assert float(width) > 200
    many = forest_svg("t", rows * 250, axis_label="age", max_rows=200)
    assert many.count("<rect ") == 200 and "the first 200 lines of 250" in many
    narrow = forest_svg("t", [Row("m", 1.0, 1.0, 1.0 + 1e-9, "")], axis_label="", limits=None)
    (width,) = re.findall(r'<rect [^>]*width="([\d.]+)"', narrow)
    assert float(width) >= 2.0


# ----------------------------------------------------------------------------- structure


def test_example_intervals_beside_estimates(example: Path) -> None:
    raw, page = _read(example)
    assert raw.startswith("<!DOCTYPE html>") and raw.rstrip().endswith("</html>")
    with_interval = [c for c in page.cells if c["ci"]]
    # count, mean, std, 25%, 50%, 75% of three numeric columns, and six shares
    assert len(with_interval) == 6 * len(NUMERIC) + 6
    for cell in with_interval:
        assert re.fullmatch(r"-?[\d,.]+", cell["value"]), cell
        assert re.fullmatch(r"\(-?[\d,.]+ – -?[\d,.]+\)", cell["ci"]), cell
    assert "<details" not in raw  # no collapsed list of intervals


def test_example_every_column_present(example: Path) -> None:
    _, page = _read(example)
    for column in NUMERIC + CATEGORICAL:
        assert column in page.headers
        assert column in page.captions
    # means, then per numeric column its histogram and its percentiles, per categorical one
    assert page.svgs == 1 + 2 * len(NUMERIC) + len(CATEGORICAL)


def test_example_intervals_are_visible_in_the_charts(example: Path) -> None:
    raw, _ = _read(example)
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"[^>]*class="band"', raw)]
    # the means chart (3), mean and three percentiles per numeric column, 6 shares
    assert len(widths) == len(NUMERIC) + 4 * len(NUMERIC) + 6
    # every interval bar is several times wider than the 2.5 px mark of its estimate
    assert min(widths) >= 10, widths


def _histograms(raw: str) -> list[str]:
    return re.findall(r'<svg class="histogram".*?</svg>', raw)


def test_example_histograms_with_percentiles(example: Path) -> None:
    raw, page = _read(example)
    svgs = _histograms(raw)
    assert len(svgs) == len(NUMERIC)
    for column, svg in zip(NUMERIC, svgs, strict=True):
        assert f"{column}: noisy histogram" in svg
        bars = re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" '
                          r'class="bar"', svg)  # fmt: skip
        assert len(bars) == cli.HISTOGRAM_BINS
        assert all(float(h) >= 0 for *_, h in bars) and any(float(h) > 0 for *_, h in bars)
        # the bars tile the axis left to right; one percentile mark (an interval with
        # caps and an estimate line) each for 25%, 50% and 75%
        xs = [float(x) for x, *_ in bars]
        assert xs == sorted(xs)
        assert svg.count('class="percentile"') == 3
        for label in ("25%", "50%", "75%"):
            assert f'class="plabel">{label}</text>' in svg
    costs = [c for c in page.captions if "histogram (noisy counts, epsilon" in c]
    assert len(costs) == len(NUMERIC)


def test_no_histogram_flag_spends_nothing_on_them(example: Path, tmp_path: Path, capsys) -> None:
    base = ["describe", "--example", "--epsilon", "1", "--seed", "1"]
    assert cli.main(base) == 0
    plain = capsys.readouterr().out
    path = tmp_path / "plain.html"
    assert cli.main([*base, "--html", str(path), "--no-histogram"]) == 0
    without = capsys.readouterr().out
    assert without.replace(f"\nwrote {path}\n", "") == plain  # the very same releases
    assert _histograms(path.read_text(encoding="utf-8")) == []
    # with them (the example fixture) the releases differ: the histograms took a share
    tree = tmp_path / "tree.html"
    assert cli.main([*base, "--quantile-method", "tree", "--html", str(tree)]) == 0
    with_tree = capsys.readouterr().out
    assert cli.main([*base, "--quantile-method", "tree"]) == 0
    assert with_tree.replace(f"\nwrote {tree}\n", "") == capsys.readouterr().out  # free
    raw = tree.read_text(encoding="utf-8")
    assert len(_histograms(raw)) == len(NUMERIC) and "no extra epsilon" in raw


def test_example_metadata_is_a_table_not_a_dict(example: Path) -> None:
    raw, page = _read(example)
    text = "\n".join(page.text)  # one line per text node: cells never run together
    for header in ("statistic", "epsilon", "delta", "mechanism", "declared bounds"):
        assert header in page.headers
    for header in ("measured part", "sensitivity", "noise scale"):
        assert header in page.headers
    assert "{'" not in text and "':" not in text and "PrivacyBudget(" not in text
    assert not re.search(r"\d\.\d{7,}", text), re.search(r".{40}\d\.\d{7,}.{20}", text)
    assert "http://" not in raw and "https://" not in raw and "<script" not in raw
    assert "<img" not in raw  # charts are inline SVG


def test_elements_are_closed_in_order(example: Path, wide: Path) -> None:
    for path in (example, wide):
        nesting = Nesting()
        nesting.feed(path.read_text(encoding="utf-8"))
        assert nesting.errors == [] and nesting.open == [], (nesting.errors[:5], nesting.open)


def test_every_table_scrolls_in_its_own_box(example: Path, wide: Path) -> None:
    for path in (example, wide):
        _, page = _read(path)
        assert page.table_parents
        for tag, attrs in page.table_parents:
            assert tag == "div" and "scroll" in attrs.get("class", "").split()


def test_wide_by_report_escapes_names_and_keeps_intervals(wide: Path) -> None:
    raw, page = _read(wide)
    assert "x&lt;0 &amp; a_long_measure_name" in raw and "x<0 &" not in raw
    assert "north &amp; &lt;east&gt;" in raw and "answer 3 &lt;&amp;&gt;" in raw
    for name in [*WIDE_NUMERIC, *SITES, *SHIFTS, "answer 3 <&>"]:
        assert name in page.headers
    # count, mean and std of 8 columns for 3 x 2 groups; 10 shares for each group
    assert len([c for c in page.cells if c["ci"]]) == 8 * 3 * 6 + 10 * 6
    assert page.svgs == len(WIDE_NUMERIC) + 1
    assert _histograms(raw) == []  # no percentiles per key, no histograms


# ----------------------------------------------------------------------------- browser

_PROBE = """<script>
(() => {
  const root = document.documentElement, body = document.body;
  const outside = [...body.querySelectorAll("*")].filter(
    (e) => !e.closest(".scroll") && e.getBoundingClientRect().right > root.clientWidth + 0.5);
  body.dataset.scrollWidth = root.scrollWidth;
  body.dataset.clientWidth = root.clientWidth;
  body.dataset.outside = outside.map((e) => e.tagName).join(" ");
  body.dataset.svgs = [...document.querySelectorAll("svg")].filter(
    (s) => s.getBoundingClientRect().width > 100 && s.getBoundingClientRect().height > 40).length;
  body.dataset.histograms = [...document.querySelectorAll("svg.histogram")].filter(
    (s) => s.getBoundingClientRect().width > 300 && s.getBoundingClientRect().height > 150
      && s.querySelectorAll("rect.bar").length > 0
      && [...s.querySelectorAll("rect.bar")].every((r) => r.getBoundingClientRect().width > 0)
      && s.getBoundingClientRect().right <= root.clientWidth + 0.5).length;
  body.dataset.brokenImages = [...document.images].filter(
    (i) => !(i.complete && i.naturalWidth > 0)).length;
  body.dataset.scrolling = [...document.querySelectorAll(".scroll")].filter(
    (e) => e.scrollWidth > e.clientWidth).length;
})();
</script>"""


def _chromium(args: list[str], profile: Path) -> str:
    chromium = shutil.which("chromium")
    assert chromium is not None
    done = subprocess.run(
        [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _rendered(path: Path, width: int, tmp_path: Path) -> Page:
    """The DOM Chromium builds for the report (with a probe script added) at ``width``."""
    probed = tmp_path / f"probed-{path.stem}-{width}.html"
    probed.write_text(
        path.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"), encoding="utf-8"
    )
    dom = _chromium(
        ["--dump-dom", f"--window-size={width},1000", probed.as_uri()], tmp_path / "profile"
    )
    page = Page()
    page.feed(dom)
    return page


def test_report_in_a_real_browser(example: Path, wide: Path, tmp_path: Path) -> None:
    if shutil.which("chromium") is None:
        pytest.skip("chromium is not installed (apt-get install chromium): no browser check")
    for path, width in ((example, 1400), (example, 900), (wide, 1400), (wide, 900)):
        _, source = _read(path)
        page = _rendered(path, width, tmp_path)
        seen = page.body_attrs
        assert seen, f"{path.name}: the page did not load"
        assert int(seen["data-scroll-width"]) <= int(seen["data-client-width"]), seen
        assert seen["data-outside"] == "", seen
        assert int(seen["data-svgs"]) == source.svgs, seen
        assert seen["data-broken-images"] == "0"
        histograms = len(NUMERIC) if path == example else 0  # drawn, inside the window
        assert int(seen["data-histograms"]) == histograms, seen
        if path == wide:  # the grouped table is wider than the window: it scrolls in its box
            assert int(seen["data-scrolling"]) >= 1, seen
    png = tmp_path / "example.png"
    _chromium(
        [f"--screenshot={png}", "--window-size=1400,2000", "--hide-scrollbars", example.as_uri()],
        tmp_path / "profile",
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
