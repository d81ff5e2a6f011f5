"""A small Sphinx extension for the pandas-dp docs.

* ``dataframe-table`` renders a :class:`pandas.DataFrame` computed *at build time* by a
  function of the library, so that a table in the docs cannot drift from the code::

      ```{dataframe-table} pandas_dp.plan.sensitivity.table_frame
      :columns: statistic, neighbouring, sensitivity, min n
      :literal: sensitivity
      ```

* the accessor methods document their shared keyword arguments (``epsilon``,
  ``bounds``, ``mechanism`` ...) once, in the docstring of
  :mod:`pandas_dp.accessor`; an ``autodoc-process-docstring`` hook adds the ones a
  method takes but does not describe itself to its *Parameters* section, so every
  ``DataFrame.dp.*`` page lists all of its arguments.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any

import pandas as pd
from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _load(path: str) -> Any:
    module_name, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module_name), name)


def _entry(text: str, *, literal: bool = False) -> nodes.entry:
    inline: nodes.Node = nodes.literal(text, text) if literal else nodes.Text(text)
    return nodes.entry("", nodes.paragraph("", "", inline))


class DataFrameTable(SphinxDirective):
    """Call a function that returns a DataFrame and render it as a table."""

    required_arguments = 1
    has_content = False
    option_spec = {  # noqa: RUF012
        "columns": directives.unchanged,
        "caption": directives.unchanged,
        "index": directives.flag,
        "literal": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        frame = _load(self.arguments[0])()
        if not isinstance(frame, pd.DataFrame):
            raise self.error(f"{self.arguments[0]}() did not return a DataFrame")
        if "columns" in self.options:
            wanted = [c.strip() for c in self.options["columns"].split(",")]
            frame = frame[wanted]
        if "index" in self.options:
            frame = frame.reset_index()
        literal = {c.strip() for c in self.options.get("literal", "").split(",") if c.strip()}
        caption = self.options.get("caption", "")
        names = [str(c) for c in frame.columns]
        table = nodes.table(classes=["colwidths-auto"])
        group = nodes.tgroup(cols=len(names))
        table += group
        for _ in names:
            group += nodes.colspec(colwidth=1)
        head = nodes.thead()
        head += nodes.row("", *[_entry(name) for name in names])
        group += head
        body = nodes.tbody()
        for row in frame.itertuples(index=False):
            cells = [
                _entry(str(value), literal=name in literal)
                for name, value in zip(names, row, strict=True)
            ]
            body += nodes.row("", *cells)
        group += body
        if caption:
            table.insert(0, nodes.title(caption, caption))
        container = nodes.container(classes=["dataframe-table"])
        container += table
        return [container]


# ----------------------------------------------------------------------------- parameters

#: Arguments that several accessor methods share but do not all describe.
_EXTRA = {
    "columns": [
        "columns : label or list of labels, optional",
        "    The numeric columns to release. One label gives a number, a list gives a",
        "    Series indexed by column; ``None`` (the default) every numeric column.",
    ],
    "column": [
        "column : label",
        "    The column whose declared categories are counted.",
    ],
    "ddof": [
        "ddof : int, default 1",
        "    Delta degrees of freedom, as in pandas (the divisor is ``n - ddof``).",
    ],
    "numeric_only": [
        "numeric_only : bool, default False",
        "    Count the numeric (and boolean) columns only.",
    ],
    "psd": [
        'psd : {"clip", "higham"}, default "clip"',
        "    The repair to a positive semi-definite matrix: clip negative eigenvalues",
        '    at zero, or (``"higham"``) find the nearest matrix with the released variances.',
    ],
    "categories": [
        "categories : list or dict, optional",
        "    The public categories (for every column, or a dict column -> list); else",
        "    ``Check.isin`` of the schema, else a ``pd.CategoricalDtype``'s categories.",
    ],
}


#: Arguments whose meaning depends on the method.
_BY_METHOD = {
    "var": {
        "method": [
            'method : {"auto", "moments", "direct"}, default "auto"',
            '    ``"direct"`` noises the sample variance (sensitivity ``R^2 / n``);',
            '    ``"moments"`` noises the midpoint-centred sum and sum of squares and',
            '    combines them; ``"auto"`` picks the one the accuracy study favours for',
            "    the neighbouring relation.",
        ]
    },
}
_BY_METHOD["std"] = _BY_METHOD["var"]


def _shared_parameters() -> dict[str, list[str]]:
    """``name -> numpydoc lines`` from the docstring of :mod:`pandas_dp.accessor`."""
    import pandas_dp.accessor as accessor

    doc = inspect.cleandoc(accessor.__doc__ or "")
    block = doc.split("DP parameters:", 1)[1]
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in block.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" ") and " : " in line:
            name = line.split(" : ", 1)[0].strip()
            current = entries.setdefault(name, [line])
        elif current is not None:
            current.append(line)
    return {**_EXTRA, **entries}


_SECTION = re.compile(r"^-{3,}$")


def _entries(lines: list[str]) -> list[tuple[list[str], list[str]]]:
    """Split a numpydoc Parameters body into ``(names, lines)`` entries."""
    out: list[tuple[list[str], list[str]]] = []
    for line in lines:
        if line and not line.startswith(" "):
            head = line.split(" : ", 1)[0] if " : " in line else line
            out.append(([n.strip() for n in head.split(",")], [line]))
        elif out:
            out[-1][1].append(line)
    return out


def _parameters_of(lines: list[str]) -> list[tuple[list[str], list[str]]]:
    """The entries of the Parameters section of a docstring (``[]`` if none)."""
    for i in range(1, len(lines)):
        if lines[i - 1].strip() == "Parameters" and _SECTION.match(lines[i].strip()):
            body: list[str] = []
            for line in lines[i + 1 :]:
                if body and _SECTION.match(line.strip()):
                    body.pop()  # the title line of the next section
                    break
                body.append(line)
            return _entries([line for line in body if line.strip()])
    return []


def _add_shared_parameters(
    app: Sphinx, what: str, name: str, obj: Any, options: Any, lines: list[str]
) -> None:
    """Complete the Parameters section of an accessor method, in signature order."""
    qualname = getattr(obj, "__qualname__", "")
    if what not in ("method", "accessormethod") or not qualname.startswith(
        ("DPFrameAccessor.", "DPSeriesAccessor.")
    ):
        return
    shared = {**_shared_parameters(), **_BY_METHOD.get(obj.__name__, {})}
    # DataFrame.dp.value_counts / proportions refer to the Series versions, and the
    # two Series methods each describe some of the arguments both of them take
    from pandas_dp.accessor import DPSeriesAccessor

    siblings = [obj.__name__]
    if obj.__name__ in ("value_counts", "proportions"):
        siblings += ["value_counts", "proportions"]
    for sibling_name in siblings:
        sibling = getattr(DPSeriesAccessor, sibling_name, None)
        if sibling is None or sibling is obj:
            continue
        for names, entry in _parameters_of((inspect.getdoc(sibling) or "").splitlines()):
            for n in names:
                shared.setdefault(n, entry)
    headers = [i for i in range(1, len(lines)) if _SECTION.match(lines[i].strip())]
    sections = [(lines[i - 1].strip(), i - 1) for i in headers]
    params_at = next((at for title, at in sections if title == "Parameters"), None)
    if params_at is not None:
        following = [at for _, at in sections if at > params_at]
        start, end = params_at, following[0] if following else len(lines)
        while end > params_at + 2 and not lines[end - 1].strip():
            end -= 1
        existing = _entries(lines[params_at + 2 : end])
    else:
        start = end = sections[0][1] if sections else len(lines)
        existing = []
    signature = [p for p in inspect.signature(obj).parameters if p != "self"]
    body: list[str] = []
    used: set[int] = set()
    emitted: list[list[str]] = []
    for param in signature:
        owner = next((i for i, (names, _) in enumerate(existing) if param in names), None)
        if owner is not None:
            if owner not in used:
                used.add(owner)
                body.extend(existing[owner][1])
        elif param in shared and shared[param] not in emitted:
            emitted.append(shared[param])
            body.extend(shared[param])
    for i, (_, entry) in enumerate(existing):
        if i not in used:
            body.extend(entry)
    block = ["Parameters", "----------", *body, ""]
    if start > 0 and lines[start - 1].strip():
        block.insert(0, "")
    lines[start:end] = block


def _hide_private_parameters(
    app: Sphinx,
    what: str,
    name: str,
    obj: Any,
    options: Any,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """Drop ``_private=...`` fields (e.g. of the ``DPMetadata`` dataclass) from signatures."""
    if not signature or "_" not in signature:
        return None
    cleaned = re.sub(r",\s*_\w+=[^,)]*", "", signature)
    return (cleaned, return_annotation) if cleaned != signature else None


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("dataframe-table", DataFrameTable)
    # before numpydoc (priority 500), which turns the sections into reST
    app.connect("autodoc-process-docstring", _add_shared_parameters, priority=400)
    app.connect("autodoc-process-signature", _hide_private_parameters)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
