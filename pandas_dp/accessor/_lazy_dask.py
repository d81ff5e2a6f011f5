"""Register ``.dp`` on Dask collections when Dask is used, without importing Dask.

``import pandas_dp`` must stay fast: importing ``dask.dataframe`` takes most of a
second. If it is already imported, the accessors are registered at once; otherwise
a meta path finder waits for ``import dask.dataframe`` (by anyone, later) and
registers them right after that module has run. Without Dask installed nothing
happens.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

__all__ = ["install"]

_TARGET = "dask.dataframe"


def _register() -> None:
    try:
        from pandas_dp.accessor.dask import register

        register()
    except Exception as exc:  # never break the user's Dask import
        warnings.warn(f"pandas_dp: .dp is not available on Dask ({exc})", stacklevel=2)


class _AfterDaskDataFrame:
    """A meta path finder that only wraps the loading of ``dask.dataframe``."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != _TARGET:
            return None
        if self in sys.meta_path:  # once: find the real spec without us
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        loader: Any = None if spec is None else spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            run(module)
            _register()

        loader.exec_module = exec_module  # this module's loader instance only
        return spec


def install() -> None:
    """Register now if ``dask.dataframe`` is loaded, else when it is imported."""
    if _TARGET in sys.modules:
        _register()
    elif not any(isinstance(f, _AfterDaskDataFrame) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterDaskDataFrame())  # type: ignore[arg-type]
