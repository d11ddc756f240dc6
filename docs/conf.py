"""Sphinx configuration: the site built from docs/ (``bash scripts/docs.sh``).

The guides and the op reference are Markdown (MyST); the API reference pages are written
at build time from the package (``_ext/apipages.py``); the pictures are drawn at build
time from code (``_ext/pictures.py``).
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))  # this checkout's tensordict, not an installed one
os.environ.setdefault("MPLBACKEND", "Agg")

project = "tensordict"
author = "the tensordict contributors"
copyright = "the tensordict contributors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "apipages",
    "pictures",
    "autolinks",
    "internal_links",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "README.md"]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

autodoc_member_order = "alphabetical"
autodoc_typehints = "signature"
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = True
autoclass_content = "class"  # not nn.Module.__init__'s docstring under every module
napoleon_google_docstring = True
napoleon_numpy_docstring = False

html_theme = "furo"
html_title = "tensordict"
html_static_path = ["_static"]
html_css_files = ["tensordict.css"]
pygments_style = "friendly"
pygments_dark_style = "monokai"

# The API pages hold hundreds of entries: listing each in every page's navigation would
# make every page megabytes long (the "on this page" list still shows the sections).
toc_object_entries = False
