"""kb's one fork pool: run a pure function over many items in forked workers, when that pays.

Used to parse YAML files (libyaml's construction runs in Python, one core), render
record pages and check the equations' families. Items reach the workers by fork;
only results are pickled back. Workers run only where safe and worth it: `fork`
exists, this is the main thread of a single-threaded process, there are at least
`min_items` items and `worker_count()` is 2 or more ($KB_JOBS=1 keeps everything
here). Otherwise, or on any failure of the pool, the caller's own loop does the
work, so a result never depends on whether workers ran; but a worker that dies
(SIGKILL) stops the run with WorkerDied (exit 2), never a partial result. No spawn fallback on
purpose: it would pickle every item and the function and import kb again, costing
more than it shares (tests/workers/test_portable.py runs kb without fork).

`beside(function)` runs one function in a forked child while this process goes on
(the whole-tree rules beside the equations stage), its result pickled back on
demand; the child has ended when its `with` block does. A child that cannot be
forked, fails or dies is no loss: its work is done here. `map_forked(...,
meanwhile=function)` gives this process work while the pool's workers run, and
`before=function` does here, once, what every worker would otherwise do for itself
(imports, compiled validators), just before they fork: they inherit it. Nothing
here is kept between calls but the pool's payload, which forked workers inherit.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from kb import settings
from kb.usage import UsageProblem

MAX_WORKERS = 8
_ITEMS: Sequence[Any] = ()
_FUNCTION: Callable[[Any], Any] | None = None
T = TypeVar("T")
PIPE_BYTES = 1 << 20  # what a Beside child may send before it waits for the parent to read


def worker_count() -> int:
    """$KB_JOBS if set, else the usable CPUs free now (at most MAX_WORKERS, at least 1).

    On a busy machine a worker only competes and adds the pickling of its results
    (BENCHMARKS.md: 0.8 s of CPU at 10,000 records).
    """
    wanted = settings.jobs()
    if wanted is not None:
        return wanted
    return free_workers(min(usable_cpus(), MAX_WORKERS), os.cpu_count() or 1, _busy())


def free_workers(usable: int, online: int, busy: float) -> int:
    """The `usable` CPUs, but no more than `online - busy` are free (at least 1)."""
    return max(1, min(usable, round(online - busy)))


SAMPLES = 3  # readings of the runnable count, SAMPLE_GAP seconds apart
SAMPLE_GAP = 0.001


def _busy() -> float:
    """How many CPUs other tasks want now: the runnable tasks of /proc/loadavg but this one.

    Not the one-minute load average (used only where /proc is absent): it still holds
    kb's own previous run, so a quiet 2-CPU machine read 1.1 and kb kept a CPU idle. The
    fewest of a few readings a millisecond apart, so a short-lived task does not count.
    """
    readings = []
    for sample in range(SAMPLES):
        if sample:
            time.sleep(SAMPLE_GAP)
        running = runnable_now(_read_loadavg())
        if running is None:
            break
        readings.append(running)
    if len(readings) == SAMPLES:
        return float(max(0, min(readings) - 1))  # the reading counts this process itself
    return _load()


def runnable_now(loadavg: str | None) -> int | None:
    """The runnable-task count in a /proc/loadavg text (`0.52 0.58 0.59 2/467 12345`), or None."""
    fields = (loadavg or "").split()
    if len(fields) < 4:
        return None
    running = fields[3].partition("/")[0]
    return int(running) if running.isascii() and running.isdigit() else None


def _read_loadavg() -> str | None:
    try:
        with open("/proc/loadavg", encoding="ascii") as handle:
            return handle.read(200)
    except (OSError, UnicodeDecodeError):
        return None


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return 0.0


def can_fork() -> bool:
    """`fork` exists and nothing else runs here (forking a threaded process is unsafe)."""
    alone = threading.current_thread() is threading.main_thread() and threading.active_count() == 1
    return alone and "fork" in multiprocessing.get_all_start_methods()


def map_forked(
    function: Callable[[Any], Any],
    items: Sequence[Any],
    min_items: int,
    chunk: int = 0,
    progress: Callable[[int], None] | None = None,
    meanwhile: Callable[[], object] | None = None,
    before: Callable[[], object] | None = None,
    whole_spans: bool = False,
) -> list[Any] | None:
    """[function(item) for item in items] computed by workers, or None (do it yourself).

    `chunk`: items per task (0: `_guided`, for items of similar cost). `progress` is
    called here with each task's item count as its results arrive. `meanwhile`: work
    this process does while the workers run, if they do (imports, memos made later if
    missing: work whose absence changes no result; one that fails is left for later).
    `before`: work of that kind that every worker would do first, done here once just
    before they fork, if they will, so each inherits it (a process that would import
    and compile the same things for itself pays for them once per worker).
    `whole_spans`: `function` takes a task's items (a list) and returns their results
    in order, so it can do one step for all of them before the next step.
    """
    if len(items) < min_items or not can_fork():
        return None
    jobs = min(worker_count(), len(items))
    if jobs < 2:
        return None
    if before is not None:
        with contextlib.suppress(Exception):  # left undone: each worker meets it again
            before()
    global _ITEMS, _FUNCTION
    _ITEMS, _FUNCTION = items, function
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        spans = _spans(len(items), chunk) if chunk else _guided(len(items), jobs)
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(jobs, mp_context=context) as pool:
            started = pool.map(_run_whole if whole_spans else _run_span, spans)
            if meanwhile is not None:
                # A warm-up that fails is work left for later: whoever needs it meets the error.
                with contextlib.suppress(Exception):
                    meanwhile()
            chunks = []
            for part in started:
                chunks.append(part)
                if progress is not None:
                    progress(len(part))
    except BrokenProcessPool:  # a worker was killed (SIGKILL, the OOM killer): say so, stop
        raise WorkerDied() from None
    except Exception:  # noqa: BLE001 - any trouble with workers: the caller does it in-process
        return None
    finally:
        _ITEMS, _FUNCTION = (), None
    return [result for part in chunks for result in part]


class WorkerDied(UsageProblem):
    """A forked worker ended without its results (killed): the run stops with exit 2.

    Not redone here: what kills a worker (the out-of-memory killer, an operator)
    would likely kill this process too, and a run must never report findings that
    lack a part of the tree. The next run checks everything the dead one did not
    record (it saves no snapshot), so its findings are a full run's.
    """

    def __init__(self) -> None:
        super().__init__(
            "a worker process died before it returned its results (killed, e.g. by "
            "SIGKILL or the out-of-memory killer); this run reports nothing: run kb again"
        )


def _spans(total: int, size: int) -> list[tuple[int, int]]:
    return [(start, min(start + size, total)) for start in range(0, total, max(1, size))]


GUIDED_SHARE = 2  # a task takes 1/(GUIDED_SHARE * jobs) of the items left...
GUIDED_FLOOR = 16  # ... and never fewer than 1/(GUIDED_FLOOR * jobs) of them all


def _guided(total: int, jobs: int) -> list[tuple[int, int]]:
    """Spans of `total` items for `jobs` workers, each a share of what is left (guided).

    Big first tasks, small last ones, so the workers run out of work together (equal
    tasks left one parsing ~0.45 s of CPU at 10,000 files while the other was done).
    """
    floor = max(1, -(-total // (jobs * GUIDED_FLOOR)))
    spans, start = [], 0
    while start < total:
        size = max(floor, -(-(total - start) // (jobs * GUIDED_SHARE)))
        spans.append((start, min(start + size, total)))
        start += size
    return spans


def _run_span(span: tuple[int, int]) -> list[Any]:
    assert _FUNCTION is not None
    return [_FUNCTION(item) for item in _ITEMS[span[0] : span[1]]]


def _run_whole(span: tuple[int, int]) -> list[Any]:
    assert _FUNCTION is not None
    return list(_FUNCTION(_ITEMS[span[0] : span[1]]))


class Beside(Generic[T]):
    """`function()` computed in a forked child, or here, on demand (`result()`).

    As a context manager it waits for the child when the block ends: no child
    outlives the work.
    """

    def __init__(self, function: Callable[[], T]) -> None:
        self.function = function
        self.pid, self.reader = 0, -1
        self.value: tuple[T] | None = None
        self.finished = False

    def start(self) -> None:
        """Fork the child (the caller checked it may); on failure the work stays here."""
        reader, writer = os.pipe()
        with contextlib.suppress(ImportError, AttributeError, OSError):
            import fcntl  # Linux: room for a value of up to 1 MiB, so the child never waits

            fcntl.fcntl(writer, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        try:
            pid = os.fork()
        except OSError:
            os.close(reader)
            os.close(writer)
            return
        if pid == 0:  # the child: never returns
            os.close(reader)
            _child(self.function, writer)
        os.close(writer)
        self.pid, self.reader = pid, reader

    def result(self) -> T:
        if self.value is None:
            got = _received(self.reader) if self.pid else None
            self.value = got if got is not None else (self.function(),)
        return self.value[0]

    def finish(self) -> None:
        """Wait for the child (it exits once its value is written, or on failure)."""
        if self.finished:
            return
        self.finished = True
        if self.pid:
            if self.reader >= 0:
                os.close(self.reader)
                self.reader = -1
            os.waitpid(self.pid, 0)

    def __enter__(self) -> Beside[T]:
        return self

    def __exit__(self, *error: object) -> None:
        self.finish()


def beside(function: Callable[[], T], worth_it: bool = True) -> Beside[T]:
    """Start `function()` in a forked child if `worth_it`, forkable and a CPU is free.

    Otherwise nothing starts and result() does the work here.
    """
    work = Beside(function)
    if worth_it and can_fork() and worker_count() >= 2:
        work.start()
    return work


def _child(function: Callable[[], Any], writer: int) -> None:
    code = 1
    try:
        data = pickle.dumps((function(),), protocol=pickle.HIGHEST_PROTOCOL)
        with os.fdopen(writer, "wb") as pipe:  # the parent may read only after its own work
            pipe.write(data)
        code = 0
    except BaseException:  # noqa: BLE001, S110 - the parent redoes the work itself
        pass
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the parent's buffers


def _received(reader: int) -> tuple[Any] | None:
    """The child's value, or None when it sent none (it failed or died)."""
    parts = []
    with contextlib.suppress(OSError):
        while chunk := os.read(reader, 1 << 20):
            parts.append(chunk)
    try:
        value = pickle.loads(b"".join(parts)) if parts else None
    except Exception:  # noqa: BLE001 - a cut message is no message
        return None
    return value if isinstance(value, tuple) and len(value) == 1 else None
