"""Code that test children (``python -c``) share: a record of what numba compiles in the child.

A child started with empty caches must show what it compiled (nothing, where
the package's engine and kernels serve it).  numba announces each compile as a
``numba:compile`` event; :data:`COMPILE_RECORDER` is source text a child script
includes, which fills the list ``compiled`` with the module of every function
numba compiled (cfuncs loaded from numba's cache raise no event).
"""

COMPILE_RECORDER = """
import numba.core.event as _ev
compiled = []
class _Recorder(_ev.Listener):
    def on_start(self, event):
        pass
    def on_end(self, event):
        compiled.append(str(event.data["dispatcher"].py_func.__module__))
_ev.register("numba:compile", _Recorder())
"""
