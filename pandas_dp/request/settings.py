"""The privacy keyword arguments of a release, validated once: :class:`Settings`.

A call's ``epsilon``, ``delta``, mechanism, output bounding, neighbouring relation,
out-of-bounds policy, randomness and budget, and the privacy unit's contribution
bounds (:class:`Contributions`): public facts only, checked before anything is
charged or read. :mod:`pandas_dp.plan.plans` builds its measurements from them.

Examples
--------
>>> s = Settings(epsilon=1.0, neighbouring="substitute", rows=100)
>>> s.public_n, s.contributions.rows
(100, 1)
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from pandas_dp.budget.budgets import PrivacyBudget
from pandas_dp.noise.mechanisms import RandomSource
from pandas_dp.noise.mechanisms.source import secure_source
from pandas_dp.noise.plans import NoisePlan, check_mode, plan_noise
from pandas_dp.request.declarations import check_out_of_bounds

__all__ = [
    "NEIGHBOURING",
    "Contributions",
    "Settings",
    "check_budget",
    "check_neighbouring",
    "check_seed",
    "check_skipna",
    "typed_key",
]

#: The neighbouring relations (DESIGN.md, "The privacy model").
NEIGHBOURING: tuple[str, ...] = ("add_remove", "substitute")


def check_neighbouring(neighbouring: str) -> str:
    """Return ``neighbouring`` if it names a relation, else raise ``ValueError``."""
    if neighbouring not in NEIGHBOURING:
        raise ValueError(
            f"neighbouring={neighbouring!r} is not a neighbouring relation; use "
            f"'add_remove' (the default: one person added or removed, the number of "
            f"rows private) or 'substitute' (one person's rows changed; declares the "
            f"frame's length public)"
        )
    return neighbouring


def check_skipna(value: Any) -> None:
    """``skipna`` must be ``True``: missing values are always skipped.

    pandas' ``skipna=False`` returns NaN as soon as one value is missing, so one
    person's missing value would change the release from a number to NaN, without
    noise: that cannot be differentially private.

    Examples
    --------
    >>> check_skipna(True)
    """
    if value is not True:
        raise ValueError(
            f"skipna={value!r} is not supported: missing values are always skipped, as "
            f"pandas' default skipna=True does. skipna=False would return NaN whenever "
            f"one value is missing -- one person's missing value, revealed without noise"
        )


def check_seed(value: Any) -> Any:
    """Return ``value`` if it is a valid ``random_state``, else raise with what it may be.

    Parameters
    ----------
    value : None, int or numpy.random.Generator
        ``None`` (secure noise), a non-negative int or a generator. Other types are
        explained by :class:`~pandas_dp.noise.mechanisms.RandomSource`.

    Returns
    -------
    object
        ``value`` unchanged.

    Raises
    ------
    ValueError
        For a negative int (numpy seeds are non-negative).

    Examples
    --------
    >>> check_seed(0)
    0
    """
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and value < 0:
        raise ValueError(
            f"random_state must be a non-negative int seed (e.g. random_state=0), None "
            f"for secure noise, or a numpy.random.Generator; got {value}"
        )
    return value


def check_budget(budget: Any) -> PrivacyBudget | None:
    """Return ``budget`` if it is a :class:`~pandas_dp.PrivacyBudget` or ``None``, else raise.

    Parameters
    ----------
    budget : PrivacyBudget or None

    Returns
    -------
    PrivacyBudget or None
        ``budget`` unchanged.

    Raises
    ------
    TypeError
        For anything else, such as a number.

    Examples
    --------
    >>> check_budget(None) is None
    True
    """
    if budget is not None and not isinstance(budget, PrivacyBudget):
        hint = (
            f" (to cap spending at epsilon={budget}, pass "
            f"budget=pandas_dp.PrivacyBudget(epsilon={budget}))"
            if isinstance(budget, int | float) and not isinstance(budget, bool)
            else ""
        )
        raise TypeError(
            f"budget must be a pandas_dp.PrivacyBudget or None; got {budget!r} (of type "
            f"{type(budget).__name__}){hint}. The epsilon of this release is epsilon=; "
            f"budget= is the PrivacyBudget it is charged to"
        )
    return budget


def typed_key(value: Any) -> Hashable:
    """``value`` as part of a cache key that tells apart what ``==`` does not.

    ``1 == 1.0 == True`` and ``-0.0 == 0.0``, yet each prints (and may be released)
    differently: the key holds the type and the value, a float's sign (``-0.0``
    is not ``0.0``) and, for types other than ``str``, ``int``, ``float`` and
    ``None``, the ``str``; element by element for a tuple. An unhashable value
    makes the key unhashable (the caller then does not cache).

    Examples
    --------
    >>> typed_key(0.0) == typed_key(-0.0), typed_key(1) == typed_key(True)
    (False, False)
    >>> typed_key((1, "a")) == typed_key((1.0, "a"))
    False
    """
    kind = type(value)
    if kind is str or kind is int or value is None:  # its type and value say it all
        return (kind, value)
    if kind is float:  # its sign tells -0.0 from 0.0
        return (kind, value, math.copysign(1.0, value))
    if kind is tuple:
        return (kind, tuple(typed_key(v) for v in value))
    return (kind, value, str(value))


@dataclass(frozen=True)
class Contributions:
    """What one privacy unit may contribute (public; REFERENCE.md §9, §10).

    Attributes
    ----------
    unit : label or None
        The column naming the privacy unit; ``None``: every row is its own unit.
    rows : int
        ``max_rows_per_unit`` (``k``): rows one unit may hold in all.
    groups : int
        ``max_groups_per_unit`` (``g``): groups one unit may touch in a group-by.
    rows_per_group : int
        ``max_rows_per_group`` (``c``): rows one unit may hold in one group.
    """

    unit: Hashable | None = None
    rows: int = 1
    groups: int = 1
    rows_per_group: int = 1

    @cached_property
    def key(self) -> tuple[Hashable, ...]:
        """The bounds as a cache key (:func:`typed_key` of each), made once."""
        return tuple(typed_key(v) for v in (self.unit, self.rows, self.groups, self.rows_per_group))


#: What ``epsilon`` and ``delta`` may be (not ``bool``, checked apart).
_NUMBER = (int, float, np.number)


@dataclass(frozen=True)
class Settings:
    """The privacy keyword arguments of a call, validated once (public facts only).

    Attributes
    ----------
    epsilon, delta : float
        The budget of the whole release.
    mechanism : {"laplace", "gaussian"}
    bounding : {"bit", "truncated", "none"}
    neighbouring : {"add_remove", "substitute"}
        ``"add_remove"`` (default): the number of rows is private.
        ``"substitute"``: the frame's length is declared public.
    out_of_bounds : {"clip", "raise"}
    random_state : None, int or Generator
        ``None``: noise from the OS CSPRNG.
    budget : PrivacyBudget or None
    rows : int or None
        The frame's length where it is public (``substitute``), else ``None``.
    contributions : Contributions
        The privacy unit and its contribution bounds (default: one row per unit).
    """

    epsilon: float
    delta: float = 0.0
    mechanism: str = "laplace"
    bounding: str = "bit"
    neighbouring: str = "add_remove"
    out_of_bounds: str = "clip"
    random_state: Any = None
    budget: PrivacyBudget | None = None
    rows: int | None = None
    contributions: Contributions = Contributions()
    source: RandomSource = field(init=False, repr=False)

    def __post_init__(self) -> None:
        eps = self.epsilon
        if type(eps) is bool or not isinstance(eps, _NUMBER):
            raise TypeError(
                f"epsilon must be a number (e.g. epsilon=1.0); got {type(eps).__name__}"
            )
        if not (math.isfinite(eps) and eps > 0):
            raise ValueError(
                f"epsilon must be a positive finite number (e.g. epsilon=1.0); got {eps}"
            )
        dlt = self.delta
        if type(dlt) is bool or not isinstance(dlt, _NUMBER):
            raise TypeError(f"delta must be a number (e.g. delta=1e-6); got {type(dlt).__name__}")
        object.__setattr__(self, "epsilon", float(eps))
        object.__setattr__(self, "delta", float(dlt))
        check_mode(self.mechanism, self.bounding, self.delta)
        check_neighbouring(self.neighbouring)
        check_out_of_bounds(self.out_of_bounds)
        check_budget(self.budget)
        check_seed(self.random_state)
        source = secure_source() if self.random_state is None else RandomSource(self.random_state)
        object.__setattr__(self, "source", source)

    def noise(
        self, sensitivity: Any, lower: Any, upper: Any, *, share: float = 1.0, **options: Any
    ) -> NoisePlan:
        """Calibrate noise for a vector with ``share`` of this call's epsilon and delta.

        ``options`` go to :func:`~pandas_dp.noise.plans.plan_noise` (``integer``,
        ``joint_l1``, ``joint_l2``, ``max_changed``, ``bounding``).
        """
        options.setdefault("bounding", self.bounding)
        return plan_noise(
            np.asarray(sensitivity, dtype=np.float64),
            np.asarray(lower, dtype=np.float64),
            np.asarray(upper, dtype=np.float64),
            epsilon=self.epsilon * share,
            delta=self.delta * share,
            mechanism=self.mechanism,
            **options,
        )

    def plan_key(self) -> tuple[Hashable, ...]:
        """Everything a plan reads from these settings, as a cache key (public only).

        The budget split, sensitivities, ranges and noise scales of a plan follow
        from these; the randomness, the budget and a private row count are not part
        of it. ``epsilon`` and ``delta`` are floats here (``__post_init__``), keyed
        with the sign of ``delta``; the mechanism, bounding and relation were
        checked against their names; the rest is :func:`typed_key`'s.
        """
        return (
            self.epsilon,
            self.delta,
            math.copysign(1.0, self.delta),
            self.mechanism,
            self.bounding,
            self.neighbouring,
            typed_key(self.public_n),
            self.contributions.key,
        )

    def public(self) -> Settings:
        """These settings without their randomness, budget or private row count: what
        a cached plan keeps (it never holds a call's generator or budget)."""
        return Settings(
            self.epsilon,
            self.delta,
            self.mechanism,
            self.bounding,
            self.neighbouring,
            self.out_of_bounds,
            rows=self.public_n,
            contributions=self.contributions,
        )

    @property
    def public_n(self) -> int | None:
        """The frame's length, where the relation declares it public."""
        return self.rows if self.neighbouring == "substitute" else None
