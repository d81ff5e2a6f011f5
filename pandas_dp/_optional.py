"""Compiled code that is used only where numba is installed.

numba is a dependency wherever it has wheels; on a platform without it every
compiled kernel has a numpy (or pure Python) path that gives the same results.
The kernel modules import numba at their top, so they are imported only through
:func:`compiled`, on the first call that needs them (never by ``import pandas_dp``).
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["compiled"]


def compiled(
    module: str, name: str | None = None, *, check: Callable[[Any], object] | None = None
) -> Any | None:
    """A kernel module (or one of its names), or ``None`` where numba is missing.

    Loading a kernel compiles it, or reads it from numba's disk cache; numba's
    warnings while doing so (e.g. a read-only cache directory) are silenced. Cache
    the result (``functools.cache``): a second call imports nothing new but runs
    ``check`` again.

    Parameters
    ----------
    module : str
        The full name of the kernel module, e.g. ``"pandas_dp.engines._kernels"``.
    name : str, optional
        The attribute of the module to return; default: the module itself.
    check : callable, optional
        Called with the loaded kernel (warnings still silenced), e.g. to compile it
        with a small input; if it raises, the numba build is taken as broken and
        ``None`` returned, so the caller keeps to its Python path. Without it, an
        error while importing the module propagates.

    Returns
    -------
    module, object or None
        The kernel; ``None`` without numba (or when ``check`` failed).
    """
    try:
        import numba  # noqa: F401
    except ImportError:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. a read-only cache directory
        try:
            loaded = importlib.import_module(module)
            kernel = loaded if name is None else getattr(loaded, name)
            if check is not None:
                check(kernel)
        except Exception:
            if check is None:
                raise
            return None  # a broken numba: the caller's Python path
        return kernel
