"""The documentation site's sources are complete, without building the site.

* every name in ``phsym.__all__`` and in each subpackage's ``__all__`` is an
  autosummary entry of docs/api.rst (in that package's section, resolving to
  the same object);
* every Markdown page of docs/ is in a toctree;
* every gallery example has the title sphinx-gallery needs;
* the landing page shows the README's two set-up commands, unchanged;
* the docs extra declares every Sphinx extension docs/conf.py loads.

The build itself (``sphinx-build -W``) runs in ``.ci/run``.
"""
import ast
import fnmatch
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import phsym

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def public_modules():
    """``phsym`` and every subpackage declaring ``__all__``."""
    mods = [phsym]
    for info in pkgutil.iter_modules(phsym.__path__):
        if info.ispkg:
            mod = importlib.import_module(f"phsym.{info.name}")
            if hasattr(mod, "__all__"):
                mods.append(mod)
    return mods


def api_sections(text):
    """``{module name: [autosummary entries]}`` of an api.rst text."""
    sections, current, in_summary = {}, None, False
    for line in text.splitlines():
        m = re.match(r"\.\. currentmodule:: (\S+)", line)
        if m:
            current, in_summary = m.group(1), False
            sections.setdefault(current, [])
            continue
        if line.startswith(".. autosummary::"):
            in_summary = True
            continue
        if in_summary:
            entry = line.strip()
            if line and not line.startswith(" "):
                in_summary = False
            elif entry and not entry.startswith(":"):
                sections[current].append(entry)
    return sections


def resolve(module, entry):
    """The object an autosummary entry names, relative to ``module`` as Sphinx reads it."""
    entry = entry.lstrip("~")
    for path in (f"{module}.{entry}", entry):
        parts = path.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            try:
                for p in parts[i:]:
                    obj = getattr(obj, p)
            except AttributeError:
                break
            return obj
    raise LookupError(entry)


def missing_names(mod, sections):
    """Public names of ``mod`` without an entry resolving to the same object."""
    entries = sections.get(mod.__name__, [])
    listed = {e.lstrip("~").rsplit(".", 1)[-1]: e for e in entries}
    missing = []
    for name in mod.__all__:
        e = listed.get(name)
        if e is None or resolve(mod.__name__, e) is not getattr(mod, name):
            missing.append(name)
    return missing


API = api_sections((DOCS / "api.rst").read_text(encoding="utf-8"))


@pytest.mark.parametrize("mod", public_modules(), ids=lambda m: m.__name__)
def test_every_public_name_is_in_the_api_reference(mod):
    assert missing_names(mod, API) == []


def test_api_reference_has_no_stale_entries():
    for module, entries in API.items():
        for e in entries:
            resolve(module, e)      # LookupError names a removed name


def test_missing_name_is_detected():
    text = (DOCS / "api.rst").read_text(encoding="utf-8").replace("\n   load\n", "\n")
    assert missing_names(phsym, api_sections(text)) == ["load"]
    # an entry resolving to another object with the same short name does not count
    text = text.replace("\n   parse\n", "\n   ~netlist.parse_netlist\n   ~ast.parse\n")
    assert "parse" in missing_names(phsym, api_sections(text))


def toctree_entries():
    names = set()
    for rst in DOCS.glob("*.rst"):
        text = rst.read_text(encoding="utf-8")
        for block in re.findall(r"\.\. toctree::\n((?:[ \t]+.*\n|\n)+)", text):
            names.update(s.strip() for s in block.splitlines() if s.strip() and not s.strip().startswith(":"))
    return names


def test_every_markdown_page_is_in_a_toctree():
    pages = {p.stem for p in DOCS.glob("*.md")}
    entries = toctree_entries()     # glob entries (identification-*) pick up new pages of a family
    assert pages and {p for p in pages if not any(fnmatch.fnmatch(p, e) for e in entries)} == set()


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.py")), ids=lambda p: p.name)
def test_gallery_example_has_a_title(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
    lines = doc.strip("\n").splitlines()
    assert len(lines) >= 2 and set(lines[1]) == {"="} and len(lines[1]) >= len(lines[0].strip())


def test_landing_page_has_the_readme_setup_commands():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1).strip().splitlines()
    assert len(block) == 2 and block[0].startswith("pip install") and block[1].startswith("pip install")
    index = (DOCS / "index.rst").read_text(encoding="utf-8")
    for cmd in block:
        assert f"   {cmd}\n" in index


def test_docs_extra_declares_the_extensions():
    try:
        import tomllib
    except ImportError:             # Python 3.10
        tomllib = pytest.importorskip("tomli")
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]["docs"]
    declared = {re.split(r"[<>=!~ ]", r)[0].lower() for r in extra}
    conf = (DOCS / "conf.py").read_text(encoding="utf-8")
    assert "sphinx" in declared and "pydata-sphinx-theme" in declared and 'html_theme = "pydata_sphinx_theme"' in conf
    for ext, dist in [("numpydoc", "numpydoc"), ("myst_parser", "myst-parser"), ("sphinx_gallery", "sphinx-gallery")]:
        assert f'"{ext}' in conf and dist in declared
