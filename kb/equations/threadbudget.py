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
a BaseException. Limits: a single long C call (a huge integer product) runs to
its end before the stop lands; the stop is sent once (a second one could land
in the helper's own clean-up and print a traceback), so a stop lost inside a
finaliser leaves the helper running; without ctypes (not CPython) a timed-out
helper cannot be stopped at all. In every case kb still reports the timeout and
exits, as the helper is a daemon thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

T = TypeVar("T")

STOP_GRACE = 0.5  # seconds to wait for a stopped helper to unwind (a long C call may not)
_LOCAL = threading.local()  # .deadline: the enclosing budget's end (time.monotonic), if any


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
    helper.thread.start()
    try:
        done = helper.finished.wait(max(deadline - time.monotonic(), 0.0))
    except BaseException:  # this thread is itself being stopped: stop the helper too
        helper.stop()
        raise
    if not done:
        if helper.stop():
            helper.thread.join(STOP_GRACE)  # let it unwind before the next check runs SymPy
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
        self.thread = threading.Thread(target=self._run, name="kb-budget", daemon=True)

    def _run(self) -> None:
        try:
            _LOCAL.deadline = self.deadline
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
            return not self.leaving and stop(self.thread)


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
