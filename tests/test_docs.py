"""The examples on the documentation pages run as shown.

Every Markdown page under ``docs/`` with ``>>>`` examples is run as a doctest, so
that the docs cannot drift from the library's behaviour. (``docs/build.sh`` runs the
same check before building the HTML.)
"""

from __future__ import annotations

import doctest
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
