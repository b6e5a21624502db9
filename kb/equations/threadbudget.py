"""A wall-clock budget kept with a helper thread, for where neither SIGALRM nor fork exists.

Windows has no SIGALRM and no fork; macOS defaults to spawn, and a spawned child
cannot run a closure over SymPy objects (it would have to pickle it). So here
the work runs in a daemon thread of this process while the caller waits for it
at most the budget. Why a thread and not "no budget at all": SymPy is pure
Python, so the thread can be stopped the way SIGALRM stops the main thread —
between two bytecodes — by raising an exception in it
(`PyThreadState_SetAsyncExc`, CPython's C API, reached through ctypes). The
caller itself is never interrupted (the exception lands only in the helper,
whose every outcome is caught), so a late stop cannot escape into kb. The caller
waits briefly (STOP_GRACE) for a stopped helper to unwind, so two checks do not
run SymPy side by side.

Results are the same objects the work returned (nothing is pickled) and every
exception is re-raised in the caller, so findings equal the SIGALRM path's.
Budgets nest as the SIGALRM ones do: a budget taken inside another never
outlives it. Unlike the SIGALRM path, a CheckTimeout here cannot be swallowed by
an `except Exception` in the work: the caller raises it itself, and the stop is
a BaseException.

One stop is in flight at a time (a second one could land in the helper's own
clean-up and escape the thread). A stop that lands in a finaliser (a `__del__`,
a weakref callback run mid-work) is swallowed by CPython, which hands it to
sys.unraisablehook: a hook this module puts in place before its first helper
(`_DropStops`) drops it without a word and marks that helper's stop lost, and the
caller sends it again, until the helper has left or STOP_GRACE has passed (before session 22 the
stop was sent once, and such a helper went on with the work after its caller had
reported the timeout). Limits: a single long C call (a huge integer product)
runs to its end before the stop lands, and a stop swallowed by a bare `except:`
in the work is not seen; without ctypes (not CPython) a timed-out helper cannot
be stopped at all. In every case kb still reports the timeout and exits, as the
helper is a daemon thread.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")

STOP_GRACE = 0.5  # seconds to wait for a stopped helper to unwind (a long C call may not)
STOP_LOOK = 0.01  # seconds between two looks at a stopped helper (is its stop lost?)
# .deadline: the enclosing budget's end (time.monotonic), if any; .helper: the _Helper
# this thread is (in a helper thread), whose lost stop the unraisable hook marks.
_LOCAL = threading.local()


class _Stopped(BaseException):
    """Raised inside an abandoned helper thread to stop its work (never seen by callers)."""


def run_in_thread(
    work: Callable[[], T], seconds: float, timeout: type[Exception], message: str = ""
) -> T:
    """Return work(), or raise timeout(message) once `seconds` (or the enclosing budget) pass."""
    deadline = time.monotonic() + seconds
    enclosing = getattr(_LOCAL, "deadline", None)
    if enclosing is not None:
        deadline = min(deadline, enclosing)
    helper = _Helper(work, deadline)
    _DropStops.install()
    helper.thread.start()
    try:
        done = helper.finished.wait(max(deadline - time.monotonic(), 0.0))
    except BaseException:  # this thread is itself being stopped: stop the helper too
        helper.stop()
        raise
    if not done:
        helper.stop_and_wait(STOP_GRACE)  # let it unwind before the next check runs SymPy
        raise timeout(message or f"check exceeded its {seconds:g} s budget")
    if "error" in helper.outcome:
        raise helper.outcome["error"]
    return cast(T, helper.outcome["value"])  # what work() returned, in the helper thread


class _Helper:
    """The thread that runs the work; it can be stopped until it starts to leave, not after."""

    def __init__(self, work: Callable[[], Any], deadline: float) -> None:
        self.work, self.deadline = work, deadline
        self.outcome: dict[str, Any] = {}
        self.finished = threading.Event()
        self.lock = threading.Lock()
        self.leaving = False
        self.lost = False  # the last stop sent was swallowed in a finaliser (_DropStops)
        self.thread = threading.Thread(target=self._run, name="kb-budget", daemon=True)

    def _run(self) -> None:
        try:
            _LOCAL.deadline, _LOCAL.helper = self.deadline, self
            try:
                self.outcome["value"] = self.work()
            except _Stopped:
                pass
            except BaseException as exc:  # every outcome goes back to the caller
                self.outcome["error"] = exc
            with self.lock:
                self.leaving = True
            self.finished.set()
        except _Stopped:  # a stop sent just before `leaving` lands by here at the latest
            self.finished.set()

    def stop(self) -> bool:
        """Stop the work, unless it is already leaving (a stop then could escape the thread)."""
        with self.lock:
            self.lost = False
            return not self.leaving and stop(self.thread)

    def stop_and_wait(self, grace: float) -> None:
        """Stop the work and wait up to `grace` s for the thread to end.

        A stop lost in a finaliser is sent again; one still on its way (the helper is
        in a long C call) is not: a second stop could land in the helper's clean-up.
        """
        if not self.stop():
            return
        end = time.monotonic() + grace
        while self.thread.is_alive() and (left := end - time.monotonic()) > 0:
            self.thread.join(min(STOP_LOOK, left))
            if self.lost:
                self.stop()


class _DropStops:
    """The unraisable hook once helpers have run: a stop lost in a finaliser says nothing.

    CPython gives an exception raised in a finaliser to sys.unraisablehook (the
    default one prints a traceback). This hook drops a `_Stopped` there, marks the
    helper's stop lost (it runs in the helper's thread) so its caller sends it
    again, and hands every other report to the hook it wraps. Installed once, it
    stays (it keeps no state); a hook set later over it is wrapped again.
    """

    def __init__(self, wrapped: Callable[[Any], object]) -> None:
        self.wrapped = wrapped

    def __call__(self, unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, _Stopped):
            self.wrapped(unraisable)
            return
        helper = getattr(_LOCAL, "helper", None)
        if isinstance(helper, _Helper):
            helper.lost = True

    @classmethod
    def install(cls) -> None:
        """Wrap sys.unraisablehook, unless it already is one of these."""
        if not isinstance(sys.unraisablehook, cls):
            sys.unraisablehook = cls(sys.unraisablehook)


def stop(helper: threading.Thread) -> bool:
    """Ask CPython to raise _Stopped in `helper` at its next bytecode; False if it cannot."""
    try:
        import ctypes

        set_async_exc = ctypes.pythonapi.PyThreadState_SetAsyncExc
    except (ImportError, AttributeError):
        return False
    if helper.ident is None:
        return False
    set_async_exc.argtypes = (ctypes.c_ulong, ctypes.py_object)
    return int(set_async_exc(helper.ident, _Stopped)) == 1
