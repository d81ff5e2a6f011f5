"""Schema files of ``pandas-dp``: pandera schemas read from and written to YAML.

:func:`load_schema` reads a file and turns every way it can be malformed into a
:class:`~pandas_dp.cli.CLIError`; :func:`schema_to_yaml` writes one without losing
the pandas-dp metadata (the privacy unit); :func:`example_paths` locates the bundled
survey and its schema in ``pandas_dp/data``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from pandas_dp.accessor._groupby_base import contributions
from pandas_dp.cli._errors import CLIError, _one_line

__all__ = ["example_paths", "example_paths_context", "load_schema", "schema_to_yaml"]


def load_schema(path: str | os.PathLike[str]) -> Any:
    """Read a pandera ``DataFrameSchema`` from a YAML file, or explain what is wrong.

    Parameters
    ----------
    path : str or path-like
        A file in the format of ``schema.to_yaml()`` (or :func:`schema_to_yaml`).

    Returns
    -------
    pandera.pandas.DataFrameSchema

    Raises
    ------
    CLIError
        If the file is missing or unreadable, is not YAML, is not a mapping with a
        ``columns`` entry, or pandera cannot build a schema from it (the message
        names the problem).

    Examples
    --------
    >>> from pandas_dp.cli import example_paths, load_schema
    >>> sorted(load_schema(example_paths()[1]).columns)
    ['age', 'hours_per_week', 'income', 'region', 'smoker']
    """
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError as err:  # pragma: no cover - pyyaml is a dependency
        raise CLIError("reading a YAML schema needs pyyaml: pip install pyyaml") from err
    import pandera.pandas as pa

    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CLIError(f"schema file {str(where)!r} does not exist") from None
    except (OSError, UnicodeDecodeError) as err:
        raise CLIError(f"cannot read the schema file {str(where)!r}: {err}") from None
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        problem = getattr(err, "problem", None) or _one_line(str(err))
        at = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        raise CLIError(f"schema file {str(where)!r} is not valid YAML: {problem}{at}") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("columns"), dict | list):
        raise CLIError(
            f"schema file {str(where)!r} is not a pandera DataFrameSchema: expected a "
            f"mapping with a 'columns' entry, as schema.to_yaml() writes"
        )
    try:
        schema = pa.DataFrameSchema.from_yaml(text)
    except Exception as err:  # pandera raises many kinds; all mean a bad file
        raise CLIError(
            f"schema file {str(where)!r} is not a valid pandera schema: "
            f"{type(err).__name__}: {_one_line(str(err))}"
        ) from None
    try:  # malformed pandas-dp metadata (privacy unit) is a schema error too
        contributions(pd.DataFrame(columns=list(schema.columns)), None, None, schema=schema)
    except (ValueError, TypeError) as err:
        raise CLIError(f"schema file {str(where)!r}: {err}") from None
    return schema


def schema_to_yaml(schema: Any, stream: str | os.PathLike[str] | None = None) -> str | None:
    """``schema.to_yaml()``, keeping the schema's ``metadata`` (the privacy unit).

    pandera's ``to_yaml`` drops a ``DataFrameSchema``'s ``metadata``, where pandas-dp
    reads the privacy unit and its contribution bounds; its ``from_yaml`` reads a
    top-level ``metadata`` entry back. This writes that entry.

    Parameters
    ----------
    schema : pandera.pandas.DataFrameSchema
        The schema to write.
    stream : str or path-like, optional
        A file to write; the YAML text is returned when omitted.

    Returns
    -------
    str or None
        The YAML text, or ``None`` when written to ``stream``.

    Examples
    --------
    >>> import pandera.pandas as pa
    >>> from pandas_dp.cli import schema_to_yaml
    >>> s = pa.DataFrameSchema({"pid": pa.Column(int), "x": pa.Column(float)},
    ...                        metadata={"pandas_dp": {"privacy_unit": "pid",
    ...                                                "max_rows_per_unit": 3}})
    >>> pa.DataFrameSchema.from_yaml(schema_to_yaml(s)).metadata
    {'pandas_dp': {'privacy_unit': 'pid', 'max_rows_per_unit': 3}}
    """
    import yaml  # type: ignore[import-untyped]

    text = str(schema.to_yaml())
    metadata = getattr(schema, "metadata", None)
    if metadata:
        text += yaml.safe_dump({"metadata": dict(metadata)}, sort_keys=False)
    if stream is None:
        return text
    Path(stream).write_text(text, encoding="utf-8")
    return None


@contextmanager
def example_paths_context() -> Iterator[tuple[Path, Path]]:
    """The bundled survey and its YAML schema as real files (see :func:`example_paths`)."""
    root = resources.files("pandas_dp.data")
    with (
        resources.as_file(root.joinpath("survey.csv")) as data,
        resources.as_file(root.joinpath("survey_schema.yaml")) as schema,
    ):
        yield Path(data), Path(schema)


def example_paths() -> tuple[Path, Path]:
    """The paths of the bundled survey (``survey.csv``) and its schema (``survey_schema.yaml``).

    Returns
    -------
    tuple of pathlib.Path
        ``(data, schema)``; the files of the installed package.

    Examples
    --------
    >>> from pandas_dp.cli import example_paths
    >>> [p.name for p in example_paths()]
    ['survey.csv', 'survey_schema.yaml']
    """
    root = resources.files("pandas_dp.data")
    return Path(str(root.joinpath("survey.csv"))), Path(str(root.joinpath("survey_schema.yaml")))
