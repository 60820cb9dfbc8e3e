"""Shared infrastructure at the bottom of the pipeline (imports only :mod:`phsym.errors`).

* :mod:`.lazy` - lazy submodules and attributes of packages (keeps ``import phsym`` fast);
* :mod:`.names` - the one case-insensitive name lookup;
* :mod:`.schemes` - the one table of time-stepping schemes and their names;
* :mod:`.paths` - the one cache location and atomic writes;
* :mod:`.guard` - validation of cache entries on load (damaged ones are removed and rebuilt);
* :mod:`.learned` - learned laws kept as numbers (``.npz``) and their sympy function.
"""
