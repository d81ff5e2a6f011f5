"""The one exception of ``pandas-dp``, shared by every part of the command.

:class:`CLIError` is raised for anything wrong with how the command was called --
an argument, the schema file, a column, the data file's header -- always before
data is read or budget is charged; ``main`` turns it into a one-line message on
stderr and exit status 2.
"""

from __future__ import annotations

__all__ = ["CLIError"]


class CLIError(Exception):
    """A usage, schema or declaration error: printed on stderr, exit status 2."""


def _one_line(text: str) -> str:
    """``text`` with its line breaks and runs of spaces folded into single spaces."""
    return " ".join(text.split())
