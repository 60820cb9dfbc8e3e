"""Facts derived from a law form, kept by its key so that a later process reads them without sympy.

A law form's kernels are kept by its key (:mod:`.build`); so are the other
things the numeric engine derives from its expressions.  Today that is the
junction terms Newton limits (:mod:`phsym.simulation.engines.numeric.limits`):
per variable of the form, each term ``K exp(c w + c0)`` as the expressions
``c``, ``c0`` and ``|K|`` of the form's placeholders.  They are written as
small trees of numbers, placeholders and a few operations (:func:`encode`)
and evaluated by :func:`evaluate` on both paths, so a plan built from a
form known by its key alone has the same numbers as one built from its
expressions.

Facts live in the user's cache directory, and in the package's library
(:mod:`.library`) when ``phsym cache build --package`` writes it.  A file
that is damaged, made by other code (:func:`~phsym.common.fingerprint.code_fingerprint`:
another version or an edited install), of another form or another variable, or
whose trees do not read back is ignored: the caller derives the facts again
(sympy) or, without expressions, raises :class:`~.build.UnknownForm`.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable, Dict, Optional

from ...common.fingerprint import code_fingerprint
from ...common.paths import atomic_write, cache_dir
from ...common.trees import encode, evaluate, valid
from . import library

__all__ = ["encode", "evaluate", "junction_terms", "fact_file"]

#: File-name prefix of a form's junction terms.
PREFIX = "phsym_junction_"

def fact_file(form_key: str, j: int, forward_only: bool) -> str:
    """File name of the junction terms of variable ``j`` of a form."""
    return f"{PREFIX}{form_key}_{int(j)}_{int(bool(forward_only))}.json"


def _digest(terms) -> str:
    return hashlib.sha256(json.dumps(terms, sort_keys=True).encode()).hexdigest()


def _read(path: Path, form_key: str, n_params: int, j: int, forward_only: bool) -> Optional[list]:
    try:
        meta = json.loads(path.read_text())
        terms = meta["terms"]
        ok = (meta["code"] == code_fingerprint() and meta["form"] == form_key and meta["j"] == j
              and meta["forward_only"] == bool(forward_only) and meta["digest"] == _digest(terms)
              and isinstance(terms, list)
              and all(isinstance(t, list) and len(t) == 3 and all(valid(x, n_params) for x in t) for t in terms))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return terms if ok else None


def _write(name: str, meta: dict) -> None:
    data = json.dumps(meta).encode()
    try:
        atomic_write(cache_dir() / name, lambda fh: fh.write(data))
        if library.writing():
            library.LIBRARY.mkdir(parents=True, exist_ok=True)
            atomic_write(library.LIBRARY / name, lambda fh: fh.write(data))
    except OSError:
        pass        # a read-only cache: derived again next time


_MEMO: Dict[tuple, Optional[list]] = {}


def junction_terms(form, j: int, forward_only: bool, derive: Callable[[], list]) -> Optional[list]:
    """The junction terms of variable ``j`` of ``form``, as encoded ``(c, c0, |K|)`` trees.

    Read from this process's memo, the user's cache or the package's
    library; else derived (``derive()``: sympy triples) and kept.

    Parameters
    ----------
    form : Form
        The law form.
    j : int
        The variable.
    forward_only : bool
        Only the terms of forward exponentials (an effort law's state).
    derive : callable
        The terms as sympy ``(c, c0, |K|)``; called only with the form's expressions.

    Returns
    -------
    list or None
        The encoded triples, or ``None`` when the form's terms cannot be encoded (the caller
        evaluates them with sympy).

    Raises
    ------
    UnknownForm
        For a form known by its key alone whose terms are in no file.
    """
    mk = (form.key, j, bool(forward_only))
    if mk in _MEMO:
        return _MEMO[mk]
    name = fact_file(form.key, j, forward_only)
    for path in (cache_dir() / name, library.LIBRARY / name):
        terms = _read(path, form.key, form.n_params, j, forward_only)
        if terms is not None:
            _MEMO[mk] = terms
            return terms
    if not form.derivable:
        from .build import UnknownForm
        raise UnknownForm(f"no junction terms of the law form {form.key} here, and no expressions to "
                          "derive them from: the model must be built symbolically")
    try:
        terms = [[encode(x, form.n_params) for x in t] for t in derive()]
    except ValueError:
        terms = None
    if terms is not None:
        _write(name, dict(code=code_fingerprint(), form=form.key, j=j, forward_only=bool(forward_only),
                          terms=terms, digest=_digest(terms)))
    _MEMO[mk] = terms
    return terms
