"""The thread budget (kb.equations.threadbudget) stops its helper for good, and in time.

Two ways a stop went wrong before session 22, each reproduced here at a point the test
controls, not left to timing:

- a stop that lands in a finaliser (`__del__`, a weakref callback) is swallowed by
  CPython (reported to sys.unraisablehook, a traceback for the user) and the helper went
  on with the work after its caller had reported the timeout;
- a stop that lands in the process's first `import sympy` leaves SymPy half made for
  the rest of the process (`module 'sympy' has no attribute 'core'`): every later check
  of that process failed with EQ001. tests/workers/test_portable.py's fallback test saw
  it in 9 of 10 module runs, its first test's guard stopping the import.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from kb.equations import threadbudget
from tests.conftest import REPO, SHIPPED_RECORDS
from tests.sample import full, sample_copy

WHOLE_TREE = pytest.mark.skipif(not full(), reason="the shipped tree: KB_FULL=1")


class Stopped(TimeoutError):
    """What the caller raises here when the budget passes."""


def _budget_threads(before: frozenset[threading.Thread] = frozenset()) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kb-budget" and t not in before]


def _gone(before: frozenset[threading.Thread]) -> bool:
    """Whether the helpers started since `before` end within 5 s (the caller waits 0.5 s
    for them; on a busy machine one may take longer to unwind; a helper left running spins
    for 30 s)."""
    for helper in _budget_threads(before):
        helper.join(5)
    return _budget_threads(before) == []


def _spin(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # pure Python: a stop lands between two bytecodes
        pass


def _calls(count: int) -> None:
    for _ in range(count):  # Python calls: the steps a budget counts
        _spin(0)


class _Plain:
    """An object a weakref callback can watch."""


@pytest.mark.parametrize("finaliser", ["__del__", "weakref callback"])
def test_a_stop_lost_in_a_finaliser_is_sent_again(
    finaliser: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stop lands in a finaliser the helper runs as the work drops an object."""
    sent = threading.Event()
    real_stop = threadbudget.stop

    def stop(helper: threading.Thread) -> bool:
        sent.set()
        return real_stop(helper)

    monkeypatch.setattr(threadbudget, "stop", stop)
    reported: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    in_finaliser: list[bool] = []
    finished: list[bool] = []

    def finalise(*_: object) -> None:
        in_finaliser.append(True)
        sent.wait(10)  # until the caller has sent its stop: it lands in here
        _spin(5)

    class Finalised:
        def __del__(self) -> None:
            finalise()

    def work() -> None:
        if finaliser == "__del__":
            Finalised()  # dropped at once: its __del__ runs here, in the helper thread
        else:
            watched = _Plain()
            watch = weakref.ref(watched, finalise)
            del watched  # the callback runs here, in the helper thread
            assert watch() is None
        _spin(30)  # the work goes on after a stop the finaliser swallowed
        finished.append(True)

    before = frozenset(_budget_threads())
    with pytest.raises(Stopped):
        threadbudget.run_in_thread(work, 0.05, Stopped)
    assert in_finaliser == [True] and sent.is_set()
    assert _gone(before), "the helper outlived its caller's timeout"
    assert finished == []
    assert reported == []  # the swallowed stop is kb's own business: no traceback


def test_a_stop_that_lands_in_the_work_is_sent_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only a stop known to be lost is sent again: one stop in flight at a time."""
    sends: list[int] = []
    real_stop = threadbudget.stop

    def stop(helper: threading.Thread) -> bool:
        sends.append(1)
        return real_stop(helper)

    monkeypatch.setattr(threadbudget, "stop", stop)
    before = frozenset(_budget_threads())
    with pytest.raises(Stopped):
        threadbudget.run_in_thread(lambda: _spin(30), 0.05, Stopped)
    assert _gone(before)
    assert sends == [1]


# A fresh interpreter that has not imported SymPy, with neither SIGALRM nor fork, and a
# guard far shorter than SymPy's import: before session 22 the guard stopped the import.
FIRST_IMPORT = """
import multiprocessing, signal, sys
del signal.SIGALRM
multiprocessing.get_all_start_methods = lambda: ["spawn"]
from kb.equations import threadbudget
from kb.equations.timeout import CheckGuard, run_with_budget
assert "sympy" not in sys.modules
real_run, seen = threadbudget.run_in_thread, []

def counted(*args):
    seen.append("sympy.core" in sys.modules)
    return real_run(*args)

threadbudget.run_in_thread = counted
try:  # the guard is kept in wall-clock time here: on a busy machine it may still pass
    print(run_with_budget(lambda: "ok"), seen)
except CheckGuard:
    print("guard", seen)
import sympy
print(sorted(n for n in ("core", "polys", "simplify", "solvers") if not hasattr(sympy, n)))
"""


# `kb validate --full` in one process, logging every module imported for the first time
# while a budget is open (in this process: KB_JOBS=1).
IMPORTS_INSIDE = """
import sys
from kb.equations import work

inside = []

class Logged:
    def find_spec(self, name, path=None, target=None):
        if work.spent_here() is not None:
            inside.append(name)
        return None

sys.meta_path.insert(0, Logged())
from kb.cli import main
try:
    main()
finally:
    print("imported inside a budget:", sorted(set(inside)), file=sys.stderr)
"""


@pytest.mark.parametrize(
    "tree", ["sample", pytest.param("shipped", marks=[WHOLE_TREE, pytest.mark.slow])]
)
def test_no_check_imports_a_module_for_the_first_time(tree: str, tmp_path: Path) -> None:
    """Per push on the sample (tests/sample.py), on the whole tree with KB_FULL=1.

    timeout.IMPORTED_FIRST is imported before any budget: no stop can land in a first
    import, and no check's count holds one (sympy.physics.units: 275,577 steps).
    """
    root = sample_copy(tmp_path / "records") if tree == "sample" else SHIPPED_RECORDS
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS_INSIDE, "validate", "--full", "--root", str(root)],
        cwd=tmp_path,
        env={**os.environ, "KB_JOBS": "1", "KB_CACHE_DIR": str(tmp_path / "cache")},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "imported inside a budget: []" in done.stderr, done.stderr[-2000:]


def test_sympy_is_imported_before_the_guard_starts() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORT],
        cwd=REPO,
        env={"KB_EQ_BUDGET": "0.01", "PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    ran, missing = done.stdout.splitlines()
    assert ran.endswith("[True]"), ran  # SymPy was imported before the guard started
    assert missing == "[]", missing


def test_a_helper_that_cannot_be_stopped_leaves_the_run_s_budgets_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A helper left running (here: its stops refused, as in a long C call) changes no count.

    Its nested budget names the run's Spending itself (as kb's checks do, `run=`), and
    times out after its caller gave up: the stop is its own, not the next check's.
    """
    import multiprocessing

    from kb.equations import timeout
    from kb.run import Spending

    monkeypatch.setattr(timeout, "_alarm_usable", lambda: False)
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(threadbudget, "stop", lambda helper: False)
    monkeypatch.setenv("KB_EQ_BUDGET", "0.05")
    run, gave_up, nested = Spending(), threading.Event(), threading.Event()

    def work() -> None:
        gave_up.wait(10)  # the caller has reported its guard
        with pytest.raises(timeout.CheckTimeout):
            timeout.run_with_budget(lambda: _calls(10_000), 100, run=run)
        nested.set()

    with pytest.raises(timeout.CheckGuard):
        timeout.run_with_budget(work, run=run)
    assert run.stopped == 1  # the guard's stop
    gave_up.set()
    assert nested.wait(10)
    assert run.stopped == 1  # the helper's nested stop came after: not this run's any more
