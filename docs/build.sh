#!/usr/bin/env bash
# Build the HTML documentation with warnings as errors (used by CI), from a clean slate.
#
#   pip install -e ".[docs]"      # once: Sphinx, the theme, numpydoc, MyST, matplotlib
#   docs/build.sh                 # -> docs/_build/html/index.html
#
# 1. runs the examples of the Markdown pages as doctests (they must run as shown);
# 2. runs sphinx-build -W: every warning is an error. Nothing is fetched from the
#    network (intersphinx is off unless PANDAS_DP_DOCS_INTERSPHINX=1, see docs/conf.py)
#    and the figures are drawn at build time with matplotlib's Agg backend.
#
# Extra sphinx-build options can be passed in SPHINXOPTS (e.g. SPHINXOPTS="-j auto").
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python}
rm -rf docs/_build docs/api/generated

echo "== doctests of the documentation pages"
mapfile -t pages < <(grep -rl --include='*.md' -e '>>>' docs --exclude-dir=_build | sort)
"$python" -m doctest -o ELLIPSIS -o NORMALIZE_WHITESPACE "${pages[@]}"
echo "${#pages[@]} pages passed"

echo "== sphinx-build -W"
start=$(date +%s)
# shellcheck disable=SC2086
MPLBACKEND=Agg "$python" -m sphinx -W --keep-going -q -b html ${SPHINXOPTS:-} docs docs/_build/html
echo "built docs/_build/html in $(($(date +%s) - start)) s"
