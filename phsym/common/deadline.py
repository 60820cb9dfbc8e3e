"""A deadline for symbolic work on user expressions (:func:`deadline`).

Where no size bound predicts the cost of a symbolic operation
(simplification, integration, structure checks; see
:mod:`phsym.common.bounded`), :func:`deadline` interrupts it after
``PHSYM_SYMBOLIC_TIMEOUT`` seconds (default :data:`DEFAULT_TIMEOUT`).  In
the main thread of a POSIX process it uses ``SIGALRM`` (with the watchdog
below :data:`BACKUP_GRACE` seconds later, should the signal be blocked or its
exception swallowed); in any other thread
(a web server's worker, a thread pool), or where another handler holds
``SIGALRM`` (pytest-timeout), a watchdog thread raises the interruption in
the guarded thread through CPython's ``PyThreadState_SetAsyncExc``.  Both
interrupt Python code only: a block inside one long C call (a huge integer
product) is interrupted when the call returns.  Where neither is available
(no ``ctypes.pythonapi``: not CPython) the block runs unbounded and the size
bounds alone apply.
"""
from __future__ import annotations

import math
import os
import signal
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

__all__ = ["TIMEOUT_ENV", "DEFAULT_TIMEOUT", "CODEGEN_TIMES", "BACKUP_GRACE", "REFIRE", "timeout", "deadline"]

#: Environment variable: seconds one symbolic operation on a user expression may take.
TIMEOUT_ENV = "PHSYM_SYMBOLIC_TIMEOUT"
#: Default of :data:`TIMEOUT_ENV`.
DEFAULT_TIMEOUT = 30.0
#: Generating a simulator's code (all laws at once, discrete gradients) gets this many budgets.
CODEGEN_TIMES = 4
#: Seconds after a main-thread deadline at which the watchdog interrupts the block if ``SIGALRM`` has not.
BACKUP_GRACE = 1.0
#: Seconds between the watchdog's interruptions of a block that is still running past its deadline.
REFIRE = 0.5


def timeout() -> float:
    """Seconds one symbolic operation may take (:data:`TIMEOUT_ENV`, default :data:`DEFAULT_TIMEOUT`)."""
    text = os.environ.get(TIMEOUT_ENV, "")
    try:
        value = float(text) if text.strip() else DEFAULT_TIMEOUT
    except ValueError:
        value = DEFAULT_TIMEOUT
    return value if value > 0 and math.isfinite(value) else DEFAULT_TIMEOUT


class _Expired(BaseException):
    """Raised by the alarm inside the guarded block (a BaseException: sympy's ``except Exception``
    clauses must not swallow it)."""


class _Watchdog:
    """One daemon thread that interrupts other threads at their deadlines (see :func:`deadline`)."""

    def __init__(self):
        self._cond = threading.Condition()
        self._live: dict = {}           # token -> (thread id, due time)
        self._count = 0
        self._thread: Optional[threading.Thread] = None

    def arm(self, seconds: float) -> int:
        """Interrupt the calling thread with :class:`_Expired` in ``seconds``, and again every
        :data:`REFIRE` seconds until :meth:`disarm` (an interruption can be swallowed where it lands:
        in a finaliser, a bare ``except``); returns a token."""
        with self._cond:
            self._count += 1
            token = self._count
            self._live[token] = (threading.get_ident(), time.monotonic() + seconds, False)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="phsym-deadline", daemon=True)
                self._thread.start()
            self._cond.notify()
        return token

    def disarm(self, token: int) -> None:
        """Cancel ``token``; an interruption sent but not yet raised is withdrawn."""
        with self._cond:
            entry = self._live.pop(token, None)
        if entry is None or entry[2]:
            _async_raise(threading.get_ident(), None)

    def _loop(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                for token, (tid, due, _) in list(self._live.items()):
                    if due <= now:
                        self._live[token] = (tid, now + REFIRE, True)
                        _async_raise(tid, _Expired)
                wait = min((due for _, due, _ in self._live.values()), default=now + 60.0) - now
                self._cond.wait(max(wait, 1e-3))


def _async_raise(tid: int, exc) -> bool:
    """Raise ``exc`` in thread ``tid`` at its next bytecode (``None`` withdraws a pending one)."""
    if _SET_ASYNC is None:
        return False
    return _SET_ASYNC(ctypes.c_ulong(tid), ctypes.py_object(exc) if exc is not None else None) == 1


try:
    import ctypes
    _SET_ASYNC = ctypes.pythonapi.PyThreadState_SetAsyncExc     # (unsigned long, PyObject*); None is NULL
except (ImportError, AttributeError):       # not CPython: deadlines outside the main thread do nothing
    _SET_ASYNC = None

_WATCHDOG = _Watchdog()
#: Per thread: the monotonic time of the earliest enclosing watchdog deadline.
_ENCLOSING = threading.local()


@contextmanager
def deadline(error: Callable[[float], Exception], seconds: Optional[float] = None) -> Iterator[None]:
    """Run the block for at most ``seconds`` (default :func:`timeout`); past them raise ``error(seconds)``.

    Works in any thread of a CPython process (see the module docstring: ``SIGALRM`` in the main
    thread, a watchdog thread elsewhere).  Nested deadlines keep the earliest.  The interruption
    lands in Python code: a single long C call finishes first.

    Parameters
    ----------
    error : callable
        Makes the exception to raise from the seconds allowed (a
        :class:`~phsym.errors.PhsymError` naming the element and the expression).
    seconds : float, optional
    """
    seconds = timeout() if seconds is None else seconds
    usable = (hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread())
    previous = signal.getsignal(signal.SIGALRM) if usable else None
    if not usable or previous not in (signal.SIG_DFL, signal.SIG_IGN, None, _alarm):
        with _watched(error, seconds):
            yield
        return
    outer = signal.getitimer(signal.ITIMER_REAL)[0]
    if previous is _alarm and 0 < outer <= seconds:       # an enclosing deadline comes first
        yield
        return

    start = time.monotonic()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    # a SIGALRM that never lands (blocked in this thread, or its exception swallowed by a bare except
    # in the guarded code) must not leave the block unbounded: the watchdog follows it up
    backup = _WATCHDOG.arm(seconds + BACKUP_GRACE) if _SET_ASYNC is not None else None
    try:
        try:
            yield
        finally:
            if backup is not None:
                _WATCHDOG.disarm(backup)
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if previous is _alarm and outer > 0:    # give the enclosing deadline the rest of its time
                signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3))
    except _Expired:        # raised in the block, or by the watchdog in the lines above before disarm
        raise error(seconds) from None


@contextmanager
def _watched(error: Callable[[float], Exception], seconds: float) -> Iterator[None]:
    """:func:`deadline` by the watchdog thread (threads other than the main one)."""
    due = time.monotonic() + seconds
    enclosing = getattr(_ENCLOSING, "due", None)
    if _SET_ASYNC is None or (enclosing is not None and enclosing <= due):
        yield           # unbounded, or an enclosing deadline comes first
        return
    _ENCLOSING.due = due
    token = _WATCHDOG.arm(seconds)
    try:
        try:
            yield
        finally:
            _WATCHDOG.disarm(token)
            _ENCLOSING.due = enclosing
    except _Expired:        # raised in the block, or in the lines above before the withdrawal
        _ENCLOSING.due = enclosing
        raise error(seconds) from None


def _alarm(signum, frame):
    raise _Expired()
