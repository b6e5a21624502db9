"""Progress of long work on a terminal: one line on stderr, repainted as each stage ends.

`kb validate` and `kb build` turn it on with `reporting()` only when stderr is a
terminal (and not under --quiet); piped or redirected, nothing is written, so a log
or a program reading the output never sees it. The pipeline's stages
(kb.checker) are wrapped in `stage(name)`: while reporting is on, the line says
which stage runs and, for each that ended, how many records it handled, in how
long and at what rate:

    kb: load 10,000 records 6.2 s (1,613/s) · schema 10,000 1.1 s · equations...

The line is erased when the work ends, before the report is printed. Only the
process that turned reporting on writes (a stage run in a forked worker is silent).
Nothing here changes what is checked or found.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sized
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any, TypeVar, cast

_F = TypeVar("_F", bound=Callable[..., Any])


class Line:
    """The progress line on one terminal stream, owned by the process that made it."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.pid = os.getpid()
        self.done: list[str] = []
        self.painted = 0

    def begin(self, name: str) -> None:
        self._paint(f"{name}...")

    def end(self, name: str, count: int | None, seconds: float) -> None:
        if count:
            rate = f" ({count / seconds:,.0f}/s)" if seconds >= 0.05 else ""
            self.done.append(f"{name} {count:,} {seconds:.1f} s{rate}")
        else:
            self.done.append(f"{name} {seconds:.1f} s")
        self._paint("")

    def clear(self) -> None:
        if self.painted:
            self.stream.write("\r" + " " * self.painted + "\r")
            self.stream.flush()
            self.painted = 0

    def _paint(self, current: str) -> None:
        width = max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        parts = [*self.done, current] if current else list(self.done)
        text = "kb: " + " · ".join(parts)
        while len(text) > width and len(parts) > 1:  # the newest stages stay in view
            parts = parts[1:]
            text = "kb: ... " + " · ".join(parts)
        text = text[:width]
        self.stream.write("\r" + text + " " * max(self.painted - len(text), 0))
        self.stream.flush()
        self.painted = len(text)


_LINE: ContextVar[Line | None] = ContextVar("kb_progress_line", default=None)


def wanted(quiet: bool = False, stream: IO[str] | None = None) -> bool:
    """True when progress should show: the stream (stderr) is a terminal and not --quiet."""
    target = stream if stream is not None else sys.stderr
    return not quiet and bool(getattr(target, "isatty", lambda: False)())


@contextmanager
def reporting(enabled: bool, stream: IO[str] | None = None) -> Iterator[None]:
    """Show the stages' progress on `stream` (stderr) for the block, when `enabled`."""
    if not enabled:
        yield
        return
    line = Line(stream if stream is not None else sys.stderr)
    token = _LINE.set(line)
    try:
        yield
    finally:
        _LINE.reset(token)
        line.clear()


def stage(name: str, counts: str = "result") -> Callable[[_F], _F]:
    """Wrap a pipeline stage: announce it, then its count, time and rate, when reporting.

    `counts`: what the stage handled — `result` (the length of what it returns),
    `first` (the length of its first argument, e.g. the knowledge base it checks) or
    `` (nothing counted: only the time).
    """

    def wrap(function: _F) -> _F:
        @functools.wraps(function)
        def run(*args: Any, **kwargs: Any) -> Any:
            line = _LINE.get()
            if line is None or line.pid != os.getpid():
                return function(*args, **kwargs)
            line.begin(name)
            started = time.perf_counter()
            result = function(*args, **kwargs)
            counted = {"result": result, "first": args[0] if args else None}.get(counts)
            count = len(counted) if isinstance(counted, Sized) else None
            line.end(name, count, time.perf_counter() - started)
            return result

        return cast(_F, run)

    return wrap
