"""A small example dataset bundled with the package.

``survey.csv`` is synthetic: 1,000 made-up people with an age, an income (5 %
missing), weekly working hours, a region and a smoker flag. Nobody in it is real,
so it can be shipped and printed freely; it is there to try the API on.

Examples
--------
>>> df = load_survey()
>>> df.shape
(1000, 5)
>>> sorted(survey_schema().columns)
['age', 'hours_per_week', 'income', 'region', 'smoker']
"""

from __future__ import annotations

from importlib import resources
from typing import TYPE_CHECKING

import pandas as pd

if TYPE_CHECKING:
    import pandera.pandas as pa

__all__ = ["load_survey", "survey_schema"]


def survey_schema() -> pa.DataFrameSchema:
    """The public declarations of the survey: bounds, categories, nullability.

    They are facts anyone may know (an age lies in [18, 90] by the survey's
    design), not facts read off the data. pandera is imported on this call only.

    Returns
    -------
    pandera.pandas.DataFrameSchema
        The schema of :func:`load_survey`'s frame.
    """
    import pandera.pandas as pa  # here, not at import time: it is slow to import

    return pa.DataFrameSchema(
        {
            "age": pa.Column(float, pa.Check.in_range(18, 90)),
            "income": pa.Column(float, [pa.Check.ge(0), pa.Check.le(250_000)], nullable=True),
            "hours_per_week": pa.Column(float, pa.Check.between(0, 80)),
            "region": pa.Column(str, pa.Check.isin(["N", "S", "E", "W"])),
            "smoker": pa.Column(bool),
        },
        name="survey",
    )


def load_survey() -> pd.DataFrame:
    """Load the bundled synthetic survey as a DataFrame.

    Returns
    -------
    pandas.DataFrame
        1,000 rows; columns age, income, hours_per_week, region, smoker.
    """
    with resources.files("pandas_dp.data").joinpath("survey.csv").open("r") as handle:
        return pd.read_csv(handle)
