"""kb where `fork` and SIGALRM do not exist (Windows; macOS spawn), simulated on Linux.

The simulation removes signal.SIGALRM and makes multiprocessing offer only spawn
(get_context("fork") fails loudly, so any use of fork would show), then checks
that the time budget still stops runaway work, that the workers fall back to
this process, and that `kb validate --full` finds exactly what the normal path
finds, on the shipped records and on a copy broken on purpose.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from kb.equations import threadbudget, timeout
from kb.equations.timeout import CheckGuard, CheckTimeout, run_with_budget
from tests.conftest import REPO, SHIPPED_RECORDS, run_kb, write_tree
from tests.inprocess import kb_in_process
from tests.sample import full, sample_copy

TIMEOUT_CASE = REPO / "tests" / "rules" / "cases" / "eq_check_timeout.yaml"


@pytest.fixture
def no_fork_no_alarm(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Simulate Windows: no SIGALRM, spawn only. Returns a count of thread-budget runs."""
    calls = {"thread": 0}
    real_run = threadbudget.run_in_thread
    real_context = multiprocessing.get_context

    def counted(
        work: Callable[[], Any], seconds: float, timeout: type[Exception], message: str = ""
    ) -> Any:
        calls["thread"] += 1
        return real_run(work, seconds, timeout, message)

    def context(method: str | None = None) -> Any:
        if method == "fork":
            raise ValueError("cannot find context for 'fork'")
        return real_context(method)

    monkeypatch.delattr(signal, "SIGALRM")
    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    monkeypatch.setattr(multiprocessing, "get_context", context)
    monkeypatch.setattr(threadbudget, "run_in_thread", counted)
    return calls


def _budget_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kb-budget"]


def _spin(seconds: float) -> str:
    end = time.monotonic() + seconds
    while time.monotonic() < end:  # pure Python: the stop lands between two bytecodes
        pass
    return "spun"


def _calls(count: int) -> str:
    for _ in range(count):  # Python calls: the steps a budget counts
        abs(_identity(1))
    return "called"


def _identity(value: int) -> int:
    return value


def test_the_guard_stops_runaway_work_the_count_cannot_see(
    no_fork_no_alarm: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KB_EQ_BUDGET", "0.3")  # the guard (wall clock here); _spin makes no call
    timeout._import_first()  # what a first budget imports before its guard: not timed here
    started = time.perf_counter()
    with pytest.raises(CheckGuard, match="guard of 0.3 s"):
        run_with_budget(lambda: _spin(30))
    assert time.perf_counter() - started < 1.5
    for _ in range(100):  # the abandoned helper is stopped, not left spinning for 30 s
        if not _budget_threads():
            break
        time.sleep(0.02)
    assert _budget_threads() == []
    assert no_fork_no_alarm["thread"] == 1


def test_values_and_errors_come_back_unchanged(no_fork_no_alarm: dict[str, int]) -> None:
    marker = object()
    assert run_with_budget(lambda: marker) is marker  # the object itself: nothing pickled

    def fails() -> None:
        raise ZeroDivisionError("as SymPy might")

    with pytest.raises(ZeroDivisionError, match="as SymPy might"):
        run_with_budget(fails)
    assert no_fork_no_alarm["thread"] == 2


def test_steps_are_counted_in_the_helper_thread(no_fork_no_alarm: dict[str, int]) -> None:
    assert run_with_budget(lambda: _calls(1_000), 10_000) == "called"
    with pytest.raises(CheckTimeout, match="budget of 10,000 steps"):
        run_with_budget(lambda: _calls(100_000), 10_000)


def test_nested_budgets_keep_the_outer_limit(
    no_fork_no_alarm: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    def outer_work() -> str:
        run_with_budget(lambda: None, 2_000)
        _calls(500)
        return "finished"

    assert run_with_budget(outer_work, 10_000) == "finished"

    def inner_swallows_timeout() -> None:
        try:
            run_with_budget(lambda: _calls(100_000), 50_000)  # capped by the outer 10,000
        except CheckTimeout:
            pass
        _calls(100_000)  # the outer budget is spent: this must be stopped too

    with pytest.raises(CheckTimeout, match="budget of 10,000 steps"):
        run_with_budget(inner_swallows_timeout, 10_000)

    monkeypatch.setenv("KB_EQ_BUDGET", "0.3")

    def inner_then_spin() -> None:
        try:
            run_with_budget(lambda: _calls(100_000), 50_000)
        except CheckTimeout:
            pass
        _spin(30)  # no Python call: the guard stops it

    started = time.perf_counter()
    with pytest.raises(CheckGuard):
        run_with_budget(inner_then_spin, 10_000_000)
    assert time.perf_counter() - started < 1.5


def test_forked_workers_decline_and_the_caller_does_the_work(
    no_fork_no_alarm: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    from kb.workers import can_fork, map_forked

    monkeypatch.setenv("KB_JOBS", "4")
    assert not can_fork()
    assert map_forked(abs, list(range(-50, 0)), min_items=1) is None


# The same simulation in a fresh process (kb's in-process memos start empty), around `kb`.
SIMULATED_KB = """
import atexit, multiprocessing, signal, sys
from kb.equations import threadbudget

calls = [0]
real_run, real_context = threadbudget.run_in_thread, multiprocessing.get_context

def counted(*args):
    calls[0] += 1
    return real_run(*args)

def context(method=None):
    if method == "fork":
        raise ValueError("cannot find context for 'fork'")
    return real_context(method)

del signal.SIGALRM
multiprocessing.get_all_start_methods = lambda: ["spawn"]
multiprocessing.get_context = context
threadbudget.run_in_thread = counted
atexit.register(lambda: print(f"thread budgets: {calls[0]}", file=sys.stderr))
from kb.cli import main
main()
"""


def _validate(
    root: Path, cwd: Path, cache: Path, simulated: bool, work: str | None = None
) -> tuple[int, Any, str]:
    """`kb validate --full` as JSON: the fallback in a fresh process, the normal path here.

    The simulation needs a fresh process (kb's in-process memos start empty, and every
    check meets the patched modules); the normal path is the one every other test of
    this process runs, so it runs in process (tests/inprocess.py), a subprocess cheaper.
    """
    args = ["validate", "--full", "--format", "json", "--root", str(root)]
    env = {"KB_CACHE_DIR": str(cache), **({"KB_EQ_WORK": work} if work else {})}
    if simulated:
        done = subprocess.run(
            [sys.executable, "-c", SIMULATED_KB, *args],
            cwd=cwd,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    else:
        done = kb_in_process(args, cwd=cwd, env=env)
    return done.returncode, json.loads(done.stdout)["findings"], done.stderr


def _break(root: Path) -> Path:
    """An H100 HBM edit that refutes claims, plus a check that must time out, on a records tree.

    The edit is to the measured rate (`bandwidth_achieved`): since session 24 the step's
    claims stream HBM at it (hbm_streamed_rate), and the datasheet figure binds only ridges
    and bounds, which the sample may not hold.
    """
    hardware = root / "hardware" / "nvidia-h100-sxm.yaml"
    text = hardware.read_text(encoding="utf-8")
    achieved = "bandwidth_achieved: {value: 2.97, unit: TB/s"
    assert achieved in text
    hardware.write_text(
        text.replace(achieved, "bandwidth_achieved: {value: 2.5, unit: TB/s"), encoding="utf-8"
    )
    case = yaml.safe_load(TIMEOUT_CASE.read_text(encoding="utf-8"))["cases"]["expansion_too_big"]
    write_tree(
        root,
        {
            "flops/runaway.yaml": case["files"]["flops/x.yaml"].replace(
                "id: flops/x", "id: flops/runaway"
            )
        },
    )
    return root


def _tree(tree: str, tmp_path: Path) -> Path:
    if tree == "shipped":
        return SHIPPED_RECORDS
    if tree == "broken":
        root = tmp_path / "records"
        shutil.copytree(SHIPPED_RECORDS, root)
        return _break(root)
    root = sample_copy(tmp_path / "records")
    return _break(root) if tree == "sample-broken" else root


SAMPLE_WORK = "300000"  # steps per check on the sample (kb.settings.DEFAULT_WORK / 10)
WHOLE_TREE = pytest.mark.skipif(not full(), reason="the shipped tree: KB_FULL=1")


@pytest.mark.parametrize(
    "tree",
    [
        "sample",
        "sample-broken",
        pytest.param("shipped", marks=[WHOLE_TREE, pytest.mark.slow]),
        pytest.param("broken", marks=[WHOLE_TREE, pytest.mark.slow]),
    ],
)
def test_validate_full_through_the_fallback_finds_what_the_normal_path_finds(
    tree: str, tmp_path: Path
) -> None:
    """Per push on the shipped sample (tests/sample.py), on the whole tree with KB_FULL=1.

    The fallback changes how a check is bounded and where it runs (a thread budget in
    this process instead of SIGPROF and forked workers), never what it computes; the
    sample holds every kind of claim, a derivation, a placement and (broken) a refuted
    figure and a check that must time out, so every path of a check meets the fallback.
    Both runs are cold: each derives every claim itself. On the sample both count
    SAMPLE_WORK steps per check, a tenth of the default: every claim of the sample fits
    (the clean sample passes), and the check that must time out spends a tenth as much.
    """
    root = _tree(tree, tmp_path)
    work = SAMPLE_WORK if tree.startswith("sample") else None
    normal = _validate(root, tmp_path, tmp_path / "cache-normal", False, work)
    fallback = _validate(root, tmp_path, tmp_path / "cache-fallback", True, work)
    assert fallback[:2] == normal[:2]
    budgets = re.search(r"thread budgets: (\d+)", fallback[2])
    claims = sum(
        len(yaml.safe_load(path.read_text(encoding="utf-8")).get("claims") or [])
        for path in root.glob("flops/*.yaml")
    )
    assert budgets and int(budgets.group(1)) >= claims, fallback[2]  # the checks took the fallback
    assert "Traceback" not in fallback[2] and "internal error" not in fallback[2]
    code, findings = fallback[:2]
    if tree.endswith("broken"):
        codes = {finding["code"] for finding in findings}
        assert code == 1 and {"EQ007", "EQ014"} <= codes, codes
    else:  # PR003 warnings (numbers in prose) are allowed while records are templated
        assert code == 0 and [f for f in findings if f["code"] != "PR003"] == []


@pytest.mark.parametrize("value", ["abc", "0", "-2", "nan", "inf"])
def test_a_bad_budget_setting_is_a_usage_error_not_findings(value: str, tmp_path: Path) -> None:
    """The first value through the real `kb` (its entry point maps the error), the rest here."""
    write_tree(tmp_path / "records", {"flops/x.yaml": _timeout_case_record()})
    run = run_kb if value == "abc" else kb_in_process
    done = run(["validate", "--full"], cwd=tmp_path, env={"KB_EQ_BUDGET": value})
    assert done.returncode == 2, done.stdout
    assert done.stderr == f"kb: KB_EQ_BUDGET='{value}': expected a positive number of seconds\n"
    assert done.stdout == ""


def _timeout_case_record() -> str:
    case = yaml.safe_load(TIMEOUT_CASE.read_text(encoding="utf-8"))["cases"]["expansion_too_big"]
    return str(case["files"]["flops/x.yaml"])


def test_a_swallowed_timeout_comes_again_until_the_work_stops(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGPROF path (the normal one): an `except Exception` in the work cannot unbound it."""
    swallowed = []

    def stubborn() -> str:
        try:
            _spin(30)
        except Exception as exc:  # noqa: BLE001 - what SymPy or a finaliser might do
            swallowed.append(exc)
        _spin(30)  # the budget is spent: this must be stopped too
        return "never"

    monkeypatch.setenv("KB_EQ_BUDGET", "0.3")  # the CPU-time guard: _spin makes no call
    timeout._import_first()  # what a first budget imports before its guard: not timed here
    started = time.process_time()
    with pytest.raises(CheckTimeout):
        run_with_budget(stubborn)
    assert time.process_time() - started < 1.5
    assert len(swallowed) == 1 and isinstance(swallowed[0], CheckGuard)
    assert signal.getitimer(signal.ITIMER_PROF) == (0.0, 0.0)  # nothing left armed


def test_work_ending_at_its_deadline_never_leaks_a_stop(
    no_fork_no_alarm: dict[str, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Race the stop against the end of the work: no stray exception, ever, in any thread."""
    escaped: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    outcomes = {"value": 0, "timeout": 0}
    for index in range(300):
        seconds = 0.002 + (index % 5) * 0.001
        monkeypatch.setenv("KB_EQ_BUDGET", str(seconds))
        try:
            assert run_with_budget(lambda s=seconds: _spin(s)) == "spun"
            outcomes["value"] += 1
        except CheckTimeout:
            outcomes["timeout"] += 1
    time.sleep(0.2)
    assert escaped == []
    assert _budget_threads() == []
    assert outcomes["value"] + outcomes["timeout"] == 300
