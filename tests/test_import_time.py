"""``import pandas_dp`` must not import pandera: it is slow to import (~0.15 s).

pandera is imported when a schema is used or a pandera object is built. Not a timed
test: it checks which modules a fresh interpreter has loaded.
"""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import sys
import pandas_dp
from pandas_dp import datasets
from pandas_dp.request import declarations
print(sorted(m for m in sys.modules if m == "pandera" or m.startswith("pandera.")))
"""


def _pandera_modules_after(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


def test_import_pandas_dp_does_not_import_pandera() -> None:
    assert _pandera_modules_after(_PROBE) == "[]"


def test_pandera_is_imported_when_a_schema_is_used() -> None:
    code = """
import sys
from pandas_dp.datasets import load_survey, survey_schema
df = load_survey()
m = df.dp.mean("age", epsilon=1.0, schema=survey_schema(), random_state=0)
print("pandera.pandas" in sys.modules, 18 <= m <= 90)
"""
    assert _pandera_modules_after(code) == "True True"
