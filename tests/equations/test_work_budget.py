"""A check's budget is counted in steps, not seconds: the same records give the same
findings on a quiet machine and on one whose every core is busy (issue 37, item 1).

The corpus is the expression fuzzer's grammar (tests/fuzz/test_expressions.py) drawn
with a fixed seed, each expression checked by a real derivation step whose residual
goes through simplify, plus a family of expansions from a few milliseconds up to past
the budget (the EQ014 rule case's). With the old wall-clock budget (2 s) the heaviest
expansions that pass on a quiet machine came out EQ014 under the CPU hog.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings

from kb.equations.algebra import decide_zero
from kb.equations.expr import parse_expression
from kb.equations.timeout import CheckTimeout, run_with_budget
from kb.equations.work import counting
from tests.conftest import write_tree
from tests.fuzz.test_expressions import EXPRESSIONS, NAMES

REPO = Path(__file__).resolve().parents[2]
# Per push 4 fuzz expressions and the powers on both sides of the budget's edge (5 is decided
# with the most steps under STEPS, 6 is past them); KB_FUZZ_EXAMPLES sets the corpus and adds
# the powers far past the edge (a check past its steps stops at STEPS, whatever the power).
LONG = int(os.environ.get("KB_FUZZ_EXAMPLES", "0"))
CORPUS = LONG or 4  # fuzz expressions a run checks
POWERS = (3, 5, 6, 7, 13) if LONG else (3, 5, 6)  # the expansion family: 6 and up past STEPS
STEPS = 500_000  # a sixth of the default per check: the same property at a sixth of the cost
STOPPED = 0.8  # the busy run's share of wall time stopped: 5x slower, as beside 4 hogs on a core


def fuzz_corpus(count: int) -> list[str]:
    """`count` expressions of the fuzzer's grammar, the same ones on every run (fixed seed)."""
    drawn: list[str] = []

    @settings(
        max_examples=count, derandomize=True, database=None, phases=[Phase.generate], deadline=None
    )
    @given(text=EXPRESSIONS)
    def collect(text: str) -> None:
        drawn.append(text)

    collect()
    return drawn


def _record(index: int, equations: dict[str, str], steps: list[tuple[str, str]]) -> str:
    symbols = [*NAMES, "a", "c", "e", "f", "g", "y"]
    lines = [
        "kind: flop_class",
        f"id: flops/case-{index}",
        f"title: Case {index}",
        "version: 1",
        "status: draft",
        "history:",
        '  - {version: 1, date: "2026-12-06", change: First encoding.}',
        "text: A phenomenon.",
        "symbols:",
        *(f'  {name}: {{meaning: {name}, unit: "1"}}' for name in symbols),
        "equations:",
        *(f'  {name}: {{expr: "{text}"}}' for name, text in equations.items()),
        "derivations:",
        *(
            f"  - id: d{n}\n    steps:\n      - {{rule: rewrite, from: {a}, result: {b}}}"
            for n, (a, b) in enumerate(steps)
        ),
    ]
    return "\n".join(lines) + "\n"


def corpus_tree(root: Path, count: int) -> Path:
    """A records tree: each fuzz expression in a rewrite step through simplify; the powers."""
    files: dict[str, str] = {}
    for index, text in enumerate(fuzz_corpus(count)):
        text = text.replace('"', "")
        equations = {
            "plain": f"y = {text}",
            "logged": f"y = {text} + log(B*d) - log(B) - log(d)",
        }
        files[f"flops/case-{index}.yaml"] = _record(index, equations, [("plain", "logged")])
    for power in POWERS:
        equations = {
            "big": f"y = (a + c + e + f + B)**{power} - (a + c + e + g + B)**{power}",
            "small": "y = f - g",
        }
        files[f"flops/case-{1000 + power}.yaml"] = _record(
            1000 + power, equations, [("big", "small")]
        )
    return write_tree(root, files)


# `kb` as `python -m kb` runs it, once the modules a check needs are imported: kb's command
# line and the engine with SymPy (kb.equations.engine imports planbuild before any check is
# run). It then touches its first argument, so the stops begin when checking can (`Run`).
READY_THEN_KB = """
import sys
from pathlib import Path
import kb.cli, kb.api, kb.equations.planbuild
Path(sys.argv[1]).touch()
sys.argv = ["kb", *sys.argv[2:]]
kb.cli.main()
"""


class Run:
    """`kb validate --full --format json` of a records tree in a fresh process, started.

    `stopped`: the share of the wall time its process group spends stopped (SIGSTOP, then
    SIGCONT), as when busy processes hold the cores, at no CPU cost to the machine; each
    stop's seconds are appended to `stops`. The stops begin once the process has imported
    kb and SymPy (`READY_THEN_KB`): no budget runs before that, and stretching the imports
    five times (~0.7 CPU-s) only lengthened the test. Its output goes to files (never a full
    pipe), so two runs go on side by side; `finish` waits for it with wait4, which gives its
    own CPU seconds (and its workers'), whatever else ran meanwhile.
    """

    def __init__(
        self, root: Path, cache: Path, stopped: float = 0.0, stops: list[float] | None = None
    ) -> None:
        env = {**os.environ, "KB_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO)}
        env["KB_EQ_WORK"] = str(STEPS)
        env.pop("KB_EQ_BUDGET", None)
        self.out, self.err = cache.with_suffix(".out"), cache.with_suffix(".err")
        ready = cache.with_suffix(".ready")
        self.started = time.monotonic()
        with self.out.open("w") as out, self.err.open("w") as err:
            self.child = subprocess.Popen(
                [sys.executable, "-c", READY_THEN_KB, str(ready), "validate", "--full"]
                + ["--format", "json", "--root", str(root)],
                cwd=root.parent,
                env=env,
                stdout=out,
                stderr=err,
                start_new_session=stopped > 0,  # its own process group: its workers stop with it
            )
        self.done = threading.Event()
        self.stopper: threading.Thread | None = None
        if stopped > 0:
            spent = [] if stops is None else stops
            self.stopper = threading.Thread(
                target=_deschedule,
                args=(self.child, stopped, self.done, spent, ready),
                daemon=True,
            )
            self.stopper.start()

    def finish(self) -> tuple[str, float, float]:
        """Its stdout, wall seconds and CPU seconds (user and system, its workers' too)."""
        try:
            _, status, usage = os.wait4(self.child.pid, 0)
        finally:
            self.done.set()
            # Ended here, not up to a period later: a test after this one on the same worker
            # would see a second thread, and kb's pools decline to fork (kb.workers.can_fork).
            if self.stopper is not None:
                self.stopper.join()
        self.child.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - self.started
        stderr = self.err.read_text(encoding="utf-8")
        assert self.child.returncode in (0, 1), stderr
        assert "Traceback" not in stderr
        return self.out.read_text(encoding="utf-8"), seconds, usage.ru_utime + usage.ru_stime


def _deschedule(
    child: subprocess.Popen[bytes],
    stopped: float,
    done: threading.Event,
    stops: list[float],
    ready: Path,
) -> None:
    """Once `ready` exists, stop and continue `child`'s process group in 50 ms periods until
    it ends."""
    while not ready.exists() and not done.is_set():
        time.sleep(0.005)
    period = 0.05
    while not done.is_set():  # set once `Run.finish` has reaped the child
        try:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGSTOP)
                started = time.monotonic()
                time.sleep(period * stopped)
                stops.append(time.monotonic() - started)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGCONT)
        time.sleep(period * (1 - stopped))


def test_the_fuzz_corpus_gives_byte_identical_findings_under_a_cpu_hog(tmp_path: Path) -> None:
    """The busy run's process group is stopped four fifths of the time (SIGSTOP/SIGCONT):
    from inside, exactly what busy processes holding the cores do to it (its wall clock runs
    on while it does not; 5x slower, as four spinning processes beside it on one core), but
    the machine's cores stay free for the other tests (spinning processes cost 2 cores for
    the whole busy run on CI's 2). On a loaded machine the scheduler favours a process just
    continued, so the slowdown is less there; the stops themselves are counted. The quiet
    run goes on beside the busy one, on the core that one leaves idle while it is stopped
    (the test's wall time is the busy run's alone): a step budget's verdicts are the same
    at any load, so it stays the reference; it is the busy run that is held far slower."""
    root = corpus_tree(tmp_path / "records", CORPUS)
    stops: list[float] = []
    busy_run = Run(root, tmp_path / "cache-busy", stopped=STOPPED, stops=stops)
    # the quiet run on the core the busy one leaves idle while stopped (each has its cache)
    quiet, quiet_seconds, _ = Run(root, tmp_path / "cache-quiet").finish()
    busy, busy_seconds, busy_cpu = busy_run.finish()
    assert busy == quiet, f"findings changed under load ({busy_seconds:.1f} s busy)"
    # The corpus holds what a budget decides: the powers past the budget are EQ014 on
    # both runs, the expansions under it are decided (refuted: EQ005) on both.
    assert quiet.count('"code": "EQ014"') == sum(power >= 6 for power in POWERS), quiet
    assert quiet.count('"code": "EQ005"') >= 2, quiet
    assert "EQ029" not in quiet  # the guard is never reached by these inputs
    # It was held off the cores many times through its checks, and its wall clock ran well
    # ahead of its CPU time: five times on an idle machine in one process, 2.5 times with two
    # workers busy at once all along; other load on the machine only stretches the wall clock
    # further, so this holds at any load (a share of the wall clock stopped does not: under
    # load the sleeps that time the stops overrun, and more so those that let it run).
    assert len(stops) >= 50, len(stops)
    assert busy_seconds > 1.5 * busy_cpu, (busy_seconds, busy_cpu)
    print(f"corpus of {CORPUS} expressions and {len(POWERS)} powers; quiet {quiet_seconds:.1f} s,")
    print(f"busy run {busy_seconds:.1f} s ({len(stops)} stops, {sum(stops):.1f} s stopped)")


def _steps(text: str) -> tuple[str, int]:
    expr = parse_expression(text, allow_undeclared=True).value
    with counting(10**9, fresh=True) as budget:
        outcome = decide_zero(expr).outcome
    return outcome, budget.count


@pytest.mark.parametrize("power", [3, 5])
def test_a_check_s_steps_barely_depend_on_what_ran_before_it(power: int) -> None:
    """A fresh budget starts from an empty SymPy cache: what ran before it in the process
    changes its count by about 1 % (1.07 % the most seen, in CI under another test order;
    objects keep some facts about themselves), where a warm cache saved about a third of
    the calls. The first check to use a SymPy module also counts its import:
    docs/guarantees.md states both margins."""
    text = f"(a + c + e + f + B)**{power} - (a + c + e + g + B)**{power} + sqrt(B)"
    _steps("max(B, d)*log(N) - (d + sqrt(B))**3")  # SymPy's lazily imported modules load
    first = _steps(text)
    _steps("(a + B)**4 - sqrt(a*B)")  # other work in between fills SymPy's cache
    again = _steps(text)
    assert first[0] == again[0]
    assert abs(first[1] - again[1]) <= first[1] // 50, (first, again)  # docs/guarantees.md: 2 %
    assert first[1] > 1000


def test_a_check_past_its_steps_times_out_whatever_the_clock_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("KB_EQ_BUDGET", "600")  # the wall clock is no part of the verdict
    # the cube (~600,000 steps, a fourth of the fifth power's): the same stop, inner simplify
    # and verdict at a fourth of the cost
    text = "(a + c + e + f + B)**3 - (a + c + e + g + B)**3 + sqrt(B)"
    expr = parse_expression(text, allow_undeclared=True).value
    _, needed = _steps(text)
    with pytest.raises(CheckTimeout, match=f"budget of {needed // 2:,} steps"):
        run_with_budget(lambda: decide_zero(expr), needed // 2)
    # with enough steps the same check decides, and an inner simplify timed out does not
    # leave the outer check unbounded
    assert run_with_budget(lambda: decide_zero(expr).outcome, needed * 2) == "nonzero"


def _make_calls(count: int) -> int:
    for _ in range(count):
        abs(_one())
    return count


def _one() -> int:
    return 1


@pytest.mark.parametrize("nested", [False, True])
def test_a_budget_spent_exactly_at_the_end_never_lets_its_stop_escape(nested: bool) -> None:
    """Leaving the counted block makes calls too (the context manager's): a budget that
    ran out exactly as the work returned raised OutOfWork there, past the `try` (found
    by tests/equations/test_engine.py)."""
    for steps in range(0, 40):
        for calls in range(0, 12):
            work = (lambda c=calls: _make_calls(c)) if not nested else (
                lambda c=calls, s=steps: run_with_budget(lambda: _make_calls(c), s + 5)
            )  # fmt: skip
            try:
                assert run_with_budget(work, steps) == calls
            except CheckTimeout:
                pass


def test_a_bad_steps_setting_is_a_usage_error(tmp_path: Path) -> None:
    """The first value through the real entry point (a fresh process), the others in this
    process (tests/inprocess.py: the same exit code and stderr, a second cheaper)."""
    from tests.inprocess import kb_in_process

    write_tree(tmp_path / "records", {})
    for index, value in enumerate(("abc", "0", "-5", "1.5", "²")):
        if index:
            done = kb_in_process(["validate", "--full"], tmp_path, env={"KB_EQ_WORK": value})
        else:
            done = subprocess.run(
                [sys.executable, "-m", "kb", "validate", "--full"],
                cwd=tmp_path,
                env={**os.environ, "KB_EQ_WORK": value, "PYTHONPATH": str(REPO)},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        assert done.returncode == 2, (value, done.stdout, done.stderr)
        assert done.stderr == (
            f"kb: KB_EQ_WORK={value!r}: expected a positive whole number of steps\n"
        )


def test_every_outermost_budget_starts_sympy_s_random_generators_from_one_seed() -> None:
    """SymPy's assumptions shuffle the facts left to deduce with their own generator,
    seeded from the OS at import: a fresh budget seeds it (and SymPy's other generator)
    with SYMPY_SEED, so the order of the shuffle is the same in every process."""
    import random

    from sympy.core import random as sympy_random

    from kb.equations.work import SYMPY_SEED

    expected = random.Random(SYMPY_SEED)
    draws = [expected.random() for _ in range(3)]
    for _ in range(2):  # a draw outside moves the generator; the next budget seeds it again
        sympy_random.random()
        with counting(10**6, fresh=True):
            found = [sympy_random.random() for _ in range(3)]
        assert found == draws
        order = list(range(20))
        sympy_random._assumptions_shuffle(order)
        with counting(10**6, fresh=True):
            again = list(range(20))
            sympy_random._assumptions_shuffle(again)
            shuffled = list(range(20))
            random.Random(SYMPY_SEED).shuffle(shuffled)
        assert again == shuffled
