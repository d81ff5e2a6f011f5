"""``df.dp(schema=..., ...)``: the accessor with keyword defaults bound."""

from __future__ import annotations

import functools
import inspect
from typing import Any

from pandas_dp.accessor._methods import TAIL

#: Keywords ``df.dp(...)`` may bind as defaults for every method that takes them:
#: the declarations and every privacy keyword.
BINDABLE: tuple[str, ...] = ("epsilon", "delta", "bounds", "categories", "schema", *TAIL["groupby"])


#: Bound keywords a release may not drop: they declare who is protected.
_UNIT_KEYWORDS = ("privacy_unit", "max_rows_per_unit")


class BoundAccessor:
    """The accessor with keyword defaults bound: what ``df.dp(schema=..., ...)`` returns.

    Every method of the accessor is available; a bound keyword is passed to each
    method that takes it, unless the call gives it explicitly. An integer
    ``random_state`` becomes one generator, so successive releases draw fresh
    (reproducible) noise rather than the same noise again.

    Examples
    --------
    >>> import pandas as pd, pandas_dp
    >>> df = pd.DataFrame({"age": [23.0, 35.0, 51.0, 64.0] * 25})
    >>> dp = df.dp(bounds=(0, 100), random_state=0)
    >>> m = dp.mean("age", epsilon=1.0)
    >>> m.attrs["dp"].input_bounds
    {'age': (0.0, 100.0)}
    """

    __slots__ = ("_accessor", "_defaults")

    def __init__(self, accessor: Any, defaults: dict[str, Any]) -> None:
        self._accessor = accessor
        self._defaults = defaults

    def __call__(self, **defaults: Any) -> BoundAccessor:
        """More defaults on top of these."""
        bound: BoundAccessor = self._accessor(**{**self._defaults, **defaults})
        return bound

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._accessor, name)
        if name.startswith("_") or not callable(attr):
            return attr
        params = inspect.signature(attr).parameters
        bound = {k: v for k, v in self._defaults.items() if k in params}
        if name == "groupby":  # its delta is partition selection's, not a default's
            bound.pop("delta", None)
        # a release that cannot take a bound privacy unit must not drop it silently
        dropped = [k for k in _UNIT_KEYWORDS if k in self._defaults and k not in params]
        unit_lost = bool(dropped) and name != "groupby"  # (a group-by keeps the defaults)

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            if unit_lost:
                raise TypeError(
                    f"{name}() cannot honour the bound {dropped}: it has no privacy "
                    f"unit (a Series holds no unit column). Bind the unit on the frame's "
                    f"accessor, df.dp(privacy_unit=..., max_rows_per_unit=...)"
                )
            out = attr(*args, **{**bound, **kwargs})
            if getattr(out, "_bindable", False):  # a group-by keeps the defaults
                return BoundAccessor(out, self._defaults)
            return out

        return call

    def __getitem__(self, columns: Any) -> BoundAccessor:
        """``dp.groupby(k)[column]`` keeps the bound defaults."""
        return BoundAccessor(self._accessor[columns], self._defaults)

    def __dir__(self) -> list[str]:
        return [n for n in dir(self._accessor) if not n.startswith("_")]

    def __repr__(self) -> str:
        keys = ", ".join(sorted(self._defaults))
        return f"<{type(self._accessor).__name__} with defaults for {keys}>"
