"""Calling a law kernel by its address from compiled code.

The engine is compiled once for every circuit (numba's disk cache), yet the
kernels it drives are generated per law form, later
(:mod:`phsym.codegen.laws`).  numba cannot cache a function that receives
another compiled function as an argument, so the engine receives the
kernels' *addresses* as integers and calls them through a pointer of the
one signature of :mod:`phsym.codegen.laws.abi`: no compiled function is a
global or an argument of the engine, and its cache stays valid whatever
kernels exist.
"""
from __future__ import annotations

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

__all__ = ["call_kernel"]


@intrinsic
def _call(typingctx, addr, n, P, IN, OUT, W):
    """``((void (*)(int64, double*, double*, double*, double*)) addr)(n, P, IN, OUT, W)``; the pointers
    as integers."""
    sig = types.void(addr, n, P, IN, OUT, W)

    def codegen(context, builder, signature, args):
        a, nn, p, i, o, w = args
        dbl = ir.DoubleType().as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(64), dbl, dbl, dbl, dbl])
        fn = builder.inttoptr(a, fnty.as_pointer())
        builder.call(fn, [nn, builder.inttoptr(p, dbl), builder.inttoptr(i, dbl), builder.inttoptr(o, dbl),
                          builder.inttoptr(w, dbl)])
        return context.get_dummy_value()
    return sig, codegen


@njit(cache=True)
def call_kernel(addr, n, P, p0, IN, i0, OUT, o0, W, w0):
    """Call the kernel at ``addr`` on ``n`` instances whose rows start at ``P[p0]``, ``IN[i0]``, ``OUT[o0]``
    and ``W[w0]``.

    Parameters
    ----------
    addr : int64
        The kernel's address.
    n : int64
        Instances.
    P, IN, OUT, W : ndarray of float64
        Flat, contiguous arrays of all groups.
    p0, i0, o0, w0 : int64
        Offsets of this group's first row in them.
    """
    _call(addr, n, P.ctypes.data + 8 * p0, IN.ctypes.data + 8 * i0, OUT.ctypes.data + 8 * o0,
          W.ctypes.data + 8 * w0)
