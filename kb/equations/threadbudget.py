"""A wall-clock budget kept with a helper thread, for where neither SIGALRM nor fork exists.

Windows has no SIGALRM and no fork; macOS defaults to spawn, and a spawned child
cannot run a closure over SymPy objects (it would have to pickle it). So here
the work runs in a daemon thread of this process while the caller waits for it
at most the budget. Why a thread and not "no budget at all": SymPy is pure
Python, so the thread can be stopped the way SIGALRM stops the main thread —
between two bytecodes — by raising an exception in it
(`PyThreadState_SetAsyncExc`, CPython's C API, reached through ctypes). The
caller itself is never interrupted (the exception lands only in the helper,
whose every outcome is caught), so a late stop cannot escape into kb.

Results are the same objects the work returned (nothing is pickled) and every
exception is re-raised in the caller, so findings equal the SIGALRM path's.
Budgets nest as the SIGALRM ones do: a budget taken inside another never
outlives it. Limits: a single long C call (a huge integer product) runs to its
end before the stop lands; without ctypes (not CPython) a timed-out helper
cannot be stopped and is left to finish on its own — kb still reports the
timeout and exits, as the helper is a daemon thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

_LOCAL = threading.local()  # .deadline: the enclosing budget's end (time.monotonic), if any


class _Stopped(BaseException):
    """Raised inside an abandoned helper thread to stop its work (never seen by callers)."""


def run_in_thread(work: Callable[[], T], seconds: float, timeout: type[Exception]) -> T:
    """Return work(), or raise timeout(message) once `seconds` (or the enclosing budget) pass."""
    deadline = time.monotonic() + seconds
    enclosing = getattr(_LOCAL, "deadline", None)
    if enclosing is not None:
        deadline = min(deadline, enclosing)
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def target() -> None:
        _LOCAL.deadline = deadline
        try:
            outcome["value"] = work()
        except _Stopped:
            return
        except BaseException as exc:  # every outcome goes back to the caller
            outcome["error"] = exc
        finally:
            finished.set()

    helper = threading.Thread(target=target, name="kb-budget", daemon=True)
    helper.start()
    try:
        done = finished.wait(max(deadline - time.monotonic(), 0.0))
    except BaseException:  # this thread is itself being stopped: stop the helper too
        stop(helper)
        raise
    if not done:
        stop(helper)
        raise timeout(f"check exceeded its {seconds:g} s budget")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]  # type: ignore[no-any-return]


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
