"""Which engine computes a release: chosen by the type of the data.

:func:`register_engine` ties an engine to a data type; :func:`engine_for` finds it
by walking the type's method resolution order, so a subclass of a registered type
gets its parent's engine. An engine for a library's types that need not be
imported with pandas-dp (Dask's) is registered by its module; the module
is named in :data:`PLUGINS` and imported the first time data of that library
arrives (its ``register()`` is called then). Anything else -- pandas objects, numpy
arrays -- goes to the in-memory engine.

Examples
--------
>>> import pandas as pd
>>> engine_for(pd.Series([1.0])).name
'pandas'
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from pandas_dp.engines.in_memory import PANDAS
from pandas_dp.engines.protocol import Engine

__all__ = ["PLUGINS", "engine_for", "engine_of", "register_engine"]

_ENGINES: dict[type, Engine] = {}

#: The top-level package of a data type -> the module whose ``register()`` registers
#: its engine (called the first time data of that package arrives).
PLUGINS: dict[str, str] = {"dask": "pandas_dp.engines.dask"}


def register_engine(data_type: type, engine: Engine) -> None:
    """Compute releases of ``data_type`` (and its subclasses) with ``engine``.

    Parameters
    ----------
    data_type : type
        The type of the data (a frame or a column of it).
    engine : Engine
        An object implementing :class:`~pandas_dp.engines.protocol.Engine`.
    """
    if not isinstance(engine, Engine):
        raise TypeError(
            f"{type(engine).__name__} does not implement the engine protocol "
            f"(pandas_dp.engines.protocol.Engine): it needs name, exact_values, groups, "
            f"observed_groups, observed_counts, kept_groups, truncated and category_counts"
        )
    _ENGINES[data_type] = engine


def _registered(data: object) -> Engine | None:
    for klass in type(data).__mro__:
        if klass in _ENGINES:
            return _ENGINES[klass]
    return None


def engine_for(data: object) -> Engine:
    """The engine of ``data``: registered for its type, else the in-memory engine.

    Parameters
    ----------
    data : object
        A frame or column (pandas, Dask, ...).

    Returns
    -------
    Engine
    """
    found = _registered(data)
    if found is not None:
        return found
    plugin = PLUGINS.get(type(data).__module__.partition(".")[0])
    if plugin is not None:
        importlib.import_module(plugin).register()  # registers its engine
        found = _registered(data)
    return PANDAS if found is None else found


def engine_of(values: Iterable[object]) -> Engine:
    """The engine of the first value with an engine of its own (else the in-memory one)."""
    for value in values:
        engine = engine_for(value)
        if engine is not PANDAS:
            return engine
    return PANDAS
