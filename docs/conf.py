"""Sphinx configuration of the phsym documentation site.

Build from the repository root (after ``pip install -e ".[docs]"``)::

    sphinx-build -W -b html docs docs/_build/html
"""
from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# gallery examples plot off-screen and must not compile loops ahead of time
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("PHSYM_AOT", "0")

import phsym  # noqa: E402

project = "phsym"
author = "phsym developers"
copyright = "phsym developers"
release = phsym.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**.ipynb_checkpoints", "gallery/*.ipynb", "gallery/*.py",
                    "gallery/*.zip", "gallery/*.json", "gallery/*.md5"]
templates_path = ["_templates"]

# MyST: the user-guide pages stay Markdown; "#anchor" links need heading ids
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 4
# identification-gp.md uses H4 tables under H2 sections on purpose
suppress_warnings = ["myst.header"]

autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": True, "inherited-members": False}
autodoc_typehints = "none"          # numpydoc renders the documented types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# intersphinx needs the network; without it every inventory fetch would be a
# warning (fatal under -W), so the mapping is left empty and the references
# render as plain text.  PHSYM_DOCS_INTERSPHINX=0/1 forces either way.
INTERSPHINX = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sympy": ("https://docs.sympy.org/latest", None),
    "networkx": ("https://networkx.org/documentation/stable", None),
    "control": ("https://python-control.readthedocs.io/en/latest", None),
    "pandas": ("https://pandas.pydata.org/docs", None),
    "dask": ("https://docs.dask.org/en/stable", None),
}


def _online(host: str = "numpy.org", timeout: float = 3.0) -> bool:
    try:
        socket.create_connection((host, 443), timeout=timeout).close()
    except OSError:
        return False
    return True


def _inventories() -> dict:
    """The reachable inventories, downloaded once per build into docs/_build:
    one unreachable or moved inventory must not fail a ``-W`` build."""
    import urllib.request
    cache = ROOT / "docs" / "_build" / "intersphinx"
    cache.mkdir(parents=True, exist_ok=True)
    found = {}
    for name, (url, _) in INTERSPHINX.items():
        path = cache / f"{name}.inv"
        try:
            with urllib.request.urlopen(f"{url}/objects.inv", timeout=10) as resp:
                path.write_bytes(resp.read())
        except Exception as exc:        # noqa: BLE001 - any failure: no links to that project
            print(f"phsym docs: intersphinx inventory of {name} unreachable ({exc}); its links are plain text")
            continue
        found[name] = (url, str(path))
    return found


_flag = os.environ.get("PHSYM_DOCS_INTERSPHINX")
USE_INTERSPHINX = _online() if _flag is None else _flag == "1"
intersphinx_mapping = _inventories() if USE_INTERSPHINX else {}
if not USE_INTERSPHINX:
    print("phsym docs: no network, intersphinx links disabled (PHSYM_DOCS_INTERSPHINX=1 forces them)")
intersphinx_timeout = 10

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "gallery",
    "filename_pattern": r".*\.py$",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = f"phsym {release}"
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
}
html_static_path: list[str] = []
