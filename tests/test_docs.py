"""The examples on the documentation pages run as shown.

Every Markdown page under ``docs/`` with ``>>>`` examples is run as a doctest, so
that the docs cannot drift from the library's behaviour. (``docs/build.sh`` runs the
same check before building the HTML.)
"""

from __future__ import annotations

import doctest
import inspect
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGES = sorted(
    page
    for page in DOCS.rglob("*.md")
    if "_build" not in page.parts and ">>>" in page.read_text(encoding="utf-8")
)


@pytest.mark.skipif(not PAGES, reason="the docs/ folder is not available")
@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(DOCS)))
def test_page_examples_run_as_shown(page: Path) -> None:
    result = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
    )
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} example(s) of {page.name} failed (see stdout)"


def _sections(doc: str) -> dict[str, str]:
    """A numpydoc docstring cut at its section headers (a title line over dashes)."""
    parts = re.split(r"^([A-Z][A-Za-z ]+)\n-+\n", doc, flags=re.MULTILINE)
    return {title: body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def _public_methods() -> list[tuple[str, object]]:
    from pandas_dp.accessor.frame import DPFrameAccessor
    from pandas_dp.accessor.groupby import DPGroupBy
    from pandas_dp.accessor.series import DPSeriesAccessor

    return [
        (f"{cls.__name__}.{name}", member)
        for cls in (DPFrameAccessor, DPSeriesAccessor, DPGroupBy)
        for name, member in inspect.getmembers(cls, inspect.isfunction)  # mixins' too
        if not name.startswith("_")
    ]


@pytest.mark.parametrize("name, method", _public_methods(), ids=[n for n, _ in _public_methods()])
def test_every_parameter_is_documented_in_its_section(name: str, method: object) -> None:
    doc = inspect.getdoc(method) or ""
    sections = _sections(doc)
    params = [p for p in inspect.signature(method).parameters if p != "self"]  # type: ignore[arg-type]
    if params:
        documented = re.findall(  # (numpydoc's **name for a **name parameter)
            r"^\*{0,2}(\w+) :", sections.get("Parameters", ""), flags=re.MULTILINE
        )
        undocumented = set(params) - set(documented)
        assert not undocumented, f"{name}: undocumented {undocumented}"
    for title, body in sections.items():
        if title != "Parameters":
            stray = re.findall(r"^(\w+) :", body, flags=re.MULTILINE)
            assert not set(stray) & set(params), f"{name}: parameters under {title!r}: {stray}"


def test_quantile_method_text_states_the_current_interval_share() -> None:
    """The stamped ``method`` text reads the share from the constant the code uses."""
    from pandas_dp.accessor.frame import DPFrameAccessor
    from pandas_dp.stats.quantiles import estimators as quantile_estimators

    doc = inspect.getdoc(DPFrameAccessor.median) or ""
    share = f"{quantile_estimators.INTERVAL_SHARE:.0%} of the budget"
    assert share in " ".join(doc.split())
