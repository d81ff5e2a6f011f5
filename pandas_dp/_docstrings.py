"""Parameter text written once and stamped into the docstrings that need it.

pandas keeps the text of a keyword many methods share in one place and adds it with
its ``doc`` decorator; this module does the same for numpydoc docstrings. A method
that takes a parameter and does not document it itself gets the shared entry added
to its ``Parameters`` section (created before the next section if there is none),
so ``help()`` and the API pages describe it without a copy in the source. A method
that documents the parameter keeps its own text; stamping twice changes nothing.

The accessors stamp their keywords (:mod:`pandas_dp.accessor._docs`); an interface
and its implementations stamp theirs with :func:`shared_parameters`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["add_parameters", "shared_parameters"]

T = TypeVar("T", bound=type)

#: The numpydoc sections that follow ``Parameters``.
_AFTER_PARAMETERS = ("Returns", "Yields", "Raises", "See Also", "Notes", "Examples")
_HEADER = "Parameters\n----------\n"


def _next_section(text: str) -> int:
    """Where the first numpydoc section after ``Parameters`` starts in ``text``."""
    names = "|".join(_AFTER_PARAMETERS)
    found = re.search(rf"^(?:{names})\n-+\n", text, flags=re.MULTILINE)
    return found.start() if found else len(text)


def add_parameters(fn: Callable[..., Any], text_of: Callable[[str], str | None]) -> None:
    """Add the entries of the parameters ``fn`` takes and does not document.

    Parameters
    ----------
    fn : callable
        The function or method whose ``__doc__`` is completed in place.
    text_of : callable
        Gives a parameter's name its numpydoc entry (``"name : type\\n    Text."``),
        or None where there is no shared text for it.
    """
    doc = inspect.getdoc(fn) or ""
    names = [p for p in inspect.signature(fn).parameters if p not in ("self", "cls")]
    entries = {p: text_of(p) for p in names}
    missing = [p for p in names if entries[p] is not None and f"\n{p} :" not in f"\n{doc}"]
    if not missing:
        return
    text = "\n".join(str(entries[p]) for p in missing)
    if _HEADER in doc:
        head, tail = doc.split(_HEADER, 1)
    else:
        cut = _next_section(doc)
        head, tail = doc[:cut].rstrip("\n") + "\n\n", doc[cut:]
    cut = _next_section(tail)
    listed = (tail[:cut].rstrip("\n") + "\n" + text).lstrip("\n")
    fn.__doc__ = head + _HEADER + listed + ("\n\n" + tail[cut:] if cut < len(tail) else "")


def shared_parameters(texts: Mapping[str, str]) -> Callable[[T], T]:
    """Class decorator: stamp ``texts`` into the class's own public methods.

    Parameters
    ----------
    texts : mapping of str to str
        A parameter's name to its numpydoc entry.

    Returns
    -------
    callable
        The decorator; it returns the class it is given.

    Examples
    --------
    >>> @shared_parameters({"name": "name : str\\n    The budget's name."})
    ... class Store:
    ...     def count(self, name: str) -> int:
    ...         '''How many rows the budget has.'''
    ...         return 0
    >>> print(Store.count.__doc__)
    How many rows the budget has.
    <BLANKLINE>
    Parameters
    ----------
    name : str
        The budget's name.
    """

    def stamp(cls: T) -> T:
        for name, member in vars(cls).items():
            if inspect.isfunction(member) and not name.startswith("_"):
                add_parameters(member, texts.get)
        return cls

    return stamp
