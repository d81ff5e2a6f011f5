"""Collection settings for the doctests of the package (``--doctest-modules``).

``pandas_dp.plotting.plots`` needs matplotlib, an optional dependency (the ``plot`` extra):
without it, its docstring examples are not collected, instead of failing.
"""

from __future__ import annotations

import importlib.util

collect_ignore: list[str] = []
if importlib.util.find_spec("matplotlib") is None:
    collect_ignore.append("pandas_dp/plotting.py")
