"""The package's layout: imports without cycles, Dask known only where it belongs,
and version 0.1's module names still importable (DESIGN.md, "Architecture").

The import graph counts every import of a ``pandas_dp`` module: at module level,
inside functions, and under ``if TYPE_CHECKING:`` (a cycle of type-only imports is
still two modules that cannot be understood apart).
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import pandas_dp
from pandas_dp._moved import MOVED

ROOT = Path(pandas_dp.__file__).parent


def _modules() -> dict[str, Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = ["pandas_dp", *path.relative_to(ROOT).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> set[str]:
    """The ``pandas_dp`` modules ``name`` imports, anywhere in its source."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_package else name.split(".")[:-1]
                base = ".".join(pkg[: len(pkg) - node.level + 1] + ([base] if base else []))
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names
            ]
        else:
            continue
        found.update(t for t in targets if t in MODULES and t != name)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return groups


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    assert _cycles(GRAPH) == []


def test_subpackages_import_one_way() -> None:
    """Packages form layers: none imports a package above it (the accessor, the
    command line and plots on top; errors at the bottom)."""
    layers = [
        {"errors", "_docstrings", "_optional"},
        {"noise"},
        {"budget"},
        {"engines"},
        {"result"},
        {"request"},
        {"plan"},
        {"stats"},
        {"accessor", "_moved"},
        {"cli", "plotting", "datasets"},
    ]
    level = {pkg: i for i, layer in enumerate(layers) for pkg in layer}
    wrong = []
    for name, targets in GRAPH.items():
        here = name.split(".")[1] if name.count(".") else None
        if here not in level:  # pandas_dp itself, __main__
            continue
        for t in targets:
            there = t.split(".")[1] if t.count(".") else None
            if there in level and level[there] > level[here]:
                wrong.append(f"{name} -> {t}")
    assert wrong == []


def _mentions_dask(path: Path) -> bool:
    """Whether the code (not its docstrings or comments) names Dask: an import, a
    name, an attribute or a string."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            words = [node.module or "" if isinstance(node, ast.ImportFrom) else ""]
            words += [a.name for a in node.names]
        elif isinstance(node, ast.Name):
            words = [node.id]
        elif isinstance(node, ast.Attribute):
            words = [node.attr]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            words = [] if id(node) in docstrings else [node.value]
        else:
            continue
        if any("dask" in w.lower() for w in words):
            return True
    return False


def test_the_dask_finder_ignores_docstrings(tmp_path: Path) -> None:
    quiet = tmp_path / "quiet.py"
    quiet.write_text(
        '"""Works on Dask too."""\n\n\ndef f():\n    """Dask."""\n    return 1  # dask\n'
    )
    loud = tmp_path / "loud.py"
    loud.write_text('def f(x):\n    return type(x).__module__.startswith("dask.")\n')
    assert not _mentions_dask(quiet)
    assert _mentions_dask(loud)


def test_only_engines_and_accessors_know_dask() -> None:
    """The core never asks "is this Dask?": the engine registry decides."""
    knowing = sorted(
        name
        for name, path in MODULES.items()
        if _mentions_dask(path)
        and not name.startswith(("pandas_dp.engines", "pandas_dp.accessor"))
        and name != "pandas_dp"  # registers ddf.dp when dask.dataframe is imported
    )
    assert knowing == []


@pytest.mark.parametrize("old", sorted(MOVED))
def test_old_module_names_import_the_moved_module(old: str) -> None:
    sys.modules.pop(f"pandas_dp.{old}", None)
    with pytest.warns(DeprecationWarning, match=f"pandas_dp.{MOVED[old]}"):
        module = importlib.import_module(f"pandas_dp.{old}")
    assert module is importlib.import_module(f"pandas_dp.{MOVED[old]}")
