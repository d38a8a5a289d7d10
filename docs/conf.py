"""Sphinx configuration of maxmargin's documentation.

Build (from the repository root, after ``pip install -e ".[docs]"``)::

    sphinx-build -W -b html docs docs/_build/html        # the site, warnings are errors
    sphinx-build -W -b doctest docs docs/_build/doctest  # runs every example of the pages

Nothing here reaches the network: no intersphinx, and MathJax is only loaded by the reader's
browser. The API pages (``docs/api/``) are generated from the modules' ``__all__`` at the
start of each build by ``_ext/apipages.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import maxmargin

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "maxmargin"
author = "the maxmargin developers"
copyright = "2026, the maxmargin developers"
release = maxmargin.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.doctest",
    "sphinx.ext.mathjax",
    "numpydoc",
    "apipages",
    "matplotlib.sphinxext.plot_directive",
]

# Figures drawn from the code at build time (the plot directive), so they cannot go stale.
plot_formats = [("png", 110)]
plot_html_show_formats = False
plot_html_show_source_link = False
plot_include_source = False

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
# *.inc.md: Markdown fragments included by other pages, not pages of their own
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store", "**/*.inc.md"]

# Markdown pages (MyST): $...$ and $$...$$ math, anchors for headings down to level 3.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3

# API reference: _ext/apipages.py writes one page per function and class (autodoc); numpydoc
# renders the numpy-style docstrings. Class pages document their members with autodoc's
# :members:, so numpydoc does not list them a second time.
autodoc_typehints = "none"
autodoc_member_order = "bysource"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks: set[str] = set()
numpydoc_xref_param_type = False

# Docstrings that docutils misreads, fixed for the rendering only (the source is unchanged),
# each until its docstring is fixed: {object: [(text, replacement)]}.
DOCSTRING_FIXES = {
    # "|phi(x) . phi(z) - K(x, z)|" in an indented line is read as a substitution reference
    "maxmargin.verification.feature_map_identity": [("|phi(x) . phi(z) - K(x, z)|",
                                                     "\\|phi(x) . phi(z) - K(x, z)\\|")],
}


def fix_docstring(app, what, name, obj, options, lines):
    for old, new in DOCSTRING_FIXES.get(name, []):
        lines[:] = [line.replace(old, new) for line in lines]


def setup(app):
    app.connect("autodoc-process-docstring", fix_docstring, priority=100)


# Executed examples (``sphinx-build -b doctest``): every ``testcode``/``doctest`` block runs,
# and its printed output must match the ``testoutput`` block below it.
doctest_global_setup = """
import numpy as np
"""
trim_doctest_flags = True

html_theme = "furo"
html_title = f"maxmargin {release}"
html_static_path: list[str] = []
