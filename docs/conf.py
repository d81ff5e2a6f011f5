"""Sphinx configuration of the pandas-dp documentation.

Build it with ``docs/build.sh`` (or ``sphinx-build -W -b html docs docs/_build/html``).

Two rules keep the build reproducible and offline (the CI machine only reaches the
package index):

* **No network at build time.** Intersphinx links to pandas, numpy and pandera are
  off by default, because fetching their inventories needs the network and a failed
  fetch is a warning, which ``-W`` turns into an error. Set
  ``PANDAS_DP_DOCS_INTERSPHINX=1`` to turn them on for an online build (the release
  build). Without them, references to pandas/numpy/pandera objects render as plain
  text instead of links; nothing else changes.
* **Figures are drawn at build time**, with the ``plot`` directive of matplotlib
  (Agg backend, fixed ``random_state`` seeds, a few seconds in all); nothing is
  downloaded and no notebook is executed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE / "_ext"))

import pandas_dp  # noqa: E402  (registers the .dp accessors autodoc imports)

# -- project ----------------------------------------------------------------------
project = "pandas-dp"
author = "pandas-dp developers"
copyright = "2026, pandas-dp developers"
release = pandas_dp.__version__
version = ".".join(release.split(".")[:2])

# -- extensions -------------------------------------------------------------------
extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx_autosummary_accessors",
    "numpydoc",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "matplotlib.sphinxext.plot_directive",
    "pandas_dp_docs",  # docs/_ext: renders tables computed by the library
]

import sphinx_autosummary_accessors  # noqa: E402

templates_path = ["_templates", sphinx_autosummary_accessors.templates_path]
exclude_patterns = ["_build", "build.sh", "**/.ipynb_checkpoints", "_scripts", "_ext"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"

# -- MyST (Markdown pages) --------------------------------------------------------
myst_enable_extensions = ["colon_fence", "dollarmath", "deflist", "attrs_inline"]
myst_heading_anchors = 3

# -- autodoc / autosummary / numpydoc ---------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"  # the numpydoc sections give the types; signatures stay short
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True

# -- intersphinx (opt-in, see the module docstring) -------------------------------
if os.environ.get("PANDAS_DP_DOCS_INTERSPHINX") == "1":
    intersphinx_mapping = {
        "python": ("https://docs.python.org/3", None),
        "pandas": ("https://pandas.pydata.org/docs/", None),
        "numpy": ("https://numpy.org/doc/stable/", None),
        "pandera": ("https://pandera.readthedocs.io/en/stable/", None),
        "matplotlib": ("https://matplotlib.org/stable/", None),
    }
else:
    intersphinx_mapping = {}

# -- figures: matplotlib's plot directive -----------------------------------------
plot_include_source = True
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_pre_code = (
    "import numpy as np\nimport pandas as pd\nimport matplotlib.pyplot as plt\nimport pandas_dp\n"
)
plot_rcparams = {
    "figure.figsize": (7.0, 3.6),
    "figure.autolayout": True,
    "font.size": 9.0,
    "savefig.bbox": "tight",
}
plot_apply_rcparams = True

# -- HTML -------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"pandas-dp {release}"
html_static_path = ["_static"]
html_css_files = ["pandas-dp.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
html_context = {"default_mode": "auto"}
